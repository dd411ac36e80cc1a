"""The campaign's rules page (issue 22): an organizer previews and attaches a rule pack,
players read what it adds, the battle wizard offers its Agenda, a bad pack is refused in
words with nothing changed, and the pack downloads as a file that loads again."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from app.rules import packs
from tests.api.helpers import dump
from tests.api.test_pack_core_changes import LEAN
from tests.web.conftest import Browser, campaign_with_two_players

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "packs"
PILGRIMS = (EXAMPLES / "ashen-pilgrims.yaml").read_bytes()


def upload(who: Browser, url: str, data: bytes, **form: str) -> object:
    files = {"file": ("ashen-pilgrims.yaml", data, "application/yaml")}
    return who.post(url, {"action": "preview", **form}, files=files)


def test_an_organizer_previews_attaches_and_players_read_it(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, cid = world["orga"], world["ruby"], world["campaign_id"]
    url = f"/campaigns/{cid}/rules"
    assert "No rule pack is attached" in ruby.get(url).text
    assert f'href="/campaigns/{cid}/rules"' in ruby.get(f"/campaigns/{cid}").text

    before = dump(engine)
    shown = upload(orga, f"{url}/packs", PILGRIMS)
    assert shown.status_code == 200, shown.text
    preview = shown.text.split('data-testid="pack-preview"')[1].split("</article>")[0]
    assert "The Ashen Pilgrims" in preview and "Bear the Ashes" in preview
    assert dump(engine) == before  # a preview attaches nothing
    carried = preview.split('<textarea name="text" hidden aria-hidden="true">')[1]
    text = html.unescape(carried.split("</textarea>")[0])  # as the browser sends it back
    assert packs.load(text) == packs.load(PILGRIMS)
    attached = orga.post(f"{url}/packs", {"action": "attach", "text": text})
    assert attached.status_code == 303 and attached.headers["location"] == f"{url}?attached=1"

    page = ruby.get(url).text
    assert "Kindle Fervour" in page and "Censer of the Last Saint" in page
    assert "Only for units that meet: counter.fervour &gt;= 3 and not VEHICLE" in page
    assert "Attach a rule pack" not in page  # players read, organizers change
    assert ruby.post(f"{url}/packs", {"action": "attach", "text": "x"}).status_code == 403
    force_page = ruby.get(f"/forces/{world['ruby_force']}").text
    assert '<li data-counter="fervour"><strong>1</strong> Fervour' in force_page

    started = ruby.post(f"/campaigns/{cid}/battles/new")
    setup = ruby.get(started.headers["location"]).text
    assert "Bear the Ashes" in setup  # the wizard offers the pack's Agenda

    download = ruby.get(f"{url}/packs/ashen_pilgrims.yaml")
    assert download.headers["content-type"].startswith("application/yaml")
    assert packs.load(download.content) == packs.load(PILGRIMS)


def test_a_bad_pack_is_refused_in_words(person: Callable[[str], Browser], engine: Engine) -> None:
    world = campaign_with_two_players(person)
    orga, cid = world["orga"], world["campaign_id"]
    before = dump(engine)
    broken = PILGRIMS.replace(b"xp_per_tally: 2", b"xp_per_tally: lots")
    refused = upload(orga, f"/campaigns/{cid}/rules/packs", broken)
    assert refused.status_code == 422
    assert "agendas[0].xp_per_tally (line " in refused.text
    assert dump(engine) == before


def test_a_pack_that_changes_the_core_shows_it_and_the_wizard_leaves_it_out(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, cid = world["orga"], world["ruby"], world["campaign_id"]
    url = f"/campaigns/{cid}/rules"
    started = ruby.post(f"/campaigns/{cid}/battles/new")
    assert 'value="assassins"' in ruby.get(started.headers["location"]).text
    shown = upload(orga, f"{url}/packs", LEAN.encode())
    preview = shown.text.split('data-testid="pack-preview"')[1].split("</article>")[0]
    assert "Withdraws the core's agendas: Assassins." in preview
    assert "Increase Supply Limit 1 → <strong>2 RP</strong>" in preview
    attached = orga.post(f"{url}/packs", {"action": "attach", "text": LEAN})
    assert attached.status_code == 303
    page = ruby.get(url).text.split("Changes to the core rules", 1)[1]
    assert "<strong>Rearm and Resupply</strong>: never bought" in page
    assert "<strong>Increase Supply Limit</strong> costs <strong>2 RP</strong>" in page
    again = ruby.post(f"/campaigns/{cid}/battles/new")
    assert 'value="assassins"' not in ruby.get(again.headers["location"]).text
