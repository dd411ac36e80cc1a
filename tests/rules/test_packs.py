"""Rule packs (issue 22) in the pure rules layer: loading with errors that name the path and
line, hostile files, collisions with the core, and each effect through the engine."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from app.rules import packs
from app.rules.aftermath import (
    BattleHonourDecision,
    SideReport,
    UnitReport,
    answer_battle_honour,
    answer_battle_scar,
    resolve_side,
)
from app.rules.agendas import cannot_score, check_agenda_selection
from app.rules.battle import choose_mission, muster, roll_mission
from app.rules.battle import size_limit as battle_size_limit
from app.rules.cards import BattleScar
from app.rules.data import HonourCategory, Rulebook
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.honours import (
    HonourRequest,
    WeaponChoice,
    check_crusade_relic,
    gain_battle_honour,
)
from app.rules.order_of_battle import add_unit, start_order_of_battle, supply_used
from app.rules.out_of_action import gain_battle_scar, xp_cap
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, character, force

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "packs"
PILGRIMS = (EXAMPLES / "ashen-pilgrims.yaml").read_text()
HOUSE = (EXAMPLES / "house-rules.yaml").read_text()


def problems(text: str) -> list[packs.Problem]:
    with pytest.raises(packs.PackError) as refused:
        pack = packs.load(text)
        packs.check_against(pack, book())
    return list(refused.value.problems)


def test_every_example_pack_loads_and_applies() -> None:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        pack = packs.load(path.read_bytes())
        packs.check_against(pack, book())
        packs.apply(book(), [pack])


def test_house_rules_change_the_numbers_and_nothing_else() -> None:
    played = packs.apply(book(), [packs.load(HOUSE)])
    numbers = played.numbers
    assert (numbers.starting_supply_limit, numbers.max_requisition_points) == (75, 15)
    assert numbers.requisition_points_per_battle == 2
    assert numbers.starting_requisition_points == book().numbers.starting_requisition_points
    assert played.agendas == book().agendas
    new = start_order_of_battle(id="f", name="Sons", crusade_faction="IMPERIUM", book=played)
    assert new.supply_limit == 75


def test_a_later_pack_wins_a_setting() -> None:
    tighter = HOUSE.replace("id: house_rules", "id: tighter").replace("15", "3")
    played = packs.apply(book(), [packs.load(HOUSE), packs.load(tighter)])
    assert played.numbers.max_requisition_points == 3


def test_errors_name_the_path_and_the_line() -> None:
    broken = PILGRIMS.replace("xp_per_tally: 2", "xp_per_tally: lots")
    [problem] = problems(broken)
    assert problem.path == "agendas[0].xp_per_tally"
    assert problem.line == PILGRIMS.splitlines().index("    xp_per_tally: 2") + 1
    assert "integer" in problem.message


@pytest.mark.parametrize(
    ("change", "path", "says"),
    [
        (("kind: remove_battle_scar", "kind: summon_daemon"), "requisitions[1].effects[1]", "kind"),
        (
            ("amount: 2", "amount: 2\n        extra: 1"),
            "requisitions[0].effects[0].extra",
            "not permitted",
        ),
        (
            ("counter: fervour\n        amount: 2", "counter: faith\n        amount: 2"),
            "requisitions[0].effects[0].counter",
            "no counter 'faith'",
        ),
        (("INFANTRY and not", "INFANTRY and and not"), "agendas[0].eligible", "expected a KEYWORD"),
        (
            ("counter.fervour >= 3", "counter.faith >= 3"),
            "requisitions[1].eligible",
            "no counter 'faith'",
        ),
        (("name: Bear the Ashes", "name: assassins"), "agendas[0].name", "already a agenda"),
        (
            ("id: kindle_fervour", "id: increase_supply_limit"),
            "requisitions[0].id",
            "already a requisition",
        ),
        (('version: "1.0"', "version: one"), "version", "pattern"),
        (("format: crusade-rule-pack/1", "format: something/2"), "format", "crusade-rule-pack/1"),
        (
            (
                "kind: change_counter\n        counter: fervour\n        amount: 2",
                "kind: add_xp\n        amount: 1",
            ),
            "requisitions[0].effects[0]",
            "the target must be unit",
        ),
    ],
)
def test_a_bad_pack_is_refused_naming_the_path(
    change: tuple[str, str], path: str, says: str
) -> None:
    old, new = change
    assert old in PILGRIMS
    found = problems(PILGRIMS.replace(old, new, 1))
    assert any(p.path.startswith(path) and says in p.message for p in found), found


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a: &x [1]\nb: *x\n", "anchors and aliases"),
        ("format: !!python/object:os.system x\n", "is not allowed"),
        ("- just\n- a list\n", "a pack is a mapping"),
        ("{format: [", "not valid YAML"),
        ("id: a\nid: b\n", "given twice"),
        ("a:\n" + "".join(" " * (2 * n) + f"- n{n}:\n" for n in range(1, 16)), "deep"),
        ("x: " + "y" * (packs.MAX_BYTES + 1), f"at most {packs.MAX_BYTES // 1024} KB"),
        ("when: !!timestamp 2026-11-25\n", "YAML tag (!!timestamp) is not allowed"),
    ],
)
def test_hostile_yaml_is_refused(text: str, says: str) -> None:
    with pytest.raises(packs.PackError) as refused:
        packs.load(text)
    assert says in str(refused.value)


def test_the_schema_describes_every_field() -> None:
    schema = packs.schema()
    assert set(schema["required"]) == {"format", "id", "name", "version"}
    assert {
        "settings",
        "counters",
        "agendas",
        "requisitions",
        "relics",
        "missions",
        "battle_traits",
        "psychic_fortitudes",
    } <= set(schema["properties"])
    effect_kinds = {
        v["properties"]["kind"]["const"]
        for k, v in schema["$defs"].items()
        if "kind" in v.get("properties", {})
    }
    assert effect_kinds == {
        "change_supply_limit",
        "change_requisition_points",
        "add_xp",
        "remove_xp",
        "remove_battle_scar",
        "add_upgrade",
        "add_unit",
        "change_counter",
        # a pack mission's victor bonus: the core rules' own kinds
        "extra_requisition_points",
        "extra_marked_for_greatness",
        "battle_honour",
        "free_requisitions",
        # a pack Agenda's xp, other than per tally mark
        "achieved",
        "highest_tally",
        "threshold",
        # issue 38 (part 2): named choices, quests, transformations
        "set_choice",
        "start_quest",
        "transform",
        "remove_unit",
        # issue 47: a pack's own honour given, its own table rolled, as effects
        "grant_honour",
        "roll_table",
    }


# --- through the engine ----------------------------------------------------------------------

PLAYED = packs.apply(book(), [packs.load(PILGRIMS)])
ANY_TIME = PurchaseWindow()


def buy(army, requisition: str, **order):  # type: ignore[no-untyped-def]
    return purchase_requisition(army, RequisitionOrder(requisition, **order), ANY_TIME, PLAYED)


def test_a_pack_agenda_is_offered_by_its_expression() -> None:
    agenda = PLAYED.agenda("bear_the_ashes")
    assert cannot_score(agenda, card(), PLAYED) is None
    tank = card(keywords={"IMPERIUM", "VEHICLE", "INFANTRY"})
    assert "only for units that meet" in (cannot_score(agenda, tank, PLAYED) or "")


def test_a_counter_starts_changes_and_stays_in_range() -> None:
    army = force(card())
    army, bought = buy(army, "kindle_fervour")
    assert army.counters == {"fervour": 3} and army.requisition_points == 4
    assert bought.requisition_points_spent == 1
    army, _ = buy(army, "kindle_fervour")
    army, _ = buy(army, "kindle_fervour") if army.counters["fervour"] + 2 <= 6 else (army, None)
    assert army.counters["fervour"] == 5
    before = copy.deepcopy(army)
    with pytest.raises(RuleError) as refused:
        buy(army, "kindle_fervour")
    assert refused.value.code == "counter_out_of_range" and "between 0 and 6" in str(refused.value)
    assert army == before


def test_a_miracle_needs_fervour_spends_it_and_heals_a_scar() -> None:
    scarred = character(scars=(BattleScar("fatigued"),))
    army = force(scarred)
    with pytest.raises(RuleError) as refused:
        buy(army, "pilgrims_miracle", card_id="c1", scar="fatigued")
    assert refused.value.code == "requisition_not_eligible"
    assert "counter.fervour >= 3" in str(refused.value)
    army = replace(army, counters={"fervour": 4})
    army, _ = buy(army, "pilgrims_miracle", card_id="c1", scar="fatigued")
    assert army.counters == {"fervour": 1} and army.card("c1").scars == ()


@pytest.mark.parametrize(
    ("effect", "check"),
    [
        ("{kind: change_supply_limit, amount: 10}", lambda a: a.supply_limit == 60),
        ("{kind: change_requisition_points, amount: 3}", lambda a: a.requisition_points == 5),
        ("{kind: add_xp, amount: 2}", lambda a: a.card("u1").xp == 3),
        ("{kind: remove_xp, amount: 2}", lambda a: a.card("u1").xp == 0),
        (
            "{kind: add_upgrade, name: Saint's ashes, crusade_points: 2}",
            lambda a: a.card("u1").crusade_points == 2,
        ),
        (
            "{kind: add_unit, name: Pilgrim Mob, power_rating: 4, keywords: [INFANTRY]}",
            lambda a: (
                [(c.name, c.power_rating, sorted(c.keywords), c.xp) for c in a.cards[1:]]
                == [("Pilgrim Mob", 4, ["IMPERIUM", "INFANTRY"], 0)]
            ),
        ),
    ],
)
def test_each_effect_of_the_vocabulary(effect: str, check) -> None:  # type: ignore[no-untyped-def]
    text = f"""
