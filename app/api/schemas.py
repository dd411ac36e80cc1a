"""Request and response bodies of the JSON API. Inputs carry length and range limits."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from app.rules import packs
from app.rules.data import (
    Agenda,
    BattleSize,
    Counter,
    CounterThreshold,
    CrusadeNumbers,
    CrusadeRelic,
    Mission,
    PackHonour,
    PackScar,
    PackTable,
    PackTableResult,
    PackWarlordTrait,
    PackWeaponEnhancement,
    Quest,
    Requisition,
    Trigger,
    VictorBonus,
)

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=8000)]
Keyword = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
# Ids fit a 32-bit column on every engine (PostgreSQL refuses larger ones with an error).
Id = Annotated[int, Field(ge=1, lt=2**31)]


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
    organizer_results_need_confirmation: bool = Field(
        default=True,
        description="Whether a battle an organizer plays in waits for the opponent's confirmation",
    )


class ForceCreate(Input):
    name: Name
    crusade_faction: Annotated[str, StringConstraints(max_length=40)] = Field(examples=["IMPERIUM"])
    player_name: Annotated[str, StringConstraints(max_length=120)] = ""
    notes: Text = ""


class ForceUpdate(Input):
    name: Name | None = None
    player_name: Annotated[str, StringConstraints(max_length=120)] | None = None
    notes: Text | None = None


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


class HonourPublic(BaseModel):
    category: str
    entries: list[EntryPublic]
    crusade_points: int
    weapon: str | None
    model: str | None
    dice: list[list[int]]


class ScarPublic(BaseModel):
    id: str
    name: str
    summary: str
    dice: list[list[int]]


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
    quests: list[QuestProgressPublic] = Field(
        default_factory=list, description="Rule packs' quests the unit has begun (issue 38)"
    )


class OrderOfBattlePublic(ForceSummary):
    cards: list[CardPublic]


class SideScore(BaseModel):
    force_id: int
    victory_points: int


class UnitOutcome(BaseModel):
    """battle_recorded: what the battle did to one unit of a roster."""

    card_id: int
    name: str
    xp_gained: int = Field(
        description="XP the battle gave it (0 while its Out of Action choice is pending: the "
        "XP waits for that choice)"
    )
    xp: int = Field(description="Its XP after the battle")
    rank: str | None = Field(description="Its rank after the battle (an id of /rules/ranks)")
    rank_reached: str | None = Field(description="The rank this battle took it to, if any")
    destroyed: bool = Field(description="Reported destroyed in the battle")
    out_of_action: Literal["passed", "devastating_blow", "battle_scar", "pending"] | None = Field(
        description="Its Out of Action test: null when it took none"
    )
    honours_owed: int = Field(description="Battle Honour decisions it waits for (a new rank)")
    scars_owed: int = Field(description="Battle Scar decisions it waits for")


class ForceOutcome(BaseModel):
    """battle_recorded: what the battle did to one force."""

    force_id: int
    result: Literal["won", "lost", "draw"]
    victory_points: int | None
    requisition_points: int = Field(description="Its RP after the battle")
    crusade_points: int = Field(description="Its Crusade points after the battle")
    victor_bonuses_owed: int = Field(
        description="Victor bonus decisions it waits for (not about one unit)"
    )
    units: list[UnitOutcome] = Field(description="Its roster, in roster order")


class EventDetails(BaseModel):
    """What the history recorded with an event; which fields are set depends on its kind."""

    name: str | None = None
    user: str | None = None
    user_id: int | None = None
    role: str | None = None
    card_id: int | None = None
    power_rating: int | None = None
    requisition: str | None = None
    requisition_points_spent: int | None = None
    outcome: str | None = None
    victory_points: list[SideScore] = Field(default_factory=list)
    battle_size: str | None = None
    mission: str | None = None
    mission_roll: int | None = None
    forces: list[int] = Field(default_factory=list)
    decision_id: int | None = None
    decision: str | None = None
    rank: str | None = None
    category: str | None = None
    entries: list[str] = Field(default_factory=list)
    scar: str | None = None
    fields: list[str] = Field(
        default_factory=list, description="campaign_settings_changed: the settings changed"
    )
    pack: str | None = Field(default=None, description="The rule pack it concerns (issue 22)")
    requisition_name: str | None = Field(default=None, description="A rule pack's requisition")
    counters: dict[str, int] = Field(
        default_factory=dict, description="Counters a rule pack's requisition changed (new values)"
    )
    version: str | None = Field(default=None, description="rule_pack_*: the pack's version")
    replaces: str | None = Field(default=None, description="rule_pack_updated: the old version")
    counter: str | None = Field(default=None, description="counter_changed: the counter's id")
    before: int | None = Field(default=None, description="counter_changed: its value before")
    after: int | None = Field(default=None, description="counter_changed: its value after")
    reason: str | None = Field(
        default=None,
        description="decision_cancelled: why (`no_unit_can_take_it`: ruling 71; "
        "`battle_reverted`, `battle_called_off`: its battle's)",
    )
    sides: list[ForceOutcome] = Field(
        default_factory=list,
        description="battle_recorded: what the battle did to each force and unit (issue 34)",
    )
    threshold: str | None = Field(
        default=None, description="threshold_reached: the rule pack's threshold (issue 38)"
    )
    threshold_name: str | None = Field(
        default=None,
        description="threshold_reached, and decision_pending and decision_answered for the "
        "free requisitions it owes",
    )
    counter_name: str | None = Field(default=None, description="threshold_reached: its counter")
    at: int | None = Field(default=None, description="threshold_reached: the value reached")
    reset_to: int | None = Field(
        default=None, description="threshold_reached: the counter's value afterwards, if reset"
    )
    quest: str | None = Field(default=None, description="quest_*: the rule pack's quest")
    quest_name: str | None = Field(
        default=None,
        description="quest_*: its name; decision_pending and decision_answered for the free "
        "requisitions its reward owes",
    )
    step: int | None = Field(
        default=None,
        description="quest_*: the step it is on now (1 for the first; steps + 1: done; -1: "
        "failed; 0: not begun, after a revert)",
    )
    steps: int | None = Field(default=None, description="quest_*: how many steps it has")
    step_name: str | None = Field(default=None, description="quest_*: the step it is on")
    tally: int | None = Field(default=None, description="quest_*: the tally on that step")
    count: int | None = Field(default=None, description="quest_*: the tally the step needs")
    was: str | None = Field(
        default=None, description="card_transformed: the unit's name before (issue 38)"
    )
    datasheet: str | None = Field(default=None, description="card_transformed: its datasheet")
    keywords: list[str] = Field(
        default_factory=list, description="card_transformed: its keywords now"
    )


class EventPublic(BaseModel):
    id: int
    kind: str
    force_id: Id | None
    battle_id: int | None
    payload: EventDetails
    created_at: datetime


Count = Annotated[int, Field(ge=0, le=99)]
Die = Annotated[int, Field(ge=1, le=6)]


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


class SideSetupIn(Input):
    force_id: Id
    role: Literal["attacker", "defender"]
    roster: list[Id] = Field(min_length=1, max_length=200)
    agendas: list[Annotated[str, StringConstraints(max_length=60)]] = Field(max_length=4)
    warlord_card_id: Id | None = None


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


class BattleCreate(Input):
    battle_size: Annotated[str, StringConstraints(max_length=40)]
    mission: Annotated[str, StringConstraints(max_length=60)] | None = Field(
        default=None, description="A mission id; leave out to roll on the size's D6 table"
    )
    mission_roll: Die | None = Field(default=None, description="A D6 rolled at the table")
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    sides: list[SideSetupIn] = Field(min_length=2, max_length=2)
    territory_id: Id | None = Field(
        default=None, description="The map's territory fought over; its winner takes it"
    )


class UnitReportIn(Input):
    card_id: Id
    destroyed: StrictBool = False
    destroyed_psychic: Count = 0
    destroyed_ranged: Count = 0
    destroyed_melee: Count = 0
    agenda_tallies: dict[Annotated[str, StringConstraints(max_length=60)], Count] = Field(
        default_factory=dict, max_length=4
    )
    marked_for_greatness: StrictBool = False
    below_half_strength: StrictBool | None = Field(
        default=None,
        description="Survivor: the unit ended the battle below Half-strength (a single model: "
        "with fewer than half its wounds left). Leave out to let the Survivor tally stand.",
    )
    exfiltrated: StrictBool = Field(
        default=False,
        description="Behind Enemy Lines: the unit was exfiltrated (only such a unit can take "
        "the victor bonus).",
    )


class NamedDie(Input):
    """A die rolled at the table for one named roll."""

    roll: Literal["out_of_action", "devastating_blow", "agenda"] = Field(
        description="out_of_action / devastating_blow: that unit's test or blow "
        "(card_id); agenda: the Agenda's own roll (agenda, e.g. recover_mission_archives)"
    )
    card_id: Id | None = None
    agenda: Annotated[str, StringConstraints(max_length=60)] | None = None
    value: Die


class NamedDice(Input):
    """Dice given to named rolls; any other roll takes the next of ``others``."""

    rolls: list[NamedDie] = Field(max_length=400)
    others: list[Die] = Field(default_factory=list, max_length=400)


class SideResultIn(Input):
    force_id: Id
    victory_points: int = Field(ge=0, le=200)
    painted: StrictBool = False
    units: list[UnitReportIn] = Field(default_factory=list, max_length=200)
    dice: Annotated[list[Die], Field(max_length=400)] | NamedDice | None = Field(
        default=None,
        description="Dice rolled at the table; leave out to let the server roll. A list is "
        "used in this order: the Agendas' rolls (in the side's Agenda order), then for each "
        "unit in roster order its Out of Action test and, if it fails and takes a "
        "Devastating Blow, that D6. Or name each die's roll (NamedDice).",
    )
    out_of_action_choices: dict[Id, Literal["devastating_blow", "battle_scar"]] = Field(
        default_factory=dict
    )
    agenda_choices: dict[Annotated[str, StringConstraints(max_length=60)], Id] = Field(
        default_factory=dict
    )
    objective_markers: int | None = Field(
        default=None,
        ge=0,
        le=20,
        description="Optional: the objective markers set up at the start. The mission sets "
        "this number (GET /api/v1/rules/missions lists it); another is refused.",
    )


class BattleResultIn(Input):
    sides: list[SideResultIn] = Field(min_length=2, max_length=2)


class UnitReportPublic(BaseModel):
    card_id: int
    destroyed: bool = False
    destroyed_psychic: int = 0
    destroyed_ranged: int = 0
    destroyed_melee: int = 0
    agenda_tallies: dict[str, int] = Field(default_factory=dict, description="Tally by Agenda id")
    marked_for_greatness: bool = False


class OutOfActionTestPublic(BaseModel):
    card_id: int
    passed: bool
    roll: int | None = Field(description="None: the unit never gains XP, so it is not tested")


class DevastatingBlowPublic(BaseModel):
    card_id: int
    xp_lost: int
    roll: int


class ExperienceGainPublic(BaseModel):
    """One unit's XP from one battle by source, before any Devastating Blow or cap."""

    battle_experience: int = 0
    marked_for_greatness: int = 0
    dealers_of_death: int = 0
    agendas: dict[str, int] = Field(default_factory=dict, description="XP by Agenda id")
    cap: int | None = None


