"""Rule packs (issue 22): a campaign's house rules and its own Crusade content, written as a
YAML or JSON document, read by the reader ``seed_data/`` goes through
(``app.rules.documents``), validated here and turned into the rule data the core's tables
are. The core is the first layer ("pack 0"); each pack, in order, changes settings, withdraws
or reprices the core's chosen content and adds its own on top (``apply``).

A pack never carries code: effects come from a fixed vocabulary (``Effect``) and who may use
content is an expression of ``app.rules.eligibility``, parsed, never evaluated as Python.
Loading is safe against hostile files: a size cap, no YAML tags or aliases, a depth cap.
Every refusal names the path in the document (``agendas[2].xp_per_tally``) and its line."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, Protocol, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from app.rules import documents, eligibility
from app.rules.cards import spellings
from app.rules.data import (
    UNIT_EFFECTS,
    AddUnit,
    Agenda,
    AgendaEligibility,
    AgendaPenalty,
    AgendaXp,
    BonusCounter,
    ChangeCounter,
    ChangeRequisitionPoints,
    CharacterStratagem,
    CostPerPower,
    Counter,
    CounterThreshold,
    CrusadeRelic,
    Effect,
    FreeRequisitions,
    GrantHonour,
    KillBound,
    Mission,
    MusterBy,
    PackHonour,
    PackScar,
    PackTable,
    PackTableResult,
    PackWarlordTrait,
    PackWeaponEnhancement,
    PerMark,
    Quest,
    RelicCategory,
    RemoveUnit,
    Requisition,
    RequisitionTarget,
    RequisitionTiming,
    RollTable,
    Rulebook,
    SetChoice,
    StartQuest,
    ThresholdEffect,
    Transform,
    Trigger,
    TriggerEffect,
    TriggerWhen,
    VictorBonus,
    table_rolls,
)

FORMAT = "crusade-rule-pack/1"
MAX_BYTES = 192 * 1024  # under the API's 256 KB body limit, so this refusal is the one met
MAX_DEPTH = 12
MAX_ITEMS = 200  # of each kind of content
MAX_TRIGGERS = 20  # triggers, and thresholds, per pack: each runs once per battle and unit
MAX_TABLES = 20  # a pack's own rolled tables
MAX_QUESTS = 20
MAX_QUEST_STEPS = 10
MAX_TABLE_ROWS = 11  # rows of one table (2D6 has 11 results, D33 9, D6 6)

Id = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,59}$", description="a-z, 0-9 and _")]
Name = Annotated[str, Field(min_length=1, max_length=80)]
Summary = Annotated[
    str, Field(min_length=1, max_length=1000, description="The effect, in the pack's words")
]
Expression = Annotated[
    str,
    Field(
        min_length=1,
        max_length=eligibility.MAX_LENGTH,
        description="Who may use it: keywords, rank, power_rating, xp, role, counter.<id>; "
        "and / or / not (docs/rule-packs.md)",
    ),
]


# Counters of the pack something moves, by id: the amount of each move.
CounterMoves = dict[Annotated[str, Field(max_length=60)], Annotated[int, Field(ge=-100, le=100)]]


FactionKeyword = Annotated[
    str,
    Field(
        min_length=1,
        max_length=60,
        pattern=r"^[A-Za-z][A-Za-z' -]*$",
        description="An army faction keyword (ADEPTA SORORITAS); case and plural spellings "
        "do not matter",
    ),
]
MAX_FACTIONS = 10


def _factions() -> Any:
    return Field(
        default_factory=list,
        max_length=MAX_FACTIONS,
        description="Faction scope (issue 47): only forces with one of these army keywords see "
        "it; left out: the pack's factions (an entry may only narrow its pack's)",
    )


Factions = list[FactionKeyword]


class PackModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _expression(value: str | None) -> str | None:
    if value is not None:
        try:
            eligibility.parse(value)
        except eligibility.ExpressionError as error:
            raise ValueError(str(error)) from None
    return value


# --- settings --------------------------------------------------------------------------


class Settings(PackModel):
    """House rules: each field left out keeps the core rules' number."""

    starting_supply_limit: int | None = Field(default=None, ge=0, le=10_000)
    supply_limit_increase: int | None = Field(default=None, ge=1, le=1_000)
    starting_requisition_points: int | None = Field(default=None, ge=0, le=100)
    max_requisition_points: int | None = Field(default=None, ge=0, le=100)
    requisition_points_per_battle: int | None = Field(default=None, ge=0, le=100)
    agendas_per_battle: (
        Annotated[int, Field(ge=1, le=5)]
        | Annotated[
            dict[Annotated[str, Field(max_length=40)], Annotated[int, Field(ge=1, le=5)]],
            Field(max_length=10),
        ]
        | None
    ) = Field(
        default=None,
        description="Agendas each player picks: one number for every battle size, or a "
        "battle size's id and its number (combat_patrol: 1, strike_force: 2)",
    )
    organizer_results_need_confirmation: bool | None = Field(
        default=None,
        description="Set on the campaign when the pack is attached: whether a result an "
        "organizer enters for their own battle waits for the opponent",
    )
    muster_by: MusterBy | None = Field(
        default=None,
        description="points: the Supply Limit, a unit's share of it and each battle size's "
        "limit count points instead of Power Rating (a pack that sets it also sets "
        "starting_supply_limit and supply_limit_increase, in points)",
    )

    @model_validator(mode="after")
    def _points_need_a_supply_limit(self) -> Settings:
        if self.muster_by == "points" and (
            self.starting_supply_limit is None or self.supply_limit_increase is None
        ):
            raise ValueError(
                "muster_by: points needs starting_supply_limit and supply_limit_increase, "
                "given in points"
            )
        return self


# --- content ----------------------------------------------------------------------------


XpAward = Annotated[int, Field(ge=1, le=20)]


class PackThreshold(PackModel):
    """Each unit whose tally reaches ``min_tally`` gains ``xp`` once."""

    kind: Literal["threshold"]
    min_tally: int = Field(ge=1, le=100)
    xp: XpAward


class PackAchieved(PackModel):
    """Each unit that achieved it (a tally of 1) gains ``xp``."""

    kind: Literal["achieved"]
    xp: XpAward


class PackHighestTally(PackModel):
    """The one unit with the highest tally (above 0) gains ``xp``; a tie is the player's pick."""

    kind: Literal["highest_tally"]
    xp: XpAward


PackAgendaXp = Annotated[
    PackThreshold | PackAchieved | PackHighestTally, Field(discriminator="kind")
]


class PackAgenda(PackModel):
    id: Id
    name: Name
    category: str = Field(default="", max_length=60, description="One Agenda per category")
    summary: Summary
    xp_per_tally: int | None = Field(
        default=None, ge=1, le=20, description="XP per tally mark (or give xp instead)"
    )
    xp: PackAgendaXp | None = Field(
        default=None,
        description="Instead of xp_per_tally: threshold, achieved or highest_tally",
    )
    max_tally: int | None = Field(default=None, ge=1, le=100)
    max_units: int | None = Field(default=None, ge=1, le=100)
    eligible: Expression | None = None
    factions: Factions = _factions()
    bounded_by_kills_of: list[Annotated[str, Field(min_length=1, max_length=60)]] | None = Field(
        default=None,
        max_length=20,
        description="A tally counts kills: at most the enemy units with any of these "
        "keywords the opponent reported destroyed ([] = any enemy unit)",
    )
    counters: CounterMoves = Field(
        default_factory=dict,
        max_length=5,
        description="Counters of this pack each tally mark changes (id: amount); a force "
        "counter by all the army's marks, a card counter by the unit's own",
    )
    on_fail: list[AgendaPenalty] = Field(
        default_factory=list,
        max_length=5,
        description="When the army chose it and no unit gained XP from it (ruling 85): "
        "remove_xp (each roster unit that could score it) or change_requisition_points "
        "below 0 (the force); never below 0, a revert gives it back",
    )

    _eligible = field_validator("eligible")(_expression)

    @model_validator(mode="after")
    def _a_failure_takes_away(self) -> PackAgenda:
        for effect in self.on_fail:
            if isinstance(effect, ChangeRequisitionPoints) and effect.amount >= 0:
                raise ValueError("on_fail takes RP away: change_requisition_points below 0")
        return self

    @model_validator(mode="after")
    def _one_way_to_gain_xp(self) -> PackAgenda:
        if (self.xp_per_tally is None) == (self.xp is None):
            raise ValueError("give either xp_per_tally or xp (threshold, achieved, highest_tally)")
        return self


class PackRequisition(PackModel):
    id: Id
    name: Name
    cost_rp: int = Field(ge=0, le=20)
    cost_per_power: CostPerPower | None = Field(
        default=None,
        description="{rp, per}: rp more for each per Power Rating of the target unit (or part "
        "of it), for target: unit (issue 47)",
    )
    timing: RequisitionTiming = RequisitionTiming.ANY_TIME
    target: RequisitionTarget = RequisitionTarget.FORCE
    eligible: Expression | None = None
    factions: Factions = _factions()
    effects: list[Effect] = Field(min_length=1, max_length=10)
    summary: Summary
    only_as_bonus: bool = Field(
        default=False,
        description="Never bought with RP: only a mission's victor bonus, a threshold or a "
        "quest grants it (free_requisitions), so they can use the whole effect vocabulary",
    )

    _eligible = field_validator("eligible")(_expression)


