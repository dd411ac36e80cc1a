"""The JSON API's cached reads (issue 50): a body built once per version and kept per
process, an ETag naming that version, 304 while the client's copy still matches.

The version is read from the database on every request (one cheap query), after the
route's access rule decided who may read: a cached body is never older than the database
says and never reaches a caller the rule refuses. app/edge/read_cache.py holds the store
(the pages use it too); it is re-exported here for the API's routes."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import Request, Response
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.db.session import ends_read_early, snapshot_reads
from app.edge.read_cache import (
    VersionedBodies,
    etag_matches,
    fresh_build,
    kept_body,
    not_modified,
)

__all__ = [
    "NOT_MODIFIED",
    "KeptRead",
    "VersionedBodies",
    "cached_json",
    "cached_read",
    "ends_read_early",
    "kept_answer",
    "kept_read",
    "read_cache",
]

V = TypeVar("V")
F = TypeVar("F", bound=Callable[..., object])
Built = tuple[bytes, dict[str, str]]

JSON = "application/json"
# What a kept read's route declares beside its 200 (responses.py adds the ETag headers).
NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "Unchanged since the ETag given in If-None-Match"}
}


def read_cache(request: Request) -> VersionedBodies:
    cache: VersionedBodies = request.app.state.read_cache
    return cache


@dataclass(frozen=True)
class KeptRead(Generic[V]):
    """How a cached read finds what it keeps: the versions its body is kept by, as its
    access check read them (``held``) or read afresh (``fresh``), of the one id its path
    names (``param``); and the key and ETag those versions make (``key``: of the id, the
    query as sent and the versions). The route and the early lane (kept_lane.py) both use
    it, so they cannot disagree on what a body is kept under."""

    param: str
    held: Callable[[Session, int], V | None]
    fresh: Callable[[Session, int], V]
    key: Callable[[int, str, V], tuple[Hashable, str]]

    def held_key(self, session: Session, ident: int, query: str) -> tuple[Hashable, str] | None:
        held = self.held(session, ident)
        return self.key(ident, query, held) if held is not None else None


KEPT_READ = "kept_read"


def kept_read(read: KeptRead[Any]) -> Callable[[F], F]:
    """Marks a cached read's route (it also ends its read early): the early lane answers
    its requests whose body is kept, before FastAPI's routing (kept_lane.py)."""

    def mark(endpoint: F) -> F:
        setattr(endpoint, KEPT_READ, read)
        return ends_read_early(endpoint)

    return mark


async def cached_read(
    request: Request,
    session: Session,
    read: KeptRead[V],
    ident: int,
    build: Callable[[], Built],
) -> Response:
    """A cached JSON read (a route marked ``kept_read``): a hit is answered on the event
    loop from the versions its access check read; otherwise, in the thread pool, the
    versions are read afresh and the body kept under them is sent, or built (``build``)
    and kept."""
    query = request.url.query
    found = read.held_key(session, ident, query)

    def built() -> Response:
        kept_key, etag = read.key(ident, query, read.fresh(session, ident))
        return cached_json(request, session, key=kept_key, etag=etag, build=build)

    return await _kept_or_built(request, session, found, built)


async def _kept_or_built(
    request: Request,
    session: Session,
    found: tuple[Hashable, str] | None,
    build: Callable[[], Response],
) -> Response:
    """The kept answer for ``found`` (key, ETag: from the versions the access check read),
    else ``build``'s, in the thread pool (it reads the database, in one transaction)."""
    if found is not None:
        kept = _kept(request, *found)
        if kept is not None:
            return kept
    snapshot_reads(session)
    return await run_in_threadpool(build)


def cached_json(
    request: Request,
    session: Session,
    *,
    key: Hashable,
    etag: str,
    build: Callable[[], Built],
) -> Response:
    """The read's answer: 304 if If-None-Match names ``etag``, else the body kept under
    ``key`` (built by ``build``, which gives the JSON and any headers, on a miss)."""
    kept = _kept(request, key, etag)
    if kept is not None:
        return kept
    fresh_build(session)
    body, headers = build()
    cache = read_cache(request)
    cache.put(key, body, headers)
    return kept_body(request, cache, key, etag, body, headers, media_type=JSON)


def _kept(request: Request, key: Hashable, etag: str) -> Response | None:
    """304 if If-None-Match names ``etag`` (kept body or not); the body kept under ``key``;
    else None. No database work: safe on the event loop."""
    kept = kept_answer(request, key, etag)
    if kept is None and etag_matches(request, etag):
        return not_modified(etag)
    return kept


def kept_answer(request: Request, key: Hashable, etag: str) -> Response | None:
    """The answer the route gives from a body it built and kept under ``key`` (304 while
    If-None-Match names ``etag``); None when no body is kept under it. No database work."""
    cache = read_cache(request)
    found = cache.get_with_headers(key)
    if found is None:
        return None
    if etag_matches(request, etag):
        return not_modified(etag, found[1])
    return kept_body(request, cache, key, etag, *found, media_type=JSON)
