"""A rule pack's own rolled tables (issue 38): D6, 2D6 and D33 tables of the pack's Battle
Traits and Battle Scars, rolled with entered or seeded dice apart from the core's tables,
re-rolling what the unit holds or may not take, chosen only where the pack says."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.rules import packs
from app.rules.cards import BattleHonour
from app.rules.data import HonourCategory, Rulebook
from app.rules.dice import EnteredDice, SeededDice
from app.rules.errors import RuleError
from app.rules.honours import HonourRequest, gain_battle_honour
from app.rules.out_of_action import gain_battle_scar
from tests.factories import book, card

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()
TRAIT = HonourCategory.BATTLE_TRAIT


def played(text: str = BROOD) -> Rulebook:
    pack = packs.load(text)
    packs.check_against(pack, book())
    return packs.apply(book(), [pack])


def rolled(request: HonourRequest, dice: list[int], **overrides: object) -> BattleHonour:
    _card, honour = gain_battle_honour(card(**overrides), request, played(), EnteredDice(dice))
    return honour


class TestRolledTables:
    def test_a_d6_result_gives_the_entry_of_its_span(self) -> None:
        honour = rolled(HonourRequest(TRAIT, table="brood_adaptations"), [4])
        assert honour.entry_ids == ("ash_lungs",)
        assert [d.value for d in honour.dice] == [4]

    def test_a_result_the_unit_holds_is_rolled_again(self) -> None:
        held = BattleHonour(TRAIT, ("ember_hide",), 1)
        honour = rolled(HonourRequest(TRAIT, table="brood_adaptations"), [1, 2, 6], honours=(held,))
        assert honour.entry_ids == ("cinder_senses",)
        assert [d.value for d in honour.dice] == [1, 2, 6]  # both dice kept for the record

    def test_a_result_the_unit_may_not_take_is_rolled_again(self) -> None:
        vehicle = {"keywords": frozenset({"VEHICLE"})}  # Ash Lungs is for INFANTRY
        honour = rolled(HonourRequest(TRAIT, table="brood_adaptations"), [3, 5], **vehicle)
        assert honour.entry_ids == ("cinder_senses",)

    def test_an_entry_on_a_rolled_table_is_never_chosen(self) -> None:
        with pytest.raises(RuleError) as refused:
            rolled(HonourRequest(TRAIT, choice=("ember_hide",)), [])
        assert refused.value.code == "pack_entry_rolled"
        with pytest.raises(RuleError) as on_table:
            rolled(HonourRequest(TRAIT, choice=("ember_hide",), table="brood_adaptations"), [])
        assert on_table.value.code == "pack_table_rolled"

    def test_a_table_with_nothing_left_is_refused_before_a_die(self) -> None:
        held = tuple(BattleHonour(TRAIT, (e,), 1) for e in ("ember_hide", "cinder_senses"))
        with pytest.raises(RuleError) as refused:
            rolled(
                HonourRequest(TRAIT, table="brood_adaptations"),
                [],
                honours=held,
                keywords=frozenset({"VEHICLE"}),
            )
        assert refused.value.code == "table_exhausted"

    def test_entered_dice_that_run_out_ask_for_another(self) -> None:
        held = BattleHonour(TRAIT, ("ember_hide",), 1)
        with pytest.raises(RuleError) as refused:
            rolled(HonourRequest(TRAIT, table="brood_adaptations"), [2], honours=(held,))
        assert refused.value.code == "dice_missing"

    def test_seeded_dice_give_the_same_result_again(self) -> None:
        request = HonourRequest(TRAIT, table="brood_adaptations")
        first = gain_battle_honour(card(), request, played(), SeededDice(7))[1]
        again = gain_battle_honour(card(), request, played(), SeededDice(7))[1]
        assert first.entry_ids == again.entry_ids and first.dice == again.dice

    def test_the_core_table_keeps_its_meaning(self) -> None:
        core = gain_battle_honour(card(), HonourRequest(TRAIT), played(), EnteredDice([1]))[1]
        assert (
            core.entry_ids
            == gain_battle_honour(card(), HonourRequest(TRAIT), book(), EnteredDice([1]))[
                1
            ].entry_ids
        )

    def test_an_unknown_table_names_the_tables(self) -> None:
        with pytest.raises(RuleError) as refused:
            rolled(HonourRequest(TRAIT, table="brood_wounds"), [1])
        assert refused.value.code == "pack_table_unknown"
        assert "brood_adaptations" in refused.value.message


class TestD33ScarTable:
    def test_a_d33_is_a_d3_for_tens_then_units(self) -> None:
        scarred, scar = gain_battle_scar(
            card(), played(), EnteredDice([2, 3]), None, "brood_wounds"
        )
        assert scar.entry_id == "brittle_carapace"
        assert [(d.sides, d.value) for d in scar.dice] == [(3, 2), (3, 3)]
        assert scarred.scar_ids == {"brittle_carapace"}

    def test_a_table_players_choose_from_takes_a_pick(self) -> None:
        _scarred, scar = gain_battle_scar(
            card(), played(), EnteredDice([]), "starving", "brood_wounds"
        )
        assert scar.entry_id == "starving" and scar.dice == ()

    def test_a_d3_above_3_is_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain_battle_scar(card(), played(), EnteredDice([4, 1]), None, "brood_wounds")
        assert refused.value.code == "dice_out_of_range"


TWO_D6 = """
format: crusade-rule-pack/1
id: omens
name: Omens
version: "1"
battle_traits:
  - {id: omen_low, name: Low Omen, summary: s}
  - {id: omen_mid, name: Middle Omen, summary: s}
  - {id: omen_high, name: High Omen, summary: s}
