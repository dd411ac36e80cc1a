"""The JSON API's cached reads (issue 50): a body built once per version and kept per
process, an ETag naming that version, 304 while the client's copy still matches.

The version is read from the database on every request (one cheap query), after the
route's access rule decided who may read: a cached body is never older than the database
says and never reaches a caller the rule refuses. app/edge/read_cache.py holds the store
(the pages use it too); it is re-exported here for the API's routes."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

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

__all__ = ["VersionedBodies", "cached_json", "cached_read", "ends_read_early", "read_cache"]

V = TypeVar("V")
Built = tuple[bytes, dict[str, str]]

JSON = "application/json"


def read_cache(request: Request) -> VersionedBodies:
    cache: VersionedBodies = request.app.state.read_cache
    return cache


async def cached_read(
    request: Request,
    session: Session,
    *,
    held: V | None,
    version: Callable[[], V],
    key: Callable[[V], tuple[Hashable, str]],
    build: Callable[[], Built],
) -> Response:
    """A cached JSON read (a route marked ``ends_read_early``): a hit is answered on the
    event loop from ``held``, the versions its access check read (``key`` makes the kept
    body's key and ETag of them); otherwise, in the thread pool, the versions are read
    (``version``) and the body kept under them is sent, or built (``build``) and kept."""
    found = key(held) if held is not None else None

    def read() -> Response:
        kept_key, etag = key(version())
        cache = read_cache(request)
        return cached_json(request, session, cache=cache, key=kept_key, etag=etag, build=build)

    return await _kept_or_built(request, session, found, read)


async def _kept_or_built(
    request: Request,
    session: Session,
    found: tuple[Hashable, str] | None,
    build: Callable[[], Response],
) -> Response:
    """The kept answer for ``found`` (key, ETag: from the versions the access check read),
    else ``build``'s, in the thread pool (it reads the database, in one transaction)."""
    if found is not None:
        kept = _kept(request, read_cache(request), *found)
        if kept is not None:
            return kept
    snapshot_reads(session)
    return await run_in_threadpool(build)


def cached_json(
    request: Request,
    session: Session,
    *,
    cache: VersionedBodies,
    key: Hashable,
    etag: str,
    build: Callable[[], Built],
) -> Response:
    """The read's answer: 304 if If-None-Match names ``etag``, else the body kept under
    ``key`` (built by ``build``, which gives the JSON and any headers, on a miss)."""
    kept = _kept(request, cache, key, etag)
    if kept is not None:
        return kept
    fresh_build(session)
    body, headers = build()
    cache.put(key, body, headers)
    return kept_body(request, cache, key, etag, body, headers, media_type=JSON)


def _kept(request: Request, cache: VersionedBodies, key: Hashable, etag: str) -> Response | None:
    """304 if If-None-Match names ``etag``; the body kept under ``key``; else None. No
    database work: safe on the event loop."""
    found = cache.get_with_headers(key)
    if etag_matches(request, etag):
        return not_modified(etag, found[1] if found else None)
    if found is None:
        return None
    return kept_body(request, cache, key, etag, *found, media_type=JSON)
