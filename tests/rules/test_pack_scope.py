"""Faction scope of rule packs (issue 47) in the pure rules layer: what a scope may name,
refusals with their line and column, and the rulebook each army plays with; and the
per-unit facts triggers and quest steps may read."""

from __future__ import annotations

import pytest

from app.rules import packs
from app.rules.aftermath import SideReport, UnitReport, resolve_side
from app.rules.data import rulebook
from app.rules.dice import EnteredDice
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, force

HEAD = 'format: crusade-rule-pack/1\nid: scoped\nname: Scoped\nversion: "1"\n'
SISTERS = (
    HEAD
    + """factions: [ADEPTA SORORITAS]
counters:
  - {id: faith, name: Faith, scope: force}
  - {id: sin, name: Sin, scope: force, factions: [ADEPTA SORORITAS]}
agendas:
  - {id: hymn, name: Hymn, summary: s, xp_per_tally: 1}
requisitions:
  - {id: vow, name: Vow, cost_rp: 1, summary: s,
     effects: [{kind: change_counter, counter: faith, amount: 1}]}
triggers:
  - {id: devotion, name: Devotion, when: battle_played, counter: faith, amount: 1, summary: s}
"""
)


def refusal(text: str) -> str:
    pack, root = packs.read(text)
    with pytest.raises(packs.PackError) as refused:
        packs.check_against(pack, rulebook(), [], root)
    return str(refused.value)


class TestWhatAScopeMayName:
    def test_an_unknown_keyword_is_refused_with_its_line_and_column(self) -> None:
        text = SISTERS.replace("[ADEPTA SORORITAS]\n", "[ADEPTA SORORITAS, SISTERS OF SOUP]\n", 1)
        assert refusal(text) == (
            "factions[1] (line 5, column 30): 'SISTERS OF SOUP' is not a faction keyword "
            "this campaign knows (add it with faction_keywords; the known ones: "
            "GET /api/v1/rules/numbers)"
        )

    def test_an_entry_may_only_narrow_its_packs_factions(self) -> None:
        text = SISTERS.replace(
            "summary: s, xp_per_tally: 1}", "summary: s, xp_per_tally: 1, factions: [TYRANIDS]}"
        )
        assert refusal(text).startswith(
            "agendas[0].factions[0] (line 10, column 68): 'TYRANIDS' is outside the pack's "
            "factions (ADEPTA SORORITAS)"
        )

    def test_an_entry_may_not_reach_further_than_the_counter_it_moves(self) -> None:
        text = (
            HEAD
            + """counters: [{id: biomass, name: Biomass, scope: force, factions: [TYRANIDS]}]
triggers:
  - {id: feed, name: Feed, when: battle_played, counter: biomass, amount: 1, summary: s}
"""
        )
        assert "triggers[0] (line 7, column 5): it names counter 'biomass', which only " in (
            refusal(text)
        )

    def test_a_pack_adds_a_crusade_faction_and_keywords_its_scopes_may_name(self) -> None:
        text = (
            HEAD
            + "crusade_factions: [LEAGUES OF VOTANN]\nfaction_keywords: [Greater Thurian League]\n"
            + "factions: [Leagues of Votann, GREATER THURIAN LEAGUE]\n"
        )
        pack, root = packs.read(text)
        packs.check_against(pack, rulebook(), [], root)
        book = packs.apply(rulebook(), [pack])
        assert "LEAGUES OF VOTANN" in book.numbers.crusade_factions
        assert "GREATER THURIAN LEAGUE" in book.numbers.faction_keywords

    def test_a_core_crusade_faction_is_not_added_twice(self) -> None:
        assert "(line 5, column 20): 'Imperium' is already a Crusade faction" in refusal(
            HEAD + "crusade_factions: [Imperium]\n"
        )


