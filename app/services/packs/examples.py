"""The example packs shipped in ``examples/packs/`` (issue 47): a gallery an organizer starts
from instead of a blank file. Each is read and checked once, on first use, and offered as
its text: attaching one goes through ``campaign_packs.preview`` and ``attach`` exactly as an
uploaded file does."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.config import PROJECT_ROOT
from app.errors import NotFound
from app.rules import packs
from app.rules.data import rulebook
from app.services.packs.campaign_packs import content_names, withdrawn_names

EXAMPLES = PROJECT_ROOT / "examples" / "packs"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExamplePack:
    """One example: where it lives (``mixed/sagas``), what it is and adds, and its text."""

    slug: str
    pack: packs.RulePack
    adds: dict[str, list[str]]  # kind -> names, only the kinds it has
    settings: dict[str, object]  # the campaign settings it sets
    withdraws: dict[str, list[str]]  # the core's entries it takes out, by kind
    repriced: dict[str, int]  # core Requisition's name -> its RP in this pack
    text: str

    @property
    def factions(self) -> tuple[str, ...]:
        return packs.scope_of((), self.pack)


def gallery() -> tuple[ExamplePack, ...]:
    """Every example that reads and checks against the core rules, by its path."""
    return _read_all(EXAMPLES)


def example(slug: str) -> ExamplePack:
    for found in gallery():
        if found.slug == slug:
            return found
    raise NotFound("rule_pack_example_not_found", f"There is no example pack '{slug[:60]}'.")


@cache
def _read_all(folder: Path) -> tuple[ExamplePack, ...]:
    found = []
    for path in sorted(folder.rglob("*.yaml")):
        slug = path.relative_to(folder).with_suffix("").as_posix()
        try:
            found.append(read_example(slug, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, packs.PackError) as error:
            # a broken example is left out, never a 500; the test suite reads every file
            log.error("example pack %s left out of the gallery: %s", slug, error)
    return tuple(found)


def read_example(slug: str, text: str) -> ExamplePack:
    """An example, read and checked against the core rules alone (as in a new campaign)."""
    pack, root = packs.read(text)
    book = rulebook()
    packs.check_against(pack, book, (), root)
    return ExamplePack(
        slug=slug,
        pack=pack,
        adds={kind: names for kind, names in content_names(pack).items() if names},
        settings=pack.settings.model_dump(exclude_none=True),
        withdraws={k: v for k, v in withdrawn_names(pack, book).items() if v},
        repriced={book.requisition(r).name: c for r, c in pack.core.requisition_costs.items()},
        text=text,
    )
