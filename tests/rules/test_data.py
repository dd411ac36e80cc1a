"""The rule tables in seed_data/ load, validate, and hold the rulebook's facts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from app.rules.data import SEED_DATA, HonourCategory, UnitType, WeaponType, load_rulebook
from app.rules.requisitions import APPLY
from tests.factories import book


class TestTablesLoad:
    def test_counts(self) -> None:
        rules = book()
        assert all(len(t.entries) == 6 for t in rules.honours.battle_traits.values())
        assert all(len(t.entries) == 6 for t in rules.scars.battle_scars.values())
        assert all(len(t.entries) == 6 for t in rules.honours.weapon_enhancements.values())
        assert len(rules.honours.psychic_fortitudes.entries) == 3
        assert len(rules.honours.crusade_relics) == 12
        assert len(rules.requisitions) == 8
        assert len(rules.agendas) == 17
        assert len(rules.missions) == 18

    def test_every_requisition_has_mechanics(self) -> None:
        assert set(APPLY) == {r.id for r in book().requisitions}

    def test_relic_categories(self) -> None:
        relics = book().honours.crusade_relics
        by_category = {
            c: [r.name for r in relics if r.category == c]
            for c in ("artificer", "antiquity", "legendary")
        }
        assert len(by_category["artificer"]) == 6
        assert sorted(by_category["legendary"]) == ["Null-field Disruptor", "Vortex Grenade"]
        assert book().honours.relic("conversion_field").keywords_any == ("INFANTRY",)

    @pytest.mark.parametrize(
        ("table", "roll", "name"),
        [
            (lambda b: b.honours.battle_traits[UnitType.CHARACTER], 6, "Tactical Experience"),
            (lambda b: b.honours.battle_traits[UnitType.VEHICLE], 5, "Repair Systems"),
            (lambda b: b.honours.battle_traits[UnitType.MONSTER], 1, "Unstoppable"),
            (lambda b: b.honours.battle_traits[UnitType.OTHER], 6, "Battle-tested"),
            (lambda b: b.honours.weapon_enhancements[WeaponType.RANGED], 6, "Master-worked"),
            (lambda b: b.honours.weapon_enhancements[WeaponType.MELEE], 5, "Shredder"),
            (lambda b: b.honours.psychic_fortitudes, 4, "Adamantium Will"),
            (lambda b: b.scars.battle_scars[UnitType.CHARACTER], 2, "Blind in one Eye"),
            (lambda b: b.scars.battle_scars[UnitType.OTHER], 6, "Mark of Shame"),
        ],
    )
    def test_names_by_dice_result(self, table, roll: int, name: str) -> None:  # type: ignore[no-untyped-def]
        assert table(book()).entry_for(roll).name == name

    def test_agenda_categories(self) -> None:
        categories = {a.category for a in book().agendas}
        assert categories == {
            "Purge the Enemy",
            "No Mercy, No Respite",
            "Battlefield Supremacy",
            "Shadow Operations",
            "Warpcraft",
        }

    def test_honour_categories_are_four(self) -> None:
        assert len(HonourCategory) == 4


def _broken_copy(tmp_path: Path, name: str, change) -> Path:  # type: ignore[no-untyped-def]
    target = tmp_path / "seed"
    shutil.copytree(SEED_DATA, target)
    data = yaml.safe_load((target / name).read_text())
    change(data)
    (target / name).write_text(yaml.safe_dump(data))
    return target


class TestTablesAreValidated:
    def test_a_table_with_a_gap_is_refused(self, tmp_path: Path) -> None:
        def drop_a_row(data):  # type: ignore[no-untyped-def]
            data["battle_scars"]["other"]["entries"].pop()

        with pytest.raises(ValueError, match=r"seed_data/battle_scars\.yaml: .*cover"):
            load_rulebook(_broken_copy(tmp_path, "battle_scars.yaml", drop_a_row))

    def test_a_mission_table_with_a_gap_is_refused(self, tmp_path: Path) -> None:
        def drop_mission(data):  # type: ignore[no-untyped-def]
            data["missions"] = [m for m in data["missions"] if m["id"] != "ambush"]

        with pytest.raises(ValueError, match="strike_force"):
            load_rulebook(_broken_copy(tmp_path, "missions.yaml", drop_mission))

    def test_ranks_out_of_order_are_refused(self, tmp_path: Path) -> None:
        def swap(data):  # type: ignore[no-untyped-def]
            data["ranks"][1]["min_xp"] = 40

        with pytest.raises(ValueError, match="out of order"):
            load_rulebook(_broken_copy(tmp_path, "ranks.yaml", swap))

    def test_unknown_fields_are_refused(self, tmp_path: Path) -> None:
        def typo(data):  # type: ignore[no-untyped-def]
            data["requisitions"][0]["cost"] = 1

        with pytest.raises(ValueError) as refused:
            load_rulebook(_broken_copy(tmp_path, "requisitions.yaml", typo))
        assert "seed_data/requisitions.yaml: requisitions[0].cost (line " in str(refused.value)

    def test_the_core_is_read_like_a_rule_pack(self, tmp_path: Path) -> None:
        """The reader packs use (issue 22, "pack 0"): a key given twice, which plain YAML
        would keep silently, and an alias are refused with the file, path and line."""
        target = tmp_path / "seed"
        shutil.copytree(SEED_DATA, target)
        ranks = target / "ranks.yaml"
        ranks.write_text(ranks.read_text() + "ranks: []\n")
        with pytest.raises(
            ValueError, match=r"seed_data/ranks.yaml: ranks \(line \d+\): given twice"
        ):
            load_rulebook(target)
        shutil.copy(SEED_DATA / "ranks.yaml", ranks)
        sizes = target / "battle_sizes.yaml"
        sizes.write_text("base: &b {agendas: 1}\nagain: *b\n" + sizes.read_text())
        with pytest.raises(ValueError, match="anchors and aliases"):
            load_rulebook(target)

    def test_loaded_tables_are_frozen(self) -> None:
        with pytest.raises(ValidationError):
            book().ranks[0].min_xp = 3  # type: ignore[misc]


class TestMissionMarkersAreValidated:
    """Issue 36: each core mission states the objective markers left at the end, never more
    than it sets up."""

    def test_more_left_than_set_up_is_refused(self, tmp_path: Path) -> None:
        def grow(data):  # type: ignore[no-untyped-def]
            data["missions"][1]["objective_markers_at_end"] = 4  # Supply Drop sets up 3

        with pytest.raises(ValueError, match="objective_markers_at_end"):
            load_rulebook(_broken_copy(tmp_path, "missions.yaml", grow))

    def test_a_core_mission_must_say_it(self, tmp_path: Path) -> None:
        def forget(data):  # type: ignore[no-untyped-def]
            del data["missions"][0]["objective_markers_at_end"]

        with pytest.raises(ValueError, match="sweep_and_clear: objective_markers_at_end"):
            load_rulebook(_broken_copy(tmp_path, "missions.yaml", forget))
