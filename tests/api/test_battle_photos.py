"""Photos of a battle through HTTP (issue 23): uploaded by a player, kept as JPEG
renditions with no metadata (the camera's GPS position above all), the camera's rotation
applied to the pixels, hostile files refused with nothing stored, deleted with their files."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.config import get_settings
from app.db.models import Campaign, Event
from app.services.feed import events, webhook_worker
from tests.api.helpers import assert_problem, dump
from tests.api.test_battle_flow import lord_falls, muster, setup_two_forces

GPS_IFD = 0x8825
ORIENTATION = 0x0112


def phone_photo(size: tuple[int, int] = (400, 200)) -> bytes:
    """A JPEG as a phone writes it: turned on its side (EXIF orientation 6: rotate 90°) and
    carrying the camera's GPS position."""
    exif = Image.Exif()
    exif[ORIENTATION] = 6
    gps = exif.get_ifd(GPS_IFD)
    gps.update({1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)})
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, "JPEG", exif=exif)
    data = out.getvalue()
    assert Image.open(io.BytesIO(data)).getexif().get_ifd(GPS_IFD)  # the upload has it
    return data


def upload(client: TestClient, battle: dict[str, Any], data: bytes, **form: str) -> Any:
    return client.post(
        f"/api/v1/battles/{battle['id']}/photos",
        files={"file": ("IMG_0001.jpg", data, "image/jpeg")},
        data=form,
    )


def photo_files() -> set[Path]:
    return {p for p in Path(os.environ["PHOTO_DIR"]).rglob("*") if p.is_file()}


