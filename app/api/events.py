"""The campaign's event feed for bots: GET after a cursor, optionally waiting (long poll)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Engine

from app.api.reports import event_details
from app.api.schemas import FeedEventPublic, FeedPage
from app.db.session import SessionDep, session_scope
from app.services import events

router = APIRouter(tags=["events"])

# A waiting request looks for a new event this often: one indexed query on a pooled
# connection it gives back at once, so a waiter holds neither a connection nor a thread, and
# an event committed by any app process is seen within this time.
POLL_SECONDS = 0.25
MAX_WAIT = 60


@router.get(
    "/campaigns/{campaign_id}/events",
    summary="The campaign's events after a cursor, oldest first; `wait` long-polls",
    response_model=FeedPage,
    responses={304: {"description": "Not modified: the first page's ETag still matches"}},
)
async def feed(
    campaign_id: int,
    request: Request,
    session: SessionDep,
    after: Annotated[str | None, Query(max_length=200, description="A cursor")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    wait: Annotated[
        int,
        Query(ge=0, le=MAX_WAIT, description="Seconds to wait for an event if none is there"),
    ] = 0,
) -> FeedPage | Response:
    after_id = events.read_cursor(after)
    # The access check's transaction ends here: nothing is held while this request waits.
    session.commit()
    engine: Engine = request.app.state.engine
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not await run_in_threadpool(
        _has_news, engine, campaign_id, after_id
    ):
        if await request.is_disconnected():
            break
        await _news_or_timeout(campaign_id, POLL_SECONDS)
    items = await run_in_threadpool(_page, engine, campaign_id, after_id, limit + 1)
    page = FeedPage(
        items=items[:limit],
        next=items[:limit][-1].cursor if items else events.cursor_for(after_id),
        more=len(items) > limit,
    )
    if after is not None:
        return page
    # The first page changes only when an event is added to it: its last id is its version.
    etag = f'W/"feed-{campaign_id}-{limit}-{page.next}"'
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers={"ETag": etag})
    return Response(page.model_dump_json(), media_type="application/json", headers={"ETag": etag})


# Readers waiting in this process, by campaign: woken by a commit here at once.
_waiters: dict[int, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
_waiters_lock = threading.Lock()


async def _news_or_timeout(campaign_id: int, timeout: float) -> None:
    woken = asyncio.Event()
    waiter = (asyncio.get_running_loop(), woken)
    with _waiters_lock:
        _waiters.setdefault(campaign_id, set()).add(waiter)
    try:
        await asyncio.wait_for(woken.wait(), timeout)
    except TimeoutError:
        pass
    finally:
        with _waiters_lock:
            _waiters.get(campaign_id, set()).discard(waiter)


def _wake(campaign_ids: set[int]) -> None:
    """After a commit (in whatever thread): wake this process's readers of those feeds."""
    with _waiters_lock:
        found = [w for c in campaign_ids for w in _waiters.get(c, ())]
    for loop, woken in found:
        if not loop.is_closed():
            loop.call_soon_threadsafe(woken.set)


events.on_commit(_wake)


def _has_news(engine: Engine, campaign_id: int, after: int) -> bool:
    with session_scope(engine, writes=False) as session:
        return events.latest_id(session, campaign_id=campaign_id, after=after) is not None


def _page(engine: Engine, campaign_id: int, after: int, limit: int) -> list[FeedEventPublic]:
    with session_scope(engine, writes=False) as session:
        rows = events.read_feed(session, campaign_id=campaign_id, after=after, limit=limit)
    return [
        FeedEventPublic(
            id=e.id,
            cursor=e.cursor,
            kind=e.kind,
            campaign_id=e.campaign_id,
            force_id=e.force_id,
            battle_id=e.battle_id,
            card_id=e.card_id,
            decision_id=e.decision_id,
            actor=e.actor,
            summary=e.summary,
            created_at=e.created_at,
            details=event_details(e.details),
        )
        for e in rows
    ]
