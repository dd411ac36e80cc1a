"""Orders of Battle are cached per force version: never stale, and ETags spare re-sending."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from app.db.session import loop_engine_of
from tests.api.helpers import campaign, force, unit
from tests.api.test_battle_flow import muster, setup_two_forces


def test_etag_answers_304_until_something_changes(client: TestClient) -> None:
    force_id = force(client, campaign(client))
    first = client.get(f"/api/v1/forces/{force_id}")
    etag = first.headers["ETag"]
    again = client.get(f"/api/v1/forces/{force_id}", headers={"If-None-Match": etag})
    assert again.status_code == 304
    unit(client, force_id)
    changed = client.get(f"/api/v1/forces/{force_id}", headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag
    assert len(changed.json()["cards"]) == 1


def test_every_kind_of_change_shows_at_once(client: TestClient) -> None:
    world = setup_two_forces(client)
    blue = world["blue"]
    seen = [client.get(f"/api/v1/forces/{blue}").json()]
    client.patch(f"/api/v1/cards/{world['blue_units'][1]['id']}", json={"narrative": "Stood firm."})
    seen.append(client.get(f"/api/v1/forces/{blue}").json())
    assert seen[-1]["cards"][1]["narrative"] == "Stood firm."
    battle = muster(client, world)
    client.post(
        f"/api/v1/battles/{battle['id']}/result",
        json={
            "sides": [
                {
                    "force_id": blue,
                    "victory_points": 5,
                    "units": [{"card_id": world["blue_units"][1]["id"], "destroyed": True}],
                    "dice": [1],
                },
                {"force_id": world["red"], "victory_points": 50},
            ]
        },
    )
    after_battle = client.get(f"/api/v1/forces/{blue}").json()
    assert after_battle["battle_tally"] == 1
    assert after_battle["cards"][1]["awaiting_decision"] is True
    decision = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"][0]
    client.post(
        f"/api/v1/decisions/{decision['id']}/answer",
        json={"consequence": "devastating_blow", "dice": [2]},
    )
    settled = client.get(f"/api/v1/forces/{blue}").json()
    assert settled["cards"][1]["awaiting_decision"] is False
    client.post(f"/api/v1/battles/{battle['id']}/revert")
    assert client.get(f"/api/v1/forces/{blue}").json()["battle_tally"] == 0


def test_missing_force_is_still_a_404_problem(client: TestClient) -> None:
    response = client.get("/api/v1/forces/999")
    assert response.status_code == 404
    assert response.json()["code"] == "force_not_found"


def test_a_cached_order_of_battle_costs_the_access_check_alone(
    client: TestClient, engine: Engine
) -> None:
    """A cache hit reads the login and the force with its version and its campaign (one
    joined query: the access check's, whose versions key the body): nothing that grows with
    the force, and no second look at the versions. The check runs on the event loop itself,
    with no thread hand-off: on SQLite through the loop's own connection, on PostgreSQL
    awaiting its round trips through the asyncio driver."""
    force_id = force(client, campaign(client))
    client.get(f"/api/v1/forces/{force_id}")  # fills the cache
    seen: list[tuple[str, str]] = []

    def count(*args: object) -> None:
        seen.append((str(args[2]).split()[0], threading.current_thread().name))

    engines = [e for e in (engine, loop_engine_of(engine)) if e is not None]
    for watched in engines:
        event.listen(watched, "before_cursor_execute", count)
    try:
        assert client.get(f"/api/v1/forces/{force_id}").status_code == 200
    finally:
        for watched in engines:
            event.remove(watched, "before_cursor_execute", count)
    # and nothing around them: no BEGIN (SQLite's would show here), the read ends with the
    # access check, so the hit is answered on the event loop
    assert [kind for kind, _thread in seen] == ["SELECT"] * 2
    in_pool = {thread.startswith("AnyIO worker") for _kind, thread in seen}
    assert in_pool == {False}
