"""Issue 39, case 6: a real roster runs to several hundred KB, past the 256 KiB every other
request body is held to; roster uploads have their own bound, still counted as the body
arrives, and the zip-bomb guards stay (tests/services/rosters/test_roster_parse.py). The real file
is
a 2,000-point Blood Angels list whose .ros is 370,448 bytes (SOURCES.md); four real
detachments put together give a larger one of several detachments. Runs on SQLite and
PostgreSQL (the client fixture)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.edge.hardening import MAX_BODY, MAX_ROSTER_BODY
from app.services.rosters.roster_parse import MAX_ROSTER_BYTES, parse_roster
from tests.api.helpers import assert_problem, campaign, dump, force
from tests.api.test_roster_api import post
from tests.services.rosters.test_roster_parse import ros_of, zipped
from tests.services.rosters.test_roster_real_files import BLOOD_ANGELS_2000

# The real one: one Battalion, 12 units, 106 PL; its .ros as the list builder saved it
BLOOD_ANGELS = ros_of("blood_angels_2000.rosz")

# Four real detachments (SOURCES.md): a Salamanders Battalion and a Blood Angels Patrol, twice
PARTS = ("salamanders_battalion.rosz", "blood_angels.rosz") * 2


def four_detachments() -> bytes:
    """One .ros holding the forces of PARTS, its own totals the sum of theirs, as
    BattleScribe writes a roster of several detachments."""
    files = [ros_of(name) for name in PARTS]
    forces = b"".join(f[f.index(b"<forces>") + 8 : f.index(b"</forces>")] for f in files)
    first = files[0]
    head = first[: first.index(b"<forces>") + 8]
    power = sum(parse_roster(f).total_power or 0 for f in files)
    points = sum(parse_roster(f).total_points or 0 for f in files)
    head = re.sub(rb'value="[0-9.]+" name=" PL"', f'value="{power}" name=" PL"'.encode(), head)
    head = re.sub(rb'value="[0-9.]+" name="pts"', f'value="{points}" name="pts"'.encode(), head)
    return head + forces + first[first.index(b"</forces>") :]


LARGE = four_detachments()


def test_the_large_roster_is_real_size() -> None:
    assert len(LARGE) > 371_950 > MAX_BODY
    roster = parse_roster(LARGE)
    # each Blood Angels Patrol's "Lieutenants" holds two Lieutenants: two units (ruling 76)
    assert len(roster.detachments) == 4 and len(roster.units) == 22
    assert roster.read_power == roster.total_power == 124 and roster.unreadable == ()


def test_a_real_370_kb_ros_previews_unit_by_unit_and_imports(
    client: TestClient, engine: Engine
) -> None:
    """Every unit as read by hand (tests/services/rosters/test_roster_real_files.py); the whole list
    is past the Supply Limit (50 PL), so a player adds what fits."""
    assert len(BLOOD_ANGELS) == 370_448 > MAX_BODY
    force_id = force(client, campaign(client), "Angels of Baal", "IMPERIUM")
    shown = post(client, force_id, BLOOD_ANGELS, preview=True)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    read = [
        (u["key"], u["name"], u["power_rating"], frozenset(u["keywords"])) for u in body["units"]
    ]
    assert read == BLOOD_ANGELS_2000
    assert body["read_power"] == body["roster_power_level"] == 106 and body["unreadable"] == []
    assert [u["problem"] for u in body["units"]] == [None] * 12
    before = dump(engine)
    assert_problem(post(client, force_id, BLOOD_ANGELS), 422, "supply_limit_exceeded")
    assert dump(engine) == before
    added = post(client, force_id, BLOOD_ANGELS, units=["1.3", "1.4", "1.13"])  # 17+15+8 PL
    assert added.status_code == 201, added.text
    cards = added.json()["cards"]
    assert [(c["name"], c["power_rating"]) for c in cards] == [
        ("Sanguinary Guard", 17), ("Death Company Marines", 15), ("Chapter Master", 8)
    ]  # fmt: skip
    assert {"FLY", "JUMP PACK", "CHAPTER MASTER", "CHARACTER"} <= set(cards[2]["keywords"])


def test_a_large_ros_previews_and_imports(client: TestClient) -> None:
    force_id = force(client, campaign(client), "Sons of Sanguinius", "IMPERIUM")
    shown = post(client, force_id, LARGE, preview=True)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert len(body["units"]) == 22 and body["read_power"] == body["roster_power_level"] == 124
    firsts = [
        next(u["key"] for u in body["units"] if u["key"].startswith(f"{n}.")) for n in (1, 2, 3, 4)
    ]
    added = post(client, force_id, LARGE, units=firsts)
    assert added.status_code == 201, added.text
    assert [c["name"] for c in added.json()["cards"]] == ["Captain", "Primaris Lieutenant"] * 2


def test_the_same_roster_zipped_reads_the_same(client: TestClient) -> None:
    force_id = force(client, campaign(client), "Sons of Sanguinius", "IMPERIUM")
    plain = post(client, force_id, LARGE, preview=True).json()
    packed = post(client, force_id, zipped(("big.ros", LARGE)), preview=True, filename="b.rosz")
    assert packed.status_code == 200 and packed.json()["units"] == plain["units"]


def test_past_the_roster_bound_it_is_refused_and_nothing_changes(
    client: TestClient, engine: Engine
) -> None:
    force_id = force(client, campaign(client))
    before = dump(engine)
    padded = LARGE.replace(b"<forces>", b"<forces>" + b" " * MAX_ROSTER_BYTES, 1)
    assert_problem(post(client, force_id, padded, preview=True), 413, "roster_too_large")
    huge = b" " * (MAX_ROSTER_BODY + 1)
    assert_problem(post(client, force_id, huge, preview=True), 413, "request_too_large")
    assert dump(engine) == before


def test_other_bodies_keep_their_bound(client: TestClient) -> None:
    force_id = force(client, campaign(client))
    answer = client.patch(f"/api/v1/forces/{force_id}", json={"name": "x" * (MAX_BODY + 1)})
    assert_problem(answer, 413, "request_too_large")


def test_a_chunked_upload_is_counted_as_it_comes(client: TestClient, engine: Engine) -> None:
    """No declared length: the bound still holds, counted chunk by chunk."""
    force_id = force(client, campaign(client))
    before = dump(engine)
    boundary = "issue39"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.ros"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()

    def chunks() -> Iterator[bytes]:
        yield head
        for _ in range(MAX_ROSTER_BODY // (256 * 1024) + 1):
            yield b" " * (256 * 1024)

    response = client.post(
        f"/api/v1/forces/{force_id}/roster?preview=true",
        content=chunks(),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert "content-length" not in response.request.headers
    assert_problem(response, 413, "request_too_large")
    assert dump(engine) == before


def test_a_real_ros_of_four_detachments_and_three_factions(client: TestClient) -> None:
    """Case 6 with a real multi-detachment file (BlueWinds/bluescribe, SOURCES.md): 299,792
    bytes of .ros, Death Guard, Daemons and Chaos Space Marines; a CHAOS force previews every
    unit of all four detachments, each with its sub-faction filled."""
    chaos = ros_of("chaos_four_detachments_emperors_children.rosz")
    assert len(chaos) == 299_792 > MAX_BODY
    force_id = force(client, campaign(client), "Mixed Warband", "CHAOS")
    shown = post(client, force_id, chaos, preview=True)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert len(body["units"]) == 13 and body["unreadable"] == []
    assert body["read_power"] == body["roster_power_level"] == 110
    assert [u["problem"] for u in body["units"]] == [None] * 13
    legion = [u for u in body["units"] if "EMPEROR'S CHILDREN" in u["keywords"]]
    assert [u["name"] for u in legion] == [
        "Master of Executions", "Terminators", "Dreadclaw Drop Pod", "Chaos Cultists", "Chosen"
    ]  # fmt: skip