class PackRelic(PackModel):
    id: Id
    name: Name
    category: RelicCategory = RelicCategory.ARTIFICER
    keywords_any: list[Annotated[str, Field(min_length=1, max_length=60)]] = Field(
        default_factory=list, max_length=20
    )
    eligible: Expression | None = Field(
        default=None, description="Who may bear it (issue 38): keywords, rank, counters..."
    )
    bearer: Literal["character", "any_unit"] = Field(
        default="character",
        description="any_unit: a unit that is no CHARACTER may bear it (a Warlord Knight)",
    )
    summary: Summary
    factions: Factions = _factions()

    _eligible = field_validator("eligible")(_expression)


class PackWarlordTraitEntry(PackModel):
    """A Warlord Trait of the pack (issue 38): given by the Warlord Trait requisition, named
    there; ``eligible`` says who may take it, ``bearer: any_unit`` lets a unit that is no
    CHARACTER (a Warlord Knight) take it."""

    id: Id
    name: Name
    eligible: Expression | None = None
    bearer: Literal["character", "any_unit"] = "character"
    summary: Summary
    factions: Factions = _factions()

    _eligible = field_validator("eligible")(_expression)


class PackHonourEntry(PackModel):
    """A Battle Trait or Psychic Fortitude of the group's own table: offered beside the core
    table when a unit gains that honour, chosen (never rolled)."""

    id: Id
    name: Name
    eligible: Expression | None = None
    summary: Summary
    factions: Factions = _factions()
    counters: CounterMoves = Field(
        default_factory=dict,
        max_length=5,
        description="Counters of this pack that move when a unit gains it (id: amount): "
        "a force counter of the unit's force, a card counter on the unit",
    )

    _eligible = field_validator("eligible")(_expression)


class PackWeaponEnhancementEntry(PackHonourEntry):
    """A Weapon Enhancement of the group's own table: chosen alone for one weapon of the
    kind it names, never rolled (ruling 60)."""

    weapon_type: Literal["ranged", "melee", "any"] = Field(
        default="any", description="The weapons it may improve (a weapon with both: either)"
    )


class PackScarEntry(PackHonourEntry):
    """A Battle Scar of the group's own table: offered beside the core table when a unit
    gains a scar, chosen (never rolled)."""

    max_xp_per_battle: int | None = Field(
        default=None, ge=0, le=100, description="The unit gains at most this XP after a battle"
    )
    forbids_actions: bool = Field(
        default=False, description="The unit cannot perform actions (or psychic actions)"
    )


class PackMission(PackModel):
    """A mission of the group's own (a supplement's, a narrative night's): chosen at set-up
    for its battle size, never rolled; its victor bonus from the core rules' bonus kinds."""

    id: Id
    name: Name
    battle_size: Annotated[str, Field(min_length=1, max_length=40)]
    objective_markers: int = Field(default=0, ge=0, le=12)
    objective_markers_at_end: int | None = Field(
        default=None,
        ge=0,
        le=12,
        description="The most objective markers still on the battlefield when the battle "
        "ends, if the mission removes some (Deploy Vox-relays counts only those); left out: "
        "all those set up",
    )
    summary: Summary
    victor_bonus: list[VictorBonus] = Field(min_length=1, max_length=3)
    factions: Factions = _factions()

    @model_validator(mode="after")
    def _markers_at_end_within_those_set_up(self) -> PackMission:
        at_end = self.objective_markers_at_end
        if at_end is not None and at_end > self.objective_markers:
            raise ValueError("objective_markers_at_end cannot be more than objective_markers")
        return self


WHEN_WORDS = (
    "battle_played, victory, enemy_unit_destroyed, own_unit_destroyed, out_of_action_failed; "
    "per unit: marked_for_greatness, below_half_strength, ranged_kill, melee_kill, "
    "psychic_kill, agenda_completed, quarry_destroyed"
)


class PackTrigger(PackModel):
    """A counter of the pack moved by what happens in every battle, outside the Agenda limit
    (issue 38)."""

    id: Id
    name: Name
    when: TriggerWhen = Field(description=WHEN_WORDS)
    counter: Id | None = Field(
        default=None, description="The pack's counter it moves (or give effects, or both)"
    )
    amount: int | None = Field(
        default=None, ge=-100, le=100, description="Per time it happens (with counter)"
    )
    scope: Literal["force", "card"] | None = Field(
        default=None,
        description="Without a counter: force (the side, default) or card (each unit of the "
        "roster: its unit effects go to that unit); with one, the counter's scope",
    )
    effects: list[TriggerEffect] = Field(
        default_factory=list,
        max_length=5,
        description="Applied each time it happens (issue 47): a threshold's effects but "
        "free_requisitions, at most 20 times per holder and battle",
    )
    keywords_any: list[Annotated[str, Field(min_length=1, max_length=60)]] = Field(
        default_factory=list,
        max_length=20,
        description="Only these count: for a force counter's enemy_unit_destroyed, enemy "
        "units with one of the keywords; otherwise own units with one of them",
    )
    summary: Summary
    factions: Factions = _factions()

    @model_validator(mode="after")
    def _counter_or_effects(self) -> PackTrigger:
        if self.counter is None and not self.effects:
            raise ValueError("give a counter (with its amount) or effects, or both")
        if (self.counter is None) != (self.amount is None):
            raise ValueError("a counter and its amount go together")
        return self


class PackCounterThreshold(PackModel):
    """When one of the pack's counters rises to ``at`` in a battle's update, its effects
    apply, once; ``reset_to`` then sets the counter (issue 38)."""

    id: Id
    name: Name
    counter: Id
    at: int = Field(ge=-1_000, le=1_000)
    reset_to: int | None = Field(default=None, ge=-1_000, le=1_000)
    effects: list[ThresholdEffect] = Field(min_length=1, max_length=5)
    summary: Summary
    factions: Factions = _factions()


TableRoll = (
    Annotated[int, Field(ge=1, le=33)]
    | Annotated[str, Field(pattern=r"^[1-9][0-9]?-[1-9][0-9]?$", description="low-high: 1-2")]
)


class PackTableRow(PackModel):
    """One result of a pack's table: a roll (``3``) or a span (``"1-2"``) and its entry."""

    roll: TableRoll = Field(description='A result (3) or a span of results ("1-2")')
    entry: Id = Field(description="The pack's entry of the table's category, by id")

    def span(self) -> tuple[int, int]:
        if isinstance(self.roll, int):
            return self.roll, self.roll
        low, high = self.roll.split("-")
        return int(low), int(high)


class PackTableIn(PackModel):
    """A codex's own D6, 2D6 or D33 table for the pack's Battle Traits, Psychic Fortitudes,
    Weapon Enhancements or Battle Scars (issue 38): rolled apart from the core's tables,
    re-rolling what the unit holds; ``chosen: true`` lets players pick a result instead."""

    id: Id
    name: Name
    category: Literal["battle_trait", "psychic_fortitude", "weapon_enhancement", "battle_scar"]
    dice: Literal["D6", "2D6", "D33"]
    chosen: bool = Field(default=False, description="Players may pick a result instead of rolling")
    eligible: Expression | None = None
    results: list[PackTableRow] = Field(min_length=1, max_length=MAX_TABLE_ROWS)
    summary: str = Field(default="", max_length=1000)
    factions: Factions = _factions()

    _eligible = field_validator("eligible")(_expression)


class PackQuestStep(PackModel):
    name: Name
    when: TriggerWhen = Field(description=WHEN_WORDS)
    count: int = Field(default=1, ge=1, le=50, description="How many times, over any battles")
    keywords_any: list[Annotated[str, Field(min_length=1, max_length=60)]] = Field(
        default_factory=list, max_length=20
    )
    summary: str = Field(default="", max_length=1000)


class PackQuest(PackModel):
    """A saga, a trial, an invasion's stages (issue 38): steps tallied every battle outside
    the Agenda limit, a reward when done, a penalty when ``fails_when`` happens first."""

    id: Id
    name: Name
    scope: Literal["force", "card"] = Field(
        default="card", description="card: each unit undertakes it; force: the whole force"
    )
    eligible: Expression | None = None
    automatic: bool = Field(
        default=False,
        description="Under way from the start (a unit: from its first battle, if it may take "
        "it); otherwise a requisition's start_quest effect begins it",
    )
    exclusive: bool = Field(
        default=True, description="Its holder undertakes no other exclusive quest meanwhile"
    )
    steps: list[PackQuestStep] = Field(min_length=1, max_length=MAX_QUEST_STEPS)
    reward: list[ThresholdEffect] = Field(default_factory=list, max_length=5)
    fails_when: TriggerWhen | None = None
    penalty: list[ThresholdEffect] = Field(default_factory=list, max_length=5)
    summary: Summary
    factions: Factions = _factions()

    _eligible = field_validator("eligible")(_expression)


