"""Bodies built once per version and kept per process (issue 50), and the ETags that let a
client skip even those.

A key names what was built, whose it is and the version it was built from (read from the
database on each request: app.services.campaigns.versions). Versions only rise, so a body
is never served for a state other than the one it was built from, and nothing needs to be
invalidated: an old version's bodies simply age out of the LRU. Who may read is decided
before any lookup (the routes' access rules run first); a body that depends on who reads
has the viewer's kind in its key."""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections.abc import Hashable
from typing import Any

from cachetools import LRUCache
from fastapi import Request, Response
from sqlmodel import Session

from app.db.session import snapshot_reads
from app.edge.compression import COMPRESS_LEVEL, MINIMUM_SIZE


class VersionedBodies:
    """Built bodies by any hashable key (a tuple: what, id, version, viewer kind ...)."""

    def __init__(self, size: int = 512) -> None:
        self._bodies: LRUCache[Hashable, tuple[bytes, tuple[tuple[str, str], ...]]] = LRUCache(
            maxsize=size
        )
        self._parts: LRUCache[Hashable, dict[str, Any]] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many bodies are kept (a gzipped copy counts as one)."""
        with self._lock:
            return len(self._bodies)

    def get(self, key: Hashable) -> bytes | None:
        found = self.get_with_headers(key)
        return found[0] if found is not None else None

    def get_with_headers(self, key: Hashable) -> tuple[bytes, dict[str, str]] | None:
        with self._lock:
            found = self._bodies.get(key)
        return (found[0], dict(found[1])) if found is not None else None

    def put(self, key: Hashable, body: bytes, headers: dict[str, str] | None = None) -> None:
        with self._lock:
            self._bodies[key] = (body, tuple((headers or {}).items()))

    def gzipped(self, key: Hashable, body: bytes) -> bytes | None:
        """``body`` (kept under ``key``) compressed, once per key rather than per response
        as the compression middleware would; None for a body too small to be worth it."""
        if len(body) < MINIMUM_SIZE:
            return None
        gz_key = ("gzip", key)
        with self._lock:
            found = self._bodies.get(gz_key)
        if found is not None:
            return found[0]
        packed = gzip.compress(body, compresslevel=COMPRESS_LEVEL, mtime=0)
        with self._lock:
            self._bodies[gz_key] = (packed, ())
        return packed

    def kept(self, key: Hashable) -> dict[str, Any] | None:
        """A page's parts kept as they were built (rendered Markup and plain values), not
        as bytes: parsing them again on every hit cost a tenth of a page."""
        with self._lock:
            found = self._parts.get(key)
        return found

    def keep(self, key: Hashable, parts: dict[str, Any]) -> None:
        with self._lock:
            self._parts[key] = parts


def fresh_build(session: Session) -> None:
    """Before building a body to keep under a version just read: forget the rows the
    request loaded earlier (its access check's), which may be older than that version, and
    read the rest in one transaction (a quick read ended its first one early)."""
    session.expire_all()
    snapshot_reads(session)


def etag_matches(request: Request, etag: str) -> bool:
    """Whether If-None-Match names ``etag`` (a list, ``*`` and weak tags included)."""
    sent = request.headers.get("if-none-match")
    if not sent:
        return False
    tags = {t.strip().removeprefix("W/") for t in sent.split(",")}
    return "*" in tags or etag.removeprefix("W/") in tags


def accepts_gzip(request: Request) -> bool:
    return "gzip" in request.headers.get("accept-encoding", "")


def kept_body(
    request: Request,
    cache: VersionedBodies,
    key: Hashable,
    etag: str,
    body: bytes,
    headers: dict[str, str],
    *,
    media_type: str,
) -> Response:
    """A kept body as sent (a JSON read's, a visitor's page): its gzipped copy, made once
    per key, to a client that accepts it, else the body itself; with its ETag."""
    packed = cache.gzipped(key, body) if accepts_gzip(request) else None
    if packed is not None:  # the compression middleware lets an encoded body pass as it is
        encoded = {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return Response(packed, media_type=media_type, headers={**headers, **encoded, "ETag": etag})
    return Response(body, media_type=media_type, headers={**headers, "ETag": etag})


def not_modified(etag: str, headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=304, headers={"ETag": etag, **(headers or {})})


def page_etag(body: bytes, viewer: str) -> str:
    """A page's ETag: its bytes and who it was built for (a session's page holds its CSRF
    token and its own "waiting for you"), so a 304 never stands for another's page."""
    who = hashlib.sha256(viewer.encode()).digest()
    digest = hashlib.blake2b(body, digest_size=12, key=who).hexdigest()
    return f'W/"page-{digest}"'
