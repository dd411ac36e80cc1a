"""Battle sizes, missions, mustering, Crusade Blessings and the victor."""

from __future__ import annotations

import pytest

from app.rules.battle import (
    Outcome,
    battle_size,
    choose_mission,
    crusade_blessings,
    decide_victor,
    muster,
    roll_mission,
    roster_crusade_points,
    score,
    victor_bonuses,
)
from app.rules.cards import BattleScar
from app.rules.data import VictorRole
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from tests.factories import book, card, force


class TestBattleSizes:
    @pytest.mark.parametrize(
        ("size", "power", "cp", "agendas"),
        [
            ("combat_patrol", 25, 3, 1),
            ("incursion", 50, 6, 2),
            ("strike_force", 100, 12, 3),
            ("onslaught", 150, 18, 4),
        ],
    )
    def test_limits(self, size: str, power: int, cp: int, agendas: int) -> None:
        found = battle_size(size, book())
        assert (found.max_power_level, found.command_points, found.agendas) == (power, cp, agendas)

    def test_unknown_size(self) -> None:
        with pytest.raises(RuleError) as refused:
            battle_size("apocalypse", book())
        assert refused.value.code == "battle_size_unknown"


class TestMissions:
    @pytest.mark.parametrize(
        ("size", "roll", "mission"),
        [
            ("combat_patrol", 1, "Sweep and Clear"),
            ("combat_patrol", 4, "Supply Drop"),
            ("combat_patrol", 6, "Assassinate"),
            ("incursion", 1, "Supply Cache"),
            ("incursion", 6, "Behind Enemy Lines"),
            ("strike_force", 1, "Supplies From Above"),
            ("strike_force", 3, "Cut Off the Head"),
            ("strike_force", 6, "Ambush"),
            ("onslaught", 2, "Firestorm"),
            ("onslaught", 3, "Grand Assault"),
            ("onslaught", 5, "Field of Glory"),
        ],
    )
    def test_rolled_on_the_size_table(self, size: str, roll: int, mission: str) -> None:
        rolled, die = roll_mission(battle_size(size, book()), book(), EnteredDice([roll]))
        assert rolled.name == mission
        assert die.value == roll

    def test_every_size_has_a_full_d6_table(self) -> None:
        for size in book().battle_sizes:
            missions = book().missions_for(size.id)
            covered = sorted(r for m in missions for r in range(m.low, m.high + 1))
            assert covered == [1, 2, 3, 4, 5, 6]

    def test_mission_of_another_size_is_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            choose_mission(battle_size("combat_patrol", book()), "ambush", book())
        assert refused.value.code == "mission_not_for_battle_size"


class TestMuster:
    def test_within_the_power_level(self) -> None:
        army = force(card(id="a", power_rating=15), card(id="b", power_rating=10))
        assert len(muster(army, ["a", "b"], battle_size("combat_patrol", book()))) == 2

    def test_over_the_power_level(self) -> None:
        army = force(card(id="a", power_rating=15), card(id="b", power_rating=11))
        with pytest.raises(RuleError) as refused:
            muster(army, ["a", "b"], battle_size("combat_patrol", book()))
        assert refused.value.code == "power_level_exceeded"

    def test_units_awaiting_decisions_cannot_be_picked(self) -> None:
        with pytest.raises(RuleError) as refused:
            muster(force(card(id="a")), ["a"], battle_size("incursion", book()), unavailable={"a"})
        assert refused.value.code == "unit_unavailable"

    @pytest.mark.parametrize(
        ("ids", "code"),
        [
            ([], "roster_empty"),
            (["a", "a"], "roster_duplicate"),
            (["z"], "unit_not_in_order_of_battle"),
        ],
    )
    def test_bad_rosters(self, ids: list[str], code: str) -> None:
        with pytest.raises(RuleError) as refused:
            muster(force(card(id="a")), ids, battle_size("incursion", book()))
        assert refused.value.code == code

    @pytest.mark.parametrize(
        ("ids", "allowed"),
        [
            (["r1", "r2", "r3"], True),
            (["r1", "r2", "r3", "x"], True),
            (["x"], True),  # none of the split unit: fine
            (["r1", "x"], False),
            (["r1", "r2"], False),
            (["r1", "r2", "r3", "d1"], False),  # another split unit, half of it
        ],
    )
    def test_a_split_unit_is_mustered_whole(self, ids: list[str], allowed: bool) -> None:
        squadron = [card(id=f"r{n}", split_unit="Leman Russ Squadron") for n in (1, 2, 3)]
        drones = [card(id=f"d{n}", split_unit="Commander's drones") for n in (1, 2)]
        army = force(*squadron, *drones, card(id="x"), supply_limit=100)
        size = battle_size("onslaught", book())
        if allowed:
            assert len(muster(army, ids, size)) == len(ids)
            return
        with pytest.raises(RuleError) as refused:
            muster(army, ids, size)
        assert refused.value.code == "split_unit_incomplete"
        assert "muster all of its Crusade cards" in refused.value.message


class TestCrusadeBlessings:
    @pytest.mark.parametrize(
        ("a", "b", "bonus"),
        [
            (7, 4, (0, 2)),
            (4, 7, (2, 0)),
            (5, 5, (0, 0)),
            (0, 1, (1, 0)),
            (10, 0, (0, 5)),
            (-2, 3, (3, 0)),
        ],
    )
    def test_lower_side_gets_half_the_difference_rounded_up(
        self, a: int, b: int, bonus: tuple[int, int]
    ) -> None:
        assert crusade_blessings(a, b) == bonus

    def test_roster_points_are_summed(self) -> None:
        army = force(card(id="a"), card(id="b", scars=(BattleScar("fatigued"),)))
        assert roster_crusade_points(army, ["a", "b"]) == -1


class TestVictory:
    def test_objective_points_capped_at_ninety_plus_ten_painted(self) -> None:
        assert score(120, True, book()).total == 100
        assert score(120, False, book()).total == 90
        assert score(45, True, book()).total == 55

    def test_higher_total_wins_equal_is_a_draw(self) -> None:
        assert decide_victor(score(90, False, book()), score(85, True, book())) == Outcome.B_WINS
        assert decide_victor(score(95, False, book()), score(90, False, book())) == Outcome.DRAW
        assert decide_victor(score(60, True, book()), score(60, False, book())) == Outcome.A_WINS

    def test_negative_points_refused(self) -> None:
        with pytest.raises(RuleError):
            score(-1, False, book())

    def test_draw_earns_no_victor_bonus(self) -> None:
        assert victor_bonuses(book().mission("ambush"), won=False, role=VictorRole.ATTACKER) == ()

    def test_role_specific_bonuses(self) -> None:
        mission = book().mission("sabotage")
        attacker = victor_bonuses(mission, won=True, role=VictorRole.ATTACKER)
        defender = victor_bonuses(mission, won=True, role=VictorRole.DEFENDER)
        assert {b.role for b in attacker} == {VictorRole.ATTACKER}
        assert {b.role for b in defender} == {VictorRole.DEFENDER}
