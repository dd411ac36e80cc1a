"""Protections every response and request gets: security headers, bounded request bodies
(app/edge/bodies.py: size, the process's budget, the least rate), JSON nested within a
bound, text without NUL characters, and integer path ids checked before anything reads
them. CSRF checks are app/edge/csrf.py; rate limits (login, tokens, the PIN lockout)
app/edge/limits.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any
from urllib.parse import unquote_plus

from fastapi import Request
from fastapi.dependencies.models import Dependant
from python_multipart.multipart import parse_options_header
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.edge.bodies import (
    MAX_BODY,
    MAX_PHOTO_BODY,
    MAX_ROSTER_BODY,
    BodyBudget,
    BodyLimits,
    Reservation,
    read_body,
)
from app.errors import DomainError, refusal, unexpected
from app.faults import database_fault

__all__ = ["MAX_BODY", "MAX_PHOTO_BODY", "MAX_ROSTER_BODY", "HardeningMiddleware"]

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
        b"base-uri 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
# Ids fit a 32-bit column on every engine, as the bodies' Id (app/edge/schemas/common.py) does.
ID_LIMIT = 2**31
# A JSON escape of U+0000: an odd number of backslashes before u0000 (an even number is an
# escaped backslash followed by the letters u0000).
JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
# A multipart part's Content-Disposition header line (its value, leading spaces dropped):
# found line by line without splitting the headers into a list.
DISPOSITION = re.compile(rb"(?:\A|\r\n)content-disposition: *([^\r\n]*)", re.IGNORECASE)


class HardeningMiddleware:
    """Adds the security headers to every response (a 500 included), reads the body first
    within its limits (app/edge/bodies.py: 413, 503, 408), refuses JSON nested too deep and
    any text holding U+0000 (422), then replays the body to the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.fallback = (BodyLimits(), BodyBudget())  # an app that set none (a bare test app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        if scope["method"] == "HEAD":  # RFC 9110: a GET's headers without its body
            scope = {**scope, "method": "GET"}
            send = _without_body(send)
        limits, budget = self._bodies(scope)
        if _declares_no_body(scope):  # nothing to read, limit or pace (a GET, mostly)
            try:
                _check_text(scope, b"", limits)  # its path and query
            except DomainError as refused:
                await _refuse(scope, receive, send, refused)
                return
            await _run(self.app, scope, receive, send)
            return
        reservation = Reservation(budget, limits)
        try:
            try:
                body = await read_body(scope, receive, limits, reservation)
                if body is None:  # the client left before sending its body
                    return
                _check_json_depth(scope, body, limits.json_depth)
                _check_text(scope, body, limits)
            except DomainError as refused:
                await _refuse(scope, receive, send, refused)
                return
            except Exception as error:  # the database down while the upload's caller is read
                fault = database_fault(error)
                if fault is None:
                    raise
                await _refuse(scope, receive, send, fault)
                return
            await _run(self.app, scope, _replay(body, receive), send)
        finally:
            reservation.release()

    def _bodies(self, scope: Scope) -> tuple[BodyLimits, BodyBudget]:
        app = scope.get("app")
        state = getattr(app, "state", None)
        limits = getattr(state, "body_limits", None)
        budget = getattr(state, "body_budget", None)
        if limits is None or budget is None:
            return self.fallback
        return limits, budget


def _declares_no_body(scope: Scope) -> bool:
    """A request with neither Content-Length nor Transfer-Encoding has an empty body (HTTP/1.1,
    RFC 9112 section 6.3; bytes after its headers are the next request): reading it costs a
    cancel scope and a turn of the loop for nothing, a tenth of a cached read (issue 50)."""
    return not any(
        name in (b"content-length", b"transfer-encoding") for name, _value in scope["headers"]
    )


async def _refuse(scope: Scope, receive: Receive, send: Send, refused: DomainError) -> None:
    answer = refusal(Request(scope), refused)
    await answer(scope, receive, send)


def _without_body(send: Send) -> Send:
    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return headers_only


