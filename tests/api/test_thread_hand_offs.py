"""The cost of a request in thread hand-offs (issue 41): a count, not a time, so it cannot
creep back silently. Every synchronous dependency and route FastAPI meets is one hand-off to
the thread pool; the session, the caller and the access check are arranged so that a write
through the API, or a page, costs three: the access check (with the caller), the route, and
the end of the transaction. (A member's first look at a campaign page writes the visit down
after the page is sent: one more.) A cached read costs fewer (issue 50): below."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import campaign, force, unit

HAND_OFFS = 3


@pytest.fixture
def hand_offs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[], Any]], int]]:
    calls: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        calls.append(func)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)

    def count(call: Callable[[], Any]) -> int:
        calls.clear()
        response = call()
        assert response.status_code < 400, response.text
        return len(calls)

    yield count


def test_a_write_and_a_page_cost_three_hand_offs_each(
    client: TestClient, engine: Engine, hand_offs: Callable[[Callable[[], Any]], int]
) -> None:
    campaign_id = campaign(client)
    force_id = force(client, campaign_id)
    unit(client, force_id)
    body = {"name": "Assault Squad", "power_rating": 5, "keywords": ["IMPERIUM", "INFANTRY"]}
    write = lambda: client.post(f"/api/v1/forces/{force_id}/cards", json=body)  # noqa: E731
    assert hand_offs(write) == HAND_OFFS
    # the campaign page is a cached page: on PostgreSQL its check is made on the loop
    on_loop = int(engine.dialect.name == "postgresql")
    page = lambda: client.get(f"/campaigns/{campaign_id}")  # noqa: E731
    assert hand_offs(page) == HAND_OFFS - on_loop + 1  # and, after it is sent, the visit
    assert hand_offs(page) == HAND_OFFS - on_loop  # nothing new since: nothing to remember


def test_a_visitors_kept_page_costs_none(
    client: TestClient, hand_offs: Callable[[Callable[[], Any]], int]
) -> None:
    """A reader with no session is sent the page kept whole for the campaign's version: its
    check on the loop (on either engine), and nothing in a thread; a change builds it again."""
    campaign_id = campaign(client)
    client.patch(f"/api/v1/campaigns/{campaign_id}", json={"public": True})
    force_id = force(client, campaign_id)
    card_id = unit(client, force_id)["id"]
    visitor = TestClient(client.app)
    paths = [f"/campaigns/{campaign_id}", f"/campaigns/{campaign_id}/battles", f"/cards/{card_id}"]
    for path in paths:
        assert hand_offs(lambda path=path: visitor.get(path)) == 2  # built, and kept
        assert hand_offs(lambda path=path: visitor.get(path)) == 0
    unit(client, force_id, "Squad Aquila")
    assert hand_offs(lambda: visitor.get(paths[0])) == 2


def test_a_cached_read_costs_none_on_a_hit(
    client: TestClient, engine: Engine, hand_offs: Callable[[Callable[[], Any]], int]
) -> None:
    """A cached read (issue 50) is decided on the event loop: on SQLite through its own
    connection, on PostgreSQL awaiting the asyncio driver; a hit then needs nothing more, a
    miss builds in one hand-off and ends its transaction in another."""
    check = 0  # on both engines
    campaign_id = campaign(client)
    force_id = force(client, campaign_id)
    unit(client, force_id)
    for path in (f"/api/v1/forces/{force_id}", f"/api/v1/campaigns/{campaign_id}/standings"):
        read = lambda path=path: client.get(path)  # noqa: E731
        assert hand_offs(read) == check + 2  # built
        assert hand_offs(read) == check  # kept


def test_the_liveness_check_costs_none(
    client: TestClient, hand_offs: Callable[[Callable[[], Any]], int]
) -> None:
    assert hand_offs(lambda: client.get("/health")) == 0


def test_a_cached_page_is_decided_on_the_loop_on_postgresql(
    client: TestClient, engine: Engine, hand_offs: Callable[[Callable[[], Any]], int]
) -> None:
    """A cached page (a Crusade card's) decides its access with the caller and the header's
    count: on PostgreSQL on the event loop, awaiting the asyncio driver; on SQLite in the
    thread pool (several statements stay off the loop's own connection). Then the route,
    which reads nothing more: the owner's edit form is kept with the sheet, so no
    transaction is left to end in the thread pool."""
    force_id = force(client, campaign(client))
    card_id = unit(client, force_id)["id"]
    page = lambda: client.get(f"/cards/{card_id}")  # noqa: E731
    hand_offs(page)  # the parts built and kept
    check = int(engine.dialect.name == "sqlite")
    assert hand_offs(page) == check + 1
