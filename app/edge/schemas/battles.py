"""Bodies of a battle: muster, the result of each side, its report and photos."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StrictBool, StringConstraints

from app.edge.schemas.common import Count, Die, Id, Input


class SideSetupIn(Input):
    force_id: Id
    role: Literal["attacker", "defender"]
    roster: list[Id] = Field(min_length=1, max_length=200)
    agendas: list[Annotated[str, StringConstraints(max_length=60)]] = Field(max_length=4)
    warlord_card_id: Id | None = None


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
    destroyed_enemies: list[Id] | None = Field(
        default=None,
        max_length=99,
        description="Which enemy units this unit destroyed, by card id (issue 47; optional): "
        "each on the enemy's roster in this battle, none named twice across the side, no "
        "more than the unit's kills. A rule pack's keyword-filtered unit counters and unit "
        "quests then count only the named units with the keyword.",
    )
    quarry: Id | None = Field(
        default=None,
        description="The enemy unit (card id, on the enemy's roster in this battle) this unit "
        "named as its quarry (issue 47): a rule pack's quarry_destroyed counts when "
        "destroyed_enemies names it.",
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
    destroyed_enemies: list[int] | None = Field(
        default=None, description="The enemy units it destroyed, by card id, where named"
    )
    quarry: int | None = Field(default=None, description="The enemy unit it named its quarry")


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
