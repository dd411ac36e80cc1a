"""Benchmarks for roster import. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_roster.py [--repeat 20] [--database-url URL]

1. Parse time (median of --repeat) of each roster fixture in tests/fixtures/rosters.
2. SQL statements and wall time of one import request (preview, then add every unit) for
   rosters of different sizes, the force's Supply Limit raised so everything fits.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Force
from app.main import create_app
from app.services.campaigns.kept_totals import install_kept_totals
from app.services.rosters.roster_parse import parse_roster
from bench.bench_api import BENCH_USER, StatementCounter

ROSTERS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "rosters"
IMPORTS = (
    ("necrons_patrol.rosz", "NECRONS"),
    ("dark_angels_two_patrols.rosz", "IMPERIUM"),
    ("salamanders_battalion.rosz", "IMPERIUM"),
    ("thousand_sons_magnus.rosz", "CHAOS"),
)


def parse_times(repeat: int) -> None:
    print("parse time per roster file (median):")
    for path in sorted(ROSTERS.glob("*.ros*")):
        data = path.read_bytes()
        times = []
        units = 0
        for _ in range(repeat):
            start = time.perf_counter()
            try:
                units = len(parse_roster(data).units)
            except Exception:  # the 8th-edition fixture is refused: time the refusal
                units = 0
            times.append(time.perf_counter() - start)
        print(
            f"  {path.name:34} {len(data) / 1024:7.1f} KiB  {units:3} units  "
            f"{statistics.median(times) * 1000:7.2f} ms"
        )


def synthetic(units: int) -> bytes:
    """A roster of ``units`` one-PL Necron units (the parser's cap is 200)."""
    selection = (
        '<selection name="Necron Warriors {n}" type="unit" number="1">'
        '<costs><cost name=" PL" value="1.0"/></costs><categories>'
        '<category name="Troops" primary="true"/><category name="Faction: Necrons"/>'
        '<category name="Infantry"/></categories></selection>'
    )
    body = "".join(selection.format(n=n) for n in range(units))
    return (
        '<roster xmlns="http://www.battlescribe.net/schema/rosterSchema" name="Big" '
        'gameSystemId="28ec-711c-d87f-3aeb" gameSystemName="Warhammer 40,000 9th Edition">'
        f'<forces><force name="Patrol" catalogueName="Necrons"><selections>{body}'
        "</selections></force></forces></roster>"
    ).encode()


def import_costs(client: TestClient, engine: Engine, counter: StatementCounter) -> None:
    print("one import request (SQL statements, wall time):")
    campaign = client.post("/api/v1/campaigns", json={"name": "Bench"}).json()["id"]
    cases = [(name, faction, (ROSTERS / name).read_bytes()) for name, faction in IMPORTS]
    cases += [(f"synthetic, {n} units", "NECRONS", synthetic(n)) for n in (50, 200)]
    for name, faction, data in cases:
        force = client.post(
            f"/api/v1/campaigns/{campaign}/forces",
            json={"name": name, "crusade_faction": faction},
        ).json()["id"]
        with Session(engine) as session:  # room for everything
            row = session.get(Force, force)
            assert row is not None
            row.supply_limit = 10_000
            session.add(row)
            session.commit()
        files = {"file": ("roster.rosz", data, "application/octet-stream")}
        url = f"/api/v1/forces/{force}/roster"
        for label, params in (("preview", {"preview": "true"}), ("add", None)):
            with counter.measure() as statements:
                start = time.perf_counter()
                answer = client.post(url, params=params, files=files)
                took = time.perf_counter() - start
            cards = len(answer.json().get("cards", [])) if answer.status_code == 200 else "-"
            print(
                f"  {name:34} {label:7} {answer.status_code}  cards {cards!s:>3}  "
                f"{statements[0]:4} statements  {took * 1000:7.1f} ms"
            )


def main() -> None:
    install_kept_totals()  # the set-up writes cards without the app
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    parse_times(args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        migrate.upgrade(url)
        engine = make_engine(url)
        counter = StatementCounter(engine)
        print(f"database: {engine.url.get_backend_name()}")
        with TestClient(create_app(engine)) as client:
            client.post("/api/v1/auth/signup", json=BENCH_USER)
            client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
            import_costs(client, engine, counter)
        engine.dispose()


if __name__ == "__main__":
    main()
