"""Against a real uvicorn server: a command is committed before its response is sent, so
the client's very next read sees it (TestClient cannot show this: it waits for teardown)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import Engine

from tests.api.live import serve
from tests.conftest import ORGANIZER


@pytest.fixture
def live(engine: Engine) -> Iterator[httpx.Client]:
    with serve(engine) as url, httpx.Client(base_url=url, timeout=10) as client:
        signed_up = client.post("/api/v1/auth/signup", json=ORGANIZER)
        assert signed_up.status_code == 201, signed_up.text
        client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
        yield client


def test_every_write_is_visible_to_the_next_read(live: httpx.Client) -> None:
    campaign = live.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
    force = live.post(
        f"/api/v1/campaigns/{campaign}/forces", json={"name": "Blue", "crusade_faction": "IMPERIUM"}
    ).json()["id"]
    for expected in range(4, -1, -1):
        bought = live.post(
            f"/api/v1/forces/{force}/requisitions", json={"requisition": "increase_supply_limit"}
        )
        assert bought.status_code == 201
        assert live.get(f"/api/v1/forces/{force}").json()["requisition_points"] == expected


def test_concurrent_purchases_never_overspend(live: httpx.Client) -> None:
    campaign = live.post("/api/v1/campaigns", json={"name": "Race"}).json()["id"]
    force = live.post(
        f"/api/v1/campaigns/{campaign}/forces", json={"name": "Blue", "crusade_faction": "IMPERIUM"}
    ).json()["id"]
    url = f"/api/v1/forces/{force}/requisitions"
    with ThreadPoolExecutor(8) as pool:
        codes = list(
            pool.map(
                lambda _: live.post(url, json={"requisition": "increase_supply_limit"}).status_code,
                range(8),
            )
        )
    assert sorted(codes) == [201] * 5 + [422] * 3
    final = live.get(f"/api/v1/forces/{force}").json()
    assert (final["requisition_points"], final["supply_limit"]) == (0, 75)
