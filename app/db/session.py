"""One transaction per command: the session dependency commits on success and rolls back
on any error, so a refused command leaves the database exactly as it was."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Annotated, Any, TypeVar
from weakref import WeakKeyDictionary

from fastapi import Depends, Request
from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.util import greenlet_spawn
from sqlalchemy.util.concurrency import in_greenlet
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.config import get_settings
from app.db.engine import NO_TRANSACTION, is_async, make_engine, make_loop_engine
from app.db.flights import flights


@cache
def get_engine() -> Engine:
    return make_engine(get_settings().effective_database_url)


@contextmanager
def session_scope(engine: Engine | None = None, *, writes: bool = True) -> Iterator[Session]:
    bind = engine or get_engine()
    if writes:
        bind = _writing(bind)
    with Session(bind, expire_on_commit=False, info={"writes": writes}) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


async def get_session(request: Request) -> AsyncIterator[Session]:
    """The request's transaction, on the engine the app was created with. A middleware may
    leave ``before_commit`` in the request's state: it runs inside this transaction (the
    Idempotency-Key is marked committed together with the command's changes).

    Async, so opening it costs no thread hand-off (a Session connects only at its first
    statement, in the route's thread); the end (commit or roll back, then close) is one
    hand-off, since it talks to the database (issue 41)."""
    writes = request.method not in ("GET", "HEAD", "OPTIONS")
    engine: Engine = request.app.state.engine
    handed = taken_over(request)
    if handed is not None:
        session = handed
    elif request.method == "GET" and getattr(_endpoint(request), QUICK_READ, False):
        session = quick_read_session(engine)
    else:
        bind = _writing(engine) if writes else engine
        session = Session(bind, expire_on_commit=False, info={"writes": writes, "engine": engine})
    try:
        yield session
    except BaseException:
        if _nothing_open(session):
            session.close()
        else:
            await run_in_threadpool(_roll_back, session)
        raise
    if _nothing_open(session):
        session.close()  # no database work: no hand-off (a cached read's hit, issue 50)
        return
    await run_in_threadpool(_commit, session, getattr(request.state, "before_commit", None))


# A cached read's route carries this mark (app/api/plumbing/cache.py ends_read_early): its
# access check is one statement, which needs no transaction around it, and it ends the read
# once decided, so a hit costs one statement and no BEGIN or COMMIT (issue 50).
QUICK_READ = "ends_read_early"


F = TypeVar("F", bound=Callable[..., object])
R = TypeVar("R")


def ends_read_early(endpoint: F) -> F:
    """Marks a cached read (an API route or a page): its access check ends the read's
    transaction as soon as it has decided (``end_quick_read``), having read the versions
    the body is kept by; a hit then needs no more database work, and the request's end no
    thread hand-off. A miss builds in a transaction again (``snapshot_reads``)."""
    setattr(endpoint, QUICK_READ, True)
    return endpoint


def quick_read_session(engine: Engine) -> Session:
    """A cached read's session: statement by statement (no BEGIN) until the read asks for
    one transaction again (``snapshot_reads``), its access check on the event loop where
    ``engine``'s database allows (below)."""
    bind = _statement_by_statement(engine)
    info: dict[str, Any] = {"writes": False, "engine": engine, QUICK_READ: True}
    loop = loop_engine_of(engine)
    if loop is not None:
        info[FALLBACK], info[ON_LOOP], info[ASYNC] = bind, True, is_async(loop)
        bind = _statement_by_statement(loop)
    return Session(bind, expire_on_commit=False, info=info)


# A quick read decided before routing (app/api/plumbing/kept_lane.py) that found nothing
# kept hands its session on to the route: the route goes on from that decision (its
# target, the versions it read) instead of asking the same statement again.
HANDED = "crusade.decided_read"
DECIDED = "decided_early"


def hand_over(request: Request, session: Session, decided: Hashable, left: list[Any]) -> None:
    """Leave ``session``, whose access check has decided the request ``decided`` (the route
    and its parameters), for the route's own dependency to take (``taken_over``), with what
    the check left to run after the answer (``left``: recording a token's use)."""
    session.info[DECIDED] = (decided, left)
    request.scope["state"][HANDED] = session


def taken_over(request: Request) -> Session | None:
    found: Session | None = request.scope.get("state", {}).pop(HANDED, None)
    return found


def decided_early(session: Session) -> tuple[Hashable, list[Any]] | None:
    """What a handed-over session's access check decided, and what it left to run (None:
    nothing decided yet)."""
    early: tuple[Hashable, list[Any]] | None = session.info.get(DECIDED)
    return early


def end_quick_read(session: Session) -> None:
    """Called by the access checks once they have decided (``get_session`` marked the
    quick read's session)."""
    if session.info.get(QUICK_READ):
        session.commit()


def kept_for_read(session: Session, name: str) -> dict[Any, Any] | None:
    """A memo named ``name`` kept in a read's own session: a read changes nothing, so what
    it asked once stays true for it (a member's role, a force's access target). None for a
    session that writes, which must ask again."""
    if session.info.get("writes") is not False:
        return None
    kept: dict[Any, Any] = session.info.setdefault(name, {})
    return kept


# A quick read's access check runs on the event loop: on SQLite through the loop's own
# connection, on PostgreSQL awaiting its asyncio twin (app/db/engine.py make_loop_engine):
# no thread hand-off, which cost a cached read a third of its time (issue 50). It must
# leave nothing open on that connection when it returns to the loop: it ends the read
# (``end_quick_read``) or rolls it back.
ON_LOOP = "access_on_loop"
FALLBACK = "access_fallback"
ASYNC = "access_async"
_LOOP_ENGINES: WeakKeyDictionary[Engine, Engine | None] = WeakKeyDictionary()
_LOOP_LOCK = threading.Lock()


def loop_engine_of(engine: Engine) -> Engine | None:
    """The engine the quick reads' checks use on the event loop, for ``engine``'s database
    (None: an in-memory SQLite database has none); made once per engine."""
    with _LOOP_LOCK:
        if engine not in _LOOP_ENGINES:
            _LOOP_ENGINES[engine] = make_loop_engine(engine)
        return _LOOP_ENGINES[engine]


async def decided_on_loop(
    session: Session, decide: Callable[[], None], *, sqlite: bool = True
) -> bool:
    """Run the access check ``decide`` here, on the event loop, when this read may (True
    once decided; a refusal is raised). False when it may not (``sqlite`` False: not on
    SQLite's loop connection), or when the file was busy (its WAL being recovered, say):
    the session is then back on the thread pool's engine, for the caller to decide there.

    On PostgreSQL the check runs in a greenlet whose statements await the driver's asyncio
    flavour (SQLAlchemy's bridge, as its AsyncSession does): the round trip holds neither
    the loop nor a thread. The session goes back to the thread pool's engine after it, for
    whatever the read does next in a thread."""
    if not session.info.get(ON_LOOP):
        return False
    if session.info.get(ASYNC):
        try:
            await greenlet_spawn(_decide_here, session, decide)
        except DBAPIError as error:
            if not error.connection_invalidated:
                raise
            return False  # a pooled connection the server had closed (it restarted, say)
        finally:
            session.bind, session.info[ON_LOOP] = session.info[FALLBACK], False
        return True
    if not sqlite:
        session.bind, session.info[ON_LOOP] = session.info[FALLBACK], False
        return False
    try:
        _decide_here(session, decide)
    except OperationalError:  # the file busy: in the thread pool, which may wait for it
        session.bind, session.info[ON_LOOP] = session.info[FALLBACK], False
        return False
    return True


def shared_read(session: Session, key: Hashable, fetch: Callable[[], R]) -> R:
    """``fetch()``, one statement of a quick read's access check. Awaited on the loop on
    PostgreSQL, it is shared with the other requests asking the same (``key``) at the same
    moment, each taking only an answer read after it asked (app/db/flights.py)."""
    if session.info.get(ASYNC) and session.info.get(ON_LOOP) and in_greenlet():
        answer: R = flights().ask(key, fetch)
        return answer
    return fetch()


def quick_statement(session: Session, statement: Any, params: dict[str, Any]) -> Any:
    """The first row of ``statement``. A quick read outside any transaction asks on a
    connection of its own for the moment (one statement needs no transaction, and the
    session's would cost a cached read's check a tenth of its time); otherwise in the
    session's transaction."""
    bind = session.get_bind()
    if session.info.get(QUICK_READ) and not session.in_transaction() and isinstance(bind, Engine):
        with bind.connect() as connection:
            return connection.execute(statement, params).first()
    return session.connection().execute(statement, params).first()


def _decide_here(session: Session, decide: Callable[[], None]) -> None:
    try:
        decide()
    except BaseException:
        session.rollback()
        raise
    if session.in_transaction():  # not a quick read after all: nothing stays on the loop's
        session.commit()


def _endpoint(request: Request) -> object:
    route = request.scope.get("route")
    return getattr(route, "endpoint", None)


def _writing(engine: Engine) -> Engine:
    """``engine`` for a command that writes: on SQLite it takes the write lock up front."""
    return _with_options(engine, "writing", sqlite_begin="IMMEDIATE")


def _statement_by_statement(engine: Engine) -> Engine:
    if engine.dialect.name == "sqlite":
        return _with_options(engine, "quick", sqlite_begin=NO_TRANSACTION)
    return _with_options(engine, "quick", isolation_level="AUTOCOMMIT")


# An engine with options is a new object each time it is asked for (a tenth of a cached
# read's own work, issue 50): made once per engine and kind, kept on the engine itself (a
# cache beside it would keep every engine a test made alive: each refers to its engine).
OPTIONED = "_crusade_optioned"


def _with_options(engine: Engine, kind: str, **options: Any) -> Engine:
    kept: dict[str, Engine] | None = engine.__dict__.get(OPTIONED)
    if kept is None:
        kept = engine.__dict__.setdefault(OPTIONED, {})
    found = kept.get(kind)
    if found is None:
        found = kept[kind] = engine.execution_options(**options)
    return found


def snapshot_reads(session: Session) -> None:
    """From here on, this read's statements share one transaction again (a quick read
    whose body must be built from one consistent state): before its next statement."""
    if not session.in_transaction():
        session.bind = session.info["engine"]


def _nothing_open(session: Session) -> bool:
    """A read whose transaction has already ended (or never began) holds no connection:
    closing it talks to no database."""
    return not session.info["writes"] and not session.in_transaction()


def _commit(session: Session, before_commit: Callable[[Session], None] | None) -> None:
    with session:
        try:
            if session.info["writes"] and before_commit is not None:
                before_commit(session)
            session.commit()
        except BaseException:
            session.rollback()
            raise


def _roll_back(session: Session) -> None:
    with session:
        session.rollback()


def end_transaction(session: Session) -> None:
    """Commit what the request's transaction holds so far (its access check's reads) and
    hand its connection back, for a command about to do slow work that needs no database
    (decoding a photo, issue 33): no lock is held meanwhile, on SQLite the write lock that
    a writing request takes at its first statement. The next statement begins a new
    transaction, which the request's dependency commits or rolls back as usual; the
    command reads again whatever it decided on before. Never inside a savepoint."""
    if session.in_nested_transaction():
        raise RuntimeError("end_transaction inside a savepoint")
    session.commit()


@event.listens_for(Session, "before_flush")
def _reads_never_write(session: Session, _context: Any, _instances: Any) -> None:
    """A request that reads must not write: on SQLite a read turned write fails as soon as
    another writer got there first ('database is locked'), so it is a bug, caught here."""
    if session.info.get("writes") is False and (session.new or session.dirty or session.deleted):
        raise RuntimeError("a read-only transaction tried to write")


# scope="function": commit (or roll back) before the response is sent, so a client never
# sees a success that is not yet in the database.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