class TestTheBookOfAnArmy:
    book = packs.apply(rulebook(), [packs.load(SISTERS)])

    def test_content_takes_its_packs_scope(self) -> None:
        assert {c.id: c.factions for c in self.book.counters} == {
            "faith": ("ADEPTA SORORITAS",),
            "sin": ("ADEPTA SORORITAS",),
        }
        assert self.book.agenda("hymn").factions == ("ADEPTA SORORITAS",)
        assert packs.scoped(self.book)

    def test_an_army_of_the_faction_sees_it_in_any_spelling(self) -> None:
        mine = packs.narrow(self.book, ["IMPERIUM", "Adepta Sororita"])
        assert [c.id for c in mine.counters] == ["faith", "sin"]
        assert [t.id for t in mine.triggers] == ["devotion"]
        assert mine.requisition("vow").pack == "scoped"
        assert len(mine.agendas) == len(self.book.agendas)

    def test_another_army_sees_only_the_core(self) -> None:
        theirs = packs.narrow(self.book, ["IMPERIUM", "SPACE WOLVES"])
        assert (theirs.counters, theirs.triggers) == ((), ())
        assert {a.id for a in theirs.agendas} == {a.id for a in rulebook().agendas}
        with pytest.raises(KeyError):
            theirs.requisition("vow")
        assert theirs.missions == self.book.missions  # a battle is set up for both sides

    def test_an_unscoped_pack_reaches_everyone(self) -> None:
        house = packs.apply(
            rulebook(), [packs.load(SISTERS.replace("factions: [ADEPTA SORORITAS]\n", "", 1))]
        )
        assert [c.id for c in packs.narrow(house, ["ORKS"]).counters] == [
            "faith"
        ]  # sin keeps its own scope
        assert not packs.in_scope(("ADEPTA SORORITAS",), ["ORKS"])
        assert packs.in_scope((), ["ORKS"])


FACTS = (
    HEAD
    + """counters:
  - {id: honour, name: Honour, scope: force, max: 50}
  - {id: grit, name: Grit, scope: card, max: 50}
triggers:
  - {id: marked, name: Marked, when: marked_for_greatness, counter: honour, amount: 10, summary: s}
  - {id: worn, name: Worn, when: below_half_strength, counter: honour, amount: 1, summary: s}
  - {id: shot, name: Shot, when: ranged_kill, counter: grit, amount: 1, summary: s}
  - {id: cut, name: Cut, when: melee_kill, counter: grit, amount: 10, summary: s}
  - {id: mind, name: Mind, when: psychic_kill, counter: honour, amount: 20, summary: s}
"""
)


def test_per_unit_facts_move_counters() -> None:
    """Issue 47's per-unit facts: Marked for Greatness, ending destroyed or below
    Half-strength, and kills by ranged, melee or psychic attacks."""
    rules = packs.apply(book(), [packs.load(FACTS)])
    army = force(card(id="a"), card(id="b"), card(id="c"), counters={"honour": 0})
    report = SideReport(
        roster=("a", "b", "c"),
        agendas=(),
        units=(
            UnitReport("a", destroyed_ranged=2, destroyed_melee=1, marked_for_greatness=True),
            UnitReport("b", destroyed=True),
            UnitReport("c", below_half_strength=True, destroyed_psychic=1),
        ),
    )
    after = resolve_side(army, report, rules, EnteredDice([6]))  # b passes its test
    # 10 (a marked) + 1 (b destroyed) + 1 (c below half) + 20 (c's psychic kill)
    assert after.force.counters["honour"] == 32
    grit = {c.id: c.counters.get("grit", 0) for c in after.force.cards}
    assert grit == {"a": 2 + 10, "b": 0, "c": 0}


def test_a_cost_per_power_rating_of_the_unit() -> None:
    """Issue 47's effects: a requisition that costs more for a bigger unit."""
    text = (
        HEAD
        + """requisitions:
  - {id: anoint, name: Anoint, cost_rp: 1, target: unit, cost_per_power: {rp: 1, per: 5},
     summary: s, effects: [{kind: add_xp, amount: 1}]}
"""
    )
    rules = packs.apply(book(), [packs.load(text)])
    army = force(card(id="a", power_rating=5), card(id="b", power_rating=6))
    for unit, paid in (("a", 2), ("b", 3)):  # 1 + 1 per 5 Power or part of it
        after, bought = purchase_requisition(
            army, RequisitionOrder("anoint", card_id=unit), PurchaseWindow(), rules
        )
        assert (bought.requisition_points_spent, after.requisition_points) == (paid, 5 - paid)
    assert "requisitions[0].cost_per_power (line 6): a cost per Power needs target: unit" in (
        refusal(
            text.replace("target: unit", "target: force").replace("add_xp", "change_supply_limit")
        )
    )
