"""The JSON API's cached reads (issue 50): a body built once per version and kept per
process, an ETag naming that version, 304 while the client's copy still matches.

The version is read from the database on every request (one cheap query), after the
route's access rule decided who may read: a cached body is never older than the database
says and never reaches a caller the rule refuses. app/edge/read_cache.py holds the store
(the pages use it too); it is re-exported here for the API's routes."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from fastapi import Request, Response
from sqlmodel import Session

from app.edge.read_cache import VersionedBodies, etag_matches, fresh_build, not_modified

__all__ = ["VersionedBodies", "cached_json", "read_cache"]

JSON = "application/json"


def read_cache(request: Request) -> VersionedBodies:
    cache: VersionedBodies = request.app.state.read_cache
    return cache


def cached_json(
    request: Request,
    session: Session,
    *,
    cache: VersionedBodies,
    key: Hashable,
    etag: str,
    build: Callable[[], tuple[bytes, dict[str, str]]],
) -> Response:
    """The read's answer: 304 if If-None-Match names ``etag``, else the body kept under
    ``key`` (built by ``build``, which gives the JSON and any headers, on a miss)."""
    found = cache.get_with_headers(key)
    if etag_matches(request, etag):
        return not_modified(etag, found[1] if found else None)
    if found is None:
        fresh_build(session)
        found = build()
        cache.put(key, *found)
    body, headers = found
    return Response(body, media_type=JSON, headers={**headers, "ETag": etag})
