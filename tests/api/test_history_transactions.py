"""The campaign history is written with the command's transaction, in one INSERT at commit:
a savepoint rolled back (a player's result is tried out in full before it is stored as a
proposal) and a refused command leave no events behind."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from app.db.models import Event
from tests.api import test_authorization as authz
from tests.api.test_authorization import battle_between, table  # noqa: F401


def kinds(engine: Engine, battle_id: int) -> list[str]:
    with Session(engine) as session:
        query = select(Event.kind).where(Event.battle_id == battle_id).order_by(Event.id)
        return list(session.scalars(query))


def test_a_proposal_tried_in_a_savepoint_records_only_the_proposal(
    table: dict[str, Any],  # noqa: F811
    engine: Engine,
) -> None:
    battle = battle_between(table, table["ruby"]["client"])
    ruby, joel = table["ruby"], table["joel"]
    proposed = ruby["client"].post(
        f"/api/v1/battles/{battle}/result", json=authz.TestResultConfirmation.BODY(table)
    )
    assert proposed.json()["status"] == "proposed", proposed.text
    assert kinds(engine, battle) == ["battle_mustered", "result_proposed"]
    assert joel["client"].post(f"/api/v1/battles/{battle}/confirm").status_code == 200
    after = kinds(engine, battle)
    assert after[:2] == ["battle_mustered", "result_proposed"]
    assert "result_confirmed" in after and "battle_recorded" in after, after


def test_a_refused_result_records_nothing(
    table: dict[str, Any],  # noqa: F811
    engine: Engine,
) -> None:
    battle = battle_between(table, table["ruby"]["client"])
    body = authz.TestResultConfirmation.BODY(table)
    body["sides"][0]["units"] = [{"card_id": table["joel"]["card"]}]  # not on Ruby's roster
    refused = table["organizer"].post(f"/api/v1/battles/{battle}/result", json=body)
    assert refused.status_code == 422, refused.text
    assert kinds(engine, battle) == ["battle_mustered"]
