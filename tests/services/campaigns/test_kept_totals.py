"""Totals kept in each command's transaction (standings lines, chart points, card battle
lists) always equal what a rebuild from the cards and battles gives."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, update
from sqlmodel import Session, col, select

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Battle, BattleSide, Card, CardBattle, Force, ForceStanding
from app.db.session import session_scope
from app.rules.cards import BattleScar
from app.rules.data import VictorRole
from app.services.battles import lifecycle
from app.services.campaigns import kept_totals, standings, transfer
from app.services.campaigns.demo import load_demo
from app.services.forces import forces
from app.services.forces.card_battles import card_battles, card_line
from app.services.forces.convert import card_value, write_card


def demo(engine: Engine) -> int:
    with session_scope(engine) as session:
        campaign = load_demo(session)
        assert campaign.id is not None
        return campaign.id


def differences(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return kept_totals.differences(connection)


def recomputed_by_hand(session: Session, campaign_id: int) -> dict[int, tuple[int, int, int]]:
    """Crusade points, supply and units of each force, from its live cards."""
    table = {}
    for view in forces.list_forces(session, campaign_id=campaign_id, limit=200):
        live = [c for c in view.cards if not c.removed]
        table[view.force.id or 0] = (
            sum(card_value(c).crusade_points for c in live),
            sum(c.power_rating for c in live),
            len(live),
        )
    return table


class TestKeptTotals:
    def test_the_demo_campaign_keeps_exact_totals(self, engine: Engine) -> None:
        campaign_id = demo(engine)
        assert differences(engine) == []
        with session_scope(engine, writes=False) as session:
            lines = standings.standings(session, campaign_id=campaign_id)
            by_hand = recomputed_by_hand(session, campaign_id)
        assert {s.force_id: (s.crusade_points, s.supply_used, s.units) for s in lines} == by_hand
        assert sum(s.wins + s.draws + s.losses for s in lines) == 2 * 4  # four battles

    def test_revert_and_card_changes_keep_them(self, engine: Engine) -> None:
        campaign_id = demo(engine)
        with session_scope(engine) as session:
            last = session.exec(
                select(Battle)
                .where(Battle.campaign_id == campaign_id)
                .order_by(col(Battle.id).desc())
            ).first()
            assert last is not None and last.id is not None
            lifecycle.revert(session, battle_id=last.id)
        assert differences(engine) == []
        with session_scope(engine) as session:
            card = session.exec(select(Card).where(Card.removed == False)).first()  # noqa: E712
            assert card is not None and card.id is not None
            forces.remove_card(session, card_id=card.id)
            forces.add_card(
                session,
                force_id=card.force_id,
                name="Fresh squad",
                power_rating=3,
                keywords=card.keywords,
            )
        assert differences(engine) == []

    def test_a_tampered_total_is_found_and_rebuilt(self, engine: Engine) -> None:
        demo(engine)
        with engine.begin() as connection:
            connection.execute(update(ForceStanding).values(wins=ForceStanding.wins + 1))
            connection.execute(CardBattle.__table__.delete())  # type: ignore[attr-defined]
        found = differences(engine)
        assert any("stored" in line for line in found)
        assert any("missing" in line for line in found)
        with engine.begin() as connection:
            kept_totals.rebuild(connection)
        assert differences(engine) == []

    def test_a_cards_points_move_only_with_what_they_come_from(self, engine: Engine) -> None:
        """A card's XP and Power Rating move its force's line as they are; its Crusade
        points are worked out again only when its honours, upgrades or scars changed."""
        demo(engine)

        def line_and_card() -> tuple[tuple[int, int, int], Card]:
            with session_scope(engine, writes=False) as session:
                card = session.exec(
                    select(Card).where(col(Card.removed).is_(False)).order_by(col(Card.id))
                ).first()
                assert card is not None
                line = kept_totals.standing_of(session, card.force_id)
                return (line.crusade_points, line.supply_used, line.xp), card

        (points, supply, xp), card = line_and_card()
        with session_scope(engine) as session:
            row = session.get(Card, card.id)
            assert row is not None
            value = card_value(row)
            write_card(row, replace(value, xp=value.xp + 3, power_rating=value.power_rating + 1))
        assert line_and_card()[0] == (points, supply + 1, xp + 3)
        with session_scope(engine) as session:
            row = session.get(Card, card.id)
            assert row is not None
            value = card_value(row)
            scarred = replace(value, scars=(*value.scars, BattleScar("lost_leg")))
            write_card(row, scarred)
        assert line_and_card()[0] == (points - 1, supply + 1, xp + 3)  # a scar costs 1
        assert differences(engine) == []

    def test_an_imported_campaign_has_its_totals(self, engine: Engine) -> None:
        campaign_id = demo(engine)
        with session_scope(engine, writes=False) as session:
            document = transfer.export_campaign(session, campaign_id=campaign_id)
        with session_scope(engine) as session:
            copy = transfer.import_campaign(session, document)
            copy_id = copy.id
        assert differences(engine) == []
        with session_scope(engine, writes=False) as session:
            first = standings.standings(session, campaign_id=campaign_id)
            second = standings.standings(session, campaign_id=copy_id or 0)
        strip = [(s.name, s.wins, s.draws, s.losses, s.crusade_points) for s in first]
        assert strip == [(s.name, s.wins, s.draws, s.losses, s.crusade_points) for s in second]


class TestCardBattles:
    def test_a_card_lists_its_battles_newest_first_a_page_at_a_time(self, engine: Engine) -> None:
        demo(engine)
        with session_scope(engine, writes=False) as session:
            card_id, force_id = session.exec(
                select(CardBattle.card_id, CardBattle.force_id)
                .group_by(col(CardBattle.card_id), col(CardBattle.force_id))
                .order_by(col(CardBattle.card_id))
            ).all()[0]
            every = card_battles(session, card_id=card_id, force_id=force_id)
            ids = [f.battle.id for f in every.items]
            assert ids == sorted(ids, reverse=True) and every.older is None
            first = card_battles(session, card_id=card_id, force_id=force_id, limit=1)
            assert [f.battle.id for f in first.items] == ids[:1]
            if len(ids) > 1:
                assert first.older == ids[0]
                rest = card_battles(session, card_id=card_id, force_id=force_id, before=first.older)
                assert [f.battle.id for f in rest.items] == ids[1:]

    def test_a_card_line_is_kept_and_read_without_the_report(self, engine: Engine) -> None:
        demo(engine)
        with session_scope(engine, writes=False) as session:
            card_id, force_id = session.exec(
                select(CardBattle.card_id, CardBattle.force_id).order_by(col(CardBattle.card_id))
            ).all()[0]
            shown = card_battles(session, card_id=card_id, force_id=force_id).items
            expected = [card_line(_report(session, f.side.id), card_id) for f in shown]
        assert shown and [f.line for f in shown] == expected
        assert all("unit" in f.line and f.line["unit"]["card_id"] == card_id for f in shown)
        with session_scope(engine) as session:  # the page no longer needs the reports
            session.execute(update(BattleSide).values(report={}))
        with session_scope(engine, writes=False) as session:
            again = card_battles(session, card_id=card_id, force_id=force_id).items
        assert [f.line for f in again] == expected


def _report(session: Session, side_id: int | None) -> dict[str, Any]:
    report: dict[str, Any] = session.exec(
        select(BattleSide.report).where(BattleSide.id == side_id)
    ).one()
    return report


def test_the_migration_computes_totals_for_existing_campaigns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    demo(engine)
    migrate.downgrade(url, "0010")  # as a database made before the totals existed
    migrate.upgrade(url)
    with engine.connect() as connection:
        stored = connection.execute(select(ForceStanding.force_id)).all()
    assert len(stored) == 4 and differences(engine) == []
    engine.dispose()


ROLES = (VictorRole.ATTACKER, VictorRole.DEFENDER)


class TestRosterSnapshot:
    """A side's snapshot (what a revert restores) holds its roster's units and the force's
    totals before the battle, not every unit of the force: a battle changes only the units
    it fought with, and the cost of resolving it follows the roster."""

    def test_a_revert_restores_the_force_from_the_roster_snapshot(self, engine: Engine) -> None:
        campaign_id = demo(engine)
        with session_scope(engine) as session:
            views = forces.list_forces(session, campaign_id=campaign_id, limit=2)
            rosters, before = [], {}
            for view in views:
                free = [
                    c for c in view.cards if not c.removed and c.id not in view.pending_card_ids
                ]
                rosters.append(sorted(c.id or 0 for c in free[:2]))
                for card in view.cards:
                    before[card.id] = card.model_dump()
            kept = {
                v.force.id: (v.value.crusade_points, sum(c.xp for c in v.value.cards))
                for v in views
            }
            assert all(len(v.cards) > 2 for v in views)  # units left at home
            sides = [
                lifecycle.SideSetup(
                    force_id=v.force.id or 0, role=role, roster=r, agendas=["sentinel"]
                )
                for v, role, r in zip(views, ROLES, rosters, strict=True)
            ]
            battle, _ = lifecycle.muster(
                session, campaign_id=campaign_id, battle_size="combat_patrol", sides=sides, seed=3
            )
            assert battle.id is not None
            battle_id = battle.id
            results = [
                lifecycle.SideResult(
                    force_id=s.force_id,
                    victory_points=10 + 5 * i,
                    painted=True,
                    units=[
                        {"card_id": c, "destroyed": True, "destroyed_ranged": 1} for c in s.roster
                    ],
                )
                for i, s in enumerate(sides)
            ]
            lifecycle.record_result(session, battle_id=battle_id, results=results)
        with session_scope(engine, writes=False) as session:
            _battle, stored = lifecycle.get_battle(session, battle_id)
            for side, roster in zip(stored, rosters, strict=True):
                assert sorted(int(i) for i in side.snapshot["cards"]) == roster
                points, xp = kept[side.force_id]
                assert side.snapshot["totals"] == {"crusade_points": points, "xp": xp}
        assert differences(engine) == []
        home = next(  # a unit left at home, removed after the battle (ruling 41)
            i for i, c in before.items() if i not in rosters[0] + rosters[1] and not c["removed"]
        )
        with session_scope(engine) as session:
            forces.remove_card(session, card_id=home)
        with session_scope(engine) as session:
            lifecycle.revert(session, battle_id=battle_id)
        with session_scope(engine, writes=False) as session:
            after = {
                c.id: c.model_dump()
                for c in session.exec(select(Card).where(col(Card.id).in_(list(before)))).all()
            }
        assert after[home]["removed"] and {**after[home], "removed": False} == before[home]
        assert {i: c for i, c in after.items() if i != home} == {
            i: c for i, c in before.items() if i != home
        }
        assert differences(engine) == []


def test_migration_0014_keeps_each_units_line_of_existing_battles(engine: Engine) -> None:
    """Battles recorded before the lines existed get them from their sides' reports; the
    card page then shows the same lines (both engines: the migration is plain SQL)."""
    demo(engine)
    url = engine.url.render_as_string(hide_password=False)
    with engine.connect() as connection:
        kept = {
            (row.card_id, row.battle_id): row.line
            for row in connection.execute(
                select(CardBattle.card_id, CardBattle.battle_id, CardBattle.line)
            )
        }
    assert kept and all(line is not None and "unit" in line for line in kept.values())
    engine.dispose()
    migrate.downgrade(url, "0013")
    migrate.upgrade(url)
    with engine.connect() as connection:
        filled = {
            (row.card_id, row.battle_id): row.line
            for row in connection.execute(
                select(CardBattle.card_id, CardBattle.battle_id, CardBattle.line)
            )
        }
    assert filled == kept
    assert differences(engine) == []


class TestSwitchedOnByName:
    """The hooks that keep the totals are switched on by name at every entry point
    (create_app, the CLI, the tests, the bench scripts), never by importing a package:
    a process that writes through the services without the web app keeps them too."""

    SERVICES_WITHOUT_THE_HOOKS = """
