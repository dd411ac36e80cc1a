"""Rule-pack effects the trial missed (issue 47, item 4), in the pure rules: a threshold, a
quest or a requisition grants the pack's own Battle Trait to the unit that earned it (a
Battle Scar turning into a Battle Trait), within the core's honour limits (ruling 83)."""

from __future__ import annotations

import pytest

from app.rules import packs
from app.rules.aftermath import SideReport, resolve_side
from app.rules.cards import BattleHonour, BattleScar
from app.rules.data import HonourCategory, Rulebook
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, character, force

PENITENTS = """
format: crusade-rule-pack/1
id: penitents
name: Penitents
version: "1"
counters:
  - {id: penance, name: Penance, scope: card, start: 0, min: 0, max: 5}
  - {id: zeal, name: Zeal, scope: force, start: 0, min: 0, max: 10}
battle_traits:
  - {id: absolved, name: Absolved, counters: {zeal: 1}, summary: The unit has atoned.}
  - {id: sanctified, name: Sanctified, eligible: CHARACTER, summary: A hero blessed.}
battle_scars:
  - {id: penitent, name: Penitent, summary: The unit carries its shame.}
triggers:
  - {id: atone, name: Atone, when: battle_played, counter: penance, amount: 1, summary: s}
thresholds:
  - id: absolution
    name: Absolution
    counter: penance
    at: 2
    effects: [{kind: grant_honour, entry: absolved, replaces_scar: penitent}]
    summary: After two battles of penance the scar becomes a trait.
requisitions:
  - id: anoint
    name: Anoint
    cost_rp: 1
    target: unit
    summary: A hero is blessed.
    effects: [{kind: grant_honour, entry: sanctified}]
quests:
  - id: pilgrimage
    name: Pilgrimage
    automatic: true
    summary: Fight once and be blessed.
    steps: [{name: March, when: battle_played, count: 1}]
    reward: [{kind: grant_honour, entry: absolved}]
"""

PENANCE = BattleScar("penitent")


def played(text: str = PENITENTS) -> Rulebook:
    pack, root = packs.read(text)
    packs.check_against(pack, book(), [], root)
    return packs.apply(book(), [pack])


def after_battle(army: OrderOfBattle, rules: Rulebook) -> OrderOfBattle:
    side = SideReport(roster=tuple(c.id for c in army.cards), agendas=())
    return resolve_side(army, side, rules, EnteredDice([])).force


def honours(army: OrderOfBattle, card_id: str) -> list[tuple[str, ...]]:
    return [h.entry_ids for h in army.card(card_id).honours]


class TestFromAThreshold:
    def test_the_scar_turns_into_the_trait_for_the_unit_that_earned_it(self) -> None:
        rules = played(PENITENTS.replace("reward: [{kind: grant_honour, entry: absolved}]", ""))
        army = force(
            card(id="a", scars=(PENANCE,), counters={"penance": 1}),
            card(id="b", scars=(PENANCE,)),
        )
        assert army.card("a").crusade_points == -1
        after = after_battle(army, rules)
        # a rose to 2 Penance: Absolved, in place of Penitent, worth 1 Crusade point (5 Power)
        assert honours(after, "a") == [("absolved",)]
        assert after.card("a").honours[0].crusade_points == 1
        assert after.card("a").scar_ids == set()
        assert after.card("a").crusade_points == 1
        assert after.counters["zeal"] == 1  # the trait's own counters move (ruling 59)
        # b is at 1 Penance: nothing yet, its scar stays
        assert honours(after, "b") == [] and after.card("b").scar_ids == {"penitent"}

    def test_a_unit_at_its_most_battle_honours_gains_nothing(self) -> None:
        rules = played()
        six = tuple(BattleHonour(HonourCategory.BATTLE_TRAIT, (f"t{n}",), 1) for n in range(6))
        army = force(card(id="a", honours=six, scars=(PENANCE,), counters={"penance": 1}))
        after = after_battle(army, rules)
        assert after.card("a").honours == six  # the core's six: no seventh (ruling 83)
        assert after.card("a").scar_ids == {"penitent"}  # the scar turns only with the trait
        assert after.card("a").counters["penance"] == 2
        assert after.counters.get("zeal", 0) == 0

    def test_a_trait_held_already_is_not_given_twice(self) -> None:
        rules = played()
        held = BattleHonour(HonourCategory.BATTLE_TRAIT, ("absolved",), 1)
        army = force(card(id="a", honours=(held,), counters={"penance": 1}))
        assert after_battle(army, rules).card("a").honours == (held,)


