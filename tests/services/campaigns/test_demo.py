"""The demo campaign is played through the services, so its numbers come from the rules."""

from __future__ import annotations

from sqlmodel import Session, select

from app.db.models import Battle, Card, Decision, Force
from app.services.campaigns import demo, standings
from app.services.forces.convert import card_value


def test_demo_loads_four_forces_and_resolved_battles(session: Session) -> None:
    assert demo.is_empty(session)
    campaign = demo.load_demo(session)
    session.flush()
    assert not demo.is_empty(session)
    forces = session.exec(select(Force)).all()
    assert len({f.crusade_faction for f in forces}) == 4
    cards = session.exec(select(Card)).all()
    assert all(sum(c.force_id == f.id for c in cards) >= 8 for f in forces)
    battles = session.exec(select(Battle)).all()
    assert len(battles) == 4 and {b.status for b in battles} == {"resolved"}
    assert session.exec(select(Decision).where(Decision.status == "pending")).all() == []
    assert sum(f.battle_tally for f in forces) == 2 * len(battles)
    assert any(c.xp > 0 for c in cards) and any(c.honours for c in cards)
    never = [c for c in cards if "SWARM" in c.keywords]
    assert never and all(c.xp == 0 for c in never)
    table = standings.standings(session, campaign_id=campaign.id or 0)
    assert sum(s.wins for s in table) + sum(s.draws for s in table) // 2 == len(battles)
    by_force = {
        f.id: sum(card_value(c).crusade_points for c in cards if c.force_id == f.id) for f in forces
    }
    assert {s.force_id: s.crusade_points for s in table} == by_force
