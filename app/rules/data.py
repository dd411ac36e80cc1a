"""The rulebook's tables, loaded from ``seed_data/`` once and validated.

Code holds the mechanics; these tables hold the content. A house rule or a supplement is a
new or edited YAML file, not a code change. Every model here is frozen so a loaded table can
be shared freely without anyone mutating it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.rules import documents

# What an army and a Supply Limit are measured in (core book: "Power Level" or "points
# limit"); the Crusade rules count Power Rating, a house rule may count points.
MusterBy = Literal["power_level", "points"]

SEED_DATA = Path(__file__).resolve().parents[2] / "seed_data"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UnitType(StrEnum):
    """Which Battle Trait / Battle Scar table a unit uses."""

    CHARACTER = "character"
    VEHICLE = "vehicle"
    MONSTER = "monster"
    OTHER = "other"


class WeaponType(StrEnum):
    RANGED = "ranged"
    MELEE = "melee"


class HonourCategory(StrEnum):
    BATTLE_TRAIT = "battle_trait"
    WEAPON_ENHANCEMENT = "weapon_enhancement"
    PSYCHIC_FORTITUDE = "psychic_fortitude"
    CRUSADE_RELIC = "crusade_relic"


class RelicCategory(StrEnum):
    ARTIFICER = "artificer"
    ANTIQUITY = "antiquity"
    LEGENDARY = "legendary"


# --- ranks and battle sizes -------------------------------------------------------------


class Rank(Frozen):
    id: str
    name: str
    min_xp: int = Field(ge=0)
    battle_honours: int = Field(ge=0, description="Honours a unit has earned on reaching it")


class BattleSize(Frozen):
    id: str
    name: str
    max_power_level: int = Field(gt=0)
    max_points: int = Field(gt=0, description="Each army's points limit (core book table)")
    command_points: int = Field(ge=0)
    agendas: int = Field(gt=0)
    duration_hours: int = Field(gt=0)
    battlefield_min: str


# --- d6 tables ---------------------------------------------------------------------------


class TableEntry(Frozen):
    """One row of a dice table: the results ``low``..``high`` give this entry."""

    id: str
    name: str
    low: int = Field(ge=1)
    high: int = Field(ge=1)
    summary: str = Field(min_length=1, description="The effect in our own words")
    max_xp_per_battle: int | None = Field(
        default=None, ge=0, description="A scar that caps the XP its unit gains after a battle"
    )
    forbids_actions: bool = Field(
        default=False, description="A scar that stops its unit performing (psychic) actions"
    )

    @model_validator(mode="after")
    def _range(self) -> TableEntry:
        if self.high < self.low:
            raise ValueError(f"{self.id}: high {self.high} < low {self.low}")
        return self


class DiceTable(Frozen):
    """A table rolled on with one die of ``sides``; its entries cover 1..sides exactly."""

    sides: int = Field(ge=2)
    entries: tuple[TableEntry, ...]

    @model_validator(mode="after")
    def _covers_every_result(self) -> DiceTable:
        covered = sorted(r for e in self.entries for r in range(e.low, e.high + 1))
        if covered != list(range(1, self.sides + 1)):
            raise ValueError(f"table entries must cover 1..{self.sides} once, got {covered}")
        ids = [e.id for e in self.entries]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate ids in table: {ids}")
        return self

    def entry_for(self, roll: int) -> TableEntry:
        for entry in self.entries:
            if entry.low <= roll <= entry.high:
                return entry
        raise KeyError(roll)

    def entry(self, entry_id: str) -> TableEntry:
        """An entry by id, or by its name in any case (what a player reads on the card)."""
        for entry in self.entries:
            if named(entry.id, entry.name, entry_id):
                return entry
        raise KeyError(entry_id)

    def choices(self) -> str:
        """The valid values, for a refusal: ``id (Name)``, comma-separated."""
        return listing(self.entries)


class CrusadeRelic(Frozen):
    id: str
    name: str
    category: RelicCategory
    keywords_any: tuple[str, ...] = Field(
        default=(), description="The bearer needs one of these keywords; empty means any"
    )
    selects_weapon: bool = Field(
        default=False, description="The relic upgrades one of the bearer's weapons"
    )
    forbids_psychic_actions: bool = Field(
        default=False, description="The bearer's unit cannot perform psychic actions"
    )
    eligible: str | None = Field(
        default=None, description="A rule pack's relic: who may bear it (an expression)"
    )
    bearer: Literal["character", "any_unit"] = Field(
        default="character",
        description="any_unit: a rule pack's relic a unit that is no CHARACTER may bear (a "
        "Warlord Knight's, issue 38)",
    )
    summary: str = Field(min_length=1)
    pack: str | None = Field(default=None, description="The rule pack it comes from")
    withdrawn_by: str | None = Field(
        default=None,
        description="The rule pack that withdrew this core entry from the campaign (ruling 62)",
    )
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )


class RelicCategoryRule(Frozen):
    min_rank: str
    extra_crusade_points: int = Field(ge=0)
    requisition_points: int = Field(ge=0)


class PackHonour(Frozen):
    """A Battle Trait or Psychic Fortitude a rule pack adds (a codex's own table, typed in
    by the group): chosen instead of rolling on the core table, by a unit that meets
    ``eligible`` (app/rules/eligibility.py)."""

    id: str
    name: str
    summary: str = Field(min_length=1)
    eligible: str | None = None
    pack: str = ""
    counters: dict[str, int] = Field(
        default_factory=dict, description="The pack's counters it moves when gained (id: amount)"
    )
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )


class PackWeaponEnhancement(PackHonour):
    """A Weapon Enhancement a rule pack adds: chosen alone for one weapon of the kind it
    names (ruling 60), never rolled."""

    weapon_type: Literal["ranged", "melee", "any"] = "any"


class BattleHonourTables(Frozen):
    battle_traits: dict[UnitType, DiceTable]
    weapon_enhancements: dict[WeaponType, DiceTable]
    psychic_fortitudes: DiceTable
    relic_categories: dict[RelicCategory, RelicCategoryRule]
    crusade_relics: tuple[CrusadeRelic, ...]
    pack_battle_traits: tuple[PackHonour, ...] = ()
    pack_psychic_fortitudes: tuple[PackHonour, ...] = ()
    pack_weapon_enhancements: tuple[PackWeaponEnhancement, ...] = ()

    def pack_entries(self, category: HonourCategory) -> tuple[PackHonour, ...]:
        if category == HonourCategory.BATTLE_TRAIT:
            return self.pack_battle_traits
        if category == HonourCategory.PSYCHIC_FORTITUDE:
            return self.pack_psychic_fortitudes
        if category == HonourCategory.WEAPON_ENHANCEMENT:
            return self.pack_weapon_enhancements
        return ()

    def pack_entry(self, category: HonourCategory, entry_id: str) -> PackHonour | None:
        return next((e for e in self.pack_entries(category) if named(e.id, e.name, entry_id)), None)

    @model_validator(mode="after")
    def _complete(self) -> BattleHonourTables:
        if set(self.battle_traits) != set(UnitType):
            raise ValueError("battle_traits needs one table per unit type")
        if set(self.weapon_enhancements) != set(WeaponType):
            raise ValueError("weapon_enhancements needs a ranged and a melee table")
        if set(self.relic_categories) != set(RelicCategory):
            raise ValueError("relic_categories needs artificer, antiquity and legendary")
        return self

    def relic(self, relic_id: str) -> CrusadeRelic:
        for relic in self.crusade_relics:
            if named(relic.id, relic.name, relic_id):
                return relic
        raise KeyError(relic_id)


class PackWarlordTrait(Frozen):
    """A rule pack's Warlord Trait (issue 38), given by the Warlord Trait requisition: who
    may take it (``eligible``), and a bearer that need not be a CHARACTER where the pack
    says (``bearer: any_unit``, a Warlord Knight)."""

    id: str
    name: str
    summary: str = Field(min_length=1)
    eligible: str | None = None
    bearer: Literal["character", "any_unit"] = "character"
    pack: str = ""
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )


class PackScar(PackHonour):
    """A Battle Scar a rule pack adds (a codex's own scars, typed in by the group): chosen
    instead of rolling on the core table, by a unit that meets ``eligible``; it may cap the
    XP its unit gains after a battle or stop its actions, as core scars do."""

    max_xp_per_battle: int | None = Field(default=None, ge=0)
    forbids_actions: bool = False


class BattleScarTables(Frozen):
    battle_scars: dict[UnitType, DiceTable]
    pack_scars: tuple[PackScar, ...] = ()

    def scar(self, unit_type: UnitType, scar_id: str) -> TableEntry | PackScar:
        """A scar by id or name: on the unit type's core table, else a rule pack's."""
        try:
            return self.battle_scars[unit_type].entry(scar_id)
        except KeyError:
            found = self.pack_scar(scar_id)
            if found is None:
                raise
            return found

    def pack_scar(self, scar_id: str) -> PackScar | None:
        return next((e for e in self.pack_scars if named(e.id, e.name, scar_id)), None)

    @model_validator(mode="after")
    def _complete(self) -> BattleScarTables:
        if set(self.battle_scars) != set(UnitType):
            raise ValueError("battle_scars needs one table per unit type")
        return self


# --- a rule pack's own rolled tables (issue 38) ------------------------------------------

PackTableCategory = Literal[
    "battle_trait", "psychic_fortitude", "weapon_enhancement", "battle_scar"
]
PackTableDice = Literal["D6", "2D6", "D33"]


def table_rolls(dice: PackTableDice) -> list[int]:
    """Every result the dice can give: 1-6, 2-12, or 11-13, 21-23, 31-33 (D33: a D3 for
    the tens and a D3 for the units)."""
    if dice == "D6":
        return list(range(1, 7))
    if dice == "2D6":
        return list(range(2, 13))
    return [10 * a + b for a in (1, 2, 3) for b in (1, 2, 3)]


class PackTableResult(Frozen):
    low: int
    high: int
    entry: str = Field(description="The pack's entry of the table's category, by id")


class PackTable(Frozen):
    """A rule pack's own table (a codex's D6, 2D6 or D33 table of Battle Traits, Weapon
    Enhancements, Psychic Fortitudes or Battle Scars), kept apart from the core's: rolled
    with entered or seeded dice, re-rolling a result the unit holds or may not take; with
    ``chosen`` the player may pick a result instead. Its entries are the pack's own."""

    id: str
    name: str
    category: PackTableCategory
    dice: PackTableDice
    chosen: bool = False
    eligible: str | None = None
    results: tuple[PackTableResult, ...]
    summary: str = ""
    pack: str = ""
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )

    def entry_for(self, roll: int) -> str:
        return next(r.entry for r in self.results if r.low <= roll <= r.high)

    def entries(self) -> list[str]:
        return list(dict.fromkeys(r.entry for r in self.results))