class CoreWithdrawals(PackModel):
    """Core entries the group does not play with, by id: never chosen or bought again in the
    campaign; what cards and battles already hold stays (ruling 62)."""

    agendas: list[Id] = Field(default_factory=list, max_length=MAX_ITEMS)
    requisitions: list[Id] = Field(default_factory=list, max_length=MAX_ITEMS)
    relics: list[Id] = Field(default_factory=list, max_length=MAX_ITEMS)


class PackCharacterStratagem(PackModel):
    """Knight Characters: one more Stratagem that, bought with Specialist Reinforcements as
    the unit joins, gives a unit of its faction the CHARACTER keyword (and nothing more),
    as Knight Baron and Tyrannical Court do (ruling 31)."""

    stratagem: Name
    keyword: Annotated[str, Field(min_length=1, max_length=60)] = Field(
        description="The faction keyword the unit must have (IMPERIAL KNIGHTS)"
    )
    excludes_named_characters: bool = Field(
        description="true: never on a named character, as Knight Baron"
    )
    cp: int | None = Field(
        default=None, ge=1, le=5, description="Its CP cost: the Crusade points it adds"
    )


class CoreChanges(PackModel):
    """What the pack changes in the core rules' own content (the core is "pack 0"): only
    entries that are chosen, never a rolled table's (that would change the dice)."""

    withdraw: CoreWithdrawals = CoreWithdrawals()
    requisition_costs: dict[
        Annotated[str, Field(max_length=60)], Annotated[int, Field(ge=0, le=20)]
    ] = Field(
        default_factory=dict,
        max_length=MAX_ITEMS,
        description="A core requisition's id: its RP cost in this campaign",
    )
    character_stratagems: list[PackCharacterStratagem] = Field(
        default_factory=list,
        max_length=20,
        description="Knight Characters: Stratagems beyond Knight Baron and Tyrannical Court "
        "that Specialist Reinforcements may use to give a knight the CHARACTER keyword",
    )


class RulePack(PackModel):
    format: Literal["crusade-rule-pack/1"] = Field(description="Always crusade-rule-pack/1")
    id: Id
    name: Name
    version: str = Field(pattern=r"^\d+(\.\d+){0,2}$", description="1, 1.2 or 1.2.3")
    description: str = Field(default="", max_length=4000)
    factions: Factions = Field(
        default_factory=list,
        max_length=MAX_FACTIONS,
        description="Faction scope (issue 47): the army keywords of the forces its content "
        "reaches (ADEPTA SORORITAS); left out: every force (house rules)",
    )
    crusade_factions: list[FactionKeyword] = Field(
        default_factory=list,
        max_length=MAX_FACTIONS,
        description="Crusade factions the pack adds (LEAGUES OF VOTANN): a force may be made "
        "of one, and a scope may name it",
    )
    faction_keywords: list[FactionKeyword] = Field(
        default_factory=list,
        max_length=20,
        description="Army keywords the pack adds to those a scope may name and a force may "
        "hold (a sub-faction: ORDER OF OUR MARTYRED LADY)",
    )
    settings: Settings = Settings()
    core: CoreChanges = CoreChanges()
    counters: list[Counter] = Field(default_factory=list, max_length=20)
    agendas: list[PackAgenda] = Field(default_factory=list, max_length=MAX_ITEMS)
    requisitions: list[PackRequisition] = Field(default_factory=list, max_length=MAX_ITEMS)
    relics: list[PackRelic] = Field(default_factory=list, max_length=MAX_ITEMS)
    missions: list[PackMission] = Field(default_factory=list, max_length=MAX_ITEMS)
    battle_traits: list[PackHonourEntry] = Field(default_factory=list, max_length=MAX_ITEMS)
    psychic_fortitudes: list[PackHonourEntry] = Field(default_factory=list, max_length=MAX_ITEMS)
    battle_scars: list[PackScarEntry] = Field(default_factory=list, max_length=MAX_ITEMS)
    weapon_enhancements: list[PackWeaponEnhancementEntry] = Field(
        default_factory=list, max_length=MAX_ITEMS
    )
    triggers: list[PackTrigger] = Field(default_factory=list, max_length=MAX_TRIGGERS)
    thresholds: list[PackCounterThreshold] = Field(default_factory=list, max_length=MAX_TRIGGERS)
    warlord_traits: list[PackWarlordTraitEntry] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        description="The pack's Warlord Traits, given by the Warlord Trait requisition",
    )
    quests: list[PackQuest] = Field(
        default_factory=list,
        max_length=MAX_QUESTS,
        description="Sagas, trials, stages: steps tallied every battle (issue 38)",
    )
    tables: list[PackTableIn] = Field(
        default_factory=list,
        max_length=MAX_TABLES,
        description="The pack's own rolled tables for its Battle Traits, Psychic "
        "Fortitudes, Weapon Enhancements and Battle Scars (issue 38)",
    )


# --- loading ---------------------------------------------------------------------------


Problem = documents.Problem
PackError = documents.DocumentError


def load(data: bytes | str) -> RulePack:
    """Read and validate a pack (YAML, of which JSON is a part)."""
    return read(data)[0]


def read(data: bytes | str) -> tuple[RulePack, Any]:
    """The pack, and the node tree it was read from (``located`` finds the line of a later
    problem's path in it)."""
    text = data.decode("utf-8", errors="strict") if isinstance(data, bytes) else data
    if len(text.encode()) > MAX_BYTES:
        raise PackError([Problem("", None, f"a pack is at most {MAX_BYTES // 1024} KB")])
    what = "a pack is a mapping (format, id, name, version, ...)"
    root = documents.compose(text, what, MAX_DEPTH)
    document = documents.plain(root, MAX_DEPTH)
    try:
        # Strict, as JSON: a number is a number and a yes is true (never "3" for 3, true for
        # 1 or "yes" for true), while an enumeration's text still names its member.
        return RulePack.model_validate_json(json.dumps(document), strict=True), root
    except ValidationError as error:
        raise PackError(documents.problems_of(error, root, _UNION_TAGS)) from None


# pydantic names the union member in an error's location (effects[0].add_xp.amount)
_UNION_TAGS = frozenset(
    {
        "change_supply_limit",
        "change_requisition_points",
        "add_xp",
        "remove_xp",
        "remove_battle_scar",
        "grant_honour",
        "roll_table",
        "add_upgrade",
        "change_counter",
        "free_requisitions",  # a threshold's effect
        "set_choice",
        "start_quest",
        "transform",
        "remove_unit",
        "threshold",  # an Agenda's xp
        "achieved",
        "highest_tally",
    }
)

# --- against the rulebook ----------------------------------------------------------------


def check_against(
    pack: RulePack, book: Rulebook, others: Iterable[RulePack] = (), root: Any = None
) -> None:
    """Refuse a pack whose content collides with the rulebook (the core, or another pack of
    the campaign) or names what does not exist (a counter, a rank). ``root``: the node tree
    the pack was read from, for the lines."""
    problems = _collisions(pack, book, others) + _references(pack, book) + _unpriced(pack)
    problems += _core_problems(pack, book) + _character_stratagem_problems(pack, book, others)
    if root is not None:
        problems = documents.located(problems, root)
    scope = _scope_problems(pack, book, others) + _grant_problems(pack)
    problems += documents.located(scope, root, columns=True) if root is not None else scope
    if problems:
        raise PackError(problems)


def known_factions(book: Rulebook, packs: Iterable[RulePack] = ()) -> dict[str, str]:
    """Every army faction keyword a scope may name, each spelling to the keyword: the
    Crusade factions, the core's faction keywords and those the packs add."""
    words = [*book.numbers.crusade_factions, *book.numbers.faction_keywords]
    for pack in packs:
        words += [keyword(k) for k in (*pack.crusade_factions, *pack.faction_keywords)]
    return {s: keyword(w) for w in words for s in spellings(w)}


