"""Totals kept up to date in the transaction that moves them, so standings, the progress
chart and a card's battle list never re-read the campaign's history (STYLE.md, 13).

- ``ForceStanding``: each force's live Crusade points, supply used, unit count and XP are
  moved by a ``before_flush`` hook by the difference each new or changed card makes, so
  every path that writes a card (battles, decisions, requisitions, reverts, imports) keeps
  them without knowing about them; wins, draws and losses move when a battle is recorded or
  reverted (``record`` / ``unrecord``).
- ``SideTotals``: a force's totals just before each resolved battle (``record``).
- ``CardBattle``: the units on each battle's roster, from muster until a revert.

The card hooks are switched on by ``install_kept_totals()``, which every entry point that
writes calls (create_app, the CLI, the tests, the bench scripts): see there.

``rebuild`` recomputes all of them from the cards and battles with plain SQL (the migration
that introduced them calls it too) and ``differences`` lists where stored and recomputed
disagree (`crusade totals check`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from types import SimpleNamespace
from typing import Any, cast

from sqlalchemy import (
    Connection,
    Select,
    Table,
    bindparam,
    delete,
    event,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified
from sqlmodel import col

from app.db.models import Battle, BattleSide, Card, CardBattle, ForceStanding, SideTotals
from app.services.forces.card_battles import card_line
from app.services.forces.convert import card_value

# The card columns a Crusade card's value is built from (named, so the rebuild reads
# exactly these whatever later migrations add).
CARD_COLUMNS = (
    "id",
    "force_id",
    "name",
    "power_rating",
    "keywords",
    "battlefield_role",
    "champion",
    "named_character",
    "wargear",
    "psychic_powers",
    "narrative",
    "xp",
    "rank",
    "honours",
    "scars",
    "upgrades",
    "battles_played",
    "battles_survived",
    "destroyed_psychic",
    "destroyed_ranged",
    "destroyed_melee",
    "marked_for_greatness",
    "removed",
)
CARD_DEFAULTS: dict[str, Any] = {
    "keywords": [],
    "battlefield_role": "",
    "champion": None,
    "named_character": False,
    "wargear": "",
    "psychic_powers": "",
    "narrative": "",
    "honours": [],
    "scars": [],
    "upgrades": [],
    "battles_played": 0,
    "battles_survived": 0,
    "destroyed_psychic": 0,
    "destroyed_ranged": 0,
    "destroyed_melee": 0,
    "marked_for_greatness": 0,
    "removed": False,
}
STANDING_FIELDS = ("crusade_points", "supply_used", "units", "xp", "wins", "draws", "losses")


# --- kept at every flush -------------------------------------------------------------------


def _counted(state: Mapping[str, Any] | Any) -> tuple[int, int, int, int]:
    """What one card adds to its force's totals: Crusade points, supply, 1 unit, XP."""
    # A card's label as part of a split unit and its counters count for nothing here (and
    # their columns are newer than some rebuilds that call this).
    card = (
        state
        if not isinstance(state, Mapping)
        else SimpleNamespace(**{"split_unit": None, "counters": {}, **state})
    )
    if card.removed:
        return (0, 0, 0, 0)
    value = card_value(cast(Card, card))
    return (value.crusade_points, card.power_rating, 1, value.xp)


# What a card counted for when it was loaded (or last flushed), kept on its ORM state: the
# ORM's own "previous values" are not always known (an attribute set before it was ever
# loaded has none), and these must be exact. Only references are kept: JSON lists are
# replaced, never changed in place, so they still hold the old values.
AS_LOADED = "totals_as_loaded"


def _remember(row: Card) -> None:
    inspect(row).info[AS_LOADED] = _now(row)


def _loaded(row: Card, _context: Any) -> None:
    _remember(row)


def _refreshed(row: Card, _context: Any, attrs: Any) -> None:
    if attrs is None or not set(attrs).isdisjoint(CARD_COLUMNS):
        _remember(row)


def _before(row: Card) -> Mapping[str, Any]:
    """The card as the database holds it now (before this flush writes it)."""
    return cast(Mapping[str, Any], inspect(row).info[AS_LOADED])


