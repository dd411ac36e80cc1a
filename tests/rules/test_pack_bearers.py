"""Who may bear a rule pack's relic or Warlord Trait (issue 38): its own `eligible`
expression, and a bearer that need not be a CHARACTER where the pack says (`bearer:
any_unit`, a Warlord Knight's); one that says nothing is still for CHARACTERs only, as in
the core rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.rules import packs
from app.rules.data import HonourCategory, Rulebook
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.honours import HonourRequest, gain_battle_honour
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, character, force

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()
RELIC = HonourCategory.CRUSADE_RELIC


def played(text: str = BROOD) -> Rulebook:
    pack = packs.load(text)
    packs.check_against(pack, book())
    return packs.apply(book(), [pack])


def crowned(**overrides: object) -> tuple[str, ...]:
    request = HonourRequest(RELIC, choice=("cinder_crown",))
    return gain_battle_honour(card(**overrides), request, played(), EnteredDice([]))[1].entry_ids


def test_a_beast_that_is_no_character_may_bear_it() -> None:
    assert crowned(keywords={"IMPERIUM", "MONSTER"}) == ("cinder_crown",)


@pytest.mark.parametrize(
    ("keywords", "code"),
    [
        ({"IMPERIUM", "INFANTRY"}, "crusade_relic_not_eligible"),  # no MONSTER, no SYNAPSE
        ({"IMPERIUM", "MONSTER", "CHARACTER"}, "crusade_relic_not_eligible"),
    ],
)
def test_its_expression_says_who_may_not(keywords: set[str], code: str) -> None:
    with pytest.raises(RuleError) as refused:
        crowned(keywords=keywords)
    assert refused.value.code == code


def test_a_relic_that_says_nothing_stays_for_characters() -> None:
    text = BROOD.replace("    bearer: any_unit\n", "").replace(
        "    eligible: (MONSTER or SYNAPSE) and not CHARACTER\n", ""
    )
    request = HonourRequest(RELIC, choice=("cinder_crown",))
    with pytest.raises(RuleError) as refused:
        gain_battle_honour(
            card(keywords={"IMPERIUM", "MONSTER"}), request, played(text), EnteredDice([])
        )
    assert refused.value.code == "crusade_relic_requires_character"
    assert gain_battle_honour(character(), request, played(text), EnteredDice([]))[1].entry_ids


def test_a_bad_bearer_or_expression_is_refused_by_path() -> None:
    for change, path in (
        (("bearer: any_unit", "bearer: anyone"), "relics[0].bearer"),
        (("(MONSTER or SYNAPSE) and not CHARACTER", "counter.nowhere > 1"), "relics[0].eligible"),
    ):
        with pytest.raises(packs.PackError) as refused:
            played(BROOD.replace(*change))
        assert path in [p.path for p in refused.value.problems]


class TestWarlordTraits:
    """A pack's Warlord Trait, through the core's Warlord Trait requisition."""

    def buy(self, trait: str, keywords: set[str]) -> object:
        army = force(card(id="k", keywords=keywords))
        order = RequisitionOrder("warlord_trait", card_id="k", warlord_trait=trait)
        return purchase_requisition(army, order, PurchaseWindow(card_added="k"), played())[0]

    def test_a_beast_that_is_no_character_takes_the_pack_trait(self) -> None:
        army = self.buy("Apex Hunger", {"IMPERIUM", "MONSTER"})
        [upgrade] = army.card("k").upgrades  # type: ignore[attr-defined]
        assert (upgrade.requisition, upgrade.detail) == ("warlord_trait", "Apex Hunger")

    def test_any_other_trait_stays_for_characters(self) -> None:
        with pytest.raises(RuleError) as refused:
            self.buy("Some Core Trait", {"IMPERIUM", "MONSTER"})
        assert refused.value.code == "requisition_target_invalid"

    def test_its_expression_is_checked(self) -> None:
        with pytest.raises(RuleError) as refused:
            self.buy("apex_hunger", {"IMPERIUM", "INFANTRY", "CHARACTER"})
        assert refused.value.code == "warlord_trait_not_eligible"