# --- requisitions ----------------------------------------------------------------------


CounterId = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,59}$")]


# --- rule packs' counters and effects (app/rules/packs.py) -------------------------


class Counter(Frozen):
    """A named resource a faction tracks, on the force or on each card."""

    id: CounterId
    name: str = Field(min_length=1, max_length=80)
    scope: Literal["force", "card"] = "force"
    start: int = Field(default=0, ge=-1_000, le=1_000)
    min: int = Field(default=0, ge=-1_000, le=1_000)
    max: int = Field(default=10, ge=-1_000, le=1_000)
    summary: str = Field(default="", max_length=1000)
    choices: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,59}$")], ...] = Field(
        default=(),
        max_length=20,
        description="A named choice (issue 38): the counter holds one of these (which saga, "
        "which patron); 0 is none yet, 1 the first, ... Its min is 0 and its max the number "
        "of choices; set by set_choice, read as counter.<id> == <choice>",
    )
    factions: tuple[Annotated[str, Field(min_length=1, max_length=60)], ...] = Field(
        default=(),
        max_length=10,
        description="Faction scope (issue 47): only forces with one of these army keywords "
        "hold it; left out: the pack's factions",
    )

    @model_validator(mode="before")
    @classmethod
    def _choice_bounds(cls, data: Any) -> Any:
        """A named choice runs from 0 (none) to its number of choices."""
        if isinstance(data, dict) and isinstance(data.get("choices"), list | tuple):
            # strict, like every pack field: a list read from the file stays a list of texts
            bounds = {"min": 0, "max": len(data["choices"])} if data["choices"] else {}
            data = {**bounds, **data, "choices": tuple(data["choices"])}
        if isinstance(data, dict) and isinstance(data.get("factions"), list):
            data = {**data, "factions": tuple(data["factions"])}
        return data

    def choice(self, value: int) -> str | None:
        """The choice a value stands for (None: none yet, or not a named choice)."""
        return self.choices[value - 1] if 1 <= value <= len(self.choices) else None