format: crusade-rule-pack/1
id: one_effect
name: One effect
version: "1"
requisitions:
  - id: boon
    name: Boon
    cost_rp: 1
    target: unit
    summary: One effect.
    effects: [{effect}]
"""
    pack = packs.load(text)
    packs.check_against(pack, book())
    played = packs.apply(book(), [pack])
    army = force(card(xp=1))
    changed, _ = purchase_requisition(
        army, RequisitionOrder("boon", card_id="u1"), ANY_TIME, played
    )
    assert check(changed)


def test_xp_that_reaches_a_new_rank_promotes_and_reports_it() -> None:
    """Ruling 61: the unit is promoted at once; the purchase reports each rank reached (the
    service owes a Battle Honour for each, as after a battle)."""
    boon = "{id: boon, name: Boon, cost_rp: 0, target: unit, summary: x, effects: [EFFECT]}"
    effect = "{kind: add_xp, amount: 20}"
    text = HOUSE.replace(
        "settings:", f"requisitions: [{boon.replace('EFFECT', effect)}]\nsettings:"
    )
    played = packs.apply(book(), [packs.load(text)])
    after, bought = purchase_requisition(
        force(card(xp=1)), RequisitionOrder("boon", card_id="u1"), ANY_TIME, played
    )
    assert (after.card("u1").xp, after.card("u1").rank) == (21, "battle_hardened")
    assert [(p.card_id, p.rank) for p in bought.promotions] == [
        ("u1", "blooded"),
        ("u1", "battle_hardened"),
    ]
    _, small = purchase_requisition(
        force(card(xp=0)),
        RequisitionOrder("boon", card_id="u1"),
        ANY_TIME,
        packs.apply(book(), [packs.load(text.replace("amount: 20", "amount: 2"))]),
    )
    assert small.promotions == ()


def test_a_card_counter_starts_at_its_start_and_changes_on_the_card() -> None:
    text = """
