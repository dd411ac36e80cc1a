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


class OfferDice(BaseModel):
    """The dice an answer that leaves the result to a roll uses, when it gives its own
    (`dice`): one throw of `sides` (in order), thrown again while it shows a face in
    `again_on` (a result the unit holds) or, with `again_on_double`, while its two dice
    show the same result. Dice left over are not used."""

    sides: list[int]
    again_on: list[int] = Field(default_factory=list)
    again_on_double: bool = False
    at_most: int = Field(
        description="The most dice the answer can use: the throw's dice, or 50 (the most "
        "`dice` may list) where a throw may be thrown again"
    )


class OfferEntry(BaseModel):
    """An entry an answer may name now (`entries`, `scar`, a relic)."""

    id: str
    name: str
    pack: str | None = Field(default=None, description="A rule pack's entry (chosen alone)")
    low: int | None = Field(default=None, description="A table's entry: its lowest result")
    high: int | None = Field(default=None, description="A table's entry: its highest result")
    weapon_type: str | None = Field(
        default=None,
        description="weapon_enhancement: the `weapon.weapon_type` it needs (ranged; melee "
        "or both; any)",
    )
    needs: list[str] = Field(
        default_factory=list, description="Inputs this entry needs too (`weapon`)"
    )
    requisition_points: int = Field(default=0, description="RP it costs (a Legendary Relic)")


class OfferWeapon(BaseModel):
    """A weapon of the unit's own wargear that may take it: send as `weapon`."""

    model: str
    weapon: str


class OfferFreeWeapon(BaseModel):
    """The card lists no wargear (ruling 80): the answer's `weapon` names any weapon this
    model carries, in the player's own words."""

    model: str = Field(description="`weapon.model`: the unit's champion, or the unit")
    max_length: int = Field(description="The longest `weapon.weapon` accepted")


class OfferCategory(BaseModel):
    """One category an answer may take for the unit: battle_trait, weapon_enhancement,
    psychic_fortitude, crusade_relic, or (a battle_scar decision) battle_scar."""

    category: str
    entries: list[OfferEntry] = Field(
        description="The entries allowed now (`entries` of a battle_honour answer, `scar` of a "
        "battle_scar one)"
    )
    choose: int = Field(
        description="How many entries an answer that picks names: 2 for a Weapon Enhancement "
        "of most units (one of them results 1-3, both of the weapon's type; a pack's alone)"
    )
    rolled: bool = Field(description="The entries may be left out: the server (or `dice`) rolls")
    needs: list[str] = Field(description="Inputs the answer needs beside these (`weapon`)")
    weapons: list[OfferWeapon] = Field(
        description="The unit's weapons (its card's wargear, count left off) not enhanced nor "
        "a Relic; empty when the card lists no wargear (then see `free_weapon`). Where the card "
        "lists wargear, a weapon it does not list is refused `weapon_not_in_wargear`"
    )
    free_weapon: OfferFreeWeapon | None = Field(
        default=None,
        description="Set when the card lists no wargear and `weapon` is needed: name any "
        "weapon the model carries (ruling 80)",
    )
    dice: OfferDice | None = Field(description="A rolled answer's dice")
    tables: list[str] = Field(
        description="Rule pack tables it may roll on instead (`table`; see `pack_entries`)"
    )


class OfferOption(BaseModel):
    """out_of_action: a consequence allowed, and the dice it rolls."""

    consequence: str
    dice: OfferDice | None


class OfferUnit(BaseModel):
    card_id: int
    name: str
    categories: list[OfferCategory] = Field(
        description="battle_honour, battle_scar: what it may take now"
    )
    options: list[OfferOption] = Field(description="out_of_action: the consequences allowed")


class OfferTraitPublic(BaseModel):
    id: str
    name: str
    pack: str | None = None


class OfferTarget(BaseModel):
    """A unit a free requisition may go to (its `card_id`)."""

    card_id: int
    name: str
    scars: list[str] = Field(
        default_factory=list, description="repair_and_recuperate: the scars it may remove"
    )
    warlord_traits: list[OfferTraitPublic] = Field(
        default_factory=list,
        description="warlord_trait: the campaign's rule pack traits it may take (any trait of "
        "its codex not in `taken` goes too)",
    )


class OfferRequisition(BaseModel):
    """A free requisition a victor bonus grants."""

    requisition: str
    name: str
    times: int = Field(description="How many times the bonus grants it")
    target: Literal["force", "unit"]
    targets: list[OfferTarget] = Field(
        description="target unit: the units it may go to now (empty: none can)"
    )
    needs: list[str] = Field(
        description="What each order needs beside `requisition` (card_id, wargear, scar, "
        "warlord_trait, relic, ...)"
    )
    taken: list[str] = Field(
        description="warlord_trait, relic: those already in the Order of Battle (each may be "
        "there once)"
    )


class DecisionOfferPublic(BaseModel):
    """What a pending decision accepts now, in full (issue 46): answering with what it
    lists is accepted. Worked out when asked; a refused answer carries it as it stands."""

    units: list[OfferUnit] = Field(
        description="out_of_action, battle_scar, battle_honour: the units the answer may "
        "concern (a victor bonus's honour: its `card_id`), with what each may take"
    )
    requisitions: list[OfferRequisition] = Field(
        description="victor_bonus: the free requisitions, each with its targets"
    )
    mode: Literal["all", "one_of"] | None = Field(
        description="victor_bonus: use each once (all), or just one of them (one_of)"
    )
    may_decline: bool = Field(
        description='victor_bonus: `{"requisitions": []}` settles it taking nothing (the '
        "way out when no unit can take what it grants)"
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
    offer: DecisionOfferPublic | None = Field(
        default=None,
        description="Pending: what its answer accepts now, in full (issue 46); null otherwise",
    )
