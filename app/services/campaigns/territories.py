"""The campaign map (issue 23): an organizer draws it as named territories with neighbours
and a bonus; a battle may be fought over one; its winner takes it (rulings 53 and 54)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, func, select

from app.db.models import Battle, BattleSide, Force, Territory
from app.errors import DomainError, NotFound
from app.rules import territories as rules
from app.rules.errors import RuleError
from app.services.feed import history

MAX_TERRITORIES = 200


@dataclass(frozen=True)
class TerritoryChange:
    """What an organizer sends; None leaves a field as it is (on an edit)."""

    name: str | None = None
    description: str | None = None
    neighbours: Sequence[int] | None = None
    bonus: str | None = None
    holder_force_id: int | None = None
    clear_holder: bool = False


def map_of(session: Session, campaign_id: int) -> list[Territory]:
    return list(
        session.exec(
            select(Territory)
            .where(Territory.campaign_id == campaign_id)
            .order_by(col(Territory.id))
        )
    )


def get_territory(session: Session, campaign_id: int, territory_id: int) -> Territory:
    row = session.get(Territory, territory_id)
    if row is None or row.campaign_id != campaign_id:
        raise NotFound(
            "territory_not_found", f"Campaign {campaign_id} has no territory {territory_id}."
        )
    return row


def create(session: Session, *, campaign_id: int, change: TerritoryChange) -> Territory:
    if len(map_of(session, campaign_id)) >= MAX_TERRITORIES:
        raise DomainError(
            "territory_limit", f"A map holds {MAX_TERRITORIES} territories at most.", status=409
        )
    row = Territory(campaign_id=campaign_id, name="")
    return _apply(session, row, change, new=True)


def edit(
    session: Session, *, campaign_id: int, territory_id: int, change: TerritoryChange
) -> Territory:
    return _apply(session, get_territory(session, campaign_id, territory_id), change)


def delete(session: Session, *, campaign_id: int, territory_id: int) -> Territory:
    row = get_territory(session, campaign_id, territory_id)
    fought = session.exec(select(Battle.id).where(Battle.territory_id == territory_id)).first()
    if fought is not None:
        raise DomainError(
            "territory_in_use",
            f"Battle {fought} was fought over {row.name}; a territory with a history stays.",
            status=409,
        )
    for other in map_of(session, campaign_id):
        if territory_id in other.neighbours:
            other.neighbours = [n for n in other.neighbours if n != territory_id]
            session.add(other)
    session.delete(row)
    session.flush()
    return row


def _apply(
    session: Session, row: Territory, change: TerritoryChange, new: bool = False
) -> Territory:
    if change.name is not None:
        if not change.name.strip():
            raise RuleError("territory_name_required", "A territory needs a name.", field="name")
        row.name = change.name.strip()
    elif new:
        raise RuleError("territory_name_required", "A territory needs a name.", field="name")
    if change.description is not None:
        row.description = change.description.strip()
    if change.bonus is not None:
        try:
            row.bonus = rules.TerritoryBonus(change.bonus).value
        except ValueError:
            names = ", ".join(b.value for b in rules.TerritoryBonus)
            raise RuleError(
                "territory_bonus_unknown", f"bonus is one of {names}.", field="bonus"
            ) from None
    if change.clear_holder:
        row.holder_force_id = None
    elif change.holder_force_id is not None:
        force = session.get(Force, change.holder_force_id)
        if force is None or force.campaign_id != row.campaign_id:
            raise RuleError(
                "force_not_in_campaign",
                f"Force {change.holder_force_id} is not in this campaign.",
                field="holder_force_id",
            )
        row.holder_force_id = force.id
    session.add(row)
    session.flush()
    if change.neighbours is not None:
        _link(session, row, list(dict.fromkeys(change.neighbours)))
    return row


def _link(session: Session, row: Territory, wanted: list[int]) -> None:
    """Neighbours both ways: naming B as A's neighbour makes A B's too, and dropping it
    drops both links."""
    others = {t.id: t for t in map_of(session, row.campaign_id) if t.id != row.id}
    unknown = [n for n in wanted if n not in others]
    if unknown:
        raise RuleError(
            "territory_not_found",
            f"neighbours: territory {unknown[0]} is not on this campaign's map.",
            field="neighbours",
        )
    assert row.id is not None
    row.neighbours = sorted(wanted)
    for other_id, other in others.items():
        linked = row.id in other.neighbours
        if (other_id in wanted) != linked:
            other.neighbours = sorted(
                [*other.neighbours, row.id]
                if not linked
                else [n for n in other.neighbours if n != row.id]
            )
            session.add(other)
    session.add(row)
    session.flush()


# --- battles over a territory -------------------------------------------------------------


def check_muster(session: Session, *, campaign_id: int, territory_id: int | None) -> None:
    if territory_id is not None:
        get_territory(session, campaign_id, territory_id)


def bonus_rp(session: Session, battle: Battle, force_id: int) -> int:
    """The extra RP the force earns from this battle: territories with the bonus it holds
    as the battle is recorded, before this battle changes any hands (ruling 54)."""
    return bonus_rps(session, battle, [force_id])[force_id]


def bonus_rps(session: Session, battle: Battle, force_ids: list[int]) -> dict[int, int]:
    """``bonus_rp`` of each force, the map read once (a battle's two sides, issue 41)."""
    held = [
        rules.Territory(
            str(t.id),
            t.name,
            str(t.holder_force_id) if t.holder_force_id else None,
            rules.TerritoryBonus(t.bonus),
        )
        for t in map_of(session, battle.campaign_id)
    ]
    return {f: rules.bonus_requisition_points(held, str(f)) for f in force_ids}


def after_result(session: Session, battle: Battle, sides: list[BattleSide]) -> None:
    """The winner takes the territory fought over (or keeps it); a draw changes nothing.
    The holder before is kept on the battle for a revert."""
    if battle.territory_id is None:
        return
    row = session.get(Territory, battle.territory_id)
    if row is None:
        return
    winner = next((s.force_id for s in sides if s.won), None)
    battle.territory_holder_before = row.holder_force_id
    holder = rules.holder_after(
        rules.Territory(str(row.id), row.name, str(row.holder_force_id or "") or None),
        winner=str(winner) if winner is not None else None,
    )
    row.holder_force_id = int(holder) if holder else None
    session.add_all([row, battle])
    if row.holder_force_id != battle.territory_holder_before:
        history.record(
            session,
            campaign_id=battle.campaign_id,
            battle_id=battle.id,
            force_id=row.holder_force_id,
            kind="territory_taken",
            territory=row.name,
        )


def check_revert(session: Session, battle: Battle) -> None:
    """A revert puts the territory back exactly, so it waits while a later battle was
    recorded over the same territory."""
    if battle.territory_id is None:
        return
    later = session.exec(
        select(Battle.id).where(
            Battle.territory_id == battle.territory_id,
            col(Battle.id) > (battle.id or 0),
            Battle.status == "resolved",
        )
    ).first()
    if later is not None:
        raise DomainError(
            "battle_revert_blocked",
            f"Battle {later} was fought over the same territory since; revert it first.",
            status=409,
        )


def undo_result(session: Session, battle: Battle) -> None:
    if battle.territory_id is None:
        return
    row = session.get(Territory, battle.territory_id)
    if row is not None:
        row.holder_force_id = battle.territory_holder_before
        session.add(row)


# --- the map page ---------------------------------------------------------------------------

# Holders are told apart by a colour (app.css: .tone-0 ... .tone-7, each dark enough to carry
# a white letter, in light and dark mode) and by the letter in their mark.
HOLDER_TONES = 8


@dataclass(frozen=True)
class Holder:
    force_id: int
    name: str
    mark: str  # A, B, ... drawn in the territory
    tone: int  # its colour
    held: int


@dataclass(frozen=True)
class FoughtOver:
    battle_id: int
    resolved_at: str
    winner_force_id: int | None


@dataclass(frozen=True)
class MapView:
    territories: list[Territory]
    placed: dict[int, rules.Placed]
    holders: dict[int, Holder]  # by force id
    battles: dict[int, list[FoughtOver]]  # by territory id, latest first
    width: float
    height: float


def map_view(session: Session, campaign_id: int, force_names: dict[int, str]) -> MapView:
    """Everything the map page draws, in three queries."""
    places = map_of(session, campaign_id)
    ids = [str(t.id) for t in places]
    links = {str(t.id): [str(n) for n in t.neighbours] for t in places}
    placed = {int(p.id): p for p in rules.layout(ids, links)}
    held: dict[int, int] = {}
    for t in places:
        if t.holder_force_id is not None:
            held[t.holder_force_id] = held.get(t.holder_force_id, 0) + 1
    holders = {
        force_id: Holder(
            force_id,
            force_names.get(force_id, f"Force {force_id}"),
            _mark(n),
            n % HOLDER_TONES,
            held[force_id],
        )
        for n, force_id in enumerate(sorted(held))
    }
    columns = min(rules.COLUMNS, max(1, len(places)))
    rows = -(-len(places) // columns) if places else 0
    return MapView(
        places,
        placed,
        holders,
        _fought_over(session, campaign_id),
        columns * rules.CELL_WIDTH,
        rows * rules.CELL_HEIGHT,
    )


def _mark(n: int) -> str:
    return chr(ord("A") + n % 26) + (str(n // 26) if n >= 26 else "")


def _fought_over(session: Session, campaign_id: int) -> dict[int, list[FoughtOver]]:
    rows = session.exec(
        select(Battle.id, Battle.territory_id, Battle.resolved_at, BattleSide.force_id)
        .outerjoin(
            BattleSide,
            (col(BattleSide.battle_id) == col(Battle.id)) & (col(BattleSide.won) == True),  # noqa: E712
        )
        .where(
            Battle.campaign_id == campaign_id,
            col(Battle.territory_id).is_not(None),
            Battle.status == "resolved",
        )
        .order_by(col(Battle.id).desc())
    ).all()
    found: dict[int, list[FoughtOver]] = {}
    for battle_id, territory_id, resolved_at, winner in rows:
        when = resolved_at.date().isoformat() if resolved_at else ""
        found.setdefault(territory_id or 0, []).append(FoughtOver(battle_id or 0, when, winner))
    return found


def held_by_force(session: Session, campaign_id: int) -> dict[int, int]:
    """How many territories each force holds (the standings' column)."""
    rows = session.exec(
        select(Territory.holder_force_id, func.count())
        .where(Territory.campaign_id == campaign_id, col(Territory.holder_force_id).is_not(None))
        .group_by(col(Territory.holder_force_id))
    ).all()
    return {int(force_id): int(count) for force_id, count in rows if force_id is not None}
