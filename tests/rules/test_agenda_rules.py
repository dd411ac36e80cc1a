"""Agendas: choosing them and scoring them, one formula at a time."""

from __future__ import annotations

import pytest

from app.rules.agendas import (
    EnemyLoss,
    agenda_experience,
    check_agenda_selection,
    check_kill_bounds,
)
from app.rules.battle import battle_size
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from tests.factories import book


def agendas(*ids: str):  # type: ignore[no-untyped-def]
    return tuple(book().agenda(i) for i in ids)


def score(ids: tuple[str, ...], tallies, destroyed=None, dice=(), **kw):  # type: ignore[no-untyped-def]
    return agenda_experience(agendas(*ids), tallies, destroyed or {}, EnteredDice(dice), **kw)


class TestSelection:
    @pytest.mark.parametrize(
        ("size", "picked"),
        [
            ("combat_patrol", ["assassins"]),
            ("incursion", ["assassins", "reaper"]),
            ("strike_force", ["assassins", "reaper", "sentinel"]),
            ("onslaught", ["assassins", "reaper", "sentinel", "witch_hunter"]),
        ],
    )
    def test_count_per_battle_size(self, size: str, picked: list[str]) -> None:
        assert len(check_agenda_selection(battle_size(size, book()), picked, book())) == len(picked)

    def test_wrong_count(self) -> None:
        with pytest.raises(RuleError) as refused:
            check_agenda_selection(battle_size("incursion", book()), ["assassins"], book())
        assert refused.value.code == "agenda_count"

    def test_one_per_category(self) -> None:
        with pytest.raises(RuleError) as refused:
            check_agenda_selection(
                battle_size("incursion", book()), ["assassins", "titan_hunter"], book()
            )
        assert refused.value.code == "agenda_category_repeated"

    def test_unknown(self) -> None:
        with pytest.raises(RuleError) as refused:
            check_agenda_selection(battle_size("combat_patrol", book()), ["tea_party"], book())
        assert refused.value.code == "agenda_unknown"


class TestPerMark:
    @pytest.mark.parametrize(
        ("agenda", "tally", "xp"),
        [
            ("assassins", 2, 4),
            ("priority_target", 1, 2),
            ("titan_hunter", 2, 8),
            ("first_strike", 3, 3),
            ("cull_the_hordes", 2, 2),
            ("secure_the_area", 4, 4),
            ("witch_hunter", 4, 4),
            ("deploy_vox_relays", 3, 6),
            ("survivor", 2, 4),
        ],
    )
    def test_xp_per_mark(self, agenda: str, tally: int, xp: int) -> None:
        assert score((agenda,), {"u": {agenda: tally}}).for_card("u") == {agenda: xp}

    def test_survivor_tally_at_most_two(self) -> None:
        with pytest.raises(RuleError) as refused:
            score(("survivor",), {"u": {"survivor": 3}})
        assert refused.value.code == "agenda_tally_invalid"


class TestThreshold:
    @pytest.mark.parametrize(
        ("agenda", "xp"), [("search_for_archeotech", 3), ("scry_battle_plans", 5)]
    )
    def test_needs_two(self, agenda: str, xp: int) -> None:
        result = score((agenda,), {"a": {agenda: 1}, "b": {agenda: 2}, "c": {agenda: 5}})
        assert (result.for_card("a"), result.for_card("b"), result.for_card("c")) == (
            {},
            {agenda: xp},
            {agenda: xp},
        )


class TestAchieved:
    def test_king_slayer_one_unit(self) -> None:
        assert score(("king_slayer",), {"u": {"king_slayer": 1}}).for_card("u") == {
            "king_slayer": 3
        }
        with pytest.raises(RuleError) as refused:
            score(("king_slayer",), {"u": {"king_slayer": 1}, "v": {"king_slayer": 1}})
        assert refused.value.code == "agenda_too_many_units"

    def test_breakthrough_up_to_three(self) -> None:
        three = {u: {"breakthrough": 1} for u in "abc"}
        assert all(
            score(("breakthrough",), three).for_card(u) == {"breakthrough": 2} for u in "abc"
        )
        with pytest.raises(RuleError):
            score(("breakthrough",), {u: {"breakthrough": 1} for u in "abcd"})

    def test_sentinel_is_yes_or_no(self) -> None:
        with pytest.raises(RuleError) as refused:
            score(("sentinel",), {"u": {"sentinel": 2}})
        assert refused.value.code == "agenda_tally_invalid"
        assert score(("sentinel",), {"u": {"sentinel": 1}}).for_card("u") == {"sentinel": 4}


class TestHighestTally:
    def test_reaper_uses_units_destroyed(self) -> None:
        result = score(("reaper",), {}, destroyed={"a": 2, "b": 3})
        assert (result.for_card("a"), result.for_card("b")) == ({}, {"reaper": 2})

    def test_tie_needs_the_players_pick(self) -> None:
        with pytest.raises(RuleError) as refused:
            score(("reaper",), {}, destroyed={"a": 2, "b": 2})
        assert refused.value.code == "agenda_choice_required"
        picked = score(("reaper",), {}, destroyed={"a": 2, "b": 2}, choices={"reaper": "a"})
        assert picked.for_card("a") == {"reaper": 2}

    def test_lord_of_the_warp_zero_tally_gains_nothing(self) -> None:
        assert score(("lord_of_the_warp",), {"a": {"lord_of_the_warp": 0}}).xp == {}
        assert score(("lord_of_the_warp",), {"a": {"lord_of_the_warp": 3}}).for_card("a") == {
            "lord_of_the_warp": 2
        }


