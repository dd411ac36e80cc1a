"""The campaign's rules page (issue 22): the rule packs it plays with and everything they add,
in words; an organizer previews, attaches, updates and detaches packs here. The same service
as the JSON API's /api/v1/campaigns/{id}/rule-packs."""

from __future__ import annotations

from typing import Annotated, Any

import yaml
from fastapi import APIRouter, Form, Request, UploadFile
from fastapi.responses import Response

from app.db.session import SessionDep
from app.routing import OneHopRoute
from app.rules import packs
from app.services.accounts.access import Access
from app.services.accounts.accounts import Principal
from app.services.campaigns import membership
from app.services.forces import forces
from app.services.packs import campaign_packs, examples, pack_words, rulebooks
from app.web.pages import attempt, page, redirect, render
from app.web.reference import agenda_xp, requisition_terms

router = APIRouter(route_class=OneHopRoute)
Reader = Annotated[Principal | None, page(Access.CAMPAIGN_READ)]
Organizer = Annotated[Principal, page(Access.CAMPAIGN_ORGANIZE)]
Text = Annotated[str, Form(max_length=packs.MAX_BYTES)]
Ticked = Annotated[bool, Form()]

SETTING_NAMES = {
    "starting_supply_limit": "Starting Supply Limit",
    "supply_limit_increase": "Supply Limit per Increase Supply Limit",
    "starting_requisition_points": "Starting Requisition points",
    "max_requisition_points": "Most Requisition points a force may hold",
    "requisition_points_per_battle": "Requisition points per battle",
    "agendas_per_battle": "Agendas per player per battle",
    "muster_by": "Armies measured in (power_level: Power Rating; points)",
    "organizer_results_need_confirmation": "An organizer's result for their own battle waits "
    "for the opponent",
}


def setting_name(key: str) -> str:
    """``agendas_per_battle.strike_force`` reads "Agendas per player per battle (Strike
    Force)"."""
    name, _, size = key.partition(".")
    words = SETTING_NAMES.get(name, name)
    return f"{words} ({size.replace('_', ' ').title()})" if size else words


def setting_value(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ').title()} {v}" for k, v in value.items())
    return str(value)


@router.get("/campaigns/{campaign_id}/rules")
def rules_page(
    request: Request, session: SessionDep, principal: Reader, campaign_id: int
) -> Response:
    return _page(request, session, principal, campaign_id)


def _page(
    request: Request,
    session: SessionDep,
    principal: Principal | None,
    campaign_id: int,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    campaign = forces.get_campaign(session, campaign_id)
    book = rulebooks.campaign_book(session, campaign_id)
    rows = campaign_packs.list_packs(session, campaign_id)
    organizer = _organizer(session, campaign_id, principal)
    return render(
        request,
        "pages/campaign_rules.html",
        principal,
        status=status,
        campaign=campaign,
        organizer=organizer,
        # the example packs, for an organizer to start from (players see what is attached)
        gallery=examples.gallery() if organizer else (),
        attached={row.pack_id: row.pack_version for row in rows},
        adds_words=adds_words,
        packs=[(row, packs.RulePack.model_validate(row.document)) for row in rows],
        book=book,
        reach=campaign_packs.reach(session, campaign_id),
        setting_name=setting_name,
        setting_value=setting_value,
        terms=lambda requisition: requisition_terms(requisition, book),
        agenda_xp=agenda_xp,
        # issue 47: each effect as the engine plays it, beside the author's summary
        effects_words=lambda effects: pack_words.effects_words(effects, book),
        bonus_words=lambda bonus: pack_words.bonus_words(bonus, book),
        max_kb=packs.MAX_BYTES // 1024,
        **context,
    )


def _organizer(session: SessionDep, campaign_id: int, principal: Principal | None) -> bool:
    if principal is None or principal.user.id is None:
        return False
    if principal.user.is_admin:
        return True
    role = membership.role_of(session, campaign_id=campaign_id, user_id=principal.user.id)
    return role == "organizer"


def adds_words(adds: dict[str, list[str]]) -> str:
    """``{"counters": ["Renown"], "quests": [...]}`` reads "1 counter (Renown); 2 quests
    (…)"."""
    return "; ".join(
        f"{len(names)} {(kind if len(names) != 1 else kind[:-1]).replace('_', ' ')} "
        f"({', '.join(names)})"
        for kind, names in adds.items()
        if names
    )


def _pack_text(file: UploadFile | None, text: str, example: str) -> bytes:
    if example:  # from the gallery: the shipped file, through the same preview and attach
        return examples.example(example).text.encode()
    if file is not None and file.filename:
        return file.file.read(packs.MAX_BYTES + 1)
    return text.encode()


# A plain function, so FastAPI runs it in a worker thread: reading a pack's YAML is CPU work
# (a 190 KB pack took 2.85 s), which on the event loop stopped every other request (issue 33).
@router.post("/campaigns/{campaign_id}/rules/packs")
def attach_pack(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    file: UploadFile | None = None,
    text: Text = "",
    action: Annotated[str, Form(max_length=10)] = "preview",
    accept_breaking: Ticked = False,
    example: Annotated[str, Form(max_length=80)] = "",
) -> Response:
    data = _pack_text(file, text, example)
    with attempt(session) as outcome:
        if action == "attach":
            campaign_packs.attach(
                session, campaign_id=campaign_id, data=data, accept_breaking=accept_breaking
            )
        else:
            shown = campaign_packs.preview(session, campaign_id=campaign_id, data=data)
    carried = data.decode("utf-8", errors="replace")
    if outcome.refused:
        return _page(
            request,
            session,
            principal,
            campaign_id,
            **outcome.shown(),
            carried=carried,
        )
    if action == "attach":
        return redirect(f"/campaigns/{campaign_id}/rules?attached=1")
    return _page(request, session, principal, campaign_id, preview=shown, carried=carried)


@router.post("/campaigns/{campaign_id}/rules/packs/{pack_id}/detach")
def detach_pack(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    pack_id: str,
    accept_breaking: Ticked = False,
) -> Response:
    with attempt(session) as outcome:
        campaign_packs.detach(
            session, campaign_id=campaign_id, pack_id=pack_id[:60], accept_breaking=accept_breaking
        )
    if outcome.refused:
        return _page(
            request,
            session,
            principal,
            campaign_id,
            **outcome.shown("detach_error"),
            detaching=pack_id,
        )
    return redirect(f"/campaigns/{campaign_id}/rules?detached=1")


@router.get("/campaigns/{campaign_id}/rules/packs/{pack_id}.yaml")
def download_pack(
    session: SessionDep, principal: Reader, campaign_id: int, pack_id: str
) -> Response:
    """The pack as a file to share with another group (it imports as it is)."""
    row = campaign_packs.get_pack(session, campaign_id, pack_id[:60])
    text = yaml.safe_dump(row.document, sort_keys=False, allow_unicode=True)
    return Response(
        text,
        media_type="application/yaml",
        headers={"Content-Disposition": f'attachment; filename="{row.pack_id}.yaml"'},
    )
