"""Ranks by XP: thresholds, high-water mark, several ranks at once."""

from __future__ import annotations

import pytest

from app.rules.ranks import Promotion, change_xp, rank_for_xp
from tests.factories import book, card


class TestRankThresholds:
    @pytest.mark.parametrize(
        ("xp", "rank"),
        [
            (0, "battle_ready"),
            (5, "battle_ready"),
            (6, "blooded"),
            (15, "blooded"),
            (16, "battle_hardened"),
            (30, "battle_hardened"),
            (31, "heroic"),
            (50, "heroic"),
            (51, "legendary"),
            (400, "legendary"),
        ],
    )
    def test_rank_for_xp_matches_the_table(self, xp: int, rank: str) -> None:
        assert rank_for_xp(xp, book()).id == rank

    def test_rank_names_are_the_rulebooks(self) -> None:
        names = [r.name for r in book().ranks]
        assert names == ["Battle-ready", "Blooded", "Battle-hardened", "Heroic", "Legendary"]


class TestPromotion:
    def test_crossing_one_threshold_promotes_once(self) -> None:
        promoted, gained = change_xp(card(xp=5), 1, book())
        assert promoted.rank == "blooded"
        assert gained == (Promotion("u1", "blooded"),)

    def test_crossing_several_thresholds_gives_one_promotion_per_rank(self) -> None:
        promoted, gained = change_xp(card(xp=4), 30, book())
        assert promoted.xp == 34
        assert promoted.rank == "heroic"
        assert [p.rank for p in gained] == ["blooded", "battle_hardened", "heroic"]

    def test_staying_inside_a_rank_promotes_nothing(self) -> None:
        promoted, gained = change_xp(card(xp=6, rank="blooded"), 9, book())
        assert promoted.rank == "blooded"
        assert gained == ()


class TestRankIsAHighWaterMark:
    def test_devastating_blow_never_lowers_rank(self) -> None:
        lowered, gained = change_xp(card(xp=17, rank="battle_hardened"), -6, book())
        assert lowered.xp == 11
        assert lowered.rank == "battle_hardened"
        assert gained == ()

    def test_regaining_lost_xp_never_promotes_again(self) -> None:
        lowered, _ = change_xp(card(xp=17, rank="battle_hardened"), -6, book())
        regained, gained = change_xp(lowered, 6, book())
        assert regained.xp == 17
        assert gained == ()

    def test_xp_never_goes_below_zero(self) -> None:
        lowered, _ = change_xp(card(xp=2), -6, book())
        assert lowered.xp == 0

    def test_passing_the_old_high_water_mark_promotes_only_to_new_ranks(self) -> None:
        lowered, _ = change_xp(card(xp=20, rank="battle_hardened"), -6, book())
        regained, gained = change_xp(lowered, 20, book())
        assert regained.xp == 34
        assert [p.rank for p in gained] == ["heroic"]