# --- effects: a fixed vocabulary -----------------------------------------------------------


class ChangeSupplyLimit(Frozen):
    kind: Literal["change_supply_limit"]
    amount: int = Field(ge=-1_000, le=1_000)


class ChangeRequisitionPoints(Frozen):
    kind: Literal["change_requisition_points"]
    amount: int = Field(ge=-20, le=20)


class AddXp(Frozen):
    kind: Literal["add_xp"]
    amount: int = Field(ge=1, le=100)


class RemoveXp(Frozen):
    kind: Literal["remove_xp"]
    amount: int = Field(ge=1, le=100)


class RemoveBattleScar(Frozen):
    kind: Literal["remove_battle_scar"]


class GrantHonour(Frozen):
    """The unit gains one of its pack's Battle Traits or Psychic Fortitudes as a Battle
    Honour, named here (issue 47: a Battle Scar that turns into a Battle Trait). The core's
    honour limits hold (ruling 83): a unit at its most Battle Honours, one that never gains
    them, one that holds the entry or may not take it gains nothing from a threshold or a
    quest, and a requisition for it is refused. ``replaces_scar``: the pack's Battle Scar
    the unit loses as it gains the honour (if it holds it)."""

    kind: Literal["grant_honour"]
    category: Literal["battle_trait", "psychic_fortitude"] = "battle_trait"
    entry: CounterId = Field(description="The pack's Battle Trait or Psychic Fortitude, by id")
    replaces_scar: CounterId | None = Field(
        default=None, description="The pack's Battle Scar it turns (left out: none)"
    )


class RollTable(Frozen):
    """The unit rolls on one of its pack's own tables and gains what comes up (issue 47: a
    pathogen's side effect, a mutation): a Battle Trait or Psychic Fortitude as a Battle
    Honour, or a Battle Scar, re-rolling what it holds or may not take, as a decision's roll
    does. Dice entered or the app's; within the core's limits (ruling 84)."""

    kind: Literal["roll_table"]
    table: CounterId = Field(
        description="The pack's table, by id (battle_trait, psychic_fortitude or battle_scar)"
    )


class AddUpgrade(Frozen):
    """The unit gains a lasting upgrade, worth Crusade points (a relic, a gift, wargear)."""

    kind: Literal["add_upgrade"]
    name: str = Field(min_length=1, max_length=80)
    crusade_points: int = Field(default=1, ge=0, le=10)


class AddUnit(Frozen):
    """A new unit joins the Order of Battle (within the Supply Limit), with the force's
    Crusade faction keyword and these. With ``chosen`` the buyer names it at purchase (name,
    Power Rating, points, keywords), within ``max_power_rating``; the keywords here are
    added to the buyer's."""

    kind: Literal["add_unit"]
    name: str | None = Field(default=None, min_length=1, max_length=80)
    power_rating: int | None = Field(default=None, ge=1, le=100)
    points: int | None = Field(
        default=None, ge=1, le=10_000, description="Needed where forces muster by points"
    )
    keywords: tuple[Annotated[str, Field(min_length=1, max_length=60)], ...] = Field(
        default=(), max_length=20
    )
    chosen: bool = Field(
        default=False, description="The buyer names the unit at purchase (new_unit)"
    )
    max_power_rating: int | None = Field(
        default=None, ge=1, le=100, description="With chosen: the most Power it may have"
    )

    @model_validator(mode="after")
    def _named_here_or_at_purchase(self) -> AddUnit:
        if self.chosen and (self.name is not None or self.power_rating is not None):
            raise ValueError("with chosen: true the buyer gives name and power_rating")
        if not self.chosen and (self.name is None or self.power_rating is None):
            raise ValueError("name and power_rating are needed (or chosen: true)")
        return self


class ChangeCounter(Frozen):
    kind: Literal["change_counter"]
    counter: CounterId
    amount: int = Field(ge=-1_000, le=1_000)


