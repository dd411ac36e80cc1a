"""Rows and rule values turned into response bodies, with the tables' names filled in."""

from __future__ import annotations

from typing import Any, Literal

from app.db.models import Campaign, Card, Force
from app.edge.schemas.campaigns import CampaignPublic
from app.edge.schemas.forces import (
    CardPublic,
    EntryPublic,
    ForceSummary,
    HonourPublic,
    OrderOfBattlePublic,
    QuestProgressPublic,
    ScarPublic,
    TalliesPublic,
    UpgradePublic,
)
from app.rules import quests
from app.rules.cards import CrusadeCard, never_gains_xp
from app.rules.data import DiceTable, HonourCategory, Rulebook, rulebook
from app.rules.order_of_battle import supply_used
from app.rules.ranks import next_rank
from app.services.forces.convert import card_value, dice_json
from app.services.forces.forces import ForceView


def campaign(row: Campaign) -> CampaignPublic:
    assert row.id is not None
    return CampaignPublic(
        id=row.id,
        name=row.name,
        description=row.description,
        created_at=row.created_at,
        organizer_results_need_confirmation=row.organizer_results_need_confirmation,
    )


def _entries(
    card: CrusadeCard, category: HonourCategory, ids: tuple[str, ...], book: Rulebook
) -> list[EntryPublic]:
    """Names and summaries of an honour's entries, for people and bots alike."""
    table: DiceTable | None = None
    if category == HonourCategory.BATTLE_TRAIT:
        table = book.honours.battle_traits[card.unit_type]
    elif category == HonourCategory.PSYCHIC_FORTITUDE:
        table = book.honours.psychic_fortitudes
    elif category == HonourCategory.CRUSADE_RELIC:
        return [_relic(i, book) for i in ids]
    entries = []
    for entry_id in ids:
        tables = [table] if table else list(book.honours.weapon_enhancements.values())
        found: Any = next(
            (t.entry(entry_id) for t in tables if entry_id in {e.id for e in t.entries}),
            book.honours.pack_entry(category, entry_id),
        )
        if found is None:  # a rule pack's entry, the pack since detached: the card keeps it
            entries.append(_detached(entry_id))
            continue
        entries.append(EntryPublic(id=found.id, name=found.name, summary=found.summary))
    return entries


def _scar(book: Rulebook, card: CrusadeCard, scar_id: str) -> Any:
    """A held scar's entry: the core table's or a rule pack's (the pack since detached:
    the card keeps it, named from its id)."""
    try:
        return book.scars.scar(card.unit_type, scar_id)
    except KeyError:
        return _detached(scar_id)


def _detached(entry_id: str) -> EntryPublic:
    name = entry_id.replace("_", " ").capitalize()
    return EntryPublic(id=entry_id, name=name, summary="From a rule pack no longer attached.")


def _relic(relic_id: str, book: Rulebook) -> EntryPublic:
    try:
        relic = book.honours.relic(relic_id)
    except KeyError:  # a rule pack's relic, the pack since detached: the card keeps it
        return _detached(relic_id)
    return EntryPublic(id=relic.id, name=relic.name, summary=relic.summary)


