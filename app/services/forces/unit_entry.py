"""Entering units by hand: several at once in one transaction (all or nothing), the add-unit
form's view (keyword chips, lines, a copy of a unit), for the website and the JSON API."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from sqlmodel import Session

from app.db.models import Campaign, Card
from app.errors import DomainError
from app.rules.data import Rulebook, rulebook
from app.rules.errors import RuleError
from app.rules.keywords import correct_keywords, keywords_fixed, rule_keywords
from app.rules.order_of_battle import link_split_unit, split_unit_fixed
from app.rules.requisitions import RequisitionOrder
from app.services.fields import request_fields
from app.services.forces import forces, requisitions
from app.services.forces.convert import card_value, write_card
from app.services.forces.forces import ForceView
from app.services.packs import rulebooks

MAX_UNITS = 30  # units in one request


@dataclass(frozen=True)
class NewUnit:
    """A unit to add: its card's details (``forces.add_card``'s) and the Requisitions
    bought as it joins (their ``card_id`` is filled in once the card exists)."""

    details: dict[str, Any]
    requisitions: list[RequisitionOrder] = field(default_factory=list)


def add_units(
    session: Session, *, force_id: int, units: list[NewUnit], labels: list[str] | None = None
) -> list[Card]:
    """Add the units in order, each checked exactly as one added alone (Supply Limit,
    faction keyword, its Requisitions' timing, target and RP) against the Order of Battle
    as it grows. The caller's transaction holds them all: a refusal leaves it to be rolled
    back, so none is added. A refusal names the unit (``labels``, else "Unit 3 (name)") and
    carries its request path (``units[2].power_rating``); a label "" adds no name."""
    if not units:
        raise RuleError("units_missing", "Give at least one unit to add.", field="units")
    if len(units) > MAX_UNITS:
        raise RuleError(
            "units_too_many", f"At most {MAX_UNITS} units can be added at once.", field="units"
        )
    rows = []
    for index, unit in enumerate(units):
        label = labels[index] if labels else _label(index, unit)
        try:
            with request_fields({}, f"units[{index}]."):
                row = forces.add_card(session, force_id=force_id, **unit.details)
            assert row.id is not None
            for number, order in enumerate(unit.requisitions):
                with request_fields({}, f"units[{index}].requisitions[{number}]."):
                    bought = replace(order, card_id=str(row.id))
                    requisitions.purchase(
                        session, force_id=force_id, order=bought, card_added=row.id
                    )
        except RuleError as refused:
            if label:
                refused.message = f"{label}: {refused.message}"
                refused.args = (refused.message,)
            if refused.path is None:
                refused.path = f"units[{index}]"
            raise
        rows.append(row)
    for row in rows:
        session.refresh(row)
    return rows


def edit_card(
    session: Session,
    *,
    card_id: int,
    name: str | None = None,
    narrative: str | None = None,
    keywords: list[str] | None = None,
    split_unit: str | None = None,
) -> Card:
    """A card's name and narrative (any time), its split unit ("" leaves it) while that
    unit's cards have not fought (docs/rulings.md, 50), and its keywords corrected while the
    unit is as it joined and no battle of its force is under way (docs/rulings.md, 40)."""
    row = forces.update_card(session, card_id=card_id, name=name, narrative=narrative)
    if split_unit is not None and (split_unit.strip() or None) != row.split_unit:
        view = forces.load_force(session, row.force_id)
        mustered = forces.mustered_cards(session, row.force_id)
        linked = link_split_unit(view.value, str(row.id), split_unit, mustered=mustered)
        row.split_unit = linked.card(str(row.id)).split_unit
        session.add(row)
    if keywords is not None:
        view = forces.load_force(session, row.force_id)
        during = requisitions.purchase_window(session, row.force_id).during_battle
        value = next(c for c in view.value.cards if c.id == str(row.id))
        corrected = correct_keywords(view.value, value, keywords, rulebook(), during_battle=during)
        write_card(row, corrected)
        session.add(row)
    return row


@dataclass(frozen=True)
class KeywordEdit:
    """The card page's keyword chips: those ticked, and the other keywords as text."""

    chips: list[str]
    ticked: list[str]
    others: str


def split_unit_lock(session: Session, row: Card) -> str | None:
    """Why the card page cannot change the card's split unit any more, or None while it can."""
    if row.removed:
        return None
    partners = forces.split_unit_partners(session, row)  # its own split unit only: few rows
    fixed = split_unit_fixed(
        card_value(row),
        [card_value(c) for c in partners],
        mustered=forces.mustered_cards(session, row.force_id),
    )
    return fixed.message if fixed else None


def keyword_edit(session: Session, row: Card, crusade_faction: str) -> KeywordEdit | None:
    """What the card page offers to correct the keywords, or None once they are fixed."""
    during = requisitions.purchase_window(session, row.force_id).during_battle
    if row.removed or keywords_fixed(card_value(row), during_battle=during) is not None:
        return None
    chips = keyword_chips(crusade_faction)
    words = list(row.keywords)
    return KeywordEdit(
        chips=chips,
        ticked=[w for w in words if w in chips],
        others=", ".join(w for w in words if w not in chips),
    )


def _label(index: int, unit: NewUnit) -> str:
    name = str(unit.details.get("name") or "").strip()
    return f"Unit {index + 1}" + (f" ({name})" if name else "")


# --- the add-unit form ------------------------------------------------------------------


@dataclass(frozen=True)
class AddUnitsView:
    """What the add-unit page shows: the force, its campaign, the keyword chips, and the
    lines' starting values (a copy of a unit in the first line, when asked)."""

    view: ForceView
    campaign: Campaign
    chips: list[str]
    copied: Card | None = None
    first_line: dict[str, Any] = field(default_factory=dict)

    @property
    def blank_line(self) -> dict[str, Any]:
        """A new line: the faction keyword and INFANTRY ticked (most units of an Order of
        Battle are INFANTRY; the page's script unticks it when another unit type is
        ticked)."""
        return {"chips": [*self.chips[:1], DEFAULT_UNIT_TYPE]}

    @property
    def chips_shown(self) -> list[str]:
        """The chips every line shows; the others fold under the line's "More"."""
        return [c for c in FREQUENT_KEYWORDS if c in self.chips]

    @property
    def chips_folded(self) -> list[str]:
        return [c for c in self.chips if c not in FREQUENT_KEYWORDS]

    def lines_to_start_with(self) -> int:
        """A force being built (under 5 units) gets 5 lines at once; one unit otherwise."""
        return 5 if len(self.view.cards) < 5 and self.copied is None else 1


# Keywords no rule reads but real rosters carry on many units (issue 21): a tap each
# instead of typing them.
COMMON_KEYWORDS = ("FLY", "JUMP PACK", "TRANSPORT", "CORE")
DEFAULT_UNIT_TYPE = "INFANTRY"
# Unit types a unit is instead of INFANTRY: ticking one unticks INFANTRY (the page's script).
NOT_INFANTRY = ("VEHICLE", "MONSTER", "BIKER", "CAVALRY", "SWARM", "DRONE", "AIRCRAFT", "TITANIC")
# The chips shown on every line, by how often real rosters tick them; the rest (the faction
# keyword, ticked already, UNALIGNED, the Knights, TITANIC, FLY, ...) fold under "More"
# so a 10-unit roster fits in 6 phone screens (issue 21).
FREQUENT_KEYWORDS = ("INFANTRY", "CHARACTER", "PSYKER", "VEHICLE", "MONSTER", "BIKER")


def keyword_chips(crusade_faction: str) -> list[str]:
    """The chips of the add-unit form: the force's faction keyword, the unaligned keyword,
    every keyword the rules read (app/rules/keywords.py), then the common ones above."""
    book = rulebook()
    words = [crusade_faction.upper(), book.numbers.unaligned_keyword, *rule_keywords(book)]
    return list(dict.fromkeys([*words, *COMMON_KEYWORDS]))


def add_units_view(session: Session, *, force_id: int, copy: int | None = None) -> AddUnitsView:
    """The add-unit page's view; ``copy``: a unit of this force whose datasheet the first
    line starts from (a new unit starts fresh: no experience, honours, scars, relics or
    other Requisitions, no champion's name or narrative)."""
    view = forces.load_force(session, force_id)
    campaign = forces.get_campaign(session, view.force.campaign_id)
    chips = keyword_chips(view.force.crusade_faction)
    if copy is None:
        return AddUnitsView(
            view, campaign, chips, first_line={"chips": [*chips[:1], DEFAULT_UNIT_TYPE]}
        )
    source = next((c for c in view.cards if c.id == copy), None)
    if source is None:
        raise DomainError(
            "card_not_in_force",
            f"There is no unit {copy} in {view.force.name}'s Order of Battle to copy.",
            status=404,
            field="copy",
        )
    book = rulebooks.book_of(session, view.force)
    line = copy_of(source, [c.name for c in view.cards], book)
    keywords = line["chips"]
    line["chips"] = [k for k in keywords if k in chips]
    line["keywords"] = ", ".join(k for k in keywords if k not in chips)
    return AddUnitsView(view, campaign, chips, copied=source, first_line=line)


def copy_of(card: Card, names: list[str], book: Rulebook | None = None) -> dict[str, Any]:
    """A new unit's form values from an existing card's datasheet: the next free name
    ("Intercessors 2"), Power Rating, keywords (less a CHARACTER keyword that a Specialist
    Reinforcements Stratagem gave it), datasheet, role, named-character flag, wargear and
    psychic powers."""
    keywords = list(card.keywords)
    if _stratagem_character(card, book or rulebook()):
        keywords = [k for k in keywords if k != "CHARACTER"]
    return {
        "name": next_name(card.name, names),
        "power_rating": str(card.power_rating),
        "chips": keywords,  # the form ticks those it has chips for and types the rest
        "datasheet": card.datasheet,
        "battlefield_role": card.battlefield_role,
        "named_character": "true" if card.named_character else "",
        "wargear": card.wargear,
        "psychic_powers": card.psychic_powers,
    }


def _stratagem_character(card: Card, book: Rulebook) -> bool:
    """Whether a Knight Character Stratagem (the campaign's, or one a card bought before
    the rules stopped naming it) gave the card its CHARACTER keyword."""
    requisition = book.requisition("specialist_reinforcements")
    stratagems = {
        s.casefold()
        for s in (*requisition.character_stratagems, *requisition.character_stratagems_elsewhere)
    }
    return any(
        u.get("requisition") == "specialist_reinforcements"
        and str(u.get("detail", "")).casefold() in stratagems
        for u in card.upgrades
    )


_NUMBERED = re.compile(r"^(.*?)\s+(\d{1,4})$")


def next_name(name: str, taken: list[str]) -> str:
    """``name`` with the next number no unit uses yet: "Squad" → "Squad 2", "Squad 2" →
    "Squad 3" (at most 120 characters, the card's limit)."""
    found = _NUMBERED.match(name.strip())
    stem, number = (found.group(1), int(found.group(2))) if found else (name.strip(), 1)
    used = {t.strip().casefold() for t in taken}
    while True:
        number += 1
        suffix = f" {number}"
        candidate = stem[: 120 - len(suffix)] + suffix
        if candidate.casefold() not in used:
            return candidate