class UnitExperiencePublic(BaseModel):
    card_id: int
    xp_gained: int = Field(description="What the card gained after caps and blows")
    gain: ExperienceGainPublic | None


class PromotionPublic(BaseModel):
    card_id: int
    rank: str


class DieRollPublic(BaseModel):
    sides: int
    value: int


class SideReportPublic(BaseModel):
    units: list[UnitReportPublic]
    tests: list[OutOfActionTestPublic]
    devastating_blows: list[DevastatingBlowPublic]
    experience: list[UnitExperiencePublic]
    promotions: list[PromotionPublic]
    dice: list[DieRollPublic] = Field(
        description="The Agendas' dice, in order (each test and blow keeps its own roll)"
    )


class SidePublic(BaseModel):
    force_id: Id
    role: str
    roster: list[int]
    agendas: list[str]
    warlord_card_id: Id | None
    crusade_points: int
    bonus_command_points: int
    victory_points: int | None
    painted: bool
    won: bool
    report: SideReportPublic | None = Field(
        description="The post-battle sequence's record, once the result is applied"
    )


class BattleReportIn(Input):
    """The battle's story, whole (a PUT replaces what was there)."""

    title: Annotated[str, StringConstraints(max_length=120)] = ""
    played_on: date | None = Field(default=None, description="The day it was played")
    location: Annotated[str, StringConstraints(max_length=120)] = Field(
        default="", description="Where: a store, someone's home, an event"
    )
    narrative: Annotated[str, StringConstraints(max_length=20000)] = Field(
        default="", description="Markdown; the website shows it with raw HTML escaped"
    )
    unit_notes: dict[
        Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,9}$")],
        Annotated[str, StringConstraints(max_length=280)],
    ] = Field(
        default_factory=dict,
        max_length=200,
        description="A short note per unit (card id: note) shown on its Crusade card; only "
        "units on the battle's rosters",
    )


