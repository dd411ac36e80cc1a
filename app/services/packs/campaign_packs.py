"""A campaign's rule packs (issue 22): attach, preview, update and detach them, and the
rulebook a campaign plays with (the core with its active packs applied), which every
service asks for instead of the core's.

A pack is kept per version. Attaching a new version makes it the active one; the battles
recorded before keep, in ``battle.rule_packs``, the versions they were recorded under, and a
revert restores the state kept on the battle, so an update never changes the past."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import update
from sqlmodel import Session, col, select

from app.db.models import Battle, Campaign, Card, Force, RulePack, utcnow
from app.errors import DomainError, NotFound
from app.rules import packs, quests
from app.rules.data import Rulebook, rulebook
from app.services.feed import history
from app.services.forces.forces import get_campaign
from app.services.packs import rulebooks
from app.services.packs.rulebooks import active_packs, campaign_book


def list_packs(session: Session, campaign_id: int) -> list[RulePack]:
    get_campaign(session, campaign_id)
    return active_packs(session, campaign_id)


def rules_in_play(session: Session, campaign_id: int) -> tuple[dict[str, str], Rulebook]:
    """The campaign's rulebook as played (the core with its packs) and the packs' versions."""
    get_campaign(session, campaign_id)
    return rulebooks.versions_in_play(session, campaign_id), rulebooks.campaign_book(
        session, campaign_id
    )


def reach(session: Session, campaign_id: int) -> dict[str, tuple[list[str], list[str]]]:
    """For each active pack scoped to factions (issue 47): the names of the campaign's
    forces it reaches and of those it does not, so nobody is left out silently."""
    found = {
        r.pack_id: _reach_of(session, campaign_id, packs.RulePack.model_validate(r.document))
        for r in active_packs(session, campaign_id)
    }
    return {k: (v[1], v[2]) for k, v in found.items() if v is not None}


# --- attaching -------------------------------------------------------------------------


@dataclass(frozen=True)
class PackChanges:
    """What attaching a pack would add and change, for an organizer to read first."""

    pack: packs.RulePack
    replaces_version: str | None
    settings: dict[str, tuple[Any, Any]]  # setting -> (before, after)
    added: dict[str, list[str]]  # agendas / requisitions / relics / honours / counters
    removed: dict[str, list[str]]  # what the version it replaces had and this one has not
    breaks: list[str] = field(default_factory=list)  # what in play the removals affect
    withdraws: dict[str, list[str]] = field(default_factory=dict)  # core entries, by kind
    costs: dict[str, tuple[int, int]] = field(default_factory=dict)  # core requisition's RP

    refusal: DomainError | None = None  # what attaching it would answer instead of a 201
    # a pack scoped to factions (issue 47): (its factions, forces it reaches, those it does not)
    reach: tuple[tuple[str, ...], list[str], list[str]] | None = None


def preview(
    session: Session, *, campaign_id: int, data: bytes, accept_breaking: bool = False
) -> PackChanges:
    """What attaching ``data`` would add and change, and the refusal attaching it (with
    ``accept_breaking``) would meet, if any: a preview predicts exactly what attach does."""
    campaign = get_campaign(session, campaign_id)
    pack, root = _read(data)
    rows = active_packs(session, campaign_id)
    others = [packs.RulePack.model_validate(r.document) for r in rows if r.pack_id != pack.id]
    try:
        packs.check_against(pack, rulebook(), others, root)
    except packs.PackError as error:
        raise _refusal(error) from None
    current = _current(session, campaign_id, pack.id)
    before = campaign_book(session, campaign_id)
    old = packs.RulePack.model_validate(current.document) if current else None
    removed = _removed(old, pack) if old else {}
    changes = PackChanges(
        pack=pack,
        replaces_version=current.pack_version if current else None,
        settings=_settings_changed(before, campaign, pack),
        added=content_names(pack),
        removed=removed,
        breaks=_breaks(session, campaign_id, removed, old) if old else [],
        withdraws=withdrawn_names(pack, before),
        costs={
            before.requisition(r).name: (before.requisition(r).cost_rp, cost)
            for r, cost in pack.core.requisition_costs.items()
        },
    )
    after = [
        pack if r.pack_id == pack.id else packs.RulePack.model_validate(r.document) for r in rows
    ]
    if current is None:
        after.append(pack)
    refusal = _refusal_to_attach(
        session, campaign_id, changes, current, old, before, after, accept_breaking
    )
    return replace(changes, refusal=refusal, reach=_reach_of(session, campaign_id, pack))


def _reach_of(
    session: Session, campaign_id: int, pack: packs.RulePack
) -> tuple[tuple[str, ...], list[str], list[str]] | None:
    factions = packs.scope_of((), pack)
    if not factions:
        return None
    every = session.exec(
        select(Force).where(Force.campaign_id == campaign_id).order_by(col(Force.id))
    ).all()
    inside = [packs.in_scope(factions, rulebooks.army_of(f)) for f in every]
    return (
        factions,
        [f.name for f, i in zip(every, inside, strict=True) if i],
        [f.name for f, i in zip(every, inside, strict=True) if not i],
    )


def _refusal_to_attach(
    session: Session,
    campaign_id: int,
    changes: PackChanges,
    current: RulePack | None,
    old: packs.RulePack | None,
    before: Rulebook,
    after: list[packs.RulePack],
    accept_breaking: bool,
) -> DomainError | None:
    """Every reason attach refuses a valid pack in this campaign, checked without writing."""
    pack = changes.pack
    if current is not None and current.pack_version == pack.version:
        return DomainError(
            "rule_pack_version_exists",
            f"Version {pack.version} of {pack.name} is already attached; raise the version "
            "to update it.",
            status=409,
            field="version",
        )
    if old is not None:
        in_use = _missions_in_use(session, campaign_id, old, keep={m.id for m in pack.missions})
        if in_use is not None:
            return in_use
    # what no confirmation overrides comes before what accept_breaking does (issue 47): the
    # preview then names the refusal attach meets, confirmed or not
    now = packs.apply(rulebook(), after).numbers.muster_by
    measure = _supply_measure(after, now) or _muster_changed(
        session, campaign_id, before.numbers.muster_by, now
    )
    if measure is not None:
        return measure
    if changes.breaks and not accept_breaking:
        return DomainError(
            "rule_pack_update_breaks",
            f"Version {pack.version} of {pack.name} leaves out what is in play: "
            f"{'; '.join(changes.breaks[:5])}. Send accept_breaking=true to attach it anyway.",
            status=409,
        )
    return None


def attach(
    session: Session, *, campaign_id: int, data: bytes, accept_breaking: bool = False
) -> tuple[RulePack, PackChanges]:
    """Attach a pack, or a new version of one already attached."""
    changes = preview(session, campaign_id=campaign_id, data=data, accept_breaking=accept_breaking)
    if changes.refusal is not None:
        raise changes.refusal
    before = campaign_book(session, campaign_id)
    pack = changes.pack
    current = _current(session, campaign_id, pack.id)
    stale = session.exec(
        select(RulePack).where(
            RulePack.campaign_id == campaign_id,
            RulePack.pack_id == pack.id,
            RulePack.pack_version == pack.version,
        )
    ).first()
    if stale is not None:  # an older version attached again: it becomes the active one
        session.delete(stale)
        session.flush()
    position = current.position if current else len(active_packs(session, campaign_id))
    if current is not None:
        current.active = False
        session.add(current)
    row = RulePack(
        campaign_id=campaign_id,
        pack_id=pack.id,
        name=pack.name,
        pack_version=pack.version,
        document=pack.model_dump(mode="json", exclude_defaults=True),
        position=position,
        attached_at=utcnow(),
    )
    session.add(row)
    session.flush()
    _rules_changed(session, campaign_id, before)
    history.record(
        session,
        campaign_id=campaign_id,
        kind="rule_pack_updated" if current else "rule_pack_attached",
        pack=pack.id,
        name=pack.name,
        version=pack.version,
        replaces=changes.replaces_version,
    )
    _set_campaign_settings(session, campaign_id, pack)
    return row, changes


def detach(
    session: Session, *, campaign_id: int, pack_id: str, accept_breaking: bool = False
) -> RulePack:
    row = get_pack(session, campaign_id, pack_id)
    before = campaign_book(session, campaign_id)
    old = packs.RulePack.model_validate(row.document)
    in_use = _missions_in_use(session, campaign_id, old, keep=set())
    if in_use is not None:
        raise in_use
    breaks = _breaks(session, campaign_id, content_names(old), old)
    if breaks and not accept_breaking:
        raise DomainError(
            "rule_pack_in_use",
            f"{row.name} is in play: {'; '.join(breaks[:5])}. Send accept_breaking=true to "
            "detach it anyway.",
            status=409,
        )
    row.active = False
    session.add(row)
    session.flush()
    _rules_changed(session, campaign_id, before)
    history.record(
        session,
        campaign_id=campaign_id,
        kind="rule_pack_detached",
        pack=row.pack_id,
        name=row.name,
        version=row.pack_version,
    )
    return row


def get_pack(session: Session, campaign_id: int, pack_id: str) -> RulePack:
    get_campaign(session, campaign_id)
    row = _current(session, campaign_id, pack_id)
    if row is None:
        raise NotFound(
            "rule_pack_not_found", f"Campaign {campaign_id} plays with no rule pack '{pack_id}'."
        )
    return row


def _current(session: Session, campaign_id: int, pack_id: str) -> RulePack | None:
    return session.exec(
        select(RulePack).where(
            RulePack.campaign_id == campaign_id,
            RulePack.pack_id == pack_id,
            RulePack.active == True,  # noqa: E712
        )
    ).first()


def _read(data: bytes) -> tuple[packs.RulePack, Any]:
    try:
        return packs.read(data)
    except UnicodeDecodeError:
        raise _refusal(packs.PackError([packs.Problem("", None, "not UTF-8 text")])) from None
    except packs.PackError as error:
        raise _refusal(error) from None


def _refusal(error: packs.PackError) -> DomainError:
    first = error.problems[0]
    return DomainError(
        "rule_pack_invalid",
        "The rule pack was refused: " + "; ".join(p.sentence() for p in error.problems[:10]),
        status=422,
        field=first.path or "file",
    )


def _set_campaign_settings(session: Session, campaign_id: int, pack: packs.RulePack) -> None:
    """A pack's campaign setting is the campaign's own once attached: the organizer may
    change it afterwards on the campaign's settings, as any setting."""
    wanted = pack.settings.organizer_results_need_confirmation
    campaign = get_campaign(session, campaign_id)
    if wanted is None or campaign.organizer_results_need_confirmation == wanted:
        return
    campaign.organizer_results_need_confirmation = wanted
    session.add(campaign)
    history.record(
        session,
        campaign_id=campaign_id,
        kind="campaign_settings_changed",
        fields=["organizer_results_need_confirmation"],
        pack=pack.id,
    )