def _scope_problems(pack: RulePack, book: Rulebook, others: Iterable[RulePack]) -> list[Problem]:
    """A scope names known faction keywords; an entry's only narrows its pack's; and what
    an entry names (a counter, a requisition, a quest, a table's entries) reaches at least
    every force the entry does, so a force never meets content it cannot see."""
    known = known_factions(book, [*others, pack])
    problems = [
        Problem(f"crusade_factions[{n}]", None, f"'{k}' is already a Crusade faction")
        for n, k in enumerate(pack.crusade_factions)
        if not spellings(k).isdisjoint(book.numbers.crusade_factions)
    ]
    problems += [
        Problem(
            f"factions[{n}]",
            None,
            f"'{k}' is not a faction keyword this campaign knows (add it with "
            "faction_keywords; the known ones: GET /api/v1/rules/numbers)",
        )
        for n, k in enumerate(pack.factions)
        if keyword(k) not in known
    ]
    outer = scope_of((), pack)
    entries = _scoped_entries(pack)
    for path, own in ((p, e.factions) for p, e, _refs in entries):
        for n, k in enumerate(own):
            if keyword(k) not in known:
                problems.append(
                    Problem(f"{path}.factions[{n}]", None, f"'{k}' is not a faction keyword")
                )
            elif outer and not in_scope([k], outer):
                problems.append(
                    Problem(
                        f"{path}.factions[{n}]",
                        None,
                        f"'{k}' is outside the pack's factions ({', '.join(outer)}): an entry "
                        "may only narrow them",
                    )
                )
    scopes = {
        ref: scope_of(item.factions, pack)
        for path, item, _refs in entries
        for ref in [_ref_of(path, item)]
        if ref is not None
    }
    for path, item, refs in entries:
        mine = scope_of(item.factions, pack)
        for ref in refs:
            theirs = scopes.get(ref, ())
            if theirs and (not mine or not all(in_scope([k], theirs) for k in mine)):
                problems.append(
                    Problem(
                        f"{path}.factions" if item.factions else path,
                        None,
                        f"it names {ref[0]} '{ref[1]}', which only {', '.join(theirs)} "
                        "forces have: scope it within those",
                    )
                )
    return problems


def _ref_of(path: str, item: Any) -> tuple[str, str] | None:
    kind = path.split("[", 1)[0]
    return (_REF_KIND[kind], item.id) if kind in _REF_KIND else None


_REF_KIND = {
    "counters": "counter",
    "requisitions": "requisition",
    "quests": "quest",
    "battle_traits": "entry",
    "psychic_fortitudes": "entry",
    "battle_scars": "entry",
    "weapon_enhancements": "entry",
    "tables": "table",
}


def _scoped_entries(pack: RulePack) -> list[tuple[str, Any, list[tuple[str, str]]]]:
    """Each entry that may carry a scope: its path, itself and what it names."""
    out: list[tuple[str, Any, list[tuple[str, str]]]] = []

    def counters_in(expression: str | None) -> list[tuple[str, str]]:
        if not expression:
            return []
        return [("counter", c) for c in eligibility.counters_named(eligibility.parse(expression))]

    def effects(items: Sequence[Any]) -> list[tuple[str, str]]:
        refs: list[tuple[str, str]] = []
        for e in items:
            if isinstance(e, ChangeCounter | SetChoice | BonusCounter):
                refs.append(("counter", e.counter))
            if isinstance(e, RemoveUnit) and e.refund_counter:
                refs.append(("counter", e.refund_counter))
            if isinstance(e, FreeRequisitions):
                refs += [("requisition", r) for r in e.requisitions]
            if isinstance(e, StartQuest):
                refs.append(("quest", e.quest))
            if isinstance(e, GrantHonour):
                refs.append(("entry", e.entry))
            if isinstance(e, RollTable):
                refs.append(("table", e.table))
        return refs

    out += [(f"counters[{n}]", c, []) for n, c in enumerate(pack.counters)]
    out += [
        (f"agendas[{n}]", a, [("counter", c) for c in a.counters] + counters_in(a.eligible))
        for n, a in enumerate(pack.agendas)
    ]
    out += [
        (f"requisitions[{n}]", r, effects(r.effects) + counters_in(r.eligible))
        for n, r in enumerate(pack.requisitions)
    ]
    out += [(f"relics[{n}]", r, counters_in(r.eligible)) for n, r in enumerate(pack.relics)]
    out += [
        (f"warlord_traits[{n}]", t, counters_in(t.eligible))
        for n, t in enumerate(pack.warlord_traits)
    ]
    for field in ("battle_traits", "psychic_fortitudes", "battle_scars", "weapon_enhancements"):
        out += [
            (f"{field}[{n}]", e, [("counter", c) for c in e.counters] + counters_in(e.eligible))
            for n, e in enumerate(getattr(pack, field))
        ]
    out += [
        (f"missions[{n}]", m, effects([b.effect for b in m.victor_bonus]))
        for n, m in enumerate(pack.missions)
    ]
    out += [
        (f"triggers[{n}]", t, [("counter", c) for c in (t.counter,) if c] + effects(t.effects))
        for n, t in enumerate(pack.triggers)
    ]
    out += [
        (f"thresholds[{n}]", t, [("counter", t.counter), *effects(t.effects)])
        for n, t in enumerate(pack.thresholds)
    ]
    out += [
        (f"tables[{n}]", t, [("entry", r.entry) for r in t.results] + counters_in(t.eligible))
        for n, t in enumerate(pack.tables)
    ]
    out += [
        (
            f"quests[{n}]",
            q,
            effects([*q.reward, *q.penalty]) + counters_in(q.eligible),
        )
        for n, q in enumerate(pack.quests)
    ]
    return out


def _grant_problems(pack: RulePack) -> list[Problem]:
    """Each ``grant_honour`` names the pack's own Battle Trait or Psychic Fortitude, and the
    scar it replaces the pack's own Battle Scar; each ``roll_table`` one of the pack's own
    tables that needs no weapon named (issue 47)."""
    entries = {
        "battle_trait": ({e.id for e in pack.battle_traits}, "Battle Trait"),
        "psychic_fortitude": ({e.id for e in pack.psychic_fortitudes}, "Psychic Fortitude"),
    }
    scars = {e.id for e in pack.battle_scars}
    places: list[tuple[str, Sequence[Any]]] = [
        (f"requisitions[{n}].effects", r.effects) for n, r in enumerate(pack.requisitions)
    ]
    places += [(f"thresholds[{n}].effects", t.effects) for n, t in enumerate(pack.thresholds)]
    places += [(f"triggers[{n}].effects", t.effects) for n, t in enumerate(pack.triggers)]
    for n, q in enumerate(pack.quests):
        places += [(f"quests[{n}].reward", q.reward), (f"quests[{n}].penalty", q.penalty)]
    problems = []
    tables = {t.id: t for t in pack.tables}
    for where, effects in places:
        for m, effect in enumerate(effects):
            if isinstance(effect, RollTable):
                table = tables.get(effect.table)
                if table is None:
                    problems.append(
                        Problem(
                            f"{where}[{m}].table", None, f"no table '{effect.table}' in this pack"
                        )
                    )
                elif table.category == "weapon_enhancement":
                    problems.append(
                        Problem(
                            f"{where}[{m}].table",
                            None,
                            f"{table.name} gives Weapon Enhancements, which need a weapon "
                            "named: a decision's roll, never an effect's",
                        )
                    )
            if not isinstance(effect, GrantHonour):
                continue
            ids, what = entries[effect.category]
            if effect.entry not in ids:
                problems.append(
                    Problem(f"{where}[{m}].entry", None, f"no {what} '{effect.entry}' in this pack")
                )
            if effect.replaces_scar is not None and effect.replaces_scar not in scars:
                problems.append(
                    Problem(
                        f"{where}[{m}].replaces_scar",
                        None,
                        f"no Battle Scar '{effect.replaces_scar}' in this pack",
                    )
                )
    return problems


def _character_stratagem_problems(
    pack: RulePack, book: Rulebook, others: Iterable[RulePack]
) -> list[Problem]:
    """A Knight Character Stratagem a pack adds is new: not the core's, nor another pack's."""
    taken = {
        s.casefold() for s in book.requisition("specialist_reinforcements").character_stratagems
    }
    for other in others:
        taken |= {s.stratagem.casefold() for s in other.core.character_stratagems}
    problems = []
    for n, entry in enumerate(pack.core.character_stratagems):
        name = " ".join(entry.stratagem.split()).casefold()
        if name in taken:
            problems.append(
                Problem(
                    f"core.character_stratagems[{n}].stratagem",
                    None,
                    f"'{entry.stratagem}' is already a Knight Character Stratagem of the rulebook",
                )
            )
        taken.add(name)
    return problems


def _collisions(pack: RulePack, book: Rulebook, others: Iterable[RulePack]) -> list[Problem]:
    taken = _names(book)
    for other in others:
        taken |= {key for _kind, _path, keys in _content(other) for key in keys}
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for kind, path, keys in _content(pack):
        for (_kind, value), field in zip(keys, ("id", "name"), strict=True):
            if (kind, value) in taken:
                problems.append(
                    Problem(
                        f"{path}.{field}", None, f"'{value}' is already a {kind} of the rulebook"
                    )
                )
            elif (kind, value) in seen:
                problems.append(Problem(f"{path}.{field}", None, f"'{value}' is given twice"))
        seen |= set(keys)
    return problems


def folded(name: str) -> str:
    """A name as people read it: compatibility forms unified, invisible characters (zero-width
    spaces and joiners, direction marks) dropped, case and spacing ignored, so two names
    that look the same are the same."""
    visible = "".join(
        c for c in unicodedata.normalize("NFKC", name) if unicodedata.category(c) != "Cf"
    )
    return " ".join(visible.casefold().split())


PackItem = (
    PackAgenda
    | PackRequisition
    | PackRelic
    | PackHonourEntry
    | PackMission
    | PackTrigger
    | PackCounterThreshold
    | PackTableIn
    | PackQuest
    | PackWarlordTraitEntry
)


