"""A battle's report and photos read together (stories.report_and_photos): one statement,
whichever of them the battle has."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, event
from sqlmodel import Session

from app.db.models import Battle, BattlePhoto, BattleReport, Campaign
from app.services.campaigns import stories


def _battle(session: Session, *, report: str | None, photos: list[str]) -> int:
    campaign = Campaign(name="Vigilus")
    session.add(campaign)
    session.flush()
    battle = Battle(campaign_id=campaign.id or 0, battle_size="incursion", mission="sweep")
    session.add(battle)
    session.flush()
    battle_id = battle.id or 0
    if report is not None:
        session.add(BattleReport(battle_id=battle_id, title=report))
    for caption in photos:
        session.add(BattlePhoto(battle_id=battle_id, width=800, height=600, caption=caption))
        session.flush()  # ids in the order given
    session.commit()
    return battle_id


@pytest.mark.parametrize(
    ("report", "photos"),
    [
        (None, []),
        ("The Fall of Hive Helsreach", []),
        (None, ["dawn"]),
        ("Last Stand", ["a", "b", "c"]),
    ],
)
def test_the_report_and_the_photos_oldest_first_in_one_statement(
    engine: Engine, report: str | None, photos: list[str]
) -> None:
    with Session(engine) as session:
        battle_id = _battle(session, report=report, photos=photos)
        # another battle's story must not show up in this one's
        _battle(session, report="Elsewhere", photos=["elsewhere"])
    statements: list[str] = []
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        with Session(engine) as session:
            found, pictures = stories.report_and_photos(session, battle_id)
            title = found.title if found is not None else None
            captions = [p.caption for p in pictures]
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    assert title == report
    assert captions == photos
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1


def test_a_battle_that_is_not_there_has_neither(engine: Engine) -> None:
    with Session(engine) as session:
        assert stories.report_and_photos(session, 999) == (None, [])
