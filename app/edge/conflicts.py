"""The last line against races and overload: a uniqueness the database enforced, or a PostgreSQL
deadlock between two commands, is a clash with another request, answered 409 (try again)
and never a 500; a request that found no room in time is 503 with Retry-After, and so is one
that found the database down (app/faults.py; its disk full: 507). Commands
that can race check first (409 with their own words); this handler is for the moment
between that check and the insert."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import Response
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.edge.admission import Overloaded, busy_problem
from app.errors import refusal, respond
from app.faults import database_fault

# PostgreSQL's serialization_failure and deadlock_detected: the command may simply be retried.
RETRYABLE_SQLSTATES = ("40001", "40P01")


async def _clash(request: Request, exc: Exception) -> Response:
    return respond(
        request,
        409,
        "concurrent_change",
        "This clashed with another change made at the same moment; reload and try again.",
    )


async def _operational(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DBAPIError)
    if getattr(exc.orig, "sqlstate", None) in RETRYABLE_SQLSTATES:
        return await _clash(request, exc)
    if "database is locked" in str(exc.orig):  # SQLite's busy timeout ran out: nothing done
        return await _busy(request, exc)
    fault = database_fault(exc)  # the database down or its disk full: 503 / 507 (issue 35)
    if fault is not None:
        return refusal(request, fault)
    raise exc


async def _busy(request: Request, exc: Exception) -> Response:
    """The process or the database had no room in time (admission's wait, the connection
    pool's timeout): the transaction was rolled back, so the client may simply retry."""
    return busy_problem()


def install_conflict_handlers(app: FastAPI) -> None:
    app.add_exception_handler(IntegrityError, _clash)
    app.add_exception_handler(DBAPIError, _operational)  # OperationalError and its kin
    app.add_exception_handler(PoolTimeout, _busy)
    app.add_exception_handler(Overloaded, _busy)
