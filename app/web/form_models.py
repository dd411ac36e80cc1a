"""The website's forms for forces and cards, next to the API schemas they are checked
against: each form as typed, the fields each Requisition asks for (one table for the
Requisitions page and the decisions page), and the add-unit form's lines.

A form is read as text (what the player typed, shown again on a refusal) and turned into
an API body (``CardCreate``, ``RequisitionIn``, ...), which does the checking: the website
and the JSON API refuse the same input with the same limits."""

from __future__ import annotations

import re
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import BaseModel, Field, StringConstraints, ValidationError
from pydantic_core import ErrorDetails
from starlette.datastructures import FormData

from app.errors import DomainError
from app.rules.data import AddUnit, Rulebook

Typed = Annotated[str, StringConstraints(max_length=8000)]
M = TypeVar("M", bound=BaseModel)
MAX_LINES = 30  # unit lines on one add-unit form

LABELS = {
    "name": "Name",
    "power_rating": "Power Rating",
    "keywords": "Keywords",
    "datasheet": "Datasheet",
    "battlefield_role": "Battlefield role",
    "champion": "Champion",
    "wargear": "Wargear",
    "psychic_powers": "Psychic powers",
    "narrative": "Narrative",
    "notes": "Notes",
    "player_name": "Player",
    "requisitions": "Requisitions",
    "new_power_rating": "New Power Rating",
    "new_points": "New points",
    "points": "Points",
    "replaced_weapons": "Weapons swapped out",
    "scar": "Battle Scar",
    "stratagem": "Stratagem",
    "stratagem_cp": "The Stratagem's CP cost",
    "warlord_trait": "Warlord Trait",
    "relic": "Relic",
    "model": "Model",
    "replaces_weapon": "Weapon it replaces",
    "card_id": "Unit",
}


class FieldSpec(NamedTuple):
    """One detail a Requisition asks for: the RequisitionIn field, its label, the input
    kind (text, number, textarea, checkbox) and whether the purchase needs it."""

    name: str
    label: str
    kind: str
    required: bool


# The details each Requisition asks for, by Requisition id (RequisitionIn's fields).
REQUISITION_FIELDS: dict[str, tuple[FieldSpec, ...]] = {
    "fresh_recruits": (
        FieldSpec("new_power_rating", "New Power Rating", "number", True),
        FieldSpec(
            "new_points", "New points (where the campaign musters by points)", "number", False
        ),
        FieldSpec("wargear", "Wargear with the new models (optional)", "textarea", False),
    ),
    "rearm_and_resupply": (
        FieldSpec("wargear", "New wargear", "textarea", True),
        FieldSpec("replaced_weapons", "Weapons swapped out, separated by commas", "text", False),
    ),
    "psychic_meditations": (
        FieldSpec("psychic_powers", "Psychic powers now known", "textarea", True),
    ),
    "specialist_reinforcements": (
        FieldSpec("stratagem", "Stratagem", "text", True),
        FieldSpec("stratagem_cp", "Its CP cost", "number", True),
    ),
    "warlord_trait": (
        FieldSpec("warlord_trait", "Warlord Trait", "text", True),
        FieldSpec("model", "Model that takes it (optional)", "text", False),
    ),
    "relic": (
        FieldSpec("relic", "Relic", "text", True),
        FieldSpec("model", "Model that carries it (optional)", "text", False),
        FieldSpec("replaces_weapon", "Weapon it replaces (optional)", "text", False),
        FieldSpec("first_founding", "A First Founding Chapter relic", "checkbox", False),
    ),
}

# The same table as one-line inputs (name, label, text or number) for the decisions page,
# which grants Requisitions as a battle's bonus (no tick boxes there).
# The unit a rule pack's requisition brings when the buyer names it (add_unit, chosen).
NEW_UNIT_FIELDS = (
    FieldSpec("unit_name", "Name of the new unit", "text", True),
    FieldSpec("unit_power_rating", "Its Power Rating", "number", True),
    FieldSpec(
        "unit_points", "Its points (needed where the campaign musters by points)", "number", False
    ),
    FieldSpec("unit_keywords", "Its keywords, separated by commas", "text", False),
)


