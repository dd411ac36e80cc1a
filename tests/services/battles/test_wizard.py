"""The battle wizard's saved state: a draft per player and campaign, resumed where it was
left, found only by its owner (or an organizer) in its own campaign."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from app.db.models import User
from app.db.session import session_scope
from app.errors import DomainError, NotFound
from app.rules.data import VictorRole, rulebook
from app.rules.errors import RuleError
from app.services.accounts import accounts
from app.services.battles import lifecycle, wizard
from app.services.battles.lifecycle import SideSetup
from app.services.campaigns import membership
from app.services.forces import forces
from tests.api.test_query_counts import statements


def world(session: Session) -> dict[str, Any]:
    orga = accounts.create_user(session, username="orga", password="a good password")
    ruby = accounts.create_user(session, username="ruby", password="a good password")
    kai = accounts.create_user(session, username="kai", password="a good password")
    campaign = forces.create_campaign(session, name="Vigilus", organizer_id=orga.id)
    other = forces.create_campaign(session, name="Armageddon", organizer_id=orga.id)
    assert campaign.id is not None and other.id is not None
    for user in (ruby, kai):
        membership.add_member(session, campaign_id=campaign.id, user=user, role="player")
    mine = forces.create_force(
        session,
        campaign_id=campaign.id,
        name="Ultramarines",
        crusade_faction="IMPERIUM",
        owner_id=ruby.id,
    )
    theirs = forces.create_force(
        session, campaign_id=campaign.id, name="Orks", crusade_faction="IMPERIUM", owner_id=kai.id
    )
    cards = [
        forces.add_card(session, force_id=f.id or 0, name=n, power_rating=5, keywords=["IMPERIUM"])
        for f, n in ((mine, "Captain"), (mine, "Squad"), (theirs, "Boyz"))
    ]
    session.flush()
    return {
        "orga": orga,
        "ruby": ruby,
        "kai": kai,
        "campaign": campaign.id,
        "other": other.id,
        "mine": mine,
        "theirs": theirs,
        "cards": [c.id for c in cards],
    }


def test_start_then_resume_the_same_draft(engine: Engine) -> None:
    with session_scope(engine) as session:
        w = world(session)
        ruby: User = w["ruby"]
        draft = wizard.start(session, campaign_id=w["campaign"], user_id=ruby.id or 0)
        data = wizard.data(draft)
        data["setup"].update(force_id=w["mine"].id, battle_size="combat_patrol")
        wizard.save(session, draft, data, step="muster")
        draft_id = draft.id
    # A new transaction (a new request, another tab): the same draft, at the same step.
    with session_scope(engine) as session:
        again = wizard.start(session, campaign_id=w["campaign"], user_id=ruby.id or 0)
        assert again.id == draft_id and again.step == "muster"
        assert wizard.data(again)["setup"]["battle_size"] == "combat_patrol"
        found = wizard.open_draft(session, campaign_id=w["campaign"], user_id=ruby.id or 0)
        assert found is not None and found.id == draft_id
        assert wizard.open_draft(session, campaign_id=w["campaign"], user_id=w["kai"].id) is None
        assert wizard.open_draft(session, campaign_id=w["other"], user_id=ruby.id or 0) is None


def test_only_the_owner_or_an_organizer_finds_a_draft(session: Session) -> None:
    w = world(session)
    draft = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    assert draft.id is not None
    found = wizard.get_draft(
        session, campaign_id=w["campaign"], draft_id=draft.id, user=w["ruby"], organizer=False
    )
    assert found.id == draft.id
    helped = wizard.get_draft(
        session, campaign_id=w["campaign"], draft_id=draft.id, user=w["orga"], organizer=True
    )
    assert helped.id == draft.id
    with pytest.raises(NotFound) as other_player:
        wizard.get_draft(
            session, campaign_id=w["campaign"], draft_id=draft.id, user=w["kai"], organizer=False
        )
    assert other_player.value.code == "draft_not_found"
    # The right user, but the URL names another campaign: not found either.
    with pytest.raises(NotFound):
        wizard.get_draft(
            session, campaign_id=w["other"], draft_id=draft.id, user=w["ruby"], organizer=False
        )
    with pytest.raises(NotFound):
        wizard.get_draft(
            session, campaign_id=w["other"], draft_id=draft.id, user=w["orga"], organizer=True
        )
    with pytest.raises(NotFound):
        wizard.get_draft(
            session, campaign_id=w["campaign"], draft_id=999_999, user=w["ruby"], organizer=True
        )


def test_a_finished_draft_is_closed_and_a_new_one_starts(session: Session) -> None:
    w = world(session)
    draft = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    wizard.save(session, draft, wizard.data(draft), step=wizard.FINISHED)
    assert wizard.open_draft(session, campaign_id=w["campaign"], user_id=w["ruby"].id) is None
    with pytest.raises(DomainError) as closed:
        wizard.save(session, draft, wizard.data(draft))
    assert closed.value.code == "draft_finished"
    fresh = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    assert fresh.id != draft.id and fresh.step == "setup"


def test_discard_before_muster_only(session: Session) -> None:
    w = world(session)
    draft = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    wizard.discard(session, draft)
    assert wizard.open_draft(session, campaign_id=w["campaign"], user_id=w["ruby"].id) is None


def test_players_pick_their_own_forces_organizers_any(session: Session) -> None:
    w = world(session)
    mine, every = wizard.selectable_forces(
        session, campaign_id=w["campaign"], user=w["ruby"], organizer=False
    )
    assert [f.name for f in mine] == ["Ultramarines"]
    assert [f.name for f in every] == ["Ultramarines", "Orks"]
    mine, _every = wizard.selectable_forces(
        session, campaign_id=w["campaign"], user=w["orga"], organizer=True
    )
    assert [f.name for f in mine] == ["Ultramarines", "Orks"]


def mustered(session: Session, w: dict[str, Any]) -> Any:
    draft = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    data = wizard.data(draft)
    data["setup"].update(
        force_id=w["mine"].id,
        opponent_id=w["theirs"].id,
        battle_size="combat_patrol",
        mission="supply_drop",
        role="attacker",
        agendas=[["sentinel"], ["reaper"]],
    )
    wizard.check_setup(session, draft, data, user=w["ruby"])
    data["rosters"] = [w["cards"][:2], w["cards"][2:]]
    wizard.muster(session, draft, data)
    return draft


def test_setup_refusals_name_the_field(session: Session) -> None:
    w = world(session)
    draft = wizard.start(session, campaign_id=w["campaign"], user_id=w["ruby"].id)
    data = wizard.data(draft)
    data["setup"].update(force_id=w["theirs"].id, opponent_id=w["mine"].id)
    with pytest.raises(RuleError) as theirs:
        wizard.check_setup(session, draft, data, user=w["ruby"])
    assert theirs.value.field == "force_id"
    data["setup"].update(
        force_id=w["mine"].id, opponent_id=w["theirs"].id, battle_size="combat_patrol"
    )
    with pytest.raises(RuleError) as no_mission:
        wizard.check_setup(session, draft, data, user=w["ruby"])
    assert no_mission.value.field == "mission"
    mission = wizard.roll_mission(data, rulebook(), entered=6)
    assert mission.id == "assassinate" and data["setup"]["mission_roll"] == 6
    data["setup"]["agendas"] = [["sentinel"], ["reaper", "assassins"]]
    with pytest.raises(RuleError) as agendas:
        wizard.check_setup(session, draft, data, user=w["ruby"])
    assert (agendas.value.field, agendas.value.code) == ("agendas_1", "agenda_count")


def test_counters_stay_within_the_rules(session: Session) -> None:
    w = world(session)
    draft = mustered(session, w)
    captain = w["cards"][0]
    data = wizard.data(draft)
    assert wizard.bump(session, draft, data, f"{captain}:destroyed_ranged:+1")[2] == 1
    assert wizard.bump(session, draft, data, f"{captain}:agenda.sentinel:+1")[2] == 1
    for spec, code in (
        (f"{captain}:agenda.sentinel:+1", "count_invalid"),  # Sentinel is achieved or not
        (f"{captain}:destroyed_melee:-1", "count_invalid"),
        (f"{captain}:agenda.reaper:+1", "agenda_not_selected"),  # the other side's Agenda
        (f"{captain}:xp:+1", "bump_invalid"),
        (f"{captain}:destroyed_ranged:+5", "bump_invalid"),
        ("999:destroyed_ranged:+1", "unit_not_in_roster"),
    ):
        with pytest.raises(RuleError) as refused:
            wizard.bump(session, draft, data, spec)
        assert refused.value.code == code, spec
    stored = wizard.unit_state(wizard.data(draft), captain)
    assert stored["destroyed_ranged"] == 1 and stored["agenda_tallies"] == {"sentinel": 1}


def test_results_are_built_as_the_api_builds_them(session: Session) -> None:
    w = world(session)
    draft = mustered(session, w)
    captain, squad, boyz = w["cards"]
    data = wizard.data(draft)
    wizard.bump(session, draft, data, f"{captain}:destroyed_melee:+1")
    data["units"][str(squad)] = {**wizard.unit_state(data, squad), "destroyed": True}
    data["sides"][0].update(vp=45, painted=True, marked=captain, dice_mode="enter", dice=[3])
    data["sides"][1].update(vp=20, agenda_choices={"reaper": boyz})
    assert wizard.dice_needed(session, draft, data) == [["Out of Action test: Squad"], []]
    mine, theirs = wizard.results(session, draft, data)
    assert (mine.force_id, mine.victory_points, mine.painted, mine.dice) == (
        w["mine"].id,
        45,
        True,
        [3],
    )
    assert mine.units[0] == {
        "card_id": captain,
        "destroyed": False,
        "destroyed_psychic": 0,
        "destroyed_ranged": 0,
        "destroyed_melee": 1,
        "agenda_tallies": {},
        "marked_for_greatness": True,
    }
    assert mine.units[1]["destroyed"] is True
    assert theirs.dice is None and theirs.agenda_choices == {"reaper": boyz}
    data["sides"][0]["vp"] = 201
    with pytest.raises(RuleError) as too_many:
        wizard.check_after(data)
    assert too_many.value.field == "vp_0"


def force_with_a_unit(
    session: Session, campaign_id: int, name: str, faction: str, owner: User
) -> tuple[int, int]:
    """A force of ``owner``'s with one unit of its faction: the force's id and the unit's."""
    force = forces.create_force(
        session, campaign_id=campaign_id, name=name, crusade_faction=faction, owner_id=owner.id
    )
    unit = forces.add_card(
        session, force_id=force.id or 0, name=f"{name} unit", power_rating=5, keywords=[faction]
    )
    return force.id or 0, unit.id or 0


