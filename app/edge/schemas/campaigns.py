"""Bodies of a campaign: creating it, its settings, invites, and its map's territories."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StrictBool, StringConstraints

from app.edge.schemas.common import Id, Input, Name, Text


class CampaignCreate(Input):
    name: Name
    description: Text = ""


class CampaignPublic(BaseModel):
    id: int
    name: str
    description: str
    created_at: datetime
    organizer_results_need_confirmation: bool = Field(
        default=True,
        description="Whether a battle an organizer plays in waits for the opponent's confirmation",
    )


class CampaignSettings(Input):
    name: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
        | None
    ) = None
    description: Annotated[str, StringConstraints(max_length=4000)] | None = None
    public: StrictBool | None = Field(default=None, description="Anyone may read the campaign")
    join_policy: Literal["invite", "open"] | None = None
    organizer_results_need_confirmation: StrictBool | None = Field(
        default=None,
        description=(
            "true (the default): a battle an organizer plays in waits for the opponent's"
            " confirmation like any player's; false: an organizer's own result applies at once"
        ),
    )


class InviteCreate(Input):
    role: Literal["player", "organizer"] = "player"
    hours: int = Field(default=168, ge=1, le=24 * 90)
    max_uses: int = Field(default=1, ge=1, le=100)


TerritoryName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)
]


Bonus = Literal["none", "requisition_point"]


class TerritoryIn(Input):
    name: TerritoryName
    description: Annotated[str, StringConstraints(max_length=2000)] = ""
    neighbours: list[Id] = Field(default_factory=list, max_length=50)
    bonus: Bonus = Field(
        default="none",
        description="requisition_point: its holder gains 1 more RP after each battle it "
        "plays (ruling 54)",
    )
    holder_force_id: Id | None = None


class TerritoryPatch(Input):
    name: TerritoryName | None = None
    description: Annotated[str, StringConstraints(max_length=2000)] | None = None
    neighbours: list[Id] | None = Field(default=None, max_length=50)
    bonus: Bonus | None = None
    holder_force_id: Id | None = None


class TerritoryPublic(BaseModel):
    id: int
    campaign_id: int
    name: str
    description: str
    neighbours: list[int]
    bonus: str
    holder_force_id: int | None
