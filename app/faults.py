"""When something the app depends on fails: the database (down, or its disk full), the photo
store, the rate-limit store. Such a fault is said out loud, as a typed error with its own
code, status and Retry-After (503, or 507 for a full disk; never a 500), and logged once per
outage, not once per request (issue 35).

``database_fault`` reads a driver's error (SQLite's result code, PostgreSQL's SQLSTATE);
``storage_fault`` an OSError of the photo store; ``OUTAGES`` remembers what is down in this
process, logs the first failure and the recovery."""

from __future__ import annotations

import errno
import logging
import threading
import time

from sqlalchemy import event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.errors import DomainError

log = logging.getLogger("crusade.faults")

DATABASE_RETRY_AFTER = 5  # a restart of PostgreSQL, a failover: seconds
STORAGE_RETRY_AFTER = 60  # a full disk waits for an operator

DATABASE = "database"
DATABASE_DISK = "database disk"
PHOTO_STORE = "photo store"
RATE_LIMIT_STORE = "rate-limit store"

# SQLite's primary result codes (the low byte of an extended code).
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26
SQLITE_UNUSABLE = (SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_NOTADB)
# PostgreSQL's SQLSTATEs: disk_full, and the server going away or not yet taking connections
# (admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections); class 08 is
# every connection exception.
PG_DISK_FULL = "53100"
PG_UNAVAILABLE = ("57P01", "57P02", "57P03", "53300")
# What the operating system says of a disk with no room left (or a quota used up).
FULL_DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class Outages:
    """What is down in this process now. The first failure of an outage is logged (a
    warning), the rest of it is not; the first success after it logs the recovery."""

    def __init__(self) -> None:
        self._down: dict[str, float] = {}
        self._lock = threading.Lock()

    def down(self, name: str, reason: str) -> None:
        with self._lock:
            if name in self._down:
                return
            self._down[name] = time.monotonic()
        log.warning("%s unavailable: %s (not logged again until it is back)", name, reason)

    def up(self, name: str) -> None:
        if name not in self._down:  # the usual case: no lock, no cost
            return
        with self._lock:
            since = self._down.pop(name, None)
        if since is not None:
            log.warning("%s is back after %.0f s", name, time.monotonic() - since)

    def is_down(self, name: str) -> bool:
        return name in self._down

    def clear(self) -> None:
        with self._lock:
            self._down.clear()


OUTAGES = Outages()


def database_unavailable() -> DomainError:
    return DomainError(
        "database_unavailable",
        "The database is not answering at the moment; nothing was changed. "
        f"Try again in {DATABASE_RETRY_AFTER} seconds.",
        status=503,
        retry_after=DATABASE_RETRY_AFTER,
    )


def storage_full(what: str) -> DomainError:
    return DomainError(
        "storage_full",
        f"The server's {what} has no room left; nothing was changed. The server's operator "
        "has to free some space: try again later.",
        status=507,
        retry_after=STORAGE_RETRY_AFTER,
    )


def storage_unavailable(what: str) -> DomainError:
    return DomainError(
        "storage_unavailable",
        f"The server cannot write to its {what} at the moment; nothing was changed. "
        "Try again later.",
        status=503,
        retry_after=STORAGE_RETRY_AFTER,
    )


def database_fault(exc: BaseException) -> DomainError | None:
    """The error a driver's failure stands for when the database is down or its disk full
    (and logs the outage once); None for anything else (a conflict, a bug)."""
    if not isinstance(exc, DBAPIError):
        return None
    orig = exc.orig
    sqlite_code = getattr(orig, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        primary = sqlite_code & 0xFF
        if primary == SQLITE_FULL:
            OUTAGES.down(DATABASE_DISK, str(orig))
            return storage_full("disk")
        if primary in SQLITE_UNUSABLE:
            OUTAGES.down(DATABASE, str(orig))
            return database_unavailable()
        return None
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate == PG_DISK_FULL:
        OUTAGES.down(DATABASE_DISK, str(orig).strip())
        return storage_full("disk")
    lost = exc.connection_invalidated or (
        type(orig).__module__.startswith("psycopg")
        and type(orig).__name__ in ("OperationalError", "InterfaceError")
        and sqlstate is None  # psycopg's own: it could not connect, or lost the connection
    )
    if lost or (sqlstate is not None and (sqlstate[:2] == "08" or sqlstate in PG_UNAVAILABLE)):
        OUTAGES.down(DATABASE, str(orig).strip().splitlines()[0] if str(orig) else repr(orig))
        return database_unavailable()
    return None


def storage_fault(error: OSError, what: str) -> DomainError:
    """A store's failed write, as the error a client is answered with (and logged once)."""
    OUTAGES.down(what, f"{error.strerror or error} ({error.filename or ''})")
    if error.errno in FULL_DISK_ERRNOS:
        return storage_full(what)
    return storage_unavailable(what)


# --- recovery: the first transaction committed after an outage -----------------------------

_WROTE = "faults.wrote"


@event.listens_for(Session, "after_commit")
def _database_answered(session: Session) -> None:
    """A committed transaction: the database answers again (and its disk took a write)."""
    OUTAGES.up(DATABASE)
    if session.info.pop(_WROTE, False):
        OUTAGES.up(DATABASE_DISK)


@event.listens_for(Session, "after_flush")
def _wrote(session: Session, _context: object) -> None:
    if OUTAGES.is_down(DATABASE_DISK):  # only then is a write worth remembering
        session.info[_WROTE] = True


@event.listens_for(Session, "after_soft_rollback")
def _not_written(session: Session, _previous: object) -> None:
    session.info.pop(_WROTE, None)