format: crusade-rule-pack/1
id: zeal
name: Zeal
version: "1"
counters: [{id: zeal, name: Zeal, scope: card, start: 2, min: 0, max: 3}]
requisitions:
  - id: stoke
    name: Stoke
    cost_rp: 0
    target: unit
    eligible: counter.zeal >= 2
    summary: One more Zeal.
    effects: [{kind: change_counter, counter: zeal, amount: 1}]
"""
    played = packs.apply(book(), [packs.load(text)])
    army = force(card())  # its counter never set: at its start, 2
    army, _ = purchase_requisition(army, RequisitionOrder("stoke", card_id="u1"), ANY_TIME, played)
    assert army.card("u1").counters == {"zeal": 3} and army.counters == {}
    with pytest.raises(RuleError) as refused:
        purchase_requisition(army, RequisitionOrder("stoke", card_id="u1"), ANY_TIME, played)
    assert refused.value.code == "counter_out_of_range"


FERVENT = PILGRIMS.replace(
    "    xp_per_tally: 2\n", "    xp_per_tally: 2\n    counters: {fervour: 2, zeal: 1}\n", 1
).replace(
    "agendas:\n",
    "  - id: zeal\n    name: Zeal\n    scope: card\n    start: 0\n    min: 0\n    max: 2\n"
    "agendas:\n",
    1,
)


def test_an_agendas_marks_move_force_and_card_counters_within_their_bounds() -> None:
    """Each mark adds its amount: the army's marks to a force counter, a unit's own marks to
    its card counter; neither passes its max (Fervour 1 + 2 x 4 stops at 6, Zeal at 2)."""
    played = packs.apply(book(), [packs.load(FERVENT)])
    army = force(
        card(id="a", name="Pilgrims A"), card(id="b", name="Pilgrims B"), counters={"fervour": 1}
    )
    report = SideReport(
        roster=("a", "b"),
        agendas=("bear_the_ashes",),
        units=(
            UnitReport("a", agenda_tallies={"bear_the_ashes": 3}),
            UnitReport("b", agenda_tallies={"bear_the_ashes": 1}),
        ),
    )
    after = resolve_side(army, report, played, EnteredDice([]))
    assert after.force.counters == {"fervour": 6}
    assert after.force.card("a").counters == {"zeal": 2}
    assert after.force.card("b").counters == {"zeal": 1}
    assert after.force.card("a").xp == 1 + 3 * 2  # the XP as before
    # without the counters, the same battle moves nothing
    plain = resolve_side(army, report, PLAYED, EnteredDice([]))
    assert plain.force.counters == {"fervour": 1} and plain.force.card("a").counters == {}


class TestPackHonours:
    """A pack's own Battle Traits and Psychic Fortitudes (ruling 55): chosen beside the
    core table, never rolled; eligibility, duplicates and PSYKERs as the core's."""

    def played(self) -> Rulebook:
        return packs.apply(book(), [packs.load(PILGRIMS)])

    def test_a_pack_trait_is_chosen_by_an_eligible_unit(self) -> None:
        request = HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("Ash Walkers",))
        gained, honour = gain_battle_honour(card(), request, self.played(), EnteredDice([]))
        assert honour.entry_ids == ("ash_walkers",)
        assert honour.crusade_points == 1 and gained.honours == (honour,)
        with pytest.raises(RuleError) as twice:
            gain_battle_honour(gained, request, self.played(), EnteredDice([]))
        assert twice.value.code == "honour_duplicate"

    def test_its_expression_decides_who_may_take_it(self) -> None:
        request = HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("pyre_hardened",))
        with pytest.raises(RuleError) as refused:  # Battle-ready: not yet Blooded
            gain_battle_honour(card(), request, self.played(), EnteredDice([]))
        assert refused.value.code == "honour_not_eligible"
        assert "rank >= blooded" in str(refused.value)
        blooded = card(xp=6, rank="blooded")
        _, honour = gain_battle_honour(blooded, request, self.played(), EnteredDice([]))
        assert honour.entry_ids == ("pyre_hardened",)
        walker = HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("ash_walkers",))
        tank = card(keywords={"IMPERIUM", "VEHICLE"}, xp=6, rank="blooded")
        with pytest.raises(RuleError) as not_infantry:
            gain_battle_honour(tank, walker, self.played(), EnteredDice([]))
        assert not_infantry.value.code == "honour_not_eligible"

    def test_a_roll_uses_the_core_table_only(self) -> None:
        core = {e.id for e in book().honours.battle_traits[card().unit_type].entries}
        for roll in range(1, 7):
            request = HonourRequest(HonourCategory.BATTLE_TRAIT)
            _, honour = gain_battle_honour(card(), request, self.played(), EnteredDice([roll]))
            assert honour.entry_ids[0] in core

    def test_a_pack_fortitude_is_a_psykers(self) -> None:
        request = HonourRequest(HonourCategory.PSYCHIC_FORTITUDE, choice=("embers_of_faith",))
        with pytest.raises(RuleError) as refused:
            gain_battle_honour(card(), request, self.played(), EnteredDice([]))
        assert refused.value.code == "psychic_fortitude_requires_psyker"
        psyker = card(keywords={"IMPERIUM", "INFANTRY", "PSYKER"})
        _, honour = gain_battle_honour(psyker, request, self.played(), EnteredDice([]))
        assert honour.entry_ids == ("embers_of_faith",)

    def test_a_name_of_the_core_table_is_refused_in_a_pack(self) -> None:
        core = book().honours.battle_traits[card().unit_type].entries[0]
        text = f"""
format: crusade-rule-pack/1
id: clash
name: Clash
version: "1"
battle_traits:
  - id: mine
    name: {core.name}
    summary: Same name as the core's.
"""
        found = problems(text)
        assert [p.path for p in found] == ["battle_traits[0].name"]
        assert "already a battle_trait of the rulebook" in found[0].message


