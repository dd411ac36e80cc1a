"""An imported campaign is a copy of its own, down to the ids inside its JSON columns (a
side's roster, a proposal, a requisition's details, an answer's units, the events): its
battles never name the original's cards, so neither campaign's reverts reach the other.

The original's ids are pushed far from any number the rules write (cards from 100,000,
forces from 200,000, battles from 300,000, decisions from 400,000), so every such number
found anywhere in the copy's JSON must be one of the copy's own rows, whatever its key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text
from sqlmodel import Session, SQLModel, col, select

from app.db.models import (
    Battle,
    BattleReport,
    BattleSide,
    Card,
    Decision,
    Event,
    Force,
    RequisitionPurchase,
    RulePack,
    Territory,
    User,
)
from app.services.battles import confirmation
from app.services.battles.lifecycle import SideResult
from app.services.campaigns import transfer
from tests.api.helpers import account, campaign, force, unit
from tests.api.test_pack_triggers_api import CULL, RUSTWAKE
from tests.api.test_rule_packs import attached

# A requisition that promotes the unit it is bought for (its purchase names it).
BLESSINGS = """
format: crusade-rule-pack/1
id: blessings
name: Blessings
version: "1"
requisitions:
  - id: saints_blessing
    name: Saint's Blessing
    cost_rp: 1
    target: unit
    summary: The unit gains 6 XP.
    effects: [{kind: add_xp, amount: 6}]