def _settings_changed(
    before: Rulebook, campaign: Campaign, pack: packs.RulePack
) -> dict[str, tuple[Any, Any]]:
    changed: dict[str, tuple[Any, Any]] = {}
    for name, value in pack.settings.model_dump(exclude_none=True).items():
        if name == "agendas_per_battle" and isinstance(value, dict):
            for size in before.battle_sizes:  # one line per battle size it sets
                if size.id in value:
                    changed[f"{name}.{size.id}"] = (size.agendas, value[size.id])
        elif name == "agendas_per_battle":
            changed[name] = (sorted({s.agendas for s in before.battle_sizes}), value)
        elif name == "organizer_results_need_confirmation":
            changed[name] = (campaign.organizer_results_need_confirmation, value)
        else:
            changed[name] = (getattr(before.numbers, name), value)
    return changed


def content_names(pack: packs.RulePack) -> dict[str, list[str]]:
    return {
        "agendas": [a.name for a in pack.agendas],
        "requisitions": [r.name for r in pack.requisitions],
        "relics": [r.name for r in pack.relics],
        "missions": [m.name for m in pack.missions],
        "battle_traits": [e.name for e in pack.battle_traits],
        "psychic_fortitudes": [e.name for e in pack.psychic_fortitudes],
        "battle_scars": [e.name for e in pack.battle_scars],
        "weapon_enhancements": [e.name for e in pack.weapon_enhancements],
        "counters": [c.name for c in pack.counters],
        "triggers": [t.name for t in pack.triggers],
        "thresholds": [t.name for t in pack.thresholds],
        "tables": [t.name for t in pack.tables],
        "quests": [q.name for q in pack.quests],
        "warlord_traits": [t.name for t in pack.warlord_traits],
    }