def _now(row: Card) -> Mapping[str, Any]:
    values = row.__dict__
    try:  # every column loaded or set: a card read whole (each one a resolution reads)
        return dict(zip(CARD_COLUMNS, _CARD_VALUES(values), strict=True))
    except KeyError:  # a column neither loaded nor set: its default
        return {name: values.get(name, CARD_DEFAULTS.get(name)) for name in CARD_COLUMNS}


_CARD_VALUES = itemgetter(*CARD_COLUMNS)


def standing_of(session: Session, force_id: int, campaign_id: int | None = None) -> ForceStanding:
    """The force's line, locked for the rest of a writing transaction when first read
    (PostgreSQL: FOR UPDATE), so two commands on one force never lose each other's change;
    later calls get the same object, with the changes not yet flushed."""
    held = _lines_held(session)
    known = held.get(force_id)
    if known is None or known not in session:  # (a line added in a savepoint rolled back)
        known = session.identity_map.get(session.identity_key(ForceStanding, force_id))
    writes = bool(session.info.get("writes"))
    row = known or session.get(ForceStanding, force_id, with_for_update=writes or None)
    if row is None:
        if campaign_id is None:
            from app.db.models import Force  # only here: a force without a line yet

            force = session.get(Force, force_id)
            assert force is not None
            campaign_id = force.campaign_id
        row = ForceStanding(force_id=force_id, campaign_id=campaign_id)
        session.add(row)
    held[force_id] = row
    return row


def hold_lines(session: Session, force_ids: list[int]) -> None:
    """Read (and lock, as ``standing_of`` does) several forces' lines in one statement, in
    force id order, and hold them for ``standing_of`` (a battle's two sides, issue 41)."""
    held = _lines_held(session)
    wanted = sorted(f for f in force_ids if held.get(f) is None or held[f] not in session)
    if not wanted:
        return
    query = select(ForceStanding).where(col(ForceStanding.force_id).in_(wanted))
    query = query.order_by(col(ForceStanding.force_id))
    if session.info.get("writes"):
        query = query.with_for_update()
    for row in session.scalars(query):
        held[row.force_id] = row


_HELD = "totals.lines_held"


def _lines_held(session: Session) -> dict[int, ForceStanding]:
    """The lines read in the current transaction, held so the identity map (which keeps
    objects only while something refers to them) does not drop one after a flush and make
    the next call read and lock it again."""
    transaction = session.get_transaction()
    kept = session.info.get(_HELD)
    if kept is None or kept[0] is not transaction:
        kept = (transaction, {})
        session.info[_HELD] = kept
    return cast(dict[int, ForceStanding], kept[1])


def _move_force_totals(session: Session, _context: Any, _instances: Any) -> None:
    """Each new, changed or deleted card moves its force's line by the difference it makes."""
    changes: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in session.new:
        if isinstance(row, Card):
            _add(changes[row.force_id], _counted(_now(row)), 1)
            _remember(row)
    for row in session.dirty:
        if isinstance(row, Card) and session.is_modified(row):
            _add(changes[row.force_id], _moved(_before(row), _now(row)), 1)
            _remember(row)
    for row in session.deleted:
        if isinstance(row, Card):
            _add(changes[row.force_id], _counted(_before(row)), -1)
    for force_id, (points, supply, units, xp) in changes.items():
        if points or supply or units or xp:
            line = standing_of(session, force_id)
            line.crusade_points += points
            line.supply_used += supply
            line.units += units
            line.xp += xp


# What a card's Crusade points are worked out from (CrusadeCard.crusade_points).
POINTS_FROM = ("honours", "upgrades", "scars")


