"""Rule-table values by id or by the name a player reads (issue 15), and refusals that list
the valid values."""

from __future__ import annotations

import pytest

from app.rules.cards import BattleScar
from app.rules.data import UnitType
from app.rules.dice import SeededDice
from app.rules.errors import RuleError
from app.rules.out_of_action import gain_battle_scar
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, force


class TestNames:
    @pytest.mark.parametrize(
        "given", ["shell_shock", "Shell Shock", "shell shock", " SHELL SHOCK "]
    )
    def test_a_scar_by_id_or_name(self, given: str) -> None:
        table = book().scars.battle_scars[UnitType.OTHER]
        assert table.entry(given).id == "shell_shock"

    def test_a_crusade_relic_by_name(self) -> None:
        assert book().honours.relic("Artificer Weapon").id == "artificer_weapon"

    def test_an_agenda_by_name(self) -> None:
        assert book().agenda("Assassins").id == "assassins"

    def test_a_chosen_scar_is_stored_by_id(self) -> None:
        scarred, scar = gain_battle_scar(card(), book(), SeededDice(0), choice="Shell Shock")
        assert scar.entry_id == "shell_shock" and scarred.scar_ids == {"shell_shock"}

    def test_repair_and_recuperate_by_the_scars_name(self) -> None:
        scarred = card(scars=(BattleScar("fatigued"), BattleScar("shell_shock")))
        order = RequisitionOrder(
            requisition="repair_and_recuperate", card_id="u1", scar="Shell Shock"
        )
        changed, _ = purchase_requisition(force(scarred), order, PurchaseWindow(), book())
        assert changed.card("u1").scar_ids == {"fatigued"}


class TestRefusalsListTheValues:
    def test_an_unknown_scar(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain_battle_scar(card(), book(), SeededDice(0), choice="Tired")
        assert refused.value.code == "battle_scar_unknown"
        assert "shell_shock (Shell Shock)" in refused.value.message

    def test_a_scar_the_unit_does_not_hold(self) -> None:
        order = RequisitionOrder(requisition="repair_and_recuperate", card_id="u1", scar="Fatigued")
        scarred = card(scars=(BattleScar("shell_shock"),))
        with pytest.raises(RuleError) as refused:
            purchase_requisition(force(scarred), order, PurchaseWindow(), book())
        assert refused.value.code == "battle_scar_not_held"
        assert "it has: shell_shock" in refused.value.message
