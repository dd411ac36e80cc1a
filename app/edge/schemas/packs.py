"""Bodies of rule packs: a campaign's packs, a preview, the refusals, and the JSON Schema a
pack follows."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

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
    PackWarlordTrait,
    PackWeaponEnhancement,
    Quest,
    Requisition,
    Trigger,
)


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


class RulePackExamplePublic(BaseModel):
    """An example pack shipped with the tracker (issue 47): attach its ``yaml`` as a file
    with POST /campaigns/{campaign_id}/rule-packs, as any pack."""

    example: str = Field(description="Where it lives under examples/packs/, e.g. mixed/sagas")
    pack_id: str = Field(description="The pack's own id (its `id` field)")
    name: str
    version: str
    description: str
    factions: list[str] = Field(
        description="The factions whose forces it reaches; empty: every force"
    )
    settings: packs.Settings = Field(description="The campaign settings it sets")
    adds: dict[str, list[str]] = Field(description="Names of what it adds, by kind")
    withdraws: dict[str, list[str]] = Field(description="The core's entries it takes out")
    requisition_costs: dict[str, int] = Field(
        description="Core Requisitions it reprices: name → RP"
    )
    yaml: str = Field(description="The pack's file, as shipped")


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


class PackReachPublic(BaseModel):
    """Whom a pack scoped to factions reaches (issue 47), by force name."""

    factions: list[str]
    forces: list[str] = Field(description="The forces whose army keywords it reaches")
    other_forces: list[str] = Field(description="The forces it does not reach")


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
    reach: PackReachPublic | None = Field(
        default=None,
        description="A pack scoped to factions (issue 47): the campaign's forces it reaches "
        "and those it does not; none: it reaches every force",
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
