"""Rules that depend on a unit's keywords: who can score each Agenda, who can be the
Warlord, named characters' own Warlord Trait, and Knights gaining CHARACTER."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from app.rules import packs
from app.rules.aftermath import SideReport, UnitReport, resolve_side
from app.rules.agendas import cannot_score
from app.rules.battle import check_warlord
from app.rules.cards import BattleHonour, BattleScar, Upgrade, with_own_warlord_trait
from app.rules.data import HonourCategory
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, character, force

INFANTRY = {"IMPERIUM", "INFANTRY"}
VEHICLE = {"IMPERIUM", "VEHICLE"}
AIRCRAFT = {"IMPERIUM", "VEHICLE", "AIRCRAFT", "FLY"}
BIKER = {"IMPERIUM", "BIKER"}
CAVALRY = {"IMPERIUM", "CAVALRY"}
HERO = {"IMPERIUM", "INFANTRY", "CHARACTER"}
PSYKER = {"IMPERIUM", "INFANTRY", "PSYKER"}
PSYKER_HERO = {"IMPERIUM", "INFANTRY", "PSYKER", "CHARACTER"}
AMULET = BattleHonour(HonourCategory.CRUSADE_RELIC, ("blackstone_shard_amulet",), 1)


class TestAgendaEligibilityByKeyword:
    """Every Agenda's unit restriction, as its own text gives it."""

    @pytest.mark.parametrize(
        ("agenda", "keywords", "can"),
        [
            ("secure_the_area", INFANTRY, True),
            ("secure_the_area", VEHICLE, False),
            ("secure_the_area", HERO, False),
            ("secure_the_area", BIKER, False),
            ("search_for_archeotech", INFANTRY, True),
            ("search_for_archeotech", HERO, True),
            ("search_for_archeotech", VEHICLE, False),
            ("deploy_vox_relays", INFANTRY, True),
            ("deploy_vox_relays", VEHICLE, False),
            ("deploy_vox_relays", CAVALRY, False),
            ("recover_mission_archives", INFANTRY, True),
            ("recover_mission_archives", CAVALRY, True),
            ("recover_mission_archives", BIKER, True),
            ("recover_mission_archives", VEHICLE, False),
            ("breakthrough", VEHICLE, True),
            ("breakthrough", AIRCRAFT, False),
            ("scry_battle_plans", PSYKER_HERO, True),
            ("scry_battle_plans", PSYKER, False),
            ("scry_battle_plans", HERO, False),
            ("lord_of_the_warp", INFANTRY, True),
            ("assassins", VEHICLE, True),
            ("sentinel", AIRCRAFT, True),
            ("survivor", VEHICLE, True),
        ],
    )
    def test_keywords(self, agenda: str, keywords: set[str], can: bool) -> None:
        unit = card(keywords=keywords)
        assert (cannot_score(book().agenda(agenda), unit, book()) is None) is can

    @pytest.mark.parametrize(
        ("agenda", "scar", "can"),
        [
            ("secure_the_area", "battle_weary", False),
            ("search_for_archeotech", "battle_weary", False),
            ("deploy_vox_relays", "battle_weary", False),
            ("recover_mission_archives", "battle_weary", False),
            ("secure_the_area", "fatigued", True),
            ("assassins", "battle_weary", True),
        ],
    )
    def test_battle_scars_that_forbid_actions(self, agenda: str, scar: str, can: bool) -> None:
        unit = card(scars=(BattleScar(scar),))
        assert (cannot_score(book().agenda(agenda), unit, book()) is None) is can

    def test_deep_scars_stop_a_psykers_psychic_action(self) -> None:
        seer = card(keywords=PSYKER_HERO, scars=(BattleScar("deep_scars"),))
        reason = cannot_score(book().agenda("scry_battle_plans"), seer, book())
        assert reason is not None and "Deep Scars" in reason

    def test_blackstone_shard_amulet_stops_psychic_actions_only(self) -> None:
        bearer = card(keywords=PSYKER_HERO, honours=(AMULET,))
        assert cannot_score(book().agenda("scry_battle_plans"), bearer, book())
        infantry = card(keywords=HERO, honours=(AMULET,))
        assert cannot_score(book().agenda("search_for_archeotech"), infantry, book()) is None

    def test_every_agenda_has_its_restriction_as_data(self) -> None:
        restricted = {a.id for a in book().agendas if a.eligibility != type(a.eligibility)()}
        unrestricted = {a.id for a in book().agendas} - restricted
        assert unrestricted == {"cull_the_hordes", "reaper", "lord_of_the_warp"}