class BattleReportPublic(BaseModel):
    title: str
    played_on: date | None
    location: str
    narrative: str = Field(description="Markdown, as written")
    unit_notes: dict[str, str] = Field(description="Card id: note")
    written_by: str = Field(description="Username of whoever wrote it last")
    updated_at: datetime


class PhotoRenditionPublic(BaseModel):
    width: int
    url: str


class PhotoPublic(BaseModel):
    id: int
    url: str = Field(description="The largest rendition (JPEG, no metadata)")
    width: int
    height: int
    caption: str
    renditions: list[PhotoRenditionPublic] = Field(description="Every width, smallest first")
    uploaded_by: str
    created_at: datetime


class BattlePublic(BaseModel):
    id: int
    campaign_id: int
    battle_size: str
    mission: str
    mission_name: str
    mission_roll: int | None
    status: str
    outcome: str | None
    sides: list[SidePublic]
    territory_id: int | None = Field(default=None, description="The territory fought over")
    rule_packs: dict[str, str] = Field(
        default_factory=dict, description="The rule packs (id: version) it was recorded under"
    )
    report: BattleReportPublic | None = Field(
        default=None, description="Its story, once a player wrote one (issue 23)"
    )
    photos: list[PhotoPublic] = Field(default_factory=list, description="Its photos, oldest first")


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
        "`categories`)",
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