def test_same_as_last_battle_finds_a_rematch_behind_many_other_battles(engine: Engine) -> None:
    """ "Same as last battle" looks for the latest battle against *that* opponent, however many
    battles against others came since, in one query that does not read the force snapshots."""
    with session_scope(engine) as session:
        w = world(session)
        third, warrior = force_with_a_unit(session, w["campaign"], "Necrons", "NECRONS", w["kai"])
        captain, squad, boyz = w["cards"]

        def play(opponent: int, roster: list[int], agenda: str) -> None:
            sides = [
                SideSetup(w["mine"].id, VictorRole.ATTACKER, [captain, squad], ["assassins"]),
                SideSetup(opponent, VictorRole.DEFENDER, roster, [agenda]),
            ]
            battle, _ = lifecycle.muster(
                session, campaign_id=w["campaign"], battle_size="combat_patrol", sides=sides
            )
            battle.status = "resolved"  # played: only the sides' set-up matters here
            session.flush()

        play(w["theirs"].id, [boyz], "reaper")
        for _ in range(21):
            play(third, [warrior], "survivor")
        session.flush()
        found: list[wizard.LastBattle | None] = []
        sent = statements(
            engine, lambda: found.append(wizard.last_battle(session, w["mine"].id, w["theirs"].id))
        )
        last = found[0]
        assert last is not None and last.opponent_id == w["theirs"].id
        assert last.agendas == (["assassins"], ["reaper"]) and last.rosters[1] == [boyz]
        assert sent == 1
        latest = wizard.last_battle(session, w["mine"].id)
        assert latest is not None and latest.opponent_id == third