ARCHIVES = {"a": {"recover_mission_archives": 1}, "b": {"recover_mission_archives": 1}}


class TestRecoverMissionArchives:
    def test_roll_at_or_under_combined_tally(self) -> None:
        result = score(
            ("recover_mission_archives",),
            ARCHIVES,
            dice=[2],
            objective_markers=4,
            choices={"recover_mission_archives": "b"},
        )
        assert result.for_card("b") == {"recover_mission_archives": 6}
        assert [d.value for d in result.dice] == [2]

    def test_roll_over_fails(self) -> None:
        result = score(("recover_mission_archives",), ARCHIVES, dice=[3], objective_markers=4)
        assert result.xp == {}

    def test_every_objective_searched_succeeds_without_a_roll(self) -> None:
        result = score(
            ("recover_mission_archives",),
            {"a": {"recover_mission_archives": 2}},
            objective_markers=2,
        )
        assert result.for_card("a") == {"recover_mission_archives": 6}
        assert result.dice == ()

    def test_needs_the_objective_count(self) -> None:
        with pytest.raises(RuleError) as refused:
            score(("recover_mission_archives",), ARCHIVES, dice=[1])
        assert refused.value.code == "objective_markers_required"

    def test_no_tally_no_roll(self) -> None:
        assert score(("recover_mission_archives",), {}).xp == {}


class TestTallyChecks:
    def test_tally_for_an_agenda_not_chosen(self) -> None:
        with pytest.raises(RuleError) as refused:
            score(("assassins",), {"u": {"reaper": 1}})
        assert refused.value.code == "agenda_not_selected"

    def test_negative_tally(self) -> None:
        with pytest.raises(RuleError) as refused:
            score(("assassins",), {"u": {"assassins": -1}})
        assert refused.value.code == "agenda_tally_invalid"


def loss(*keywords: str, warlord: bool = False) -> EnemyLoss:
    return EnemyLoss("Enemy unit", frozenset(keywords), warlord=warlord)


class TestKillBounds:
    """Ruling 43: a kill-counting Agenda's marks, across one side, against the units the
    other side reported destroyed."""

    @pytest.mark.parametrize(
        ("agenda", "marks", "losses", "accepted"),
        [
            # King Slayer: only while the enemy WARLORD is reported destroyed
            ("king_slayer", 1, [loss("CHARACTER", warlord=True)], True),
            ("king_slayer", 1, [loss("CHARACTER")], False),  # the WARLORD lived
            ("king_slayer", 1, [], False),
            # Titan Hunter: enemy TITANIC units
            ("titan_hunter", 1, [loss("VEHICLE", "TITANIC")], True),
            ("titan_hunter", 1, [loss("VEHICLE")], False),
            ("titan_hunter", 2, [loss("TITANIC"), loss("VEHICLE")], False),
            # Witch Hunter: a PSYKER is 1, a PSYKER CHARACTER 3
            ("witch_hunter", 1, [loss("PSYKER")], True),
            ("witch_hunter", 2, [loss("PSYKER")], False),
            ("witch_hunter", 3, [loss("PSYKER", "CHARACTER")], True),
            ("witch_hunter", 4, [loss("PSYKER", "CHARACTER"), loss("PSYKER")], True),
            ("witch_hunter", 1, [loss("CHARACTER")], False),
            # Assassins: CHARACTER units, any spelling of the keyword
            ("assassins", 2, [loss("CHARACTER"), loss("Character")], True),
            ("assassins", 1, [loss("INFANTRY")], False),
            # Priority Target: VEHICLE or MONSTER
            ("priority_target", 2, [loss("VEHICLE"), loss("MONSTER")], True),
            ("priority_target", 1, [loss("INFANTRY")], False),
            # First Strike: any enemy unit destroyed
            ("first_strike", 2, [loss("INFANTRY"), loss("SWARM")], True),
            ("first_strike", 3, [loss("INFANTRY"), loss("SWARM")], False),
            # an Agenda that counts no kills of a kind is not bounded here
            ("cull_the_hordes", 5, [], True),
        ],
    )
    def test_marks_across_the_side_against_the_enemy_losses(
        self, agenda: str, marks: int, losses: list[EnemyLoss], accepted: bool
    ) -> None:
        # the marks split over two units: the bound is for the whole side
        tallies = {"u1": {agenda: marks - marks // 2}, "u2": {agenda: marks // 2}}
        check = [book().agenda(agenda)]
        if accepted:
            check_kill_bounds(check, tallies, losses)
            return
        with pytest.raises(RuleError) as refused:
            check_kill_bounds(check, tallies, losses)
        assert refused.value.code == "agenda_tally_over_enemy_losses"
        assert book().agenda(agenda).name in refused.value.message