def _content(pack: RulePack) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """(kind, path, its id and name folded) of everything the pack adds."""
    kinds: tuple[tuple[str, str, Sequence[PackItem]], ...] = (
        ("agenda", "agendas", pack.agendas),
        ("requisition", "requisitions", pack.requisitions),
        ("relic", "relics", pack.relics),
        ("mission", "missions", pack.missions),
        ("battle_trait", "battle_traits", pack.battle_traits),
        ("psychic_fortitude", "psychic_fortitudes", pack.psychic_fortitudes),
        ("battle_scar", "battle_scars", pack.battle_scars),
        ("weapon_enhancement", "weapon_enhancements", pack.weapon_enhancements),
        ("trigger", "triggers", pack.triggers),
        ("threshold", "thresholds", pack.thresholds),
        ("table", "tables", pack.tables),
        ("quest", "quests", pack.quests),
        ("warlord_trait", "warlord_traits", pack.warlord_traits),
    )
    return [
        (kind, f"{field}[{n}]", ((kind, folded(item.id)), (kind, folded(item.name))))
        for kind, field, items in kinds
        for n, item in enumerate(items)
    ]


def _references(pack: RulePack, book: Rulebook) -> list[Problem]:
    problems = [
        Problem(f"counters[{n}].max", None, f"max ({c.max}) is below min ({c.min})")
        if c.min > c.max
        else Problem(f"counters[{n}].start", None, "start must be between min and max")
        for n, c in enumerate(pack.counters)
        if not c.min <= c.start <= c.max
    ]
    sizes = {s.id for s in book.battle_sizes}
    wanted = pack.settings.agendas_per_battle
    problems += [
        Problem(
            f"settings.agendas_per_battle.{size}",
            None,
            f"'{size}' is not a battle size ({', '.join(sorted(sizes))})",
        )
        for size in (wanted if isinstance(wanted, dict) else {})
        if size not in sizes
    ]
    counters = {c.id: c for c in pack.counters}
    ranks = {r.id for r in book.ranks}
    expressions = [(f"agendas[{n}].eligible", a.eligible) for n, a in enumerate(pack.agendas)]
    expressions += [
        (f"requisitions[{n}].eligible", r.eligible) for n, r in enumerate(pack.requisitions)
    ]
    honours: tuple[tuple[str, Sequence[PackHonourEntry]], ...] = (
        ("battle_traits", pack.battle_traits),
        ("psychic_fortitudes", pack.psychic_fortitudes),
        ("battle_scars", pack.battle_scars),
        ("weapon_enhancements", pack.weapon_enhancements),
    )
    for field, entries in honours:
        expressions += [(f"{field}[{n}].eligible", e.eligible) for n, e in enumerate(entries)]
        problems += [
            Problem(f"{field}[{n}].counters.{name}", None, f"no counter '{name}' in this pack")
            for n, entry in enumerate(entries)
            for name in sorted(set(entry.counters) - set(counters))
        ]
    problems += [
        Problem(f"requisitions[{n}].cost_per_power", None, "a cost per Power needs target: unit")
        for n, r in enumerate(pack.requisitions)
        if r.cost_per_power is not None and r.target != RequisitionTarget.UNIT
    ]
    problems += [
        Problem(
            f"requisitions[{n}].eligible",
            None,
            "a requisition for the whole force (target: force) reads only counters: "
            "keywords, rank, power_rating, xp and role are a unit's",
        )
        for n, r in enumerate(pack.requisitions)
        if r.eligible
        and r.target == RequisitionTarget.FORCE
        and eligibility.reads_a_unit(eligibility.parse(r.eligible))
    ]
    expressions += [(f"tables[{n}].eligible", t.eligible) for n, t in enumerate(pack.tables)]
    expressions += [(f"quests[{n}].eligible", q.eligible) for n, q in enumerate(pack.quests)]
    expressions += [(f"relics[{n}].eligible", r.eligible) for n, r in enumerate(pack.relics)]
    expressions += [
        (f"warlord_traits[{n}].eligible", t.eligible) for n, t in enumerate(pack.warlord_traits)
    ]
    for path, text in expressions:
        tree = eligibility.parse(text) if text else None
        if tree is None:
            continue
        problems += [
            Problem(path, None, f"no counter '{name}' in this pack")
            for name in sorted(eligibility.counters_named(tree) - set(counters))
        ]
        problems += [
            Problem(path, None, f"'{rank}' is not a rank ({', '.join(sorted(ranks))})")
            for rank in sorted(eligibility.ranks_named(tree) - ranks)
        ]
        problems += [
            Problem(path, None, f"'{value}' is not a choice of counter '{name}'")
            for name, value in sorted(eligibility.choices_named(tree))
            if name in counters and value not in counters[name].choices
        ]
        problems += [
            Problem(
                path,
                None,
                f"counter '{name}' is a named choice: compare it with == or != to one of its "
                f"choices ({', '.join(counters[name].choices)}), never with a number",
            )
            for name in sorted(eligibility.counters_compared_with_numbers(tree))
            if name in counters and counters[name].choices
        ]
    problems += _mission_problems(pack, book)
    problems += _trigger_problems(pack, book)
    problems += _table_problems(pack)
    problems += _quest_problems(pack, book)
    problems += _choice_problems(pack)
    for n, agenda in enumerate(pack.agendas):
        problems += [
            Problem(f"agendas[{n}].counters.{name}", None, f"no counter '{name}' in this pack")
            for name in sorted(set(agenda.counters) - set(counters))
        ]
    for n, requisition in enumerate(pack.requisitions):
        gone = next(
            (m for m, e in enumerate(requisition.effects) if isinstance(e, RemoveUnit)), None
        )
        problems += [
            Problem(
                f"requisitions[{n}].effects[{m}]",
                None,
                "the unit was removed by an earlier effect: nothing more can change it",
            )
            for m, e in enumerate(requisition.effects)
            if gone is not None and m > gone and e.kind in UNIT_EFFECTS
        ]
        for m, effect in enumerate(requisition.effects):
            problems += _effect_problems(
                f"requisitions[{n}].effects[{m}]",
                effect,
                requisition,
                counters,
                {q.id: q for q in pack.quests},
            )
    return problems


def _trigger_problems(pack: RulePack, book: Rulebook) -> list[Problem]:
    """Triggers and thresholds name the pack's counters, stay within them, and give a unit
    XP only from a card counter's threshold."""
    counters = {c.id: c for c in pack.counters}
    requisitions = {r.id for r in book.requisitions} | {r.id for r in pack.requisitions}
    problems = [
        Problem(f"triggers[{n}].counter", None, f"no counter '{t.counter}' in this pack")
        for n, t in enumerate(pack.triggers)
        if t.counter is not None and t.counter not in counters
    ]
    for n, trigger in enumerate(pack.triggers):
        rule = counters.get(trigger.counter or "")
        if rule is not None and trigger.scope is not None and trigger.scope != rule.scope:
            problems.append(
                Problem(
                    f"triggers[{n}].scope",
                    None,
                    f"{rule.name} is a {rule.scope} counter: the trigger counts for the "
                    f"{'side' if rule.scope == 'force' else 'unit'} (leave out scope)",
                )
            )
        if rule is None and trigger.counter is not None:
            continue
        if rule is not None and rule.choices:  # a count would walk through the choices
            problems.append(
                Problem(
                    f"triggers[{n}].counter",
                    None,
                    f"{rule.name} is a named choice: a trigger only counts; set it with a "
                    "set_choice effect (a threshold's, a requisition's or a quest's)",
                )
            )
        scope = rule.scope if rule is not None else trigger.scope or "force"
        problems += _reward_problems(
            f"triggers[{n}].effects",
            trigger.effects,
            scope,
            counters,
            requisitions,
            force_words=(
                "a trigger of the side (scope: force) moves no unit's counter",
                "add_xp needs a unit: a trigger with scope: card (or a card counter)",
            ),
            choices_moved=False,
        )
    for n, threshold in enumerate(pack.thresholds):
        where = f"thresholds[{n}]"
        rule = counters.get(threshold.counter)
        if rule is None:
            problems.append(
                Problem(f"{where}.counter", None, f"no counter '{threshold.counter}' in this pack")
            )
            continue
        if not rule.min < threshold.at <= rule.max:
            problems.append(
                Problem(
                    f"{where}.at",
                    None,
                    f"{rule.name} runs from {rule.min} to {rule.max}: it can never rise to "
                    f"{threshold.at}",
                )
            )
        if threshold.reset_to is not None and not rule.min <= threshold.reset_to < threshold.at:
            problems.append(
                Problem(
                    f"{where}.reset_to",
                    None,
                    f"between {rule.min} and {threshold.at - 1} (below at, within the counter)",
                )
            )
        problems += _reward_problems(
            f"{where}.effects",
            threshold.effects,
            rule.scope,
            counters,
            requisitions,
            force_words=(
                "a force counter's threshold moves no unit's counter",
                "add_xp needs a unit: the threshold of a card counter",
            ),
            choices_moved=True,  # a threshold may move a named choice (never refused)
        )
    return problems


