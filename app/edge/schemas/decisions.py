"""Bodies of the decisions a battle leaves: their payload, and the answer a player gives (the
API's body and the website's form alike)."""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StrictBool, StringConstraints

from app.edge.schemas.battles import ExperienceGainPublic
from app.edge.schemas.common import Die, Id, Input
from app.edge.schemas.requisitions import RequisitionDetails, RequisitionIn
from app.rules.data import (
    PackTableResult,
    VictorBonus,
)
from app.rules.dice import Dice, EnteredDice, SeededDice


class WeaponIn(Input):
    model: Annotated[str, StringConstraints(max_length=120)]
    weapon: Annotated[str, StringConstraints(max_length=120)]
    weapon_type: Literal["ranged", "melee", "both"] = "ranged"
    is_relic: StrictBool = False


class DecisionAnswer(Input):
    consequence: Literal["devastating_blow", "battle_scar"] | None = None
    scar: Annotated[str, StringConstraints(max_length=60)] | None = None
    category: (
        Literal["battle_trait", "weapon_enhancement", "psychic_fortitude", "crusade_relic"] | None
    ) = None
    entries: list[Annotated[str, StringConstraints(max_length=60)]] = Field(
        default_factory=list, max_length=2
    )
    weapon: WeaponIn | None = None
    card_id: Id | None = None
    requisitions: list[RequisitionIn] = Field(default_factory=list, max_length=3)
    dice: list[Die] | None = Field(default=None, max_length=50)
    table: Annotated[str, StringConstraints(max_length=60)] | None = Field(
        default=None,
        description="battle_honour, battle_scar: roll on this rule pack table (a pack_entries "
        "offer of category 'table'); with entries/scar, pick that result where the table "
        "lets players choose",
    )


def answer_of(body: DecisionAnswer) -> dict[str, Any]:
    """The answer the decisions service takes (the dice apart): the same from the API's body
    and from the website's form."""
    return body.model_dump(exclude_none=True, exclude={"dice"})


def dice_of(body: DecisionAnswer) -> Dice:
    """The dice rolled at the table when the answer gives them, else the server's roll."""
    if body.dice is not None:
        return EnteredDice(body.dice)
    return SeededDice(secrets.randbelow(2**31))


class ThresholdSourcePublic(BaseModel):
    """The rule pack's threshold a decision comes from."""

    id: str
    name: str
    pack: str


CancelledBecause = Literal["battle_reverted", "battle_called_off", "no_unit_can_take_it"]


class DecisionPayload(BaseModel):
    """What is to be decided; which fields are set depends on the decision's kind."""

    options: list[Literal["devastating_blow", "battle_scar"]] = Field(
        default_factory=list, description="out_of_action: the consequences allowed"
    )
    gain: ExperienceGainPublic | None = Field(
        default=None, description="out_of_action: the XP held until the choice is made"
    )
    reason: Literal["rank", "victor_bonus"] | None = Field(
        default=None, description="battle_honour: a rank gained, or a victor bonus"
    )
    rank: str | None = Field(default=None, description="battle_honour: the rank reached")
    categories: list[str] = Field(
        default_factory=list,
        description="battle_honour: the categories allowed; while pending, only those in "
        "which a unit it concerns can gain an honour now",
    )
    eligible: list[int] = Field(
        default_factory=list,
        description="battle_honour for a victor bonus: the units allowed; while pending, "
        "exactly those its answer accepts now (any of them can take an honour in one of "
        "`categories`). victor_bonus owed by a rule pack's threshold or quest (issue 47): "
        "the units that may take its requisitions for a unit (the decision's `card_id` "
        "alone when a unit earned it)",
    )
    bonus: VictorBonus | None = Field(default=None, description="victor_bonus: the bonus")
    cancelled_because: CancelledBecause | None = Field(
        default=None,
        description="A cancelled decision: why. Answering it is refused with 409 "
        "`decision_cancelled`. `no_unit_can_take_it`: a Battle Honour that no unit can "
        "take any more (ruling 71)",
    )
    threshold: ThresholdSourcePublic | None = Field(
        default=None,
        description="victor_bonus owed by a rule pack's threshold reached (issue 38), not by "
        "a victory: its free requisitions are the threshold's reward",
    )
    quest: ThresholdSourcePublic | None = Field(
        default=None,
        description="victor_bonus owed by a rule pack's quest (issue 38): its reward, or its "
        "penalty",
    )


class WeaponPublic(BaseModel):
    model: str
    weapon: str
    weapon_type: str = "ranged"
    is_relic: bool = False


class RequisitionOrderPublic(RequisitionDetails):
    requisition: str


class DieRolledPublic(BaseModel):
    """A die the app rolled while applying an answer ("roll for it")."""

    purpose: str
    sides: int
    value: int


class DecisionAnswerPublic(BaseModel):
    consequence: str | None = None
    scar: str | None = None
    category: str | None = None
    entries: list[str] = Field(default_factory=list)
    weapon: WeaponPublic | None = None
    card_id: int | None = None
    requisitions: list[RequisitionOrderPublic] = Field(default_factory=list)
    rolled: list[DieRolledPublic] = Field(
        default_factory=list, description="Dice the app rolled for this answer, in order"
    )
    gained: list[str] = Field(
        default_factory=list,
        description="What the answer added, as `card:kind:entry` (kind: scar or an honour "
        "category)",
    )
    joined: list[int] = Field(
        default_factory=list,
        description="Issue 38: the units the answer brought into the Order of Battle (a rule "
        "pack's add_unit); a revert of its battle removes them",
    )


class PackOfferPublic(BaseModel):
    """A rule pack's entry a pending decision may be answered with (answer with its id)."""

    category: str = Field(
        description="battle_trait, weapon_enhancement, psychic_fortitude, crusade_relic, "
        "battle_scar, or requisition (a victor bonus's free requisition)"
    )
    id: str
    name: str
    summary: str
    pack: str = Field(description="The rule pack's id")
    table_of: str | None = Field(
        default=None, description="category 'table': the category of its entries (issue 38)"
    )
    dice: Literal["D6", "2D6", "D33"] | None = Field(
        default=None, description="category 'table': the dice it is rolled with"
    )
    chosen: bool | None = Field(
        default=None, description="category 'table': a result may be picked instead of rolled"
    )
    results: list[PackTableResult] = Field(
        default_factory=list, description="category 'table': each result and its entry"
    )


class DecisionPublic(BaseModel):
    id: int
    force_id: Id
    battle_id: int | None
    card_id: Id | None
    kind: str
    payload: DecisionPayload
    status: str = Field(
        description="pending, answered or cancelled (its battle was reverted or called off, "
        "or nothing can take it any more: see `payload.cancelled_because`)"
    )
    answer: DecisionAnswerPublic | None = Field(description="None while pending")
    pack_entries: list[PackOfferPublic] = Field(
        default_factory=list,
        description="Pending: the campaign's rule pack entries it may be answered with, beside "
        "the core's tables (for its unit, those it may take and does not hold)",
    )
