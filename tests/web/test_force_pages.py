"""The Order of Battle page: its numbers, adding and removing units, editing the force, and
buying Requisitions, through the pages as players would."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.rules.data import rulebook
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_card_pages import fight_a_battle, units

NEW_UNIT = {"name": "Assault Squad", "power_rating": "4", "keywords": "IMPERIUM, INFANTRY"}


def requisition(page: str, requisition_id: str) -> str:
    """The HTML of one Requisition's article on the Requisitions page."""
    return page.split(f'id="requisition-{requisition_id}"')[1].split("</article>")[0]


class TestOrderOfBattle:
    def test_shows_supply_rp_tallies_and_every_unit(self, person: Callable[[str], Browser]) -> None:
        world = campaign_with_two_players(person)
        page = world["kai"].get(f"/forces/{world['ruby_force']}")
        assert page.status_code == 200
        assert "<h1>Ultramarines 4th</h1>" in page.text
        assert "Supply: <strong>16 / 50</strong> Power used (34 free)" in page.text
        assert 'value="16" max="50"' in page.text
        assert "<strong>5</strong> Requisition points" in page.text
        assert "<strong>0</strong> battles" in page.text
        assert "<strong>0</strong> Crusade points" in page.text
        first_rank = rulebook().ranks[0].name
        for card in units(world["ruby"], world["ruby_force"]).values():
            assert f'<a href="/cards/{card["id"]}">{card["name"]}</a>' in page.text
        assert page.text.count(f"<strong>{first_rank}</strong> rank") == 3
        assert "Add a unit" not in page.text  # Kai may read Ruby's force, not change it

    def test_after_a_battle_shows_tally_victory_honours_and_scars(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        fight_a_battle(world)
        ruby = world["ruby"].get(f"/forces/{world['ruby_force']}").text
        assert "<strong>1</strong> battle<" in ruby and "<strong>1</strong> victory" in ruby
        assert "<strong>1</strong> Crusade points" in ruby
        assert 'class="badge honour"' in ruby and "Inspiring Hero" in ruby
        kai = world["kai"].get(f"/forces/{world['kai_force']}").text
        assert 'class="badge scar"' in kai and "Deep Scars" in kai
        assert "<strong>0</strong> victories" in kai

    def test_pending_decisions_are_announced_with_a_link(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        fight_a_battle(world, settle=False)
        kai, force = world["kai"], world["kai_force"]
        page = kai.get(f"/forces/{force}").text
        assert 'id="decisions-waiting"' in page
        assert "1 decision (after a battle or a rule pack's reward) is waiting" in page
        assert f'<a href="/forces/{force}/decisions">Answer them</a>' in page
        assert '<span class="badge">Awaiting a decision</span>' in page
        captain = units(kai, force)["Captain"]
        assert "Captain awaits a decision" in kai.get(f"/cards/{captain['id']}").text
        ruby_page = world["ruby"].get(f"/forces/{world['ruby_force']}").text
        assert "See them" in world["ruby"].get(f"/forces/{force}").text
        assert 'id="decisions-waiting"' in ruby_page  # Ruby's Captain owes a Battle Honour

    def test_an_outsider_is_sent_to_log_in(
        self, person: Callable[[str], Browser], site: TestClient
    ) -> None:
        world = campaign_with_two_players(person)
        asked = site.get(f"/forces/{world['ruby_force']}", follow_redirects=False)
        assert asked.status_code == 303 and asked.headers["location"].startswith("/login")


class TestAddUnit:
    def test_adding_a_unit_puts_it_in_the_order_of_battle(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        form = ruby.get(f"/forces/{force}/cards/new")
        assert form.status_code == 200 and 'value="IMPERIUM"' in form.text
        added = ruby.post(f"/forces/{force}/cards", {**NEW_UNIT, "datasheet": "Assault Marines"})
        assert added.status_code == 303
        card = units(ruby, force)["Assault Squad"]
        assert added.headers["location"] == f"/forces/{force}?added={card['id']}#card-{card['id']}"
        assert (card["power_rating"], card["keywords"]) == (4, ["IMPERIUM", "INFANTRY"])
        assert card["datasheet"] == "Assault Marines"
        page = ruby.get(added.headers["location"])
        assert "Assault Squad joined the Order of Battle." in page.text
        assert "Supply: <strong>20 / 50</strong>" in page.text

    def test_over_the_supply_limit_is_refused_in_place(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["ruby"].post(
            f"/forces/{world['ruby_force']}/cards",
            {"name": "Land Raider", "power_rating": "40", "keywords": "IMPERIUM, VEHICLE"},
        )
        assert refused.status_code == 422
        assert 'data-code="supply_limit_exceeded"' in refused.text
        assert "over the Supply Limit of 50" in refused.text
        assert 'value="Land Raider"' in refused.text and 'value="40"' in refused.text
        assert 'value="IMPERIUM, VEHICLE"' in refused.text
        assert dump(engine) == before

    def test_a_missing_name_is_refused_next_to_the_field(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["ruby"].post(
            f"/forces/{world['ruby_force']}/cards", {**NEW_UNIT, "name": " "}
        )
        assert refused.status_code == 422
        assert 'id="f-name-error"' in refused.text and "Name is needed." in refused.text
        assert 'value="4"' in refused.text and 'value="IMPERIUM, INFANTRY"' in refused.text
        assert dump(engine) == before

    def test_a_unit_without_the_faction_keyword_is_refused(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["ruby"].post(
            f"/forces/{world['ruby_force']}/cards", {**NEW_UNIT, "keywords": "CHAOS, INFANTRY"}
        )
        assert refused.status_code == 422 and "lacks the IMPERIUM keyword" in refused.text
        assert dump(engine) == before

    def test_another_player_cannot_add_to_your_force(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["kai"].post(f"/forces/{world['ruby_force']}/cards", NEW_UNIT)
        assert refused.status_code == 403 and "Not allowed" in refused.text
        assert world["kai"].get(f"/forces/{world['ruby_force']}/cards/new").status_code == 403
        assert dump(engine) == before

    def test_the_organizer_may_add_to_any_force(self, person: Callable[[str], Browser]) -> None:
        world = campaign_with_two_players(person)
        added = world["orga"].post(f"/forces/{world['kai_force']}/cards", NEW_UNIT)
        assert added.status_code == 303
        assert "Assault Squad" in units(world["kai"], world["kai_force"])

    def test_a_character_can_take_a_warlord_trait_as_it_joins(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        added = ruby.post(
            f"/forces/{force}/cards",
            {
                "name": "Lieutenant Amulius",
                "power_rating": "4",
                "keywords": "IMPERIUM, INFANTRY, CHARACTER",
                "warlord_trait": "Rites of War",
            },
        )
        assert added.status_code == 303
        card = units(ruby, force)["Lieutenant Amulius"]
        assert card["crusade_points"] == 1
        assert ruby.api("GET", f"/forces/{force}")["requisition_points"] == 4
        assert "Rites of War" in ruby.get(f"/cards/{card['id']}").text

    def test_a_refused_requisition_on_joining_adds_nothing(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["ruby"].post(
            f"/forces/{world['ruby_force']}/cards", {**NEW_UNIT, "warlord_trait": "Rites of War"}
        )
        assert refused.status_code == 422
        assert "Warlord Trait is only for CHARACTER units" in refused.text
        assert 'value="Rites of War"' in refused.text
        assert dump(engine) == before


class TestRemoveUnit:
    def test_removal_asks_first_then_frees_the_supply(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        squad = units(ruby, force)["Hellblasters"]
        before = dump(engine)
        asked = ruby.get(f"/cards/{squad['id']}/remove")
        assert asked.status_code == 200
        assert "Remove Hellblasters for good?" in asked.text
        assert f'action="/cards/{squad["id"]}/remove"' in asked.text
        assert dump(engine) == before  # asking changes nothing
        removed = ruby.post(f"/cards/{squad['id']}/remove")
        assert removed.status_code == 303 and removed.headers["location"] == f"/forces/{force}"
        page = ruby.get(f"/forces/{force}").text
        assert "Supply: <strong>10 / 50</strong>" in page
        assert "Removed for good" in page.split('id="removed-h"')[0] + page
        assert "Hellblasters" in page.split('id="removed-h"')[1]
        again = ruby.get(f"/cards/{squad['id']}/remove")
        assert "already left the Order of Battle" in again.text
        assert f'action="/cards/{squad["id"]}/remove"' not in again.text

    def test_another_player_cannot_remove_your_unit(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        squad = units(world["ruby"], world["ruby_force"])["Hellblasters"]
        before = dump(engine)
        assert world["kai"].get(f"/cards/{squad['id']}/remove").status_code == 403
        assert world["kai"].post(f"/cards/{squad['id']}/remove").status_code == 403
        assert dump(engine) == before


class TestEditForce:
    def test_rename_and_notes(self, person: Callable[[str], Browser], engine: Engine) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        assert 'value="Ultramarines 4th"' in ruby.get(f"/forces/{force}/edit").text
        before = dump(engine)
        refused = ruby.post(f"/forces/{force}", {"name": "", "notes": "Keep me"})
        assert refused.status_code == 422 and "Name is needed." in refused.text
        assert "Keep me" in refused.text
        assert dump(engine) == before
        saved = ruby.post(
            f"/forces/{force}",
            {"name": "Ultramarines 2nd", "player_name": "Ruby", "notes": "Onward"},
        )
        assert saved.status_code == 303
        page = ruby.get(f"/forces/{force}").text
        assert "<h1>Ultramarines 2nd</h1>" in page and "Onward" in page


class TestRequisitions:
    def test_every_requisition_is_listed_with_why_it_is_not_available(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        page = world["ruby"].get(f"/forces/{world['ruby_force']}/requisitions").text
        for wanted in rulebook().requisitions:
            assert f"Buy {wanted.name} ({wanted.cost_rp} RP)" in page
        supply = requisition(page, "increase_supply_limit")
        assert "Available now" in supply and "disabled" not in supply
        recruits = requisition(page, "fresh_recruits")
        assert "Available now</strong> for Intercessor Squad, Hellblasters." in recruits
        assert 'name="new_power_rating"' in recruits
        repair = requisition(page, "repair_and_recuperate")
        assert "disabled" in repair and "Not now:" in repair
        assert "needs a unit with a Battle Scar" in repair
        specialist = requisition(page, "specialist_reinforcements")
        assert "disabled" in specialist
        assert "can only be bought when its unit is added" in specialist
        psychic = requisition(page, "psychic_meditations")
        assert "disabled" in psychic and "is only for PSYKER units" in psychic

    def test_buying_one_spends_rp(self, person: Callable[[str], Browser]) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        bought = ruby.post(
            f"/forces/{force}/requisitions", {"requisition": "increase_supply_limit"}
        )
        assert bought.status_code == 303
        page = ruby.get(bought.headers["location"]).text
        assert "Bought Increase Supply Limit." in page and "<strong>4 RP</strong>" in page
        oob = ruby.get(f"/forces/{force}").text
        assert "<strong>4</strong> Requisition points" in oob and "16 / 55" in oob

    def test_a_unit_requisition_applies_to_the_chosen_unit(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        squad = units(ruby, force)["Intercessor Squad"]
        bought = ruby.post(
            f"/forces/{force}/requisitions",
            {"requisition": "fresh_recruits", "card_id": str(squad["id"]), "new_power_rating": "8"},
        )
        assert bought.status_code == 303
        assert units(ruby, force)["Intercessor Squad"]["power_rating"] == 8

    def test_a_refused_purchase_shows_why_in_place(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        squad = units(ruby, force)["Intercessor Squad"]
        before = dump(engine)
        refused = ruby.post(
            f"/forces/{force}/requisitions",
            {"requisition": "fresh_recruits", "card_id": str(squad["id"]), "new_power_rating": "3"},
        )
        assert refused.status_code == 422
        recruits = requisition(refused.text, "fresh_recruits")
        assert 'role="alert"' in recruits and "must be above 5" in recruits
        assert 'value="3"' in recruits
        assert dump(engine) == before

    def test_with_no_rp_left_nothing_can_be_bought(self, person: Callable[[str], Browser]) -> None:
        world = campaign_with_two_players(person)
        ruby, force = world["ruby"], world["ruby_force"]
        for _ in range(5):
            ruby.post(f"/forces/{force}/requisitions", {"requisition": "increase_supply_limit"})
        page = ruby.get(f"/forces/{force}/requisitions").text
        supply = requisition(page, "increase_supply_limit")
        assert "disabled" in supply and "costs 1 RP but Ultramarines 4th has only 0" in supply
        assert "disabled" in requisition(page, "fresh_recruits")

    def test_a_promoted_character_may_take_a_warlord_trait(
        self, person: Callable[[str], Browser]
    ) -> None:
        world = campaign_with_two_players(person)
        fight_a_battle(world)
        ruby, force = world["ruby"], world["ruby_force"]
        captain = units(ruby, force)["Captain"]
        trait = requisition(ruby.get(f"/forces/{force}/requisitions").text, "warlord_trait")
        assert "Available now</strong> for Captain." in trait and "disabled" not in trait
        bought = ruby.post(
            f"/forces/{force}/requisitions",
            {
                "requisition": "warlord_trait",
                "card_id": str(captain["id"]),
                "warlord_trait": "Duty",
            },
        )
        assert bought.status_code == 303
        assert "Duty" in ruby.get(f"/cards/{captain['id']}").text

    def test_another_player_cannot_buy_for_your_force(
        self, person: Callable[[str], Browser], engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        page = world["kai"].get(f"/forces/{world['ruby_force']}/requisitions").text
        assert (
            "Only the force's owner or an organizer" in page
            and "<button" not in page.split("<main")[1].split("</main>")[0]
        )
        before = dump(engine)
        refused = world["kai"].post(
            f"/forces/{world['ruby_force']}/requisitions", {"requisition": "increase_supply_limit"}
        )
        assert refused.status_code == 403
        assert dump(engine) == before