UNIT_REWARDS = ("add_xp", "remove_xp", "grant_honour", "roll_table")  # a unit's only


def _reward_problems(
    where: str,
    effects: Sequence[Any],
    scope: str,
    counters: dict[str, Counter],
    requisitions: set[str],
    *,
    force_words: tuple[str, str],
    choices_moved: bool,
) -> list[Problem]:
    """A threshold's effects, or a quest's reward or penalty: the counters they move are
    the pack's; the force's (``scope``) never moves a unit's counter nor gives XP (the
    refusals say so in ``force_words``); free requisitions the campaign has. A quest never
    moves a named choice (``choices_moved`` False): set_choice sets it."""
    problems = []
    for m, effect in enumerate(effects):
        path = f"{where}[{m}]"
        if isinstance(effect, ChangeCounter) and effect.counter not in counters:
            problems.append(
                Problem(f"{path}.counter", None, f"no counter '{effect.counter}' in this pack")
            )
        elif (
            isinstance(effect, ChangeCounter)
            and counters[effect.counter].choices
            and not choices_moved
        ):
            problems.append(Problem(path, None, "a named choice is set by set_choice"))
        elif (
            isinstance(effect, ChangeCounter)
            and counters[effect.counter].scope == "card"
            and scope == "force"
        ):
            problems.append(Problem(path, None, force_words[0]))
        elif effect.kind in UNIT_REWARDS and scope == "force":
            problems.append(Problem(path, None, force_words[1].replace("add_xp", effect.kind)))
        elif isinstance(effect, FreeRequisitions):
            problems += [
                Problem(f"{path}.requisitions", None, f"no requisition '{r}'")
                for r in effect.requisitions
                if r not in requisitions
            ]
    return problems


def _choice_problems(pack: RulePack) -> list[Problem]:
    """A named choice runs from 0 (none yet) to its number of choices, once each."""
    problems = []
    for n, c in enumerate(pack.counters):
        if not c.choices:
            continue
        if len(set(c.choices)) != len(c.choices):
            problems.append(Problem(f"counters[{n}].choices", None, "a choice is given twice"))
        if (c.min, c.max) != (0, len(c.choices)):
            problems.append(
                Problem(
                    f"counters[{n}].max",
                    None,
                    f"a named choice runs from 0 (none) to {len(c.choices)}: leave out min and max",
                )
            )
    return problems


def _quest_effect_problems(
    where: str, effects: Sequence[Any], scope: str, pack: RulePack, book: Rulebook
) -> list[Problem]:
    counters = {c.id: c for c in pack.counters}
    requisitions = {r.id for r in book.requisitions} | {r.id for r in pack.requisitions}
    return _reward_problems(
        where,
        effects,
        scope,
        counters,
        requisitions,
        force_words=("a force quest moves no unit's counter", "add_xp needs a unit: a card quest"),
        choices_moved=False,
    )


def _quest_problems(pack: RulePack, book: Rulebook) -> list[Problem]:
    problems: list[Problem] = []
    for n, quest in enumerate(pack.quests):
        where = f"quests[{n}]"
        if quest.scope == "force" and quest.eligible:
            tree = eligibility.parse(quest.eligible)
            if eligibility.reads_a_unit(tree):
                problems.append(
                    Problem(f"{where}.eligible", None, "a force quest reads only counters")
                )
        problems += _quest_effect_problems(f"{where}.reward", quest.reward, quest.scope, pack, book)
        problems += _quest_effect_problems(
            f"{where}.penalty", quest.penalty, quest.scope, pack, book
        )
        if quest.penalty and quest.fails_when is None:
            problems.append(
                Problem(f"{where}.penalty", None, "a penalty needs fails_when: it never applies")
            )
    return problems


def _table_problems(pack: RulePack) -> list[Problem]:
    """A pack's table covers each result of its dice once, with its own entries of the
    table's category."""
    entries: dict[str, Sequence[PackHonourEntry]] = {
        "battle_trait": pack.battle_traits,
        "psychic_fortitude": pack.psychic_fortitudes,
        "weapon_enhancement": pack.weapon_enhancements,
        "battle_scar": pack.battle_scars,
    }
    problems: list[Problem] = []
    for n, table in enumerate(pack.tables):
        ids = {e.id for e in entries[table.category]}
        possible = table_rolls(table.dice)
        covered: list[int] = []
        for m, row in enumerate(table.results):
            where = f"tables[{n}].results[{m}]"
            low, high = row.span()
            rolls = [r for r in possible if low <= r <= high]
            if low > high or not rolls or low not in possible or high not in possible:
                problems.append(
                    Problem(f"{where}.roll", None, f"{table.dice} gives {_spans(possible)}")
                )
            covered += rolls
            if row.entry not in ids:
                problems.append(
                    Problem(
                        f"{where}.entry",
                        None,
                        f"no {table.category.replace('_', ' ')} '{row.entry}' in this pack",
                    )
                )
        missing = sorted(set(possible) - set(covered))
        twice = sorted({r for r in covered if covered.count(r) > 1})
        if missing or twice:
            said = "; ".join(
                [f"{', '.join(map(str, missing))} not covered"] * bool(missing)
                + [f"{', '.join(map(str, twice))} given twice"] * bool(twice)
            )
            problems.append(
                Problem(f"tables[{n}].results", None, f"each {table.dice} result once: {said}")
            )
    return problems


def _spans(rolls: list[int]) -> str:
    return (
        f"{rolls[0]} to {rolls[-1]}"
        if rolls[-1] - rolls[0] == len(rolls) - 1
        else (", ".join(map(str, rolls)))
    )


def _mission_problems(pack: RulePack, book: Rulebook) -> list[Problem]:
    """A pack's missions name a battle size of the rules and requisitions that exist."""
    sizes = {s.id for s in book.battle_sizes}
    requisitions = {r.id for r in book.requisitions} | {r.id for r in pack.requisitions}
    problems = []
    for n, mission in enumerate(pack.missions):
        if mission.battle_size not in sizes:
            problems.append(
                Problem(
                    f"missions[{n}].battle_size",
                    None,
                    f"'{mission.battle_size}' is not a battle size ({', '.join(sorted(sizes))})",
                )
            )
        for m, bonus in enumerate(mission.victor_bonus):
            effect = bonus.effect
            if isinstance(effect, BonusCounter):
                counter = next((c for c in pack.counters if c.id == effect.counter), None)
                if counter is None or counter.scope != "force":
                    problems.append(
                        Problem(
                            f"missions[{n}].victor_bonus[{m}].effect.counter",
                            None,
                            f"no force counter '{effect.counter}' in this pack",
                        )
                    )
            unknown = (
                sorted(set(effect.requisitions) - requisitions)
                if isinstance(effect, FreeRequisitions)
                else []
            )
            problems += [
                Problem(
                    f"missions[{n}].victor_bonus[{m}].effect.requisitions",
                    None,
                    f"no requisition '{r}' in the rules or this pack",
                )
                for r in unknown
            ]
    return problems


def _core_problems(pack: RulePack, book: Rulebook) -> list[Problem]:
    """What a pack withdraws or reprices must be core content (``book`` is the core)."""
    core: dict[str, Sequence[Agenda | Requisition | CrusadeRelic]] = {
        "agendas": [a for a in book.agendas if a.pack is None],
        "requisitions": [r for r in book.requisitions if r.pack is None],
        "relics": [r for r in book.honours.crusade_relics if r.pack is None],
    }
    withdraw = pack.core.withdraw
    asked = [
        (f"core.withdraw.{kind}[{n}]", kind, entry_id)
        for kind, ids in (
            ("agendas", withdraw.agendas),
            ("requisitions", withdraw.requisitions),
            ("relics", withdraw.relics),
        )
        for n, entry_id in enumerate(ids)
    ]
    asked += [
        (f"core.requisition_costs.{entry_id}", "requisitions", entry_id)
        for entry_id in pack.core.requisition_costs
    ]
    return [
        Problem(path, None, f"no core {kind[:-1]} '{entry_id}' ({_ids(core[kind])})")
        for path, kind, entry_id in asked
        if entry_id not in {e.id for e in core[kind]}
    ]


def _ids(entries: Iterable[Agenda | Requisition | CrusadeRelic]) -> str:
    return ", ".join(e.id for e in entries)


def _unpriced(pack: RulePack) -> list[Problem]:
    """A pack that musters by points brings no unit without its points."""
    if pack.settings.muster_by != "points":
        return []
    return [
        Problem(
            f"requisitions[{i}].effects[{j}].points", None, "needed: this pack musters by points"
        )
        for i, requisition in enumerate(pack.requisitions)
        for j, effect in enumerate(requisition.effects)
        if isinstance(effect, AddUnit | Transform)
        and effect.points is None
        and not getattr(effect, "chosen", False)
    ]


