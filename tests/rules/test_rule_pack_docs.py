"""Every pack written out in docs/rule-packs.md loads, checks and applies: the guide a group
writes its own pack from never shows one the tracker would refuse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.rules import packs
from tests.factories import book

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "rule-packs.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
EXAMPLES = sorted((GUIDE.parents[1] / "examples" / "packs").rglob("*.yaml"))


def test_the_guide_has_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("text", BLOCKS, ids=[f"example-{n}" for n in range(len(BLOCKS))])
def test_each_example_in_the_guide_is_a_valid_pack(text: str) -> None:
    pack = packs.load(text)
    packs.check_against(pack, book())
    played = packs.apply(book(), [pack])
    assert {a.id for a in pack.agendas} <= {a.id for a in played.agendas}
    assert {r.id for r in pack.requisitions} <= {r.id for r in played.requisitions}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_each_example_pack_file_is_valid_beside_the_core(path: Path) -> None:
    """The packs shipped in examples/packs/ (the guide points organizers at them)."""
    pack = packs.load(path.read_text())
    packs.check_against(pack, book())
    played = packs.apply(book(), [pack])
    assert {r.id for r in pack.requisitions} <= {r.id for r in played.requisitions}
    assert {q.id for q in pack.quests} <= {q.id for q in played.quests}
    assert {t.id for t in pack.tables} <= {t.id for t in played.pack_tables}


def test_the_guide_lists_every_effect_and_setting() -> None:
    text = GUIDE.read_text()
    effects = {
        v["properties"]["kind"]["const"]
        for v in packs.schema()["$defs"].values()
        if "kind" in v.get("properties", {})
    }
    assert all(f"`{kind}`" in text for kind in effects)
    assert all(f"`{name}`" in text for name in packs.Settings.model_fields)


def test_a_raw_unprintable_character_is_refused_as_a_problem_not_an_error() -> None:
    """YAML's reader refuses a raw NUL as it is built, before any node is read (the fuzzer
    found it a 500 on the pack upload): it must be a problem of the document."""
    import pytest

    from app.rules import documents

    with pytest.raises(documents.DocumentError) as refused:
        documents.compose("\x00", "a mapping")
    assert "unacceptable character" in str(refused.value)