def test_a_unit_added_by_a_pack_keeps_within_the_supply_limit() -> None:
    text = """
format: crusade-rule-pack/1
id: host
name: Host
version: "1"
requisitions:
  - id: summon
    name: Summon the Host
    cost_rp: 1
    summary: A great host joins.
    effects: [{kind: add_unit, name: Great Host, power_rating: 46}]
"""
    played = packs.apply(book(), [packs.load(text)])
    army = force(card(xp=1))  # 5 of 50 Power used: 46 more does not fit
    with pytest.raises(RuleError) as refused:
        purchase_requisition(army, RequisitionOrder("summon"), ANY_TIME, played)
    assert refused.value.code == "supply_limit_exceeded"


VIGIL = """
format: crusade-rule-pack/1
id: vigil
name: Vigil Nights
version: "1"
missions:
  - id: the_long_vigil
    name: The Long Vigil
    battle_size: combat_patrol
    objective_markers: 3
    summary: Hold the shrine through the night.
    victor_bonus:
      - summary: The victor gains 2 extra RP.
        effect: {kind: extra_requisition_points, amount: 2}
"""


class TestPackMissions:
    """A pack's missions (ruling 56): offered for their battle size, chosen, never rolled."""

    def test_a_mission_is_chosen_for_its_size_and_never_rolled(self) -> None:
        played = packs.apply(book(), [packs.load(VIGIL)])
        size = played.battle_size("combat_patrol")
        chosen = choose_mission(size, "the_long_vigil", played)
        assert (chosen.pack, chosen.low, chosen.objective_markers) == ("vigil", 0, 3)
        rolled = {roll_mission(size, played, EnteredDice([r]))[0].id for r in range(1, 7)}
        assert "the_long_vigil" not in rolled
        assert rolled == {m.id for m in book().missions_for("combat_patrol")}
        with pytest.raises(RuleError):
            choose_mission(played.battle_size("strike_force"), "the_long_vigil", played)

    def test_its_size_and_bonus_requisitions_must_exist(self) -> None:
        wrong = VIGIL.replace("battle_size: combat_patrol", "battle_size: skirmish")
        assert [p.path for p in problems(wrong)] == ["missions[0].battle_size"]
        free = VIGIL.replace(
            "effect: {kind: extra_requisition_points, amount: 2}",
            "effect: {kind: free_requisitions, requisitions: [no_such], mode: all, target: force}",
        )
        assert [p.path for p in problems(free)] == [
            "missions[0].victor_bonus[0].effect.requisitions"
        ]
        clash = VIGIL.replace("name: The Long Vigil", "name: Supply Drop")
        assert [p.path for p in problems(clash)] == ["missions[0].name"]