def test_a_phone_photo_is_kept_upright_and_without_metadata(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    added = upload(client, battle, phone_photo(), caption="The relay, turn 3")
    assert added.status_code == 201, added.text
    photo = added.json()
    assert (photo["width"], photo["height"], photo["caption"]) == (200, 400, "The relay, turn 3")
    assert added.headers["location"] == photo["url"]
    assert [r["width"] for r in photo["renditions"]] == [200]
    served = client.get(photo["url"])
    assert served.status_code == 200 and served.headers["content-type"] == "image/jpeg"
    assert "private" in served.headers["cache-control"]
    image = Image.open(io.BytesIO(served.content))
    assert image.size == (200, 400)  # the rotation is in the pixels now
    assert dict(image.getexif()) == {}  # no EXIF at all: no GPS, no orientation
    assert not {"exif", "xmp", "XML:com.adobe.xmp", "icc_profile", "photoshop"} & set(image.info)
    assert b"Exif" not in served.content[:4096]
    listed = client.get(f"/api/v1/battles/{battle['id']}").json()["photos"]
    assert [p["id"] for p in listed] == [photo["id"]]


def test_an_iphone_heic_photo_is_read_and_loses_its_location(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    exif = Image.Exif()
    gps = exif.get_ifd(GPS_IFD)
    gps.update({1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)})
    out = io.BytesIO()
    Image.new("RGB", (600, 400), (30, 30, 200)).save(out, "HEIF", exif=exif, quality=80)
    heic = out.getvalue()
    assert heic[4:12] == b"ftypheic" and Image.open(io.BytesIO(heic)).getexif().get_ifd(GPS_IFD)
    added = client.post(
        f"/api/v1/battles/{battle['id']}/photos",
        files={"file": ("IMG_0002.HEIC", heic, "image/heic")},
    )
    assert added.status_code == 201, added.text
    photo = added.json()
    assert (photo["width"], photo["height"]) == (600, 400)
    served = client.get(photo["url"])
    image = Image.open(io.BytesIO(served.content))
    assert image.format == "JPEG" and dict(image.getexif()) == {}


def test_a_big_photo_gets_every_width(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    out = io.BytesIO()
    Image.new("RGB", (2400, 1600), (10, 90, 10)).save(out, "PNG")
    photo = upload(client, battle, out.getvalue()).json()
    assert [r["width"] for r in photo["renditions"]] == [320, 960, 1920]
    assert (photo["width"], photo["height"]) == (1920, 1280)
    small = Image.open(io.BytesIO(client.get(photo["renditions"][0]["url"]).content))
    assert small.size == (320, 213)


def test_hostile_files_are_refused_and_nothing_is_kept(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    before, files = dump(engine), photo_files()
    not_an_image = upload(client, battle, b"<html><script>alert(1)</script></html>")
    assert_problem(not_an_image, 422, "photo_unreadable")
    bomb = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(bomb, "PNG")  # 100 million pixels in a few KB
    assert len(bomb.getvalue()) < 100_000
    assert_problem(upload(client, battle, bomb.getvalue()), 422, "photo_too_many_pixels")
    tiff = io.BytesIO()
    Image.new("RGB", (10, 10)).save(tiff, "TIFF")
    assert_problem(upload(client, battle, tiff.getvalue()), 422, "photo_type")
    truncated = phone_photo()[:600]
    assert_problem(upload(client, battle, truncated), 422, "photo_unreadable")
    assert dump(engine) == before and photo_files() == files


def test_a_deleted_photo_takes_its_files_with_it(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    photo = upload(client, battle, phone_photo()).json()
    assert any(f"/{photo['id']}/" in str(p) for p in photo_files())
    gone = client.delete(f"/api/v1/battles/{battle['id']}/photos/{photo['id']}")
    assert gone.status_code == 200, gone.text
    assert not any(str(p).endswith(f"/{photo['id']}/200.jpg") for p in photo_files())
    assert_problem(client.get(photo["url"]), 404, "photo_not_found")
    assert client.get(f"/api/v1/battles/{battle['id']}").json()["photos"] == []
    again = client.delete(f"/api/v1/battles/{battle['id']}/photos/{photo['id']}")
    assert_problem(again, 404, "photo_not_found")


def test_a_photo_is_read_only_through_its_own_battle(client: TestClient) -> None:
    world = setup_two_forces(client)
    first = muster(client, world)
    photo = upload(client, first, phone_photo()).json()
    client.post(f"/api/v1/battles/{first['id']}/call-off")
    second = muster(client, world)
    elsewhere = f"/api/v1/battles/{second['id']}/photos/{photo['id']}/200"
    assert_problem(client.get(elsewhere), 404, "photo_not_found")
    assert_problem(client.get(photo["url"].replace("/200", "/9999")), 404, "photo_not_found")


DISCORD = "https://discord.com/api/webhooks/123/abc"


def discord_message(engine: Engine, kind: str) -> dict[str, Any]:
    """What a Discord webhook would be sent for the campaign's last event of a kind."""
    with Session(engine) as session:
        row = session.exec(
            select(Event).where(Event.kind == kind).order_by(col(Event.id).desc())
        ).first()
        assert row is not None and row.id is not None
        event = events.one_event(session, row.id)
        embed = webhook_worker.story_embed(session, DISCORD, event)
        return dict(json.loads(webhook_worker.body_for(DISCORD, event, embed=embed)))


def test_a_story_reaches_discord_with_its_title_result_and_first_photo(
    client: TestClient, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
    story = {"title": "The relay at Kharon", "narrative": "Vorn held.\n\nThe Lord fell."}
    assert client.put(f"/api/v1/battles/{battle['id']}/report", json=story).status_code == 200
    first = upload(client, battle, phone_photo((800, 1200))).json()  # 1200 wide, upright
    upload(client, battle, phone_photo())
    site = get_settings().model_copy(update={"public_url": "https://crusade.example.org/"})
    monkeypatch.setattr(webhook_worker, "get_settings", lambda: site)

    private = discord_message(engine, "report_written")
    [card] = private["embeds"]
    assert card["title"] == "The relay at Kharon"
    assert card["description"].startswith("Ultramarines 10 – 10 Black Legion: a draw")
    assert "Vorn held." in card["description"]
    assert card["url"] == f"https://crusade.example.org/battles/{battle['id']}"
    assert "image" not in card  # a private campaign's photo is never handed to Discord

    with Session(engine) as session:
        campaign = session.get(Campaign, world["campaign"])
        assert campaign is not None
        campaign.public = True
        session.add(campaign)
        session.commit()
    [card] = discord_message(engine, "photo_added")["embeds"]
    assert card["image"]["url"] == (
        f"https://crusade.example.org/api/v1/battles/{battle['id']}/photos/{first['id']}/960"
    )
    served = client.get(card["image"]["url"].removeprefix("https://crusade.example.org"))
    assert served.status_code == 200 and Image.open(io.BytesIO(served.content)).width == 960
    assert "embeds" not in discord_message(engine, "battle_recorded")  # numbers: one line


def test_the_export_carries_the_photos_as_files_on_request(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    photo = upload(client, battle, phone_photo(), caption="Turn 3").json()
    url = f"/api/v1/campaigns/{world['campaign']}/export"
    plain = client.get(url)
    assert plain.headers["content-type"] == "application/json"
    assert "battle_photos" not in plain.json()  # left out: a JSON document has no files
    archived = client.get(url, params={"photos": "true"})
    assert archived.status_code == 200, archived.text
    assert archived.headers["content-type"] == "application/zip"
    assert archived.headers["content-disposition"].endswith('.zip"')
    with zipfile.ZipFile(io.BytesIO(archived.content)) as archive:
        document = json.loads(archive.read("campaign.json"))
        [row] = document["battle_photos"]
        assert (row["caption"], row["widths"]) == ("Turn 3", [200])
        served = client.get(photo["url"]).content
        assert archive.read(f"photos/{row['id']}/200.jpg") == served
    assert_problem(client.get(url, params={"photos": "maybe"}), 422, "request_invalid")
