"""Screenshots of the website's main pages, for the docs: `make screenshots`.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots] [--only home,card]
                                            [--scale 2]

Starts the server on a fresh temp database with the demo campaign loaded, signs up the
first account (a site admin, who may see every page), and saves each main page as
<out>/<page>-phone.png (360x740 touch screen, the page's top 1480 px) and <out>/<page>-desktop.png
(1280x800, the first screen), at 1 device pixel per CSS pixel unless --scale says more.
The log-in and sign-up pages are taken logged out. A page that does not answer 200 yet
(still being built) is skipped with a warning.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: make the tests' helpers importable

from tests.browser.live import (  # noqa: E402
    ADMIN,
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    VIEWPORTS,
    api_sign_up,
    battle_in_progress,
    csrf_form,
    start_server,
)

ANONYMOUS = {"login", "signup"}
MAX_PHONE_HEIGHT = 1480  # CSS pixels: two screens of a 360x740 phone


def main_pages(base_url: str) -> dict[str, str]:
    """Page name -> path, with ids from the demo campaign (found through the JSON API)."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        client.post("/api/v1/auth/login", json={"username": ADMIN, "password": PASSWORD})
        forces = client.get("/api/v1/campaigns/1/forces").json()["items"]
        force = forces[0]["id"]
        card = client.get(f"/api/v1/forces/{force}").json()["cards"][0]["id"]
        battle = client.get("/api/v1/campaigns/1/battles").json()["items"][-1]["id"]
        answered = client.get(f"/api/v1/forces/{force}/decisions", params={"status": "answered"})
        decision = answered.json()["items"][0]["id"]
        wizard = battle_in_progress(client, 1, forces[0]["id"], forces[1]["id"])
        # on to the review (the earlier steps stay open): the scores typed, Next
        form = {"form": "after", "vp_0": "40", "vp_1": "20", "action": "review"}
        client.post(f"{wizard}/after", data={**csrf_form(client), **form})
    return {
        "home": "/",
        "login": "/login",
        "signup": "/signup",
        "account": "/account",
        "dashboard": "/campaigns/1",
        "members": "/campaigns/1/members",
        "order-of-battle": f"/forces/{force}",
        "requisitions": f"/forces/{force}/requisitions",
        "add-unit": f"/forces/{force}/cards/new",
        "card": f"/cards/{card}",
        "card-print": f"/cards/{card}/print",
        "rules": "/rules",
        "rules-agendas": "/rules/agendas",
        "rules-missions": "/rules/missions",
        "rules-honours": "/rules/honours",
        "rules-scars": "/rules/scars",
        "new-battle": "/campaigns/1/battles/new",
        "battle": f"/battles/{battle}",
        "decision": f"/decisions/{decision}",
        "wizard-setup": f"{wizard}/setup",
        "wizard-muster": f"{wizard}/muster",
        "wizard-after": f"{wizard}/after",
        "wizard-out-of-action": f"{wizard}/out_of_action",
        "wizard-review": f"{wizard}/review",
    }


def log_in(browser: Browser, base_url: str) -> Any:
    """The admin's cookies, from logging in through the login page."""
    context = browser.new_context(base_url=base_url)
    page = context.new_page()
    page.goto("/login")
    page.get_by_label("Username").fill(ADMIN)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.locator("main").get_by_role("button", name="Log in").click()
    state = context.storage_state()
    context.close()
    return state


def shoot(page: Page, path: str, target: Path, *, full_page: bool) -> str | None:
    """Save one screenshot; the reason it was skipped, if it was."""
    response = page.goto(path)
    status = response.status if response else 0
    if status != 200:
        return f"answered {status}" + (" (not built yet?)" if status == 404 else "")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    if full_page:  # the whole page, up to two phone screens (the README shows a few)
        height = page.evaluate("() => document.documentElement.scrollHeight")
        width = page.viewport_size["width"] if page.viewport_size else 360
        clip = {"x": 0, "y": 0, "width": width, "height": min(height, MAX_PHONE_HEIGHT)}
        page.screenshot(path=str(target), full_page=True, clip=clip, animations="disabled")
    else:
        page.screenshot(path=str(target), animations="disabled")
    return None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--only", default="", help="comma-separated page names")
    parser.add_argument(
        "--scale", type=float, default=1, help="device pixels per CSS pixel (2: retina, 4x bytes)"
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing: run scripts/ensure-chromium.sh (as root)")
    args.out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="crusade-screenshots-"))
    server = start_server(folder)
    saved = skipped = 0
    try:
        api_sign_up(server.url, ADMIN).close()  # the first account: site admin
        pages = main_pages(server.url)
        wanted = [n for n in args.only.split(",") if n] or list(pages)
        unknown = sorted(set(wanted) - set(pages))
        if unknown:
            sys.exit(f"unknown page(s) {unknown}; known: {', '.join(pages)}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            admin = log_in(browser, server.url)
            for viewport in ("phone", "desktop"):
                for state in (None, admin):
                    context = browser.new_context(
                        base_url=server.url,
                        storage_state=state,
                        color_scheme="light",
                        **{**VIEWPORTS[viewport], "device_scale_factor": args.scale},
                    )
                    page = context.new_page()
                    for name in wanted:
                        if (name in ANONYMOUS) != (state is None):
                            continue
                        target = args.out / f"{name}-{viewport}.png"
                        why = shoot(page, pages[name], target, full_page=viewport == "phone")
                        if why:
                            print(f"warning: skipped {name} ({pages[name]}): {why}")
                            skipped += 1
                        else:
                            print(f"saved {target}")
                            saved += 1
                    context.close()
            browser.close()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{saved} screenshots saved, {skipped} skipped")


if __name__ == "__main__":
    main()
