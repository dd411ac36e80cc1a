"""Protections every response and request gets: security headers, a body size limit, text
without NUL characters, and integer path ids checked before anything reads them. CSRF
checks are app/edge/csrf.py; rate limits (login, tokens, the PIN lockout) app/edge/limits.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.dependencies.models import Dependant
from python_multipart.multipart import parse_options_header
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import DomainError, refusal, respond, unexpected
from app.faults import database_fault

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
MAX_BODY = 256 * 1024
# A photo upload (issue 23) is the one body allowed to be bigger: a phone's photo, plus the
# form around it. app/services/campaigns/photos.py refuses a photo over its own limit with its
# reason.
MAX_PHOTO_BODY = 48 * 1024 * 1024  # the website sends several photos in one form
PHOTO_UPLOAD = re.compile(r"^(?:/api/v1)?/battles/[0-9]{1,10}/photos$")
# A roster upload (issue 39) is the other: a real multi-detachment .ros runs to several
# hundred KB. Room for the largest .ros the reader takes (4 MB, MAX_ROSTER_BYTES in
# app/services/rosters/roster_parse.py, which refuses past it with its reason, zipped or not) and
# the form around it, or that file carried back zipped in base64 by the preview page.
MAX_ROSTER_BODY = 6 * 1024 * 1024
ROSTER_UPLOAD = re.compile(r"^(?:/api/v1)?/forces/[0-9]{1,10}/roster(?:/preview)?$")
# Ids fit a 32-bit column on every engine, as the bodies' Id (app/edge/schemas/common.py) does.
ID_LIMIT = 2**31
# A JSON escape of U+0000: an odd number of backslashes before u0000 (an even number is an
# escaped backslash followed by the letters u0000).
JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


class HardeningMiddleware:
    """Adds the security headers to every response (a 500 included), reads the body first
    and refuses one over MAX_BODY (413) or any text holding U+0000 (422), then replays the
    body to the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        if scope["method"] == "HEAD":  # RFC 9110: a GET's headers without its body
            scope = {**scope, "method": "GET"}
            send = _without_body(send)
        try:
            body = await _read_body(scope, receive)
            if body is None:  # the client left before sending its body
                return
            _check_text(scope, body)
        except DomainError as refused:
            answer = respond(
                Request(scope), refused.status, refused.code, refused.message, refused.field
            )
            await answer(scope, receive, send)
            return
        await _run(self.app, scope, _replay(body, receive), send)


def _without_body(send: Send) -> Send:
    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return headers_only


async def _read_body(scope: Scope, receive: Receive) -> bytes | None:
    """The whole body, read here so that no layer inside (the idempotency store, a form
    parser) meets the limit half-way through as an exception of its own."""
    limit = _body_limit(scope)
    declared = dict(scope["headers"]).get(b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:  # a chunked body declares no length: count it as it comes
            raise _too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


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


def _body_limit(scope: Scope) -> int:
    if scope["method"] == "POST" and PHOTO_UPLOAD.match(scope.get("path", "")):
        return MAX_PHOTO_BODY
    if scope["method"] == "POST" and ROSTER_UPLOAD.match(scope.get("path", "")):
        return MAX_ROSTER_BODY
    return MAX_BODY


def _too_large(limit: int = MAX_BODY) -> DomainError:
    return DomainError(
        "request_too_large", f"Request bodies are limited to {limit} bytes.", status=413
    )


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped


# --- text without U+0000 -----------------------------------------------------------------


def _check_text(scope: Scope, body: bytes) -> None:
    """U+0000 is refused in every path, query and body, in one place: PostgreSQL cannot store
    it in a text column (a 500 on whatever field took it), and no name or note needs it."""
    if "\x00" in scope["path"]:
        raise _nul_refused("path")
    query: bytes = scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        raise _nul_refused(_form_field(query) or "query")
    if not body:
        return
    # The media type and boundary as Starlette reads them (the same parser): a check that
    # read them differently could be walked around (`BOUNDARY=`, ` Multipart/Form-Data`).
    media_type, options = parse_options_header(dict(scope["headers"]).get(b"content-type"))
    if media_type == b"application/x-www-form-urlencoded":
        if b"%00" in body or b"\x00" in body:
            raise _nul_refused(_form_field(body) or "form")
    elif media_type == b"multipart/form-data":
        field = _multipart_text_field_with_nul(options.get(b"boundary", b""), body)
        if field is not None:
            raise _nul_refused(field)
    elif b"\x00" in body or JSON_NUL.search(body):  # JSON, or what FastAPI reads as JSON
        raise _nul_refused(_json_field(body) or "body")


def _nul_refused(field: str) -> DomainError:
    return DomainError(
        "text_invalid",
        f"{field}: text may not contain the NUL character (U+0000).",
        status=422,
        field=field,
    )


def _form_field(encoded: bytes) -> str | None:
    pairs = parse_qsl(encoded.decode("utf-8", "replace"), keep_blank_values=True)
    return next((k or "form" for k, v in pairs if "\x00" in k or "\x00" in v), None)


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
    field's NUL."""
    if not boundary or b"\x00" not in body:
        return None
    for headers, content in _multipart_parts(boundary, body):
        disposition = None
        for line in headers.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-disposition":
                disposition = value.lstrip(b" ")
        _kind, options = parse_options_header(disposition)
        named = options.get(b"name", b"form").decode("utf-8", "replace")
        if b"\x00" in headers or (b"filename" not in options and b"\x00" in content):
            return named.replace("\x00", "") or "form"
    return None


def _multipart_parts(boundary: bytes, body: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(headers, content) of each part, up to the closing delimiter."""
    data = b"\r\n" + body  # the first delimiter has no CRLF of its own
    delimiter = re.compile(re.escape(b"\r\n--" + boundary) + rb"(\r\n|--)")
    start: int | None = None
    for found in delimiter.finditer(data):
        if start is not None:
            yield _split_part(data[start : found.start()])
        if found.group(1) == b"--":
            return
        start = found.end()
    if start is not None:  # no closing delimiter: the rest is the last part
        yield _split_part(data[start:])


def _split_part(part: bytes) -> tuple[bytes, bytes]:
    if part.startswith(b"\r\n"):  # no headers at all
        return b"", part[2:]
    headers, _, content = part.partition(b"\r\n\r\n")
    return headers, content


def _json_field(body: bytes) -> str | None:
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