def test_a_units_quest_grants_the_trait_when_done() -> None:
    rules = played()
    after = after_battle(force(card(id="a")), rules)
    assert honours(after, "a") == [("absolved",)]
    assert [q for q in after.card("a").counters if q.startswith("quest:")]


class TestFromARequisition:
    def buy(self, army: OrderOfBattle, card_id: str) -> OrderOfBattle:
        order = RequisitionOrder("anoint", card_id=card_id)
        bought, _ = purchase_requisition(army, order, PurchaseWindow(), played())
        return bought

    def test_the_unit_bought_for_gains_it(self) -> None:
        bought = self.buy(force(character(id="c")), "c")
        assert honours(bought, "c") == [("sanctified",)]
        assert bought.requisition_points == 4

    @pytest.mark.parametrize(
        ("unit", "code"),
        [
            (card(id="c"), "honour_not_eligible"),
            (
                character(
                    id="c",
                    honours=tuple(
                        BattleHonour(HonourCategory.BATTLE_TRAIT, (f"t{n}",), 1) for n in range(6)
                    ),
                ),
                "battle_honours_full",
            ),
            (
                character(
                    id="c",
                    honours=(BattleHonour(HonourCategory.BATTLE_TRAIT, ("sanctified",), 1),),
                ),
                "honour_duplicate",
            ),
            (character(id="c", named_character=True), "unit_never_gains_experience"),
        ],
    )
    def test_the_core_limits_refuse_the_purchase(self, unit: object, code: str) -> None:
        with pytest.raises(RuleError) as refused:
            self.buy(force(unit), "c")  # type: ignore[arg-type]
        assert refused.value.code == code


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            ("entry: sanctified}]", "entry: sainted}]"),
            "requisitions[0].effects[0].entry (line 29, column 43): no Battle Trait 'sainted'",
        ),
        (
            ("replaces_scar: penitent", "replaces_scar: shame"),
            "thresholds[0].effects[0].replaces_scar (line 21, column 68): no Battle Scar 'shame'",
        ),
        (
            ("counter: penance\n    at: 2", "counter: zeal\n    at: 2"),
            "thresholds[0].effects[0] (line 21): grant_honour needs a unit",
        ),
        (
            ("automatic: true", "automatic: true\n    scope: force"),
            "quests[0].reward[0] (line 37): grant_honour needs a unit: a card quest",
        ),
        (
            ("target: unit\n    summary: A hero", "target: force\n    summary: A hero"),
            "requisitions[0].effects[0] (line 29): grant_honour changes a unit",
        ),
    ],
)
def test_a_bad_grant_is_refused_where_it_is(change: tuple[str, str], where: str) -> None:
    with pytest.raises(packs.PackError) as refused:
        played(PENITENTS.replace(*change))
    assert where in str(refused.value)


PLAGUE = """
format: crusade-rule-pack/1
id: plague_host
name: Plague Host
version: "1"
counters:
  - {id: contagion, name: Contagion, scope: card, start: 0, min: 0, max: 5}
  - {id: misery, name: Misery, scope: force, start: 0, min: 0, max: 9}
battle_traits:
  - {id: bloated, name: Bloated, summary: The unit shrugs off wounds.}
  - {id: rotting, name: Rotting, summary: Foes nearby choke.}
battle_scars:
  - {id: weeping_sores, name: Weeping Sores, summary: The unit slows.}
  - {id: palsy, name: Palsy, counters: {misery: 1}, summary: Its aim shakes.}
tables:
  - id: gifts
    name: Gifts of Decay
    category: battle_trait
    dice: D6
    results: [{roll: "1-3", entry: bloated}, {roll: "4-6", entry: rotting}]
  - id: side_effects
    name: Side Effects
    category: battle_scar
    dice: D6
    results: [{roll: "1-3", entry: weeping_sores}, {roll: "4-6", entry: palsy}]
triggers:
  - {id: spread, name: Spread, when: battle_played, counter: contagion, amount: 1, summary: s}
thresholds:
  - id: blessed
    name: Blessed
    counter: contagion
    at: 1
    effects: [{kind: roll_table, table: gifts}]
    summary: The first battle's contagion brings a gift.
requisitions:
  - id: pathogen
    name: Experimental Pathogen
    cost_rp: 1
    target: unit
    summary: The unit is dosed; roll for the side effect.
    effects: [{kind: roll_table, table: side_effects}]
"""


