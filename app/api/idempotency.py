"""Idempotency-Key on POST: a retried request gets the first answer again instead of
recording a battle twice. The key is claimed before the command runs, so two identical
requests racing each other cannot both execute."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.db.models import IdempotencyRecord
from app.errors import problem

HEADER = "idempotency-key"
IN_PROGRESS = 0


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
        body = await request.body()
        # The caller's credentials are part of the request: another account reusing a key
        # never gets this one's answer.
        caller = request.headers.get("authorization", "") + request.headers.get("cookie", "")
        response = await self._handle(scope, key[:200], body, caller.encode())
        await response(scope, receive, send)

    async def _handle(self, scope: Scope, key: str, body: bytes, caller: bytes) -> Response:
        engine: Engine = scope["app"].state.engine
        target = f"POST {scope['path']}"
        digest = hashlib.sha256(target.encode() + b"\0" + caller + b"\0" + body).hexdigest()
        earlier = await run_in_threadpool(_claim, engine, key, target, digest)
        if earlier is not None:
            return _replay(earlier, digest)
        status, headers, content = await _run(self.app, scope, body)
        await run_in_threadpool(_settle, engine, key, status, content)
        return Response(content, status_code=status, headers=headers)


def _claim(engine: Engine, key: str, target: str, digest: str) -> IdempotencyRecord | None:
    """Insert the key, or return the record already holding it."""
    with Session(engine) as session:
        session.add(
            IdempotencyRecord(
                key=key, method_path=target, request_hash=digest, status_code=IN_PROGRESS
            )
        )
        try:
            session.commit()
            return None
        except IntegrityError:
            session.rollback()
        found = session.get(IdempotencyRecord, key)
        assert found is not None
        session.expunge(found)
        return found


def _settle(engine: Engine, key: str, status: int, content: bytes) -> None:
    """Keep the answer to replay it, unless the server failed (then a retry may run)."""
    with Session(engine) as session:
        record = session.get(IdempotencyRecord, key)
        assert record is not None
        if status >= 500:
            session.delete(record)
        else:
            record.status_code = status
            record.body = {"content": content.decode("utf-8", errors="replace")}
            session.add(record)
        session.commit()


def _replay(record: IdempotencyRecord, digest: str) -> Response:
    if record.request_hash != digest:
        return problem(
            422,
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a different request.",
            "Idempotency-Key",
        )
    if record.status_code == IN_PROGRESS:
        return problem(
            409,
            "idempotency_request_in_progress",
            "A request with this Idempotency-Key is still being processed; retry shortly.",
            "Idempotency-Key",
        )
    content: Any = json.loads(record.body.get("content") or "null")
    media = "application/problem+json" if record.status_code >= 400 else "application/json"
    return JSONResponse(
        content,
        status_code=record.status_code,
        media_type=media,
        headers={"Idempotent-Replayed": "true"},
    )


async def _run(app: ASGIApp, scope: Scope, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """Call the app with the body already read, and collect its whole response."""
    sent = False
    status = 500
    headers: dict[str, str] = {}
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
            for name, value in message.get("headers", []):
                if name.lower() != b"content-length":
                    headers[name.decode("latin-1")] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)  # type: ignore[arg-type]
    return status, headers, b"".join(chunks)
