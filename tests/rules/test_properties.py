"""Invariants that hold whatever happens: checked over random battles and histories."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from app.rules.aftermath import (
    BattleHonourDecision,
    BattleScarDecision,
    OutOfActionDecision,
    SideReport,
    UnitReport,
    answer_battle_honour,
    answer_battle_scar,
    answer_out_of_action,
    resolve_side,
)
from app.rules.cards import CrusadeCard
from app.rules.data import HonourCategory
from app.rules.dice import SeededDice
from app.rules.errors import RuleError
from app.rules.honours import HonourRequest, gain_battle_honour
from app.rules.order_of_battle import (
    OrderOfBattle,
    gain_requisition_points,
    spend_requisition_points,
)
from app.rules.out_of_action import gain_battle_scar, remove_battle_scar
from app.rules.ranks import change_xp, rank_for_xp, rank_index
from tests.factories import book, card, character, force

TRAIT = HonourRequest(HonourCategory.BATTLE_TRAIT)


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 7)), max_size=40))
def test_requisition_points_stay_between_zero_and_five(steps: list[tuple[bool, int]]) -> None:
    army = force(requisition_points=5)
    for gain, amount in steps:
        with contextlib.suppress(RuleError):
            army = (
                gain_requisition_points(army, amount, book())
                if gain
                else spend_requisition_points(army, amount, "x")
            )
        assert 0 <= army.requisition_points <= 5


@given(st.lists(st.integers(-6, 20), max_size=40))
def test_rank_is_monotone_and_the_high_water_mark(deltas: list[int]) -> None:
    unit, best = card(), 0
    for delta in deltas:
        before = rank_index(unit.rank, book())
        unit, promotions = change_xp(unit, delta, book())
        after = rank_index(unit.rank, book())
        best = max(best, rank_index(rank_for_xp(unit.xp, book()).id, book()))
        assert after >= before
        assert after == best
        assert len(promotions) == after - before
        assert unit.xp >= 0


@st.composite
def histories(draw: st.DrawFn) -> tuple[CrusadeCard, list[tuple[str, int]]]:
    unit = character(
        power_rating=draw(st.integers(1, 20)),
        keywords={"IMPERIUM", "CHARACTER", "INFANTRY", "PSYKER"},
        rank=draw(st.sampled_from(["battle_ready", "heroic", "legendary"])),
    )
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["trait", "fortitude", "relic", "scar", "heal", "grow"]),
                st.integers(0, 1000),
            ),
            max_size=30,
        )
    )
    return unit, ops


RELICS = [
    "laurels_of_victory",
    "master_crafted_armour",
    "blackstone_shard_amulet",
    "null_field_disruptor",
]


@settings(max_examples=150)
@given(histories())
def test_caps_and_crusade_points_equal_the_stored_facts(
    history: tuple[CrusadeCard, list[tuple[str, int]]],
) -> None:
    unit, ops = history
    expected = 0
    for op, seed in ops:
        dice = SeededDice(seed)
        try:
            if op == "trait":
                unit, _ = gain_battle_honour(unit, TRAIT, book(), dice)
                expected += 1 if unit.power_rating <= 10 else 2
            elif op == "fortitude":
                unit, _ = gain_battle_honour(
                    unit, HonourRequest(HonourCategory.PSYCHIC_FORTITUDE), book(), dice
                )
                expected += 1 if unit.power_rating <= 10 else 2
            elif op == "relic":
                relic = RELICS[seed % len(RELICS)]
                request = HonourRequest(HonourCategory.CRUSADE_RELIC, choice=(relic,))
                taken = {i for h in unit.honours for i in h.entry_ids}
                unit, _honour = gain_battle_honour(
                    unit, request, book(), dice, relics_in_order_of_battle=taken
                )
                extra = {"blackstone_shard_amulet": 1, "null_field_disruptor": 2}.get(relic, 0)
                expected += (1 if unit.power_rating <= 10 else 2) + extra
            elif op == "scar":
                unit, _ = gain_battle_scar(unit, book(), dice)
                expected -= 1
            elif op == "heal" and unit.scars:
                unit = remove_battle_scar(unit, unit.scars[seed % len(unit.scars)].entry_id)
                expected += 1
            elif op == "grow":
                unit = replace(unit, power_rating=1 + seed % 20)
        except RuleError:
            pass
        assert len(unit.honours) <= 6
        assert len(unit.scars) <= 6
        assert len(unit.scar_ids) == len(unit.scars)
        assert unit.crusade_points == expected


unit_reports = st.builds(
    UnitReport,
    card_id=st.sampled_from(["a", "b", "c"]),
    destroyed=st.booleans(),
    destroyed_psychic=st.integers(0, 2),
    destroyed_ranged=st.integers(0, 3),
    destroyed_melee=st.integers(0, 3),
)


def _settle(army: OrderOfBattle, pending: tuple[object, ...], seed: int) -> OrderOfBattle:
    dice = SeededDice(seed)
    queue = list(pending)
    while queue:
        decision = queue.pop(0)
        if isinstance(decision, OutOfActionDecision):
            choice = decision.options[seed % len(decision.options)]
            settled = answer_out_of_action(
                army, decision.card_id, decision.gain, choice, book(), dice
            )
            army = settled.force
            queue.extend(settled.pending)
        elif isinstance(decision, BattleScarDecision):
            army = answer_battle_scar(army, decision.card_id, book(), dice)
        elif isinstance(decision, BattleHonourDecision) and decision.card_id:
            try:
                army = answer_battle_honour(army, decision, TRAIT, book(), dice)
            except RuleError as exhausted:
                assert exhausted.code == "table_exhausted"
    return army


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(unit_reports, max_size=3, unique_by=lambda u: u.card_id),
            st.booleans(),
            st.integers(0, 10_000),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_a_campaign_keeps_every_invariant(
    battles: list[tuple[list[UnitReport], bool, int]],
) -> None:
    army = force(
        card(id="a"), card(id="b", power_rating=12), character(id="c"), requisition_points=5
    )
    ranks = {c.id: 0 for c in army.cards}
    for played, (units, won, seed) in enumerate(battles, start=1):
        report = SideReport(roster=("a", "b", "c"), agendas=(), units=tuple(units), won=won)
        after = resolve_side(army, report, book(), SeededDice(seed))
        army = _settle(after.force, after.pending, seed)
        assert army.battle_tally == played
        assert 0 <= army.requisition_points <= 5
        for unit in army.cards:
            assert len(unit.honours) <= 6 and len(unit.scars) <= 6
            assert rank_index(unit.rank, book()) >= ranks[unit.id]
            ranks[unit.id] = rank_index(unit.rank, book())
            facts = sum(h.crusade_points for h in unit.honours) + sum(
                u.crusade_points for u in unit.upgrades
            )
            assert unit.crusade_points == facts - len(unit.scars)
            assert unit.tallies.battles_played == played
