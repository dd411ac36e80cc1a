"""The campaign's event feed for bots: GET after a cursor, optionally waiting (long poll)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Engine

from app.api.feed_wake import Rechecks, Turns, WokenPages
from app.api.plumbing import route_access
from app.api.plumbing.token_limits import LongPoll, long_poll
from app.db.models import as_utc, utcnow
from app.db.session import SessionDep, session_scope
from app.edge.admission import Gate, Ticket
from app.edge.schemas.feed import FeedPage
from app.errors import DomainError
from app.routing import OneHopRoute
from app.services.feed import events
from app.services.feed.feed_items import FeedEventPublic, feed_item

router = APIRouter(tags=["events"], route_class=OneHopRoute)

# Waiting requests look for a new event this often: one indexed query per campaign for all of
# this process's waiters (NewestIds), so an event committed by any app process is seen within
# this time; a commit in this process wakes its waiters at once.
POLL_SECONDS = 0.25
# A woken long poll takes what is committed this long after the event that woke it too, so
# the events of a busy moment come in one answer rather than one each; one answered at once
# with the newest events answers no sooner than COLLECT_SECONDS after it came, so a follower
# asking again at once makes at most one poll per COLLECT_SECONDS (issue 46).
WOKEN_COLLECT_SECONDS = 0.05
COLLECT_SECONDS = 0.1
# A long poll whose first event is younger than this was keeping up with the feed: free of
# the token's rate limit, as one that waited (app/api/plumbing/token_limits.py).
KEEPING_UP = timedelta(seconds=1)
MAX_WAIT = 60
_NEVER = 2**63  # no event id is ever after this one


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
    # The access check's transaction ends here, and the request leaves the admission gate:
    # while it waits it holds no connection, no thread and no place (app/edge/admission.py).
    session.commit()
    gate: Gate = request.app.state.gate
    ticket: Ticket | None = getattr(request.state, "admission", None)
    if ticket is not None:
        ticket.give_back()
    engine: Engine = request.app.state.engine
    arrived = time.monotonic()
    deadline = arrived + wait
    poll = long_poll(request.scope)  # a token's long poll: counted here, or free
    waited = wait > 0 and await _wait_for_news(request, gate, engine, campaign_id, after_id, wait)
    if waited and after is not None:
        # Woken with the others waiting on this feed: one body for all of them (issue 50).
        if poll is not None:
            poll.free()
        body = await _woken_page(request, gate, engine, campaign_id, after_id, limit)
        return Response(body, media_type="application/json")
    while True:
        # A poll that waited decides its access again after the read (issue 46): a token
        # revoked or a member removed before that check was so before the read too, so the
        # page holds no event committed after it; one revoked later was valid at the read.
        items = await _shared_page(
            gate,
            engine,
            campaign_id,
            after_id,
            limit + 1,
            shared=bool(wait),
            recheck=request if waited else None,
        )
        if poll is not None:
            await _charge(poll, waited, items, limit)
        early = arrived + COLLECT_SECONDS - time.monotonic()
        if wait and not waited and len(items) <= limit and early > 0:
            # Answered at once with the newest events (not a backlog's full page): as a
            # woken poll does, it takes what the next moment brings too, so a follower that
            # asks again at once makes at most one poll per COLLECT_SECONDS.
            await asyncio.sleep(early)
            items = await _shared_page(gate, engine, campaign_id, after_id, limit + 1, shared=True)
        page = FeedPage(
            items=items[:limit],
            next=items[:limit][-1].cursor if items else events.cursor_for(after_id),
            more=len(items) > limit,
        )
        if after is not None:
            return page
        # The first page changes only when an event is added to it: its last id is its version.
        etag = f'W/"feed-{campaign_id}-{limit}-{page.next}"'
        if request.headers.get("if-none-match") != etag:
            return Response(
                page.model_dump_json(), media_type="application/json", headers={"ETag": etag}
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0 or await request.is_disconnected():
            return Response(status_code=304, headers={"ETag": etag})
        # A long poll with the ETag of the page it has waits for that page to change, as
        # one without waits for an event (it used to answer 304 at once: a bot looped hot).
        # A full first page never changes: then the wait is the whole time.
        seen = _NEVER if len(items) >= limit else (items[-1].id if items else after_id)
        waited = await _wait_for_news(request, gate, engine, campaign_id, seen, remaining)


async def _charge(poll: LongPoll, waited: bool, items: list[FeedEventPublic], limit: int) -> None:
    """A long poll that waited is free, and so is one that came just after an event (its
    first is younger than KEEPING_UP): a follower that asked again at once and found what was
    committed meanwhile. One that reads older events (a backlog) counts (issue 46)."""
    first = items[0] if items else None
    keeping_up = (
        first is not None
        and len(items) <= limit
        and utcnow() - as_utc(first.created_at) < KEEPING_UP
    )
    if waited or keeping_up:
        poll.free()
    else:
        await poll.count()


async def _wait_for_news(
    request: Request, gate: Gate, engine: Engine, campaign_id: int, after: int, wait: float
) -> bool:
    """Until the campaign has an event after ``after``, the time is up or the client left;
    then, having waited and found news, ``WOKEN_COLLECT_SECONDS`` more to take what comes
    with it. However many wait, one of them reads the newest id per interval for all
    (``_newest``). True when it waited (nothing was there at first): such a poll does not
    count against its token's rate limit (app/api/plumbing/token_limits.py)."""
    deadline = time.monotonic() + wait
    waited = False
    while True:
        newest = await _newest.newest(campaign_id, lambda: _read_newest(gate, engine, campaign_id))
        remaining = deadline - time.monotonic()
        if newest > after:
            if waited:  # woken: what is committed in the next moment comes in this page too
                await asyncio.sleep(min(WOKEN_COLLECT_SECONDS, max(0.0, remaining)))
            return waited
        if remaining <= 0 or await request.is_disconnected():
            return waited
        waited = True
        await _news_or_timeout(campaign_id, min(POLL_SECONDS, remaining))