def withdrawn_names(pack: packs.RulePack, book: Rulebook) -> dict[str, list[str]]:
    """The names of the core entries ``pack`` withdraws (``book`` holds them all)."""
    withdraw = pack.core.withdraw
    return {
        "agendas": [book.agenda(a).name for a in withdraw.agendas],
        "requisitions": [book.requisition(r).name for r in withdraw.requisitions],
        "relics": [book.honours.relic(r).name for r in withdraw.relics],
    }


def _removed(old: packs.RulePack, new: packs.RulePack) -> dict[str, list[str]]:
    was, now = content_names(old), content_names(new)
    return {kind: [n for n in names if n not in now[kind]] for kind, names in was.items()}


def _missions_in_use(
    session: Session, campaign_id: int, old: packs.RulePack, *, keep: set[str]
) -> DomainError | None:
    """A battle keeps the mission it was fought on (its page, its revert, its victor bonus
    read it), so a pack's mission a battle used cannot go, even when asked to."""
    gone = {m.id: m.name for m in old.missions if m.id not in keep}
    if not gone:
        return None
    used = session.exec(
        select(Battle.id, Battle.mission)
        .where(Battle.campaign_id == campaign_id, col(Battle.mission).in_(list(gone)))
        .order_by(col(Battle.id))
        .limit(1)
    ).first()
    if used is None:
        return None
    return DomainError(
        "rule_pack_mission_in_use",
        f"Battle {used[0]} was fought on {gone[used[1]]}, a mission of {old.name}: a "
        "mission a battle used stays attached (keep it in the new version).",
        status=409,
    )