import importlib, pkgutil, sys
import app.services
from app.db import migrate
from app.db.engine import make_engine
from app.db.session import session_scope
from app.services.campaigns import kept_totals
from app.services.campaigns.demo import load_demo

for module in pkgutil.walk_packages(app.services.__path__, "app.services."):
    importlib.import_module(module.name)
assert not kept_totals.kept_totals_installed(), "importing the services switched the hooks on"
if sys.argv[2] == "install":
    kept_totals.install_kept_totals()
migrate.upgrade(sys.argv[1])
engine = make_engine(sys.argv[1])
with session_scope(engine) as session:
    load_demo(session)
"""

    def test_the_cli_keeps_the_standings_without_the_web_app(self, tmp_path: Path) -> None:
        crusade = str(Path(sys.executable).with_name("crusade"))
        environment = {**os.environ, "DATA_DIR": str(tmp_path)}
        environment.pop("DATABASE_URL", None)
        done = subprocess.run(  # migrates, then plays the demo through the services
            [crusade, "demo"], env=environment, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        engine = make_engine(f"sqlite:///{tmp_path / 'crusade.db'}")
        try:
            assert differences(engine) == []
            with session_scope(engine, writes=False) as session:
                campaign_id = session.exec(select(Force.campaign_id)).first()
                assert campaign_id is not None
                lines = standings.standings(session, campaign_id=campaign_id)
                by_hand = recomputed_by_hand(session, campaign_id)
            assert {s.force_id: (s.crusade_points, s.supply_used, s.units) for s in lines} == (
                by_hand
            )
            assert all(points > 0 for points, _, _ in by_hand.values())
        finally:
            engine.dispose()

    @pytest.mark.parametrize("install", [True, False])
    def test_a_script_on_the_services_keeps_them_once_it_installs_them(
        self, tmp_path: Path, install: bool
    ) -> None:
        url = f"sqlite:///{tmp_path / 'script.db'}"
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                self.SERVICES_WITHOUT_THE_HOOKS,
                url,
                "install" if install else "no",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        engine = make_engine(url)
        try:
            found = differences(engine)
        finally:
            engine.dispose()
        if install:
            assert found == []
        else:  # the proof that nothing else switches them on: the lines fell behind
            assert any("crusade_points" in line for line in found), found
