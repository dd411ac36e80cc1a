"""Issue 45, item 7: a right-to-left override (U+202E) typed into a name reverses the app's
own words after it, up to the end of the paragraph, unless the name is isolated. Every
user-typed name a page writes is set apart: in HTML by <bdi>, in SVG text by FSI ... PDI,
and anywhere else (titles, options, attributes) closed where it ends."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from app.web.display.formatting import balanced, isolated
from tests.web.conftest import Browser

RLO, PDF, FSI, PDI = "\u202e", "\u202c", "\u2068", "\u2069"


class _Unclosed(HTMLParser):
    """Collects each text outside <bdi> (and outside scripts) where an override is still
    open when the text ends, or where app text follows it before it is closed."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside: list[str] = []
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "input", "img", "meta", "link", "circle", "line", "path", "rect"):
            self.inside.append(tag)
        for _, value in attrs:
            self._check(value or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.inside:
            while self.inside.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if "bdi" in self.inside or "script" in self.inside:
            return
        self._check(data)

    def _check(self, text: str) -> None:
        if RLO in text and balanced(text) != text:
            self.found.append(text)


def unclosed_overrides(page: str) -> list[str]:
    parser = _Unclosed()
    parser.feed(page)
    return parser.found


def test_an_override_is_closed_where_the_text_that_opened_it_ends() -> None:
    assert balanced("Ultramarines") == "Ultramarines"
    assert balanced(f"Ultra{RLO}marines") == f"Ultra{RLO}marines{PDF}"
    assert balanced(f"a{RLO}b{PDF}c") == f"a{RLO}b{PDF}c"  # already closed: unchanged
    # an isolate's PDI also closes the overrides opened inside it
    assert balanced(f"{FSI}x{RLO}y{PDI}z") == f"{FSI}x{RLO}y{PDI}z"
    assert balanced(f"{FSI}{RLO}x") == f"{FSI}{RLO}x{PDF}{PDI}"
    assert balanced(f"{PDF}{PDI}x") == f"{PDF}{PDI}x"  # a stray closer opens nothing
    assert isolated(f"Sekhet{RLO}") == f"{FSI}Sekhet{RLO}{PDF}{PDI}"


def _world(person: Callable[[str], Browser]) -> dict[str, Any]:
    """Every name typed with an override: campaign, forces, units, territories, a player's
    display name; one battle played between the two forces."""
    orga, ruby, kai = person("orga"), person("ruby"), person("kai")
    campaign = orga.api("POST", "/campaigns", json={"name": f"Vigilus{RLO} war"})
    cid = campaign["id"]
    invite = orga.api("POST", f"/campaigns/{cid}/invites", json={"role": "player", "max_uses": 2})
    forces, cards = {}, {}
    for who, name in ((ruby, f"Ultramarines{RLO}"), (kai, f"Gorbad{RLO}")):
        who.api("POST", f"/invites/{invite['code']}/accept")
        force = who.api(
            "POST",
            f"/campaigns/{cid}/forces",
            json={"name": name, "crusade_faction": "IMPERIUM", "player_name": name},
        )
        forces[who] = force["id"]
        card = who.api(
            "POST",
            f"/forces/{force['id']}/cards",
            json={"name": f"Captain{RLO}", "power_rating": 5, "keywords": ["IMPERIUM", "INFANTRY"]},
        )
        cards[who] = card["id"]
    hive = orga.api(
        "POST",
        f"/campaigns/{cid}/territories",
        json={"name": f"Hive{RLO}", "holder_force_id": forces[kai]},
    )
    orga.api(
        "POST",
        f"/campaigns/{cid}/territories",
        json={"name": f"Wastes{RLO}", "neighbours": [hive["id"]], "holder_force_id": forces[kai]},
    )
    battle = ruby.api(
        "POST",
        f"/campaigns/{cid}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "supply_drop",
            "sides": [
                {
                    "force_id": forces[ruby],
                    "role": "attacker",
                    "roster": [cards[ruby]],
                    "agendas": ["assassins"],
                },
                {
                    "force_id": forces[kai],
                    "role": "defender",
                    "roster": [cards[kai]],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        },
    )
    ruby.api(
        "POST",
        f"/battles/{battle['id']}/result",
        json={
            "sides": [
                {"force_id": forces[ruby], "victory_points": 50, "units": [], "dice": []},
                {"force_id": forces[kai], "victory_points": 40, "units": [], "dice": []},
            ]
        },
    )
    return {
        "ruby": ruby,
        "kai": kai,
        "cid": cid,
        "battle_id": battle["id"],
        "ruby_force": forces[ruby],
        "card": cards[ruby],
    }


def test_no_page_lets_a_typed_override_run_past_the_name(
    person: Callable[[str], Browser],
) -> None:
    world = _world(person)
    ruby, cid = world["ruby"], world["cid"]
    pages = [
        "/",
        f"/campaigns/{cid}",
        f"/campaigns/{cid}/map",
        f"/campaigns/{cid}/battles",
        f"/campaigns/{cid}/history",
        f"/campaigns/{cid}/members",
        f"/forces/{world['ruby_force']}",
        f"/cards/{world['card']}",
        f"/battles/{world['battle_id']}",
    ]
    for url in pages:
        page = ruby.get(url)
        assert page.status_code == 200, url
        assert RLO in page.text, url  # the names are there...
        assert unclosed_overrides(page.text) == [], url  # ...and none reverses what follows


def test_the_map_and_the_campaign_page_isolate_each_name(
    person: Callable[[str], Browser],
) -> None:
    """The places the issue found reversed: the map's legend, its "Held by ... Neighbours"
    line and the SVG's description; "X vs Y" on the campaign page."""
    world = _world(person)
    ruby, cid = world["ruby"], world["cid"]
    page = ruby.get(f"/campaigns/{cid}/map").text
    assert f"<bdi>Gorbad{RLO}{PDF}</bdi> · 2 territories" in page
    assert re.search(rf"Held by <a href=\"/forces/\d+\"><bdi>Gorbad{RLO}{PDF}</bdi></a>\.", page)
    assert f'"><bdi>Wastes{RLO}{PDF}</bdi></a>.' in page  # the neighbours
    desc = page.split('<desc id="map-desc">')[1].split("</desc>")[0]
    assert f"{FSI}Hive{RLO}{PDF}{PDI}: {FSI}Gorbad{RLO}{PDF}{PDI}" in desc
    svg = page.split("<svg")[1].split("</svg>")[0]
    assert f">{FSI}Hive{RLO}{PDF}{PDI}</text>" in svg
    campaign = ruby.get(f"/campaigns/{cid}").text
    rematch = f"<bdi>Ultramarines{RLO}{PDF}</bdi> vs <bdi>Gorbad{RLO}{PDF}</bdi>"
    assert f"Rematch: {rematch}" in campaign
    battles = ruby.get(f"/campaigns/{cid}/battles").text
    assert f'<bdi>Ultramarines{RLO}{PDF}</bdi> <span class="muted">vs</span>' in battles