def requisition_fields(book: Rulebook) -> dict[str, tuple[FieldSpec, ...]]:
    """The details each Requisition of the campaign asks for: the core's, and a unit's for
    a pack's that lets the buyer name it."""
    chosen = {
        r.id: NEW_UNIT_FIELDS
        for r in book.requisitions
        if any(isinstance(e, AddUnit) and e.chosen for e in r.effects)
    }
    return {**REQUISITION_FIELDS, **chosen}


# The server's bounds of each number a Requisition's form asks for (RequisitionIn and
# NewUnitIn), so the form refuses what the server would (issue 47).
NUMBER_BOUNDS: dict[str, tuple[int, int]] = {
    "new_power_rating": (1, 200),
    "new_points": (1, 10_000),
    "stratagem_cp": (1, 10),
    "unit_power_rating": (1, 200),
    "unit_points": (0, 10_000),
}


def number_bounds(book: Rulebook) -> dict[str, dict[str, tuple[int, int]]]:
    """Each Requisition's number fields and their bounds: the core's, and a pack's unit the
    buyer names within the effect's most Power (``max_power_rating``)."""
    found = {r.id: dict(NUMBER_BOUNDS) for r in book.requisitions}
    for r in book.requisitions:
        for effect in r.effects:
            if isinstance(effect, AddUnit) and effect.chosen and effect.max_power_rating:
                found[r.id]["unit_power_rating"] = (1, effect.max_power_rating)
    return found


DECISION_REQUISITION_FIELDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    requisition: tuple(
        (f.name, f.label, "number" if f.kind == "number" else "text")
        for f in fields
        if f.kind != "checkbox"
    )
    for requisition, fields in REQUISITION_FIELDS.items()
}


# --- forms --------------------------------------------------------------------------------


class UnitForm(BaseModel):
    """One unit of the Add units form, as typed (checked against the API's CardCreate):
    ``chips`` are the ticked keyword chips, ``keywords`` the other keywords typed."""

    name: Typed = ""
    power_rating: Typed = ""
    points: Typed = ""  # asked for where the campaign musters by points
    chips: list[Annotated[str, StringConstraints(max_length=120)]] = Field(
        default_factory=list, max_length=60
    )
    keywords: Typed = ""
    datasheet: Typed = ""
    battlefield_role: Typed = ""
    champion: Typed = ""
    named_character: Typed = ""
    wargear: Typed = ""
    psychic_powers: Typed = ""
    narrative: Typed = ""
    stratagem: Typed = ""
    stratagem_cp: Typed = ""
    warlord_trait: Typed = ""
    relic: Typed = ""
    first_founding: Typed = ""

    def blank(self) -> bool:
        """Nothing typed (the chips ticked in advance do not count): a spare line."""
        typed = self.model_dump(exclude={"chips"})
        return not any(str(v).strip() for v in typed.values())

    def all_keywords(self, shared: str = "") -> list[str]:
        """The ticked chips, then the typed keywords, then the keywords typed once for every
        line (``shared``), each once (as upper case)."""
        words = [*self.chips, *_list(self.keywords), *_list(shared)]
        return list(dict.fromkeys(w.strip().upper() for w in words if w.strip()))

    def card(self, shared: str = "") -> dict[str, Any]:
        """The CardCreate body, with the Requisitions bought as the unit joins; ``shared``:
        the keywords typed once for every line of the form, merged into this line's."""
        wanted: list[dict[str, Any]] = []
        if self.stratagem.strip() or self.stratagem_cp.strip():
            wanted.append(
                {
                    "requisition": "specialist_reinforcements",
                    "stratagem": self.stratagem,
                    "stratagem_cp": self.stratagem_cp or None,
                }
            )
        named = bool(self.named_character)
        if self.warlord_trait.strip() and not named:
            wanted.append({"requisition": "warlord_trait", "warlord_trait": self.warlord_trait})
        if self.relic.strip():
            wanted.append(
                {"requisition": "relic", "relic": self.relic, "first_founding": _ticked(self)}
            )
        return {
            "name": self.name,
            "power_rating": self.power_rating,
            "points": self.points.strip() or None,
            "keywords": self.all_keywords(shared),
            "datasheet": self.datasheet.strip(),
            "battlefield_role": self.battlefield_role.strip(),
            "champion": self.champion.strip() or None,
            "named_character": named,
            # A named character's trait is its own, not a requisition.
            "warlord_trait": self.warlord_trait.strip() or None if named else None,
            "wargear": self.wargear,
            "psychic_powers": self.psychic_powers,
            "narrative": self.narrative,
            "requisitions": wanted,
        }