class Transform(Frozen):
    """The unit becomes another datasheet (issue 38: Blood Claws into Grey Hunters, a brood
    evolving): its name, Power Rating, points, keywords and wargear change; its XP, rank,
    honours, scars, counters, tallies and history stay. Within the Supply Limit."""

    kind: Literal["transform"]
    name: str = Field(min_length=1, max_length=80, description="Its new name and datasheet")
    power_rating: int = Field(ge=1, le=100)
    points: int | None = Field(
        default=None, ge=1, le=10_000, description="Needed where forces muster by points"
    )
    keywords: tuple[Annotated[str, Field(min_length=1, max_length=60)], ...] = Field(
        default=(),
        max_length=30,
        description="The new datasheet's keywords (the force's faction keyword is kept)",
    )
    wargear: str | None = Field(
        default=None, max_length=2000, description="Its new wargear (left out: kept)"
    )


class RemoveUnit(Frozen):
    """The unit leaves the Order of Battle for good (reabsorbed, lost to the warp), its
    supply freed; a force counter of the pack may take a refund for it (issue 38)."""

    kind: Literal["remove_unit"]
    refund_counter: CounterId | None = Field(
        default=None, description="A force counter of the pack the refund goes to"
    )
    refund: int = Field(default=0, ge=0, le=1_000, description="A fixed refund")
    refund_per_power: int = Field(
        default=0, ge=0, le=100, description="And this much per Power Rating of the unit"
    )


class SetChoice(Frozen):
    """A named-choice counter takes one of its choices (issue 38)."""

    kind: Literal["set_choice"]
    counter: CounterId
    value: str = Field(pattern=r"^[a-z][a-z0-9_]{0,59}$", description="One of its choices")


class StartQuest(Frozen):
    """The force (a force quest) or the unit (a card quest) sets out on a quest (issue 38)."""

    kind: Literal["start_quest"]
    quest: str = Field(pattern=r"^[a-z][a-z0-9_]{0,59}$")


Effect = Annotated[
    ChangeSupplyLimit
    | ChangeRequisitionPoints
    | AddXp
    | RemoveXp
    | RemoveBattleScar
    | GrantHonour
    | RollTable
    | AddUpgrade
    | AddUnit
    | ChangeCounter
    | SetChoice
    | StartQuest
    | Transform
    | RemoveUnit,
    Field(discriminator="kind"),
]
UNIT_EFFECTS = (
    "add_xp",
    "remove_xp",
    "remove_battle_scar",
    "grant_honour",
    "roll_table",
    "add_upgrade",
    "transform",
    "remove_unit",
)


class RequisitionTiming(StrEnum):
    ANY_TIME = "any_time"  # outside a battle
    BEFORE_OR_AFTER_BATTLE = "before_or_after_battle"
    CARD_ADDED = "card_added"
    CARD_ADDED_OR_CHARACTER_RANK = "card_added_or_character_rank"


class RequisitionTarget(StrEnum):
    FORCE = "force"
    UNIT = "unit"


class CharacterStratagem(Frozen):
    """A Stratagem that, bought with Specialist Reinforcements, makes a knight a CHARACTER."""

    stratagem: str
    keyword: str = Field(description="The faction keyword the unit must have")
    excludes_named_characters: bool
    cp: int | None = Field(default=None, gt=0, description="Its CP cost, where the rules give it")


class CostPerPower(Frozen):
    """A rule pack's requisition that costs more for a bigger unit (issue 47): ``rp`` more
    for each ``per`` Power Rating of the target unit, or part of it."""

    rp: int = Field(ge=1, le=5)
    per: int = Field(ge=1, le=20)

    def extra(self, power_rating: int) -> int:
        return self.rp * -(-power_rating // self.per)


class Requisition(Frozen):
    id: str
    name: str
    cost_rp: int = Field(ge=0)
    cost_per_power: CostPerPower | None = Field(
        default=None,
        description="A rule pack's: rp more for each per Power Rating of the target unit",
    )
    timing: RequisitionTiming
    target: RequisitionTarget
    required_keywords: tuple[str, ...] = ()
    excluded_keywords: tuple[str, ...] = ()
    max_rank: str | None = Field(default=None, description="Highest rank a target may have")
    needs_battle_scar: bool = False
    summary: str = Field(min_length=1)
    character_stratagems: tuple[str, ...] = Field(
        default=(),
        description="Stratagems that, bought this way, give the unit the CHARACTER keyword",
    )
    character_stratagem_keywords: tuple[str, ...] = Field(
        default=(), description="The unit needs one of these keywords for that to apply"
    )
    character_stratagem_factions: tuple[CharacterStratagem, ...] = Field(
        default=(), description="Which faction's unit each of those Stratagems is for"
    )
    character_stratagems_elsewhere: tuple[str, ...] = Field(
        default=(),
        description="Stratagems of other publications that would make a knight a CHARACTER "
        "but the rules do not name: refused unless a rule pack adds them (ruling 31)",
    )
    # A rule pack's requisition: who may buy it (app/rules/eligibility.py) and what it does,
    # from the fixed vocabulary above; the pack's counters come along for its effects.
    eligible: str | None = None
    effects: tuple[Effect, ...] = ()
    counters: tuple[Counter, ...] = ()
    pack: str | None = Field(default=None, description="The rule pack it comes from")
    only_as_bonus: bool = Field(
        default=False, description="Never bought: granted only by a mission's victor bonus"
    )
    withdrawn_by: str | None = Field(
        default=None,
        description="The rule pack that withdrew this core entry from the campaign (ruling 62)",
    )
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )

    @model_validator(mode="after")
    def _each_character_stratagem_has_its_faction(self) -> Requisition:
        named = {s.stratagem.casefold() for s in self.character_stratagem_factions}
        if named != {s.casefold() for s in self.character_stratagems}:
            raise ValueError("character_stratagem_factions must name each character Stratagem")
        return self


# --- agendas ---------------------------------------------------------------------------


class PerMark(Frozen):
    """Each unit gains ``xp_per_mark`` for every mark on its tally."""

    kind: Literal["per_mark"]
    xp_per_mark: int = Field(gt=0)


