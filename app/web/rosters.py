"""Pages for importing a roster into an Order of Battle: upload, preview with a tick box per
unit, add. The same service as the JSON API's POST /api/v1/forces/{id}/roster."""

from __future__ import annotations

import base64
import binascii
import io
import zipfile
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, UploadFile
from fastapi.responses import Response

from app.db.session import SessionDep
from app.edge import present
from app.errors import DomainError
from app.routing import OneHopRoute
from app.rules.data import rulebook
from app.services.accounts.access import Access
from app.services.accounts.accounts import Principal
from app.services.forces import forces
from app.services.packs import rulebooks
from app.services.rosters import roster_import
from app.services.rosters.roster_parse import MAX_ROSTER_BYTES, read_upload
from app.web.pages import attempt, page, redirect, render

router = APIRouter(route_class=OneHopRoute)
Owner = Annotated[Principal, page(Access.FORCE_OWN)]
TEMPLATE = "pages/force_roster.html"
# The preview's form carries the upload zipped, in base64 (4 characters per 3 bytes).
MAX_CARRIED = MAX_ROSTER_BYTES * 4 // 3 + 4


CHANGE_NAMES = {
    "power_rating": "Power Rating",
    "wargear": "Models and wargear",
    "psychic_powers": "Psychic powers",
    "keywords": "Keywords",
}


def _page(
    request: Request,
    session: SessionDep,
    principal: Principal,
    force_id: int,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    view = forces.load_force(session, force_id)
    return render(
        request,
        TEMPLATE,
        principal,
        status=status,
        force=view.force,
        # the header's numbers: the summary, not every unit's card built (issue 50)
        oob=present.force_summary(view.force, view, rulebooks.book_of(session, view.force)),
        campaign=forces.get_campaign(session, view.force.campaign_id),
        change_names=CHANGE_NAMES,
        requisition_names={r.id: r.name for r in rulebook().requisitions},
        **context,
    )


@router.get("/forces/{force_id}/roster")
def upload_page(request: Request, session: SessionDep, principal: Owner, force_id: int) -> Response:
    return _page(request, session, principal, force_id)


@router.post("/forces/{force_id}/roster/preview")
def preview_page(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    file: UploadFile,
) -> Response:
    data = read_upload(file.file)
    with attempt(session) as outcome:
        shown = roster_import.preview(session, force_id=force_id, data=data)
    if outcome.refused:
        return _page(request, session, principal, force_id, **outcome.shown())
    return _page(request, session, principal, force_id, shown=shown, carried=_carry(data))


@router.post("/forces/{force_id}/roster")
def add_page(
    request: Request,
    session: SessionDep,
    principal: Owner,
    force_id: int,
    roster: Annotated[str, Form(max_length=MAX_CARRIED)],
    units: Annotated[list[str] | None, Form()] = None,
    buy: Annotated[list[str] | None, Form()] = None,
    update: Annotated[list[str] | None, Form()] = None,
) -> Response:
    data = _uncarry(roster)
    with attempt(session) as outcome:
        added = roster_import.add(
            session,
            force_id=force_id,
            data=data,
            units=units or ([] if not update else None),
            buy=buy,
            update=update,
        )
    if outcome.refused:
        with attempt(session) as again:
            shown = roster_import.preview(session, force_id=force_id, data=data)
        return _page(
            request,
            session,
            principal,
            force_id,
            **outcome.shown(),
            shown=None if again.refused else shown,
            carried=roster,
            ticked=set(units or []),
            bought=set(buy or []),
            updating=set(update or []),
        )
    done = f"imported={len(added.cards)}" + (f"&updated={n}" if (n := len(added.updated)) else "")
    return redirect(f"/forces/{force_id}?{done}")


def _carry(data: bytes) -> str:
    """The upload, zipped (a .ros shrinks ~10x) and base64'd into the preview form, so the
    add step reads exactly the file that was previewed, with every check run again."""
    if not data.startswith(b"PK"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("roster.ros", data)
        data = buffer.getvalue()
    return base64.b64encode(data).decode("ascii")


def _uncarry(carried: str) -> bytes:
    try:
        return base64.b64decode(carried, validate=True)
    except (binascii.Error, ValueError):
        raise DomainError(
            "roster_unreadable",
            "The roster sent with the form was damaged; upload the file again.",
            status=422,
            field="file",
        ) from None