async def _woken_page(
    request: Request, gate: Gate, engine: Engine, campaign_id: int, after: int, limit: int
) -> bytes:
    """The page of a poll that waited and was woken. The head (the newest id) is known
    first; the poll's access is then decided again in a transaction that began after it
    was read, so a token revoked (a member removed) before the decision was so before the
    head too, and the page stops at the head: it holds no event committed after a
    revocation that refuses the poll (issue 46). The body is built once per (campaign,
    cursor, limit, reader kind, head) for every poll that asks (app/api/feed_wake.py)."""
    head = await _newest.newest(campaign_id, lambda: _read_newest(gate, engine, campaign_id))
    kind = await _rechecks.decide(request, gate, engine)

    async def build() -> bytes:
        async with gate.place():
            return await run_in_threadpool(_page_body, engine, campaign_id, after, limit, head)

    body = await _woken_pages.body((campaign_id, after, limit, kind, head), build)
    await _turns.turn()
    return body


def _page_body(engine: Engine, campaign_id: int, after: int, limit: int, head: int) -> bytes:
    with session_scope(engine, writes=False) as session:
        rows = events.read_feed(
            session, campaign_id=campaign_id, after=after, limit=limit + 1, upto=head
        )
    items = [feed_item(e) for e in rows]
    page = FeedPage(
        items=items[:limit],
        next=items[:limit][-1].cursor if items else events.cursor_for(after),
        more=len(items) > limit,
    )
    return page.model_dump_json().encode()


_rechecks = Rechecks()
_woken_pages = WokenPages()
_turns = Turns()