def _moved(before: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """What a changed card moves its force's totals by. A battle changes most of its units'
    XP and tallies but rarely what their Crusade points come from: then the points stand,
    and the card's rules value (about 15 µs, twice per unit of a resolution) is not built."""
    kept = not before["removed"] and not now["removed"]
    if kept and all(before[name] == now[name] for name in POINTS_FROM):
        return (0, now["power_rating"] - before["power_rating"], 0, now["xp"] - before["xp"])
    was, is_now = _counted(before), _counted(now)
    return (is_now[0] - was[0], is_now[1] - was[1], is_now[2] - was[2], is_now[3] - was[3])


def _add(total: list[int], part: tuple[int, int, int, int], sign: int) -> None:
    for index, value in enumerate(part):
        total[index] += sign * value


# The hooks, switched on by name where the process is assembled: create_app(), the CLI, the
# tests' conftest and the bench scripts call install_kept_totals() before they write. Never
# by an import's side effect: a script that forgot it would write cards and leave every
# standings line behind, so each entry point says it in one line that can be read.
_HOOKS = (
    (Card, "load", _loaded),
    (Card, "refresh", _refreshed),
    (Session, "before_flush", _move_force_totals),
)


def install_kept_totals() -> None:
    """From now on, in every Session of this process, each card written moves its force's
    standings line in the same flush. Idempotent: a second call adds nothing."""
    for target, name, hook in _HOOKS:
        if not event.contains(target, name, hook):
            event.listen(target, name, hook)


def kept_totals_installed() -> bool:
    """Whether install_kept_totals() has run in this process."""
    return all(event.contains(target, name, hook) for target, name, hook in _HOOKS)


# --- kept by the battle flow -----------------------------------------------------------------


def mustered(session: Session, battle: Battle, sides: Iterable[BattleSide]) -> None:
    """The units on each roster now list the battle."""
    assert battle.id is not None
    session.add_all(
        CardBattle(card_id=card_id, battle_id=battle.id, force_id=side.force_id)
        for side in sides
        for card_id in side.roster
    )


def record(
    session: Session, battle: Battle, side: BattleSide, before: tuple[int, int], won: bool
) -> None:
    """A side's result: its force's record moves, and its totals before the battle are kept
    for the progress chart."""
    assert battle.id is not None
    line = standing_of(session, side.force_id, battle.campaign_id)
    if won:
        line.wins += 1
    elif battle.outcome == "draw":
        line.draws += 1
    else:
        line.losses += 1
    # Both sides' lines write every number, so the flush sends them as one executemany
    # UPDATE (the ORM sends one per set of changed columns: wins on one, losses on the other)
    for name in STANDING_FIELDS:
        flag_modified(line, name)
    session.add(
        SideTotals(
            battle_id=battle.id,
            force_id=side.force_id,
            campaign_id=battle.campaign_id,
            crusade_points=before[0],
            xp=before[1],
        )
    )


def lines(session: Session, battle: Battle, sides: Iterable[BattleSide]) -> None:
    """Each rostered unit's line of a recorded battle (card_battles.card_line) goes on its
    battle-list row: one executemany UPDATE for both sides."""
    table = _table(CardBattle)
    values = [
        {"b": battle.id, "c": int(card_id), "l": card_line(side.report, int(card_id))}
        for side in sides
        for card_id in side.roster
    ]
    if values:
        session.execute(
            update(table)
            .where(table.c.battle_id == bindparam("b"), table.c.card_id == bindparam("c"))
            .values(line=bindparam("l", type_=table.c.line.type)),
            values,
        )


def unrecord(session: Session, battle: Battle, sides: Iterable[BattleSide]) -> None:
    """A resolved battle reverted: its sides' results come off their forces' records."""
    for side in sides:
        line = standing_of(session, side.force_id, battle.campaign_id)
        if side.won:
            line.wins -= 1
        elif battle.outcome == "draw":
            line.draws -= 1
        else:
            line.losses -= 1
    session.execute(delete(SideTotals).where(SideTotals.battle_id == battle.id))  # type: ignore[arg-type]


def undone(session: Session, battle: Battle) -> None:
    """A battle reverted or called off leaves its units' battle lists."""
    session.execute(delete(CardBattle).where(CardBattle.battle_id == battle.id))  # type: ignore[arg-type]


# --- rebuilt from scratch ----------------------------------------------------------------


@dataclass
class Recomputed:
    standings: dict[int, dict[str, int]] = field(default_factory=dict)
    sides: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)
    # (card, battle, force) -> the unit's line (card_battles.card_line), None before a result
    card_battles: dict[tuple[int, int, int], dict[str, Any] | None] = field(default_factory=dict)


def _table(model: Any) -> Table:
    return cast(Table, model.__table__)


