"""Crusade points are derived from the facts stored on a card."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.rules.cards import BattleHonour, BattleScar, Upgrade, never_gains_xp
from app.rules.data import HonourCategory, UnitType
from app.rules.dice import EnteredDice
from app.rules.honours import HonourRequest, gain_battle_honour
from tests.factories import book, card, character

TRAIT = HonourCategory.BATTLE_TRAIT


class TestCrusadePoints:
    def test_a_new_unit_has_none(self) -> None:
        assert card().crusade_points == 0

    def test_honour_worth_one_at_power_rating_ten(self) -> None:
        gained, honour = gain_battle_honour(
            card(power_rating=10), HonourRequest(TRAIT), book(), EnteredDice([1])
        )
        assert honour.crusade_points == 1
        assert gained.crusade_points == 1

    def test_honour_worth_two_at_power_rating_eleven(self) -> None:
        gained, _ = gain_battle_honour(
            card(power_rating=11), HonourRequest(TRAIT), book(), EnteredDice([1])
        )
        assert gained.crusade_points == 2

    def test_honour_points_are_fixed_when_gained(self) -> None:
        gained, _ = gain_battle_honour(
            card(power_rating=10), HonourRequest(TRAIT), book(), EnteredDice([1])
        )
        grown = replace(gained, power_rating=14)
        assert grown.crusade_points == 1

    def test_each_scar_held_subtracts_one_and_may_go_negative(self) -> None:
        scarred = card(scars=(BattleScar("fatigued"), BattleScar("shell_shock")))
        assert scarred.crusade_points == -2

    def test_sum_of_honours_upgrades_minus_scars(self) -> None:
        unit = character(
            honours=(
                BattleHonour(TRAIT, ("resilient",), 1),
                BattleHonour(HonourCategory.CRUSADE_RELIC, ("vortex_grenade",), 3),
            ),
            upgrades=(
                Upgrade("warlord_trait", "Inspiring Leader", 1),
                Upgrade("specialist_reinforcements", "Honoured Veteran", 2),
            ),
            scars=(BattleScar("lost_leg"),),
        )
        assert unit.crusade_points == 1 + 3 + 1 + 2 - 1


class TestUnitType:
    @pytest.mark.parametrize(
        ("keywords", "unit_type"),
        [
            ({"CHARACTER", "INFANTRY"}, UnitType.CHARACTER),
            ({"CHARACTER", "VEHICLE"}, UnitType.VEHICLE),
            ({"CHARACTER", "MONSTER"}, UnitType.MONSTER),
            ({"VEHICLE"}, UnitType.VEHICLE),
            ({"MONSTER"}, UnitType.MONSTER),
            ({"INFANTRY"}, UnitType.OTHER),
            ({"BIKER"}, UnitType.OTHER),
        ],
    )
    def test_tables_by_unit_type(self, keywords: set[str], unit_type: UnitType) -> None:
        assert card(keywords=keywords).unit_type == unit_type


class TestUnitsThatNeverGainExperience:
    @pytest.mark.parametrize(
        "unit",
        [
            card(named_character=True),
            card(keywords={"TYRANIDS", "SWARM"}),
            card(keywords={"TYRANIDS", "SWARMS"}),
            card(keywords={"T'AU EMPIRE", "DRONE"}),
            card(keywords={"T'AU EMPIRE", "DRONES"}),
            card(keywords={"T'AU EMPIRE", "Drones"}),
            card(battlefield_role="Fortifications"),
            card(battlefield_role="Fortification"),
            card(battlefield_role="fortification"),
            card(summoned=True),
        ],
        ids=[
            "named",
            "swarm",
            "swarms",
            "drone",
            "drones",
            "drones_any_case",
            "fortifications",
            "fortification",
            "fortification_lower_case",
            "summoned",
        ],
    )
    def test_these_never_gain_xp(self, unit: object) -> None:
        assert never_gains_xp(unit, book())  # type: ignore[arg-type]

    def test_ordinary_units_do(self) -> None:
        assert not never_gains_xp(card(), book())
        # a word that merely starts or ends like one of them is not it
        assert not never_gains_xp(card(keywords={"IMPERIUM", "DRONE HARBINGER"}), book())
        assert not never_gains_xp(card(battlefield_role="Fortified Troops"), book())
