"""A per-process cache of built Order of Battle bodies, keyed by force id and version.

The force's version rises with every change (see app.db.models), so a cached body is only
ever served for the exact state it was built from; nothing needs to be invalidated."""

from __future__ import annotations

import threading

from cachetools import LRUCache


class VersionedBodies:
    def __init__(self, size: int = 512) -> None:
        self._bodies: LRUCache[tuple[int, int], bytes] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, key: tuple[int, int]) -> bytes | None:
        with self._lock:
            return self._bodies.get(key)

    def put(self, key: tuple[int, int], body: bytes) -> None:
        with self._lock:
            self._bodies[key] = body
