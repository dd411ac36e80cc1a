"""Entering a roster quickly through the pages: keyword chips, several unit lines added all
or none, more lines without script, and "Duplicate this unit"."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from app.rules.data import rulebook
from app.rules.keywords import rule_keywords
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_card_pages import fight_a_battle, units


def chip(page: str, name: str, word: str) -> str:
    """The <input> of one keyword chip (``name``: kw, kw-1, ...)."""
    found = re.search(rf'<input type="checkbox" name="{name}" value="{word}"[^>]*>', page)
    assert found, f"no chip {word} named {name}"
    return found.group(0)


def lines(**per_line: dict[str, Any]) -> dict[str, Any]:
    """A posted add-unit form: ``line0={...}, line2={...}`` (the first line's fields keep
    their plain names, the others are numbered)."""
    form: dict[str, Any] = {}
    count = 0
    for key, values in per_line.items():
        index = int(key.removeprefix("line"))
        count = max(count, index + 1)
        for name, value in values.items():
            form[name if index == 0 else f"{name}-{index}"] = value
    return {"lines": str(count), **form}


class TestKeywordChips:
    def test_every_rules_keyword_is_a_chip_and_the_faction_is_ticked(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        page = world["ruby"].get(f"/forces/{world['ruby_force']}/cards/new").text
        assert "checked" in chip(page, "kw", "IMPERIUM")
        assert "checked" in chip(page, "kw", "INFANTRY")  # most units are: ticked on a new line
        assert "checked" not in chip(page, "kw", "UNALIGNED")
        for word in rule_keywords(rulebook()):
            if word != "INFANTRY":
                assert "checked" not in chip(page, "kw", word)
        assert "Other keywords (optional)" in page
        # the form says which chips the script unticks INFANTRY for
        assert 'data-not-infantry="VEHICLE,MONSTER,BIKER,' in page

    def test_ticked_chips_and_typed_keywords_make_the_units_keywords(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        form = {"name": "Librarian", "power_rating": "5", "kw": ["IMPERIUM", "CHARACTER", "PSYKER"]}
        added = ruby.post(
            f"/forces/{force}/cards", {**form, "keywords": "infantry, Adeptus Astartes"}
        )
        assert added.status_code == 303
        card = units(ruby, force)["Librarian"]
        assert card["keywords"] == [
            "ADEPTUS ASTARTES",
            "CHARACTER",
            "IMPERIUM",
            "INFANTRY",
            "PSYKER",
        ]

    def test_keywords_real_rosters_carry_often_are_chips_too(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        page = ruby.get(f"/forces/{force}/cards/new").text
        for word in ("FLY", "JUMP PACK", "TRANSPORT", "CORE"):
            assert "checked" not in chip(page, "kw", word)
        form = {"name": "Inceptors", "power_rating": "6", "kw": ["IMPERIUM", "FLY", "JUMP PACK"]}
        assert ruby.post(f"/forces/{force}/cards", form).status_code == 303
        assert units(ruby, force)["Inceptors"]["keywords"] == ["FLY", "IMPERIUM", "JUMP PACK"]


class TestSeveralLines:
    def test_a_count_in_the_address_shows_that_many_lines(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        page = world["ruby"].get(f"/forces/{world['ruby_force']}/cards/new?lines=4").text
        assert 'name="lines" value="4"' in page
        assert 'id="f-name-3"' in page and 'id="f-name-4"' not in page
        assert "checked" in chip(page, "kw-3", "IMPERIUM")
        page = world["ruby"].get(f"/forces/{world['ruby_force']}/cards/new?lines=999").text
        assert 'name="lines" value="30"' in page

    def test_every_filled_line_joins_and_empty_ones_are_skipped(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        form = lines(
            line0={"name": "Squad Vorn", "power_rating": "5", "kw": ["IMPERIUM", "INFANTRY"]},
            line1={"name": "", "power_rating": "", "kw": ["IMPERIUM"]},
            line2={"name": "Redemptor", "power_rating": "10", "kw": ["IMPERIUM", "VEHICLE"]},
        )
        added = ruby.post(f"/forces/{force}/cards", form)
        assert added.status_code == 303
        assert added.headers["location"] == f"/forces/{force}?joined=2"
        mine = units(ruby, force)
        assert mine["Redemptor"]["keywords"] == ["IMPERIUM", "VEHICLE"]
        assert mine["Squad Vorn"]["power_rating"] == 5
        page = ruby.get(added.headers["location"]).text
        assert "2 units joined the Order of Battle." in page
        assert "Supply: <strong>31 / 50</strong>" in page

    def test_the_third_over_the_supply_limit_adds_none_and_keeps_the_typing(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        before = dump(engine)
        form = lines(
            line0={"name": "Squad Vorn", "power_rating": "10", "kw": ["IMPERIUM", "INFANTRY"]},
            line1={"name": "Squad Aquila", "power_rating": "10", "kw": ["IMPERIUM"]},
            line2={"name": "Land Raider", "power_rating": "16", "kw": ["IMPERIUM", "VEHICLE"]},
        )
        refused = ruby.post(f"/forces/{force}/cards", form)
        assert refused.status_code == 422
        assert 'data-code="supply_limit_exceeded"' in refused.text
        assert "Line 3 (Land Raider):" in refused.text
        assert 'id="f-power_rating-2-error"' in refused.text  # next to the line's field
        for typed in ('value="Squad Vorn"', 'value="Squad Aquila"', 'value="Land Raider"'):
            assert typed in refused.text
        assert "checked" in chip(refused.text, "kw-2", "VEHICLE")
        assert "checked" not in chip(refused.text, "kw-1", "VEHICLE")
        assert dump(engine) == before

    def test_a_bad_field_on_a_later_line_is_named_and_adds_none(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        before = dump(engine)
        form = lines(
            line0={"name": "Squad Vorn", "power_rating": "5", "kw": ["IMPERIUM"]},
            line1={"name": "Squad Aquila", "power_rating": "many", "kw": ["IMPERIUM"]},
        )
        refused = ruby.post(f"/forces/{force}/cards", form)
        assert refused.status_code == 422
        assert "Line 2: Power Rating must be a whole number." in refused.text
        assert 'id="f-power_rating-1-error"' in refused.text
        too_long = lines(
            line0={"name": "Squad Vorn", "power_rating": "5"},
            line1={"name": "X" * 9000, "power_rating": "5"},
        )
        refused = ruby.post(f"/forces/{force}/cards", too_long)
        assert refused.status_code == 422 and "Line 2: Name can be at most" in refused.text
        nothing = ruby.post(f"/forces/{force}/cards", lines(line0={"kw": ["IMPERIUM"]}))
        assert nothing.status_code == 422 and 'data-code="units_missing"' in nothing.text
        assert dump(engine) == before

    def test_more_lines_keeps_what_was_typed_and_adds_nothing(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        before = dump(engine)
        form = lines(
            line0={"name": "Squad Vorn", "power_rating": "5", "kw": ["IMPERIUM", "INFANTRY"]}
        )
        more = ruby.post(f"/forces/{force}/cards", {**form, "more": "5"})
        assert more.status_code == 200
        assert 'name="lines" value="6"' in more.text
        assert 'value="Squad Vorn"' in more.text and "checked" in chip(more.text, "kw", "INFANTRY")
        assert "checked" in chip(more.text, "kw-5", "IMPERIUM")  # new lines: the faction
        assert "Add these units to the Order of Battle" in more.text
        # the page comes back at the first new line (the form's address says where)
        assert f'formaction="/forces/{force}/cards#line-6"' in more.text
        assert 'id="line-1"' in more.text
        first = ruby.get(f"/forces/{force}/cards/new?lines=1").text
        assert f'formaction="/forces/{force}/cards#line-1"' in first
        # a force still being built (3 units) opens with 5 lines, each a new INFANTRY line
        building = ruby.get(f"/forces/{force}/cards/new").text
        assert 'name="lines" value="5"' in building
        assert "checked" in chip(building, "kw-4", "INFANTRY")
        assert dump(engine) == before


class TestKeywordsOnEveryLine:
    """Issue 40: keywords typed once ("Keywords on every line"), merged into each line's
    keywords before the same checks as a line's own keywords."""

    def test_the_shared_keywords_reach_every_unit(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        page = ruby.get(f"/forces/{force}/cards/new").text
        assert 'id="f-keywords_all"' in page and "Keywords on every line (optional)" in page
        # a line's own keywords sit in their own fold, apart from wargear and Requisitions
        assert '<details class="line-keywords"' in page and '<details class="line-more"' in page
        form = lines(
            line0={"name": "Primaris Captain", "power_rating": "5", "kw": ["CHARACTER"]},
            line1={"name": "", "power_rating": "", "kw": ["IMPERIUM"]},  # skipped
            line2={
                "name": "Invader ATV",
                "power_rating": "3",
                "kw": ["IMPERIUM", "VEHICLE"],
                "keywords": "primaris",
            },
        )
        # IMPERIUM (the force's faction) typed once, no line ticks it on line 0: merged
        # before the check that a unit carries its faction
        shared = "imperium, Adeptus Astartes , PRIMARIS"
        added = ruby.post(f"/forces/{force}/cards", {**form, "keywords_all": shared})
        assert added.status_code == 303, added.text
        assert added.headers["location"] == f"/forces/{force}?joined=2"
        mine = units(ruby, force)
        assert mine["Primaris Captain"]["keywords"] == [
            "ADEPTUS ASTARTES",
            "CHARACTER",
            "IMPERIUM",
            "PRIMARIS",
        ]
        assert mine["Invader ATV"]["keywords"] == [
            "ADEPTUS ASTARTES",
            "IMPERIUM",
            "PRIMARIS",
            "VEHICLE",
        ]

    def test_a_refusal_keeps_what_was_typed(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        before = dump(engine)
        shared = "ADEPTUS ASTARTES, PRIMARIS"
        form = lines(
            line0={"name": "Intercessor Squad", "power_rating": "10", "kw": ["IMPERIUM"]},
            line1={"name": "Repulsor", "power_rating": "40", "kw": ["IMPERIUM", "VEHICLE"]},
        )
        refused = ruby.post(f"/forces/{force}/cards", {**form, "keywords_all": shared})
        assert refused.status_code == 422
        assert 'data-code="supply_limit_exceeded"' in refused.text
        assert "Line 2 (Repulsor):" in refused.text
        assert f'name="keywords_all" type="text" value="{shared}"' in refused.text
        assert 'value="Intercessor Squad"' in refused.text and 'value="Repulsor"' in refused.text
        assert dump(engine) == before
        # a keyword rule refused: no line carries the faction (the shared field neither)
        no_faction = lines(line0={"name": "Intercessor Squad", "power_rating": "5"})
        refused = ruby.post(f"/forces/{force}/cards", {**no_faction, "keywords_all": shared})
        assert refused.status_code == 422
        assert f'value="{shared}"' in refused.text
        assert dump(engine) == before
        # "More lines" keeps it too
        more = ruby.post(f"/forces/{force}/cards", {**form, "keywords_all": shared, "more": "1"})
        assert more.status_code == 200 and f'value="{shared}"' in more.text
        # over its length: refused with its name, never a 5xx
        long = ruby.post(f"/forces/{force}/cards", {**form, "keywords_all": "X," * 1001})
        assert long.status_code == 422
        assert "Keywords on every line: at most 2000 characters." in long.text
        assert 'id="f-keywords_all-error"' in long.text
        assert dump(engine) == before


class TestDuplicate:
    def test_a_copy_starts_from_the_datasheet_but_fresh(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        form = {
            "name": "Squad Vorn",
            "power_rating": "5",
            "kw": ["IMPERIUM", "INFANTRY"],
            "keywords": "Adeptus Astartes",
            "datasheet": "Intercessor Squad",
            "battlefield_role": "Troops",
            "champion": "Sergeant Vorn",
            "wargear": "Bolt rifles",
            "narrative": "Held the line at Hesperus.",
        }
        assert ruby.post(f"/forces/{force}/cards", form).status_code == 303
        source = units(ruby, force)["Squad Vorn"]
        page = ruby.get(f"/forces/{force}/cards/new?copy={source['id']}").text
        assert 'value="Squad Vorn 2"' in page and 'value="5"' in page
        assert "checked" in chip(page, "kw", "INFANTRY")
        assert "checked" not in chip(page, "kw", "CHARACTER")
        assert 'value="ADEPTUS ASTARTES"' in page  # not a chip: typed for the player
        assert 'value="Intercessor Squad"' in page and 'value="Troops"' in page
        assert ">Bolt rifles</textarea>" in page
        assert "Sergeant Vorn" not in page and "Hesperus" not in page
        assert "it starts fresh" in page
        added = ruby.post(
            f"/forces/{force}/cards",
            {**form, "name": "Squad Vorn 2", "champion": "", "narrative": ""},
        )
        assert added.status_code == 303
        copy = units(ruby, force)["Squad Vorn 2"]
        assert (copy["xp"], copy["honours"], copy["scars"]) == (0, [], [])
        again = ruby.get(f"/forces/{force}/cards/new?copy={source['id']}").text
        assert 'value="Squad Vorn 3"' in again

    def test_duplicate_links_for_the_owner_only(self, person: Callable[[str], Browser]) -> None:
        world = campaign_with_two_players(person)
        ruby, kai, force = world["ruby"], world["kai"], world["ruby_force"]
        captain = units(ruby, force)["Captain"]
        link = f'href="/forces/{force}/cards/new?copy={captain["id"]}"'
        assert link in ruby.get(f"/forces/{force}").text
        assert link in ruby.get(f"/cards/{captain['id']}").text
        assert link not in kai.get(f"/forces/{force}").text
        assert link not in kai.get(f"/cards/{captain['id']}").text
        assert kai.get(f"/forces/{force}/cards/new?copy={captain['id']}").status_code == 403

    def test_a_unit_of_another_force_cannot_be_copied(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        theirs = units(world["kai"], world["kai_force"])["Captain"]
        page = world["ruby"].get(f"/forces/{world['ruby_force']}/cards/new?copy={theirs['id']}")
        assert page.status_code == 404
        bad = world["ruby"].get(f"/forces/{world['ruby_force']}/cards/new?copy=abc")
        assert bad.status_code == 422


class TestCardKeywords:
    def test_a_fresh_units_keywords_are_corrected_with_chips(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        squad = units(ruby, force)["Intercessor Squad"]
        page = ruby.get(f"/cards/{squad['id']}").text
        assert "Edit name, keywords and narrative" in page
        assert "checked" in chip(page, "kw", "INFANTRY")
        assert "checked" not in chip(page, "kw", "CHARACTER")
        form = {"name": "Intercessors", "narrative": "", "keywords_shown": "1"}
        saved = ruby.post(
            f"/cards/{squad['id']}",
            {**form, "kw": ["IMPERIUM", "INFANTRY"], "keywords": "Primaris"},
        )
        assert saved.status_code == 303
        card = units(ruby, force)["Intercessors"]
        assert card["keywords"] == ["IMPERIUM", "INFANTRY", "PRIMARIS"]
        before = dump(engine)
        refused = ruby.post(f"/cards/{squad['id']}", {**form, "kw": ["INFANTRY"]})
        assert refused.status_code == 422
        assert 'data-code="crusade_faction_mismatch"' in refused.text
        assert "checked" not in chip(refused.text, "kw", "IMPERIUM")  # as the player left it
        assert dump(engine) == before

    def test_no_chips_once_the_unit_has_fought(self, person: Callable[[str], Browser]) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        captain = units(ruby, force)["Captain"]
        # the owner's edit form is kept per version of the campaign: the battle moves it
        assert 'name="kw"' in ruby.get(f"/cards/{captain['id']}").text
        fight_a_battle(world)
        page = ruby.get(f"/cards/{captain['id']}").text
        assert "Edit name and narrative" in page and 'name="kw"' not in page
        renamed = ruby.post(f"/cards/{captain['id']}", {"name": "Severus", "narrative": ""})
        assert renamed.status_code == 303
        assert 'value="Severus"' in ruby.get(f"/cards/{captain['id']}").text
        assert units(ruby, force)["Severus"]["keywords"] == captain["keywords"]
        sneaked = ruby.post(
            f"/cards/{captain['id']}",
            {"name": "Severus", "narrative": "", "keywords_shown": "1", "kw": ["IMPERIUM"]},
        )
        assert sneaked.status_code == 422 and 'data-code="keywords_fixed"' in sneaked.text


class TestBadInput:
    def test_odd_forms_are_refused_or_ignored_never_a_5xx(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        before = dump(engine)
        odd: list[dict[str, Any]] = [
            {"lines": "abc", "name": "", "power_rating": ""},
            {"lines": "-3", "more": "abc", "name": ""},
            {"lines": "99999", "name": "", "more": "99999"},
            {"lines": "1", "name": "A", "power_rating": "5", "kw": ["X" * 500]},
            {"lines": "1", "name": "A", "power_rating": "5", "kw": ["IMPERIUM"] * 100},
            {"lines": "2", "name": "A", "power_rating": "5", "kw-1": ["IMPERIUM"], "name-1": "B"},
            {"lines": "1", "name": "A", "power_rating": "1e3"},
            {"lines": "1", "name": "A", "power_rating": "5", "keywords": "IMPERIUM, " + "Y" * 60},
            {"lines": "1", "name": "A", "power_rating": "5", "stratagem_cp": "x"},
        ]
        for form in odd:
            answer = ruby.post(f"/forces/{force}/cards", form)
            assert answer.status_code in (200, 422), (form, answer.status_code)
            assert 'id="form-error"' in answer.text or answer.status_code == 200, form
        assert dump(engine) == before
        for query in ("lines=abc", "lines=0", "copy=0", "copy=99999999999", "lines=5&copy=x"):
            answer = ruby.get(f"/forces/{force}/cards/new?{query}")
            assert answer.status_code in (200, 404, 422), (query, answer.status_code)


class TestPointsCampaign:
    """A campaign that musters by points (ruling 57): the page asks each unit's points and
    counts the supply in points."""

    def test_the_page_asks_for_points_and_refuses_a_unit_without(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        orga = person("orga")
        cid = orga.api("POST", "/campaigns", json={"name": "Points league"})["id"]
        pack = (Path(__file__).resolve().parents[2] / "examples/packs/points.yaml").read_bytes()
        orga.api("POST", f"/campaigns/{cid}/rule-packs", files={"file": ("p.yaml", pack)})
        body = {"name": "Sons of Dorn", "crusade_faction": "IMPERIUM", "player_name": "Orga"}
        fid = orga.api("POST", f"/campaigns/{cid}/forces", json=body)["id"]

        page = orga.get(f"/forces/{fid}/cards/new").text
        assert 'name="points"' in page and "0 of 1000 points used" in page
        before = dump(engine)
        scouts = {"name": "Scouts", "power_rating": "4", "kw": ["IMPERIUM", "INFANTRY"]}
        refused = orga.post(f"/forces/{fid}/cards", scouts)
        assert refused.status_code == 422
        assert "give Scouts its points value" in refused.text
        assert dump(engine) == before

        added = orga.post(f"/forces/{fid}/cards", {**scouts, "points": "70"})
        assert added.status_code == 303, added.text
        assert units(orga, fid)["Scouts"]["points"] == 70
        assert "70 / 1000</strong> points used" in orga.get(f"/forces/{fid}").text

    def test_the_wizard_counts_the_muster_in_points(self, person: Callable[[str], Browser]) -> None:
        """The set-up offers each size's points limit and the muster totals count points
        (over the limit said in points), Crusade points staying on Power Rating."""
        orga = person("orga")
        cid = orga.api("POST", "/campaigns", json={"name": "Points league"})["id"]
        pack = (Path(__file__).resolve().parents[2] / "examples/packs/points.yaml").read_bytes()
        orga.api("POST", f"/campaigns/{cid}/rule-packs", files={"file": ("p.yaml", pack)})
        armies = []
        for name, faction, points in (
            ("Sons of Dorn", "IMPERIUM", 260),
            ("Iron Hands", "IMPERIUM", 480),
        ):
            body = {"name": name, "crusade_faction": faction, "player_name": name}
            fid = orga.api("POST", f"/campaigns/{cid}/forces", json=body)["id"]
            for unit, pts in (("Sternguard", points), ("Scouts", 70)):
                card = {"name": unit, "power_rating": 5, "points": pts, "keywords": [faction]}
                orga.api("POST", f"/forces/{fid}/cards", json=card)
            armies.append(fid)
        started = orga.post(f"/campaigns/{cid}/battles/new")
        base = started.headers["location"].removesuffix("/setup")
        setup = orga.get(f"{base}/setup").text
        assert "500 pts" in setup and "3000 pts" in setup and " PL," not in setup
        chosen = {
            "force_id": armies[0],
            "opponent_id": armies[1],
            "role": "attacker",
            "battle_size": "combat_patrol",
            "mission": "supply_drop",
            "agendas_0": "assassins",
            "agendas_1": "cull_the_hordes",
            "action": "next",
        }
        assert orga.post(f"{base}/setup", chosen).status_code == 303
        muster = orga.get(f"{base}/muster").text
        assert "each army may field up to <strong>500 points</strong>" in muster
        cards = {a: [c["id"] for c in orga.api("GET", f"/forces/{a}")["cards"]] for a in armies}
        updated = orga.post(
            f"{base}/muster",
            {"roster_0": cards[armies[0]], "roster_1": cards[armies[1]], "action": "update"},
        )
        assert updated.status_code == 303, updated.text  # back to the muster, totals kept
        totals = orga.get(f"{base}/muster").text
        counter = totals.split('data-testid="pl-counter"', 1)[1].split("</div>", 1)[0]
        assert '<output data-testid="pl-0">330</output> / 500 pts' in counter
        assert '<output data-testid="pl-1">550</output> / 500 pts' in counter
        assert "over the limit by 50" in counter
        assert "500 pts · 0 Crusade points" in counter  # Crusade points stay on Power Rating