class Threshold(Frozen):
    """Each unit whose tally reaches ``min_tally`` gains ``xp`` once."""

    kind: Literal["threshold"]
    min_tally: int = Field(gt=0)
    xp: int = Field(gt=0)


class Achieved(Frozen):
    """Up to ``max_units`` units that achieved it (tally 1) gain ``xp`` each."""

    kind: Literal["achieved"]
    xp: int = Field(gt=0)


class HighestTally(Frozen):
    """The one unit with the highest tally gains ``xp``; ties are the player's pick. A tally
    of 0 gains nothing unless ``zero_counts`` (Reaper's text has no such exception)."""

    kind: Literal["highest_tally"]
    xp: int = Field(gt=0)
    zero_counts: bool = False


class ArchiveRoll(Frozen):
    """One D6 against the army's combined tally; on success one unit that scored gains ``xp``."""

    kind: Literal["archive_roll"]
    xp: int = Field(gt=0)


AgendaXp = Annotated[
    PerMark | Threshold | Achieved | HighestTally | ArchiveRoll, Field(discriminator="kind")
]


class TallySource(StrEnum):
    AGENDA = "agenda"  # the agenda's own tally, kept during the battle
    UNITS_DESTROYED = "units_destroyed"  # the unit's enemy-units-destroyed this battle


class AgendaAction(StrEnum):
    """How a unit scores an Agenda, when that matters: some scars and relics forbid it."""

    ACTION = "action"
    PSYCHIC_ACTION = "psychic_action"


class AgendaEligibility(Frozen):
    """Which units can score an Agenda, as the Agenda's own text restricts them."""

    keywords_all: tuple[str, ...] = ()
    keywords_any: tuple[str, ...] = ()
    keywords_none: tuple[str, ...] = ()
    performs: AgendaAction | None = None
    marks_per_kill: int | None = Field(
        default=None,
        gt=0,
        description="Each kill by the unit gives at most this many marks (kill-counting Agendas)",
    )
    must_survive: bool = Field(
        default=False, description="Only a unit not destroyed at the end of the battle scores"
    )
    half_strength_mark: bool = Field(
        default=False,
        description="Its second mark needs the unit at Half-strength or better at the end",
    )
    expression: str | None = Field(
        default=None, description="A rule pack's eligibility expression (app/rules/eligibility)"
    )


class KillBound(Frozen):
    """A kill-counting Agenda's marks are kills of enemy units of one kind: across a side they
    can never be more than the matching enemy units the other side reported destroyed."""

    keywords_any: tuple[str, ...] = Field(default=(), description="Empty: any enemy unit")
    warlord: bool = Field(default=False, description="Only the enemy WARLORD counts")
    marks: int = Field(default=1, gt=0, description="Marks one such unit is worth")
    more_marks_keywords_all: tuple[str, ...] = Field(
        default=(), description="A unit with all of these is worth ``more_marks`` instead"
    )
    more_marks: int = Field(default=0, ge=0)
    what: str = Field(min_length=1, description="The kind of unit, in words, for refusals")


class TallyBound(StrEnum):
    """What the mission lets an army's combined tally reach."""

    OBJECTIVE_MARKERS = "objective_markers"  # one mark per marker the mission sets up
    # one mark per marker that can still be on the battlefield when the battle ends
    OBJECTIVE_MARKERS_AT_END = "objective_markers_at_end"
    BATTLE_ROUNDS = "battle_rounds"  # one unit may act per turn: one mark per battle round
    # one unit may start per turn and completes in the next battle round: one mark per
    # battle round but the last
    BATTLE_ROUNDS_LESS_ONE = "battle_rounds_less_one"


AgendaPenalty = Annotated[RemoveXp | ChangeRequisitionPoints, Field(discriminator="kind")]


class Agenda(Frozen):
    id: str
    name: str
    category: str
    tally_source: TallySource = TallySource.AGENDA
    max_units: int | None = Field(
        default=None, gt=0, description="How many units may score it; None means any number"
    )
    max_tally: int | None = Field(default=None, gt=0, description="Highest tally one unit can have")
    army_bounds: tuple[TallyBound, ...] = Field(
        default=(), description="Limits on the combined tally of all the army's units"
    )
    eligibility: AgendaEligibility = AgendaEligibility()
    kill_bound: KillBound | None = None
    xp: AgendaXp
    summary: str = Field(min_length=1)
    pack: str | None = Field(default=None, description="The rule pack it comes from")
    counters_per_mark: dict[str, int] = Field(
        default_factory=dict,
        description="A rule pack's counters each tally mark changes (counter id: amount): a "
        "force counter by the army's marks, a card counter by that unit's own",
    )
    withdrawn_by: str | None = Field(
        default=None,
        description="The rule pack that withdrew this core entry from the campaign (ruling 62)",
    )
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )
    on_fail: tuple[AgendaPenalty, ...] = Field(
        default=(),
        max_length=5,
        description="A rule pack's Agenda (issue 47, ruling 85): what the army loses when it "
        "chose the Agenda and no unit gained XP from it: remove_xp (each roster unit that "
        "could score it) or change_requisition_points below 0 (the force), never below 0",
    )


# --- missions --------------------------------------------------------------------------


class VictorRole(StrEnum):
    EITHER = "either"
    ATTACKER = "attacker"
    DEFENDER = "defender"


class BonusTarget(StrEnum):
    """Who may receive a victor bonus honour or free requisition."""

    ANY_UNIT = "any_unit"
    NON_CHARACTER_VEHICLE_MONSTER = "non_character_vehicle_monster"
    CHARACTER = "character"
    WARLORD = "warlord"
    EXFILTRATED = "exfiltrated"  # a unit the report says left by the enemy's edge
    NEW_CHARACTER = "new_character"
    FORCE = "force"


