"""Idempotency-Key on POST: a retried request gets the first answer again instead of
recording a battle twice. The key is claimed before the command runs, so two identical
requests racing each other cannot both execute; see app/services/accounts/idempotency.py for how a
key whose request failed or whose process died becomes usable again."""

from __future__ import annotations

import hashlib
from functools import partial
from typing import Any

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import DomainError, problem
from app.services.accounts import idempotency
from app.services.accounts.idempotency import (
    CLAIM_SECONDS,
    COMMITTED,
    IN_PROGRESS,
    MAX_KEY,
    Earlier,
)

HEADER = "idempotency-key"
# Answer headers worth replaying (a web form's redirect needs its Location); never cookies.
REPLAYED_HEADERS = ("content-type", "location", "cache-control")


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        key = request.headers.get(HEADER)
        if not key:
            await self.app(scope, receive, send)
            return
        response = await self._handle(scope, key, await request.body(), _caller(request))
        await response(scope, receive, send)

    async def _handle(self, scope: Scope, key: str, body: bytes, caller: bytes) -> Response:
        if len(key) > MAX_KEY:
            return _refusal(
                DomainError(
                    "idempotency_key_invalid",
                    f"An Idempotency-Key is at most {MAX_KEY} characters.",
                    status=422,
                    field="Idempotency-Key",
                )
            )
        engine: Engine = scope["app"].state.engine
        target = f"POST {scope['path']}"
        digest = hashlib.sha256(target.encode() + b"\0" + caller + b"\0" + body).hexdigest()
        record = idempotency.record_key(caller, key)
        try:
            held = await run_in_threadpool(idempotency.claim, engine, record, target, digest)
        except DomainError as refused:
            return _refusal(refused)
        if isinstance(held, Earlier):
            return _replay(held, digest)
        # The command's transaction marks the key committed with its own changes.
        scope.setdefault("state", {})["before_commit"] = partial(
            idempotency.mark_committed, held=held
        )
        try:
            status, headers, content = await _run(self.app, scope, body)
        except BaseException:
            await run_in_threadpool(idempotency.release, engine, held)
            raise
        answer = {
            "content": content.decode("utf-8", errors="replace"),
            "headers": {
                k.decode("latin-1"): v.decode("latin-1")
                for k, v in headers
                if k.lower().decode("latin-1") in REPLAYED_HEADERS
            },
        }
        await run_in_threadpool(idempotency.settle, engine, held, status, answer)
        response = Response(content, status_code=status)
        length = [h for h in response.raw_headers if h[0] == b"content-length"]
        response.raw_headers = length + headers
        return response


def _caller(request: Request) -> bytes:
    """The caller's credentials are part of the request: another account reusing a key
    never gets this one's answer."""
    return (request.headers.get("authorization", "") + request.headers.get("cookie", "")).encode()


def _refusal(error: DomainError) -> Response:
    return problem(error.status, error.code, error.message, error.field)


def _replay(earlier: Earlier, digest: str) -> Response:
    if earlier.request_hash != digest:
        return problem(
            422,
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a different request.",
            "Idempotency-Key",
        )
    if earlier.status_code == IN_PROGRESS:
        wait = max(1, int(CLAIM_SECONDS - earlier.age_seconds))
        response = problem(
            409,
            "idempotency_request_in_progress",
            "A request with this Idempotency-Key is still being processed; retry shortly. "
            f"If it never finishes, the key can be used again in {wait} s.",
            "Idempotency-Key",
        )
        response.headers["Retry-After"] = str(min(wait, 5))
        return response
    if earlier.status_code == COMMITTED:
        return _committed_without_answer(earlier)
    answer: dict[str, Any] = earlier.body
    headers = {"Idempotent-Replayed": "true", **answer.get("headers", {})}
    if "content-type" not in {k.lower() for k in headers}:  # answers kept before headers were
        headers["content-type"] = (
            "application/problem+json" if earlier.status_code >= 400 else "application/json"
        )
    return Response(
        str(answer.get("content", "")).encode(),
        status_code=earlier.status_code,
        headers=headers,
    )


def _committed_without_answer(earlier: Earlier) -> Response:
    if not earlier.expired:  # the answer is on its way to the first caller
        response = problem(
            409,
            "idempotency_request_in_progress",
            "A request with this Idempotency-Key has just been carried out; retry shortly "
            "for its answer.",
            "Idempotency-Key",
        )
        response.headers["Retry-After"] = "1"
        return response
    return problem(
        409,
        "idempotency_request_applied",
        "The request with this Idempotency-Key was carried out, but the server stopped before "
        "keeping its answer; read the current state instead of sending it again.",
        "Idempotency-Key",
    )


Headers = list[tuple[bytes, bytes]]


async def _run(app: ASGIApp, scope: Scope, body: bytes) -> tuple[int, Headers, bytes]:
    """Call the app with the body already read, and collect its whole response."""
    sent = False
    status = 500
    headers: Headers = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            headers.extend(
                (name, value)
                for name, value in message.get("headers", [])
                if name.lower() != b"content-length"
            )
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)  # type: ignore[arg-type]
    return status, headers, b"".join(chunks)
