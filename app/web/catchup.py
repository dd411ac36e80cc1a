"""The campaign page's "since your last visit" (app/services/campaigns/catchup.py)."""

from __future__ import annotations

import logging

from fastapi import Request
from sqlalchemy import Engine
from sqlmodel import Session
from starlette.background import BackgroundTask
from starlette.responses import Response

from app.db.session import session_scope
from app.services.accounts.accounts import Principal
from app.services.campaigns import catchup, membership

log = logging.getLogger(__name__)


def since_last_visit(
    session: Session, principal: Principal | None, campaign_id: int
) -> catchup.SinceLastVisit | None:
    """For a member only: what happened in the campaign since they last opened its page."""
    if principal is None or principal.user.id is None:
        return None
    if membership.role_of(session, campaign_id=campaign_id, user_id=principal.user.id) is None:
        return None
    return catchup.since_last_visit(session, user_id=principal.user.id, campaign_id=campaign_id)


def remember_visit(
    response: Response,
    request: Request,
    principal: Principal | None,
    campaign_id: int,
    since: catchup.SinceLastVisit | None,
) -> Response:
    """After the page is sent, in a transaction of its own (a page read never writes); none
    when the visit saw nothing new (a reload costs no write, issue 41)."""
    news = since is not None and (since.first_visit or bool(since.events))
    if since is not None and news and principal is not None and principal.user.id is not None:
        response.background = BackgroundTask(
            _mark_seen, request.app.state.engine, principal.user.id, campaign_id, since.newest_id
        )
    return response


def _mark_seen(engine: Engine, user_id: int, campaign_id: int, event_id: int) -> None:
    try:
        with session_scope(engine) as session:
            catchup.mark_seen(session, user_id=user_id, campaign_id=campaign_id, event_id=event_id)
    except Exception:  # bookkeeping: a lost visit only shows some news twice
        log.warning("could not remember a visit to campaign %s", campaign_id, exc_info=True)