def recompute(connection: Connection, campaign_id: int | None = None) -> Recomputed:
    """Every total (of one campaign, or all), from the cards and the battles as they stand."""
    card, force = _table(Card), _table(SideTotals).metadata.tables["force"]
    battle, side = _table(Battle), _table(BattleSide)
    forces = select(force.c.id, force.c.campaign_id)
    battles = select(battle.c.id)
    if campaign_id is not None:
        forces = forces.where(force.c.campaign_id == campaign_id)
        battles = battles.where(battle.c.campaign_id == campaign_id)
    result = Recomputed()
    for force_id, campaign in connection.execute(forces):
        result.standings[force_id] = {"campaign_id": campaign, **dict.fromkeys(STANDING_FIELDS, 0)}
    columns = [card.c[name] for name in CARD_COLUMNS]
    live = select(*columns).where(
        card.c.removed.is_(False), card.c.force_id.in_(forces.with_only_columns(force.c.id))
    )
    for row in connection.execute(live):
        points, supply, units, xp = _counted(dict(row._mapping))
        line = result.standings[row.force_id]
        line["crusade_points"] += points
        line["supply_used"] += supply
        line["units"] += units
        line["xp"] += xp
    played = (
        select(side.c.force_id, side.c.won, battle.c.outcome)
        .join(battle, battle.c.id == side.c.battle_id)
        .where(battle.c.status == "resolved", battle.c.id.in_(battles))
    )
    for force_id, won, outcome in connection.execute(played):
        key = "wins" if won else "draws" if outcome == "draw" else "losses"
        result.standings[force_id][key] += 1
    for battle_id, force_id, campaign, snapshot in _snapshots(connection, battles):
        points, xp = _snapshot_totals(force_id, snapshot)
        result.sides[(battle_id, force_id)] = {
            "campaign_id": campaign,
            "crusade_points": points,
            "xp": xp,
        }
    for battle_id, force_id, card_id, unit_line in _rosters(connection, battles):
        result.card_battles[(card_id, battle_id, force_id)] = unit_line
    return result


def _rosters(
    connection: Connection, battles: Select[Any]
) -> Iterator[tuple[int, int, int, dict[str, Any] | None]]:
    """Each unit on the roster of a battle not reverted, with its line (from its side's
    report once the result is recorded)."""
    battle, side = _table(Battle), _table(BattleSide)
    query = (
        select(side.c.battle_id, side.c.force_id, side.c.roster, battle.c.status, side.c.report)
        .join(battle, battle.c.id == side.c.battle_id)
        .where(battle.c.status != "reverted", battle.c.id.in_(battles))
        .execution_options(yield_per=200)
    )
    for battle_id, force_id, roster, status, report in connection.execute(query):
        for card in roster or []:
            line = card_line(report, int(card)) if status == "resolved" else None
            yield battle_id, force_id, int(card), line


def fill_lines(connection: Connection) -> None:
    """Give every kept battle-list row its unit's line (migration 0014)."""
    table = _table(CardBattle)
    battles = select(_table(Battle).c.id)
    values = [
        {"b": b, "c": c, "l": line}
        for b, _force, c, line in _rosters(connection, battles)
        if line is not None
    ]
    for start in range(0, len(values), 1000):
        connection.execute(
            update(table)
            .where(table.c.battle_id == bindparam("b"), table.c.card_id == bindparam("c"))
            .values(line=bindparam("l", type_=table.c.line.type)),
            values[start : start + 1000],
        )


def _snapshots(
    connection: Connection, battles: Select[Any]
) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """Each resolved side's snapshot (the force just before the battle), a few at a time:
    they are the largest values in the database."""
    battle, side = _table(Battle), _table(BattleSide)
    query = (
        select(side.c.battle_id, side.c.force_id, battle.c.campaign_id, side.c.snapshot)
        .join(battle, battle.c.id == side.c.battle_id)
        .where(battle.c.status == "resolved", battle.c.id.in_(battles))
        .execution_options(yield_per=50)
    )
    for row in connection.execute(query):
        yield row.battle_id, row.force_id, row.campaign_id, row.snapshot or {}


