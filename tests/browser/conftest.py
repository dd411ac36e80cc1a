"""Browser tests: the real server (`crusade serve --demo-if-empty`, as `make run` starts it)
in its own process on a free port, driven by Debian's Chromium through Playwright.

Fixtures
- `live_server` (session): the server's base URL, with a fresh SQLite database in a temp
  DATA_DIR, migrated and holding the demo campaign (id 1, public). The first account,
  `admin` (site admin: sees and may do everything), is signed up before any test runs.
- `fresh_server` (function): the same on a brand-new database, for a test that must start
  from an empty site (costs about a second); on SQLite and, when TEST_DATABASE_URL is set,
  on PostgreSQL as well (the test runs once for each).
- `demo` (session): ids in the demo campaign (forces, a card, a battle, a decision).
- `browser` (session): Chromium. `admin_state`: storage state (cookies) of `admin`.
- `phone` / `desktop`: anonymous pages at 360x740 (touch, 2x) and 1280x800.
- `admin_phone` / `admin_desktop`: the same, logged in as `admin`.
- `new_page(viewport="phone", state=None, base_url=None, **context_options)`: a page in a
  new context (its own cookies), e.g. `new_page("phone", java_script_enabled=False)`.
- `reading_page(viewport="phone", who="visitor", color_scheme="light")`: a tab kept for the
  whole run, for a test that only goes to a page and looks (about a second cheaper).
- `phones(*usernames, at="/", **context_options)`: a phone per username (a context each:
  its own cookies and storage, as another phone has), logged in and open at `at`; the same
  username twice is two phones of one account. Every test with two phones makes them so.
- `table_battle`: a new player's Combat Patrol recorded up to "after the game" (two units a
  side); `table_battle_on(server, mustered=False)` makes another, or one at its set-up.
Every page made by these fixtures records console errors and uncaught page errors and
fails the test at teardown if there were any, except Chromium's "Failed to load resource:
... status of 4xx" for a page or script request that really was a 4xx (a refused form is
re-rendered with 422 by design; see ConsoleWatch). A test that means to cause other errors
opts out with `@pytest.mark.allow_console_errors` (optionally with regexes the messages
must match, e.g. `@pytest.mark.allow_console_errors(r"status of 500")`).

Helpers for journey tests: `sign_up(page, username)`, `log_in(page, username)`,
`log_out(page)`, `new_context_for(browser, base_url)`, `unique_name(stem)`.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Locator,
    Page,
    Response,
    StorageState,
    sync_playwright,
)
from sqlalchemy import make_url, text

from app.db.engine import make_engine
from tests.browser.live import (
    ADMIN,
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    VIEWPORTS,
    api_sign_up,
    battle_in_progress,
    csrf_form,
    start_server,
    two_forces,
)
from tests.conftest import BACKENDS, POSTGRES_URL

_names = itertools.count(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/browser is a browser test (`-m "not browser"` skips them).
    Under xdist (`make test`) they run in two groups, one worker each (tests/conftest.py's
    GROUPS)."""
    for item in items:
        if "tests/browser/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


