"""The two checks a load balancer or systemd asks (issue 35): ``/health``, the process is
alive (cheap, on the event loop, touching nothing); ``/health/ready``, the process can do
its work: the database answers, the rate-limit store answers where one is configured, and
the disks it writes to have room. A 503 names what failed."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from app.edge.limits import RateLimits
from app.faults import DATABASE_RETRY_AFTER, database_fault

MB = 1024 * 1024


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str


class Readiness(BaseModel):
    """What /health/ready answers, ready (200) or not (503)."""

    model_config = ConfigDict(extra="forbid")
    status: str = Field(description="`ready` or `unavailable`")
    failed: list[str] = Field(
        description="the checks that failed: database, rate_limit_store, disk"
    )
    checks: dict[str, str] = Field(description="each check's finding in words")


def install_health(app: FastAPI) -> None:
    @app.get("/health", tags=["service"], summary="Liveness check", operation_id="health")
    async def health() -> dict[str, str]:  # on the event loop: no thread, no connection
        return {"status": "ok"}

    @app.get(
        "/health/ready",
        tags=["service"],
        operation_id="health_ready",
        summary="Readiness check: the database, the rate-limit store, free disk",
        response_model=Readiness,
        responses={
            503: {"model": Readiness, "description": "Not ready: `failed` names what is missing"}
        },
    )
    async def ready(request: Request) -> JSONResponse:
        checks = await run_in_threadpool(readiness, request.app)
        failed = [name for name, check in checks.items() if not check.ok]
        body: dict[str, Any] = {
            "status": "unavailable" if failed else "ready",
            "failed": failed,
            "checks": {name: check.detail for name, check in checks.items()},
        }
        response = JSONResponse(body, status_code=503 if failed else 200)
        if failed:
            response.headers["Retry-After"] = str(DATABASE_RETRY_AFTER)
        return response


def readiness(app: FastAPI) -> dict[str, Check]:
    return {
        "database": _database(app.state.engine),
        "rate_limit_store": _rate_limit_store(app.state.rate_limits),
        "disk": _disk(_written_folders(app), app.state.min_free_disk_mb),
    }


def _database(engine: Engine) -> Check:
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
    except Exception as error:  # whatever it is, the database is not there for requests
        database_fault(error)  # logged once per outage, as the requests' own failures are
        first_line = str(getattr(error, "orig", None) or error).strip().splitlines()
        return Check(False, f"unavailable: {first_line[0] if first_line else type(error)}")
    return Check(True, "ok")


def _rate_limit_store(limits: RateLimits) -> Check:
    answers = limits.shared_store_answers()
    if answers is None:
        return Check(True, "not configured: each process counts alone")
    return Check(answers, "ok" if answers else "unreachable: each process counts alone meanwhile")


def _written_folders(app: FastAPI) -> list[Path]:
    """Where this process writes: the photo store, and SQLite's file (PostgreSQL's disk is
    its server's, watched there)."""
    folders = []
    root = getattr(app.state.photos, "root", None)
    if isinstance(root, Path):
        folders.append(root)
    engine: Engine = app.state.engine
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        folders.append(Path(str(engine.url.database)).parent)
    return folders


def _disk(folders: list[Path], min_free_mb: int) -> Check:
    short = []
    for folder in folders:
        existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if existing is None:
            continue
        free = shutil.disk_usage(existing).free // MB
        if free < min_free_mb:
            short.append(f"{free} MB free in {folder}")
    if short:
        return Check(False, f"low: {', '.join(short)} (at least {min_free_mb} MB wanted)")
    return Check(True, f"ok: at least {min_free_mb} MB free where the app writes")