POINTS = (EXAMPLES / "points.yaml").read_text()


class TestMusterByPoints:
    """Ruling 57: a pack's `muster_by: points` measures supply and battle sizes in points."""

    played = packs.apply(book(), [packs.load(POINTS)])

    def test_the_numbers_and_limits_are_in_points(self) -> None:
        numbers = self.played.numbers
        assert (numbers.muster_by, numbers.starting_supply_limit) == ("points", 1000)
        limits = {s.id: battle_size_limit(s, self.played) for s in self.played.battle_sizes}
        assert limits == {
            "combat_patrol": 500,
            "incursion": 1000,
            "strike_force": 2000,
            "onslaught": 3000,
        }
        core = book()
        assert battle_size_limit(core.battle_size("combat_patrol"), core) == 25

    def test_a_unit_needs_its_points_and_counts_them(self) -> None:
        army = force(card(points=400), supply_limit=1000)
        assert (supply_used(army, self.played), supply_used(army, book())) == (400, 5)
        with pytest.raises(RuleError) as refused:
            add_unit(army, card(id="u2", name="Scouts"), self.played)
        assert refused.value.code == "points_missing" and "Scouts" in refused.value.message
        with pytest.raises(RuleError) as refused:
            add_unit(army, card(id="u2", points=601), self.played)
        assert refused.value.code == "supply_limit_exceeded"
        assert "1001 points" in refused.value.message
        assert len(add_unit(army, card(id="u2", points=600), self.played).cards) == 2

    def test_the_muster_reads_points_not_power(self) -> None:
        small = card(power_rating=30, points=200)  # over 25 PL, under 500 points
        big = card(id="u2", power_rating=2, points=501)
        size = self.played.battle_size("combat_patrol")
        army = force(small, big)
        assert muster(army, ["u1"], size, muster_by="points") == (small,)
        with pytest.raises(RuleError) as refused:
            muster(army, ["u2"], size, muster_by="points")
        assert refused.value.code == "points_limit_exceeded"
        unpriced = force(card())
        with pytest.raises(RuleError) as refused:
            muster(unpriced, ["u1"], size, muster_by="points")
        assert refused.value.code == "points_missing"

    def test_fresh_recruits_asks_for_the_new_points(self) -> None:
        army = force(card(points=100), supply_limit=1000)
        window = PurchaseWindow()
        with pytest.raises(RuleError) as refused:
            purchase_requisition(
                army,
                RequisitionOrder("fresh_recruits", card_id="u1", new_power_rating=7),
                window,
                self.played,
            )
        assert refused.value.code == "requisition_detail_missing"
        for points, code in ((100, "points_invalid"), (1001, "supply_limit_exceeded")):
            with pytest.raises(RuleError) as refused:
                purchase_requisition(
                    army,
                    RequisitionOrder(
                        "fresh_recruits", card_id="u1", new_power_rating=7, new_points=points
                    ),
                    window,
                    self.played,
                )
            assert refused.value.code == code
        grown, _ = purchase_requisition(
            army,
            RequisitionOrder("fresh_recruits", card_id="u1", new_power_rating=7, new_points=180),
            window,
            self.played,
        )
        assert (grown.card("u1").power_rating, grown.card("u1").points) == (7, 180)

    def test_a_points_pack_gives_its_supply_numbers_and_prices_its_units(self) -> None:
        [problem] = problems(POINTS.replace("  starting_supply_limit: 1000\n", ""))
        assert problem.path == "settings" and "starting_supply_limit" in problem.message
        unpriced = POINTS + (
            "requisitions:\n"
            "  - id: levy\n"
            "    name: Levy\n"
            "    cost_rp: 1\n"
            "    summary: A levy joins.\n"
            "    effects: [{kind: add_unit, name: Levy, power_rating: 3}]\n"
        )
        [problem] = problems(unpriced)
        assert problem.path == "requisitions[0].effects[0].points"
        priced = unpriced.replace("power_rating: 3}", "power_rating: 3, points: 60}")
        assert packs.check_against(packs.load(priced), book()) is None


