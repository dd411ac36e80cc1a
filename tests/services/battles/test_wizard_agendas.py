"""The battle wizard offers an Agenda tally only to units that can score it."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from app.rules.data import rulebook
from app.rules.errors import RuleError
from app.services.battles import wizard
from app.services.forces import forces
from tests.services.battles.test_wizard import world


def test_tally_offered_and_accepted_only_where_the_unit_can_score(session: Session) -> None:
    w = world(session)
    tank = forces.add_card(
        session,
        force_id=w["mine"].id,
        name="Predator",
        power_rating=5,
        keywords=["IMPERIUM", "VEHICLE"],
    )
    squad = forces.add_card(
        session,
        force_id=w["mine"].id,
        name="Tactical",
        power_rating=5,
        keywords=["IMPERIUM", "INFANTRY"],
    )
    draft = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    data = wizard.data(draft)
    data["setup"].update(
        force_id=w["mine"].id,
        opponent_id=w["theirs"].id,
        battle_size="combat_patrol",
        mission="supply_drop",
        role="attacker",
        agendas=[["secure_the_area"], ["reaper"]],
    )
    wizard.check_setup(session, draft, data, user=w["ruby"])
    data["rosters"] = [[tank.id, squad.id], w["cards"][2:]]
    wizard.muster(session, draft, data)
    agendas = wizard.tally_agendas(["secure_the_area"], rulebook())
    assert wizard.scorable(agendas, tank, rulebook()) == []
    assert [a.id for a in wizard.scorable(agendas, squad, rulebook())] == ["secure_the_area"]
    assert wizard.bump(session, draft, data, f"{squad.id}:agenda.secure_the_area:+1")[2] == 1
    with pytest.raises(RuleError) as refused:
        wizard.bump(session, draft, data, f"{tank.id}:agenda.secure_the_area:+1")
    assert refused.value.code == "agenda_unit_ineligible"
    assert "INFANTRY" in refused.value.message
    assert wizard.unit_state(wizard.data(draft), tank.id)["agenda_tallies"] == {}
