"""The rules reference pages: public, and showing every table of the rulebook (names, dice
results and our own-words summaries) straight from seed_data."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from app.rules.data import rulebook

PAGES = [
    "/rules",
    "/rules/ranks",
    "/rules/missions",
    "/rules/agendas",
    "/rules/honours",
    "/rules/scars",
    "/rules/requisitions",
]


def text(value: str) -> str:
    """How a seed_data string appears in the page (HTML-escaped)."""
    return str(escape(value))


@pytest.mark.parametrize("url", PAGES)
def test_every_rules_page_is_public(site: TestClient, url: str) -> None:
    page = site.get(url)
    assert page.status_code == 200
    assert page.text.count("<h1") == 1


def test_the_index_links_every_table(site: TestClient) -> None:
    page = site.get("/rules").text
    for url in PAGES[1:]:
        assert f'href="{url}"' in page


def test_ranks_and_battle_sizes(site: TestClient) -> None:
    page = site.get("/rules/ranks").text
    book = rulebook()
    for rank in book.ranks:
        assert f'<th scope="row">{rank.name}</th><td>{rank.min_xp} XP</td>' in page
    for size in book.battle_sizes:
        assert f"<strong>{size.name}</strong>: up to {size.max_power_level} Power Level" in page
    assert f"{book.numbers.starting_supply_limit} Power to start" in page


def test_missions_grouped_by_battle_size_with_results_and_victor_bonuses(
    site: TestClient,
) -> None:
    page = site.get("/rules/missions").text
    book = rulebook()
    for size in book.battle_sizes:
        section = page.split(f'<section id="{size.id}"')[1].split("</section>")[0]
        for mission in book.missions_for(size.id):
            roll = (
                str(mission.low)
                if mission.low == mission.high
                else "–".join((str(mission.low), str(mission.high)))
            )
            assert f"D6 {roll}</span> {text(mission.name)}" in section
            assert text(mission.summary) in section
            for bonus in mission.victor_bonus:
                assert text(bonus.summary) in section


def test_agendas_by_category_with_their_xp(site: TestClient) -> None:
    page = site.get("/rules/agendas").text
    book = rulebook()
    for agenda in book.agendas:
        assert text(agenda.name) in page and text(agenda.summary) in page
        assert text(agenda.category) in page
    assert "2 XP per mark" in page.split(text(book.agenda("assassins").name))[1]


def test_battle_honours_every_table_and_relic_restrictions(site: TestClient) -> None:
    page = site.get("/rules/honours").text
    honours = rulebook().honours
    tables = [
        *honours.battle_traits.values(),
        *honours.weapon_enhancements.values(),
        honours.psychic_fortitudes,
    ]
    for table in tables:
        for entry in table.entries:
            assert f'<th scope="row">{text(entry.name)}</th><td>{text(entry.summary)}</td>' in page
    for relic in honours.crusade_relics:
        article = page.split(f'id="relic-{relic.id}"')[1].split("</article>")[0]
        assert text(relic.name) in article and text(relic.summary) in article
        for keyword in relic.keywords_any:
            assert keyword in article
    legendary = page.split('id="relics-legendary"')[1]
    assert "Rank Legendary or higher" in legendary and "costs 1 RP" in legendary


def test_battle_scars_for_every_kind_of_unit(site: TestClient) -> None:
    page = site.get("/rules/scars").text
    for kind, table in rulebook().scars.battle_scars.items():
        section = page.split(f'id="scars-{kind.value}"')[1].split("</section>")[0]
        for entry in table.entries:
            assert text(entry.name) in section and text(entry.summary) in section


def test_requisitions_with_cost_timing_and_targets(site: TestClient) -> None:
    page = site.get("/rules/requisitions").text
    for wanted in rulebook().requisitions:
        article = page.split(f'id="requisition-{wanted.id}"')[1].split("</article>")[0]
        assert text(wanted.name) in article and f"{wanted.cost_rp} RP" in article
        assert text(wanted.summary) in article
    recruits = page.split('id="requisition-fresh_recruits"')[1].split("</article>")[0]
    assert "Not CHARACTER, VEHICLE, MONSTER units" in recruits
    assert "Units of rank Blooded or below" in recruits