# --- the server ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    folder = Path(tempfile.mkdtemp(prefix="crusade-browser-"))
    server = start_server(folder)
    api_sign_up(server.url, ADMIN).close()  # the first account: site admin
    yield server.url
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def fresh_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A server of the test's own on an empty database (no demo, no accounts): SQLite, and
    PostgreSQL too when TEST_DATABASE_URL names a server (a database made for the test)."""
    if request.param == "sqlite":
        server = start_server(tmp_path, demo=False)
        yield server.url
        server.stop()
        return
    admin = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"crusade_browser_{os.getpid()}_{next(_names)}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    server = start_server(tmp_path, demo=False, database_url=url)
    yield server.url
    server.stop()
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@dataclass
class Demo:
    campaign: int
    forces: list[int]
    force_names: list[str]
    card: int
    card_name: str
    battle: int
    decision: int
    campaign_name: str = ""


@pytest.fixture(scope="session")
def demo(live_server: str) -> Demo:
    """Ids in the demo campaign, found through the JSON API (as the site admin)."""
    with httpx.Client(base_url=live_server, timeout=30) as client:
        client.post("/api/v1/auth/login", json={"username": ADMIN, "password": PASSWORD})
        campaign = client.get("/api/v1/campaigns/1").json()
        forces = client.get("/api/v1/campaigns/1/forces").json()["items"]
        first = client.get(f"/api/v1/forces/{forces[0]['id']}").json()
        battles = client.get("/api/v1/campaigns/1/battles").json()["items"]
        decisions = client.get(
            f"/api/v1/forces/{forces[0]['id']}/decisions", params={"status": "answered"}
        ).json()["items"]
    return Demo(
        campaign=1,
        campaign_name=campaign["name"],
        forces=[f["id"] for f in forces],
        force_names=[f["name"] for f in forces],
        card=first["cards"][0]["id"],
        card_name=first["cards"][0]["name"],
        battle=battles[-1]["id"],
        decision=decisions[0]["id"],
    )


# --- the browser ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/ensure-chromium.sh (as root)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def new_context_for(
    browser: Browser,
    base_url: str,
    viewport: str = "phone",
    state: StorageState | None = None,
    **options: Any,
) -> BrowserContext:
    """A context of its own (own cookies: a second player), at phone size by default."""
    return browser.new_context(
        base_url=base_url, storage_state=state, **VIEWPORTS[viewport], **options
    )


class ConsoleWatch:
    """Console messages of type error and uncaught exceptions, per page.

    One kind of console error is not a fault: Chromium logs "Failed to load resource: the
    server responded with a status of 422" whenever a page or a script request gets a 4xx
    answer, and a refused form is answered exactly so (re-rendered with the error and a 4xx
    status, by design). Such messages are dropped when they name a document, xhr or fetch
    request that really was answered with that 4xx status. A 4xx for a stylesheet, script
    or image (a broken asset), and any 5xx, still count."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []  # (message, the URL it is about)
        self.refusals: set[tuple[str, int]] = set()  # (url, status) of 4xx page answers
        self._pages: list[Page] = []

    def attach(self, page: Page) -> Page:
        """Watch `page` (once, however often it is attached)."""
        if any(seen is page for seen in self._pages):
            return page
        self._pages.append(page)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append((f"page error: {error}", "")))
        page.on("response", self._response)
        return page

    def on_page(self, page: Page) -> None:
        self.attach(page)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            self.errors.append((f"console error: {message.text} ({where})", where))

    def _response(self, response: Response) -> None:
        kind = response.request.resource_type
        if 400 <= response.status < 500 and kind in ("document", "xhr", "fetch"):
            self.refusals.add((response.url, response.status))

    def _refusal(self, message: str, where: str) -> bool:
        found = _FAILED_LOAD.search(message)
        return found is not None and (where, int(found.group(1))) in self.refusals

    def unexpected(self, allowed: list[str] | None = None) -> list[str]:
        """The errors that fail a test; `allowed`: None (none allowed), [] (all allowed),
        or regexes that allowed messages match."""
        errors = [text for text, where in self.errors if not self._refusal(text, where)]
        if allowed is None:
            return errors
        if not allowed:  # the marker without patterns: any error is fine
            return []
        return [e for e in errors if not any(re.search(p, e) for p in allowed)]


_FAILED_LOAD = re.compile(r"^console error: Failed to load resource: .* status of (4\d\d) ")


