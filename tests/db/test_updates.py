"""An UPDATE of many rows (app/db/updates.py): on PostgreSQL one statement over arrays of
values instead of one statement a row, with the same outcome as the driver's executemany on
both engines: each row its own values, a row changed twice changed in order, a row that is
gone still noticed by the ORM."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, bindparam, delete, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select

from app.db import updates
from app.db.models import Campaign, Event, User

PAYLOADS: list[dict[str, Any]] = [
    {"units": [1, 2.5, None, True], "name": 'Sæmund\'s "Ætherblade" \\ back'},
    {},
    {"nested": {"deep": [{"x": "y"}]}, "big": "A" * 20_000},
    {"null": None},
    {"list": []},
]


@pytest.fixture
def rewrites(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements sent as one: recorded from the module's own decision."""
    taken: list[str] = []
    real = updates._rewrite

    def recorded(statement: str, rows: Any, context: Any) -> Any:
        rewritten = real(statement, rows, context)
        if rewritten is not None:
            taken.append(rewritten[0])
        return rewritten

    monkeypatch.setattr(updates, "_rewrite", recorded)
    return taken


def _campaigns(engine: Engine, count: int) -> list[int]:
    with Session(engine) as session:
        rows = [Campaign(name=f"Campaign {n}") for n in range(count)]
        session.add_all(rows)
        for row in rows:
            session.flush()
            session.add(Event(campaign_id=row.id or 0, kind="test", payload={"n": 0}))
        session.commit()
        return [row.id or 0 for row in rows]


def test_each_row_gets_its_own_values(engine: Engine, rewrites: list[str]) -> None:
    """A flush that changes five campaigns and their events the same way (text, a flag, a
    time, JSON with quotes, backslashes and 20 KB): every value read back as written."""
    ids = _campaigns(engine, 5)
    start = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    with Session(engine) as session:
        for n, row in enumerate(session.exec(select(Campaign).order_by(col(Campaign.id)))):
            row.name = f"Vigilus {n}"
            row.public = n % 2 == 0
            row.created_at = start + timedelta(minutes=n)
        events = session.exec(select(Event).order_by(col(Event.campaign_id))).all()
        for n, event in enumerate(events):
            event.payload = PAYLOADS[n]
            event.kind = f"kind {n}"
            event.created_at = start + timedelta(hours=n)
        session.commit()
    with Session(engine) as session:
        campaigns = session.exec(select(Campaign).order_by(col(Campaign.id))).all()
        events = session.exec(select(Event).order_by(col(Event.campaign_id))).all()
    assert [c.id for c in campaigns] == ids
    assert [c.name for c in campaigns] == [f"Vigilus {n}" for n in range(5)]
    assert [c.public for c in campaigns] == [True, False, True, False, True]
    assert [c.created_at for c in campaigns] == [start + timedelta(minutes=n) for n in range(5)]
    assert [e.payload for e in events] == PAYLOADS
    assert [e.kind for e in events] == [f"kind {n}" for n in range(5)]
    assert [e.created_at for e in events] == [start + timedelta(hours=n) for n in range(5)]
    sent_whole = [sql.split(" SET ")[0] for sql in rewrites]
    if engine.dialect.name == "postgresql":
        # the ORM sends each campaign's row on its own (not an executemany): events only
        assert sent_whole == ["UPDATE event"]
    else:
        assert sent_whole == []  # SQLite runs executemany in-process: nothing to gain


def test_a_row_given_twice_takes_its_values_in_order(engine: Engine, rewrites: list[str]) -> None:
    """As executemany would: the later values stand (sent row by row, not as one)."""
    ids = _campaigns(engine, 3)
    table = Campaign.__table__  # type: ignore[attr-defined]
    statement = update(table).where(table.c.id == bindparam("k")).values(name=bindparam("n"))
    rows = [{"k": ids[0], "n": "first"}, {"k": ids[1], "n": "other"}, {"k": ids[0], "n": "last"}]
    with Session(engine) as session:
        session.execute(statement, rows)
        session.commit()
    with Session(engine) as session:
        names = session.exec(select(Campaign.name).order_by(col(Campaign.id))).all()
    assert list(names) == ["last", "other", "Campaign 2"]
    assert rewrites == []


def test_a_row_deleted_meanwhile_fails_the_flush_and_changes_nothing(engine: Engine) -> None:
    """The ORM counts the rows an UPDATE matched; one fewer than it changed is a stale
    copy, refused, and the transaction's other changes roll back with it."""
    ids = _campaigns(engine, 4)
    with Session(engine, expire_on_commit=False) as session:
        rows = session.exec(select(Campaign).order_by(col(Campaign.id))).all()
        session.commit()  # the copies kept, the transaction over (SQLite's writers queue)
        with Session(engine) as other:
            other.execute(delete(Event).where(col(Event.campaign_id) == ids[2]))
            other.execute(delete(Campaign).where(col(Campaign.id) == ids[2]))
            other.commit()
        for row in rows:
            row.name = "renamed"
        if engine.dialect.supports_sane_multi_rowcount:
            with pytest.raises(StaleDataError):
                session.commit()
        else:  # SQLite's driver counts no rows of an executemany
            session.commit()
    with Session(engine) as session:
        names = session.exec(select(Campaign.name).order_by(col(Campaign.id))).all()
    expected = "Campaign" if engine.dialect.supports_sane_multi_rowcount else "renamed"
    assert [name.split(" ")[0] for name in names] == [expected] * 3


def test_sql_sent_as_text_goes_row_by_row(engine: Engine, rewrites: list[str]) -> None:
    """A statement written as the driver's own text has no column types to build arrays of:
    executemany sends it as it is."""
    ids = _campaigns(engine, 3)
    mark = "%(n)s" if engine.dialect.name == "postgresql" else ":n"
    key = "%(k)s" if engine.dialect.name == "postgresql" else ":k"
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"UPDATE campaign SET name={mark} WHERE campaign.id = {key}",
            [{"k": campaign_id, "n": f"Armageddon {campaign_id}"} for campaign_id in ids],
        )
    with Session(engine) as session:
        names = session.exec(select(Campaign.name).order_by(col(Campaign.id))).all()
    assert list(names) == [f"Armageddon {campaign_id}" for campaign_id in ids]
    assert rewrites == []


def test_a_broken_constraint_is_the_same_error_and_changes_nothing(
    engine: Engine, rewrites: list[str]
) -> None:
    """Three accounts renamed in one flush, two to the same name: the database's refusal
    comes back as SQLAlchemy's IntegrityError (what the app maps to an answer), whichever
    way the rows went, and no account is renamed."""
    with Session(engine) as session:
        session.add_all(User(username=f"player{n}", password_hash="x") for n in range(3))
        session.commit()
    with Session(engine) as session:
        users = session.exec(select(User).order_by(col(User.id))).all()
        for user, name in zip(users, ["abaddon", "abaddon", "cypher"], strict=True):
            user.username = name
        with pytest.raises(IntegrityError):
            session.commit()
    with Session(engine) as session:
        names = session.exec(select(User.username).order_by(col(User.id))).all()
    assert list(names) == ["player0", "player1", "player2"]
    assert len(rewrites) == (1 if engine.dialect.name == "postgresql" else 0)