"""
STEP = 100_000
RANGES: dict[int, type[SQLModel]] = {1: Card, 2: Force, 3: Battle, 4: Decision}


def test_an_imported_copy_holds_only_its_own_ids_and_both_revert(
    client: TestClient, engine: Engine
) -> None:
    _ids_far_apart(engine, campaign(client, "Decoy"))
    world = _play_original(client, engine)
    cid, blue, red = world["campaign"], world["blue"], world["red"]

    document = client.get(f"/api/v1/campaigns/{cid}/export").json()
    with Session(engine) as session:
        copy_id = int(transfer.import_campaign(session, document).id or 0)
        session.commit()

    # (a) every id-sized number in the copy's JSON columns is a row of the copy's own
    own = _rows_of(engine, copy_id)
    seen: dict[type[SQLModel], set[int]] = {model: set() for model in RANGES.values()}
    for where, number in _numbers(engine, copy_id):
        model = RANGES.get(number // STEP)
        assert model is not None, f"{where}: {number} is no id of a known table"
        assert number in own[model], f"{where}: {number} is not one of the copy's {model}"
        seen[model].add(number)
    assert seen[Card] and seen[Force] and seen[Decision], seen  # (no JSON names a battle)
    copy_forces = _forces_of(client, copy_id)
    copy_blue, copy_red = copy_forces["Ultramarines"], copy_forces["Black Legion"]
    copy_battle = _newest_resolved(client, copy_id)

    # (c) the copy's newest battle reverts, its figures back as they were before it, and
    # the original is untouched (its Scrap Walker stays: the copy's answer names its own)
    after_second = _figures(client, blue, red)
    reverted = client.post(f"/api/v1/battles/{copy_battle}/revert")
    assert reverted.status_code == 200, reverted.text
    assert _figures(client, copy_blue, copy_red) == world["before_second"]
    assert _figures(client, blue, red) == after_second

    # (b) the original's newest battle still reverts (the copy's battles hold none of its
    # units), and comes back exactly too
    reverted = client.post(f"/api/v1/battles/{world['second']}/revert")
    assert reverted.status_code == 200, reverted.text
    assert _figures(client, blue, red) == world["before_second"]


def _play_original(client: TestClient, engine: Engine) -> dict[str, Any]:
    """The Rustwake Reclaimers' walkthrough: named kills and a quarry, a failed Out of
    Action test answered with a scar, a requisition for a unit, a threshold's decision
    that brings a new unit; a player's result waiting for confirmation; a unit promoted by
    a requisition."""
    cid = campaign(client)
    attached(client, cid, RUSTWAKE)
    attached(client, cid, BLESSINGS)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    crew = unit(client, blue, "Scrap Crew")["id"]
    foes = [unit(client, red, f"Cultists {n}", 1, keywords=["CHAOS"])["id"] for n in range(4)]
    _proposal(client, engine, cid)
    _promotion(client, cid)

    def battle(dice: list[int]) -> int:
        body = {
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {"force_id": blue, "role": "attacker", "roster": [crew], "agendas": CULL},
                {"force_id": red, "role": "defender", "roster": foes, "agendas": CULL},
            ],
        }
        mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body).json()["id"]
        killer = {"card_id": crew, "destroyed_ranged": 2, "destroyed_enemies": foes[:2]}
        result = {
            "sides": [
                {"force_id": blue, "victory_points": 30, "units": [killer | {"quarry": foes[0]}]},
                {
                    "force_id": red,
                    "victory_points": 10,
                    "units": [{"card_id": f, "destroyed": True} for f in foes[:2]],
                    "dice": dice,
                },
            ]
        }
        recorded = client.post(f"/api/v1/battles/{mustered}/result", json=result)
        assert recorded.status_code == 200, recorded.text
        return int(mustered)

    battle([1, 6])  # a Cultists unit fails its Out of Action test: a scar
    _answer(client, red, {"consequence": "battle_scar"})
    _answer(client, red, {"scar": "battle_weary"})
    bought = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "reforge_crew", "card_id": crew},
    )
    assert bought.status_code == 201, bought.text
    before_second = _figures(client, blue, red)
    second = battle([6, 6])  # Salvage reaches The Great Haul: a free Scrap Walker
    taken = _answer(client, blue, {"requisitions": [{"requisition": "scrap_walker"}]})
    assert len(taken["answer"]["joined"]) == 1, taken
    return {
        "campaign": cid,
        "blue": blue,
        "red": red,
        "second": second,
        "before_second": before_second,
    }


def _proposal(client: TestClient, engine: Engine, cid: int) -> None:
    """Two more forces whose battle a player entered and nobody confirmed yet."""
    account(client.app, "joel")
    green, grey = force(client, cid, "Dark Angels"), force(client, cid, "Word Bearers", "CHAOS")
    mine = unit(client, green, "Deathwing Knights")["id"]
    theirs = unit(client, grey, "Possessed", 5, keywords=["CHAOS", "INFANTRY"])["id"]
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {"force_id": green, "role": "attacker", "roster": [mine], "agendas": ["reaper"]},
            {"force_id": grey, "role": "defender", "roster": [theirs], "agendas": CULL},
        ],
    }
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    results = [
        SideResult(
            force_id=green,
            victory_points=30,
            painted=False,
            units=[{"card_id": mine, "destroyed_melee": 1, "destroyed_enemies": [theirs]}],
            agenda_choices={"reaper": mine},
        ),
        SideResult(
            force_id=grey,
            victory_points=10,
            painted=False,
            units=[{"card_id": theirs, "destroyed": True}],
            named_dice={f"out_of_action:{theirs}": 6},
        ),
    ]
    with Session(engine) as session:  # a player (not an organizer) enters it
        player = select(User.id).where(User.username == "joel")
        session.info["actor_id"] = session.exec(player).one()
        battle, _sides = confirmation.submit(
            session, battle_id=mustered.json()["id"], results=results
        )
        assert battle.status == "proposed"
        session.commit()


def _promotion(client: TestClient, cid: int) -> None:
    """A unit promoted by a requisition, and the Battle Honour it was owed taken."""
    templars = force(client, cid, "Black Templars")
    squad = unit(client, templars, "Crusader Squad")["id"]
    bought = client.post(
        f"/api/v1/forces/{templars}/requisitions",
        json={"requisition": "saints_blessing", "card_id": squad},
    )
    assert bought.status_code == 201, bought.text
    assert bought.json()["details"]["promoted"] == [squad]
    _answer(client, templars, {"category": "battle_trait", "entries": ["fleet_of_foot"]})


def _answer(client: TestClient, force_id: int, answer: dict[str, Any]) -> dict[str, Any]:
    [pending] = client.get(f"/api/v1/forces/{force_id}/decisions").json()["items"]
    answered = client.post(f"/api/v1/decisions/{pending['id']}/answer", json=answer)
    assert answered.status_code == 200, answered.text
    return dict(answered.json())


def _ids_far_apart(engine: Engine, decoy: int) -> None:
    """A row at each table's step (in a campaign of no interest): the next ids follow it."""
    with Session(engine) as session:
        session.add(
            Force(
                id=2 * STEP,
                campaign_id=decoy,
                name="Decoy",
                crusade_faction="IMPERIUM",
                requisition_points=5,
                supply_limit=50,
            )
        )
        session.add(
            Battle(
                id=3 * STEP,
                campaign_id=decoy,
                battle_size="combat_patrol",
                mission="sweep_and_clear",
                status="reverted",
            )
        )
        session.flush()
        session.add(Card(id=STEP, force_id=2 * STEP, name="Decoy", power_rating=1))
        session.add(
            Decision(id=4 * STEP, force_id=2 * STEP, kind="battle_scar", status="cancelled")
        )
        session.commit()
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            for number, model in RANGES.items():
                table = model.__tablename__
                connection.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {number * STEP})")
                )


def _rows_of(engine: Engine, campaign_id: int) -> dict[type[SQLModel], set[int]]:
    with Session(engine) as session:
        forces = set(session.exec(select(Force.id).where(Force.campaign_id == campaign_id)).all())
        battles = select(Battle.id).where(Battle.campaign_id == campaign_id)
        return {
            Force: {int(f) for f in forces if f is not None},
            Card: set(session.exec(select(Card.id).where(col(Card.force_id).in_(forces))).all()),
            Battle: set(session.exec(battles).all()),
            Decision: set(
                session.exec(select(Decision.id).where(col(Decision.force_id).in_(forces))).all()
            ),
        }


