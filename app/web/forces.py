"""Pages for a Crusade force: its Order of Battle, adding, editing and removing units, buying
Requisitions, and each unit's Crusade card (with a print layout and its battle history)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import Response
from sqlmodel import Session

from app.db.models import Card, Force
from app.db.session import SessionDep, ends_read_early
from app.edge import present
from app.edge.schemas.forces import (
    CardCreate,
    CardPublic,
    CardUpdate,
    ForceUpdate,
    OrderOfBattlePublic,
)
from app.edge.schemas.requisitions import RequisitionIn, requisition_order
from app.errors import DomainError
from app.routing import OneHopRoute
from app.rules.data import Requisition, RequisitionTiming, Rulebook
from app.rules.errors import RuleError
from app.rules.ranks import next_rank
from app.services.accounts.access import Access, authorize
from app.services.accounts.accounts import Principal
from app.services.battles import decisions
from app.services.campaigns import versions
from app.services.forces import card_battles, force_pages, forces, requisitions, unit_entry
from app.services.forces.convert import card_value
from app.services.forces.forces import ForceView
from app.services.packs import pack_watch, rulebooks
from app.web.form_models import (
    MAX_LINES,
    CardForm,
    ForceForm,
    RequisitionForm,
    UnitForm,
    checked,
    line_count,
    line_key,
    number_bounds,
    requisition_fields,
    shared_keywords,
    unit_lines,
    unit_of,
)
from app.web.forms import Form as PostedForm
from app.web.pages import (
    attempt,
    fragment,
    fragments,
    kept_page,
    link,
    page,
    redirect,
    render,
    revalidated,
)
from app.web.reference import requisition_terms

router = APIRouter(route_class=OneHopRoute)
Reader = Annotated[Principal | None, page(Access.CAMPAIGN_READ)]
Owner = Annotated[Principal, page(Access.FORCE_OWN)]


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


def _card_counters(view: ForceView, book: Rulebook) -> dict[int, list[str]]:
    """Each unit's own rule pack counters in words, for its row (issue 47)."""
    return {
        int(c.id): lines
        for c in view.value.cards
        if book.counters and (lines := pack_watch.card_counters(book, c))
    }


