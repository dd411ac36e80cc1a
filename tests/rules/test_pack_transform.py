"""A card that becomes another datasheet, and one removed with a refund, in the pure rules
(issue 38): what it is changes, what it did stays, within the Supply Limit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.rules import packs
from app.rules.cards import BattleHonour, BattleScar
from app.rules.data import HonourCategory, Rulebook
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, force

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()


def played(text: str = BROOD) -> Rulebook:
    pack = packs.load(text)
    packs.check_against(pack, book())
    return packs.apply(book(), [pack])


def seasoned() -> OrderOfBattle:
    gaunts = card(
        id="g",
        name="Ash Gaunts",
        power_rating=3,
        keywords={"IMPERIUM", "INFANTRY"},
        xp=8,
        rank="blooded",
        wargear="Fleshborers",
        honours=(BattleHonour(HonourCategory.BATTLE_TRAIT, ("ember_hide",), 1),),
        scars=(BattleScar("burned_out"),),
        counters={},
    )
    return force(gaunts, counters={"biomass": 4})


def buy(army: OrderOfBattle, requisition: str, rules: Rulebook) -> OrderOfBattle:
    order = RequisitionOrder(requisition, card_id="g")
    return purchase_requisition(army, order, PurchaseWindow(), rules)[0]


def test_a_transformed_unit_keeps_what_it_did() -> None:
    rules = played()
    before = seasoned().card("g")
    after = buy(seasoned(), "evolve_brood", rules)
    evolved = after.card("g")
    assert (evolved.name, evolved.datasheet, evolved.power_rating) == (
        "Cinder Warriors",
        "Cinder Warriors",
        5,
    )
    assert evolved.keywords == {"IMPERIUM", "INFANTRY", "SYNAPSE"}  # the faction kept
    assert evolved.wargear == "Scything talons, ash spitters"
    kept = ("xp", "rank", "honours", "scars", "tallies", "marked_for_greatness", "id")
    assert all(getattr(evolved, k) == getattr(before, k) for k in kept)
    assert after.counters["biomass"] == 1  # 4 - 3


def test_a_transformation_over_the_supply_limit_is_refused() -> None:
    rules = played()
    army = replace(seasoned(), supply_limit=4)
    with pytest.raises(RuleError) as refused:
        buy(army, "evolve_brood", rules)
    assert refused.value.code == "supply_limit_exceeded"


def test_a_removed_unit_refunds_per_power_up_to_the_max() -> None:
    rules = played()
    after = buy(seasoned(), "reabsorb", rules)
    assert [c.id for c in after.cards] == [] and after.removed_card_ids == {"g"}
    assert after.counters["biomass"] == 4 + 3
    full = buy(replace(seasoned(), counters={"biomass": 29}), "reabsorb", rules)
    assert full.counters["biomass"] == 30


def test_the_eligible_expression_picks_who_may_transform() -> None:
    rules = played()
    poor = replace(seasoned(), counters={"biomass": 2})
    with pytest.raises(RuleError):
        buy(poor, "evolve_brood", rules)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (("refund_counter: biomass", "refund_counter: hunger"), "requisitions[2].effects[0]"),
        (("        name: Cinder Warriors\n", ""), "requisitions[1].effects[1]"),
        (("    target: unit\n    eligible: not CHARACTER", "    target: force"), None),
    ],
)
def test_transformations_are_checked_by_path(change: tuple[str, str], path: str | None) -> None:
    with pytest.raises(packs.PackError) as refused:
        played(BROOD.replace(*change))
    paths = [p.path for p in refused.value.problems]
    assert path is None or any(p.startswith(path) for p in paths), paths
