"""Pages for a Crusade force: its Order of Battle, adding, editing and removing units, buying
Requisitions, and each unit's Crusade card (with a print layout and its battle history)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, StringConstraints, ValidationError
from pydantic_core import ErrorDetails
from sqlmodel import Session

from app.api import present
from app.api.battles import order as requisition_order
from app.api.schemas import (
    CardCreate,
    CardPublic,
    CardUpdate,
    ForceUpdate,
    OrderOfBattlePublic,
    RequisitionIn,
)
from app.db.models import Battle, Card, Force
from app.db.session import SessionDep
from app.errors import DomainError
from app.rules.data import Requisition, RequisitionTarget, RequisitionTiming, Rulebook, rulebook
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.rules.ranks import next_rank
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from app.services import card_battles, decisions, forces, requisitions
from app.services.access import Access, authorize
from app.services.accounts import Principal
from app.services.convert import card_value
from app.services.forces import ForceView
from app.web.pages import attempt, page, redirect, render
from app.web.reference import requisition_terms

router = APIRouter()
Reader = Annotated[Principal | None, page(Access.CAMPAIGN_READ)]
Owner = Annotated[Principal, page(Access.FORCE_OWN)]
Typed = Annotated[str, StringConstraints(max_length=8000)]
M = TypeVar("M", bound=BaseModel)

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
# The details each Requisition asks for: (form field, label, input kind, required).
REQUISITION_FIELDS: dict[str, list[tuple[str, str, str, bool]]] = {
    "fresh_recruits": [
        ("new_power_rating", "New Power Rating", "number", True),
        ("wargear", "Wargear with the new models (optional)", "textarea", False),
    ],
    "rearm_and_resupply": [
        ("wargear", "New wargear", "textarea", True),
        ("replaced_weapons", "Weapons swapped out, separated by commas", "text", False),
    ],
    "psychic_meditations": [("psychic_powers", "Psychic powers now known", "textarea", True)],
    "specialist_reinforcements": [
        ("stratagem", "Stratagem", "text", True),
        ("stratagem_cp", "Its CP cost", "number", True),
    ],
    "warlord_trait": [
        ("warlord_trait", "Warlord Trait", "text", True),
        ("model", "Model that takes it (optional)", "text", False),
    ],
    "relic": [
        ("relic", "Relic", "text", True),
        ("model", "Model that carries it (optional)", "text", False),
        ("replaces_weapon", "Weapon it replaces (optional)", "text", False),
        ("first_founding", "A First Founding Chapter relic", "checkbox", False),
    ],
}


# --- forms --------------------------------------------------------------------------------


class UnitForm(BaseModel):
    """The Add a unit form, as typed (checked against the API's CardCreate limits)."""

    name: Typed = ""
    power_rating: Typed = ""
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

    def card(self) -> dict[str, Any]:
        """The CardCreate body, with the Requisitions bought as the unit joins."""
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
            "keywords": _list(self.keywords),
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


class RequisitionForm(BaseModel):
    """One Requisition's buy form: the fields it uses, as typed."""

    requisition: Typed = ""
    card_id: Typed = ""
    card_scar: Typed = ""
    new_power_rating: Typed = ""
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
        return data


class ForceForm(BaseModel):
    name: Typed = ""
    player_name: Typed = ""
    notes: Typed = ""


class CardForm(BaseModel):
    name: Typed = ""
    narrative: Typed = ""


def _ticked(form: UnitForm | RequisitionForm) -> bool:
    return bool(form.first_founding)


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _checked(model: type[M], data: dict[str, Any]) -> M:
    """``data`` checked against an API schema: the same limits as the JSON API, refused in
    words next to the field at fault."""
    try:
        return model.model_validate(data)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        names = [str(p) for p in first["loc"] if isinstance(p, str)]
        name = names[-1] if names else None
        raise DomainError("form_invalid", _say(first, name), status=422, field=name) from None


def _say(error: ErrorDetails, name: str | None) -> str:
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


def _may_change(session: Session, principal: Principal | None, force_id: int) -> bool:
    """Whether this viewer may change the force (same rule as the forms' own check)."""
    if principal is None:
        return False
    try:
        authorize(
            session,
            access=Access.FORCE_OWN,
            principal=principal,
            params={"force_id": force_id},
            method="POST",
        )
    except DomainError:
        return False
    return True


# --- the Order of Battle ------------------------------------------------------------------


def _force_page(
    request: Request,
    session: Session,
    principal: Principal | None,
    view: ForceView,
    template: str,
    *,
    status: int = 200,
    oob: OrderOfBattlePublic | None = None,
    **context: Any,
) -> Response:
    force = view.force
    assert force.id is not None
    return render(
        request,
        template,
        principal,
        status=status,
        force=force,
        oob=oob or present.order_of_battle(view),
        removed=[c for c in view.cards if c.removed],
        campaign=forces.get_campaign(session, force.campaign_id),
        can_change=_may_change(session, principal, force.id),
        **context,
    )


@router.get("/forces/{force_id}")
def order_of_battle(
    request: Request,
    session: SessionDep,
    principal: Reader,
    force_id: int,
    added: str = "",
    imported: int = 0,
) -> Response:
    view = forces.load_force(session, force_id)
    joined = next((c for c in view.cards if str(c.id) == added and not c.removed), None)
    notice = f"{joined.name} joined the Order of Battle." if joined else None
    if imported > 0:
        units = f"{imported} unit{'s' if imported != 1 else ''}"
        notice = f"{units} from the roster joined the Order of Battle."
    waiting = decisions.list_decisions(session, force_id=force_id, status="pending")
    return _force_page(
        request, session, principal, view, "pages/force.html", notice=notice, waiting=len(waiting)
    )


@router.get("/forces/{force_id}/cards/new")
def add_unit_page(
    request: Request, session: SessionDep, principal: Owner, force_id: int
) -> Response:
    view = forces.load_force(session, force_id)
    values = {"keywords": view.force.crusade_faction}
    return _force_page(
        request, session, principal, view, "pages/force_add_unit.html", values=values
    )


@router.post("/forces/{force_id}/cards")
def add_unit(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    form: Annotated[UnitForm, Form()],
) -> Response:
    with attempt(session) as outcome:
        body = _checked(CardCreate, form.card())
        card = forces.add_card(
            session, force_id=force_id, **body.model_dump(exclude={"requisitions"})
        )
        for wanted in body.requisitions:
            bought = requisition_order(wanted.model_copy(update={"card_id": card.id}))
            requisitions.purchase(session, force_id=force_id, order=bought, card_added=card.id)
    if outcome.refused:
        view = forces.load_force(session, force_id)
        return _force_page(
            request,
            session,
            principal,
            view,
            "pages/force_add_unit.html",
            status=outcome.status,
            error=outcome.error,
            values=form.model_dump(),
        )
    return redirect(f"/forces/{force_id}?added={card.id}#card-{card.id}")


@router.get("/forces/{force_id}/edit")
def edit_force_page(
    request: Request, session: SessionDep, principal: Owner, force_id: int
) -> Response:
    view = forces.load_force(session, force_id)
    values = ForceForm(
        name=view.force.name, player_name=view.force.player_name, notes=view.force.notes
    )
    return _force_page(
        request, session, principal, view, "pages/force_edit.html", values=values.model_dump()
    )


@router.post("/forces/{force_id}")
def edit_force(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    form: Annotated[ForceForm, Form()],
) -> Response:
    with attempt(session) as outcome:
        body = _checked(ForceUpdate, form.model_dump())
        forces.update_force(session, force_id=force_id, **body.model_dump())
    if outcome.refused:
        view = forces.load_force(session, force_id)
        return _force_page(
            request,
            session,
            principal,
            view,
            "pages/force_edit.html",
            status=outcome.status,
            error=outcome.error,
            values=form.model_dump(),
        )
    return redirect(f"/forces/{force_id}")


# --- Requisitions -------------------------------------------------------------------------


@dataclass(frozen=True)
class RequisitionChoice:
    """A Requisition as this force may (or may not) buy it right now."""

    requisition: Requisition
    terms: list[str]
    targets: list[CardPublic] = field(default_factory=list)
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.reason is None


def _refusal(
    force: OrderOfBattle, order: RequisitionOrder, window: PurchaseWindow, book: Rulebook
) -> RuleError | None:
    """The rules' answer to an order, tried on the pure value (nothing is written). A refusal
    only for a detail not typed yet (a trait's name, a new Power Rating) means the timing,
    target and RP all passed."""
    try:
        purchase_requisition(force, order, window, book)
    except RuleError as refusal:
        return None if refusal.code == "requisition_detail_missing" else refusal
    return None


def _why_no_unit(refusals: list[RuleError]) -> str:
    """Why no unit can take it: the refusal that got furthest through the rules' checks
    (target, then timing, then RP) speaks for all; otherwise each unit's reason."""
    if not refusals:
        return "There are no units in the Order of Battle."
    for code in (
        "requisition_during_battle",
        "requisition_points_insufficient",
        "requisition_timing",
    ):
        found = next((r for r in refusals if r.code == code), None)
        if found:
            return found.message
    reasons = list(dict.fromkeys(r.message for r in refusals))
    more = " …" if len(reasons) > 3 else ""
    return " ".join(reasons[:3]) + more


def requisition_choices(
    session: Session, view: ForceView, oob: OrderOfBattlePublic
) -> list[RequisitionChoice]:
    """Every Requisition with the units it may be bought for now, or why it may not."""
    assert view.force.id is not None
    book = rulebook()
    window = requisitions.purchase_window(session, view.force.id)
    cards = {c.id: c for c in oob.cards}
    choices = []
    for wanted in book.requisitions:
        terms = requisition_terms(wanted, book)
        if wanted.target == RequisitionTarget.FORCE:
            refused = _refusal(view.value, RequisitionOrder(wanted.id), window, book)
            choices.append(RequisitionChoice(wanted, terms, reason=_message(refused)))
            continue
        targets, refusals = [], []
        for unit in view.value.cards:
            order = RequisitionOrder(wanted.id, card_id=unit.id)
            refused = _refusal(view.value, order, window, book)
            if refused is None:
                targets.append(cards[int(unit.id)])
            else:
                refusals.append(refused)
        reason = None if targets else _why_no_unit(refusals)
        choices.append(RequisitionChoice(wanted, terms, targets, reason))
    return choices


def _message(refusal: RuleError | None) -> str | None:
    return refusal.message if refusal else None


def _requisitions_page(
    request: Request,
    session: Session,
    principal: Principal | None,
    force_id: int,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    view = forces.load_force(session, force_id)
    oob = present.order_of_battle(view)
    return _force_page(
        request,
        session,
        principal,
        view,
        "pages/force_requisitions.html",
        status=status,
        oob=oob,
        choices=requisition_choices(session, view, oob),
        fields=REQUISITION_FIELDS,
        joining=(RequisitionTiming.CARD_ADDED, RequisitionTiming.CARD_ADDED_OR_CHARACTER_RANK),
        **context,
    )


@router.get("/forces/{force_id}/requisitions")
def requisitions_page(
    request: Request, session: SessionDep, principal: Reader, force_id: int, bought: str = ""
) -> Response:
    notice = None
    if bought in {r.id for r in rulebook().requisitions}:
        notice = f"Bought {rulebook().requisition(bought).name}."
    return _requisitions_page(request, session, principal, force_id, notice=notice)


@router.post("/forces/{force_id}/requisitions")
def buy_requisition(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    form: Annotated[RequisitionForm, Form()],
) -> Response:
    with attempt(session) as outcome:
        body = _checked(RequisitionIn, form.body())
        bought = requisitions.purchase(session, force_id=force_id, order=requisition_order(body))
    if outcome.refused:
        return _requisitions_page(
            request,
            session,
            principal,
            force_id,
            status=outcome.status,
            error=outcome.error,
            failed=form.requisition,
            values=form.model_dump(),
        )
    return redirect(f"/forces/{force_id}/requisitions?bought={bought.requisition}")


# --- Crusade cards ------------------------------------------------------------------------


@dataclass(frozen=True)
class Experience:
    """Where a unit stands on the road to its next rank."""

    xp: int
    gains_experience: bool
    next_rank: str | None = None
    next_xp: int | None = None

    @property
    def to_go(self) -> int:
        return max(0, (self.next_xp or 0) - self.xp)


@dataclass(frozen=True)
class CardSheet:
    """Everything on a unit's paper Crusade card."""

    card: CardPublic
    row: Card
    force: Force
    experience: Experience
    warlord_traits: list[dict[str, Any]]
    relics: list[dict[str, Any]]
    upgrades: list[dict[str, Any]]


def card_sheet(row: Card, force: Force, awaiting: bool = False) -> CardSheet:
    book = rulebook()
    value = card_value(row)
    public = present.card(row, awaiting_decision=awaiting, value=value)
    following = next_rank(value, book)
    experience = Experience(
        xp=value.xp,
        gains_experience=public.gains_experience,
        next_rank=following.name if following else None,
        next_xp=following.min_xp if following else None,
    )
    named = [{**u, "name": book.requisition(u["requisition"]).name} for u in row.upgrades]
    return CardSheet(
        card=public,
        row=row,
        force=force,
        experience=experience,
        warlord_traits=[u for u in named if u["requisition"] == "warlord_trait"],
        relics=[u for u in named if u["requisition"] == "relic"],
        upgrades=[u for u in named if u["requisition"] not in ("warlord_trait", "relic")],
    )


@dataclass(frozen=True)
class BattleLine:
    """One battle the unit fought, and what it did there."""

    battle: Battle
    mission: str
    battle_size: str
    result: str
    opponent: str
    report: dict[str, Any]
    agendas: list[tuple[str, int]]
    xp: int | None
    test: dict[str, Any] | None
    blow: dict[str, Any] | None
    promotions: list[str]
    warlord: bool


RESULTS = {
    "mustered": "Being fought",
    "proposed": "Result awaiting confirmation",
    "disputed": "Result disputed",
}


def battle_history(
    session: Session, row: Card, before: int | None = None
) -> tuple[list[BattleLine], int | None]:
    """A page of the battles whose roster held this unit, newest first (reverted ones are
    gone), and the cursor of the older ones."""
    assert row.id is not None
    page = card_battles.card_battles(session, card_id=row.id, force_id=row.force_id, before=before)
    lines = [_battle_line(row, f) for f in page.items]
    return lines, page.older


def _battle_line(row: Card, fought: card_battles.Fought) -> BattleLine:
    """The unit's line kept for the battle (card_battles.card_line): no report is read."""
    book = rulebook()
    battle, side, line = fought.battle, fought.side, fought.line
    unit = line.get("unit") or {}
    names = {a.id: a.name for a in book.agendas}
    tallies = unit.get("agenda_tallies") or {}
    if battle.status != "resolved":
        result = RESULTS.get(battle.status, battle.status)
    elif battle.outcome == "draw":
        result = "Draw"
    else:
        result = "Victory" if side.won else "Defeat"
    return BattleLine(
        battle=battle,
        mission=book.mission(battle.mission).name,
        battle_size=book.battle_size(battle.battle_size).name,
        result=result,
        opponent=fought.opponent,
        report=unit,
        agendas=[(names.get(k, k), int(v)) for k, v in tallies.items() if v],
        xp=line.get("xp"),
        test=line.get("test"),
        blow=line.get("blow"),
        promotions=[book.rank(rank).name for rank in line.get("promotions") or []],
        warlord=side.warlord_card_id == row.id,
    )


def _card_page(
    request: Request,
    session: Session,
    principal: Principal | None,
    row: Card,
    template: str,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    force = forces.get_force(session, row.force_id)  # not its other units: one row
    assert force.id is not None and row.id is not None
    return render(
        request,
        template,
        principal,
        status=status,
        sheet=card_sheet(row, force, card_battles.awaits_decision(session, card_id=row.id)),
        force=force,
        campaign=forces.get_campaign(session, force.campaign_id),
        can_change=_may_change(session, principal, force.id) and not row.removed,
        **context,
    )


@router.get("/cards/{card_id}")
def crusade_card(
    request: Request,
    session: SessionDep,
    principal: Reader,
    card_id: int,
    before: Annotated[int | None, Query(ge=1, lt=2**31)] = None,
) -> Response:
    row = forces.get_card(session, card_id)
    history, older = battle_history(session, row, before)
    return _card_page(
        request, session, principal, row, "pages/card.html", history=history, older=older
    )


@router.post("/cards/{card_id}")
def edit_card(
    request: Request,
    session: SessionDep,
    principal: Owner,
    card_id: int,
    form: Annotated[CardForm, Form()],
) -> Response:
    with attempt(session) as outcome:
        body = _checked(CardUpdate, form.model_dump())
        forces.update_card(session, card_id=card_id, **body.model_dump())
    if outcome.refused:
        row = forces.get_card(session, card_id)
        return _card_page(
            request,
            session,
            principal,
            row,
            "pages/card.html",
            status=outcome.status,
            history=battle_history(session, row)[0],
            error=outcome.error,
            values=form.model_dump(),
        )
    return redirect(f"/cards/{card_id}")


@router.get("/cards/{card_id}/print")
def print_card(request: Request, session: SessionDep, principal: Reader, card_id: int) -> Response:
    row = forces.get_card(session, card_id)
    return _card_page(request, session, principal, row, "pages/card_print.html")


@router.get("/forces/{force_id}/print")
def print_force(
    request: Request, session: SessionDep, principal: Reader, force_id: int
) -> Response:
    view = forces.load_force(session, force_id)
    sheets = [
        card_sheet(c, view.force, c.id in view.pending_card_ids)
        for c in view.cards
        if not c.removed
    ]
    return _force_page(request, session, principal, view, "pages/force_print.html", sheets=sheets)


@router.get("/cards/{card_id}/remove")
def remove_unit_page(
    request: Request, session: SessionDep, principal: Owner, card_id: int
) -> Response:
    row = forces.get_card(session, card_id)
    return _card_page(request, session, principal, row, "pages/card_remove.html")


@router.post("/cards/{card_id}/remove")
def remove_unit(request: Request, session: SessionDep, principal: Owner, card_id: int) -> Response:
    with attempt(session) as outcome:
        row = forces.remove_card(session, card_id=card_id)
    if outcome.refused:
        return _card_page(
            request,
            session,
            principal,
            forces.get_card(session, card_id),
            "pages/card_remove.html",
            status=outcome.status,
            error=outcome.error,
        )
    return redirect(f"/forces/{row.force_id}")
