"""Website tests through TestClient: real accounts logging in through the pages, forms
posted with their CSRF field, against the same databases as the API tests."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.main import create_app
from tests.conftest import Snapshots

CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


class Browser:
    """A TestClient with a person's session: ``post`` adds the page's CSRF field, as the
    forms do; ``api`` is the same session on the JSON API (for quick set-up)."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def get(self, url: str, **kwargs: Any) -> Any:
        return self.client.get(url, **kwargs)

    def csrf(self) -> str:
        found = CSRF.search(self.client.get("/account").text)
        assert found, "no CSRF field on the account page: not logged in?"
        return found.group(1)

    def post(self, url: str, data: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        form = {"csrf_token": self.csrf(), **(data or {})}
        return self.client.post(url, data=form, follow_redirects=False, **kwargs)

    def api(self, method: str, url: str, **kwargs: Any) -> Any:
        token = self.client.get("/api/v1/auth/csrf").json()["csrf_token"]
        headers = {"X-CSRF-Token": token, **kwargs.pop("headers", {})}
        response = self.client.request(method, f"/api/v1{url}", headers=headers, **kwargs)
        assert response.status_code < 400, response.text
        return response.json()


class Site:
    """The test's app, made when first needed and shared by its visitors and people (as one
    server process serves everyone); making an app is the dearest part of a test's set-up."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._app: FastAPI | None = None

    @property
    def app(self) -> FastAPI:
        if self._app is None:
            self._app = create_app(self.engine)
        return self._app


@pytest.fixture
def web_app(engine: Engine) -> Site:
    return Site(engine)


@pytest.fixture
def site(web_app: Site) -> Iterator[TestClient]:
    """An anonymous visitor."""
    with TestClient(web_app.app) as client:
        yield client


class People:
    """`person(username)`: a signed-up, logged-in person with a client of their own (the first
    one is the site admin)."""

    def __init__(self, site: Site, snapshots: Snapshots) -> None:
        self.site = site
        self.engine = site.engine
        self.snapshots = snapshots
        self.clients: list[TestClient] = []

    def new_client(self) -> TestClient:
        client = TestClient(self.site.app)
        client.__enter__()
        self.clients.append(client)
        return client

    def __call__(self, username: str) -> Browser:
        client = self.new_client()
        response = client.post(
            "/signup",
            data={"username": username, "password": "a good password", "next": "/"},
            follow_redirects=False,
        )
        assert response.status_code == 303, response.text
        return Browser(client)

    def close(self) -> None:
        for client in self.clients:
            client.__exit__(None, None, None)


@pytest.fixture
def person(web_app: Site, snapshots: Snapshots) -> Iterator[People]:
    """Make a signed-up, logged-in person (the first one is the site admin)."""
    people = People(web_app, snapshots)
    yield people
    people.close()


def campaign_with_two_players(person: Callable[[str], Browser]) -> dict[str, Any]:
    """A campaign run by 'orga' (site admin), with 'ruby' and 'kai' as players, each with a
    force of three units. Returns the browsers and ids. Made once per backend, then restored
    from a snapshot of the database (see tests/conftest.py's `Snapshots.prepared`)."""
    if not isinstance(person, People):
        return _campaign_with_two_players(person)
    world = person.snapshots.prepared(
        person.engine,
        "campaign_with_two_players",
        lambda: _clients(_campaign_with_two_players(person)),
        person.new_client,
    )
    return {k: Browser(v) if isinstance(v, TestClient) else v for k, v in world.items()}


def _clients(world: dict[str, Any]) -> dict[str, Any]:
    return {k: v.client if isinstance(v, Browser) else v for k, v in world.items()}


def _campaign_with_two_players(person: Callable[[str], Browser]) -> dict[str, Any]:
    orga, ruby, kai = person("orga"), person("ruby"), person("kai")
    campaign = orga.api("POST", "/campaigns", json={"name": "War for Vigilus"})
    invite = orga.api(
        "POST", f"/campaigns/{campaign['id']}/invites", json={"role": "player", "max_uses": 2}
    )
    forces = {}
    for who, name in ((ruby, "Ultramarines 4th"), (kai, "Waaagh! Gorbad")):
        who.api("POST", f"/invites/{invite['code']}/accept")
        forces[name] = who.api(
            "POST",
            f"/campaigns/{campaign['id']}/forces",
            json={"name": name, "crusade_faction": "IMPERIUM", "player_name": name},
        )
        for unit, power in (("Captain", 5), ("Intercessor Squad", 5), ("Hellblasters", 6)):
            keywords = ["IMPERIUM", "INFANTRY"] + (["CHARACTER"] if unit == "Captain" else [])
            who.api(
                "POST",
                f"/forces/{forces[name]['id']}/cards",
                json={"name": unit, "power_rating": power, "keywords": keywords},
            )
    return {
        "orga": orga,
        "ruby": ruby,
        "kai": kai,
        "campaign_id": campaign["id"],
        "ruby_force": forces["Ultramarines 4th"]["id"],
        "kai_force": forces["Waaagh! Gorbad"]["id"],
    }


def without_visit(page: str) -> str:
    """A member's dashboard tells what happened since their previous visit: each read is a
    visit, so the two builds compared differ there alone."""
    start = page.find('id="since"')
    page = page if start < 0 else page[:start] + page[page.find("</section>", start) :]
    # and the CSRF token is masked afresh on every page (issue 49: BREACH)
    return re.sub(r'value="[0-9a-f]{128}"', 'value="masked-token"', page)