tables:
  - id: omens
    name: Omens
    category: battle_trait
    dice: 2D6
    results:
      - {roll: "2-5", entry: omen_low}
      - {roll: "6-8", entry: omen_mid}
      - {roll: "9-12", entry: omen_high}
"""


class TestTwoD6AndRefusals:
    def test_2d6_adds_both_dice(self) -> None:
        request = HonourRequest(TRAIT, table="omens")
        _card, honour = gain_battle_honour(card(), request, played(TWO_D6), EnteredDice([4, 5]))
        assert honour.entry_ids == ("omen_high",)

    @pytest.mark.parametrize(
        ("change", "path", "words"),
        [
            (('"9-12"', '"9-11"'), "tables[0].results", "12 not covered"),
            (('"6-8"', '"5-8"'), "tables[0].results", "5 given twice"),
            (('"2-5"', '"1-5"'), "tables[0].results[0].roll", "2D6 gives 2 to 12"),
            (("entry: omen_mid", "entry: omen_none"), "tables[0].results[1].entry", "omen_none"),
            (("dice: 2D6", "dice: D8"), "tables[0].dice", "D6"),
        ],
    )
    def test_a_table_that_does_not_cover_its_dice_once_is_refused(
        self, change: tuple[str, str], path: str, words: str
    ) -> None:
        with pytest.raises(packs.PackError) as refused:
            played(TWO_D6.replace(*change))
        found = [p for p in refused.value.problems if p.path == path]
        assert found and words in found[0].message, refused.value.problems

    def test_a_table_has_at_most_11_rows(self) -> None:
        rows = "".join(f"      - {{roll: {n}, entry: omen_low}}\n" for n in range(2, 14))
        text = TWO_D6.split("    results:\n")[0] + "    results:\n" + rows
        with pytest.raises(packs.PackError) as refused:
            played(text)
        assert any(p.path == "tables[0].results" for p in refused.value.problems)


def test_an_entry_on_no_table_is_chosen_as_before() -> None:
    text = BROOD.replace("tables:", "tables: []\nunused:").split("unused:")[0]
    rules = played(text)
    _card, honour = gain_battle_honour(
        card(), HonourRequest(TRAIT, choice=("ember_hide",)), rules, EnteredDice([])
    )
    assert honour.entry_ids == ("ember_hide",)
    assert replace(honour, dice=()) == honour


def test_the_json_schema_describes_tables() -> None:
    schema = packs.schema()
    assert "tables" in schema["properties"]
    table = schema["$defs"]["PackTableIn"]["properties"]
    assert table["dice"]["enum"] == ["D6", "2D6", "D33"]
    assert set(table) >= {"category", "chosen", "eligible", "results"}