# --- issue 13: roster import --------------------------------------------------------------


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


# --- the event feed (issue 15) -----------------------------------------------------------


class FeedEventPublic(BaseModel):
    """One change in the campaign, oldest first. ``kind`` is one of: campaign_created,
    force_created, card_added, card_removed, battle_mustered, result_proposed,
    result_confirmed, result_disputed, battle_recorded (a result applied: by an organizer, or
    on confirmation), battle_reverted, battle_called_off, report_written, report_edited,
    photo_added, decision_pending,
    decision_answered,
    decision_cancelled (a pending decision gone: a Battle Honour no unit can take any more,
    or its battle reverted), rank_gained,
    honour_gained, scar_gained, counter_changed,
    card_transformed (a rule pack's transform: the unit became another datasheet),
    requisition_purchased,
    member_joined, member_removed, invite_created, invite_withdrawn,
    campaign_settings_changed (new kinds may be added: ignore those you do not know)."""

    id: int
    cursor: str = Field(description="Pass as `after` to read what came after this event")
    kind: str
    campaign_id: int
    force_id: int | None
    force_ids: list[int] = Field(
        description="The forces it concerns: `[force_id]`, or, for an event about a battle "
        "whose `force_id` is null (battle_mustered, result_proposed, result_confirmed, "
        "result_disputed, battle_recorded, battle_reverted, battle_called_off, report_written, "
        "report_edited, photo_added), the battle's two forces"
    )
    battle_id: int | None
    card_id: int | None
    decision_id: int | None
    actor: str | None = Field(description="Username of whoever made the change, if known")
    summary: str = Field(description="One sentence for people")
    created_at: datetime
    details: EventDetails