def card(
    row: Card,
    *,
    awaiting_decision: bool = False,
    value: CrusadeCard | None = None,
    book: Rulebook | None = None,
) -> CardPublic:
    """The card as the API shows it; ``book``: the campaign's rulebook (its rule packs)."""
    book = book or rulebook()
    value = value or card_value(row)
    following = next_rank(value, book)
    assert row.id is not None
    return CardPublic(
        id=row.id,
        force_id=row.force_id,
        name=row.name,
        datasheet=row.datasheet,
        battlefield_role=row.battlefield_role,
        power_rating=row.power_rating,
        keywords=sorted(row.keywords),
        champion=row.champion,
        named_character=row.named_character,
        split_unit=row.split_unit,
        points=row.points,
        wargear=row.wargear,
        psychic_powers=row.psychic_powers,
        narrative=row.narrative,
        gains_experience=not never_gains_xp(value, book),
        xp=value.xp,
        rank=value.rank,
        rank_name=book.rank(value.rank).name,
        next_rank_xp=following.min_xp if following else None,
        crusade_points=value.crusade_points,
        honours=[
            HonourPublic(
                category=h.category.value,
                entries=_entries(value, h.category, h.entry_ids, book),
                crusade_points=h.crusade_points,
                weapon=h.weapon,
                model=h.model,
                dice=dice_json(h.dice),
            )
            for h in value.honours
        ],
        scars=[
            ScarPublic(
                id=s.entry_id,
                name=_scar(book, value, s.entry_id).name,
                summary=_scar(book, value, s.entry_id).summary,
                dice=dice_json(s.dice),
            )
            for s in value.scars
        ],
        upgrades=[UpgradePublic.model_validate(u) for u in row.upgrades],
        tallies=TalliesPublic(
            battles_played=row.battles_played,
            battles_survived=row.battles_survived,
            destroyed_psychic=row.destroyed_psychic,
            destroyed_ranged=row.destroyed_ranged,
            destroyed_melee=row.destroyed_melee,
            units_destroyed=value.tallies.units_destroyed,
            marked_for_greatness=row.marked_for_greatness,
        ),
        awaiting_decision=awaiting_decision,
        removed=row.removed,
        counters=quests.plain(row.counters or {}),
        choices=named_choices(row.counters or {}, book, "card"),
        quests=quest_progress(row.counters or {}, book),
    )


def force_summary(
    row: Force, view: ForceView | None = None, book: Rulebook | None = None
) -> ForceSummary:
    """``book``: the campaign's rules, for what supply counts (Power Rating without one)."""
    assert row.id is not None
    book = book or rulebook()
    return ForceSummary(
        id=row.id,
        campaign_id=row.campaign_id,
        name=row.name,
        player_name=row.player_name,
        crusade_faction=row.crusade_faction,
        army_keywords=list(row.army_keywords),
        requisition_points=row.requisition_points,
        supply_limit=row.supply_limit,
        supply_used=supply_used(view.value, book) if view else 0,
        muster_by=book.numbers.muster_by,
        battle_tally=row.battle_tally,
        victories=row.victories,
        crusade_points=view.value.crusade_points if view else 0,
        notes=row.notes,
        # every force counter of the campaign's packs, a counter never set at its start (a
        # force made before its pack was attached holds none yet: issue 38)
        counters={c.id: c.start for c in book.counters if c.scope == "force"}
        | quests.plain(row.counters or {}),
        choices=named_choices(row.counters or {}, book, "force"),
        quests=quest_progress(row.counters or {}, book),
    )


def named_choices(counters: dict[str, int], book: Rulebook, scope: str) -> dict[str, str | None]:
    """The holder's named choices by name (issue 47): a force's every one (none yet: null),
    a card's those it holds."""
    return {
        c.id: c.choice(counters.get(c.id, 0))
        for c in book.counters
        if c.choices and c.scope == scope and (scope == "force" or c.id in counters)
    }


def quest_progress(counters: dict[str, int], book: Rulebook) -> list[QuestProgressPublic]:
    """The quests a holder has begun, from its counters (issue 38)."""
    found = []
    for key, value in sorted(counters.items()):
        if not quests.is_quest_key(key) or key.endswith(":tally"):
            continue
        quest_id = key.removeprefix(quests.PREFIX)
        quest = book.quest(quest_id)
        steps = len(quest.steps) if quest else 0
        state: Literal["under_way", "completed", "failed"] = "under_way"
        if value == quests.FAILED:
            state = "failed"
        elif quest is not None and value > steps:
            state = "completed"
        step = quest.steps[value - 1] if quest and state == "under_way" else None
        found.append(
            QuestProgressPublic(
                quest=quest_id,
                name=quest.name if quest else quest_id,
                state=state,
                step=value,
                steps=steps,
                tally=counters.get(quests.tally_key(quest_id), 0),
                count=step.count if step else 0,
            )
        )
    return found


def order_of_battle(view: ForceView, book: Rulebook | None = None) -> OrderOfBattlePublic:
    summary = force_summary(view.force, view, book)
    values = {v.id: v for v in view.value.cards}
    cards = [
        card(
            c,
            awaiting_decision=c.id in view.pending_card_ids,
            value=values[str(c.id)],
            book=book,
        )
        for c in view.cards
        if not c.removed
    ]
    return OrderOfBattlePublic(**summary.model_dump(), cards=cards)