def _battle(army: OrderOfBattle, rules: Rulebook, dice: list[int]) -> OrderOfBattle:
    side = SideReport(roster=tuple(c.id for c in army.cards), agendas=())
    return resolve_side(army, side, rules, EnteredDice(dice)).force


class TestRollFromAThreshold:
    def test_the_dice_entered_give_the_result_and_stay_on_the_card(self) -> None:
        after = _battle(force(card(id="a")), played(PLAGUE), [5])
        (honour,) = after.card("a").honours
        assert honour.entry_ids == ("rotting",)
        assert [(d.sides, d.value) for d in honour.dice] == [(6, 5)]
        assert honour.crusade_points == 1

    def test_a_result_held_is_rolled_again(self) -> None:
        held = BattleHonour(HonourCategory.BATTLE_TRAIT, ("rotting",), 1)
        after = _battle(force(card(id="a", honours=(held,))), played(PLAGUE), [6, 2])
        assert [h.entry_ids for h in after.card("a").honours] == [("rotting",), ("bloated",)]
        assert [d.value for d in after.card("a").honours[1].dice] == [6, 2]

    def test_a_die_missing_refuses_the_result(self) -> None:
        with pytest.raises(RuleError) as refused:
            _battle(force(card(id="a")), played(PLAGUE), [])
        assert refused.value.code == "dice_missing"

    def test_a_full_unit_rolls_nothing(self) -> None:
        six = tuple(BattleHonour(HonourCategory.BATTLE_TRAIT, (f"t{n}",), 1) for n in range(6))
        after = _battle(force(card(id="a", honours=six)), played(PLAGUE), [])
        assert after.card("a").honours == six


class TestRollFromARequisition:
    def buy(self, army: OrderOfBattle, **order: object) -> OrderOfBattle:
        wanted = RequisitionOrder("pathogen", card_id="a", **order)  # type: ignore[arg-type]
        bought, _ = purchase_requisition(army, wanted, PurchaseWindow(), played(PLAGUE))
        return bought

    def test_the_dice_entered_give_the_scar(self) -> None:
        bought = self.buy(force(card(id="a")), dice=(2,))
        assert [(s.entry_id, [d.value for d in s.dice]) for s in bought.card("a").scars] == [
            ("weeping_sores", [2])
        ]
        assert bought.requisition_points == 4
        assert bought.counters.get("misery", 0) == 0  # Weeping Sores moves no counter

    def test_the_scar_rolled_moves_its_counters(self) -> None:
        bought = self.buy(force(card(id="a")), dice=(5,))
        assert [s.entry_id for s in bought.card("a").scars] == ["palsy"]
        assert bought.counters["misery"] == 1  # ruling 59, as a decision's scar

    def test_the_apps_dice_are_seeded(self) -> None:
        first = self.buy(force(card(id="a")), seed=7).card("a").scars
        assert first == self.buy(force(card(id="a")), seed=7).card("a").scars
        assert len(first) == 1 and first[0].dice

    def test_a_unit_with_the_most_scars_is_refused(self) -> None:
        scars = tuple(BattleScar(f"s{n}") for n in range(book().numbers.max_battle_scars))
        with pytest.raises(RuleError) as refused:
            self.buy(force(card(id="a", scars=scars)), dice=(2,))
        assert refused.value.code == "battle_scars_full"


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            ("table: side_effects}]", "table: side_effect}]"),
            "requisitions[0].effects[0].table (line 41, column 41): no table 'side_effect'",
        ),
        (
            ("category: battle_scar\n", "category: weapon_enhancement\n"),
            "gives Weapon Enhancements",
        ),
        (
            ("scope: card, start: 0, min: 0, max: 5}", "scope: force, start: 0, min: 0, max: 5}"),
            "thresholds[0].effects[0] (line 33): roll_table needs a unit",
        ),
    ],
)
def test_a_bad_roll_is_refused_where_it_is(change: tuple[str, str], where: str) -> None:
    with pytest.raises(packs.PackError) as refused:
        played(PLAGUE.replace(*change))
    assert where in str(refused.value)
