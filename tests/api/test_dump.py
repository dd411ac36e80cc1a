"""The helper every "a refusal changes nothing" test leans on: tests/api/helpers.py dump()
must see any change to any row, on both engines."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tests.api.helpers import campaign, dump


def test_a_dump_sees_one_changed_field_and_nothing_else(client: TestClient, engine: Engine) -> None:
    campaign_id = campaign(client)
    before = dump(engine)
    assert dump(engine) == before and before["campaign"]
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE campaign SET name = :name WHERE id = :id"),
            {"name": "War for Vigilus.", "id": campaign_id},
        )
    after = dump(engine)
    assert after != before
    assert [name for name in before if before[name] != after[name]] == ["campaign"]
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE campaign SET name = :name WHERE id = :id"),
            {"name": "War for Vigilus", "id": campaign_id},
        )
    assert dump(engine) == before