class NewestIds:
    """Each waited-on campaign's newest event id as last read, shared by this process's
    waiters: however many wait, one of them reads it per interval, for all."""

    def __init__(self) -> None:
        self._read: dict[int, tuple[float, int]] = {}
        self._reading: dict[int, Future[int]] = {}
        # Raised by ``advance``: a reading begun before a commit here is not kept after it.
        self._forgotten: dict[int, int] = {}
        self._lock = threading.Lock()

    def known(self, campaign_id: int) -> int | None:
        with self._lock:
            read = self._read.get(campaign_id)
        if read is None or time.monotonic() - read[0] >= POLL_SECONDS:
            return None
        return read[1]

    async def newest(self, campaign_id: int, read: Callable[[], Awaitable[int]]) -> int:
        """The known id, or one reading (``read``) shared by all who ask meanwhile."""
        while True:
            known = self.known(campaign_id)
            if known is not None:
                return known
            with self._lock:
                reading = self._reading.get(campaign_id)
                mine = reading is None
                if reading is None:
                    reading = self._reading[campaign_id] = Future()
                generation = self._forgotten.get(campaign_id, 0)
            if not mine:
                try:
                    return await asyncio.wrap_future(reading)
                except asyncio.CancelledError:
                    if reading.cancelled():  # its reader went away: read it again
                        continue
                    raise
            try:
                newest = await read()
            except BaseException as error:
                with self._lock:
                    del self._reading[campaign_id]
                if isinstance(error, Exception):
                    reading.set_exception(error)
                else:
                    reading.cancel()
                raise
            with self._lock:
                del self._reading[campaign_id]
                if self._forgotten.get(campaign_id, 0) == generation:
                    self._read[campaign_id] = (time.monotonic(), newest)
            reading.set_result(newest)
            return newest

    def advance(self, heads: dict[int, int]) -> None:
        """Ids committed in this process (``events.on_heads``): known at once, no reading."""
        with self._lock:
            now = time.monotonic()
            for campaign_id, newest in heads.items():
                self._forgotten[campaign_id] = self._forgotten.get(campaign_id, 0) + 1
                # A lower bound if two commits' callbacks cross: the next reading (at most
                # POLL_SECONDS on) finds the newer one.
                self._read[campaign_id] = (now, newest)


_newest = NewestIds()

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


def _wake(heads: dict[int, int]) -> None:
    """After a commit (in whatever thread): the newest ids it gave those feeds are known;
    wake this process's readers of them."""
    _newest.advance(heads)
    _notify(set(heads))


def _notify(campaign_ids: set[int]) -> None:
    with _waiters_lock:
        found = [w for c in campaign_ids for w in _waiters.get(c, ())]
    for loop, woken in found:
        if not loop.is_closed():
            loop.call_soon_threadsafe(woken.set)


events.on_heads(_wake)

# Pages being read, by (campaign, after, limit): readers woken together by one event mostly
# ask for the same page, and share one read of it.
_pages: dict[tuple[int, int, int], Future[list[FeedEventPublic]]] = {}
_pages_lock = threading.Lock()


async def _shared_page(
    gate: Gate,
    engine: Engine,
    campaign_id: int,
    after: int,
    limit: int,
    *,
    shared: bool,
    recheck: Request | None = None,
) -> list[FeedEventPublic]:
    """The page, read once for all who ask for it at the same moment (``shared``). With
    ``recheck``, that request's access is decided again after the read (in the same
    transaction when this request reads it): a refusal is raised, for this request only."""
    key = (campaign_id, after, limit)
    with _pages_lock:
        reading = _pages.get(key) if shared else None
        if reading is not None:
            mine = False
        else:
            mine, reading = True, Future()
            if shared:
                _pages[key] = reading
    if not mine:
        items = await asyncio.wrap_future(reading)
        if recheck is not None:
            async with gate.place():
                await run_in_threadpool(_recheck, engine, recheck)
        return items
    try:
        async with gate.place():
            items, refused = await run_in_threadpool(
                _page, engine, campaign_id, after, limit, recheck
            )
        reading.set_result(items)
    except BaseException as error:
        reading.set_exception(error)
        raise
    finally:
        with _pages_lock:
            if _pages.get(key) is reading:
                del _pages[key]
    if refused is not None:
        raise refused
    return items


def _recheck(engine: Engine, request: Request) -> None:
    with session_scope(engine, writes=False) as session:
        route_access.recheck(request, session)


async def _read_newest(gate: Gate, engine: Engine, campaign_id: int) -> int:
    async with gate.place():
        return await run_in_threadpool(_newest_id, engine, campaign_id)


def _newest_id(engine: Engine, campaign_id: int) -> int:
    with session_scope(engine, writes=False) as session:
        return events.newest_id(session, campaign_id=campaign_id)


def _page(
    engine: Engine, campaign_id: int, after: int, limit: int, recheck: Request | None
) -> tuple[list[FeedEventPublic], DomainError | None]:
    with session_scope(engine, writes=False) as session:
        rows = events.read_feed(session, campaign_id=campaign_id, after=after, limit=limit)
        refused = None
        if recheck is not None:
            try:
                route_access.recheck(recheck, session)
            except DomainError as error:  # the others sharing this read still get it
                refused = error
    return [feed_item(e) for e in rows], refused
