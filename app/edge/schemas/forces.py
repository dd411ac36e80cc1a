"""Bodies of Crusade forces and their cards: the Order of Battle as the API and the force pages
show it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StrictBool, StringConstraints

from app.edge.schemas.common import Id, Input, Keyword, Name, Text
from app.edge.schemas.requisitions import RequisitionIn


class ForceCreate(Input):
    name: Name
    crusade_faction: Annotated[str, StringConstraints(max_length=40)] = Field(examples=["IMPERIUM"])
    player_name: Annotated[str, StringConstraints(max_length=120)] = ""
    notes: Text = ""
    army_keywords: list[Keyword] = Field(
        default_factory=list,
        max_length=10,
        description="Faction keywords beyond the Crusade faction (ADEPTA SORORITAS): a rule "
        "pack's content scoped to a faction reaches a force that has it (issue 47)",
        examples=[["ADEPTA SORORITAS"]],
    )


class ForceUpdate(Input):
    name: Name | None = None
    player_name: Annotated[str, StringConstraints(max_length=120)] | None = None
    notes: Text | None = None
    army_keywords: list[Keyword] | None = Field(
        default=None,
        max_length=10,
        description="Replace the force's army keywords (issue 47); refused while a battle of "
        "it is under way",
    )


class QuestProgressPublic(BaseModel):
    """A rule pack's quest its holder has begun (issue 38)."""

    quest: str
    name: str
    state: Literal["under_way", "completed", "failed"]
    step: int = Field(description="under_way: the step it is on (1 for the first)")
    steps: int = Field(description="How many steps the quest has (0: its pack is detached)")
    tally: int = Field(description="under_way: the tally on its step")
    count: int = Field(default=0, description="under_way: the tally the step needs")


class ForceSummary(BaseModel):
    id: int
    campaign_id: int
    name: str
    player_name: str
    crusade_faction: str
    army_keywords: list[str] = Field(
        default_factory=list,
        description="Faction keywords beyond the Crusade faction, which rule packs' scopes "
        "read (issue 47)",
    )
    requisition_points: int
    supply_limit: int
    supply_used: int
    battle_tally: int
    victories: int
    crusade_points: int
    notes: str
    counters: dict[str, int] = Field(
        default_factory=dict, description="Rule packs' force counters, by counter id"
    )
    choices: dict[str, str | None] = Field(
        default_factory=dict,
        description="Rule packs' named choices of the force, by counter id: the choice's id "
        "(null: none yet); `counters` keeps its number (issue 47)",
    )
    quests: list[QuestProgressPublic] = Field(
        default_factory=list, description="Rule packs' force quests begun (issue 38)"
    )
    muster_by: Literal["power_level", "points"] = Field(
        default="power_level",
        description="What supply_limit and supply_used count: Power Rating, or points where "
        "a rule pack's house rule musters by points",
    )


class EntryPublic(BaseModel):
    """One row of a rules table (a Battle Trait, a Crusade Relic ...)."""

    id: str
    name: str
    summary: str


# A pair reads [sides, value], not two dice: [[6, 3]] is one D6 that rolled a 3.
_DICE = (
    "The dice rolled for it, in order (re-rolls included), each as [sides, value]: [[6, 3]] "
    "is one D6 that rolled a 3. Empty when it was chosen, not rolled."
)


class HonourPublic(BaseModel):
    category: str
    entries: list[EntryPublic]
    crusade_points: int
    weapon: str | None
    model: str | None
    dice: list[list[int]] = Field(description=_DICE)


class ScarPublic(BaseModel):
    id: str
    name: str
    summary: str
    dice: list[list[int]] = Field(description=_DICE)


_SPLIT_UNIT = (
    "The split unit this card is part of (a squadron or a unit with drones that splits in "
    "battle, each part with its own card): cards with the same label are mustered together. "
    "The link is fixed once they have fought (split_unit_fixed)."
)


SplitUnit = Annotated[
    Annotated[str, StringConstraints(max_length=120, strip_whitespace=True)] | None,
    Field(description=_SPLIT_UNIT),
]


class CardCreate(Input):
    name: Name
    power_rating: int = Field(ge=1, le=200)
    keywords: list[Keyword] = Field(default_factory=list, max_length=40)
    datasheet: Annotated[str, StringConstraints(max_length=120)] = ""
    battlefield_role: Annotated[str, StringConstraints(max_length=40)] = ""
    champion: Annotated[str, StringConstraints(max_length=120)] | None = None
    named_character: StrictBool = False
    split_unit: SplitUnit = None
    points: int | None = Field(
        default=None, ge=0, le=10000, description="Its points, shown beside its Power Rating"
    )
    warlord_trait: Annotated[str, StringConstraints(max_length=120)] | None = Field(
        default=None,
        description="A named character's own Warlord Trait (free, no Crusade points); other "
        "CHARACTERs buy one with the warlord_trait requisition",
    )
    wargear: Annotated[str, StringConstraints(max_length=4000)] = ""
    psychic_powers: Annotated[str, StringConstraints(max_length=2000)] = ""
    narrative: Text = ""
    requisitions: list[RequisitionIn] = Field(
        default_factory=list,
        max_length=3,
        description="Requisitions bought as the card is added (e.g. Warlord Trait, Relic, "
        "Specialist Reinforcements); card_id may be left out",
    )


class CardsCreate(Input):
    """Several units added in one request: all of them, or (on a refusal) none."""

    units: list[CardCreate] = Field(
        min_length=1,
        max_length=30,
        description="The units in order; each is checked as if added alone, against the Order "
        "of Battle as it grows (a refusal names its path, e.g. units[2].power_rating)",
    )


class CardsPublic(BaseModel):
    """The cards added by one request, in the order given."""

    cards: list[CardPublic]


class CardUpdate(Input):
    name: Name | None = None
    narrative: Text | None = None
    split_unit: SplitUnit = Field(
        default=None, description=f"{_SPLIT_UNIT} An empty string takes the card out of it."
    )
    keywords: list[Keyword] | None = Field(
        default=None,
        max_length=40,
        description="A correction, only while the unit is as it joined (no battle, XP, "
        "honours, scars or Requisitions); it keeps the force's faction keyword or UNALIGNED",
    )


class UpgradePublic(BaseModel):
    """A lasting change bought with a Requisition and worth Crusade points."""

    requisition: str
    detail: str
    crusade_points: int
    model: str | None = None
    weapon: str | None = None
    first_founding: bool = False


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
    force_id: Id
    name: str
    datasheet: str
    battlefield_role: str
    power_rating: int
    keywords: list[str]
    champion: str | None
    named_character: bool
    split_unit: str | None = Field(default=None, description="The split unit it is part of")
    points: int | None = Field(
        default=None, description="Its points (from a roster), if known; the rules use PR"
    )
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
    upgrades: list[UpgradePublic]
    tallies: TalliesPublic
    awaiting_decision: bool
    removed: bool
    counters: dict[str, int] = Field(
        default_factory=dict, description="Rule packs' card counters, by counter id"
    )
    choices: dict[str, str | None] = Field(
        default_factory=dict,
        description="Rule packs' named choices the unit holds, by counter id: the choice's "
        "id (null: none yet); `counters` keeps its number (issue 47)",
    )
    quests: list[QuestProgressPublic] = Field(
        default_factory=list, description="Rule packs' quests the unit has begun (issue 38)"
    )


class OrderOfBattlePublic(ForceSummary):
    cards: list[CardPublic]