class TestPackScars:
    """A pack's own Battle Scars (ruling 58): chosen beside the core table, never rolled;
    eligibility and duplicates as the core's; their caps and forbidden actions apply."""

    played = packs.apply(book(), [packs.load(PILGRIMS)])

    def test_a_pack_scar_is_chosen_by_an_eligible_unit(self) -> None:
        scarred, scar = gain_battle_scar(card(), self.played, EnteredDice([]), "Ash-choked")
        assert scar.entry_id == "ash_choked" and scarred.scar_ids == {"ash_choked"}
        assert scarred.crusade_points == card().crusade_points - 1
        with pytest.raises(RuleError) as twice:
            gain_battle_scar(scarred, self.played, EnteredDice([]), "ash_choked")
        assert twice.value.code == "battle_scar_duplicate"
        tank = card(keywords={"IMPERIUM", "VEHICLE"})
        with pytest.raises(RuleError) as refused:
            gain_battle_scar(tank, self.played, EnteredDice([]), "ash_choked")
        assert refused.value.code == "battle_scar_not_eligible"
        with pytest.raises(RuleError) as unknown:  # without the pack: not a scar at all
            gain_battle_scar(card(), book(), EnteredDice([]), "ash_choked")
        assert unknown.value.code == "battle_scar_unknown"

    def test_a_roll_uses_the_core_table_only(self) -> None:
        core = {e.id for e in book().scars.battle_scars[card().unit_type].entries}
        for roll in range(1, 7):
            _, scar = gain_battle_scar(card(), self.played, EnteredDice([roll]))
            assert scar.entry_id in core

    def test_its_cap_and_forbidden_actions_apply_and_it_heals(self) -> None:
        scarred, _ = gain_battle_scar(card(), self.played, EnteredDice([]), "ash_choked")
        assert (xp_cap(scarred, self.played), xp_cap(card(), self.played)) == (3, None)
        shaken = PILGRIMS.replace(
            "# Triggers",
            "  - id: shaken_nerve\n"
            "    name: Shaken Nerve\n"
            "    forbids_actions: true\n"
            "    summary: The unit does nothing but fight.\n"
            "# Triggers",
        )
        grim = packs.apply(book(), [packs.load(shaken)])
        secure = grim.agenda("secure_the_area")
        assert cannot_score(secure, card(), grim) is None
        frozen, _ = gain_battle_scar(card(), grim, EnteredDice([]), "shaken_nerve")
        assert "Shaken Nerve" in (cannot_score(secure, frozen, grim) or "")
        healed, _ = purchase_requisition(
            force(frozen),
            RequisitionOrder("repair_and_recuperate", card_id="u1", scar="Shaken Nerve"),
            PurchaseWindow(),
            grim,
        )
        assert healed.card("u1").scars == ()