def _resolve(unit: Any, report_unit: UnitReport, agendas: tuple[str, ...]) -> Any:
    army = force(unit)
    before = copy.deepcopy(army)
    report = SideReport(roster=(unit.id,), agendas=agendas, units=(report_unit,))
    try:
        return resolve_side(army, report, book(), EnteredDice([6] * 6))
    finally:
        assert army == before


class TestAgendaTallyRefusals:
    @pytest.mark.parametrize(
        ("keywords", "report", "agendas", "xp"),
        [
            (INFANTRY, UnitReport("u1", agenda_tallies={"survivor": 2}), ("survivor",), 1 + 4),
            (
                INFANTRY,
                UnitReport("u1", below_half_strength=True, agenda_tallies={"survivor": 1}),
                ("survivor",),
                1 + 2,
            ),
            (
                INFANTRY,
                UnitReport("u1", below_half_strength=False, agenda_tallies={"survivor": 2}),
                ("survivor",),
                1 + 4,
            ),
            (
                INFANTRY,
                UnitReport("u1", destroyed_ranged=2, agenda_tallies={"assassins": 2}),
                ("assassins",),
                1 + 4,
            ),
            (
                INFANTRY,
                UnitReport("u1", destroyed_psychic=1, agenda_tallies={"witch_hunter": 3}),
                ("witch_hunter",),
                1 + 3,
            ),
            (
                INFANTRY,
                UnitReport("u1", destroyed=True, agenda_tallies={"secure_the_area": 1}),
                ("secure_the_area",),
                1 + 1,
            ),
        ],
    )
    def test_allowed(
        self, keywords: set[str], report: UnitReport, agendas: tuple[str, ...], xp: int
    ) -> None:
        unit = card(keywords=keywords)
        after = _resolve(unit, report, agendas)
        assert after.force.card("u1").xp == xp

    @pytest.mark.parametrize(
        ("keywords", "report", "agendas", "words"),
        [
            (
                INFANTRY,
                UnitReport("u1", destroyed=True, agenda_tallies={"survivor": 1}),
                ("survivor",),
                "not destroyed",
            ),
            (
                INFANTRY,
                UnitReport("u1", below_half_strength=True, agenda_tallies={"survivor": 2}),
                ("survivor",),
                "Half-strength",
            ),
            (
                INFANTRY,
                UnitReport("u1", destroyed=True, agenda_tallies={"sentinel": 1}),
                ("sentinel",),
                "not destroyed",
            ),
            (
                AIRCRAFT,
                UnitReport("u1", agenda_tallies={"breakthrough": 1}),
                ("breakthrough",),
                "AIRCRAFT",
            ),
            (
                VEHICLE,
                UnitReport("u1", agenda_tallies={"secure_the_area": 1}),
                ("secure_the_area",),
                "INFANTRY",
            ),
            (
                VEHICLE,
                UnitReport("u1", agenda_tallies={"deploy_vox_relays": 1}),
                ("deploy_vox_relays",),
                "INFANTRY",
            ),
            (
                PSYKER,
                UnitReport("u1", agenda_tallies={"scry_battle_plans": 2}),
                ("scry_battle_plans",),
                "PSYKER CHARACTER",
            ),
            (
                INFANTRY,
                UnitReport("u1", agenda_tallies={"assassins": 1}),
                ("assassins",),
                "enemy units destroyed",
            ),
            (
                INFANTRY,
                UnitReport("u1", destroyed_melee=1, agenda_tallies={"first_strike": 2}),
                ("first_strike",),
                "enemy units destroyed",
            ),
            (
                INFANTRY,
                UnitReport("u1", agenda_tallies={"king_slayer": 1}),
                ("king_slayer",),
                "enemy units destroyed",
            ),
            (
                INFANTRY,
                UnitReport("u1", destroyed_psychic=1, agenda_tallies={"witch_hunter": 4}),
                ("witch_hunter",),
                "enemy units destroyed",
            ),
        ],
    )
    def test_refused(
        self, keywords: set[str], report: UnitReport, agendas: tuple[str, ...], words: str
    ) -> None:
        unit = card(keywords=keywords)
        with pytest.raises(RuleError) as refused:
            _resolve(unit, report, agendas)
        assert refused.value.code == "agenda_unit_ineligible"
        assert words in refused.value.message

    def test_battle_weary_unit_cannot_score_an_action_agenda(self) -> None:
        weary = card(scars=(BattleScar("battle_weary"),))
        report = UnitReport("u1", agenda_tallies={"search_for_archeotech": 2})
        with pytest.raises(RuleError) as refused:
            _resolve(weary, report, ("search_for_archeotech",))
        assert "Battle-weary" in refused.value.message

    def test_a_scar_gained_in_this_battle_does_not_undo_its_actions(self) -> None:
        """Eligibility reads the scars held when the battle began (ruling 3)."""
        squad = card()
        report = UnitReport("u1", destroyed=True, agenda_tallies={"search_for_archeotech": 2})
        after = _resolve(squad, report, ("search_for_archeotech",))
        assert after.force.card("u1").xp == 1 + 3