class FeedPage(BaseModel):
    items: list[FeedEventPublic]
    next: str = Field(description="The cursor to send as `after` for the following page")
    more: bool = Field(description="True when more events are already waiting")


# --- webhooks (issue 15) -----------------------------------------------------------------


class WebhookCreate(Input):
    url: Annotated[str, StringConstraints(strip_whitespace=True, min_length=8, max_length=2000)]
    events: list[Annotated[str, StringConstraints(max_length=60)]] = Field(
        default_factory=list,
        max_length=40,
        description="Event kinds to send (see the feed); leave out or empty for all",
    )
    format: Literal["generic", "discord"] | None = Field(
        default=None,
        description="generic: each event as the feed's item; discord: Discord's message. "
        "Left out: discord for a Discord webhook URL, generic otherwise",
    )


class WebhookPublic(BaseModel):
    id: int
    campaign_id: int
    url: str
    events: list[str]
    format: Literal["generic", "discord"] = Field(description="The body's format")
    discord: bool = Field(description="True: deliveries use Discord's message format")
    created_at: datetime


class WebhookCreated(WebhookPublic):
    secret: str = Field(
        description="Shown this once: verify X-Crusade-Signature (sha256=HMAC-SHA256 of the "
        "body with this secret, hex)"
    )


class DeliveryPublic(BaseModel):
    id: int
    webhook_id: int
    event_id: int
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str
    created_at: datetime
    delivered_at: datetime | None


# --- rule packs (issue 22) ----------------------------------------------------------------


class SettingChange(BaseModel):
    before: bool | int | list[int] | str | None = Field(description="The campaign's value before")
    after: bool | int | str = Field(
        description="A number; for muster_by, power_level or points; for "
        "organizer_results_need_confirmation, true or false"
    )


class RulePackPublic(BaseModel):
    id: int
    pack_id: str = Field(description="The pack's own id (its `id` field)")
    name: str
    version: str
    description: str
    position: int = Field(description="Packs apply in this order; a later one's settings win")
    attached_at: datetime
    settings: packs.Settings = Field(description="The settings it changes")
    adds: dict[str, list[str]] = Field(description="Names of what it adds, by kind")