class ExtraRequisitionPoints(Frozen):
    kind: Literal["extra_requisition_points"]
    amount: int = Field(ge=1, le=10)


class ExtraMarkedForGreatness(Frozen):
    kind: Literal["extra_marked_for_greatness"]
    count: int = Field(ge=1, le=10)


class BonusBattleHonour(Frozen):
    """One unit gains one Battle Honour from ``categories`` (player's choice of result)."""

    kind: Literal["battle_honour"]
    categories: tuple[HonourCategory, ...] = Field(min_length=1)
    target: BonusTarget


class FreeRequisitions(Frozen):
    """Requisitions used for free: all of them (``all``) or one of them (``one_of``)."""

    kind: Literal["free_requisitions"]
    requisitions: tuple[str, ...] = Field(min_length=1)
    mode: Literal["all", "one_of"]
    target: BonusTarget
    ignores_rank_timing: bool = False


class BonusCounter(Frozen):
    """A rule pack mission's victor bonus: one of the pack's force counters moves (within its
    bounds), as the battle is resolved."""

    kind: Literal["change_counter"]
    counter: str = Field(pattern=r"^[a-z][a-z0-9_]{0,59}$")
    amount: int = Field(ge=-100, le=100)


VictorBonusEffect = Annotated[
    ExtraRequisitionPoints
    | ExtraMarkedForGreatness
    | BonusBattleHonour
    | FreeRequisitions
    | BonusCounter,
    Field(discriminator="kind"),
]


class VictorBonus(Frozen):
    role: VictorRole = VictorRole.EITHER
    effect: VictorBonusEffect
    summary: str = Field(min_length=1)


# --- a rule pack's triggers and thresholds (issue 38) -----------------------------------

TriggerWhen = Literal[
    "battle_played",
    "victory",
    "enemy_unit_destroyed",
    "own_unit_destroyed",
    "out_of_action_failed",
    # per-unit facts (issue 47): from each unit's own line of the result
    "marked_for_greatness",
    "below_half_strength",  # the unit ended the battle destroyed or below Half-strength
    "ranged_kill",
    "melee_kill",
    "psychic_kill",
    # issue 47: the unit gained XP from one of its army's chosen Agendas in the battle
    "agenda_completed",
    # issue 47: the unit destroyed the enemy unit it named as its quarry for the battle
    "quarry_destroyed",
]


# A trigger's own effects (issue 47): a threshold's, but free requisitions (a decision) come
# only from a threshold or a quest.
TriggerEffect = Annotated[
    ChangeCounter
    | ChangeRequisitionPoints
    | ChangeSupplyLimit
    | AddXp
    | RemoveXp
    | GrantHonour
    | RollTable,
    Field(discriminator="kind"),
]


class Trigger(Frozen):
    """A counter moved by what happens in every battle, without an Agenda: per battle played,
    per victory, per enemy unit destroyed, per own unit destroyed, per Out of Action test
    failed. A force counter counts the whole side; a card counter each unit on the roster
    (its own kills, its own loss, its own test). Its ``effects`` (issue 47) apply each time
    it counts, for the side or (``scope: card``) the unit."""

    id: str
    name: str
    when: TriggerWhen
    counter: CounterId | None = None
    amount: int = Field(default=0, ge=-100, le=100)
    scope: Literal["force", "card"] = Field(
        default="force",
        description="Whom it counts for: the side (force) or each unit of the roster (card); "
        "the counter's own scope when it moves one",
    )
    effects: tuple[TriggerEffect, ...] = Field(
        default=(),
        max_length=5,
        description="Applied each time the trigger counts (issue 47), at most "
        "MAX_FIRES times per holder and battle",
    )
    keywords_any: tuple[str, ...] = Field(
        default=(), description="Only units with one of these keywords count (empty: any)"
    )
    summary: str = ""
    pack: str = ""
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )


ThresholdEffect = Annotated[
    ChangeCounter
    | ChangeRequisitionPoints
    | ChangeSupplyLimit
    | AddXp
    | RemoveXp
    | GrantHonour
    | RollTable
    | FreeRequisitions,
    Field(discriminator="kind"),
]


class QuestStep(Frozen):
    """One step of a quest: ``count`` times what ``when`` names, over any number of battles
    (a force quest counts the side, a card quest the unit, as a trigger does)."""

    name: str = Field(min_length=1, max_length=80)
    when: TriggerWhen
    count: int = Field(default=1, ge=1, le=50)
    keywords_any: tuple[str, ...] = Field(default=(), max_length=20)
    summary: str = Field(default="", max_length=1000)


class Quest(Frozen):
    """A saga, a trial, an invasion's stages (issue 38): steps tallied every battle outside
    the Agenda limit, one after the other; a reward when the last is done and, where the
    codex has one, a penalty when ``fails_when`` happens to its holder first."""

    id: str
    name: str
    scope: Literal["force", "card"] = "card"
    eligible: str | None = None
    automatic: bool = Field(
        default=False,
        description="Under way from the start (a force quest) or for each unit that may take "
        "it when it first fights (a card quest); otherwise a start_quest effect starts it",
    )
    exclusive: bool = Field(
        default=True, description="Its holder is on no other exclusive quest at the same time"
    )
    steps: tuple[QuestStep, ...] = Field(min_length=1, max_length=10)
    reward: tuple[ThresholdEffect, ...] = Field(default=(), max_length=5)
    fails_when: TriggerWhen | None = None
    penalty: tuple[ThresholdEffect, ...] = Field(default=(), max_length=5)
    summary: str = Field(min_length=1)
    pack: str = ""
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )


