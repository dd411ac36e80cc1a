"""The engine's own choices (app/db/engine.py): JSON columns through orjson, and pooled
PostgreSQL connections pinged only when the server said something while they sat idle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select

from app.db.engine import make_engine
from app.db.models import Campaign, Event
from tests.faults.outages import drop_connections


def _event(engine: Engine, payload: dict[Any, Any]) -> int:
    with Session(engine) as session:
        campaign = Campaign(name="Vigilus")
        session.add(campaign)
        session.flush()
        row = Event(campaign_id=campaign.id or 0, kind="test", payload=payload)
        session.add(row)
        session.commit()
        return row.id or 0


def test_json_columns_read_back_as_the_stdlib_would_have_written_them(engine: Engine) -> None:
    """Keys that are not strings come back as strings (json.dumps's way), nested values and
    non-ASCII text unchanged, and the stored text is JSON the stdlib reads alike."""
    payload = {7: "seven", "units": [1, 2.5, None, True], "name": "Sæmund's Ætherblade", "x": {}}
    event_id = _event(engine, payload)
    expected = {"7": "seven", "units": [1, 2.5, None, True], "name": "Sæmund's Ætherblade", "x": {}}
    with Session(engine) as session:
        assert session.exec(select(Event.payload).where(Event.id == event_id)).one() == expected
        stored = session.execute(
            text("SELECT CAST(payload AS TEXT) FROM event WHERE id = :id"), {"id": event_id}
        ).scalar_one()
    assert json.loads(stored) == expected


def _count_pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    real = engine.dialect.do_ping

    def counted(connection: Any) -> bool:
        pings.append(1)
        return real(connection)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    return pings


def _write(engine: Engine, name: str) -> None:
    with Session(engine) as session:
        session.add(Campaign(name=name))
        session.commit()


def _names(engine: Engine) -> list[str]:
    with Session(engine) as session:
        return list(session.exec(select(Campaign.name).order_by(Campaign.id)).all())


def test_a_quiet_pooled_connection_is_used_without_a_ping(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No round trip before each use (SQLite has no server, and pings nothing)."""
    _write(engine, "Vigilus")  # the pool holds a connection now
    pings = _count_pings(engine, monkeypatch)
    for n in range(5):
        _write(engine, f"Pariah Nexus {n}")
    assert pings == []
    assert len(_names(engine)) == 6


def test_connections_the_server_dropped_in_the_pool_are_replaced_before_a_write(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: every pooled connection terminated moments after its last use (as a
    restart or an administrator would): the server's farewell on the socket gets each
    pinged, found dead and replaced, and the writes made right after succeed. SQLite has
    no server to drop them: the same writes succeed."""
    _write(engine, "Vigilus")
    pings = _count_pings(engine, monkeypatch)
    if engine.dialect.name == "postgresql":
        assert drop_connections(engine) >= 1
    for n in range(3):
        _write(engine, f"Pariah Nexus {n}")
    assert _names(engine) == ["Vigilus", "Pariah Nexus 0", "Pariah Nexus 1", "Pariah Nexus 2"]
    assert bool(pings) == (engine.dialect.name == "postgresql")


def test_an_sqlite_file_that_vanished_is_not_made_again_empty(tmp_path: Path) -> None:
    """A served database file moved away for a moment: connecting fails (the app answers 503
    meanwhile) and no empty database appears in its place; once it is back, its rows are
    read again. A file that does not exist yet is made by the first connection."""
    path = tmp_path / "crusade.db"
    first = make_engine(f"sqlite:///{path}")
    with first.begin() as connection:  # an install's first start makes the file
        connection.execute(text("CREATE TABLE note (body TEXT)"))
        connection.execute(text("INSERT INTO note VALUES ('kept')"))
    first.dispose()
    assert path.exists()
    served = make_engine(f"sqlite:///{path}")
    aside = tmp_path / "crusade.db.aside"
    path.rename(aside)
    with pytest.raises(OperationalError, match="unable to open database file"):
        served.connect()
    assert not path.exists()
    aside.rename(path)
    with served.connect() as connection:
        assert connection.execute(text("SELECT body FROM note")).scalars().all() == ["kept"]
    served.dispose()
