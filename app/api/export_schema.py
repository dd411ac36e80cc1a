"""The schema of the campaign export (``GET /campaigns/{id}/export``, read back by
``crusade import``): the campaign's rows as stored, ids local to the document.

Row models are made from the database models, so a new column appears here by itself; the
JSON columns get the models below. JSON keeps some maps keyed by id as text (a card's
snapshot, a side's experience): that is the backup format, kept as stored so that
export -> import -> export gives the same document."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, create_model
from sqlmodel import SQLModel

from app.db.models import Campaign
from app.edge.schemas.battles import (
    DevastatingBlowPublic,
    ExperienceGainPublic,
    OutOfActionTestPublic,
    PromotionPublic,
    UnitReportPublic,
)
from app.edge.schemas.decisions import WeaponPublic
from app.edge.schemas.forces import UpgradePublic
from app.edge.schemas.requisitions import RequisitionDetails
from app.rules import packs
from app.rules.data import VictorBonus
from app.services.campaigns.transfer import TABLES

Dice = list[list[int]]  # [sides, value] per die


class StoredHonour(BaseModel):
    category: str
    entry_ids: list[str]
    crusade_points: int
    weapon: str | None = None
    model: str | None = None
    dice: Dice = Field(default_factory=list)


class StoredScar(BaseModel):
    entry_id: str
    dice: Dice = Field(default_factory=list)


class StoredOrder(RequisitionDetails):
    requisition: str | None = None
    card_id: int | None = None


class StoredSideResult(BaseModel):
    force_id: int
    victory_points: int
    painted: bool = False
    units: list[UnitReportPublic] = Field(default_factory=list)
    dice: list[int] | None = None
    named_dice: dict[str, int] | None = Field(default=None, description="Die by roll key")
    out_of_action_choices: dict[str, str] | None = Field(default=None, description="By card id")
    agenda_choices: dict[str, int] | None = None
    objective_markers: int | None = None


class StoredProposal(BaseModel):
    sides: list[StoredSideResult] = Field(default_factory=list)


class StoredReport(BaseModel):
    units: list[UnitReportPublic] = Field(default_factory=list)
    tests: list[OutOfActionTestPublic] = Field(default_factory=list)
    devastating_blows: list[DevastatingBlowPublic] = Field(default_factory=list)
    experience: dict[str, int] = Field(default_factory=dict, description="XP by card id")
    gains: dict[str, ExperienceGainPublic] = Field(default_factory=dict, description="By card")
    promotions: list[PromotionPublic] = Field(default_factory=list)
    dice: Dice = Field(default_factory=list)
    army_keywords: list[str] = Field(
        default_factory=list,
        description="The force's Crusade faction and army keywords it played under (issue 47)",
    )


class StoredForceState(BaseModel):
    requisition_points: int
    supply_limit: int
    battle_tally: int
    victories: int


class StoredCardState(BaseModel):
    name: str
    power_rating: int
    wargear: str
    psychic_powers: str
    narrative: str
    xp: int
    rank: str
    honours: list[StoredHonour]
    scars: list[StoredScar]
    upgrades: list[UpgradePublic]
    battles_played: int
    battles_survived: int
    destroyed_psychic: int
    destroyed_ranged: int
    destroyed_melee: int
    marked_for_greatness: int
    removed: bool
    points: int | None = Field(default=None, description="Issue 38: a transform changes it")
    keywords: list[str] | None = None
    datasheet: str | None = None


class StoredSideTotals(BaseModel):
    crusade_points: int
    xp: int


class StoredSnapshot(BaseModel):
    """The side's force as it was before the battle was applied (what a revert restores):
    its numbers and the units on its roster (older documents hold every unit)."""

    force: StoredForceState | None = None
    cards: dict[str, StoredCardState] = Field(default_factory=dict, description="By card id")
    totals: StoredSideTotals | None = Field(
        default=None, description="The whole force's Crusade points and XP before the battle"
    )


class StoredDecisionPayload(BaseModel):
    options: list[str] = Field(default_factory=list)
    gain: ExperienceGainPublic | None = None
    reason: str | None = Field(default=None, description="rank:<rank id> or victor_bonus")
    categories: list[str] = Field(default_factory=list)
    eligible: list[int] = Field(default_factory=list)
    bonus: VictorBonus | None = None
    threshold: dict[str, str] | None = Field(
        default=None, description="A rule pack's threshold that owes it: id, name, pack"
    )
    quest: dict[str, str] | None = Field(
        default=None, description="A rule pack's quest that owes it: id, name, pack"
    )


class StoredAnswer(BaseModel):
    consequence: str | None = None
    scar: str | None = None
    category: str | None = None
    entries: list[str] = Field(default_factory=list)
    weapon: WeaponPublic | None = None
    card_id: int | None = None
    requisitions: list[StoredOrder] = Field(default_factory=list)
    gained: list[str] = Field(
        default_factory=list, description="What the answer added, as `card:kind:entry`"
    )
    joined: list[int] = Field(default_factory=list, description="The units the answer brought")


class StoredEventPayload(BaseModel):
    name: str | None = None
    user: str | None = None
    user_id: int | None = None
    role: str | None = None
    card_id: int | None = None
    power_rating: int | None = None
    requisition: str | None = None
    requisition_points_spent: int | None = None
    outcome: str | None = None
    victory_points: dict[str, int] = Field(default_factory=dict, description="By force id")
    battle_size: str | None = None
    mission: str | None = None
    mission_roll: int | None = None
    forces: list[int] = Field(default_factory=list)
    decision_id: int | None = None
    decision: str | None = None
    answer: StoredAnswer | None = None
    rank: str | None = None
    category: str | None = None
    entries: list[str] = Field(default_factory=list)
    scar: str | None = None
    pack: str | None = Field(default=None, description="The rule pack (issue 22)")
    requisition_name: str | None = None
    counters: dict[str, int] = Field(default_factory=dict, description="Counters changed")
    version: str | None = None
    replaces: str | None = None
    threshold: str | None = Field(default=None, description="threshold_reached (issue 38)")
    threshold_name: str | None = None
    counter: str | None = None
    counter_name: str | None = None
    at: int | None = None
    reset_to: int | None = None
    quest: str | None = Field(default=None, description="quest_* (issue 38)")
    quest_name: str | None = None
    step: int | None = None
    steps: int | None = None
    step_name: str | None = None
    tally: int | None = None
    count: int | None = None


JSON_COLUMNS: dict[str, Any] = {
    "keywords": list[str],
    "honours": list[StoredHonour],
    "scars": list[StoredScar],
    "upgrades": list[UpgradePublic],
    "details": StoredOrder,
    "proposal": StoredProposal,
    "roster": list[int],
    "agendas": list[str],
    "report": StoredReport,
    "snapshot": StoredSnapshot,
    "answer": StoredAnswer,
    "document": packs.RulePack,
}
PAYLOADS: dict[str, Any] = {"decisions": StoredDecisionPayload, "events": StoredEventPayload}
LEFT_OUT = {"id", "version", "owner_id", "actor_id"}  # as transfer._plain leaves them out


def _row_model(name: str, table: str, model: type[SQLModel]) -> type[BaseModel]:
    fields: dict[str, Any] = {"id": (int, Field(description="Local to this document"))}
    for field_name, info in model.model_fields.items():
        if field_name in LEFT_OUT:
            continue
        annotation: Any = info.annotation
        if field_name == "payload":
            annotation = PAYLOADS[table]
        elif field_name in JSON_COLUMNS:
            annotation = JSON_COLUMNS[field_name]
        elif annotation in (datetime, datetime | None):
            annotation = str if annotation is datetime else str | None
        fields[field_name] = (annotation, ...)
    built: type[BaseModel] = create_model(name, **fields)
    return built


def _document() -> type[BaseModel]:
    tables: dict[str, Any] = {
        table: (
            list[_row_model(f"Export{model.__name__}", table, model)],  # type: ignore[misc]
            ... if table not in OPTIONAL_TABLES else Field(default_factory=list),
        )
        for table, (model, _refs) in TABLES.items()
    }
    built: type[BaseModel] = create_model(
        "ExportDocument",
        format=(str, Field(description="crusade-campaign/1")),
        campaign=(_row_model("ExportCampaign", "campaign", Campaign), ...),
        **tables,
    )
    return built


# Only in an archive with the photos (GET .../export?photos=true); never in the JSON alone.
OPTIONAL_TABLES = {"battle_photos"}
ExportDocument = _document()