class TestWarlord:
    @pytest.mark.parametrize(
        ("roster", "warlord", "code"),
        [
            ((character(), card()), character(), None),
            ((character(), card()), card(), "warlord_not_character"),
            ((card(), card(id="u2")), card(), None),
            (
                (card(battlefield_role="Fortifications"),),
                card(battlefield_role="Fortifications"),
                "warlord_fortification",
            ),
            (
                (character(battlefield_role="Fortifications"),),
                character(battlefield_role="Fortifications"),
                "warlord_fortification",
            ),
            (
                (card(battlefield_role="Fortification"),),  # the core book's spelling
                card(battlefield_role="Fortification"),
                "warlord_fortification",
            ),
        ],
        ids=[
            "character",
            "non_character_beside_one",
            "no_character_at_all",
            "fortifications",
            "fortifications_character",
            "fortification_singular",
        ],
    )
    def test_who_may_lead(self, roster: Any, warlord: Any, code: str | None) -> None:
        if code is None:
            check_warlord(roster, warlord)
            return
        with pytest.raises(RuleError) as refused:
            check_warlord(roster, warlord)
        assert refused.value.code == code


def _buy(army: Any, window: PurchaseWindow, **order: Any) -> Any:
    return purchase_requisition(army, RequisitionOrder(**order), window, book())


class TestNamedCharacters:
    def test_own_trait_is_recorded_free(self) -> None:
        named = with_own_warlord_trait(character(named_character=True), "Rites of War")
        assert named.upgrades == (Upgrade("warlord_trait", "Rites of War", 0, model="Captain"),)
        assert named.crusade_points == 0

    def test_only_a_named_character_comes_with_a_trait(self) -> None:
        with pytest.raises(RuleError) as refused:
            with_own_warlord_trait(character(), "Rites of War")
        assert refused.value.code == "warlord_trait_needs_requisition"

    @pytest.mark.parametrize("own_trait", [None, "Rites of War"])
    def test_never_sold_a_second_trait(self, own_trait: str | None) -> None:
        named = with_own_warlord_trait(character(named_character=True), own_trait)
        army = force(named)
        before = copy.deepcopy(army)
        with pytest.raises(RuleError) as refused:
            _buy(
                army,
                PurchaseWindow(card_added="c1"),
                requisition="warlord_trait",
                card_id="c1",
                warlord_trait="Inspiring Leader",
            )
        assert refused.value.code == "named_character_has_warlord_trait"
        assert army == before

    def test_their_trait_does_not_stop_another_model_taking_it(self) -> None:
        named = with_own_warlord_trait(character(named_character=True), "Inspiring Leader")
        other = character(id="c2", name="Lieutenant")
        changed, _ = _buy(
            force(named, other),
            PurchaseWindow(card_added="c2"),
            requisition="warlord_trait",
            card_id="c2",
            warlord_trait="Inspiring Leader",
        )
        assert changed.card("c2").crusade_points == 1


