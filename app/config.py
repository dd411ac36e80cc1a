"""Settings from the environment (or a .env file), validated once at start."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Address uvicorn binds to")
    port: int = Field(default=8000, ge=1, le=65535)
    data_dir: Path = Field(default=PROJECT_ROOT / "data", description="SQLite file lives here")
    database_url: str = Field(
        default="", description="SQLAlchemy URL; empty means SQLite in data_dir"
    )
    log_level: str = "info"

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'crusade.db'}"


@cache
def get_settings() -> Settings:
    return Settings()