class TestCountersMovedByADecision:
    """Ruling 59: a pack's Battle Trait or scar may move counters when a unit gains it (the
    decision's answer), a force counter of its force or a card counter on the unit, kept
    within bounds."""

    pack = (
        PILGRIMS.replace(
            "    summary: The unit ignores",
            "    counters: {fervour: 2, zeal: 1}\n    summary: The unit ignores",
            1,
        )
        .replace(
            "    max_xp_per_battle: 3\n",
            "    max_xp_per_battle: 3\n    counters: {fervour: -3}\n",
            1,
        )
        .replace(
            "agendas:\n",
            "  - id: zeal\n    name: Zeal\n    scope: card\n    start: 0\n    min: 0\n    max: 2\n"
            "agendas:\n",
            1,
        )
    )
    played = packs.apply(book(), [packs.load(pack)])

    def test_a_trait_moves_the_force_and_the_units_counters(self) -> None:
        owed = BattleHonourDecision(card_id="u1", reason="rank")
        request = HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("ash_walkers",))
        host = force(card(), counters={"fervour": 5})
        after = answer_battle_honour(host, owed, request, self.played, EnteredDice([]))
        assert after.counters == {"fervour": 6}  # 5 + 2 stops at its max of 6
        assert after.card("u1").counters == {"zeal": 1}

    def test_a_scar_moves_them_too_and_a_core_one_does_not(self) -> None:
        host = force(card(), counters={"fervour": 2})
        after = answer_battle_scar(host, "u1", self.played, EnteredDice([]), "ash_choked")
        assert after.counters == {"fervour": 0}  # 2 - 3 stops at its min of 0
        core = answer_battle_scar(host, "u1", self.played, EnteredDice([]), "fatigued")
        assert core.counters == {"fervour": 2}

    def test_a_counter_the_pack_lacks_is_refused_by_path(self) -> None:
        [problem] = problems(
            PILGRIMS.replace(
                "max_xp_per_battle: 3\n", "max_xp_per_battle: 3\n    counters: {zeal: 1}\n"
            )
        )
        assert problem.path == "battle_scars[0].counters.zeal"


class TestPackWeaponEnhancements:
    """Ruling 60: a pack's Weapon Enhancement is chosen alone, for a weapon of its kind."""

    played = packs.apply(book(), [packs.load(PILGRIMS)])

    def request(self, *choice: str, weapon_type: str = "melee") -> HonourRequest:
        weapon = WeaponChoice(model="Sergeant", weapon="Chainsword", weapon_type=weapon_type)
        return HonourRequest(HonourCategory.WEAPON_ENHANCEMENT, choice=choice, weapon=weapon)

    def test_it_is_chosen_alone_for_a_weapon_of_its_kind(self) -> None:
        gained, honour = gain_battle_honour(
            card(), self.request("Censer-blessed"), self.played, EnteredDice([])
        )
        assert (honour.entry_ids, honour.weapon) == (("censer_blessed",), "Chainsword")
        assert gained.honours == (honour,) and honour.crusade_points == 1
        _, both = gain_battle_honour(
            card(), self.request("censer_blessed", weapon_type="both"), self.played, EnteredDice([])
        )
        assert both.entry_ids == ("censer_blessed",)

    def test_the_wrong_weapon_or_a_second_choice_is_refused(self) -> None:
        for request, code in (
            (
                self.request("censer_blessed", weapon_type="ranged"),
                "weapon_enhancement_wrong_weapon",
            ),
            (self.request("censer_blessed", "master_worked"), "weapon_enhancement_pack_alone"),
        ):
            with pytest.raises(RuleError) as refused:
                gain_battle_honour(card(), request, self.played, EnteredDice([]))
            assert refused.value.code == code

    def test_a_roll_uses_the_core_table(self) -> None:
        core = {e.id for t in book().honours.weapon_enhancements.values() for e in t.entries}
        _, honour = gain_battle_honour(card(), self.request(), self.played, EnteredDice([4, 2]))
        assert set(honour.entry_ids) <= core and len(honour.entry_ids) == 2


