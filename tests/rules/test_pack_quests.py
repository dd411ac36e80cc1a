"""A rule pack's quests and named choices in the pure rules (issue 38): steps tallied every
battle outside the Agenda limit, one step at most per battle, a reward when done (at once,
or a decision), a penalty on failure; a counter holding one of a list, read by `eligible`."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.rules import eligibility, packs, quests
from app.rules.aftermath import SideReport, UnitReport, VictorBonusDecision, resolve_side
from app.rules.data import Rulebook
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, character, force

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()


def played(text: str = BROOD) -> Rulebook:
    pack = packs.load(text)
    packs.check_against(pack, book())
    return packs.apply(book(), [pack])


def battle(army: OrderOfBattle, rules: Rulebook, **report: object) -> OrderOfBattle:
    side = SideReport(roster=tuple(c.id for c in army.cards), agendas=(), **report)  # type: ignore[arg-type]
    return resolve_side(army, side, rules, EnteredDice([6, 6, 6])).force


def feast_begun(rules: Rulebook) -> OrderOfBattle:
    army = force(card(id="a"), counters={})
    bought, _ = purchase_requisition(army, RequisitionOrder("crave_flesh"), PurchaseWindow(), rules)
    return bought


class TestNamedChoice:
    def test_a_requisition_sets_the_choice_and_eligible_reads_it(self) -> None:
        rules = played()
        army = feast_begun(rules)
        assert army.counters["hunger"] == 1  # flesh, the first choice
        assert eligibility.meets("counter.hunger == flesh", None, army.counters, rules)
        assert not eligibility.meets("counter.hunger == metal", None, army.counters, rules)
        # the requisition's own eligible (counter.hunger != flesh) now refuses it again
        with pytest.raises(RuleError) as again:
            purchase_requisition(army, RequisitionOrder("crave_flesh"), PurchaseWindow(), rules)
        assert again.value.code in ("requisition_not_eligible", "quest_already_begun")

    def test_no_choice_yet_is_none_of_them(self) -> None:
        rules = played()
        assert not eligibility.meets("counter.hunger == flesh", None, {}, rules)
        assert eligibility.meets("counter.hunger != flesh", None, {}, rules)

    @pytest.mark.parametrize("text", ["counter.hunger > flesh", "counter.hunger == Flesh"])
    def test_a_choice_is_compared_with_equals_only(self, text: str) -> None:
        with pytest.raises(eligibility.ExpressionError):
            eligibility.parse(text)


class TestForceQuest:
    def test_three_steps_one_per_battle_then_the_reward(self) -> None:
        rules = played()
        army = feast_begun(rules)
        [feast] = [q for q in rules.quests if q.id == "great_feast"]
        assert quests.status(army.counters, feast) == 1
        four = tuple(frozenset({"INFANTRY"}) for _ in range(4))
        # four kills: step 1 (3) done; the fourth is not carried to step 2
        army = battle(army, rules, enemy_losses=four)
        assert (quests.status(army.counters, feast), army.counters[quests.tally_key(feast.id)]) == (
            2,
            0,
        )
        army = battle(army, rules)  # Gorge: 1 of 2
        assert army.counters[quests.tally_key(feast.id)] == 1
        army = battle(army, rules)  # Gorge: 2 of 2, step 3
        assert quests.status(army.counters, feast) == 3
        rp = army.requisition_points
        army = battle(army, rules, enemy_losses=(frozenset({"CHARACTER"}),))
        assert quests.status(army.counters, feast) == quests.done(feast)
        assert army.counters["biomass"] == 5
        assert army.requisition_points == min(rp + 1 + 1, 5)  # the battle's RP and the reward
        settled = battle(army, rules, enemy_losses=four)
        assert settled.counters["biomass"] == 5  # a quest done pays once

    def test_a_quest_is_begun_once(self) -> None:
        rules = played()
        army = feast_begun(rules)
        [feast] = [q for q in rules.quests if q.id == "great_feast"]
        with pytest.raises(RuleError) as again:
            quests.start(army, None, feast, rules)
        assert again.value.code == "quest_already_begun"


class TestCardQuest:
    def test_an_automatic_quest_begins_for_a_unit_that_may_take_it(self) -> None:
        rules = played()
        army = force(card(id="a"), character(id="b"))
        after = battle(army, rules, units=(UnitReport("b", destroyed_melee=1),))
        assert quests.status(after.card("a").counters, rules.quests[-1]) == 0  # no CHARACTER
        assert quests.status(after.card("b").counters, rules.quests[-1]) == 2  # First Kill done

    def test_done_it_pays_xp_and_owes_a_free_requisition(self) -> None:
        rules = played()
        army = force(character(id="b"))
        army = battle(army, rules, units=(UnitReport("b", destroyed_melee=1),))
        army = battle(army, rules)
        xp = army.card("b").xp
        side = SideReport(roster=("b",), agendas=())
        after = resolve_side(army, side, rules, EnteredDice([]))
        assert quests.status(after.force.card("b").counters, rules.quests[-1]) == 3  # done
        assert after.force.card("b").xp == xp + 1 + 3  # the battle's XP and the reward
        owed = [d for d in after.pending if isinstance(d, VictorBonusDecision)]
        assert [d.threshold.id for d in owed if d.threshold] == ["alpha_trial", "alpha_trial"]
        assert [d.bonus.effect.requisitions for d in owed] == [  # type: ignore[union-attr]
            ("spawn_brood",),
            ("ascend_alpha",),
        ]

    def test_slain_first_it_fails_and_the_penalty_applies(self) -> None:
        rules = played()
        army = force(character(id="b"), counters={"biomass": 3})
        after = battle(army, rules, units=(UnitReport("b", destroyed=True),))
        assert quests.status(after.card("b").counters, rules.quests[-1]) == quests.FAILED
        assert after.counters["biomass"] == 1
        again = battle(after, rules, units=(UnitReport("b", destroyed_melee=1),))
        assert quests.status(again.card("b").counters, rules.quests[-1]) == quests.FAILED

    def test_an_exclusive_quest_waits_for_the_other(self) -> None:
        text = BROOD.replace(
            "quests:\n",
            "quests:\n  - id: second_trial\n    name: Second Trial\n    scope: card\n"
            "    summary: s\n    steps: [{name: One, when: battle_played}]\n",
        )
        rules = played(text)
        army = battle(force(character(id="b")), rules)
        second = rules.quest("second_trial")
        assert second is not None
        with pytest.raises(RuleError) as refused:
            quests.start(army, "b", second, rules)
        assert refused.value.code == "quest_exclusive"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (("value: flesh}", "value: blood}"), "requisitions[0].effects[0].value"),
        (("quest: great_feast}", "quest: nowhere}"), "requisitions[0].effects[1].quest"),
        (("counter.hunger != flesh", "counter.hunger != blood"), "requisitions[0].eligible"),
        (("    fails_when: own_unit_destroyed\n", ""), "quests[1].penalty"),
        (
            ("eligible: CHARACTER\n    automatic", "eligible: counter.no > 1\n    automatic"),
            "quests[1].eligible",
        ),
        (("scope: card\n    eligible: CHARACTER", "scope: force\n    eligible: CHARACTER"), None),
        (("{kind: add_xp, amount: 3}", "{kind: add_xp, amount: 3}"), "ok"),
    ],
)
def test_quests_and_choices_are_checked_by_path(change: tuple[str, str], path: str | None) -> None:
    text = BROOD.replace(*change)
    if path == "ok":
        played(text)
        return
    with pytest.raises(packs.PackError) as refused:
        played(text)
    paths = [p.path for p in refused.value.problems]
    assert path is None or path in paths, paths


def test_a_quest_has_at_most_10_steps() -> None:
    steps = "".join("      - {name: S, when: battle_played}\n" for _ in range(11))
    text = BROOD.replace(
        "      - {name: First Kill, when: enemy_unit_destroyed, count: 1}\n", steps
    )
    with pytest.raises(packs.PackError) as refused:
        played(text)
    assert any(p.path == "quests[1].steps" for p in refused.value.problems)


RUSTWAKE = (
    Path(__file__).resolve().parents[2] / "examples/packs/rustwake-reclaimers.yaml"
).read_text()
MORE_COUNTERS = RUSTWAKE.replace(
    "requisitions:\n",
    "  - {id: grit, name: Grit, scope: card, start: 0, min: 0, max: 5}\n"
    "  - {id: creed, name: Creed, scope: force, choices: [rust, iron]}\n"
    "requisitions:\n",
    1,
)
THEN = "\n      - {kind: free_requisitions"
HAUL_RP = "{kind: change_requisition_points, amount: 1}" + THEN
LONG_HAUL_SALVAGE = "{kind: change_counter, counter: salvage, amount: 4}"


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (
            (
                HAUL_RP,
                "{kind: change_counter, counter: nowhere, amount: 1}" + THEN,
            ),
            "thresholds[0].effects[0].counter",
            "no counter 'nowhere' in this pack",
        ),
        (
            (
                HAUL_RP,
                "{kind: change_counter, counter: grit, amount: 1}" + THEN,
            ),
            "thresholds[0].effects[0]",
            "a force counter's threshold moves no unit's counter",
        ),
        (
            (HAUL_RP, "{kind: add_xp, amount: 1}" + THEN),
            "thresholds[0].effects[0]",
            "add_xp needs a unit: the threshold of a card counter",
        ),
        (
            ("requisitions: [scrap_walker]", "requisitions: [nowhere]"),
            "thresholds[0].effects[1].requisitions",
            "no requisition 'nowhere'",
        ),
        (
            (
                HAUL_RP,
                "{kind: change_counter, counter: creed, amount: 1}" + THEN,
            ),
            None,  # a threshold may move a named choice, as it could before the checks met
            "",
        ),
        (
            (LONG_HAUL_SALVAGE, "{kind: change_counter, counter: nowhere, amount: 4}"),
            "quests[0].reward[0].counter",
            "no counter 'nowhere' in this pack",
        ),
        (
            (LONG_HAUL_SALVAGE, "{kind: change_counter, counter: creed, amount: 1}"),
            "quests[0].reward[0]",
            "a named choice is set by set_choice",
        ),
        (
            (LONG_HAUL_SALVAGE, "{kind: change_counter, counter: grit, amount: 1}"),
            "quests[0].reward[0]",
            "a force quest moves no unit's counter",
        ),
        (
            (LONG_HAUL_SALVAGE, "{kind: add_xp, amount: 2}"),
            "quests[0].reward[0]",
            "add_xp needs a unit: a card quest",
        ),
    ],
)
def test_rewards_of_thresholds_and_quests_are_checked_alike(
    change: tuple[str, str], path: str | None, message: str
) -> None:
    """One check for a threshold's effects and a quest's reward or penalty (issue 38), each
    refusal in its own words at its own path; only a quest refuses to move a named choice."""
    text = MORE_COUNTERS.replace(*change)
    assert text != MORE_COUNTERS
    if path is None:
        played(text)
        return
    with pytest.raises(packs.PackError) as refused:
        played(text)
    found = [(p.path, p.message) for p in refused.value.problems]
    assert (path, message) in found, found
