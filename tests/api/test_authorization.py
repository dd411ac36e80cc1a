"""Who may do what: anonymous callers, strangers, players of another force, the owning player
and the organizer; read-only and campaign-limited tokens; invites."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.api.plumbing.route_access import POLICIES, api_operations, check_every_route_has_a_rule
from app.db.models import Event, Invite, utcnow
from app.main import create_app
from app.services.campaigns import transfer
from tests.api.helpers import account, assert_problem, dump
from tests.conftest import Snapshots


@pytest.fixture
def table(client: TestClient, engine: Engine, snapshots: Snapshots) -> Iterator[dict[str, Any]]:
    """An organizer (the `client`), two players who joined by invite, each with a force and a
    unit, a stranger, and an anonymous caller (made once per backend, then restored from a
    snapshot of the database)."""
    people = snapshots.prepared(
        engine, "authorization table", lambda: _table(client), lambda: TestClient(client.app)
    )
    yield {"organizer": client, **people}


def _table(client: TestClient) -> dict[str, Any]:
    campaign = client.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
    people: dict[str, Any] = {"campaign": campaign}
    for name, faction, keyword in (("ruby", "IMPERIUM", "IMPERIUM"), ("joel", "CHAOS", "CHAOS")):
        player = account(client.app, name)
        code = client.post(f"/api/v1/campaigns/{campaign}/invites", json={}).json()["code"]
        assert player.post(f"/api/v1/invites/{code}/accept").status_code == 201
        force = player.post(
            f"/api/v1/campaigns/{campaign}/forces",
            json={"name": name.title(), "crusade_faction": faction},
        ).json()["id"]
        card = player.post(
            f"/api/v1/forces/{force}/cards",
            json={"name": "Squad", "power_rating": 5, "keywords": [keyword, "INFANTRY"]},
        ).json()["id"]
        people[name] = {"client": player, "force": force, "card": card}
    people["stranger"] = account(client.app, "stranger")
    people["anonymous"] = TestClient(client.app)
    return people


def battle_between(table: dict[str, Any], mustered_by: TestClient) -> int:
    ruby, joel = table["ruby"], table["joel"]
    response = mustered_by.post(
        f"/api/v1/campaigns/{table['campaign']}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {
                    "force_id": ruby["force"],
                    "role": "attacker",
                    "roster": [ruby["card"]],
                    "agendas": ["assassins"],
                },
                {
                    "force_id": joel["force"],
                    "role": "defender",
                    "roster": [joel["card"]],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        },
    )
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


class TestEveryRouteHasARule:
    def test_the_app_starts_only_when_every_route_has_one(self) -> None:
        app = create_app()
        check_every_route_has_a_rule(app)

        @app.post("/api/v1/unprotected")
        def unprotected() -> None: ...

        with pytest.raises(RuntimeError, match="unprotected"):
            check_every_route_has_a_rule(app)

    def test_every_rule_names_a_real_route(self) -> None:
        app: FastAPI = create_app()
        operations = api_operations(app)
        assert len(operations) > 40
        assert set(POLICIES) <= operations

    def test_the_routes_checked_are_the_operations_the_schema_documents(self) -> None:
        app: FastAPI = create_app()
        documented = {
            (method.upper(), path)
            for path, operations in app.openapi()["paths"].items()
            if path.startswith("/api/")
            for method in operations
        }
        assert api_operations(app) == documented


class TestReading:
    def test_anonymous_and_strangers_cannot_read_a_private_campaign(
        self, table: dict[str, Any]
    ) -> None:
        url = f"/api/v1/campaigns/{table['campaign']}/standings"
        assert_problem(table["anonymous"].get(url), 401, "not_authenticated")
        assert_problem(table["stranger"].get(url), 403, "forbidden")
        assert table["ruby"]["client"].get(url).status_code == 200
        assert table["anonymous"].get("/api/v1/rules/ranks").status_code == 200

    def test_a_public_campaign_is_readable_by_all_but_not_writable(
        self, table: dict[str, Any]
    ) -> None:
        table["organizer"].patch(f"/api/v1/campaigns/{table['campaign']}", json={"public": True})
        assert table["anonymous"].get(f"/api/v1/forces/{table['ruby']['force']}").status_code == 200
        refused = table["stranger"].post(
            f"/api/v1/forces/{table['ruby']['force']}/requisitions",
            json={"requisition": "increase_supply_limit"},
        )
        assert_problem(refused, 403, "forbidden")

    def test_a_member_downloads_the_whole_campaign_as_one_document(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        url = f"/api/v1/campaigns/{table['campaign']}/export"
        assert_problem(table["anonymous"].get(url), 401, "not_authenticated")
        assert_problem(table["stranger"].get(url), 403, "forbidden")
        got = table["ruby"]["client"].get(url)
        assert got.status_code == 200
        today = f"{utcnow():%Y-%m-%d}"
        assert got.headers["content-disposition"] == f'attachment; filename="vigilus-{today}.json"'
        with Session(engine) as session:
            expected = transfer.export_campaign(session, campaign_id=table["campaign"])
        assert got.json() == json.loads(json.dumps(expected, default=str))
        assert [f["name"] for f in got.json()["forces"]] == ["Ruby", "Joel"]

    def test_campaign_list_shows_only_visible_campaigns(self, table: dict[str, Any]) -> None:
        assert table["stranger"].get("/api/v1/campaigns").json()["items"] == []
        assert len(table["ruby"]["client"].get("/api/v1/campaigns").json()["items"]) == 1


class TestOwnership:
    def test_only_the_owner_or_an_organizer_changes_a_force(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        ruby, joel = table["ruby"], table["joel"]
        before = dump(engine)
        for denied in (
            joel["client"].patch(f"/api/v1/forces/{ruby['force']}", json={"notes": "mine now"}),
            joel["client"].post(
                f"/api/v1/forces/{ruby['force']}/cards",
                json={"name": "Spy", "power_rating": 1, "keywords": ["IMPERIUM"]},
            ),
            joel["client"].delete(f"/api/v1/cards/{ruby['card']}"),
            joel["client"].patch(f"/api/v1/cards/{ruby['card']}", json={"name": "Traitors"}),
        ):
            assert_problem(denied, 403, "forbidden")
        assert dump(engine) == before
        assert (
            ruby["client"]
            .patch(f"/api/v1/forces/{ruby['force']}", json={"notes": "ours"})
            .status_code
            == 200
        )
        assert (
            table["organizer"]
            .patch(f"/api/v1/cards/{ruby['card']}", json={"narrative": "noted"})
            .status_code
            == 200
        )

    def test_a_player_answers_only_their_own_decisions(self, table: dict[str, Any]) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        ruby, joel = table["ruby"], table["joel"]
        ruby["client"].post(
            f"/api/v1/battles/{battle}/result",
            json={
                "sides": [
                    {"force_id": ruby["force"], "victory_points": 50},
                    {
                        "force_id": joel["force"],
                        "victory_points": 10,
                        "units": [{"card_id": joel["card"], "destroyed": True}],
                        "dice": [1],
                    },
                ]
            },
        )
        assert joel["client"].post(f"/api/v1/battles/{battle}/confirm").status_code == 200
        decision = (
            joel["client"].get(f"/api/v1/forces/{joel['force']}/decisions").json()["items"][0]["id"]
        )
        assert_problem(
            ruby["client"].post(
                f"/api/v1/decisions/{decision}/answer", json={"consequence": "battle_scar"}
            ),
            403,
            "forbidden",
        )
        answered = joel["client"].post(
            f"/api/v1/decisions/{decision}/answer", json={"consequence": "battle_scar"}
        )
        assert answered.status_code == 200, answered.text

    def test_only_organizers_revert_and_strangers_cannot_record(
        self, table: dict[str, Any]
    ) -> None:
        battle = battle_between(table, table["organizer"])
        body = {
            "sides": [
                {"force_id": table["ruby"]["force"], "victory_points": 1},
                {"force_id": table["joel"]["force"], "victory_points": 1},
            ]
        }
        assert_problem(
            table["stranger"].post(f"/api/v1/battles/{battle}/result", json=body), 403, "forbidden"
        )
        assert (
            table["joel"]["client"].post(f"/api/v1/battles/{battle}/result", json=body).status_code
            == 200
        )
        assert_problem(
            table["ruby"]["client"].post(f"/api/v1/battles/{battle}/revert"), 403, "forbidden"
        )
        assert table["organizer"].post(f"/api/v1/battles/{battle}/revert").status_code == 200

    def test_history_records_who_did_it(self, table: dict[str, Any], engine: Engine) -> None:
        with Session(engine) as session:
            events = session.exec(select(Event).where(Event.kind == "card_added")).all()
        assert len(events) == 2 and all(e.actor_id is not None for e in events)
        assert events[0].actor_id != events[1].actor_id


class TestTokens:
    def test_read_only_token_cannot_write(self, table: dict[str, Any], engine: Engine) -> None:
        ruby = table["ruby"]
        token = (
            ruby["client"].post("/api/v1/auth/tokens", json={"name": "stats bot"}).json()["token"]
        )
        bot = TestClient(ruby["client"].app, headers={"Authorization": f"Bearer {token}"})
        assert bot.get(f"/api/v1/forces/{ruby['force']}").status_code == 200
        before = dump(engine)
        refused = bot.post(
            f"/api/v1/forces/{ruby['force']}/requisitions",
            json={"requisition": "increase_supply_limit"},
        )
        assert_problem(refused, 403, "token_read_only")
        assert dump(engine) == before

    def test_campaign_limited_token(self, table: dict[str, Any], engine: Engine) -> None:
        ruby = table["ruby"]
        other = ruby["client"].post("/api/v1/campaigns", json={"name": "Elsewhere"}).json()["id"]
        token = (
            ruby["client"]
            .post(
                "/api/v1/auth/tokens",
                json={"name": "bot", "can_write": True, "campaign_id": table["campaign"]},
            )
            .json()["token"]
        )
        bot = TestClient(ruby["client"].app, headers={"Authorization": f"Bearer {token}"})
        assert bot.get(f"/api/v1/campaigns/{table['campaign']}").status_code == 200
        assert_problem(bot.get(f"/api/v1/campaigns/{other}"), 403, "token_campaign_limited")


class TestInvites:
    def test_used_up_and_expired_invites(self, table: dict[str, Any], engine: Engine) -> None:
        organizer, campaign = table["organizer"], table["campaign"]
        code = organizer.post(f"/api/v1/campaigns/{campaign}/invites", json={}).json()["code"]
        assert table["stranger"].post(f"/api/v1/invites/{code}/accept").status_code == 201
        late = account(organizer.app, "latecomer")
        assert_problem(late.post(f"/api/v1/invites/{code}/accept"), 410, "invite_used_up")
        expiring = organizer.post(
            f"/api/v1/campaigns/{campaign}/invites", json={"hours": 1}
        ).json()["code"]
        with Session(engine) as session:
            invite = session.exec(select(Invite).where(Invite.code == expiring)).one()
            invite.expires_at = utcnow() - timedelta(minutes=1)
            session.add(invite)
            session.commit()
        assert_problem(late.post(f"/api/v1/invites/{expiring}/accept"), 410, "invite_expired")
        assert_problem(late.post("/api/v1/invites/nonsense/accept"), 404, "invite_not_found")

    def test_open_invites_are_paged_by_key_and_skip_expired_ones(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        """Expired invites are left out by the query itself, so a page is never short."""
        organizer, campaign = table["organizer"], table["campaign"]
        url = f"/api/v1/campaigns/{campaign}/invites"
        codes = [organizer.post(url, json={"hours": 2}).json()["code"] for _ in range(5)]
        with Session(engine) as session:  # the second and fourth newest have run out
            for code in (codes[1], codes[3]):
                invite = session.exec(select(Invite).where(Invite.code == code)).one()
                invite.expires_at = utcnow() - timedelta(minutes=1)
                session.add(invite)
            session.commit()
        seen, address = [], f"{url}?limit=2"
        while address:
            response = organizer.get(address)
            page = response.json()
            assert response.status_code == 200 and len(page["items"]) <= 2
            if page["next"]:
                assert len(page["items"]) == 2
                assert response.headers["Link"] == f'<{page["next"]}>; rel="next"'
            seen += [i["code"] for i in page["items"]]
            address = page["next"]
        assert seen == [codes[4], codes[2], codes[0]]  # newest first, only the usable ones
        assert_problem(table["ruby"]["client"].get(url), 403, "forbidden")

    def test_open_campaigns_can_be_joined_without_an_invite(self, table: dict[str, Any]) -> None:
        url = f"/api/v1/campaigns/{table['campaign']}/join"
        assert_problem(table["stranger"].post(url), 403, "campaign_invite_only")
        table["organizer"].patch(
            f"/api/v1/campaigns/{table['campaign']}", json={"join_policy": "open"}
        )
        assert table["stranger"].post(url).json()["role"] == "player"
        assert_problem(table["stranger"].post(url), 409, "already_a_member")

    def test_organizers_list_and_withdraw_invites(self, table: dict[str, Any]) -> None:
        organizer, campaign = table["organizer"], table["campaign"]
        url = f"/api/v1/campaigns/{campaign}/invites"
        before = {i["code"] for i in organizer.get(url).json()["items"]}
        keep = organizer.post(url, json={"max_uses": 3}).json()["code"]
        drop = organizer.post(url, json={"role": "organizer"}).json()["code"]
        listed = organizer.get(url).json()["items"]
        assert [i["code"] for i in listed][:2] == [drop, keep]  # newest first
        assert {i["code"] for i in listed} == before | {keep, drop}
        withdrawn = organizer.delete(f"{url}/{drop}")
        assert withdrawn.status_code == 200
        assert withdrawn.json()["revoked_at"] is not None
        assert drop not in {i["code"] for i in organizer.get(url).json()["items"]}
        late = account(organizer.app, "latecomer")
        assert_problem(late.post(f"/api/v1/invites/{drop}/accept"), 404, "invite_not_found")
        assert late.post(f"/api/v1/invites/{keep}/accept").status_code == 201
        assert_problem(organizer.delete(f"{url}/nonsense"), 404, "invite_not_found")
        history = organizer.get(f"/api/v1/campaigns/{campaign}/history").json()["items"]
        assert "invite_withdrawn" in {e["kind"] for e in history}

    def test_players_cannot_see_or_withdraw_invites(self, table: dict[str, Any]) -> None:
        url = f"/api/v1/campaigns/{table['campaign']}/invites"
        code = table["organizer"].post(url, json={}).json()["code"]
        player = table["ruby"]["client"]
        assert_problem(player.get(url), 403, "forbidden")
        assert_problem(player.delete(f"{url}/{code}"), 403, "forbidden")
        assert code in {i["code"] for i in table["organizer"].get(url).json()["items"]}

    def test_only_organizers_invite(self, table: dict[str, Any]) -> None:
        refused = table["ruby"]["client"].post(
            f"/api/v1/campaigns/{table['campaign']}/invites", json={}
        )
        assert_problem(refused, 403, "forbidden")


class TestResultConfirmation:
    BODY = staticmethod(
        lambda t: {
            "sides": [
                {"force_id": t["ruby"]["force"], "victory_points": 40},
                {"force_id": t["joel"]["force"], "victory_points": 20},
            ]
        }
    )

    def test_a_players_result_changes_nothing_until_the_opponent_confirms(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        ruby, joel = table["ruby"], table["joel"]
        entered = ruby["client"].post(f"/api/v1/battles/{battle}/result", json=self.BODY(table))
        assert entered.json()["status"] == "proposed"
        assert ruby["client"].get(f"/api/v1/forces/{ruby['force']}").json()["battle_tally"] == 0
        before = dump(engine)
        assert_problem(
            ruby["client"].post(f"/api/v1/battles/{battle}/confirm"),
            403,
            "cannot_confirm_own_result",
        )
        assert_problem(
            table["stranger"].post(f"/api/v1/battles/{battle}/confirm"), 403, "forbidden"
        )
        assert dump(engine) == before
        confirmed = joel["client"].post(f"/api/v1/battles/{battle}/confirm")
        assert (confirmed.json()["status"], confirmed.json()["outcome"]) == ("resolved", "a_wins")
        assert ruby["client"].get(f"/api/v1/forces/{ruby['force']}").json()["battle_tally"] == 1

    def test_a_disputed_result_is_settled_by_an_organizer(self, table: dict[str, Any]) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        ruby, joel = table["ruby"], table["joel"]
        ruby["client"].post(f"/api/v1/battles/{battle}/result", json=self.BODY(table))
        assert (
            joel["client"].post(f"/api/v1/battles/{battle}/dispute").json()["status"] == "disputed"
        )
        assert_problem(
            joel["client"].post(f"/api/v1/battles/{battle}/confirm"), 403, "result_disputed"
        )
        settled = table["organizer"].post(f"/api/v1/battles/{battle}/confirm")
        assert settled.json()["status"] == "resolved"

    def test_a_refused_proposal_is_refused_at_once(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        body = self.BODY(table)
        body["sides"][0]["units"] = [{"card_id": table["joel"]["card"]}]
        before = dump(engine)
        assert_problem(
            table["ruby"]["client"].post(f"/api/v1/battles/{battle}/result", json=body),
            422,
            "unit_not_in_roster",
        )
        assert dump(engine) == before

    def test_no_requisitions_while_a_result_waits(self, table: dict[str, Any]) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        ruby = table["ruby"]
        ruby["client"].post(f"/api/v1/battles/{battle}/result", json=self.BODY(table))
        refused = ruby["client"].post(
            f"/api/v1/forces/{ruby['force']}/requisitions",
            json={"requisition": "increase_supply_limit"},
        )
        assert_problem(refused, 422, "requisition_during_battle")


def test_an_organizer_hands_a_member_a_reset_link(table: dict[str, Any]) -> None:
    members = (
        table["organizer"].get(f"/api/v1/campaigns/{table['campaign']}/members").json()["items"]
    )
    ruby_id = next(m["user_id"] for m in members if m["username"] == "ruby")
    url = f"/api/v1/campaigns/{table['campaign']}/members/{ruby_id}/reset-link"
    assert_problem(table["joel"]["client"].post(url), 403, "forbidden")
    link = table["organizer"].post(url).json()["link"]
    assert link.startswith("http://testserver/reset-password?token=")  # a whole link
    token = link.split("token=", 1)[1]
    reset = table["anonymous"].post(
        "/api/v1/auth/reset-password", json={"token": token, "new_password": "ruby's new one"}
    )
    assert reset.status_code == 200
    login = table["anonymous"].post(
        "/api/v1/auth/login", json={"username": "ruby", "password": "ruby's new one"}
    )
    assert login.status_code == 200


class TestMustering:
    def test_a_player_musters_only_battles_their_own_force_fights(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        organizer = table["organizer"]
        campaign = table["campaign"]
        force = organizer.post(
            f"/api/v1/campaigns/{campaign}/forces",
            json={"name": "Orga's Guard", "crusade_faction": "IMPERIUM"},
        ).json()["id"]
        card = organizer.post(
            f"/api/v1/forces/{force}/cards",
            json={"name": "Squad", "power_rating": 5, "keywords": ["IMPERIUM", "INFANTRY"]},
        ).json()["id"]
        joel = table["joel"]
        body = {
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {
                    "force_id": force,
                    "role": "attacker",
                    "roster": [card],
                    "agendas": ["cull_the_hordes"],
                },
                {
                    "force_id": joel["force"],
                    "role": "defender",
                    "roster": [joel["card"]],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        }
        url = f"/api/v1/campaigns/{campaign}/battles"
        before = dump(engine)
        refused = table["ruby"]["client"].post(url, json=body)
        assert_problem(refused, 403, "muster_not_yours")
        assert refused.json()["field"] == "sides"
        assert dump(engine) == before
        assert joel["client"].post(url, json=body).status_code == 201  # his force fights


class TestCallingOff:
    def test_a_player_in_the_battle_calls_off_a_mustered_battle(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        url = f"/api/v1/battles/{battle}/call-off"
        before = dump(engine)
        assert_problem(table["stranger"].post(url), 403, "forbidden")
        assert dump(engine) == before
        called_off = table["joel"]["client"].post(url)  # the opponent may, too
        assert called_off.status_code == 200 and called_off.json()["status"] == "reverted"
        history = table["organizer"].get(f"/api/v1/campaigns/{table['campaign']}/history")
        assert history.json()["items"][-1]["kind"] == "battle_called_off"
        assert battle_between(table, table["ruby"]["client"]) != battle  # both forces are free

    def test_a_battle_with_a_result_is_the_organizers_to_revert(
        self, table: dict[str, Any], engine: Engine
    ) -> None:
        battle = battle_between(table, table["ruby"]["client"])
        ruby = table["ruby"]["client"]
        ruby.post(f"/api/v1/battles/{battle}/result", json=TestResultConfirmation.BODY(table))
        before = dump(engine)
        refused = ruby.post(f"/api/v1/battles/{battle}/call-off")
        assert_problem(refused, 409, "battle_not_mustered")
        assert "only an organizer can revert it" in refused.json()["detail"]
        assert dump(engine) == before


def test_a_campaigns_members_are_paged_by_key(table: dict[str, Any]) -> None:
    url = f"/api/v1/campaigns/{table['campaign']}/members"
    organizer = table["organizer"]
    every = organizer.get(url).json()
    assert len(every["items"]) >= 2 and every["next"] is None
    seen, address = [], f"{url}?limit=1"
    while address:
        response = organizer.get(address)
        page = response.json()
        assert len(page["items"]) == 1
        if page["next"]:
            assert response.headers["Link"] == f'<{page["next"]}>; rel="next"'
        seen += page["items"]
        address = page["next"]
    assert seen == every["items"]