def line_key(name: str, line: int) -> str:
    """A unit line's form field: the first line keeps the plain names (``name``), the
    others are numbered (``name-1``, ``kw-1``)."""
    return name if line == 0 else f"{name}-{line}"


def line_count(raw: object, *, default: int = 1) -> int:
    """How many unit lines the form shows: a count from the form or address, 1 to
    MAX_LINES (anything else: ``default``)."""
    text = str(raw or "").strip()
    if not text.isdigit() or len(text) > 3:
        return default
    return max(1, min(MAX_LINES, int(text)))


def unit_lines(form: FormData) -> list[UnitForm]:
    """Every line of the Add units form as typed (``lines`` says how many there are)."""
    count = line_count(form.get("lines"))
    lines = []
    for line in range(count):
        data: dict[str, Any] = {}
        for name in UnitForm.model_fields:
            if name == "chips":
                data[name] = [v for v in form.getlist(line_key("kw", line)) if isinstance(v, str)]
                continue
            value = form.get(line_key(name, line))
            if isinstance(value, str):
                data[name] = value
        try:
            lines.append(UnitForm.model_validate(data))
        except ValidationError as invalid:
            raise _refusal(invalid, line) from None
    return lines


SHARED_KEYWORDS = "keywords_all"  # the Add units field typed once for every line


def shared_keywords(form: FormData) -> str:
    """The keywords typed once for every unit line of the Add units form (e.g. the faction
    keywords ``ADEPTUS ASTARTES, PRIMARIS``), as typed; refused over 2000 characters, as a
    line's own keyword field is."""
    value = form.get(SHARED_KEYWORDS)
    text = value if isinstance(value, str) else ""
    if len(text) > 2000:
        raise DomainError(
            "form_invalid",
            "Keywords on every line: at most 2000 characters.",
            status=422,
            field=SHARED_KEYWORDS,
        )
    return text


class RequisitionForm(BaseModel):
    """One Requisition's buy form: the fields it uses, as typed."""

    requisition: Typed = ""
    card_id: Typed = ""
    card_scar: Typed = ""
    new_power_rating: Typed = ""
    new_points: Typed = ""
    wargear: Typed = ""
    replaced_weapons: Typed = ""
    psychic_powers: Typed = ""
    stratagem: Typed = ""
    stratagem_cp: Typed = ""
    warlord_trait: Typed = ""
    relic: Typed = ""
    model: Typed = ""
    replaces_weapon: Typed = ""
    first_founding: Typed = ""
    unit_name: Typed = ""
    unit_power_rating: Typed = ""
    unit_points: Typed = ""
    unit_keywords: Typed = ""

    def body(self) -> dict[str, Any]:
        """The RequisitionIn body; empty fields are left out, as the API's callers do."""
        card_id, scar = self.card_id, ""
        if self.card_scar:  # Repair and Recuperate picks a unit and its scar in one go
            card_id, _, scar = self.card_scar.partition("/")
        data: dict[str, Any] = {
            "requisition": self.requisition,
            "card_id": card_id or None,
            "scar": scar or None,
            "replaced_weapons": _list(self.replaced_weapons),
            "first_founding": _ticked(self),
        }
        for name in (
            "new_power_rating",
            "new_points",
            "wargear",
            "psychic_powers",
            "stratagem",
            "stratagem_cp",
            "warlord_trait",
            "relic",
            "model",
            "replaces_weapon",
        ):
            if getattr(self, name).strip():
                data[name] = getattr(self, name)
        if self.unit_name.strip() or self.unit_power_rating.strip():
            data["new_unit"] = {
                "name": self.unit_name,
                "power_rating": self.unit_power_rating,
                "points": self.unit_points.strip() or None,
                "keywords": [k.strip().upper() for k in _list(self.unit_keywords)],
            }
        return data


