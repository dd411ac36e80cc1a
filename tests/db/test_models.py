"""app.db.models: the rows a Core INSERT of many is given, and one UPDATE for a command's
cards."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.db.models import (
    CARD_REST,
    Card,
    Decision,
    Event,
    Force,
    WebhookDelivery,
    insert_values,
)
from app.db.session import session_scope
from app.services.campaigns.demo import load_demo
from app.services.forces.convert import card_value, write_card
from tests.api.test_query_counts import statements_made


class TestInsertValues:
    def test_the_same_values_as_the_models_own_dump_defaults_included(self) -> None:
        given = {"campaign_id": 3, "kind": "card_added", "payload": {"card_id": 7}}
        made = Event(**given).model_dump(exclude={"id"})
        plain = insert_values(Event, **given)
        assert plain.keys() == made.keys()
        assert {k: v for k, v in plain.items() if k != "created_at"} == {
            k: v for k, v in made.items() if k != "created_at"
        }
        assert abs((plain["created_at"] - made["created_at"]).total_seconds()) < 5
        decision = insert_values(Decision, force_id=1, kind="battle_scar")
        assert (decision["status"], decision["answer"], decision["answered_at"]) == (
            "pending",
            {},
            None,
        )
        delivery = insert_values(WebhookDelivery, webhook_id=1, event_id=2)
        assert (delivery["status"], delivery["attempts"], delivery["last_error"]) == (
            "pending",
            0,
            "",
        )

    def test_nested_values_are_copied_not_shared(self) -> None:
        sides = [{"units": [1, 2]}]
        row = insert_values(Event, campaign_id=1, kind="battle_recorded", payload={"s": sides})
        sides[0]["units"].append(3)  # the caller changes its own list afterwards
        assert row["payload"] == {"s": [{"units": [1, 2]}]}

    def test_an_unknown_or_missing_field_is_a_programming_error(self) -> None:
        with pytest.raises(TypeError, match="no field"):
            insert_values(Event, campaign_id=1, kind="x", colour="red")
        with pytest.raises(TypeError, match="kind is required"):
            insert_values(Event, campaign_id=1)


def test_a_commands_cards_go_in_one_update_however_their_ids_interleave(
    engine: Engine,
) -> None:
    """Two forces' cards, ids interleaved: one force's units change only their numbers, the
    other's their honours too. One UPDATE all the same (the ORM makes one per run of rows
    in id order that write the same columns)."""
    with session_scope(engine) as session:
        campaign_id = load_demo(session).id
        forces = session.exec(select(Force.id).where(Force.campaign_id == campaign_id)).all()
        first, second = forces[0], forces[1]
        for n in range(6):
            session.add(
                Card(force_id=(first, second)[n % 2], name=f"Interleaved {n}", power_rating=5)
            )
    with session_scope(engine) as session:
        cards = session.exec(
            select(Card).where(col(Card.name).startswith("Interleaved ")).order_by(col(Card.id))
        ).all()
        assert [c.force_id for c in cards] == [first, second] * 3
        for card in cards:
            value = card_value(card)
            told = {"narrative": "Held the line"} if card.force_id == second else {}
            write_card(card, replace(value, xp=value.xp + 1, **told))
        updates = card_updates(engine, session.flush)
    assert len(updates) == 1
    assert all(f"{name}=" in updates[0] for name in CARD_REST)
    with Session(engine) as session:
        after = session.exec(
            select(Card).where(col(Card.name).startswith("Interleaved ")).order_by(col(Card.id))
        ).all()
        assert [(c.xp, c.narrative) for c in after] == [(1, ""), (1, "Held the line")] * 3


def test_a_card_whose_numbers_alone_changed_leaves_the_rest_unwritten(engine: Engine) -> None:
    with session_scope(engine) as session:
        campaign_id = load_demo(session).id
        force = session.exec(select(Force.id).where(Force.campaign_id == campaign_id)).first()
        session.add(Card(force_id=force, name="Lone squad", power_rating=5))
    with session_scope(engine) as session:
        card = session.exec(select(Card).where(Card.name == "Lone squad")).one()
        write_card(card, replace(card_value(card), xp=4))
        updates = card_updates(engine, session.flush)
    assert len(updates) == 1
    assert "xp=" in updates[0] and "honours=" not in updates[0] and "name=" not in updates[0]


def card_updates(engine: Engine, flush: Callable[[], None]) -> list[str]:
    """The UPDATEs of crusade_card a flush sends."""
    made = statements_made(engine, flush)
    return [s for s in made if s.startswith("UPDATE crusade_card")]