KNIGHT = {"IMPERIUM", "IMPERIAL KNIGHT", "VEHICLE", "TITANIC"}
CHAOS_KNIGHT = {"CHAOS", "CHAOS KNIGHT", "VEHICLE", "TITANIC"}


class TestKnightCharacters:
    @pytest.mark.parametrize(
        ("keywords", "stratagem"),
        [
            (KNIGHT, "Knight Baron"),
            (CHAOS_KNIGHT, "Tyrannical Court"),
            (CHAOS_KNIGHT, "tyrannical court"),
        ],
    )
    def test_the_stratagem_gives_character_then_a_trait_can_be_bought(
        self, keywords: set[str], stratagem: str
    ) -> None:
        knight = card(id="k1", name="Knight Gallant", power_rating=22, keywords=keywords)
        window = PurchaseWindow(card_added="k1")
        changed, _ = _buy(
            force(knight, supply_limit=50),
            window,
            requisition="specialist_reinforcements",
            card_id="k1",
            stratagem=stratagem,
            stratagem_cp=1,
        )
        assert changed.card("k1").has("CHARACTER")
        assert not any(u.requisition == "warlord_trait" for u in changed.card("k1").upgrades)
        traited, _ = _buy(
            changed,
            window,
            requisition="warlord_trait",
            card_id="k1",
            warlord_trait="Inspiring Leader",
        )
        assert traited.card("k1").crusade_points == 1 + 2

    @pytest.mark.parametrize(
        ("keywords", "stratagem", "named", "accepted"),
        [
            # the plural the rules write and our roster importer produces
            ({"IMPERIAL KNIGHTS", "VEHICLE"}, "Knight Baron", False, True),
            ({"Imperial Knights", "VEHICLE"}, "knight baron", False, True),
            ({"CHAOS KNIGHTS", "VEHICLE"}, "Tyrannical Court", False, True),
            # each Stratagem belongs to one faction
            ({"IMPERIAL KNIGHTS", "VEHICLE"}, "Tyrannical Court", False, False),
            ({"CHAOS KNIGHTS", "VEHICLE"}, "Knight Baron", False, False),
            # Knight Baron excludes named characters; Tyrannical Court's text does not
            ({"IMPERIAL KNIGHTS", "VEHICLE"}, "Knight Baron", True, False),
            ({"CHAOS KNIGHTS", "VEHICLE"}, "Tyrannical Court", True, True),
        ],
    )
    def test_each_stratagem_is_for_its_own_faction(
        self, keywords: set[str], stratagem: str, named: bool, accepted: bool
    ) -> None:
        knight = card(
            id="k1", name="Sir Hekhtur", power_rating=22, keywords=keywords, named_character=named
        )
        army = force(knight, supply_limit=50)
        before = copy.deepcopy(army)
        buy = {"stratagem": stratagem, "stratagem_cp": 1}
        if accepted:
            changed, _ = _buy(
                army,
                PurchaseWindow(card_added="k1"),
                requisition="specialist_reinforcements",
                card_id="k1",
                **buy,
            )
            assert changed.card("k1").has("CHARACTER")
            return
        with pytest.raises(RuleError) as refused:
            _buy(
                army,
                PurchaseWindow(card_added="k1"),
                requisition="specialist_reinforcements",
                card_id="k1",
                **buy,
            )
        assert refused.value.code == "stratagem_not_for_unit"
        assert army == before

    def test_without_it_a_knight_cannot_take_a_trait(self) -> None:
        knight = card(id="k1", power_rating=22, keywords=KNIGHT)
        with pytest.raises(RuleError) as refused:
            _buy(
                force(knight),
                PurchaseWindow(card_added="k1"),
                requisition="warlord_trait",
                card_id="k1",
                warlord_trait="Inspiring Leader",
            )
        assert refused.value.code == "requisition_target_invalid"

    def test_the_stratagem_is_for_knights_only(self) -> None:
        army = force(card())
        before = copy.deepcopy(army)
        with pytest.raises(RuleError) as refused:
            _buy(
                army,
                PurchaseWindow(card_added="u1"),
                requisition="specialist_reinforcements",
                card_id="u1",
                stratagem="Knight Baron",
                stratagem_cp=1,
            )
        assert refused.value.code == "stratagem_not_for_unit"
        assert army == before

    def test_other_stratagems_add_no_keyword(self) -> None:
        knight = card(id="k1", power_rating=22, keywords=KNIGHT)
        changed, _ = _buy(
            force(knight),
            PurchaseWindow(card_added="k1"),
            requisition="specialist_reinforcements",
            card_id="k1",
            stratagem="Gallant Champion",
            stratagem_cp=1,
        )
        assert not changed.card("k1").has("CHARACTER")


