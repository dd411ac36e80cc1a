"""One error vocabulary. Domain errors carry a stable code; one handler renders them as
``application/problem+json`` so expected failures are never a 500."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.rules.errors import RuleError


class DomainError(RuleError):
    """An application error with its HTTP status (rule errors default to 422)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int,
        field: str | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(code, message, field=field)
        self.status = status
        self.retry_after = retry_after  # seconds, sent as Retry-After (429, 503)


class NotFound(DomainError):
    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(code, message, status=404, field=field)


def problem(
    status: int,
    code: str,
    detail: str,
    field: str | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"/problems/{code}",
        "title": code.replace("_", " ").capitalize(),
        "status": status,
        "code": code,
        "detail": detail,
    }
    if field is not None:
        body["field"] = field
    for key, value in (extra or {}).items():
        body.setdefault(key, value)
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


ErrorPage = Callable[[Request, int, str, str], Response]
MACHINE_PATHS = ("/api/", "/health", "/openapi.json", "/docs", "/redoc", "/static/")


def respond(
    request: Request,
    status: int,
    code: str,
    detail: str,
    field: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Response:
    """problem+json for the API; for the website's pages, the page the web layer installed
    as ``app.state.error_page`` (the same code and words, as HTML)."""
    error_page: ErrorPage | None = getattr(request.app.state, "error_page", None)
    if error_page is not None and not request.url.path.startswith(MACHINE_PATHS):
        return error_page(request, status, code, detail)
    return problem(status, code, detail, field, extra)


def refusal(request: Request, exc: RuleError) -> Response:
    """The answer to a typed error: its status (422 for a rule's), and Retry-After."""
    status = exc.status if isinstance(exc, DomainError) else 422
    response = respond(
        request, status, exc.code, exc.message, exc.path or exc.field, getattr(exc, "extra", None)
    )
    if isinstance(exc, DomainError) and exc.retry_after is not None:
        response.headers["Retry-After"] = str(exc.retry_after)
    return response


async def _rule_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RuleError)
    return refusal(request, exc)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    if first.get("type") == "json_invalid":
        detail = json_error(await _body(request), first.get("loc", ()))
        return respond(request, 422, "request_invalid", detail)
    if tuple(first.get("loc", ())) == ("body",) and not _json_content(request):
        # FastAPI reads a body of another content type as bytes, and said only "Input should
        # be a valid dictionary" (issue 46).
        sent = request.headers.get("content-type", "")[:100]
        detail = (
            "Content-Type: the body must be JSON, sent with Content-Type: application/json; "
            + (f"this request's is {sent}." if sent else "this request sent none.")
        )
        return respond(request, 422, "request_invalid", detail, "Content-Type")
    field = field_path([p for p in first.get("loc", ()) if p not in ("body", "query")]) or None
    detail = f"{field}: {first.get('msg')}" if field else str(first.get("msg"))
    return respond(request, 422, "request_invalid", detail, field)


def _json_content(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


async def _body(request: Request) -> bytes:
    try:
        return await request.body()
    except RuntimeError:  # the stream was consumed and not kept: say less
        return b""


def json_error(body: bytes, location: Any) -> str:
    """Where a body stops being JSON, in words: a line and a column (the parser's byte
    offset, which it gave as the field ``[47]``, read like a list index)."""
    try:
        json.loads(body.decode("utf-8"))
    except json.JSONDecodeError as error:
        return (
            f"The body is not valid JSON: {error.msg.lower()} at line {error.lineno}, "
            f"column {error.colno}."
        )
    except UnicodeDecodeError:
        pass
    offset = next((p for p in reversed(list(location)) if isinstance(p, int)), None)
    where = f" at character {offset + 1}" if offset is not None else ""
    return f"The body is not valid JSON{where}."


def utf8_error(body: bytes) -> str | None:
    """Why a body is not UTF-8 text, in words; None when it is."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        line = body.count(b"\n", 0, error.start) + 1
        column = error.start - (body.rfind(b"\n", 0, error.start) + 1) + 1
        return (
            f"The body is not UTF-8 text: byte {error.start + 1} (line {line}, column "
            f"{column}, 0x{body[error.start]:02x}) cannot be read; send JSON as UTF-8."
        )
    return None


def field_path(location: list[Any]) -> str:
    """A request field as a client writes it: ``sides[0].out_of_action_choices``."""
    path = ""
    for part in location:
        if isinstance(part, str) and ("[" in part or part[:1].isupper()):
            continue  # the member of a union pydantic tried (list[int], NamedDice)
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    detail = str(exc.detail)
    if exc.status_code == 400 and (why := utf8_error(await _body(request))):
        code, detail = "utf8_invalid", why  # FastAPI's "error parsing the body", named
    response = respond(request, exc.status_code, code, detail)
    response.headers.update(exc.headers or {})
    if exc.status_code == 405:
        response.headers["Allow"] = ", ".join(allowed_methods(request))
    return response


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers at this path. Starlette's own `Allow` names only the
    first route it matched, and GET and POST on one path are two routes here (RFC 9110:
    a 405 lists all of them). Each method is tried against the routes as the router would."""
    routes = request.app.router.routes
    allowed = [
        method
        for method in _METHODS
        if any(r.matches({**request.scope, "method": method})[0] == Match.FULL for r in routes)
    ]
    if "GET" in allowed and "HEAD" not in allowed:  # answered as a GET (app/edge/hardening.py)
        allowed.insert(allowed.index("GET") + 1, "HEAD")
    return allowed


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def unexpected(request: Request) -> Response:
    """A bug: log it server-side (uvicorn does), tell the client nothing of its inside."""
    return respond(
        request, 500, "internal_error", "Something went wrong on our side; it was logged."
    )


async def _unexpected(request: Request, exc: Exception) -> Response:
    return unexpected(request)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(Exception, _unexpected)
    app.add_exception_handler(RuleError, _rule_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
