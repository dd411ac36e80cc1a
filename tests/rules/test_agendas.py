"""Agendas (rules: Crusade Mission Pack, Agendas): choosing them for a battle and turning
their tallies into experience points. Expected XP is taken from the rule text, so a wrong
number in seed_data/agendas.yaml fails here."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from app.rules import battle as battle_rules
from app.rules.agendas import AgendaResult, agenda_experience, check_agenda_selection
from app.rules.battle import battle_size
from app.rules.data import Achieved, ArchiveRoll, HighestTally, PerMark, TallySource, Threshold
from app.rules.dice import DieRoll, EnteredDice
from app.rules.errors import RuleError
from tests.factories import book

# Every Agenda in the rules: category, how its XP is worked out, and the numbers involved.
PER_MARK = {  # XP for every mark on the unit's tally
    "assassins": 2,
    "priority_target": 2,
    "titan_hunter": 4,
    "first_strike": 1,
    "cull_the_hordes": 1,
    "survivor": 2,
    "secure_the_area": 1,
    "deploy_vox_relays": 2,
    "witch_hunter": 1,
}
THRESHOLD = {"search_for_archeotech": (2, 3), "scry_battle_plans": (2, 5)}  # (tally, XP)
ACHIEVED = {"king_slayer": 3, "sentinel": 4, "breakthrough": 2}
HIGHEST = {"reaper": 2, "lord_of_the_warp": 2}
ARCHIVE = {"recover_mission_archives": 6}
CATEGORIES = {
    "Purge the Enemy": {"assassins", "priority_target", "titan_hunter", "king_slayer"},
    "No Mercy, No Respite": {"first_strike", "cull_the_hordes", "reaper"},
    "Battlefield Supremacy": {"sentinel", "breakthrough", "survivor"},
    "Shadow Operations": {
        "secure_the_area",
        "search_for_archeotech",
        "deploy_vox_relays",
        "recover_mission_archives",
    },
    "Warpcraft": {"witch_hunter", "lord_of_the_warp", "scry_battle_plans"},
}
ALL_AGENDAS = sorted(set(PER_MARK) | set(THRESHOLD) | set(ACHIEVED) | set(HIGHEST) | set(ARCHIVE))
# One agenda from each category, in category order, for picking valid selections.
ONE_PER_CATEGORY = ["assassins", "reaper", "sentinel", "secure_the_area", "witch_hunter"]


def score(
    ids: Sequence[str],
    tallies: Mapping[str, Mapping[str, int]],
    destroyed: Mapping[str, int] | None = None,
    dice: Sequence[int] = (),
    **kw: Any,
) -> AgendaResult:
    agendas = [book().agenda(i) for i in ids]
    return agenda_experience(agendas, tallies, destroyed or {}, EnteredDice(dice), **kw)


def xp(result: AgendaResult) -> dict[str, dict[str, int]]:
    return {card: dict(per_agenda) for card, per_agenda in result.xp.items()}


def refused(
    code: str, ids: Sequence[str], tallies: Mapping[str, Mapping[str, int]], **kw: Any
) -> None:
    with pytest.raises(RuleError) as error:
        score(ids, tallies, **kw)
    assert error.value.code == code


def select(size: str, ids: Sequence[str]) -> tuple[str, ...]:
    return tuple(a.id for a in check_agenda_selection(battle_size(size, book()), ids, book()))


def refused_selection(code: str, size: str, ids: Sequence[str]) -> None:
    with pytest.raises(RuleError) as error:
        select(size, ids)
    assert error.value.code == code


# --- the table itself -----------------------------------------------------------------------


class TestAgendaTable:
    def test_every_agenda_in_the_rules_is_in_the_table_and_no_other(self) -> None:
        assert sorted(a.id for a in book().agendas) == ALL_AGENDAS

    @pytest.mark.parametrize("agenda_id", ALL_AGENDAS)
    def test_each_agenda_has_its_category(self, agenda_id: str) -> None:
        category = next(c for c, ids in CATEGORIES.items() if agenda_id in ids)
        assert book().agenda(agenda_id).category == category

    @pytest.mark.parametrize("agenda_id", ALL_AGENDAS)
    def test_each_agenda_has_its_formula(self, agenda_id: str) -> None:
        rule = book().agenda(agenda_id).xp
        if agenda_id in PER_MARK:
            assert rule == PerMark(kind="per_mark", xp_per_mark=PER_MARK[agenda_id])
        elif agenda_id in THRESHOLD:
            tally, gained = THRESHOLD[agenda_id]
            assert rule == Threshold(kind="threshold", min_tally=tally, xp=gained)
        elif agenda_id in ACHIEVED:
            assert rule == Achieved(kind="achieved", xp=ACHIEVED[agenda_id])
        elif agenda_id in HIGHEST:
            zero = agenda_id == "reaper"  # only Lord of the Warp's text excludes a 0 tally
            assert rule == HighestTally(
                kind="highest_tally", xp=HIGHEST[agenda_id], zero_counts=zero
            )
        else:
            assert rule == ArchiveRoll(kind="archive_roll", xp=ARCHIVE[agenda_id])

    @pytest.mark.parametrize(
        ("agenda_id", "max_units", "max_tally"),
        [
            ("king_slayer", 1, None),
            ("sentinel", 1, None),
            ("breakthrough", 3, None),
            ("survivor", 1, 2),
            ("deploy_vox_relays", 1, None),
        ],
    )
    def test_agendas_limited_to_some_units_or_marks(
        self, agenda_id: str, max_units: int, max_tally: int | None
    ) -> None:
        agenda = book().agenda(agenda_id)
        assert (agenda.max_units, agenda.max_tally) == (max_units, max_tally)

    def test_only_reaper_counts_enemy_units_destroyed(self) -> None:
        sources = {a.id: a.tally_source for a in book().agendas}
        assert {a for a, s in sources.items() if s == TallySource.UNITS_DESTROYED} == {"reaper"}


# --- choosing Agendas ------------------------------------------------------------------------


SIZES = [("combat_patrol", 1), ("incursion", 2), ("strike_force", 3), ("onslaught", 4)]


class TestAgendaSelection:
    @pytest.mark.parametrize(("size", "count"), SIZES)
    def test_each_battle_size_has_its_number_of_agendas(self, size: str, count: int) -> None:
        picked = ONE_PER_CATEGORY[:count]
        assert select(size, picked) == tuple(picked)

    @pytest.mark.parametrize(("size", "count"), SIZES)
    @pytest.mark.parametrize("wrong", [-1, +1], ids=["one_too_few", "one_too_many"])
    def test_one_agenda_more_or_fewer_is_refused(self, size: str, count: int, wrong: int) -> None:
        refused_selection("agenda_count", size, ONE_PER_CATEGORY[: count + wrong])

    @pytest.mark.parametrize("size", [s for s, _ in SIZES])
    def test_no_agendas_at_all_is_refused(self, size: str) -> None:
        refused_selection("agenda_count", size, [])

    @pytest.mark.parametrize(
        ("first", "second"),
        [pair for ids in CATEGORIES.values() for pair in itertools.combinations(sorted(ids), 2)],
    )
    def test_no_more_than_one_agenda_from_each_category(self, first: str, second: str) -> None:
        refused_selection("agenda_category_repeated", "incursion", [first, second])

    def test_the_same_agenda_twice_is_refused(self) -> None:
        refused_selection("agenda_category_repeated", "incursion", ["reaper", "reaper"])

    def test_a_repeated_category_among_more_agendas_is_refused(self) -> None:
        refused_selection(
            "agenda_category_repeated",
            "onslaught",
            ["assassins", "reaper", "sentinel", "titan_hunter"],
        )

    @pytest.mark.parametrize(("size", "count"), SIZES)
    def test_an_unknown_agenda_is_refused(self, size: str, count: int) -> None:
        picked = [*ONE_PER_CATEGORY[: count - 1], "exterminatus"]
        refused_selection("agenda_unknown", size, picked)

    @pytest.mark.parametrize("agenda_id", ALL_AGENDAS)
    def test_any_agenda_can_be_chosen_alone_for_combat_patrol(self, agenda_id: str) -> None:
        assert select("combat_patrol", [agenda_id]) == (agenda_id,)


# --- scoring -------------------------------------------------------------------------------


class TestPerMark:
    @pytest.mark.parametrize("agenda_id", sorted(PER_MARK))
    @pytest.mark.parametrize("tally", [1, 2])
    def test_each_unit_gains_xp_for_every_mark(self, agenda_id: str, tally: int) -> None:
        result = score([agenda_id], {"u1": {agenda_id: tally}})
        assert xp(result) == {"u1": {agenda_id: tally * PER_MARK[agenda_id]}}
        assert result.dice == ()

    @pytest.mark.parametrize(
        "agenda_id",
        sorted(set(PER_MARK) - {"survivor", "deploy_vox_relays"}),  # one unit only
    )
    def test_every_unit_scores_its_own_tally(self, agenda_id: str) -> None:
        per_mark = PER_MARK[agenda_id]
        result = score(
            [agenda_id], {"u1": {agenda_id: 3}, "u2": {agenda_id: 1}, "u3": {agenda_id: 0}}
        )
        assert xp(result) == {"u1": {agenda_id: 3 * per_mark}, "u2": {agenda_id: per_mark}}

    @pytest.mark.parametrize("agenda_id", sorted(PER_MARK))
    def test_no_marks_no_xp(self, agenda_id: str) -> None:
        assert xp(score([agenda_id], {"u1": {agenda_id: 0}})) == {}
        assert xp(score([agenda_id], {})) == {}

    @pytest.mark.parametrize(("tally", "gained"), [(1, 2), (2, 4)])
    def test_survivor_2_xp_for_surviving_and_2_more_for_not_being_below_half_strength(
        self, tally: int, gained: int
    ) -> None:
        assert xp(score(["survivor"], {"u1": {"survivor": tally}})) == {"u1": {"survivor": gained}}

    def test_witch_hunter_three_marks_for_a_psyker_character(self) -> None:
        # One PSYKER unit (1) and one PSYKER CHARACTER (3) destroyed: tally 4, 4 XP.
        assert xp(score(["witch_hunter"], {"u1": {"witch_hunter": 4}})) == {
            "u1": {"witch_hunter": 4}
        }


class TestThreshold:
    @pytest.mark.parametrize("agenda_id", sorted(THRESHOLD))
    @pytest.mark.parametrize("tally", [0, 1, 2, 3, 5])
    def test_xp_once_the_tally_is_at_least_2(self, agenda_id: str, tally: int) -> None:
        needed, gained = THRESHOLD[agenda_id]
        result = score([agenda_id], {"u1": {agenda_id: tally}})
        expected = {"u1": {agenda_id: gained}} if tally >= needed else {}
        assert xp(result) == expected

    @pytest.mark.parametrize("agenda_id", sorted(THRESHOLD))
    def test_every_unit_reaching_it_scores(self, agenda_id: str) -> None:
        _, gained = THRESHOLD[agenda_id]
        tallies = {"u1": {agenda_id: 2}, "u2": {agenda_id: 4}, "u3": {agenda_id: 1}}
        assert xp(score([agenda_id], tallies)) == {
            "u1": {agenda_id: gained},
            "u2": {agenda_id: gained},
        }


class TestAchieved:
    @pytest.mark.parametrize("agenda_id", sorted(ACHIEVED))
    def test_the_unit_that_achieved_it_gains_the_xp(self, agenda_id: str) -> None:
        result = score([agenda_id], {"u1": {agenda_id: 1}, "u2": {agenda_id: 0}})
        assert xp(result) == {"u1": {agenda_id: ACHIEVED[agenda_id]}}

    @pytest.mark.parametrize("agenda_id", sorted(ACHIEVED))
    def test_an_achieved_tally_is_0_or_1(self, agenda_id: str) -> None:
        refused("agenda_tally_invalid", [agenda_id], {"u1": {agenda_id: 2}})

    def test_breakthrough_up_to_three_units_each_gain_2(self) -> None:
        tallies = {u: {"breakthrough": 1} for u in ("u1", "u2", "u3")}
        assert xp(score(["breakthrough"], tallies)) == {u: {"breakthrough": 2} for u in tallies}

    def test_breakthrough_a_fourth_unit_is_refused(self) -> None:
        tallies = {u: {"breakthrough": 1} for u in ("u1", "u2", "u3", "u4")}
        refused("agenda_too_many_units", ["breakthrough"], tallies)

    @pytest.mark.parametrize("agenda_id", ["king_slayer", "sentinel"])
    def test_only_one_unit_achieves_king_slayer_or_sentinel(self, agenda_id: str) -> None:
        refused("agenda_too_many_units", [agenda_id], {"u1": {agenda_id: 1}, "u2": {agenda_id: 1}})


class TestHighestTally:
    def test_lord_of_the_warp_the_unit_with_the_highest_tally_gains_2(self) -> None:
        tallies = {"u1": {"lord_of_the_warp": 3}, "u2": {"lord_of_the_warp": 1}}
        assert xp(score(["lord_of_the_warp"], tallies)) == {"u1": {"lord_of_the_warp": 2}}

    def test_lord_of_the_warp_a_tally_of_0_gains_nothing(self) -> None:
        tallies = {"u1": {"lord_of_the_warp": 0}, "u2": {"lord_of_the_warp": 0}}
        assert xp(score(["lord_of_the_warp"], tallies)) == {}
        assert xp(score(["lord_of_the_warp"], {})) == {}

    def test_lord_of_the_warp_a_tie_needs_the_players_choice(self) -> None:
        tallies = {
            "u1": {"lord_of_the_warp": 2},
            "u2": {"lord_of_the_warp": 2},
            "u3": {"lord_of_the_warp": 1},
        }
        refused("agenda_choice_required", ["lord_of_the_warp"], tallies)
        refused(
            "agenda_choice_required",
            ["lord_of_the_warp"],
            tallies,
            choices={"lord_of_the_warp": "u3"},
        )
        chosen = score(["lord_of_the_warp"], tallies, choices={"lord_of_the_warp": "u2"})
        assert xp(chosen) == {"u2": {"lord_of_the_warp": 2}}

    def test_lord_of_the_warp_no_tie_ignores_a_choice(self) -> None:
        tallies = {"u1": {"lord_of_the_warp": 3}, "u2": {"lord_of_the_warp": 1}}
        result = score(["lord_of_the_warp"], tallies, choices={"lord_of_the_warp": "u2"})
        assert xp(result) == {"u1": {"lord_of_the_warp": 2}}

    @pytest.mark.parametrize(
        ("destroyed", "winner"),
        [
            ({"u1": 1, "u2": 4, "u3": 2}, "u2"),
            ({"u1": 1}, "u1"),
            ({"u1": 0, "u2": 1}, "u2"),
        ],
    )
    def test_reaper_the_unit_that_destroyed_most_enemy_units_gains_2(
        self, destroyed: dict[str, int], winner: str
    ) -> None:
        result = score(["reaper"], {}, destroyed)
        assert xp(result) == {winner: {"reaper": 2}}

    def test_reaper_counts_units_destroyed_not_any_agenda_tally(self) -> None:
        tallies = {"u1": {"assassins": 5}}
        result = score(["reaper", "assassins"], tallies, {"u1": 1, "u2": 2})
        assert xp(result) == {"u1": {"assassins": 10}, "u2": {"reaper": 2}}

    def test_reaper_nobody_destroyed_anything(self) -> None:
        """Ruling 8: Reaper has no "unless the tally is 0": every unit is tied at 0, so the
        player picks one and it earns the 2 XP (a lone unit needs no pick)."""
        refused("agenda_choice_required", ["reaper"], {}, destroyed={"u1": 0, "u2": 0})
        chosen = score(["reaper"], {}, {"u1": 0, "u2": 0}, choices={"reaper": "u2"})
        assert xp(chosen) == {"u2": {"reaper": 2}}
        assert xp(score(["reaper"], {}, {"u1": 0})) == {"u1": {"reaper": 2}}
        assert xp(score(["reaper"], {}, {})) == {}  # no army, no unit to earn it

    def test_lord_of_the_warp_at_zero_gains_nothing(self) -> None:
        assert xp(score(["lord_of_the_warp"], {"u1": {"lord_of_the_warp": 0}}, {})) == {}

    def test_reaper_a_tie_needs_the_players_choice(self) -> None:
        destroyed = {"u1": 3, "u2": 3, "u3": 1}
        refused("agenda_choice_required", ["reaper"], {}, destroyed=destroyed)
        refused(
            "agenda_choice_required", ["reaper"], {}, destroyed=destroyed, choices={"reaper": "u3"}
        )
        result = score(["reaper"], {}, destroyed, choices={"reaper": "u1"})
        assert xp(result) == {"u1": {"reaper": 2}}


ARCHIVES = "recover_mission_archives"


def archive_tallies(*marks: int) -> dict[str, dict[str, int]]:
    return {f"u{i + 1}": {ARCHIVES: n} for i, n in enumerate(marks)}


class TestArchiveRoll:
    @pytest.mark.parametrize("combined", [1, 2, 3, 4, 5])
    @pytest.mark.parametrize("roll", [1, 2, 3, 4, 5, 6])
    def test_a_d6_equal_to_or_under_the_combined_tally_succeeds(
        self, combined: int, roll: int
    ) -> None:
        result = score([ARCHIVES], archive_tallies(combined), dice=[roll], objective_markers=6)
        assert result.dice == (DieRoll(6, roll),)
        expected = {"u1": {ARCHIVES: 6}} if roll <= combined else {}
        assert xp(result) == expected

    @pytest.mark.parametrize(
        ("marks", "markers"), [((4,), 4), ((1, 1, 2), 4), ((2, 4), 6), ((1,), 1)]
    )
    def test_automatic_when_the_combined_tally_equals_the_objective_markers(
        self, marks: tuple[int, ...], markers: int
    ) -> None:
        dice = EnteredDice([6])
        agenda = book().agenda(ARCHIVES)
        result = agenda_experience(
            [agenda],
            archive_tallies(*marks),
            {},
            dice,
            choices={ARCHIVES: "u1"},
            objective_markers=markers,
        )
        assert result.dice == ()
        assert dice.unused == 1
        assert xp(result) == {"u1": {ARCHIVES: 6}}

    def test_the_tallies_of_all_units_are_combined(self) -> None:
        tallies = archive_tallies(1, 1, 1)
        result = score([ARCHIVES], tallies, dice=[3], choices={ARCHIVES: "u2"}, objective_markers=5)
        assert xp(result) == {"u2": {ARCHIVES: 6}}
        failed = score([ARCHIVES], tallies, dice=[4], choices={ARCHIVES: "u2"}, objective_markers=5)
        assert xp(failed) == {}
        assert failed.dice == (DieRoll(6, 4),)

    def test_only_one_unit_gains_the_xp_and_the_player_picks_it(self) -> None:
        tallies = archive_tallies(1, 1)
        refused("agenda_choice_required", [ARCHIVES], tallies, dice=[1], objective_markers=5)
        result = score([ARCHIVES], tallies, dice=[1], choices={ARCHIVES: "u1"}, objective_markers=5)
        assert xp(result) == {"u1": {ARCHIVES: 6}}

    def test_the_unit_picked_must_have_performed_the_action(self) -> None:
        tallies = {**archive_tallies(1, 1), "u3": {ARCHIVES: 0}}
        refused(
            "agenda_choice_required",
            [ARCHIVES],
            tallies,
            dice=[1],
            choices={ARCHIVES: "u3"},
            objective_markers=5,
        )

    def test_a_single_searching_unit_needs_no_choice(self) -> None:
        result = score([ARCHIVES], archive_tallies(0, 2), dice=[2], objective_markers=4)
        assert xp(result) == {"u2": {ARCHIVES: 6}}

    def test_nothing_searched_means_no_roll_and_no_xp(self) -> None:
        result = score([ARCHIVES], archive_tallies(0, 0), objective_markers=4)
        assert xp(result) == {}
        assert result.dice == ()

    def test_the_number_of_objective_markers_must_be_known(self) -> None:
        refused("objective_markers_required", [ARCHIVES], archive_tallies(1), dice=[1])

    def test_a_mission_without_objective_markers_has_nothing_to_search(self) -> None:
        refused("agenda_tally_above_mission", [ARCHIVES], archive_tallies(1), objective_markers=0)

    def test_the_roll_must_be_entered(self) -> None:
        refused("dice_missing", [ARCHIVES], archive_tallies(1), objective_markers=4)


# --- several Agendas together and the limits ------------------------------------------------


class TestAgendaLimits:
    def test_xp_is_kept_per_unit_per_agenda(self) -> None:
        tallies = {
            "u1": {"assassins": 1, "secure_the_area": 2},
            "u2": {"secure_the_area": 1, "lord_of_the_warp": 3},
        }
        result = score(
            ["assassins", "reaper", "secure_the_area", "lord_of_the_warp"],
            tallies,
            {"u1": 2, "u2": 1},
        )
        assert xp(result) == {
            "u1": {"assassins": 2, "secure_the_area": 2, "reaper": 2},
            "u2": {"secure_the_area": 1, "lord_of_the_warp": 2},
        }
        assert result.for_card("u1") == {"assassins": 2, "secure_the_area": 2, "reaper": 2}
        assert result.for_card("nobody") == {}

    @pytest.mark.parametrize(
        ("agenda_id", "units"),
        [
            ("king_slayer", 2),
            ("sentinel", 2),
            ("survivor", 2),
            ("deploy_vox_relays", 2),
            ("breakthrough", 4),
        ],
    )
    def test_more_units_than_the_agenda_allows_are_refused(
        self, agenda_id: str, units: int
    ) -> None:
        tallies = {f"u{i}": {agenda_id: 1} for i in range(units)}
        refused("agenda_too_many_units", [agenda_id], tallies)

    @pytest.mark.parametrize("agenda_id", ["survivor", "deploy_vox_relays"])
    def test_units_with_a_zero_tally_do_not_count_against_the_limit(self, agenda_id: str) -> None:
        tallies = {"u1": {agenda_id: 1}, "u2": {agenda_id: 0}, "u3": {agenda_id: 0}}
        assert xp(score([agenda_id], tallies)) == {"u1": {agenda_id: PER_MARK[agenda_id]}}

    @pytest.mark.parametrize("tally", [3, 4])
    def test_survivor_tally_is_at_most_2(self, tally: int) -> None:
        refused("agenda_tally_invalid", ["survivor"], {"u1": {"survivor": tally}})

    @pytest.mark.parametrize("agenda_id", ALL_AGENDAS)
    def test_a_negative_tally_is_refused(self, agenda_id: str) -> None:
        refused("agenda_tally_invalid", [agenda_id], {"u1": {agenda_id: -1}})

    @pytest.mark.parametrize("agenda_id", ALL_AGENDAS)
    def test_a_tally_for_an_agenda_not_chosen_is_refused(self, agenda_id: str) -> None:
        chosen = next(a for a in ONE_PER_CATEGORY if a != agenda_id)
        refused("agenda_not_selected", [chosen], {"u1": {agenda_id: 1}})

    def test_no_agendas_means_no_xp(self) -> None:
        result = score([], {}, {"u1": 3})
        assert xp(result) == {}
        assert result.dice == ()


# --- tallies bounded by the mission (issue 20) ---------------------------------------------


class TestTalliesBoundedByTheMission:
    """One mark per objective marker set up, or per battle round where one unit acts a turn."""

    @pytest.mark.parametrize(
        ("agenda", "marks", "markers", "allowed"),
        [
            ("deploy_vox_relays", (4,), 4, True),
            ("deploy_vox_relays", (5,), 4, False),  # only four markers to carry a relay
            ("deploy_vox_relays", (2,), 1, False),  # The Relic: a single marker
            ("deploy_vox_relays", (1,), 0, False),  # Assassinate sets up none
            ("deploy_vox_relays", (6,), 8, False),  # one action a turn: five rounds at most
            ("deploy_vox_relays", (5,), 8, True),
            ("recover_mission_archives", (2, 2), 4, True),
            ("recover_mission_archives", (2, 3), 4, False),  # each marker searched once
            ("secure_the_area", (3, 2), None, True),
            ("secure_the_area", (3, 3), None, False),  # one unit per turn, five turns
            ("scry_battle_plans", (2, 3), None, True),
            ("scry_battle_plans", (4, 2), None, False),
        ],
    )
    def test_the_combined_tally(
        self, agenda: str, marks: tuple[int, ...], markers: int | None, allowed: bool
    ) -> None:
        tallies = {f"u{i}": {agenda: n} for i, n in enumerate(marks)}
        kw: dict[str, Any] = {
            "objective_markers": markers,
            "battle_rounds": 5,
            "choices": {agenda: "u0"},
            "dice": [1],
        }
        if allowed:
            score([agenda], tallies, **kw)
        else:
            refused("agenda_tally_above_mission", [agenda], tallies, **kw)

    def test_search_for_archeotech_once_a_turn_per_unit(self) -> None:
        tallies = {"u1": {"search_for_archeotech": 5}, "u2": {"search_for_archeotech": 5}}
        assert xp(score(["search_for_archeotech"], tallies, battle_rounds=5)) == {
            "u1": {"search_for_archeotech": 3},
            "u2": {"search_for_archeotech": 3},
        }
        refused(
            "agenda_tally_invalid", ["search_for_archeotech"], {"u1": {"search_for_archeotech": 6}}
        )

    def test_an_unknown_bound_is_not_checked(self) -> None:
        tallies = {"u1": {"deploy_vox_relays": 3}}
        assert xp(score(["deploy_vox_relays"], tallies)) == {"u1": {"deploy_vox_relays": 6}}

    @pytest.mark.parametrize(
        ("mission", "markers"),
        [
            ("sweep_and_clear", 4),
            ("supply_drop", 3),
            ("assassinate", 0),
            ("supply_cache", 4),
            ("the_relic", 1),
            ("sabotage", 4),
            ("recon_patrol", 4),
            ("the_ritual", 4),
            ("behind_enemy_lines", 0),
            ("supplies_from_above", 6),
            ("narrow_the_search", 4),
            ("cut_off_the_head", 2),
            ("retrieval", 6),
            ("raze_and_ruin", 6),
            ("ambush", 0),
            ("firestorm", 0),
            ("grand_assault", 8),
            ("field_of_glory", 8),
        ],
    )
    def test_each_mission_sets_up_its_objective_markers(self, mission: str, markers: int) -> None:
        found = book().mission(mission)
        assert battle_rules.objective_markers(found, None) == markers
        assert battle_rules.objective_markers(found, markers) == markers
        with pytest.raises(RuleError) as error:
            battle_rules.objective_markers(found, markers + 1)
        assert error.value.code == "objective_markers_invalid"


# Each mission's objective markers: set up, and the most still on the battlefield at the end.
MISSION_MARKERS = {
    "sweep_and_clear": (4, 4),
    "supply_drop": (3, 1),  # one removed at the start of battle rounds 4 and 5
    "assassinate": (0, 0),
    "supply_cache": (4, 4),
    "the_relic": (1, 1),
    "sabotage": (4, 4),  # removed only as the Attacker sabotages them
    "recon_patrol": (4, 4),
    "the_ritual": (4, 4),
    "behind_enemy_lines": (0, 0),
    "supplies_from_above": (6, 6),
    "narrow_the_search": (4, 4),
    "cut_off_the_head": (2, 2),
    "retrieval": (6, 6),  # removed only as units search them
    "raze_and_ruin": (6, 6),  # removed only as units raze them
    "ambush": (0, 0),
    "firestorm": (0, 0),
    "grand_assault": (8, 8),
    "field_of_glory": (8, 8),
}


class TestTalliesBoundedByTheMissionsEnd:
    """Issue 36 (ruling 48): Deploy Vox-relays scores only relays on markers still on the
    battlefield at the end; Recover Mission Archives completes in the next battle round, so
    a search started in the last one never counts."""

    def markers(self, mission: str) -> dict[str, int]:
        found = book().mission(mission)
        return {
            "objective_markers": found.objective_markers,
            "objective_markers_at_end": found.markers_at_end,
            "battle_rounds": book().numbers.battle_rounds,
        }

    @pytest.mark.parametrize(("mission", "markers"), sorted(MISSION_MARKERS.items()))
    def test_each_mission_says_what_is_left_at_the_end(
        self, mission: str, markers: tuple[int, int]
    ) -> None:
        found = book().mission(mission)
        assert (found.objective_markers, found.markers_at_end) == markers
        assert found.objective_markers_at_end is not None  # the core states it for each

    def test_every_mission_is_covered(self) -> None:
        assert {m.id for m in book().missions} == set(MISSION_MARKERS)

    def test_supply_drop_leaves_one_marker_for_the_relays(self) -> None:
        kw = self.markers("supply_drop")
        tallies = {"u0": {"deploy_vox_relays": 2}}
        with pytest.raises(RuleError) as error:
            score(["deploy_vox_relays"], tallies, **kw)
        assert (error.value.code, error.value.field) == (
            "agenda_tally_above_mission",
            "agenda_tallies",
        )
        assert error.value.unit == "u0"
        assert "at the end of the battle" in error.value.message
        relays = score(["deploy_vox_relays"], {"u0": {"deploy_vox_relays": 1}}, **kw)
        assert xp(relays) == {"u0": {"deploy_vox_relays": 2}}

    def test_markers_left_default_to_those_set_up(self) -> None:
        tallies = {"u0": {"deploy_vox_relays": 3}}
        assert score(["deploy_vox_relays"], tallies, objective_markers=3, battle_rounds=5).xp
        refused("agenda_tally_above_mission", ["deploy_vox_relays"], tallies, objective_markers=2)

    @pytest.mark.parametrize(
        ("mission", "marks", "allowed"),
        [
            ("supplies_from_above", (2, 2), True),
            ("supplies_from_above", (2, 3), False),  # 5 searches: only rounds 1-4 complete
            ("field_of_glory", (1, 1, 1, 1, 1), False),
            ("sweep_and_clear", (4,), True),
            ("the_relic", (2,), False),  # one marker: searched once
            ("supply_drop", (3,), True),  # searched before the markers were removed
        ],
    )
    def test_archives_search_at_most_one_round_fewer_than_the_battle(
        self, mission: str, marks: tuple[int, ...], allowed: bool
    ) -> None:
        tallies = {f"u{i}": {"recover_mission_archives": n} for i, n in enumerate(marks)}
        kw = {**self.markers(mission), "choices": {"recover_mission_archives": "u0"}}
        if allowed:
            score(["recover_mission_archives"], tallies, dice=[1], **kw)
            return
        with pytest.raises(RuleError) as error:
            score(["recover_mission_archives"], tallies, dice=[1], **kw)
        assert error.value.code == "agenda_tally_above_mission"
        assert error.value.unit == f"u{len(marks) - 1}"  # whose tally went over

    def test_a_unit_refusal_names_the_unit(self) -> None:
        with pytest.raises(RuleError) as error:
            score(["survivor"], {"u0": {"survivor": 1}, "u7": {"survivor": 3}})
        assert (error.value.code, error.value.unit) == ("agenda_tally_invalid", "u7")