EXALTED_COURT_PACK = """
format: crusade-rule-pack/1
id: older_codex
name: Older codex
version: "1"
core:
  character_stratagems:
    - {stratagem: Exalted Court, keyword: IMPERIAL KNIGHTS, excludes_named_characters: true}
"""


class TestKnightCharactersAsTheTextNamesThem:
    """Issue 36 (ruling 31): the Crusade rules name Knight Baron and Tyrannical Court only;
    Exalted Court (an older printing's) is refused in the core, and a rule pack adds it."""

    def buy(self, army: Any, rules: Any, stratagem: str = "Exalted Court") -> Any:
        order = RequisitionOrder(
            requisition="specialist_reinforcements",
            card_id="k1",
            stratagem=stratagem,
            stratagem_cp=1,
        )
        return purchase_requisition(army, order, PurchaseWindow(card_added="k1"), rules)

    def test_the_core_names_two_stratagems(self) -> None:
        requisition = book().requisition("specialist_reinforcements")
        assert requisition.character_stratagems == ("Knight Baron", "Tyrannical Court")

    def test_exalted_court_is_refused_in_the_core(self) -> None:
        army = force(card(id="k1", power_rating=22, keywords=KNIGHT))
        before = copy.deepcopy(army)
        with pytest.raises(RuleError) as refused:
            self.buy(army, book(), " exalted  court ")
        assert (refused.value.code, refused.value.field) == (
            "stratagem_not_in_crusade_rules",
            "stratagem",
        )
        assert "Knight Baron or Tyrannical Court" in refused.value.message
        assert army == before

    def test_a_rule_pack_adds_it(self) -> None:
        rules = packs.apply(book(), [packs.load(EXALTED_COURT_PACK)])
        knight = card(id="k1", power_rating=22, keywords=KNIGHT)
        changed, _ = self.buy(force(knight), rules)
        assert changed.card("k1").has("CHARACTER")
        assert changed.card("k1").crusade_points == 1  # the CP entered, as none is given
        named = card(id="k1", power_rating=22, keywords=KNIGHT, named_character=True)
        chaos = card(id="k1", power_rating=22, keywords=CHAOS_KNIGHT)
        for refused_knight in (named, chaos):
            with pytest.raises(RuleError) as refused:
                self.buy(force(refused_knight), rules)
            assert refused.value.code == "stratagem_not_for_unit"

    def test_a_pack_cannot_add_the_cores_own(self) -> None:
        again = EXALTED_COURT_PACK.replace("Exalted Court", "Knight Baron")
        with pytest.raises(packs.PackError) as refused:
            packs.check_against(packs.load(again), book())
        assert refused.value.problems[0].path == "core.character_stratagems[0].stratagem"
        first = packs.load(EXALTED_COURT_PACK)
        second = packs.load(EXALTED_COURT_PACK.replace("older_codex", "another"))
        with pytest.raises(packs.PackError):
            packs.check_against(second, book(), [first])
