"""A campaign as one JSON document, and back.

Ids in the document are local to it (numbered 1, 2, ... per table in id order) and every
reference uses them, so a document imports into any database, and export -> import ->
export gives the same document.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, SQLModel, col, select

from app.db.models import (
    Battle,
    BattleSide,
    Campaign,
    Card,
    Decision,
    Event,
    Force,
    RequisitionPurchase,
    utcnow,
)
from app.errors import DomainError
from app.services import totals
from app.services.forces import get_campaign

FORMAT = "crusade-campaign/1"

# table name in the document -> (model, {field: table it refers to})
TABLES: dict[str, tuple[type[SQLModel], dict[str, str]]] = {
    "forces": (Force, {"campaign_id": "campaign"}),
    "cards": (Card, {"force_id": "forces"}),
    "battles": (Battle, {"campaign_id": "campaign"}),
    "battle_sides": (
        BattleSide,
        {"battle_id": "battles", "force_id": "forces", "warlord_card_id": "cards"},
    ),
    "requisitions": (RequisitionPurchase, {"force_id": "forces", "card_id": "cards"}),
    "decisions": (Decision, {"force_id": "forces", "battle_id": "battles", "card_id": "cards"}),
    "events": (Event, {"campaign_id": "campaign", "force_id": "forces", "battle_id": "battles"}),
}


# JSON columns that carry ids: keys whose values are ids (or lists of ids), and keys whose
# value is a dict keyed by ids.
JSON_FIELDS = {
    "battle_sides": ("report", "snapshot"),
    "decisions": ("payload", "answer"),
    "events": ("payload",),
}
ID_KEYS = {
    "card_id": "cards",
    "eligible": "cards",
    "roster": "cards",
    "forces": "forces",
    "decision_id": "decisions",
}
ID_KEYED_DICTS = {
    "experience": "cards",
    "gains": "cards",
    "cards": "cards",
    "out_of_action_choices": "cards",
    "victory_points": "forces",
}
IdMaps = dict[str, dict[int, int]]


def export_campaign(session: Session, *, campaign_id: int) -> dict[str, Any]:
    campaign = get_campaign(session, campaign_id)
    rows = _rows(session, campaign_id)
    maps: IdMaps = {"campaign": {campaign_id: 1}}
    for name, found in rows.items():
        maps[name] = {row.id: n for n, row in enumerate(found, start=1)}
    document: dict[str, Any] = {"format": FORMAT, "campaign": _plain(campaign) | {"id": 1}}
    for name, found in rows.items():
        document[name] = [
            _translate(name, _plain(row), maps) | {"id": maps[name][row.id]} for row in found
        ]
    return document


def export_filename(session: Session, *, campaign_id: int) -> str:
    """campaign name and today's date, e.g. the-vigilus-crusade-2026-11-23.json"""
    name = get_campaign(session, campaign_id).name.lower()
    slug = "-".join("".join(c if c.isalnum() else " " for c in name).split())[:60]
    return f"{slug or 'campaign'}-{utcnow():%Y-%m-%d}.json"


def _rows(session: Session, campaign_id: int) -> dict[str, list[Any]]:
    forces = list(
        session.exec(select(Force).where(Force.campaign_id == campaign_id).order_by(col(Force.id)))
    )
    battles = list(
        session.exec(
            select(Battle).where(Battle.campaign_id == campaign_id).order_by(col(Battle.id))
        )
    )
    force_ids = [f.id for f in forces]

    def owned(model: Any, column: Any, keys: list[Any]) -> list[Any]:
        query = select(model).where(col(column).in_(keys)).order_by(col(model.id))
        return list(session.exec(query))

    return {
        "forces": forces,
        "cards": owned(Card, Card.force_id, force_ids),
        "battles": battles,
        "battle_sides": owned(BattleSide, BattleSide.battle_id, [b.id for b in battles]),
        "requisitions": owned(RequisitionPurchase, RequisitionPurchase.force_id, force_ids),
        "decisions": owned(Decision, Decision.force_id, force_ids),
        "events": owned(Event, Event.campaign_id, [campaign_id]),
    }


def _plain(row: SQLModel) -> dict[str, Any]:
    # version only keys caches; accounts (owners, actors) belong to an install, not a campaign
    data = row.model_dump(exclude={"id", "version", "owner_id", "actor_id"})
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in data.items()}


def _translate(table: str, data: dict[str, Any], maps: IdMaps) -> dict[str, Any]:
    """Rewrite every id in a row (columns and JSON) through ``maps``."""
    out = dict(data)
    for field, target in TABLES[table][1].items():
        if out.get(field) is not None:
            out[field] = maps[target][out[field]]
    for field in JSON_FIELDS.get(table, ()):
        out[field] = _map_json(out[field], maps)
    return out


def _map_json(value: Any, maps: IdMaps, key: str = "") -> Any:
    if isinstance(value, dict):
        if key in ID_KEYED_DICTS:
            table = maps[ID_KEYED_DICTS[key]]
            return {str(table[int(k)]): _map_json(v, maps) for k, v in value.items()}
        return {k: _map_json(v, maps, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_json(v, maps, key) for v in value]
    if key in ID_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return maps[ID_KEYS[key]][value]
    if key in ID_KEYS and isinstance(value, str) and value.isdigit():
        return str(maps[ID_KEYS[key]][int(value)])
    return value


def import_campaign(session: Session, document: dict[str, Any]) -> Campaign:
    """Create the campaign in this database: ids are assigned anew, references kept."""
    if document.get("format") != FORMAT:
        raise DomainError(
            "import_format_unknown", f"Expected a '{FORMAT}' document.", status=422, field="format"
        )
    campaign = Campaign(**_typed(Campaign, _without_id(document["campaign"])))
    session.add(campaign)
    session.flush()
    maps: IdMaps = {"campaign": {1: campaign.id or 0}}
    created: dict[str, list[Any]] = {}
    for name, (model, refs) in TABLES.items():
        maps[name], created[name] = {}, []
        for data in document.get(name, []):
            fields = _without_id(data)
            for field, target in refs.items():
                if fields.get(field) is not None:
                    fields[field] = maps[target][fields[field]]
            row = model(**_typed(model, fields))
            session.add(row)
            session.flush()
            maps[name][data["id"]] = row.id  # type: ignore[attr-defined]
            created[name].append(row)
    for name, columns in JSON_FIELDS.items():  # JSON ids can point at any table: map last
        for row in created[name]:
            for field in columns:
                setattr(row, field, _map_json(getattr(row, field), maps))
            session.add(row)
    session.flush()
    # Records, chart points and battle lists come from the imported battles, as a rebuild
    # makes them; the lines the flushes above started are replaced, so forget them.
    totals.rebuild(session.connection(), campaign.id)
    session.expire_all()
    return campaign


def _without_id(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "id"}


def _typed(model: type[SQLModel], data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for name, field in model.model_fields.items():
        if name in out and isinstance(out[name], str) and "datetime" in str(field.annotation):
            out[name] = datetime.fromisoformat(out[name])
    return out
