"""A battle's story at the table (issue 23), in Chromium at 360 px: a player writes the
report and adds two photos from the battle page (with the upload's progress), and the page
passes the checks in light and dark. The result is read back through the JSON API. On the
shared server: a page needs one engine; the API tests cover both."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import log_in, unique_name
from tests.browser.live import api_sign_up, battle_in_progress, two_forces

# What the upload's status line says, in order (a page load would lose the list).
WATCH_STATUS = """() => {
  window.statusesSeen = [];
  new MutationObserver(() => {
    const line = document.querySelector("[data-upload-status]");
    const text = line ? line.textContent : "";
    if (text && window.statusesSeen.at(-1) !== text) window.statusesSeen.push(text);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def camera_file(folder: Path, name: str, colour: tuple[int, int, int]) -> Path:
    out = io.BytesIO()
    Image.new("RGB", (1600, 1200), colour).save(out, "JPEG", quality=90)
    path = folder / name
    path.write_bytes(out.getvalue())
    return path


def test_a_report_with_two_photos_from_the_battle_page(
    new_page: Callable[..., Page], live_server: str, tmp_path: Path
) -> None:
    orga = unique_name("orga")
    client = api_sign_up(live_server, orga)
    campaign, *_forces = ids = two_forces(client)
    battle_in_progress(client, *ids)
    [battle] = client.get(f"/api/v1/campaigns/{campaign}/battles").json()["items"]
    page = new_page("phone", base_url=live_server)
    log_in(page, orga, next=f"/battles/{battle['id']}")

    page.get_by_role("button", name="Write the report").click()
    page.get_by_label("Title").fill("The relay at Kharon")
    page.get_by_label("Where").fill("Warhammer Lyon")
    page.get_by_label("What happened").fill(
        "The Boyz came over the ridge.\n\nThe Captain held the relay.\n\n**It held.**"
    )
    page.get_by_label("Captain").fill("Held the relay alone")
    with page.expect_navigation():
        page.get_by_role("button", name="Save the report").click()
    expect(page.get_by_test_id("report-narrative").locator("strong")).to_have_text("It held.")

    files = [
        camera_file(tmp_path, f"IMG_000{i}.jpg", c)
        for i, c in ((1, (150, 20, 20)), (2, (20, 20, 150)))
    ]
    page.get_by_label("Add photos").set_input_files(files)
    page.get_by_label("Caption").fill("Turn 3")
    page.evaluate(WATCH_STATUS)
    page.get_by_role("button", name="Upload").click()
    expect(page.locator("[data-upload-status]")).to_have_text("2 photos added.")
    expect(page.locator("#photos figure")).to_have_count(2)
    said = page.evaluate("window.statusesSeen")  # no page load: the section was swapped
    assert said[0] == "Uploading 2 photos…" and said[-1] == "2 photos added.", said
    assert_page_ok(page)

    read = client.get(f"/api/v1/battles/{battle['id']}").json()
    assert read["report"]["title"] == "The relay at Kharon"
    assert list(read["report"]["unit_notes"].values()) == ["Held the relay alone"]
    assert [(p["caption"], p["width"]) for p in read["photos"]] == [("Turn 3", 1600)] * 2
    client.close()

    dark = new_page("phone", base_url=live_server, color_scheme="dark")
    log_in(dark, orga, next=f"/battles/{battle['id']}")
    expect(dark.locator("#photos figure img").first).to_be_visible()
    assert_page_ok(dark)