class ForceForm(BaseModel):
    name: Typed = ""
    player_name: Typed = ""
    notes: Typed = ""
    army_keywords: Typed = ""  # comma-separated (issue 47)

    def update(self) -> dict[str, Any]:
        """The fields as ForceUpdate reads them: the army keywords as a list."""
        words = [w.strip() for w in self.army_keywords.split(",") if w.strip()]
        return {**self.model_dump(exclude={"army_keywords"}), "army_keywords": words}


class CardForm(BaseModel):
    """A card's edit form: name and narrative; the keyword chips (``kw``) and other
    keywords only when the form offered them (``keywords_shown``)."""

    name: Typed = ""
    narrative: Typed = ""
    split_unit: Typed = ""
    keywords_shown: Typed = ""
    kw: list[Annotated[str, StringConstraints(max_length=120)]] = Field(
        default_factory=list, max_length=60
    )
    keywords: Typed = ""

    def body(self) -> dict[str, Any]:
        """The CardUpdate body."""
        data: dict[str, Any] = {
            "name": self.name,
            "narrative": self.narrative,
            "split_unit": self.split_unit.strip(),
        }
        if self.keywords_shown:
            words = [*self.kw, *_list(self.keywords)]
            data["keywords"] = list(dict.fromkeys(w.strip().upper() for w in words if w.strip()))
        return data


def _ticked(form: UnitForm | RequisitionForm) -> bool:
    return bool(form.first_founding)


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


# --- checking a form against its API schema -------------------------------------------------


def checked(model: type[M], data: dict[str, Any], line: int | None = None) -> M:
    """``data`` checked against an API schema: the same limits as the JSON API, refused in
    words next to the field at fault (on a unit line: that line's field, its number said)."""
    try:
        return model.model_validate(data)
    except ValidationError as invalid:
        raise _refusal(invalid, line) from None


def _refusal(invalid: ValidationError, line: int | None) -> DomainError:
    first = invalid.errors()[0]
    names = [str(p) for p in first["loc"] if isinstance(p, str)]
    name = names[-1] if names else None
    message = say(first, name)
    if line is None:
        return DomainError("form_invalid", message, status=422, field=name)
    field = line_key(name, line) if name else None
    return DomainError("form_invalid", f"Line {line + 1}: {message}", status=422, field=field)


def say(error: ErrorDetails, name: str | None) -> str:
    """A pydantic complaint about a form field, as a sentence that names the field."""
    label = LABELS.get(name or "", (name or "This field").replace("_", " ").capitalize())
    context: dict[str, Any] = dict(error.get("ctx") or {})
    kind = error["type"]
    if kind == "string_too_short":
        return f"{label} is needed."
    if kind == "string_too_long":
        return f"{label} can be at most {context.get('max_length')} characters."
    if kind == "too_long":
        return f"{label}: at most {context.get('max_length')} entries."
    if kind in ("greater_than_equal", "greater_than"):
        return f"{label} must be at least {context.get('ge', context.get('gt'))}."
    if kind in ("less_than_equal", "less_than"):
        return f"{label} must be at most {context.get('le', context.get('lt'))}."
    if kind.startswith("int_"):
        return f"{label} must be a whole number."
    return f"{label}: {error['msg']}."


_UNIT_PATH = re.compile(r"^units\[(\d+)\]\.(?:requisitions\[\d+\]\.)?([a-z_]+)")


def unit_of(path: str | None) -> tuple[int, str] | None:
    """The unit index and field of a refusal's request path (``units[2].power_rating``)."""
    found = _UNIT_PATH.match(path or "")
    return (int(found.group(1)), found.group(2)) if found else None