def _force_page(
    request: Request,
    session: Session,
    principal: Principal | None,
    view: ForceView,
    template: str,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    """A page about one force that is not its Order of Battle (add units, print): its
    header's numbers are the force's summary, not every unit's card built (issue 50)."""
    force = view.force
    assert force.id is not None
    return render(
        request,
        template,
        principal,
        status=status,
        force=force,
        oob=present.force_summary(force, view, rulebooks.book_of(session, force)),
        campaign=forces.get_campaign(session, force.campaign_id),
        **context,
    )


@router.get("/forces/{force_id}")
@ends_read_early
async def order_of_battle(
    request: Request,
    session: SessionDep,
    principal: Reader,
    force_id: int,
    added: str = "",
    imported: Annotated[int, Query(ge=0, le=1000)] = 0,
    updated: Annotated[int, Query(ge=0, le=1000)] = 0,
    joined: Annotated[int, Query(ge=0, le=1000)] = 0,
) -> Response:
    """Kept whole for a visitor, and in parts for everyone else (issue 50): the force's
    units and numbers are rendered once per version of the force and its campaign, apart
    for those who may change it (their Duplicate buttons); the notice after an action is
    the request's own."""
    notices = _Notices(added, imported, updated, joined)
    return await _kept_force_page(
        request,
        session,
        principal,
        ("force_page", force_id),
        whole=not notices.any(),
        build=lambda: _order_of_battle(request, session, principal, force_id, notices),
    )


async def _kept_force_page(
    request: Request,
    session: Session,
    principal: Principal | None,
    what: tuple[str, int],
    *,
    whole: bool,
    build: Callable[[], Response],
) -> Response:
    """A force's page (``what``: its name and the force) kept whole for a visitor per version
    of the force and its campaign, unless it carries a notice of the request's own
    (``whole`` False)."""
    held = versions.held_force_versions(session, what[1])
    version = held[0] if held is not None and whole else None
    return await kept_page(request, principal, (*what, held[1] if held else None), version, build)


def _force_parts(
    request: Request,
    session: Session,
    what: tuple[Hashable, ...],
    force_id: int,
    build: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """A force page's parts, kept under ``what`` and the versions of the force and its
    campaign read now."""
    force_version, campaign_version = versions.force_versions(session, force_id)
    key = (what[0], force_id, force_version, campaign_version, *what[1:])
    return fragments(request, session, key, build)


@dataclass(frozen=True)
class _Notices:
    """What the Order of Battle page says after an action sent the player to it."""

    added: str
    imported: int
    updated: int
    joined: int

    def any(self) -> bool:
        return bool(self.added or self.imported or self.updated or self.joined)

    def text(self, names: dict[str, str]) -> str | None:
        """``names``: the force's live units' names by id (the unit just added is one)."""
        notice = f"{names[self.added]} joined the Order of Battle." if self.added in names else None
        if self.imported > 0:
            units = f"{self.imported} unit{'s' if self.imported != 1 else ''}"
            notice = f"{units} from the roster joined the Order of Battle."
        if self.updated > 0:
            cards = f"{self.updated} card{'s' if self.updated != 1 else ''}"
            notice = f"{notice or ''} {cards} brought up to the roster.".strip()
        if self.joined > 0:
            units = f"{self.joined} unit{'s' if self.joined != 1 else ''}"
            notice = f"{units} joined the Order of Battle."
        return notice


def _order_of_battle(
    request: Request,
    session: Session,
    principal: Principal | None,
    force_id: int,
    notices: _Notices,
) -> Response:
    can_change = _may_change(session, principal, force_id)
    shown = _force_parts(
        request,
        session,
        ("force_page", can_change),
        force_id,
        lambda: _force_shown(session, force_id, can_change),
    )
    answer = render(
        request,
        "pages/force.html",
        principal,
        can_change=can_change,
        notice=notices.text(shown["names"]),
        **shown,
    )
    return revalidated(request, answer)


def _force_shown(session: Session, force_id: int, can_change: bool) -> dict[str, Any]:
    """The Order of Battle page's parts that are the same for everyone who sees it alike
    (readers, or those who may change the force): its units and numbers, rendered."""
    view = forces.load_force(session, force_id)
    force = view.force
    assert force.id is not None
    book = rulebooks.book_of(session, force)
    oob = present.order_of_battle(view, book)
    campaign = forces.get_campaign(session, force.campaign_id)
    return {
        "force": {
            "id": force.id,
            "name": force.name,
            "crusade_faction": force.crusade_faction,
            "army_keywords": list(force.army_keywords or []),
            "player_name": force.player_name,
            "notes": force.notes,
        },
        "campaign": link(campaign),
        "names": {str(c.id): c.name for c in view.cards if not c.removed},
        "waiting": len(decisions.list_decisions(session, force_id=force_id, status="pending")),
        "removed": [
            {"id": c.id, "name": c.name, "power_rating": c.power_rating}
            for c in view.cards
            if c.removed
        ],
        "summary_html": fragment(
            "partials/force_summary.html", oob=oob, counter_rules=book.counters
        ),
        "units_html": fragment(
            "partials/force_units.html",
            oob=oob,
            force={"id": force.id},
            card_counters=_card_counters(view, book),
            can_change=can_change,
        ),
    }


@router.get("/forces/{force_id}/cards/new")
def add_unit_page(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    lines: Annotated[str, Query(max_length=4)] = "",
    copy: Annotated[int | None, Query(ge=1, lt=2**31)] = None,
) -> Response:
    shown = unit_entry.add_units_view(session, force_id=force_id, copy=copy)
    count = line_count(lines, default=shown.lines_to_start_with())
    values = [shown.first_line] + [shown.blank_line] * (count - 1)
    return _add_units_page(request, session, principal, shown, values)


def _add_units_page(
    request: Request,
    session: Session,
    principal: Principal,
    shown: unit_entry.AddUnitsView,
    values: list[dict[str, Any]],
    *,
    shared: str = "",
    status: int = 200,
    error: Exception | None = None,
) -> Response:
    return _force_page(
        request,
        session,
        principal,
        shown.view,
        "pages/force_add_unit.html",
        status=status,
        error=error,
        chips=shown.chips,
        shown=shown,
        not_infantry=unit_entry.NOT_INFANTRY,
        copied=shown.copied,
        lines=values,
        shared=shared,
        max_lines=MAX_LINES,
        # issue 38: a rule pack's Warlord Traits are offered as the field is typed
        pack_traits=rulebooks.book_of(session, shown.view.force).pack_warlord_traits,
    )


@router.post("/forces/{force_id}/cards")
def add_units(
    request: Request, session: SessionDep, principal: Owner, force_id: int, form: PostedForm
) -> Response:
    """Add every filled-in line (all or none), or, for "More lines", show the form again
    with more lines and everything typed kept."""
    more = line_count(form.get("more"), default=0)
    typed: list[UnitForm] | None = None
    cards: list[Card] = []
    shared = str(form.get("keywords_all") or "")[:2000]
    with attempt(session) as outcome:
        typed = unit_lines(form)
        shared = shared_keywords(form)
        if not more:
            cards = _add_lines(session, force_id, typed, shared)
    if outcome.refused or more:
        shown = unit_entry.add_units_view(session, force_id=force_id)
        count = line_count(form.get("lines"))
        if typed is None:  # not even readable (a field over its length): as posted
            values = [_typed_again(form, n) for n in range(count)]
        else:
            values = [line.model_dump() for line in typed]
        values += [shown.blank_line] * more
        return _add_units_page(
            request,
            session,
            principal,
            shown,
            values[:MAX_LINES],
            shared=shared,
            status=outcome.status if outcome.refused else 200,
            error=outcome.error,
        )
    if len(cards) == 1:
        return redirect(f"/forces/{force_id}?added={cards[0].id}#card-{cards[0].id}")
    return redirect(f"/forces/{force_id}?joined={len(cards)}")


def _typed_again(form: Any, line: int) -> dict[str, Any]:
    """A line as posted, when it could not even be read (a field over its length)."""
    values: dict[str, Any] = {
        n: str(form.get(line_key(n, line)) or "")[:8000] for n in UnitForm.model_fields
    }
    values["chips"] = [str(v)[:120] for v in form.getlist(line_key("kw", line))]
    return values


def _add_lines(
    session: Session, force_id: int, typed: list[UnitForm], shared: str = ""
) -> list[Card]:
    """The filled-in lines, checked as the API checks a CardCreate, added in one go; a
    refusal names the line and sits next to its field. ``shared``: the keywords typed once
    for every line, merged into each line's keywords before the checks."""
    filled = [(n, line) for n, line in enumerate(typed) if not line.blank()]
    if not filled:
        raise DomainError(
            "units_missing",
            "Fill in at least one unit: its name and Power Rating.",
            status=422,
            field="name",
        )
    units, labels = [], []
    for n, line in filled:
        body = checked(CardCreate, line.card(shared), line=n)
        units.append(
            unit_entry.NewUnit(
                details=body.model_dump(exclude={"requisitions"}),
                requisitions=[requisition_order(r) for r in body.requisitions],
            )
        )
        labels.append(f"Line {n + 1} ({body.name})" if len(typed) > 1 else "")
    try:
        return unit_entry.add_units(session, force_id=force_id, units=units, labels=labels)
    except RuleError as refused:
        at = unit_of(refused.path)
        if at is not None:
            refused.field = line_key(at[1], filled[at[0]][0])
        raise


@router.get("/forces/{force_id}/edit")
def edit_force_page(
    request: Request, session: SessionDep, principal: Owner, force_id: int
) -> Response:
    force = forces.get_force(session, force_id)
    values = ForceForm(
        name=force.name,
        player_name=force.player_name,
        notes=force.notes,
        army_keywords=", ".join(force.army_keywords),
    )
    return _force_edit_page(request, session, principal, force, values=values.model_dump())


def _force_edit_page(
    request: Request,
    session: Session,
    principal: Principal,
    force: Force,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    """The force's edit form: its own row and its campaign's name, not its units."""
    return render(
        request,
        "pages/force_edit.html",
        principal,
        status=status,
        force=force,
        campaign=forces.get_campaign(session, force.campaign_id),
        **context,
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
        body = checked(ForceUpdate, form.update())
        forces.update_force(session, force_id=force_id, **body.model_dump())
    if outcome.refused:
        return _force_edit_page(
            request,
            session,
            principal,
            forces.get_force(session, force_id),
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


def requisition_choices(
    session: Session, view: ForceView, oob: OrderOfBattlePublic
) -> list[RequisitionChoice]:
    """Every Requisition with the units it may be bought for now, or why it may not."""
    book = rulebooks.book_of(session, view.force)
    cards = {c.id: c for c in oob.cards}
    return [
        RequisitionChoice(
            option.requisition,
            requisition_terms(option.requisition, book),
            [cards[i] for i in option.card_ids],
            option.reason,
        )
        for option in force_pages.requisition_options(session, view)
    ]


def _requisitions_page(
    request: Request,
    session: Session,
    principal: Principal | None,
    force_id: int,
    *,
    status: int = 200,
    kept: bool = False,
    **context: Any,
) -> Response:
    """``kept``: a read, whose rules' answers (every Requisition tried on every unit) are
    kept per version of the force and its campaign, which everything they depend on moves
    (the units, the RP, the battles that open and close the purchase window, the rules)."""
    if kept:
        build = lambda: _requisitions_shown(session, force_id)  # noqa: E731
        shown = _force_parts(request, session, ("requisitions",), force_id, build)
    else:
        shown = _requisitions_shown(session, force_id)
    return render(
        request,
        "pages/force_requisitions.html",
        principal,
        status=status,
        can_change=_may_change(session, principal, force_id),
        **(shown | context),
    )


def _requisitions_shown(session: Session, force_id: int) -> dict[str, Any]:
    view = forces.load_force(session, force_id)
    force = view.force
    book = rulebooks.book_of(session, force)
    oob = present.order_of_battle(view, book)
    campaign = forces.get_campaign(session, force.campaign_id)
    return {
        "force": link(force),
        "campaign": link(campaign),
        "oob": oob,
        "choices": requisition_choices(session, view, oob),
        "fields": requisition_fields(book),
        "bounds": number_bounds(book),  # issue 47: a number field refuses what the server would
        "pack_traits": book.pack_warlord_traits,  # issue 38: offered on the Warlord Trait form
        "joining": (RequisitionTiming.CARD_ADDED, RequisitionTiming.CARD_ADDED_OR_CHARACTER_RANK),
    }


@router.get("/forces/{force_id}/requisitions")
@ends_read_early
async def requisitions_page(
    request: Request, session: SessionDep, principal: Reader, force_id: int, bought: str = ""
) -> Response:
    """Kept whole for a visitor (no purchase notice), and its rules' answers for everyone."""
    return await _kept_force_page(
        request,
        session,
        principal,
        ("requisitions_page", force_id),
        whole=not bought,
        build=lambda: _requisitions_read(request, session, principal, force_id, bought),
    )


def _requisitions_read(
    request: Request, session: Session, principal: Principal | None, force_id: int, bought: str
) -> Response:
    notice = None
    book = rulebooks.force_book(session, force_id)
    if bought in {r.id for r in book.requisitions}:
        notice = f"Bought {book.requisition(bought).name}."
    page = _requisitions_page(request, session, principal, force_id, kept=True, notice=notice)
    return revalidated(request, page)


@router.post("/forces/{force_id}/requisitions")
def buy_requisition(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    form: Annotated[RequisitionForm, Form()],
) -> Response:
    with attempt(session) as outcome:
        body = checked(RequisitionIn, form.body())
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
    counters: list[str]  # its rule packs' counters, in words (issue 47)


def card_sheet(row: Card, force: Force, book: Rulebook, awaiting: bool = False) -> CardSheet:
    value = card_value(row)
    public = present.card(row, awaiting_decision=awaiting, value=value, book=book)
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
        counters=pack_watch.card_counters(book, value) if book.counters else [],
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
    can_change = _may_change(session, principal, force.id) and not row.removed
    shown: dict[str, Any] = dict(
        sheet=card_sheet(
            row,
            force,
            rulebooks.book_of(session, force),
            card_battles.awaits_decision(session, card_id=row.id),
        ),
        force=force,
        campaign=forces.get_campaign(session, force.campaign_id),
        can_change=can_change,
        keyword_edit=unit_entry.keyword_edit(session, row, force.crusade_faction)
        if can_change
        else None,
        split_lock=unit_entry.split_unit_lock(session, row) if can_change else None,
    )
    return render(request, template, principal, status=status, **(shown | context))


def _card_shown(session: Session, card_id: int, before: int | None) -> dict[str, Any]:
    """The Crusade card page's parts that are the same for every reader: the card and its
    battle history, rendered, and the names the page's shell shows."""
    row = forces.get_card(session, card_id)
    force = forces.get_force(session, row.force_id)
    campaign = forces.get_campaign(session, force.campaign_id)
    assert row.id is not None
    sheet = card_sheet(
        row,
        force,
        rulebooks.campaign_book(session, force.campaign_id),
        card_battles.awaits_decision(session, card_id=row.id),
    )
    history, older = force_pages.battle_history(session, row, before)
    return {
        "card": {"id": row.id, "name": row.name, "removed": row.removed},
        "awaiting": sheet.card.awaiting_decision,
        "force": link(force),
        "campaign": link(campaign),
        "sheet_html": fragment("partials/card_sheet.html", sheet=sheet, heading="h1"),
        "history_html": fragment("partials/card_history.html", history=history, older=older),
    }


@router.get("/cards/{card_id}")
@ends_read_early
async def crusade_card(
    request: Request,
    session: SessionDep,
    principal: Reader,
    card_id: int,
    before: Annotated[int | None, Query(ge=1, lt=2**31)] = None,
) -> Response:
    version = versions.held_card_version(session, card_id)
    return await kept_page(
        request,
        principal,
        ("card_page", card_id, before),
        version,
        lambda: _crusade_card(request, session, principal, card_id, before),
    )


def _crusade_card(
    request: Request,
    session: Session,
    principal: Principal | None,
    card_id: int,
    before: int | None,
) -> Response:
    version = versions.card_version(session, card_id)
    shown = fragments(
        request,
        session,
        ("card_page", card_id, version, before),
        lambda: _card_shown(session, card_id, before),
    )
    owner = principal is not None and not shown["card"]["removed"]
    if owner and _may_change(session, principal, shown["force"]["id"]):
        edit = fragments(  # the same for everyone who may change the unit: kept alike
            request,
            session,
            ("card_edit", card_id, version),
            lambda: _edit_form(session, forces.get_card(session, card_id)),
        )
        return revalidated(request, render(request, "pages/card.html", principal, **shown, **edit))
    answer = render(request, "pages/card.html", principal, can_change=False, **shown)
    return revalidated(request, answer)


def _edit_form(session: Session, row: Card) -> dict[str, Any]:
    """The card page's edit form, for a viewer who may change the unit: only what the form
    shows beside the kept sheet (the sheet itself is not built again for it, issue 50)."""
    faction = forces.get_force(session, row.force_id).crusade_faction
    return {
        "can_change": True,
        "unit": {"name": row.name, "narrative": row.narrative, "split_unit": row.split_unit or ""},
        "keyword_edit": unit_entry.keyword_edit(session, row, faction),
        "split_lock": unit_entry.split_unit_lock(session, row),
    }


@router.post("/cards/{card_id}")
def edit_card(
    request: Request,
    session: SessionDep,
    principal: Owner,
    card_id: int,
    form: Annotated[CardForm, Form()],
) -> Response:
    with attempt(session) as outcome:
        body = checked(CardUpdate, form.body())
        unit_entry.edit_card(session, card_id=card_id, **body.model_dump(exclude_unset=True))
    if outcome.refused:
        return render(
            request,
            "pages/card.html",
            principal,
            status=outcome.status,
            **_card_shown(session, card_id, None),
            **_edit_form(session, forces.get_card(session, card_id)),
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
        card_sheet(
            c,
            view.force,
            rulebooks.book_of(session, view.force),
            c.id in view.pending_card_ids,
        )
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