def _snapshot_totals(force_id: int, snapshot: Mapping[str, Any]) -> tuple[int, int]:
    kept = snapshot.get("totals")
    if kept is not None:  # a snapshot of the roster's units only names the force's totals
        return int(kept["crusade_points"]), int(kept["xp"])
    points = xp = 0  # an older snapshot held every unit of the force
    for card_id, state in (snapshot.get("cards") or {}).items():
        known = {k: v for k, v in state.items() if k in CARD_DEFAULTS or k in CARD_COLUMNS}
        card = {**CARD_DEFAULTS, **known, "id": int(card_id), "force_id": force_id}
        counted = _counted(card)
        points += counted[0]
        xp += counted[3]
    return points, xp


def snapshot_totals(force_id: int, snapshot: Mapping[str, Any]) -> tuple[int, int]:
    """Crusade points and XP of the force a battle snapshot recorded."""
    return _snapshot_totals(force_id, snapshot)


def rebuild(connection: Connection, campaign_id: int | None = None) -> Recomputed:
    """Replace every stored total (of one campaign, or all) with the recomputed one."""
    fresh = recompute(connection, campaign_id)
    for model in (ForceStanding, SideTotals, CardBattle):
        table = _table(model)
        if campaign_id is None:
            connection.execute(delete(table))
        elif model is CardBattle:
            battles = select(_table(Battle).c.id).where(_table(Battle).c.campaign_id == campaign_id)
            connection.execute(delete(table).where(table.c.battle_id.in_(battles)))
        else:
            connection.execute(delete(table).where(table.c.campaign_id == campaign_id))
    if fresh.standings:
        connection.execute(
            insert(_table(ForceStanding)),
            [{"force_id": f, **line} for f, line in fresh.standings.items()],
        )
    if fresh.sides:
        connection.execute(
            insert(_table(SideTotals)),
            [{"battle_id": b, "force_id": f, **line} for (b, f), line in fresh.sides.items()],
        )
    if fresh.card_battles:
        # Migration 0011 runs this before 0014 added the lines.
        lined = "line" in {c["name"] for c in inspect(connection).get_columns("card_battle")}
        connection.execute(
            insert(_table(CardBattle)),
            [
                {"card_id": c, "battle_id": b, "force_id": f, **({"line": line} if lined else {})}
                for (c, b, f), line in fresh.card_battles.items()
            ],
        )
    return fresh


def differences(connection: Connection) -> list[str]:
    """Where the stored totals and the recomputed ones disagree, in words (empty: none)."""
    fresh = recompute(connection)
    found: list[str] = []
    stored_lines = {
        row.force_id: {
            "campaign_id": row.campaign_id,
            **{k: row._mapping[k] for k in STANDING_FIELDS},
        }
        for row in connection.execute(select(_table(ForceStanding)))
    }
    for force_id in sorted(set(stored_lines) | set(fresh.standings)):
        want, have = fresh.standings.get(force_id), stored_lines.get(force_id)
        if want != have and not (have is None and want and _empty(want)):
            found.append(f"force {force_id}: stored {have}, recomputed {want}")
    stored_sides = {
        (row.battle_id, row.force_id): {
            "campaign_id": row.campaign_id,
            "crusade_points": row.crusade_points,
            "xp": row.xp,
        }
        for row in connection.execute(select(_table(SideTotals)))
    }
    for key in sorted(set(stored_sides) | set(fresh.sides)):
        if stored_sides.get(key) != fresh.sides.get(key):
            found.append(
                f"battle {key[0]}, force {key[1]}: stored {stored_sides.get(key)}, "
                f"recomputed {fresh.sides.get(key)}"
            )
    stored_cards = {
        (row.card_id, row.battle_id, row.force_id): row.line
        for row in connection.execute(select(_table(CardBattle)))
    }
    for entry in sorted(set(stored_cards) ^ set(fresh.card_battles)):
        listed = "listed but not on its roster" if entry in stored_cards else "missing"
        found.append(f"card {entry[0]} in battle {entry[1]}: {listed}")
    for entry in sorted(set(stored_cards) & set(fresh.card_battles)):
        if stored_cards[entry] != fresh.card_battles[entry]:
            found.append(
                f"card {entry[0]} in battle {entry[1]}: line stored {stored_cards[entry]}, "
                f"recomputed {fresh.card_battles[entry]}"
            )
    return found


def _empty(line: Mapping[str, int]) -> bool:
    return all(line[k] == 0 for k in STANDING_FIELDS)
