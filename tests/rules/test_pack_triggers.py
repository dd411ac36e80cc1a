"""A rule pack's triggers and thresholds in the pure rules (issue 38): counters moved by what
every battle does, outside the Agenda limit, and rewards when a counter rises to a value;
bounded chains, and refusals by path."""

from __future__ import annotations

import pytest

from app.rules import packs, triggers
from app.rules.aftermath import (
    BattleHonourDecision,
    SideReport,
    UnitReport,
    VictorBonusDecision,
    resolve_side,
)
from app.rules.data import FreeRequisitions
from app.rules.dice import EnteredDice
from tests.factories import book, card, character, force

HOST = """
format: crusade-rule-pack/1
id: zeal_host
name: The Zeal Host
version: "1"
counters:
  - {id: zeal, name: Zeal, scope: force, start: 0, min: 0, max: 20}
  - {id: glory, name: Glory, scope: card, start: 0, min: 0, max: 5}
requisitions:
  - id: sermon
    name: Sermon
    cost_rp: 1
    only_as_bonus: true
    summary: The host hears a sermon; it gains 1 Zeal.
    effects: [{kind: change_counter, counter: zeal, amount: 1}]
triggers:
  - {id: marching, name: Marching, when: battle_played, counter: zeal, amount: 1, summary: s}
  - {id: triumph, name: Triumph, when: victory, counter: zeal, amount: 2, summary: s}
  - id: headsman
    name: Headsman
    when: enemy_unit_destroyed
    keywords_any: [CHARACTER]
    counter: zeal
    amount: 3
    summary: s
  - {id: martyrs, name: Martyrs, when: own_unit_destroyed, counter: zeal, amount: 1, summary: s}
  - id: kills
    name: Kills
    when: enemy_unit_destroyed
    counter: glory
    amount: 1
    summary: s
thresholds:
  - id: zealous
    name: Zealous
    counter: zeal
    at: 5
    reset_to: 0
    effects:
      - {kind: change_requisition_points, amount: 1}
      - {kind: free_requisitions, requisitions: [sermon], mode: all, target: force}
    summary: The host's zeal overflows; it gains 1 RP and a free Sermon.
  - id: glorious
    name: Glorious
    counter: glory
    at: 2
    effects: [{kind: add_xp, amount: 6}]
    summary: The unit's deeds are sung; it gains 6 XP.
"""


def played() -> object:
    pack = packs.load(HOST)
    packs.check_against(pack, book())
    return packs.apply(book(), [pack])


def test_every_trigger_counts_what_the_battle_did_and_a_threshold_pays_once() -> None:
    rules = played()
    army = force(card(id="a"), character(id="b"), counters={"zeal": 0})
    report = SideReport(
        roster=("a", "b"),
        agendas=(),
        units=(UnitReport("a", destroyed_ranged=2), UnitReport("b", destroyed=True)),
        won=True,
        enemy_losses=(frozenset({"CHARACTER", "INFANTRY"}), frozenset({"INFANTRY"})),
    )
    after = resolve_side(army, report, rules, EnteredDice([6]))  # b passes its test
    # 1 battle + 2 victory + 3 (one enemy CHARACTER) + 1 (b destroyed) = 7: Zealous at 5
    # pays 1 RP (past the cap of 5: lost, as any RP) and resets Zeal to 0
    assert after.force.counters["zeal"] == 0
    assert after.force.requisition_points == 5
    owed = [d for d in after.pending if isinstance(d, VictorBonusDecision)]
    assert [d.bonus.effect for d in owed] == [
        FreeRequisitions(
            kind="free_requisitions", requisitions=("sermon",), mode="all", target="force"
        )
    ]
    # a's own two kills: Glory 2, Glorious pays 6 XP (a rank: a Battle Honour owed)
    assert after.force.card("a").counters == {"glory": 2}
    assert after.force.card("a").xp == 1 + 6  # the battle's XP and Glorious
    assert any(isinstance(d, BattleHonourDecision) and d.card_id == "a" for d in after.pending)
    # the next battle: Glory stays at 2 (no reset), Glorious does not pay again
    again = resolve_side(after.force, SideReport(roster=("a",), agendas=()), rules, EnteredDice([]))
    assert again.force.card("a").xp == after.force.card("a").xp + 1
    assert again.force.counters["zeal"] == 1


def test_a_chain_of_thresholds_is_bounded() -> None:
    """Five thresholds that each push the next counter: the passes stop at MAX_PASSES."""
    counters = "".join(
        f"  - {{id: c{i}, name: C{i}, scope: force, start: 0, min: 0, max: 9}}\n" for i in range(8)
    )
    chain = "".join(
        f"  - {{id: t{i}, name: T{i}, counter: c{i}, at: 1, summary: s, "
        f"effects: [{{kind: change_counter, counter: c{i + 1}, amount: 1}}]}}\n"
        for i in range(7)
    )
    text = (
        'format: crusade-rule-pack/1\nid: chain\nname: Chain\nversion: "1"\ncounters:\n'
        + counters
        + "triggers:\n  - {id: go, name: Go, when: battle_played, counter: c0, amount: 1, "
        "summary: s}\nthresholds:\n" + chain
    )
    pack = packs.load(text)
    packs.check_against(pack, book())
    rules = packs.apply(book(), [pack])
    # thresholds listed last to first would need one pass each
    reversed_rules = rules.model_copy(update={"thresholds": tuple(reversed(rules.thresholds))})
    after = resolve_side(
        force(card(id="a")), SideReport(roster=("a",), agendas=()), reversed_rules, EnteredDice([])
    )
    reached = [after.force.counters.get(f"c{i}", 0) for i in range(8)]
    assert reached == [1] * (triggers.MAX_PASSES + 1) + [0] * (7 - triggers.MAX_PASSES)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ("counter: zeal, amount: 1, summary: s}", "triggers[0].counter"),
        ("at: 5\n", "thresholds[0].at"),
        ("reset_to: 0", "thresholds[0].reset_to"),
        ("[sermon]", "thresholds[0].effects[1].requisitions"),
        ("amount: 6}]", "thresholds[1].effects[0]"),
    ],
)
def test_a_trigger_or_threshold_that_cannot_work_is_refused_by_path(change: str, path: str) -> None:
    broken = {
        "counter: zeal, amount: 1, summary: s}": "counter: zest, amount: 1, summary: s}",
        "at: 5\n": "at: 50\n",
        "reset_to: 0": "reset_to: 5",
        "[sermon]": "[sermons]",
        "amount: 6}]": "amount: 6}]\n    reset_to: 0",
    }[change]
    text = HOST.replace(change, broken, 1)
    if change == "amount: 6}]":  # add_xp on a force counter's threshold
        text = HOST.replace("    counter: glory\n    at: 2", "    counter: zeal\n    at: 2")
    with pytest.raises(packs.PackError) as refused:
        packs.check_against(packs.load(text), book())
    assert path in [p.path for p in refused.value.problems], refused.value.problems