def _effect_problems(
    where: str,
    effect: Effect,
    requisition: PackRequisition,
    counters: dict[str, Counter],
    quests: dict[str, PackQuest] | None = None,
) -> list[Problem]:
    if isinstance(effect, ChangeCounter | SetChoice) and effect.counter not in counters:
        return [Problem(f"{where}.counter", None, f"no counter '{effect.counter}' in this pack")]
    if isinstance(effect, ChangeCounter) and counters[effect.counter].choices:
        return [Problem(where, None, "a named choice is set by set_choice, never moved")]
    if isinstance(effect, SetChoice):
        rule = counters[effect.counter]
        if effect.value not in rule.choices:
            said = ", ".join(rule.choices) or "it is not a named choice"
            return [Problem(f"{where}.value", None, f"not a choice of {rule.name} ({said})")]
        if rule.scope == "card" and requisition.target != RequisitionTarget.UNIT:
            return [Problem(where, None, "a unit's choice: the target must be unit")]
        return []
    if isinstance(effect, RemoveUnit) and effect.refund_counter is not None:
        refunded = counters.get(effect.refund_counter)
        if refunded is None or refunded.scope != "force" or refunded.choices:
            return [
                Problem(
                    f"{where}.refund_counter",
                    None,
                    f"no force counter '{effect.refund_counter}' in this pack",
                )
            ]
    if isinstance(effect, StartQuest):
        quest = (quests or {}).get(effect.quest)
        if quest is None:
            return [Problem(f"{where}.quest", None, f"no quest '{effect.quest}' in this pack")]
        if quest.scope == "card" and requisition.target != RequisitionTarget.UNIT:
            return [
                Problem(where, None, f"{quest.name} is a unit's quest: the target must be unit")
            ]
        return []
    on_a_unit = effect.kind in UNIT_EFFECTS or (
        isinstance(effect, ChangeCounter) and counters[effect.counter].scope == "card"
    )
    if on_a_unit and requisition.target != RequisitionTarget.UNIT:
        return [Problem(where, None, f"{effect.kind} changes a unit: the target must be unit")]
    return []


def _names(book: Rulebook) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    honours = book.honours
    for kind, items in (
        ("agenda", book.agendas),
        ("requisition", book.requisitions),
        ("relic", honours.crusade_relics),
        ("mission", book.missions),
        ("battle_trait", [e for t in honours.battle_traits.values() for e in t.entries]),
        ("battle_trait", honours.pack_battle_traits),
        ("psychic_fortitude", honours.psychic_fortitudes.entries),
        ("psychic_fortitude", honours.pack_psychic_fortitudes),
        ("battle_scar", [e for t in book.scars.battle_scars.values() for e in t.entries]),
        (
            "weapon_enhancement",
            [e for t in honours.weapon_enhancements.values() for e in t.entries],
        ),
        ("weapon_enhancement", honours.pack_weapon_enhancements),
        ("battle_scar", book.scars.pack_scars),
    ):
        for item in items:
            found |= {(kind, folded(item.id)), (kind, folded(item.name))}
    return found


# --- into the engine ---------------------------------------------------------------------


def apply(book: Rulebook, packs: Sequence[RulePack]) -> Rulebook:
    """The rulebook a campaign plays with: the core, each pack's settings over it (a later
    pack wins), each pack's content added."""
    numbers = book.numbers
    sizes = book.battle_sizes
    agendas = list(book.agendas)
    requisitions = list(book.requisitions)
    relics = list(book.honours.crusade_relics)
    traits = list(book.honours.pack_battle_traits)
    fortitudes = list(book.honours.pack_psychic_fortitudes)
    scars = list(book.scars.pack_scars)
    enhancements = list(book.honours.pack_weapon_enhancements)
    counters = list(book.counters)
    missions = list(book.missions)
    triggers = list(book.triggers)
    thresholds = list(book.thresholds)
    tables = list(book.pack_tables)
    quests = list(book.quests)
    traits_of_warlords = list(book.pack_warlord_traits)
    for pack in packs:
        changed = {
            k: v
            for k, v in pack.settings.model_dump(exclude_none=True).items()
            if k in type(numbers).model_fields
        }
        numbers = numbers.model_copy(update=changed)
        numbers = numbers.model_copy(
            update={
                "crusade_factions": _more(numbers.crusade_factions, pack.crusade_factions),
                "faction_keywords": _more(numbers.faction_keywords, pack.faction_keywords),
            }
        )
        sizes = tuple(
            s.model_copy(update={"agendas": n}) if (n := agendas_for(pack.settings, s.id)) else s
            for s in sizes
        )
        agendas += [_agenda(a, pack) for a in pack.agendas]
        requisitions += [_requisition(r, pack) for r in pack.requisitions]
        relics += [_relic(r, pack) for r in pack.relics]
        traits += [_honour(e, pack) for e in pack.battle_traits]
        fortitudes += [_honour(e, pack) for e in pack.psychic_fortitudes]
        scars += [_scar(e, pack) for e in pack.battle_scars]
        enhancements += [
            PackWeaponEnhancement(**_honour(e, pack).model_dump(), weapon_type=e.weapon_type)
            for e in pack.weapon_enhancements
        ]
        counters += [
            c.model_copy(update={"factions": scope_of(c.factions, pack)}) for c in pack.counters
        ]
        missions += [_mission(m, pack) for m in pack.missions]
        triggers += [_trigger(t, pack) for t in pack.triggers]
        thresholds += [
            CounterThreshold.model_validate(
                {**t.model_dump(), "pack": pack.id, "factions": scope_of(t.factions, pack)}
            )
            for t in pack.thresholds
        ]
        tables += [_table(t, pack) for t in pack.tables]
        traits_of_warlords += [
            PackWarlordTrait.model_validate(
                {**t.model_dump(), "pack": pack.id, "factions": scope_of(t.factions, pack)}
            )
            for t in pack.warlord_traits
        ]
        quests += [
            Quest.model_validate(
                {**q.model_dump(), "pack": pack.id, "factions": scope_of(q.factions, pack)}
            )
            for q in pack.quests
        ]
        agendas = _withdrawn(agendas, pack.core.withdraw.agendas, pack)
        requisitions = [
            _with_character_stratagems(_repriced(r, pack), pack)
            for r in _withdrawn(requisitions, pack.core.withdraw.requisitions, pack)
        ]
        relics = _withdrawn(relics, pack.core.withdraw.relics, pack)
    honours = book.honours.model_copy(
        update={
            "crusade_relics": tuple(relics),
            "pack_battle_traits": tuple(traits),
            "pack_psychic_fortitudes": tuple(fortitudes),
            "pack_weapon_enhancements": tuple(enhancements),
        }
    )
    return Rulebook.model_validate(
        book.model_copy(
            update={
                "numbers": numbers,
                "battle_sizes": sizes,
                "agendas": tuple(agendas),
                "requisitions": tuple(requisitions),
                "honours": honours,
                "scars": book.scars.model_copy(update={"pack_scars": tuple(scars)}),
                "counters": tuple(counters),
                "missions": tuple(missions),
                "triggers": tuple(triggers),
                "thresholds": tuple(thresholds),
                "pack_tables": tuple(tables),
                "quests": tuple(quests),
                "pack_warlord_traits": tuple(traits_of_warlords),
            }
        ).model_dump()
    )


def keyword(word: str) -> str:
    """A keyword as the rules write it: upper case, spaces collapsed."""
    return " ".join(word.split()).upper()


def _more(have: tuple[str, ...], added: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*have, *(keyword(k) for k in added)]))


def scope_of(own: Sequence[str], pack: RulePack) -> tuple[str, ...]:
    """An entry's faction scope: its own, else its pack's; empty: every force."""
    return tuple(dict.fromkeys(keyword(k) for k in (own or pack.factions)))


def in_scope(factions: Sequence[str], army: Iterable[str]) -> bool:
    """Whether content scoped to ``factions`` reaches a force with the army keywords
    ``army`` (any case, singular or plural: ``spellings``); unscoped content reaches all."""
    if not factions:
        return True
    held = {s for word in army for s in spellings(word)}
    return any(not spellings(f).isdisjoint(held) for f in factions)


def narrow(book: Rulebook, army: Iterable[str]) -> Rulebook:
    """The rulebook a force with the army keywords ``army`` plays with (issue 47): the
    campaign's, without the pack content scoped to other factions. Missions stay (a battle
    is set up for both sides); their victor bonus reaches only a victor in scope."""
    words = frozenset(army)

    def kept(items: Sequence[_Scoped]) -> tuple[_Scoped, ...]:
        return tuple(i for i in items if in_scope(i.factions, words))

    honours = book.honours
    return book.model_copy(
        update={
            "agendas": kept(book.agendas),
            "requisitions": kept(book.requisitions),
            "honours": honours.model_copy(
                update={
                    "crusade_relics": kept(honours.crusade_relics),
                    "pack_battle_traits": kept(honours.pack_battle_traits),
                    "pack_psychic_fortitudes": kept(honours.pack_psychic_fortitudes),
                    "pack_weapon_enhancements": kept(honours.pack_weapon_enhancements),
                }
            ),
            "scars": book.scars.model_copy(update={"pack_scars": kept(book.scars.pack_scars)}),
            "counters": kept(book.counters),
            "triggers": kept(book.triggers),
            "thresholds": kept(book.thresholds),
            "pack_tables": kept(book.pack_tables),
            "quests": kept(book.quests),
            "pack_warlord_traits": kept(book.pack_warlord_traits),
        }
    )


