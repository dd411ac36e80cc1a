"""Every form on the pages a player uses carries the session's CSRF token: a form whose hidden
field came out empty would be refused with 403 in a real browser."""

from __future__ import annotations

import re
from collections.abc import Callable

from app.edge.csrf import unmask
from tests.web.conftest import Browser, campaign_with_two_players

TOKEN = re.compile(r'name="csrf_token" value="([^"]*)"')


def test_every_form_carries_the_session_token(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    card = ruby.api("GET", f"/forces/{world['ruby_force']}")["cards"][0]["id"]
    started = ruby.post(f"/campaigns/{world['campaign_id']}/battles/new")
    assert started.status_code == 303
    pages = [
        "/",
        "/account",
        f"/campaigns/{world['campaign_id']}",
        f"/campaigns/{world['campaign_id']}/members",
        f"/campaigns/{world['campaign_id']}/battles/new",
        started.headers["location"],
        f"/forces/{world['ruby_force']}",
        f"/forces/{world['ruby_force']}/edit",
        f"/forces/{world['ruby_force']}/cards/new",
        f"/forces/{world['ruby_force']}/requisitions",
        f"/cards/{card}",
        f"/cards/{card}/remove",
    ]
    expected = unmask(ruby.csrf())  # each response masks it afresh (app/edge/csrf.py)
    for url in pages:
        response = ruby.get(url)
        assert response.status_code == 200, url
        tokens = TOKEN.findall(response.text)
        assert len(set(tokens)) == 1, f"{url}: the page's forms differ"
        assert {unmask(t) for t in tokens} == {expected}, f"{url}: a wrong or empty token"
