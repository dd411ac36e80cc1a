"""Settings from the environment (or a .env file), validated once at start."""

from __future__ import annotations

import secrets
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Address uvicorn binds to")
    port: int = Field(default=8000, ge=1, le=65535)
    data_dir: Path = Field(default=PROJECT_ROOT / "data", description="SQLite file lives here")
    photo_dir: Path | None = Field(
        default=None, description="Where battle photos are kept; empty means data_dir/photos"
    )
    database_url: str = Field(
        default="", description="SQLAlchemy URL; empty means SQLite in data_dir"
    )
    log_level: str = "info"
    public_url: str = Field(
        default="",
        pattern=r"^(https?://[^\s/]+(/[^\s]*)?)?$",
        description="Address players use (https://crusade.example.org); invite and reset links "
        "start with it. Empty: the address each request came in on",
    )
    secret_key: SecretStr | None = Field(
        default=None, description="Signs session cookies; generated into data_dir if unset"
    )
    session_days: int = Field(default=30, ge=1, le=365)
    password_hashing: Literal["strong", "fast"] = Field(
        default="strong", description="argon2 cost; 'fast' exists only to speed up test suites"
    )
    rate_limit_storage: str = Field(
        default="memory://",
        description="Where rate-limit counters live: memory:// (one process) or redis://...",
    )
    api_token_requests_per_minute: int = Field(
        default=300,
        ge=1,
        description="Requests one API token may make in any minute; beyond: 429 + Retry-After",
    )
    min_free_disk_mb: int = Field(
        default=200,
        ge=0,
        description="GET /health/ready answers 503 when a disk the app writes to (photos, "
        "SQLite's file) has less room than this",
    )

    # Chosen together (docs/deploy.md): requests at work < pooled connections < threads (40).
    max_requests_at_work: int = Field(
        default=8,
        ge=1,
        le=32,
        description="Requests of one app process working on the database at once; the rest "
        "wait their turn holding nothing (docs/deploy.md)",
    )
    request_queue_limit: int = Field(
        default=1000,
        ge=0,
        description="Requests one process lets wait for their turn; beyond it: 503 + Retry-After",
    )
    request_queue_seconds: float = Field(
        default=20.0,
        gt=0,
        le=300,
        description="How long a request may wait for its turn before it is answered 503",
    )

    photo_decodes: int = Field(
        default=1,
        ge=1,
        le=16,
        description="Photos one process decodes at once (each in a worker process: up to "
        "PHOTO_DECODE_MEMORY_MB and a core for a few seconds); the turns go round the users "
        "who wait (docs/security.md)",
    )
    photo_queue_seconds: float = Field(
        default=15.0,
        gt=0,
        le=120,
        description="How long an upload may wait for a decoding turn before it is answered "
        "503 + Retry-After",
    )
    photo_decode_seconds: float = Field(
        default=15.0,
        gt=0,
        le=120,
        description="Wall-clock time a photo's check or decode may take; its worker process "
        "is killed then (422 photo_too_complex)",
    )
    photo_decode_cpu_seconds: float = Field(
        default=6.0,
        ge=0.01,
        le=120,
        description="Processor time a photo's check or decode may use; the kernel ends its "
        "worker process then (RLIMIT_CPU; 422 photo_too_complex)",
    )
    photo_decode_memory_mb: int = Field(
        default=512,
        ge=32,
        le=8192,
        description="Memory a photo's check or decode may take beyond what its worker "
        "process holds at start (RLIMIT_AS); an allocation past it fails (422)",
    )
    upload_places: int = Field(
        default=2,
        ge=1,
        le=32,
        description="Of MAX_REQUESTS_AT_WORK, how many photo uploads may hold at once (at "
        "most all but one): the rest are kept for everything else",
    )

    # Request bodies (issue 45, app/edge/bodies.py; docs/security.md, Hardening).
    body_bytes_in_flight_mb: int = Field(
        default=128,
        ge=1,
        description="Request body bytes one process holds at once (bodies being read, and "
        "held until their request ends); a body past it is answered 503 + Retry-After before "
        "it is read. Bodies over 256 KB (uploads) may fill three quarters of it",
    )
    body_min_bytes_per_second: int = Field(
        default=4096,
        ge=0,
        description="The least rate a request body must come at, after a grace of "
        "BODY_RATE_SECONDS and over each span of as many seconds; slower: cut with 408. "
        "0: no minimum",
    )
    body_rate_seconds: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="The grace before a body's rate is measured, and the span it is measured over",
    )
    json_max_depth: int = Field(
        default=64,
        ge=1,
        le=500,
        description="How deep arrays and objects may nest in a JSON body; deeper: 422 "
        "json_too_deep",
    )

    webhook_allow_private: bool = Field(
        default=False,
        description="Let webhooks point at private, loopback or link-local addresses (tests, "
        "a bot on the same network); off, such URLs are refused (SSRF)",
    )

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'crusade.db'}"


@cache
def get_settings() -> Settings:
    return Settings()


def site_address(request_base_url: str) -> str:
    """Where links handed to other people point: PUBLIC_URL when set (behind a proxy the
    address a request came in on may be an internal one), else that address."""
    return (get_settings().public_url or request_base_url).rstrip("/")


def secret_key(settings: Settings) -> str:
    """SECRET_KEY from the environment, else one generated on first use and kept in the data
    directory (readable by its owner only) so sessions survive restarts. Never in the repo."""
    if settings.secret_key is not None:
        return settings.secret_key.get_secret_value()
    return _kept_secret_key(str(settings.data_dir / "secret_key"))


@cache
def _kept_secret_key(where: str) -> str:
    # Read once per process: every request that needs an access check asks for the key, and
    # reading the file each time cost a tenth of a cached read (issue 50). The file is made
    # once and never rewritten by the service; rotating it means a restart.
    path = Path(where)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(48), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()