JSON_COLUMNS: dict[type[SQLModel], tuple[str, ...]] = {
    Force: ("counters", "army_keywords"),
    Card: ("keywords", "honours", "scars", "upgrades", "counters"),
    RequisitionPurchase: ("details",),
    Territory: ("neighbours",),
    RulePack: ("document",),
    Battle: ("proposal", "rule_packs"),
    BattleSide: ("roster", "agendas", "report", "snapshot"),
    BattleReport: ("unit_notes",),
    Decision: ("payload", "answer"),
    Event: ("payload",),
}


def _numbers(engine: Engine, campaign_id: int) -> Iterator[tuple[str, int]]:
    """Every id-sized number in the campaign's JSON columns: values, keys, and digits
    inside text ("out_of_action:<card>", "<card>:scar:<entry>")."""
    own = _rows_of(engine, campaign_id)
    forces, battles = own[Force], own[Battle]
    owner = {
        Force: col(Force.campaign_id) == campaign_id,
        Card: col(Card.force_id).in_(forces),
        RequisitionPurchase: col(RequisitionPurchase.force_id).in_(forces),
        Territory: col(Territory.campaign_id) == campaign_id,
        RulePack: col(RulePack.campaign_id) == campaign_id,
        Battle: col(Battle.campaign_id) == campaign_id,
        BattleSide: col(BattleSide.battle_id).in_(battles),
        BattleReport: col(BattleReport.battle_id).in_(battles),
        Decision: col(Decision.force_id).in_(forces),
        Event: col(Event.campaign_id) == campaign_id,
    }
    found = 0
    with Session(engine) as session:
        for model, columns in JSON_COLUMNS.items():
            for row in session.exec(select(model).where(owner[model])).all():
                for name in columns:
                    where = f"{model.__name__} {row.id} {name}"  # type: ignore[attr-defined]
                    for number in _walk(getattr(row, name)):
                        found += 1
                        yield where, number
    assert found > 20  # the walk saw the ids the battles wrote


def _walk(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _walk(key)
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int) and value >= STEP:
        yield value
    elif isinstance(value, str):
        yield from (int(n) for n in re.findall(r"\d+", value) if int(n) >= STEP)


def _forces_of(client: TestClient, campaign_id: int) -> dict[str, int]:
    listed = client.get(f"/api/v1/campaigns/{campaign_id}/forces").json()["items"]
    return {f["name"]: int(f["id"]) for f in listed}


def _newest_resolved(client: TestClient, campaign_id: int) -> int:
    listed = client.get(f"/api/v1/campaigns/{campaign_id}/battles").json()["items"]
    return next(int(b["id"]) for b in listed if b["status"] == "resolved")


def _figures(client: TestClient, *force_ids: int) -> list[Any]:
    """What the forces' pages show, without the ids that differ between copies."""
    return [_without_ids(client.get(f"/api/v1/forces/{f}").json()) for f in force_ids]


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_ids(v)
            for k, v in value.items()
            if not (k == "id" or k.endswith("_id") or k in ("version", "links", "created_at"))
        }
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def test_a_document_names_no_account_so_it_imports_where_they_do_not_exist(
    client: TestClient, engine: Engine
) -> None:
    """Accounts belong to an install: a battle waiting for confirmation names who entered
    it, a member's removal whom; a document named them by the install's account ids, which
    in another install are someone else or no one (a foreign key refused the import)."""
    cid = campaign(client)
    attached(client, cid, RUSTWAKE)
    _proposal(client, engine, cid)
    ruby = account(client.app, "ruby")
    code = client.post(f"/api/v1/campaigns/{cid}/invites", json={}).json()["code"]
    assert ruby.post(f"/api/v1/invites/{code}/accept").status_code == 201
    ruby_id = ruby.get("/api/v1/auth/me").json()["id"]
    removed = client.delete(f"/api/v1/campaigns/{cid}/members/{ruby_id}")
    assert removed.status_code in (200, 204), removed.text

    document = client.get(f"/api/v1/campaigns/{cid}/export").json()
    assert [b["status"] for b in document["battles"]] == ["proposed"]
    assert [b["proposed_by"] for b in document["battles"]] == [None]
    assert all("user_id" not in e["payload"] for e in document["events"])

    # a document written before they were left out, naming accounts this install lacks
    older = json.loads(json.dumps(document))
    older["battles"][0]["proposed_by"] = 987_654
    [gone] = [e for e in older["events"] if e["kind"] == "member_removed"]
    gone["payload"]["user_id"] = 987_654
    with Session(engine) as session:
        copy_id = int(transfer.import_campaign(session, older).id or 0)
        session.commit()
    with Session(engine) as session:
        copied = session.exec(select(Battle).where(Battle.campaign_id == copy_id)).all()
        assert [(b.status, b.proposed_by) for b in copied] == [("proposed", None)]
    feed = client.get(f"/api/v1/campaigns/{copy_id}/events", params={"limit": 200}).json()
    assert "ruby left the campaign." in [e["summary"] for e in feed["items"]]
