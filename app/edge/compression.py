"""Responses compressed on the way out (issue 49: a wizard step over a bad link at the
table), by Starlette's own GZipMiddleware. Bodies under 1 KB go as they are (the headers
would cost more than the saving); images, archives and event streams are never compressed
(already compressed, or meant to arrive piece by piece: Starlette's list of exclusions);
a streamed export is flushed chunk by chunk, so it still streams. Pages carry the CSRF
token masked per response (app/edge/csrf.py), so compression gives nothing away."""

from __future__ import annotations

from starlette.middleware.gzip import GZipMiddleware

MINIMUM_SIZE = 1024  # bytes: a smaller body is sent as it is
# zlib's level 6: within a few per cent of level 9's size at about half its work per page
COMPRESS_LEVEL = 6

__all__ = ["COMPRESS_LEVEL", "MINIMUM_SIZE", "GZipMiddleware"]