class CampaignRulebookPublic(BaseModel):
    """The rules a campaign plays with: the core rulebook with its rule packs applied (the
    core alone is under /rules). Only what packs can change or add is listed here."""

    rule_packs: dict[str, str] = Field(description="The packs in play, in order: id → version")
    numbers: CrusadeNumbers
    battle_sizes: list[BattleSize]
    agendas: list[Agenda]
    requisitions: list[Requisition]
    crusade_relics: list[CrusadeRelic]
    counters: list[Counter] = Field(description="Force and card counters the packs keep")
    missions: list[Mission] = Field(
        default_factory=list,
        description="Every mission by battle size: the core's tables (low-high: the D6 "
        "results) and the packs' own (low and high 0: chosen, never rolled)",
    )
    pack_battle_traits: list[PackHonour] = Field(
        default_factory=list,
        description="Battle Traits the packs add: chosen beside the core table, never rolled",
    )
    pack_psychic_fortitudes: list[PackHonour] = Field(
        default_factory=list, description="Psychic Fortitudes the packs add (chosen, not rolled)"
    )
    pack_weapon_enhancements: list[PackWeaponEnhancement] = Field(
        default_factory=list,
        description="Weapon Enhancements the packs add: each chosen alone, never rolled",
    )
    pack_battle_scars: list[PackScar] = Field(
        default_factory=list,
        description="Battle Scars the packs add: chosen beside the core table, never rolled",
    )
    triggers: list[Trigger] = Field(
        default_factory=list, description="Counters the packs move every battle (issue 38)"
    )
    thresholds: list[CounterThreshold] = Field(
        default_factory=list, description="What a pack counter reaching a value gives"
    )
    pack_tables: list[PackTable] = Field(
        default_factory=list,
        description="The packs' own rolled tables (issue 38), apart from the core's",
    )
    quests: list[Quest] = Field(
        default_factory=list, description="The packs' quests: sagas, trials, stages (issue 38)"
    )
    pack_warlord_traits: list[PackWarlordTrait] = Field(
        default_factory=list,
        description="The packs' Warlord Traits (issue 38), named in the Warlord Trait "
        "requisition's warlord_trait",
    )


class RulePackDocumentPublic(RulePackPublic):
    document: packs.RulePack = Field(description="The pack as attached (export it, share it)")


class PackRefusalPublic(BaseModel):
    """What attaching the previewed pack would answer instead of a 201: its problem's code,
    status, sentence and field."""

    code: str
    status: int
    detail: str
    field: str | None = None


class RulePackPreviewPublic(BaseModel):
    pack_id: str
    name: str
    version: str
    replaces_version: str | None = Field(description="The version it would replace, if any")
    settings: dict[str, SettingChange] = Field(description="Each setting it changes")
    adds: dict[str, list[str]]
    removes: dict[str, list[str]] = Field(description="What the replaced version had")
    breaks: list[str] = Field(description="What in play the removals would affect")
    withdraws: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Core Agendas, Requisitions and Crusade Relics it withdraws, by name",
    )
    requisition_costs: dict[str, SettingChange] = Field(
        default_factory=dict, description="Core Requisitions it reprices (RP), by name"
    )
    attached: RulePackPublic | None = Field(
        default=None, description="The attached pack (none for a preview)"
    )
    refusal: PackRefusalPublic | None = Field(
        default=None,
        description="A preview: the refusal attaching it (with the same accept_breaking) would "
        "meet; none: attaching it answers 201",
    )


Scalar = str | int | float | bool | None


class SchemaDiscriminator(BaseModel):
    model_config = ConfigDict(extra="forbid")
    propertyName: str
    mapping: dict[str, str] = Field(default_factory=dict)


class JsonSchema(BaseModel):
    """The part of JSON Schema (2020-12) a rule pack's schema uses, closed: a generated
    client reads it as data (GET /api/v1/rule-packs/schema)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str | None = Field(default=None, alias="$id")
    ref: str | None = Field(default=None, alias="$ref")
    defs: dict[str, JsonSchema] | None = Field(default=None, alias="$defs")
    title: str | None = None
    description: str | None = None
    type: str | list[str] | None = None
    properties: dict[str, JsonSchema] | None = None
    required: list[str] | None = None
    additionalProperties: bool | JsonSchema | None = None
    propertyNames: JsonSchema | None = None
    items: JsonSchema | None = None
    anyOf: list[JsonSchema] | None = None
    oneOf: list[JsonSchema] | None = None
    discriminator: SchemaDiscriminator | None = None
    enum: list[Scalar] | None = None
    const: Scalar = None
    default: Scalar | list[Scalar] = None
    pattern: str | None = None
    format: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    minLength: int | None = None
    maxLength: int | None = None
    minItems: int | None = None
    maxItems: int | None = None
    maxProperties: int | None = None
