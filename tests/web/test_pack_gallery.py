"""The example-pack gallery on a campaign's Rules page (issue 47, item 5): an organizer sees
every pack shipped in examples/packs/ with what it adds, and attaches one in two taps through
the same preview and attach as an uploaded file; players see no gallery and cannot attach."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine

from app.rules import packs
from app.services.packs import examples
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "packs"
SHIPPED = sorted(EXAMPLES.rglob("*.yaml"))


def article(page: str, slug: str) -> str:
    marker = f'data-testid="pack-example-{slug}"'
    assert marker in page, f"{slug} is not in the gallery"
    return page.split(marker)[1].split("</article>")[0]


def test_the_gallery_lists_every_example_with_what_it_adds(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    orga, cid = world["orga"], world["campaign_id"]
    page = orga.get(f"/campaigns/{cid}/rules").text
    assert SHIPPED and page.count('class="pack-example"') == len(SHIPPED)
    listed = {e["example"]: e for e in orga.api("GET", "/rule-packs/examples")}
    for path in SHIPPED:
        slug = path.relative_to(EXAMPLES).with_suffix("").as_posix()
        pack = packs.load(path.read_bytes())
        shown = html.unescape(article(page, slug))
        assert f"{pack.name} <small" in shown
        factions = packs.scope_of((), pack)
        assert (", ".join(factions) if factions else "For every force") in shown
        content = {
            "counter": pack.counters,
            "agenda": pack.agendas,
            "requisition": pack.requisitions,
            "quest": pack.quests,
            "trigger": pack.triggers,
            "mission": pack.missions,
            "table": pack.tables,
        }
        for kind, entries in content.items():
            if entries:  # counted and named
                assert f"{len(entries)} {kind}" in shown, (slug, kind)
                assert all(e.name in shown for e in entries), (slug, kind)
        for value in pack.settings.model_dump(exclude_none=True).values():
            assert f"<strong>{value}</strong>" in shown, slug
        assert '<input type="hidden" name="example" value="' + slug + '">' in shown
        # the API lists the same, with the file as shipped
        assert listed[slug]["yaml"] == path.read_text()
        assert listed[slug]["factions"] == list(factions)
        assert sum(len(v) for v in listed[slug]["adds"].values()) == sum(
            len(v) for v in content.values()
        ) + len(pack.relics) + len(pack.thresholds) + len(pack.battle_traits) + len(
            pack.battle_scars
        ) + len(pack.psychic_fortitudes) + len(pack.weapon_enhancements) + len(pack.warlord_traits)
    assert listed.keys() == {p.relative_to(EXAMPLES).with_suffix("").as_posix() for p in SHIPPED}


def test_two_taps_attach_an_example(person: Callable[[str], Browser], engine: Engine) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, cid = world["orga"], world["ruby"], world["campaign_id"]
    url = f"/campaigns/{cid}/rules"
    before = dump(engine)

    tap = orga.post(f"{url}/packs", {"action": "preview", "example": "mixed/sagas"})
    assert tap.status_code == 200, tap.text
    preview = tap.text.split('data-testid="pack-preview"')[1].split("</article>")[0]
    assert "Sagas" in preview and "2 counters (Renown, Saga)" in preview
    assert "it reaches no force yet; not Ultramarines 4th, Waaagh! Gorbad" in preview
    assert dump(engine) == before  # the first tap only previews
    carried = preview.split('<textarea name="text" hidden aria-hidden="true">')[1]
    text = html.unescape(carried.split("</textarea>")[0])  # as the browser sends it back
    assert text == (EXAMPLES / "mixed" / "sagas.yaml").read_text()

    attached = orga.post(f"{url}/packs", {"action": "attach", "text": text})
    assert attached.status_code == 303 and attached.headers["location"] == f"{url}?attached=1"
    rules = ruby.api("GET", f"/campaigns/{cid}/rules")
    assert rules["rule_packs"] == {"sagas": "1"}
    assert [c["name"] for c in rules["counters"]] == ["Renown", "Saga"]
    assert "<strong>Attached</strong>" in article(orga.get(url).text, "mixed/sagas")


def test_a_player_sees_no_gallery_and_cannot_attach_an_example(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, cid = world["orga"], world["ruby"], world["campaign_id"]
    url = f"/campaigns/{cid}/rules"
    page = ruby.get(url).text
    assert "Example packs" not in page and "Use this pack" not in page
    before = dump(engine)
    for action in ("preview", "attach"):
        refused = ruby.post(f"{url}/packs", {"action": action, "example": "mixed/sagas"})
        assert refused.status_code == 403 and 'data-code="forbidden"' in refused.text
    unknown = orga.post(f"{url}/packs", {"action": "attach", "example": "mixed/../secrets"})
    assert unknown.status_code == 404
    assert 'data-code="rule_pack_example_not_found"' in unknown.text
    assert dump(engine) == before


def test_a_broken_example_is_left_out_not_a_500(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "good.yaml").write_bytes((EXAMPLES / "house-rules.yaml").read_bytes())
    (tmp_path / "broken.yaml").write_text("format: crusade-rule-pack/1\nid: [\n")
    assert [e.slug for e in examples._read_all(tmp_path)] == ["good"]
    assert "example pack broken left out of the gallery" in caplog.text