class CounterThreshold(Frozen):
    """When a counter rises to ``at`` (from below, in a battle's update), its effects apply
    once, for the force or the unit that holds it; ``reset_to`` then sets the counter, so
    it can be reached again."""

    id: str
    name: str
    counter: CounterId
    at: int = Field(ge=-1_000, le=1_000)
    reset_to: int | None = Field(default=None, ge=-1_000, le=1_000)
    effects: tuple[ThresholdEffect, ...] = Field(min_length=1, max_length=5)
    summary: str = Field(min_length=1)
    pack: str = ""
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a force needs to see it; "
        "empty: every force",
    )


class Mission(Frozen):
    id: str
    name: str
    battle_size: str
    # The D6 results of the size's mission table; 0 for a rule pack's mission, which is
    # chosen, never rolled (ruling 56).
    low: int = Field(default=0, ge=0, le=6)
    high: int = Field(default=0, ge=0, le=6)
    objective_markers: int = Field(ge=0, description="Objective markers set up at the start")
    objective_markers_at_end: int | None = Field(
        default=None,
        ge=0,
        description="The most objective markers still on the battlefield when the battle "
        "ends, after those the mission removes (None: as many as were set up)",
    )
    exfiltration: bool = Field(
        default=False, description="Units can be exfiltrated (leave by the enemy's edge)"
    )
    summary: str = Field(min_length=1)
    victor_bonus: tuple[VictorBonus, ...] = Field(min_length=1)
    pack: str | None = Field(default=None, description="The rule pack that adds it, if any")
    factions: tuple[str, ...] = Field(
        default=(),
        description="Faction scope (issue 47): the army keywords a victor needs for its "
        "victor bonus; empty: every force",
    )

    @model_validator(mode="after")
    def _markers_at_end_within_those_set_up(self) -> Mission:
        at_end = self.objective_markers_at_end
        if at_end is not None and at_end > self.objective_markers:
            raise ValueError(
                f"objective_markers_at_end ({at_end}) is more than the objective markers set "
                f"up ({self.objective_markers})"
            )
        return self

    @property
    def markers_at_end(self) -> int:
        """The most objective markers that can be on the battlefield when the battle ends."""
        at_end = self.objective_markers_at_end
        return self.objective_markers if at_end is None else at_end


# --- the whole rulebook ----------------------------------------------------------------


class CrusadeNumbers(Frozen):
    """Fixed numbers of the Crusade rules (``seed_data/crusade.yaml``)."""

    crusade_factions: tuple[str, ...]
    faction_keywords: tuple[str, ...] = Field(
        default=(),
        description="Army faction keywords a rule pack's scope may name (issue 47), beside the "
        "Crusade factions; a pack may add more",
    )
    unaligned_keyword: str
    starting_requisition_points: int = Field(ge=0)
    max_requisition_points: int = Field(ge=0)
    requisition_points_per_battle: int = Field(ge=0)
    starting_supply_limit: int = Field(ge=0)
    supply_limit_increase: int = Field(gt=0)
    muster_by: MusterBy = Field(
        default="power_level",
        description="What the Supply Limit and battle sizes count: Power Rating (the Crusade "
        "rules) or points (a house rule; a rule pack's settings.muster_by)",
    )
    max_battle_honours: int = Field(gt=0)
    max_battle_scars: int = Field(gt=0)
    battle_experience_xp: int = Field(ge=0)
    marked_for_greatness_xp: int = Field(ge=0)
    marked_for_greatness_per_battle: int = Field(ge=0)
    dealers_of_death_every: int = Field(gt=0)
    honour_crusade_points_small: int = Field(ge=0)
    honour_crusade_points_large: int = Field(ge=0)
    honour_power_rating_threshold: int = Field(gt=0)
    out_of_action_fail_max: int = Field(ge=0, le=6)
    max_objective_victory_points: int = Field(gt=0)
    battle_rounds: int = Field(gt=0)
    painted_bonus_victory_points: int = Field(ge=0)
    never_gain_xp_keywords: tuple[str, ...]
    never_gain_xp_roles: tuple[str, ...]