def scoped(book: Rulebook) -> bool:
    """Whether any content of the rulebook is scoped to factions (else every force's book is
    the campaign's)."""
    return bool(factions_named(book))


def factions_named(book: Rulebook) -> tuple[str, ...]:
    """Every faction keyword a scope of the rulebook names, once, in order."""
    groups: tuple[Sequence[_HasFactions], ...] = (
        book.agendas,
        book.requisitions,
        book.honours.crusade_relics,
        book.honours.pack_battle_traits,
        book.honours.pack_psychic_fortitudes,
        book.honours.pack_weapon_enhancements,
        book.scars.pack_scars,
        book.counters,
        book.triggers,
        book.thresholds,
        book.pack_tables,
        book.quests,
        book.pack_warlord_traits,
        book.missions,
    )
    return tuple(dict.fromkeys(f for group in groups for item in group for f in item.factions))


class _HasFactions(Protocol):
    @property
    def factions(self) -> tuple[str, ...]: ...


_Scoped = TypeVar("_Scoped", bound=_HasFactions)


_Core = TypeVar("_Core", Agenda, Requisition, CrusadeRelic)


def _withdrawn(entries: list[_Core], ids: Sequence[str], pack: RulePack) -> list[_Core]:
    """Kept in the rulebook (cards, battles and the feed still name them), marked as out of
    the campaign; the first pack to withdraw one is the one named."""
    gone = set(ids)
    return [
        e.model_copy(update={"withdrawn_by": pack.id})
        if e.id in gone and e.pack is None and e.withdrawn_by is None
        else e
        for e in entries
    ]


def _repriced(requisition: Requisition, pack: RulePack) -> Requisition:
    cost = pack.core.requisition_costs.get(requisition.id)
    if cost is None or requisition.pack is not None:
        return requisition
    return requisition.model_copy(update={"cost_rp": cost})


def _with_character_stratagems(requisition: Requisition, pack: RulePack) -> Requisition:
    """Specialist Reinforcements with the pack's Knight Character Stratagems added."""
    added = pack.core.character_stratagems
    if requisition.id != "specialist_reinforcements" or requisition.pack or not added:
        return requisition
    names = [" ".join(a.stratagem.split()) for a in added]
    folded = {n.casefold() for n in names}
    keywords = list(requisition.character_stratagem_keywords)
    keywords += [a.keyword for a in added if a.keyword.upper() not in {k.upper() for k in keywords}]
    return requisition.model_copy(
        update={
            "character_stratagems": (*requisition.character_stratagems, *names),
            "character_stratagem_keywords": tuple(dict.fromkeys(keywords)),
            "character_stratagem_factions": (
                *requisition.character_stratagem_factions,
                *(
                    CharacterStratagem(
                        stratagem=name,
                        keyword=a.keyword,
                        excludes_named_characters=a.excludes_named_characters,
                        cp=a.cp,
                    )
                    for name, a in zip(names, added, strict=True)
                ),
            ),
            "character_stratagems_elsewhere": tuple(
                s for s in requisition.character_stratagems_elsewhere if s.casefold() not in folded
            ),
        }
    )


def agendas_for(settings: Settings, size_id: str) -> int | None:
    """The Agendas per player a pack's settings give battles of ``size_id``, if any."""
    wanted = settings.agendas_per_battle
    return wanted.get(size_id) if isinstance(wanted, dict) else wanted


def _trigger(trigger: PackTrigger, pack: RulePack) -> Trigger:
    """A pack's trigger as the rules run it: its scope the counter's (checked on loading to
    agree with a ``scope`` given), else ``scope`` (force when left out)."""
    counter = next((c for c in pack.counters if c.id == trigger.counter), None)
    scope = counter.scope if counter is not None else trigger.scope or "force"
    return Trigger.model_validate(
        {
            **trigger.model_dump(exclude_none=True),
            "scope": scope,
            "pack": pack.id,
            "factions": scope_of(trigger.factions, pack),
        }
    )


def _agenda(agenda: PackAgenda, pack: RulePack) -> Agenda:
    kills = agenda.bounded_by_kills_of
    return Agenda(
        id=agenda.id,
        name=agenda.name,
        category=agenda.category or f"{pack.name}: {agenda.name}",
        max_units=agenda.max_units,
        max_tally=agenda.max_tally,
        eligibility=AgendaEligibility(expression=agenda.eligible),
        kill_bound=(
            KillBound(
                keywords_any=tuple(kills),
                what=" or ".join(kills) + " units" if kills else "enemy units",
            )
            if kills is not None
            else None
        ),
        xp=_agenda_xp(agenda),
        summary=agenda.summary,
        pack=pack.id,
        counters_per_mark=dict(agenda.counters),
        on_fail=tuple(agenda.on_fail),
        factions=scope_of(agenda.factions, pack),
    )


def _agenda_xp(agenda: PackAgenda) -> AgendaXp:
    if agenda.xp is None:
        assert agenda.xp_per_tally is not None  # one of the two, checked on loading
        return PerMark(kind="per_mark", xp_per_mark=agenda.xp_per_tally)
    return _CORE_XP.validate_python(agenda.xp.model_dump())  # the core's kind of the same name


_CORE_XP: TypeAdapter[AgendaXp] = TypeAdapter(AgendaXp)


def _requisition(requisition: PackRequisition, pack: RulePack) -> Requisition:
    return Requisition(
        id=requisition.id,
        name=requisition.name,
        cost_rp=requisition.cost_rp,
        timing=requisition.timing,
        target=requisition.target,
        eligible=requisition.eligible,
        effects=tuple(requisition.effects),
        # one that heals a scar needs a scarred unit, and the buyer names the scar
        needs_battle_scar=any(e.kind == "remove_battle_scar" for e in requisition.effects),
        only_as_bonus=requisition.only_as_bonus,
        cost_per_power=requisition.cost_per_power,
        counters=tuple(pack.counters),
        summary=requisition.summary,
        pack=pack.id,
        factions=scope_of(requisition.factions, pack),
    )


def _mission(mission: PackMission, pack: RulePack) -> Mission:
    return Mission(
        id=mission.id,
        name=mission.name,
        battle_size=mission.battle_size,
        objective_markers=mission.objective_markers,
        objective_markers_at_end=mission.objective_markers_at_end,
        summary=mission.summary,
        victor_bonus=tuple(mission.victor_bonus),
        pack=pack.id,
        factions=scope_of(mission.factions, pack),
    )


def _honour(entry: PackHonourEntry, pack: RulePack) -> PackHonour:
    return PackHonour(
        id=entry.id,
        name=entry.name,
        summary=entry.summary,
        eligible=entry.eligible,
        pack=pack.id,
        counters=dict(entry.counters),
        factions=scope_of(entry.factions, pack),
    )


def _scar(entry: PackScarEntry, pack: RulePack) -> PackScar:
    return PackScar(
        **_honour(entry, pack).model_dump(),
        max_xp_per_battle=entry.max_xp_per_battle,
        forbids_actions=entry.forbids_actions,
    )


def _table(table: PackTableIn, pack: RulePack) -> PackTable:
    return PackTable(
        id=table.id,
        name=table.name,
        category=table.category,
        dice=table.dice,
        chosen=table.chosen,
        eligible=table.eligible,
        results=tuple(
            PackTableResult(low=r.span()[0], high=r.span()[1], entry=r.entry) for r in table.results
        ),
        summary=table.summary,
        pack=pack.id,
        factions=scope_of(table.factions, pack),
    )


def _relic(relic: PackRelic, pack: RulePack) -> CrusadeRelic:
    return CrusadeRelic(
        pack=pack.id,
        id=relic.id,
        name=relic.name,
        category=relic.category,
        keywords_any=tuple(relic.keywords_any),
        eligible=relic.eligible,
        bearer=relic.bearer,
        summary=relic.summary,
        factions=scope_of(relic.factions, pack),
    )


def schema() -> dict[str, Any]:
    """The JSON Schema of a pack (``GET /api/v1/rule-packs/schema``)."""
    document: dict[str, Any] = _without_object_defaults(RulePack.model_json_schema())
    document["$id"] = "https://crusade-tracker.invalid/schemas/rule-pack-1.json"
    document["title"] = "Crusade tracker rule pack"
    return document


def _without_object_defaults(node: Any) -> Any:
    """An object's default (settings: {}) says no more than its fields' own defaults."""
    if isinstance(node, dict):
        return {
            k: _without_object_defaults(v)
            for k, v in node.items()
            if not (k == "default" and isinstance(v, dict))
        }
    if isinstance(node, list):
        return [_without_object_defaults(v) for v in node]
    return node


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.casefold()).strip("_")[:60] or "pack"


def dumps(pack: RulePack) -> str:
    return json.dumps(pack.model_dump(mode="json", exclude_defaults=True), indent=2)
