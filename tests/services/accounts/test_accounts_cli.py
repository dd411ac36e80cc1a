"""`crusade user create` and `crusade user reset-password`."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from app import cli
from app.config import Settings, get_settings, secret_key
from app.db.session import get_engine, session_scope
from app.services.accounts import accounts


@pytest.fixture
def fresh_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    get_settings.cache_clear()
    get_engine.cache_clear()
    yield tmp_path
    get_settings.cache_clear()
    get_engine.cache_clear()


def test_create_admin_then_reset_its_password(fresh_install: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(
        cli.app, ["user", "create", "orga", "--password", "a long password", "--admin"]
    )
    assert made.exit_code == 0 and "created site admin orga" in made.output
    second = runner.invoke(cli.app, ["user", "create", "pat", "--password", "another password"])
    assert "created user pat" in second.output
    link = runner.invoke(cli.app, ["user", "reset-password", "pat"]).output.strip()
    token = link.split("token=", 1)[1]
    with session_scope() as session:
        reset = accounts.reset_password(
            session, token=token, new="chosen anew!", key=secret_key(get_settings())
        )
        assert (
            accounts.authenticate(session, username="pat", password="chosen anew!").id == reset.id
        )


def test_reset_link_starts_with_public_url_when_set(
    fresh_install: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    runner.invoke(cli.app, ["user", "create", "pat", "--password", "a long password"])
    monkeypatch.setenv("PUBLIC_URL", "https://crusade.example.org")
    get_settings.cache_clear()
    link = runner.invoke(cli.app, ["user", "reset-password", "pat"]).output.strip()
    assert link.startswith("https://crusade.example.org/reset-password?token=")


def test_public_url_must_be_an_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBLIC_URL", "crusade.example.org")
    with pytest.raises(ValidationError, match="public_url"):
        Settings()


def test_secret_key_is_generated_once_and_private(
    fresh_install: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SECRET_KEY", raising=False)
    get_settings.cache_clear()
    first = secret_key(get_settings())
    assert secret_key(get_settings()) == first
    key_file = fresh_install / "secret_key"
    assert key_file.stat().st_mode & 0o077 == 0
    assert len(first) >= 48
