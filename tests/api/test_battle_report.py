"""A battle's report through HTTP (issue 23): written and rewritten whole by a player, read
back with the battle, refused clearly when it names a unit that did not fight or a day that
cannot be, kept in the event feed and in a campaign's export."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.services.campaigns import transfer
from tests.api.helpers import assert_problem, dump
from tests.api.test_battle_flow import muster, setup_two_forces

STORY = {
    "title": "The relay at Hive Hyperia",
    "played_on": "2026-11-20",
    "location": "Games night at the club",
    "narrative": "Squad Vorn *held* the relay.\n\n<script>alert(1)</script>",
}


def report_url(battle: dict[str, Any]) -> str:
    return f"/api/v1/battles/{battle['id']}/report"


def test_written_read_back_and_rewritten(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    squad = world["blue_units"][1]["id"]
    body = {**STORY, "unit_notes": {str(squad): "  Held the relay alone.  "}}
    written = client.put(report_url(battle), json=body)
    assert written.status_code == 200, written.text
    report = written.json()["report"]
    assert report["title"] == STORY["title"] and report["played_on"] == "2026-11-20"
    assert report["narrative"] == STORY["narrative"]  # kept as written; escaped when shown
    assert report["unit_notes"] == {str(squad): "Held the relay alone."}
    assert report["written_by"] == "orga"
    assert client.get(f"/api/v1/battles/{battle['id']}").json()["report"] == report
    listed = client.get(f"/api/v1/campaigns/{world['campaign']}/battles").json()["items"]
    assert listed[0]["report"]["title"] == STORY["title"]
    again = client.put(report_url(battle), json={"title": "A shorter story"})
    assert again.json()["report"]["narrative"] == ""  # a PUT replaces the whole report
    assert again.json()["report"]["unit_notes"] == {}
    events = client.get(f"/api/v1/campaigns/{world['campaign']}/events").json()["items"]
    kinds = [(e["kind"], e["summary"]) for e in events if e["kind"].startswith("report_")]
    assert kinds == [
        ("report_written", f"Battle {battle['id']}: its report was written: {STORY['title']}."),
        ("report_edited", f"Battle {battle['id']}: its report was edited: A shorter story."),
    ]


def test_a_battle_without_a_report_says_so(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    assert client.get(f"/api/v1/battles/{battle['id']}").json()["report"] is None


def test_bad_reports_are_refused_and_change_nothing(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world, blue=[world["blue_units"][0]["id"]])
    left_home = world["blue_units"][1]["id"]
    before = dump(engine)
    stranger = client.put(report_url(battle), json={"unit_notes": {str(left_home): "Absent."}})
    body = assert_problem(stranger, 422, "unit_not_in_battle")
    assert body["field"] == "unit_notes" and str(left_home) in body["detail"]
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    future = client.put(report_url(battle), json={"played_on": tomorrow})
    assert_problem(future, 422, "played_on_invalid")
    too_long = client.put(report_url(battle), json={"title": "x" * 121})
    assert too_long.status_code == 422
    bad_key = client.put(report_url(battle), json={"unit_notes": {"squad": "no id"}})
    assert bad_key.status_code == 422
    assert dump(engine) == before
    missing = client.put("/api/v1/battles/999999/report", json={"title": "Nowhere"})
    assert missing.status_code == 404


def test_a_called_off_battle_has_no_report(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    assert client.post(f"/api/v1/battles/{battle['id']}/call-off").status_code == 200
    before = dump(engine)
    refused = client.put(report_url(battle), json={"title": "Never fought"})
    assert_problem(refused, 409, "battle_not_reportable")
    assert dump(engine) == before


def test_the_report_travels_with_the_campaign(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    squad = world["blue_units"][1]["id"]
    client.put(report_url(battle), json={**STORY, "unit_notes": {str(squad): "Held."}})
    with Session(engine) as session:
        document = transfer.export_campaign(session, campaign_id=world["campaign"])
        [exported] = document["battle_reports"]
        assert exported["title"] == STORY["title"]
        copy = transfer.import_campaign(session, document)
        session.commit()
        copy_id = copy.id
    battles = client.get(f"/api/v1/campaigns/{copy_id}/battles").json()["items"]
    [imported] = [b["report"] for b in battles]
    assert imported["played_on"] == STORY["played_on"]
    [(card_id, note)] = imported["unit_notes"].items()
    assert note == "Held." and int(card_id) != squad  # the copy's own card
    copied = client.get(f"/api/v1/cards/{card_id}").json()
    assert copied["name"] == "Squad Vorn"


def test_the_campaign_pages_show_the_story(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    client.put(report_url(battle), json=STORY)
    dashboard = client.get(f"/campaigns/{world['campaign']}").text
    row = dashboard.split(f'data-battle-id="{battle["id"]}"')[1].split("</tr>")[0]
    assert f'<a href="/battles/{battle["id"]}">{STORY["title"]}</a>' in row
    assert "Sweep and Clear · " in row  # the mission, under the title
    history = client.get(f"/campaigns/{world['campaign']}/history").text
    assert f"report was written: “<bdi>{STORY['title']}</bdi>”" in history  # isolated