def _replay(body: bytes, receive: Receive) -> Receive:
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()  # after the body: wait for the client to disconnect
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _run(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Starlette answers an unexpected exception in its outermost layer, outside this one
    and so without our headers: answer it here, then re-raise so the server logs it. The
    database being down is no bug: answered 503 (or 507), not re-raised."""
    started = False

    async def tracking(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, tracking)
    except Exception as error:
        if started:
            raise
        # The database down in a layer outside the handlers (the Idempotency-Key's claim):
        # said as the handlers would say it, and logged once per outage, not here.
        fault = database_fault(error)
        if fault is None:
            await unexpected(Request(scope))(scope, receive, send)
            raise
        await refusal(Request(scope), fault)(scope, receive, send)


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped


# --- JSON nested within a bound ----------------------------------------------------------

# A JSON string, closed or running to the end of the body (possessive: never read twice).
JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
STEP = [0] * 256
STEP[ord("[")] = STEP[ord("{")] = 1
STEP[ord("]")] = STEP[ord("}")] = -1


def nests_deeper_than(body: bytes, bound: int) -> bool:
    """Whether arrays and objects nest more than ``bound`` deep in ``body`` read as JSON
    (brackets inside strings do not count). Found without parsing: a count, else one pass
    that drops the strings and one over the brackets left, all in C loops."""
    if body.count(b"[") + body.count(b"{") <= bound:
        return False
    brackets = JSON_STRING.sub(b"", body).translate(None, NOT_BRACKETS)
    return max(accumulate(map(STEP.__getitem__, brackets)), default=0) > bound


def _check_json_depth(scope: Scope, body: bytes, bound: int) -> None:
    """A body FastAPI would read as JSON (no Content-Type, or one naming JSON) nests at most
    ``bound`` deep: deeper, Python's parser runs out of stack (a RecursionError, a 500)."""
    kind = dict(scope["headers"]).get(b"content-type")
    if not body or (kind is not None and b"json" not in kind.lower()):
        return
    if nests_deeper_than(body, bound):
        raise DomainError(
            "json_too_deep",
            f"body: JSON arrays and objects may nest at most {bound} deep.",
            status=422,
            field="body",
        )


# --- text without U+0000 -----------------------------------------------------------------


def _check_text(scope: Scope, body: bytes, limits: BodyLimits) -> None:
    """U+0000 is refused in every path, query and body, in one place: PostgreSQL cannot store
    it in a text column (a 500 on whatever field took it), and no name or note needs it.
    Found by byte searches: a body is parsed only to name the field, and only when small."""
    if "\x00" in scope["path"]:
        raise _nul_refused("path")
    query: bytes = scope.get("query_string", b"")
    at = _form_nul(query)
    if at is not None:
        raise _nul_refused(_form_field(query, at) or "query")
    if not body:
        return
    # The media type and boundary as Starlette reads them (the same parser): a check that
    # read them differently could be walked around (`BOUNDARY=`, ` Multipart/Form-Data`).
    media_type, options = parse_options_header(dict(scope["headers"]).get(b"content-type"))
    if media_type == b"application/x-www-form-urlencoded":
        at = _form_nul(body)
        if at is not None:
            raise _nul_refused(_form_field(body, at) or "form")
    elif media_type == b"multipart/form-data":
        field = _multipart_text_field_with_nul(options.get(b"boundary", b""), body)
        if field is not None:
            raise _nul_refused(field)
    elif b"\x00" in body or JSON_NUL.search(body):  # JSON, or what FastAPI reads as JSON
        raise _nul_refused(_json_field(body, limits) or "body")


def _nul_refused(field: str) -> DomainError:
    return DomainError(
        "text_invalid",
        f"{field}: text may not contain the NUL character (U+0000).",
        status=422,
        field=field,
    )


def _form_nul(encoded: bytes) -> int | None:
    """Where URL-encoded text first holds U+0000: a raw NUL, or %00 (every %00 decodes to
    NUL: no escape can swallow its '%')."""
    found = [at for at in (encoded.find(b"%00"), encoded.find(b"\x00")) if at >= 0]
    return min(found) if found else None


def _form_field(encoded: bytes, at: int) -> str:
    """The name of the pair holding byte ``at`` (pairs cut at '&', as parse_qsl cuts them)."""
    start = encoded.rfind(b"&", 0, at) + 1
    end = encoded.find(b"&", at)
    pair = encoded[start : end if end >= 0 else len(encoded)]
    name = pair.partition(b"=")[0][:200]
    return unquote_plus(name.decode("utf-8", "replace")).replace("\x00", "")


def _multipart_text_field_with_nul(boundary: bytes, body: bytes) -> str | None:
    """The name of the first text part holding NUL (in its value or its headers). File
    parts (a part whose Content-Disposition has a filename, e.g. a zipped roster) are
    binary and may hold any byte in their content: they are checked by whoever reads them,
    never stored as text as they come.

    Parts are cut where python-multipart (Starlette's parser) cuts them: at CRLF, two
    hyphens and the boundary, followed by CRLF or by the closing hyphens; and a part is a
    file exactly when Starlette makes it one: its last Content-Disposition header, parsed
    as Starlette parses it, has a ``filename`` parameter. A file part that a looser reading
    found (``x="filename="``, a boundary look-alike inside a value) would hide a text
    field's NUL. Parts are found by position: no content is copied."""
    if not boundary or b"\x00" not in body:
        return None
    for headers, start, end in _multipart_parts(boundary, body):
        disposition = None
        for line in DISPOSITION.finditer(headers):  # the last one counts, as in Starlette
            disposition = line.group(1)
        _kind, options = parse_options_header(disposition)
        named = options.get(b"name", b"form").decode("utf-8", "replace")
        if b"\x00" in headers or (
            b"filename" not in options and body.find(b"\x00", start, end) >= 0
        ):
            return named.replace("\x00", "") or "form"
    return None


def _multipart_parts(boundary: bytes, body: bytes) -> Iterator[tuple[bytes, int, int]]:
    """Each part's headers, and where its content starts and ends, up to the closing
    delimiter."""
    # The first delimiter has no CRLF of its own: it may open the body.
    delimiter = re.compile(rb"(?:\A|\r\n)--" + re.escape(boundary) + rb"(\r\n|--)")
    start: int | None = None
    for found in delimiter.finditer(body):
        if start is not None:
            yield _split_part(body, start, found.start())
        if found.group(1) == b"--":
            return
        start = found.end()
    if start is not None:  # no closing delimiter: the rest is the last part
        yield _split_part(body, start, len(body))


def _split_part(body: bytes, start: int, end: int) -> tuple[bytes, int, int]:
    if body.startswith(b"\r\n", start, end):  # no headers at all
        return b"", start + 2, end
    blank = body.find(b"\r\n\r\n", start, end)
    if blank < 0:
        return body[start:end], end, end
    return body[start:blank], blank + 4, end


def _json_field(body: bytes, limits: BodyLimits) -> str | None:
    """The field holding NUL, for the refusal's words: read only from a small body, nested
    within the bound (else the refusal names the body)."""
    if len(body) > limits.small or nests_deeper_than(body, limits.json_depth):
        return None
    try:
        document = json.loads(body)
    except ValueError:
        return None
    return next(_nul_paths(document, ""), None)


def _nul_paths(value: Any, path: str) -> Iterator[str]:
    """Dotted paths (as in the 422s of validation) of the strings holding U+0000."""
    if isinstance(value, str) and "\x00" in value:
        yield path or "body"
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            yield from ([inner] if "\x00" in key else _nul_paths(item, inner))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nul_paths(item, f"{path}.{index}" if path else str(index))


# --- integer path ids --------------------------------------------------------------------


async def check_path_ids(request: Request) -> None:
    """App-wide dependency, so it runs before every other one (the access check reads ids
    from the path before the route parses them): each path parameter a route declares as
    an int must be ASCII digits below 2^31. Python's int() takes '١' and fails on '¹', and
    the database refuses ids past its integer column: both were 500s. Async: it only reads
    the request, so it costs no thread hand-off (issue 41)."""
    route = request.scope.get("route")
    dependant: Dependant | None = getattr(route, "dependant", None)
    if dependant is None:
        return
    for name in _int_path_params(dependant):
        raw = str(request.path_params.get(name, ""))
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) < ID_LIMIT):
            raise DomainError(
                "request_invalid",
                f"path.{name}: must be a whole number from 1 to {ID_LIMIT - 1:,}.",
                status=422,
                field=f"path.{name}",
            )


def _int_path_params(dependant: Dependant) -> Iterator[str]:
    for field in dependant.path_params:
        if field.field_info.annotation is int:
            yield field.name
    for sub in dependant.dependencies:
        yield from _int_path_params(sub)