def test_an_add_unit_is_named_in_the_pack_or_at_purchase_never_both() -> None:
    base = "{id: levy, name: Levy, cost_rp: 1, summary: x, effects: [EFFECT]}"
    for effect, says in (
        ("{kind: add_unit, chosen: true, name: Levy, power_rating: 3}", "buyer gives"),
        ("{kind: add_unit, keywords: [INFANTRY]}", "name and power_rating are needed"),
    ):
        text = HOUSE.replace(
            "settings:", f"requisitions: [{base.replace('EFFECT', effect)}]\nsettings:"
        )
        [problem] = problems(text)
        assert problem.path.startswith("requisitions[0].effects[0]") and says in problem.message


LEAN = packs.load(
    """
format: crusade-rule-pack/1
id: lean_crusade
name: Lean Crusade
version: "1"
core:
  withdraw: {agendas: [assassins], requisitions: [rearm_and_resupply], relics: [artisan_bionics]}
  requisition_costs: {increase_supply_limit: 3}
"""
)


def test_a_pack_withdraws_core_entries_but_keeps_them_in_the_book() -> None:
    """Ruling 62: withdrawn core entries stay readable (battles and cards name them) and are
    refused when chosen or bought; a victor bonus still grants a withdrawn requisition."""
    lean = packs.apply(book(), [LEAN])
    assert lean.agenda("assassins").withdrawn_by == "lean_crusade"
    assert book().agenda("assassins").withdrawn_by is None
    size = lean.battle_size("combat_patrol")
    with pytest.raises(RuleError) as refused:
        check_agenda_selection(size, ["assassins"], lean)
    assert refused.value.code == "agenda_withdrawn"
    with pytest.raises(RuleError) as relic:
        check_crusade_relic(character(), "artisan_bionics", lean, ())
    assert relic.value.code == "crusade_relic_withdrawn"
    check_crusade_relic(character(), "artificer_weapon", lean, ())  # the others stay
    army = force(card())
    with pytest.raises(RuleError) as bought:
        purchase_requisition(
            army, RequisitionOrder("rearm_and_resupply", card_id="u1"), ANY_TIME, lean
        )
    assert bought.value.code == "requisition_withdrawn"
    granted, _ = purchase_requisition(
        army, RequisitionOrder("increase_supply_limit"), ANY_TIME, lean
    )
    assert (granted.supply_limit, granted.requisition_points) == (55, 2)  # 3 RP now


def test_the_first_pack_to_withdraw_is_named_and_a_later_cost_wins() -> None:
    again = LEAN.model_copy(
        update={
            "id": "later",
            "core": LEAN.core.model_copy(
                update={"requisition_costs": {"increase_supply_limit": 0}}
            ),
        }
    )
    both = packs.apply(book(), [LEAN, again])
    assert both.agenda("assassins").withdrawn_by == "lean_crusade"
    assert both.requisition("increase_supply_limit").cost_rp == 0


def test_a_pack_cannot_withdraw_or_reprice_another_packs_content() -> None:
    pilgrims = packs.load(PILGRIMS)
    theirs = pilgrims.requisitions[0].id
    grabby = LEAN.model_copy(update={"core": packs.CoreChanges(requisition_costs={theirs: 0})})
    with pytest.raises(packs.PackError) as refused:
        packs.check_against(grabby, book(), [pilgrims])
    [problem] = refused.value.problems
    assert problem.path == f"core.requisition_costs.{theirs}"


class TestPackMissionMarkersAtTheEnd:
    """Issue 36 (ruling 48): a pack's mission may say how many objective markers its rules
    leave at the end; Deploy Vox-relays counts those."""

    MISSION = """
format: crusade-rule-pack/1
id: vigil
name: Vigil Nights
version: "1"
missions:
  - id: the_long_vigil
    name: The Long Vigil
    battle_size: combat_patrol
    objective_markers: 3
    objective_markers_at_end: {left}
    summary: Hold the shrine through the night; two shrines fall before dawn.
    victor_bonus:
      - summary: The victor gains 2 extra RP.
        effect: {{kind: extra_requisition_points, amount: 2}}
"""

    def test_the_markers_left_reach_the_rulebook(self) -> None:
        played = packs.apply(book(), [packs.load(self.MISSION.format(left=1))])
        assert played.mission("the_long_vigil").markers_at_end == 1

    def test_more_left_than_set_up_is_refused(self) -> None:
        found = problems(self.MISSION.format(left=4))
        assert found[0].path.startswith("missions[0]")
        assert "objective_markers_at_end" in found[0].message