def test_the_rematch_is_the_players_newest_battle_not_reverted(engine: Engine) -> None:
    """The campaign page's rematch: the newest battle of any of the player's forces in this
    campaign, a reverted one passed over, in one statement; nobody else's battles, and
    nothing for an organizer who plays no force."""
    with session_scope(engine) as session:
        w = world(session)
        ruby: User = w["ruby"]
        kai: User = w["kai"]
        orga: User = w["orga"]
        second = force_with_a_unit(session, w["campaign"], "Raven Guard", "IMPERIUM", ruby)
        captain, _squad, boyz = w["cards"]

        def play(
            campaign: int, first: tuple[int, int], other: tuple[int, int], status: str
        ) -> None:
            sides = [
                SideSetup(first[0], VictorRole.ATTACKER, [first[1]], ["assassins"]),
                SideSetup(other[0], VictorRole.DEFENDER, [other[1]], ["reaper"]),
            ]
            battle, _ = lifecycle.muster(
                session, campaign_id=campaign, battle_size="combat_patrol", sides=sides
            )
            battle.status = status
            session.flush()

        def rematch(user: User) -> wizard.Rematch | None:
            found: list[wizard.Rematch | None] = []
            sent = statements(
                engine,
                lambda: found.append(
                    wizard.rematch_of(session, campaign_id=w["campaign"], user_id=user.id or 0)
                ),
            )
            assert sent == 1
            return found[0]

        mine, theirs = (w["mine"].id, captain), (w["theirs"].id, boyz)
        assert rematch(ruby) is None  # no battle yet
        play(w["campaign"], mine, theirs, "resolved")
        assert rematch(ruby) == wizard.Rematch(w["mine"].id, "Ultramarines", w["theirs"].id, "Orks")
        # Kai sees the same battle from his side
        assert rematch(kai) == wizard.Rematch(w["theirs"].id, "Orks", w["mine"].id, "Ultramarines")
        # Ruby's other force plays later: that is her newest battle
        play(w["campaign"], theirs, second, "resolved")
        assert rematch(ruby) == wizard.Rematch(second[0], "Raven Guard", w["theirs"].id, "Orks")
        # a newer battle, reverted, is passed over
        play(w["campaign"], mine, theirs, "reverted")
        assert rematch(ruby) == wizard.Rematch(second[0], "Raven Guard", w["theirs"].id, "Orks")
        # a battle under way counts (the rematch of the battle being played)
        play(w["campaign"], mine, theirs, "mustered")
        assert rematch(ruby) == wizard.Rematch(w["mine"].id, "Ultramarines", w["theirs"].id, "Orks")
        # a force of hers in another campaign plays: not this campaign's rematch
        elsewhere = force_with_a_unit(session, w["other"], "Salamanders", "IMPERIUM", ruby)
        rival = force_with_a_unit(session, w["other"], "Orks too", "ORKS", kai)
        play(w["other"], elsewhere, rival, "resolved")
        assert rematch(ruby) == wizard.Rematch(w["mine"].id, "Ultramarines", w["theirs"].id, "Orks")
        assert rematch(orga) is None  # the organizer plays no force here
        # two of her own forces meet: the battle's first side is hers, the other its opponent
        third = force_with_a_unit(session, w["campaign"], "Blood Angels", "IMPERIUM", ruby)
        play(w["campaign"], second, third, "resolved")
        assert rematch(ruby) == wizard.Rematch(second[0], "Raven Guard", third[0], "Blood Angels")
