"""A battle's report (issue 23): the story its players tell of it. Either player of the battle
writes and edits it (the route's access rule, BATTLE_PLAY); a unit note may only be about a
unit that was on one of the battle's rosters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlmodel import Session, col, select

from app.db.models import Battle, BattlePhoto, BattleReport, BattleSide, Force, utcnow
from app.errors import DomainError
from app.rules.errors import RuleError
from app.services.battles import lifecycle
from app.services.feed import history

MAX_NOTE = 280  # a line on the unit's Crusade card, not a second narrative
EARLIEST = date(1987, 1, 1)  # no battle of this game was played before it was published


@dataclass(frozen=True)
class Story:
    title: str = ""
    played_on: date | None = None
    location: str = ""
    narrative: str = ""
    unit_notes: Mapping[int, str] | Mapping[str, str] | None = None  # by card id


def get_report(session: Session, battle_id: int) -> BattleReport | None:
    return session.exec(select(BattleReport).where(BattleReport.battle_id == battle_id)).first()


def report_and_photos(
    session: Session, battle_id: int
) -> tuple[BattleReport | None, list[BattlePhoto]]:
    """The battle's report and its photos (oldest first), as a battle's answer and page show
    them, in one statement: a row per photo with the report beside each, or one row with
    neither (issue 50: a statement fewer for every battle answered)."""
    rows = session.exec(
        select(BattleReport, BattlePhoto)
        .select_from(Battle)
        .outerjoin(BattleReport, col(BattleReport.battle_id) == col(Battle.id))
        .outerjoin(BattlePhoto, col(BattlePhoto.battle_id) == col(Battle.id))
        .where(Battle.id == battle_id)
        .order_by(col(BattlePhoto.id))
    ).all()
    report = rows[0][0] if rows else None
    return report, [photo for _report, photo in rows if photo is not None]


def reports_for(session: Session, battle_ids: Iterable[int]) -> dict[int, BattleReport]:
    """The reports of several battles in one query (a page of the battle list)."""
    ids = list(battle_ids)
    if not ids:
        return {}
    rows = session.exec(select(BattleReport).where(col(BattleReport.battle_id).in_(ids)))
    return {row.battle_id: row for row in rows}


def write_report(session: Session, *, battle_id: int, story: Story, by: str) -> BattleReport:
    """Create or replace the battle's report, whole (a PUT)."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    if battle.status in ("reverted", "called_off"):
        raise DomainError(
            "battle_not_reportable",
            f"Battle {battle_id} was {battle.status.replace('_', ' ')}; it has no story to tell.",
            status=409,
        )
    if story.played_on is not None and not EARLIEST <= story.played_on <= date.today():
        raise RuleError(
            "played_on_invalid",
            f"played_on must be a day between {EARLIEST.isoformat()} and today.",
            field="played_on",
        )
    on_rosters = {card_id for side in sides for card_id in side.roster}
    notes = {int(k): v.strip() for k, v in (story.unit_notes or {}).items() if v.strip()}
    strangers = sorted(set(notes) - on_rosters)
    if strangers:
        raise RuleError(
            "unit_not_in_battle",
            f"unit_notes: unit {strangers[0]} was not on either roster of battle {battle_id}.",
            field="unit_notes",
        )
    row = get_report(session, battle_id) or BattleReport(battle_id=battle_id)
    is_new = row.id is None
    row.title = story.title.strip()
    row.played_on = story.played_on
    row.location = story.location.strip()
    row.narrative = story.narrative.strip()
    row.unit_notes = {str(k): v for k, v in sorted(notes.items())}
    row.written_by = by
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    history.record(
        session,
        campaign_id=battle.campaign_id,
        battle_id=battle_id,
        kind="report_written" if is_new else "report_edited",
        title=row.title,
    )
    return row


# --- the story on Discord ---------------------------------------------------------------

STORY_EVENTS = ("report_written", "report_edited", "photo_added")


def discord_embed(session: Session, *, battle_id: int, site: str, public: bool) -> dict[str, Any]:
    """Discord's card for a battle's story: the report's title, the result line, the start
    of the narrative and the first photo. Discord fetches links and images itself, so they
    need the site's public address, and a private campaign's photo is never linked (its
    address would answer Discord with a refusal anyway)."""
    battle = session.get(Battle, battle_id)
    if battle is None:
        return {}
    report = get_report(session, battle_id)
    embed: dict[str, Any] = {
        "title": ((report.title if report else "") or f"Battle {battle_id}")[:256],
        "description": _embed_text(session, battle, report),
    }
    if site:
        embed["url"] = f"{site}/battles/{battle_id}"
    first = session.exec(
        select(BattlePhoto).where(BattlePhoto.battle_id == battle_id).order_by(col(BattlePhoto.id))
    ).first()
    if first is not None and site and public:
        width = max((w for w in first.widths if w <= DISCORD_IMAGE_WIDTH), default=first.widths[0])
        embed["image"] = {"url": f"{site}/api/v1/battles/{battle_id}/photos/{first.id}/{width}"}
    return embed


BATTLE_STANDING = {
    "mustered": "being played, no result yet",
    "proposed": "a result waits for the opponent's confirmation",
    "disputed": "the result is disputed",
    "reverted": "reverted",
    "called_off": "called off",
}
DISCORD_IMAGE_WIDTH = 960  # Discord shows an embed's image at most about 400 px wide
NARRATIVE_EXCERPT = 300


def result_line(session: Session, battle: Battle) -> str:
    """ "Ultramarines 12 – 8 Death Guard: Ultramarines won", or where the battle stands."""
    sides = session.exec(
        select(BattleSide).where(BattleSide.battle_id == battle.id).order_by(col(BattleSide.id))
    ).all()
    if battle.status != "resolved" or len(sides) != 2:
        where = BATTLE_STANDING.get(battle.status, battle.status.replace("_", " "))
        return f"Battle {battle.id}: {where}."
    names = {s.force_id: _force_name(session, s.force_id) for s in sides}
    a, b = sorted(sides, key=lambda s: -(s.victory_points or 0))
    winner = next((names[s.force_id] for s in sides if s.won), None)
    verdict = f"{winner} won" if winner else "a draw"
    return (
        f"{names[a.force_id]} {a.victory_points or 0} – {b.victory_points or 0} "
        f"{names[b.force_id]}: {verdict}"
    )


def _force_name(session: Session, force_id: int) -> str:
    force = session.get(Force, force_id)
    return force.name if force else f"Force {force_id}"


def _embed_text(session: Session, battle: Battle, report: BattleReport | None) -> str:
    text = result_line(session, battle)
    story = report.narrative if report else ""
    if story:
        cut = story if len(story) <= NARRATIVE_EXCERPT else story[:NARRATIVE_EXCERPT].rstrip() + "…"
        text += "\n\n" + cut
    return text[:4096]