@pytest.fixture
def new_page(
    request: pytest.FixtureRequest, browser: Browser, live_server: str
) -> Iterator[Callable[..., Page]]:
    """Factory: new_page(viewport="phone"|"desktop", state=None, base_url=live_server,
    **context options) -> a page in a new context, console errors watched."""
    made: list[tuple[BrowserContext, ConsoleWatch]] = []

    def make(
        viewport: str = "phone",
        state: StorageState | None = None,
        base_url: str | None = None,
        **options: Any,
    ) -> Page:
        context = new_context_for(browser, base_url or live_server, viewport, state, **options)
        watch = ConsoleWatch()
        context.on("page", watch.on_page)  # pages it opens (popups) too
        made.append((context, watch))
        return watch.attach(context.new_page())

    yield make
    problems = _console_problems(request, [watch for _, watch in made])
    for context, _ in made:
        context.close()
    _assert_no_console_problems(problems)


def _console_problems(request: pytest.FixtureRequest, watches: list[ConsoleWatch]) -> list[str]:
    """The console errors that fail the test (see `allow_console_errors`)."""
    marker = request.node.get_closest_marker("allow_console_errors")
    allowed = list(marker.args) if marker else None
    return [e for watch in watches for e in watch.unexpected(allowed)]


def _assert_no_console_problems(problems: list[str]) -> None:
    shown = [p if len(p) < 300 else p[:200] + " ... " + p[-90:] for p in problems]
    assert not problems, "the browser reported errors:\n  " + "\n  ".join(shown)


@dataclass
class _Reader:
    page: Page
    watch: ConsoleWatch


@pytest.fixture(scope="session")
def _readers(browser: Browser) -> Iterator[dict[tuple[str, str, str], _Reader]]:
    kept: dict[tuple[str, str, str], _Reader] = {}  # closed before the browser
    yield kept
    for reader in kept.values():
        reader.page.context.close()


@pytest.fixture
def reading_page(
    request: pytest.FixtureRequest,
    _readers: dict[tuple[str, str, str], _Reader],
    browser: Browser,
    live_server: str,
) -> Iterator[Callable[..., Page]]:
    """Factory: reading_page(viewport="phone", who="visitor"|"admin", color_scheme="light")
    -> a tab on the live server kept for the whole run, one per (viewport, who, scheme), for
    tests that only go to a page and look at it. A new tab costs about a second (a renderer
    process of its own, the site's assets, axe compiled again); one kept costs a navigation.
    The console errors it logs during a test are that test's, checked as new_page's are."""
    used: list[_Reader] = []

    def get(viewport: str = "phone", who: str = "visitor", color_scheme: str = "light") -> Page:
        key = (viewport, who, color_scheme)
        reader = _readers.get(key)
        if reader is None or reader.page.is_closed():
            state = request.getfixturevalue("admin_state") if who == "admin" else None
            context = new_context_for(
                browser, live_server, viewport, state, color_scheme=color_scheme
            )
            reader = _readers[key] = _Reader(context.new_page(), ConsoleWatch())
            reader.watch.attach(reader.page)
        if reader not in used:
            reader.watch.errors.clear()
            reader.watch.refusals.clear()
            used.append(reader)
        return reader.page

    yield get
    _assert_no_console_problems(_console_problems(request, [r.watch for r in used]))


@pytest.fixture
def phones(new_page: Callable[..., Page]) -> Callable[..., list[Page]]:
    """Factory: phones(*usernames, at="/", **context options) -> one phone per username,
    each a browser context of its own (its own cookies and storage, as another phone has),
    logged in as that username and open at `at`. The same username twice: two phones of
    one account (the recorder's and a second screen)."""

    def make(*usernames: str, at: str = "/", **options: Any) -> list[Page]:
        made = []
        for username in usernames:
            page = new_page("phone", **options)
            log_in(page, username, next=at)
            made.append(page)
        return made

    return make


@dataclass(frozen=True)
class TableBattle:
    """A new player's battle in the wizard: a campaign with Ultramarines and Waaagh!, two
    units each (live.py's two_forces), recorded as a Combat Patrol up to "after the game"
    (battle_in_progress), or only started."""

    player: str
    campaign: int
    base: str  # the wizard draft's address: base + "/setup", "/after" ...

    @property
    def after(self) -> str:
        return f"{self.base}/after"