class Rulebook(Frozen):
    numbers: CrusadeNumbers
    ranks: tuple[Rank, ...]
    battle_sizes: tuple[BattleSize, ...]
    honours: BattleHonourTables
    scars: BattleScarTables
    requisitions: tuple[Requisition, ...]
    agendas: tuple[Agenda, ...]
    missions: tuple[Mission, ...]
    counters: tuple[Counter, ...] = Field(default=(), description="Rule packs' counters")
    triggers: tuple[Trigger, ...] = Field(
        default=(), description="Rule packs' counters moved every battle (issue 38)"
    )
    thresholds: tuple[CounterThreshold, ...] = Field(
        default=(), description="Rule packs' rewards for a counter reaching a value"
    )
    pack_tables: tuple[PackTable, ...] = Field(
        default=(), description="Rule packs' own rolled tables (issue 38)"
    )
    quests: tuple[Quest, ...] = Field(default=(), description="Rule packs' quests (issue 38)")
    pack_warlord_traits: tuple[PackWarlordTrait, ...] = Field(
        default=(), description="Rule packs' Warlord Traits (issue 38)"
    )

    def pack_warlord_trait(self, name: str | None) -> PackWarlordTrait | None:
        if not name:
            return None
        return next(
            (t for t in self.pack_warlord_traits if named(t.id, t.name, name.strip())), None
        )

    def quest(self, quest_id: str) -> Quest | None:
        return next((q for q in self.quests if named(q.id, q.name, quest_id)), None)

    def pack_table(self, table_id: str) -> PackTable | None:
        return next((t for t in self.pack_tables if named(t.id, t.name, table_id)), None)

    def rolled_only(self, category: str, entry_id: str) -> bool:
        """A pack entry found only on its pack's rolled tables (``chosen: false``): gained by
        rolling there, never picked (an entry on no table is chosen, as before)."""
        tables = [t for t in self.pack_tables if t.category == category]
        on = [t for t in tables if entry_id in t.entries()]
        return bool(on) and not any(t.chosen for t in on)

    @model_validator(mode="after")
    def _consistent(self) -> Rulebook:
        _check_ranks(self.ranks)
        rank_ids = {r.id for r in self.ranks}
        for category, rule in self.honours.relic_categories.items():
            if rule.min_rank not in rank_ids:
                raise ValueError(f"relic category {category}: unknown rank {rule.min_rank}")
        for req in self.requisitions:
            if req.max_rank is not None and req.max_rank not in rank_ids:
                raise ValueError(f"requisition {req.id}: unknown rank {req.max_rank}")
        req_ids = {r.id for r in self.requisitions}
        size_ids = {s.id for s in self.battle_sizes}
        for mission in self.missions:
            if mission.battle_size not in size_ids:
                raise ValueError(f"mission {mission.id}: unknown battle size")
            for bonus in mission.victor_bonus:
                effect = bonus.effect
                if isinstance(effect, FreeRequisitions) and not set(effect.requisitions) <= req_ids:
                    raise ValueError(f"mission {mission.id}: unknown requisition in bonus")
        for size in self.battle_sizes:
            table = [m for m in self.missions if m.battle_size == size.id and m.pack is None]
            _check_mission_table(size.id, table)
        return self

    def battle_size(self, size_id: str) -> BattleSize:
        return _by_id(self.battle_sizes, size_id, "battle size")

    def requisition(self, requisition_id: str) -> Requisition:
        return _by_id(self.requisitions, requisition_id, "requisition")

    def agenda(self, agenda_id: str) -> Agenda:
        return _by_id(self.agendas, agenda_id, "agenda")

    def mission(self, mission_id: str) -> Mission:
        return _by_id(self.missions, mission_id, "mission")

    def rank(self, rank_id: str) -> Rank:
        return _by_id(self.ranks, rank_id, "rank")

    def missions_for(self, size_id: str) -> tuple[Mission, ...]:
        return tuple(m for m in self.missions if m.battle_size == size_id)


_Item = TypeVar("_Item", Rank, BattleSize, Requisition, Agenda, Mission)


def _by_id(items: tuple[_Item, ...], item_id: str, what: str) -> _Item:
    for item in items:
        if named(item.id, item.name, item_id):
            return item
    raise KeyError(f"unknown {what}: {item_id}")


def named(item_id: str, name: str, wanted: str) -> bool:
    """Bots and people may give an id (``battle_weary``) or the name (``Battle-weary``)."""
    if wanted == item_id:
        return True
    folded = wanted.strip().casefold()
    return folded in (item_id.casefold(), name.casefold())


class _Named(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...


def listing(items: Iterable[_Named]) -> str:
    return ", ".join(f"{i.id} ({i.name})" for i in items)


def _check_ranks(ranks: tuple[Rank, ...]) -> None:
    if not ranks or ranks[0].min_xp != 0:
        raise ValueError("the first rank must start at 0 XP")
    for lower, higher in itertools.pairwise(ranks):
        if higher.min_xp <= lower.min_xp or higher.battle_honours != lower.battle_honours + 1:
            raise ValueError(f"ranks out of order at {higher.id}")


def _check_mission_table(size_id: str, missions: list[Mission]) -> None:
    covered = sorted(r for m in missions for r in range(m.low, m.high + 1))
    if covered != [1, 2, 3, 4, 5, 6]:
        raise ValueError(f"{size_id} missions must cover D6 results 1..6 once, got {covered}")
    for mission in missions:  # the core's missions say it, read from each mission's text
        if mission.objective_markers_at_end is None:
            raise ValueError(f"mission {mission.id}: objective_markers_at_end is missing")


# Each part of the rulebook: the file it is read from, and the key that holds it there.
_FILES = {
    "numbers": ("crusade.yaml", None),
    "ranks": ("ranks.yaml", "ranks"),
    "battle_sizes": ("battle_sizes.yaml", "battle_sizes"),
    "honours": ("battle_honours.yaml", None),
    "scars": ("battle_scars.yaml", None),
    "requisitions": ("requisitions.yaml", "requisitions"),
    "agendas": ("agendas.yaml", "agendas"),
    "missions": ("missions.yaml", "missions"),
}


def load_rulebook(directory: Path = SEED_DATA) -> Rulebook:
    """Read and validate every rule table in ``directory``, through the reader rule packs
    use (app/rules/documents.py): a mistake names its file, path and line."""
    parts: dict[str, Any] = {}
    roots: dict[str, yaml.Node] = {}
    for part, (name, key) in _FILES.items():
        text = (directory / name).read_text(encoding="utf-8")
        try:
            document, roots[part] = documents.read(text, f"{name} is a mapping", MAX_DEPTH)
        except documents.DocumentError as error:
            raise ValueError(f"seed_data/{name}: {error}") from None
        parts[part] = document[key] if key else document
    try:
        return Rulebook.model_validate(parts)
    except ValidationError as error:
        raise ValueError("\n".join(_where(e, roots) for e in error.errors()[:10])) from None


MAX_DEPTH = 12


def _where(error: Any, roots: dict[str, yaml.Node]) -> str:
    if not error["loc"]:  # the rulebook as a whole (ranks out of order, a mission table)
        return str(error["msg"])
    part, *rest = error["loc"]
    name, key = _FILES[part]
    loc = [key, *rest] if key else rest
    return f"seed_data/{name}: " + documents.problem_at(roots[part], loc, error["msg"]).sentence()


@cache
def rulebook() -> Rulebook:
    """The project's rulebook, read from ``seed_data/`` on first use and kept (it is frozen)."""
    return load_rulebook()
