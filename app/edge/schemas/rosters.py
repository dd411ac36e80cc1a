"""Bodies of a roster import: the preview and what was added."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.edge.schemas.forces import CardPublic


class RosterChangePublic(BaseModel):
    field: Literal["power_rating", "wargear", "psychic_powers", "keywords"]
    card: str = Field(description="As the card has it")
    roster: str = Field(description="As the roster has it")


class RosterCardPublic(BaseModel):
    id: int
    name: str
    power_rating: int


class RosterUnitPublic(BaseModel):
    """One unit read from a roster file, and whether the Order of Battle already has it."""

    key: str = Field(description="Its place in this roster file; name it in `units` to add it")
    name: str
    datasheet: str
    power_rating: int
    points: int | None = Field(default=None, description="Its points in the roster")
    keywords: list[str]
    faction_keywords: list[str]
    battlefield_role: str
    models: list[str]
    wargear: list[str]
    psychic_powers: list[str]
    warlord_trait: str | None
    relic: str | None
    warlord: bool
    detachment: str
    present_card_id: int | None = Field(
        description="The card already in the Order of Battle for this unit (matched by name "
        "and datasheet); such a unit is never added again, and its card changes only through "
        "`update`"
    )
    offered_requisitions: list[str] = Field(
        description="Requisitions the roster asks for on this unit (`warlord_trait`, "
        "`relic`, and `specialist_reinforcements` for a knight its Knight Lance / Traitoris "
        "Lance option makes a CHARACTER: Knight Baron or Tyrannical Court); name them in "
        "`buy` as `<key>:<requisition>` to buy them (1 RP each)"
    )
    changes: list[RosterChangePublic] = Field(
        default_factory=list,
        description="A present unit: each detail the roster has otherwise than its card",
    )
    update_requisitions: list[str] = Field(
        default_factory=list,
        description="The Requisitions (1 RP each) that carry the changes over when its key is "
        "named in `update` (ruling 52)",
    )
    update_refused: str | None = Field(
        default=None, description="Why buying them would be refused now, if it would"
    )
    not_applied: list[str] = Field(
        default_factory=list,
        description="Changes no Requisition carries over (a lower Power Rating, keywords)",
    )
    problem: str | None = Field(
        default=None,
        description="A new unit that cannot join this force as the file has it (no keywords, "
        "not the force's faction): why. It is left out when `units` is not given (ruling 75)",
    )


class RosterSkippedPublic(BaseModel):
    key: str
    name: str
    reason: str
    power_rating: int = Field(default=0, description="The Power it carries in the roster")


class RosterPreviewPublic(BaseModel):
    name: str
    game_system: str
    factions: list[str]
    detachments: list[str]
    units: list[RosterUnitPublic]
    unreadable: list[RosterSkippedPublic]
    new_power: int = Field(description="Power of the units not yet in the Order of Battle")
    read_power: int = Field(default=0, description="Power of every unit read from the file")
    roster_power_level: int | None = Field(
        default=None, description="The roster's own PL total, as the file gives it"
    )
    roster_points: int | None = Field(
        default=None, description="The roster's own points total, as the file gives it"
    )
    supply_used: int
    supply_limit: int
    requisition_points: int
    missing_cards: list[RosterCardPublic] = Field(
        default_factory=list,
        description="Cards of the force this roster does not have (shown, never removed)",
    )


class RosterImportPublic(BaseModel):
    roster: RosterPreviewPublic
    cards: list[CardPublic]
    requisitions: list[str] = Field(description="What was bought, as `<key>:<requisition>`")
    updated_card_ids: list[int] = Field(
        default_factory=list, description="Cards brought up to the roster through `update`"
    )