def table_battle_on(server: str, *, mustered: bool = True) -> TableBattle:
    """A TableBattle on `server`; not `mustered`: the draft just started, at its set-up."""
    name = unique_name("table")
    client = api_sign_up(server, name)
    campaign, force, opponent = two_forces(client)
    if mustered:
        base = battle_in_progress(client, campaign, force, opponent)
    else:
        started = client.post(f"/campaigns/{campaign}/battles/new", data=csrf_form(client))
        base = started.headers["location"].rsplit("/", 1)[0]
    client.close()
    return TableBattle(name, campaign, base)


@pytest.fixture
def table_battle(live_server: str) -> TableBattle:
    return table_battle_on(live_server)


@pytest.fixture(scope="session")
def admin_state(browser: Browser, live_server: str) -> StorageState:
    """The site admin's cookies, logged in once through the login page."""
    context = new_context_for(browser, live_server, "desktop")
    page = context.new_page()
    log_in(page, ADMIN)
    state = context.storage_state()
    context.close()
    return state


@pytest.fixture
def phone(new_page: Callable[..., Page]) -> Page:
    return new_page("phone")


@pytest.fixture
def desktop(new_page: Callable[..., Page]) -> Page:
    return new_page("desktop")


@pytest.fixture
def admin_phone(new_page: Callable[..., Page], admin_state: StorageState) -> Page:
    return new_page("phone", admin_state)


@pytest.fixture
def admin_desktop(new_page: Callable[..., Page], admin_state: StorageState) -> Page:
    return new_page("desktop", admin_state)


# --- journey helpers -----------------------------------------------------------------------


def unique_name(stem: str) -> str:
    """A username no other test on the shared server uses (3-40 chars, lower-case)."""
    return f"{stem}-{os.getpid() % 10000}-{next(_names)}"


def sign_up(
    page: Page, username: str, password: str = PASSWORD, display_name: str = "", next: str = "/"
) -> None:
    """Create an account through the sign-up page; the page ends logged in, at `next`."""
    page.goto(f"/signup?next={quote(next)}")
    page.get_by_label("Username").fill(username)
    if display_name:
        page.get_by_label("Display name (optional)").fill(display_name)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.locator("main").get_by_role("button", name="Sign up").click()
    _assert_logged_in(page, username, display_name)


def log_in(
    page: Page, username: str, password: str = PASSWORD, next: str = "/", display_name: str = ""
) -> None:
    """Log in through the login page; the page ends logged in, at `next`."""
    page.goto(f"/login?next={quote(next)}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.locator("main").get_by_role("button", name="Log in").click()
    _assert_logged_in(page, username, display_name)


def as_screen(page: Page, scheme: str, width: int, at: str | None = None) -> Page:
    """`page` shown at another phone width and colour scheme, as a new context made with
    them would show it (the media query and the viewport are the same either way): one tab
    looked at on three screens, where a new tab and its log-in cost 1-2 s each. Then `at`
    is loaded, afresh even where the tab is there already (a goto to the same address with
    a #fragment would not load it, and colours switched live would still be mid-transition
    when checked); without `at` the caller goes on to another page."""
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    page.set_viewport_size({"width": width, "height": 740})
    if at is not None and urljoin(page.url, at) == page.url:
        page.reload()
    elif at is not None:
        page.goto(at)
    return page


def log_out(page: Page) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name="Log out").click()
    assert page.get_by_role("link", name="Log in").count() == 1


def _assert_logged_in(page: Page, username: str, display_name: str = "") -> None:
    account = page.locator("header a[href='/account']")
    assert account.count() == 1, f"not logged in as {username}: {page.url}\n{page.content()}"
    assert (display_name or username) in account.inner_text()


def mission(page: Page, size: str, name: str) -> Locator:
    """A mission's chip on the set-up step (one group of radio chips per battle size)."""
    return page.get_by_role("group", name=f"Mission ({size})").get_by_label(
        re.compile(f"{re.escape(name)}$")
    )
