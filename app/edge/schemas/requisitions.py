"""Bodies of buying a Requisition, and the rules' order they become (requisition_order: the API
and the website alike)."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from app.edge.schemas.common import Die, Id, Input, Keyword, Name
from app.rules.requisitions import RequisitionOrder


class NewUnitIn(Input):
    """The unit a rule pack's requisition brings when the buyer names it."""

    name: Name
    power_rating: int = Field(ge=1, le=200)
    points: int | None = Field(default=None, ge=0, le=10000)
    keywords: list[Keyword] = Field(default_factory=list, max_length=40)


class RequisitionIn(Input):
    """A Requisition to buy; only the fields that Requisition uses are read."""

    requisition: Annotated[str, StringConstraints(max_length=40)]
    card_id: Id | None = None
    new_power_rating: int | None = Field(default=None, ge=1, le=200)
    new_points: int | None = Field(
        default=None,
        ge=1,
        le=10000,
        description="Fresh Recruits: the unit's points with its new models (needed where the "
        "campaign musters by points)",
    )
    wargear: Annotated[str, StringConstraints(max_length=4000)] | None = None
    replaced_weapons: list[Annotated[str, StringConstraints(max_length=120)]] = Field(
        default_factory=list, max_length=20
    )
    scar: Annotated[str, StringConstraints(max_length=40)] | None = None
    psychic_powers: Annotated[str, StringConstraints(max_length=2000)] | None = None
    stratagem: Annotated[str, StringConstraints(max_length=120)] | None = None
    stratagem_cp: int | None = Field(default=None, ge=1, le=10)
    warlord_trait: Annotated[str, StringConstraints(max_length=120)] | None = None
    relic: Annotated[str, StringConstraints(max_length=120)] | None = None
    model: Annotated[str, StringConstraints(max_length=120)] | None = None
    first_founding: StrictBool = False
    replaces_weapon: Annotated[str, StringConstraints(max_length=120)] | None = None
    new_unit: NewUnitIn | None = Field(
        default=None,
        description="A rule pack's requisition that brings a unit the buyer names (add_unit "
        "with chosen)",
    )
    dice: list[Die] | None = Field(
        default=None,
        max_length=50,
        description="A rule pack's roll_table: the dice rolled at the table, in order (a D33 "
        "takes two D3, 2D6 two D6); left out, the app rolls",
    )


def requisition_order(body: RequisitionIn) -> RequisitionOrder:
    """The rules' order for a Requisition bought through the API or the website."""
    data = body.model_dump()
    data["card_id"] = str(body.card_id) if body.card_id is not None else None
    data["replaced_weapons"] = tuple(body.replaced_weapons)
    data["dice"] = tuple(body.dice or ())
    data["seed"] = None if body.dice else secrets.randbelow(2**31)
    return RequisitionOrder(**data)


class NewUnitOut(BaseModel):
    """The unit a buyer named for a rule pack's requisition (add_unit with chosen)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    power_rating: int
    points: int | None = None
    keywords: list[str] = Field(default_factory=list)


class RequisitionDetails(BaseModel):
    """The order's own fields (those the Requisition used)."""

    card_id: int | None = None
    new_power_rating: int | None = None
    new_points: int | None = None
    wargear: str | None = None
    replaced_weapons: list[str] = Field(default_factory=list)
    scar: str | None = None
    psychic_powers: str | None = None
    stratagem: str | None = None
    stratagem_cp: int | None = None
    warlord_trait: str | None = None
    relic: str | None = None
    model: str | None = None
    first_founding: bool = False
    replaces_weapon: str | None = None
    new_unit: NewUnitOut | None = None
    promoted: list[Id] = Field(
        default_factory=list,
        description="Units its XP took to a new rank: a CHARACTER among them may take a "
        "Warlord Trait or Relic until its force musters again",
    )


class RequisitionPublic(BaseModel):
    id: int
    force_id: Id
    card_id: Id | None
    requisition: str
    requisition_points_spent: int
    crusade_points_gained: int
    details: RequisitionDetails
    created_at: datetime
