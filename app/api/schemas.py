"""Request and response bodies of the JSON API. Inputs carry length and range limits."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=8000)]
Keyword = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    offset: int
    limit: int


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CampaignCreate(Input):
    name: Name
    description: Text = ""


class CampaignPublic(BaseModel):
    id: int
    name: str
    description: str
    created_at: datetime


class ForceCreate(Input):
    name: Name
    crusade_faction: Annotated[str, StringConstraints(max_length=40)] = Field(examples=["IMPERIUM"])
    player_name: Annotated[str, StringConstraints(max_length=120)] = ""
    notes: Text = ""


class ForceUpdate(Input):
    name: Name | None = None
    player_name: Annotated[str, StringConstraints(max_length=120)] | None = None
    notes: Text | None = None


class ForceSummary(BaseModel):
    id: int
    campaign_id: int
    name: str
    player_name: str
    crusade_faction: str
    requisition_points: int
    supply_limit: int
    supply_used: int
    battle_tally: int
    victories: int
    crusade_points: int
    notes: str


class HonourPublic(BaseModel):
    category: str
    entries: list[dict[str, str]]
    crusade_points: int
    weapon: str | None
    model: str | None
    dice: list[list[int]]


class ScarPublic(BaseModel):
    id: str
    name: str
    summary: str
    dice: list[list[int]]


class CardCreate(Input):
    name: Name
    power_rating: int = Field(ge=1, le=200)
    keywords: list[Keyword] = Field(default_factory=list, max_length=40)
    datasheet: Annotated[str, StringConstraints(max_length=120)] = ""
    battlefield_role: Annotated[str, StringConstraints(max_length=40)] = ""
    champion: Annotated[str, StringConstraints(max_length=120)] | None = None
    named_character: bool = False
    wargear: Annotated[str, StringConstraints(max_length=4000)] = ""
    psychic_powers: Annotated[str, StringConstraints(max_length=2000)] = ""
    narrative: Text = ""


class CardUpdate(Input):
    name: Name | None = None
    narrative: Text | None = None


class TalliesPublic(BaseModel):
    battles_played: int
    battles_survived: int
    destroyed_psychic: int
    destroyed_ranged: int
    destroyed_melee: int
    units_destroyed: int
    marked_for_greatness: int


class CardPublic(BaseModel):
    id: int
    force_id: int
    name: str
    datasheet: str
    battlefield_role: str
    power_rating: int
    keywords: list[str]
    champion: str | None
    named_character: bool
    wargear: str
    psychic_powers: str
    narrative: str
    gains_experience: bool
    xp: int
    rank: str
    rank_name: str
    next_rank_xp: int | None
    crusade_points: int
    honours: list[HonourPublic]
    scars: list[ScarPublic]
    upgrades: list[dict[str, Any]]
    tallies: TalliesPublic
    awaiting_decision: bool
    removed: bool


class OrderOfBattlePublic(ForceSummary):
    cards: list[CardPublic]


class EventPublic(BaseModel):
    id: int
    kind: str
    force_id: int | None
    battle_id: int | None
    payload: dict[str, Any]
    created_at: datetime
