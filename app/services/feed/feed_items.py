"""An event as the feed lists it (GET /api/v1/campaigns/{id}/events) and a generic webhook
is sent it: one shape and one renderer for both, so a bot reads the same object from
either. The API's schema documents these models; the delivery worker renders them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.services.feed import events


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


class UnitExperience(BaseModel):
    """decision_answered: one unit's XP around the answer."""

    card_id: int
    xp_before: int
    xp_after: int


class DieRolledItem(BaseModel):
    """decision_answered: a die rolled while applying the answer (entered or the server's)."""

    purpose: str
    sides: int
    value: int


class GainedItem(BaseModel):
    """decision_answered: a Battle Honour or Battle Scar the answer gave, and its unit."""

    card_id: int
    kind: str = Field(
        description="battle_scar, or the honour's category (battle_trait, weapon_enhancement, "
        "psychic_fortitude, crusade_relic)"
    )
    entries: list[str] = Field(description="Its entry ids (two for some Weapon Enhancements)")
    weapon: str | None = Field(default=None, description="The weapon it was given to, if any")


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
    army_keywords: list[str] | None = Field(
        default=None, description="army_keywords_changed: the force's army keywords now"
    )
    army_keywords_before: list[str] | None = Field(
        default=None, description="army_keywords_changed: its army keywords before"
    )
    before: int | None = Field(default=None, description="counter_changed: its value before")
    after: int | None = Field(default=None, description="counter_changed: its value after")
    before_choice: str | None = Field(
        default=None,
        description="counter_changed of a named choice (issue 47): the choice before, by its "
        "id (null: none yet); `before` stays its number",
    )
    after_choice: str | None = Field(
        default=None,
        description="counter_changed of a named choice (issue 47): the choice now, by its id",
    )
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
    consequence: str | None = Field(
        default=None,
        description="decision_answered (out_of_action): devastating_blow or battle_scar",
    )
    unit_xp: list[UnitExperience] = Field(
        default_factory=list,
        description="decision_answered: XP before and after the answer, for the decision's "
        "unit (the one a victor bonus's honour went to) and any other unit whose XP it moved "
        "(issue 46); with battle_recorded's units a bot keeps every card's XP from the feed",
    )
    rolled: list[DieRolledItem] = Field(
        default_factory=list,
        description="decision_answered: the dice rolled while applying it, in order (a "
        "Devastating Blow's D6, a rolled honour or scar and its re-rolls)",
    )
    gained: list[GainedItem] = Field(
        default_factory=list,
        description="decision_answered: each Battle Honour and Battle Scar it gave, with its unit",
    )


class FeedEventPublic(BaseModel):
    """One change in the campaign, oldest first. ``kind`` is one of: campaign_created,
    force_created, army_keywords_changed (a force's army keywords, issue 47:
    ``army_keywords_before``, ``army_keywords``), card_added, card_removed, battle_mustered,
    result_proposed,
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


def feed_item(e: events.FeedEvent) -> FeedEventPublic:
    """An event as the feed lists it and a generic webhook is sent it: one shape for both."""
    return FeedEventPublic(
        id=e.id,
        cursor=e.cursor,
        kind=e.kind,
        campaign_id=e.campaign_id,
        force_id=e.force_id,
        force_ids=e.force_ids,
        battle_id=e.battle_id,
        card_id=e.card_id,
        decision_id=e.decision_id,
        actor=e.actor,
        summary=e.summary,
        created_at=e.created_at,
        details=event_details(e.details),
    )


def event_details(payload: dict[str, Any]) -> EventDetails:
    return EventDetails.model_validate(events.details_of(payload))