def _breaks(
    session: Session, campaign_id: int, removed: dict[str, list[str]], old: packs.RulePack
) -> list[str]:
    """What in the campaign uses content that would be gone: relics, pack honours and
    scars on cards, counters with a value on a force or card."""
    relic_ids = {r.id for r in old.relics if r.name in removed.get("relics", [])}
    for kind, entries in (
        ("battle_traits", old.battle_traits),
        ("psychic_fortitudes", old.psychic_fortitudes),
        ("weapon_enhancements", old.weapon_enhancements),
    ):  # honours held by cards: kept on the cards, shown as from a detached pack
        relic_ids |= {e.id for e in entries if e.name in removed.get(kind, [])}
    counter_ids = {c.id for c in old.counters if c.name in removed.get("counters", [])}
    # a quest begun (issue 38): its state is kept among the holder's counters
    counter_ids |= {
        quests.status_key(q.id) for q in old.quests if q.name in removed.get("quests", [])
    }
    scar_ids = {e.id for e in old.battle_scars if e.name in removed.get("battle_scars", [])}
    if not relic_ids and not counter_ids and not scar_ids:
        return []
    found: list[str] = []
    forces = session.exec(select(Force).where(Force.campaign_id == campaign_id)).all()
    for force in forces:
        found += [f"{force.name} has {k}" for k in sorted(set(force.counters) & counter_ids)]
    cards = session.exec(
        select(Card)
        .join(Force, col(Force.id) == col(Card.force_id))
        .where(Force.campaign_id == campaign_id, Card.removed == False)  # noqa: E712
    ).all()
    for card in cards:
        held = {i for h in card.honours for i in h.get("entry_ids", [])} & relic_ids
        held |= set(card.counters) & counter_ids
        held |= {s.get("entry_id") for s in card.scars} & scar_ids
        found += [f"{card.name} has {k}" for k in sorted(held)]
    return found


def _rules_changed(session: Session, campaign_id: int, before: Rulebook) -> None:
    """The campaign plays by other rules now: forget its rulebook, and raise every force's
    version, so an Order of Battle cached under the old rules is never served again. What
    armies are measured in (Power Rating or points) changes only before the first force:
    Supply Limits and their increases have no exact conversion (ruling 57)."""
    rulebooks.forget(session)
    now = campaign_book(session, campaign_id).numbers.muster_by
    rows = active_packs(session, campaign_id)
    in_play = [packs.RulePack.model_validate(r.document) for r in rows]
    refusal = _supply_measure(in_play, now) or _muster_changed(
        session, campaign_id, before.numbers.muster_by, now
    )
    if refusal is not None:
        raise refusal
    session.execute(
        update(Force).where(col(Force.campaign_id) == campaign_id).values(version=Force.version + 1)
    )


_MEASURE = {"power_level": "Power Rating", "points": "points"}


def _muster_changed(session: Session, campaign_id: int, was: str, now: str) -> DomainError | None:
    if now == was:
        return None
    first = session.exec(select(Force.id).where(Force.campaign_id == campaign_id)).first()
    if first is None:
        return None
    return DomainError(
        "rule_pack_changes_muster",
        f"That would muster armies by {_MEASURE[now]} instead of {_MEASURE[was]} in a "
        "campaign that already has forces: their Supply Limits are counted in the old "
        "measure. Choose how armies are measured before the first force is created.",
        status=409,
        field="settings.muster_by",
    )


def _supply_measure(in_play: list[packs.RulePack], now: str) -> DomainError | None:
    """A pack's Supply Limit numbers are in the measure it declares (Power Rating unless it
    says ``muster_by: points``): they must be the campaign's measure (ruling 57)."""
    for pack in in_play:
        settings = pack.settings
        gives = settings.starting_supply_limit, settings.supply_limit_increase
        measure = settings.muster_by or "power_level"
        if any(n is not None for n in gives) and measure != now:
            return DomainError(
                "rule_pack_supply_measure",
                f"{pack.name} gives the Supply Limit in {_MEASURE[measure]}, but this campaign "
                f"would muster armies by {_MEASURE[now]}: its numbers would be read in the "
                "wrong measure. Attach a version of it that says muster_by, or leave it out.",
                status=409,
                field="settings.starting_supply_limit",
            )
    return None
