"""The query plans behind the league's main reads (issue 41): every statement a request
sends, run again under EXPLAIN (ANALYZE) on the same database, slowest first. Point it at a
league built by bench/league_bench.py (``--reuse`` keeps one) at two sizes of history and
compare: a plan whose time grows with the battles played lacks an index or reads history it
does not show. Prints figures; asserts nothing.

    .venv/bin/python bench/plans.py --database-url postgresql+psycopg://.../crusade_bench
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, text
from sqlmodel import Session, col, select

from app.db.engine import make_engine
from app.db.models import Campaign, Force
from app.main import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.* and tests.*
from bench.league_bench import USER, busiest_card, latest_battle, reads


def captured(engine: Engine, client: TestClient, path: str) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", keep)
    try:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
    finally:
        event.remove(engine, "before_cursor_execute", keep)
    return seen


def explain(engine: Engine, statement: str, parameters: Any) -> tuple[float, str]:
    """The statement's execution time (ms) and its plan, PostgreSQL or SQLite."""
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            driver = connection.connection.driver_connection
            assert driver is not None
            with driver.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, FORMAT TEXT) " + statement, parameters)
                lines = [row[0] for row in cursor.fetchall()]
            took = float(lines[-1].split(":")[1].split()[0])
            return took, "\n".join(lines)
        rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        return 0.0, "\n".join(str(r[-1]) for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--top", type=int, default=3, help="plans printed per request")
    args = parser.parse_args()
    engine = make_engine(args.database_url)
    with Session(engine) as session:
        campaign = session.exec(select(Campaign.id).order_by(col(Campaign.id))).first()
        force = session.exec(select(Force.id).where(Force.campaign_id == campaign)).first()
        battles = session.execute(text("SELECT count(*) FROM battle")).scalar_one()
    assert campaign is not None and force is not None
    world = {
        "campaign": campaign,
        "force": force,
        "card": busiest_card(engine, force),
        "battle": latest_battle(engine, force),
    }
    print(f"{engine.dialect.name}: campaign {campaign}, {battles} battles")
    with TestClient(create_app(engine)) as client:
        client.post("/api/v1/auth/login", json=USER)
        for name, path in reads(world).items():
            client.get(path)  # warm
            statements = captured(engine, client, path)
            timed = sorted(
                ((*explain(engine, s, p), s) for s, p in statements), key=lambda t: -t[0]
            )
            total = sum(t[0] for t in timed)
            print(f"\n== {name} ({path}): {len(statements)} statements, {total:.1f} ms in all")
            for took, plan, statement in timed[: args.top]:
                print(f"-- {took:.2f} ms: {' '.join(statement.split())[:300]}")
                print("   " + plan.replace("\n", "\n   "))


if __name__ == "__main__":
    main()
