"""No hidden queries: the statements a read needs do not grow with the number of units."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from tests.api.helpers import campaign, force, unit


def statements(engine: Engine, call: Callable[[], object]) -> int:
    seen: list[str] = []

    def count(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        call()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen)


def test_reads_are_constant_in_units(client: TestClient, engine: Engine) -> None:
    campaign_id = campaign(client)
    force_ids = [force(client, campaign_id, f"Force {n}") for n in range(3)]
    urls = [
        f"/api/v1/forces/{force_ids[0]}",
        f"/api/v1/campaigns/{campaign_id}/forces",
        f"/api/v1/campaigns/{campaign_id}/standings",
    ]
    small = [statements(engine, lambda url=url: client.get(url)) for url in urls]
    for force_id in force_ids:
        for n in range(8):
            unit(client, force_id, f"Squad {n}", 1)
    large = [statements(engine, lambda url=url: client.get(url)) for url in urls]
    assert small == large
