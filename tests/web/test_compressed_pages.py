"""Issue 49: pages go compressed, and the CSRF token they carry is masked afresh in every
response (a compressed page that reflects input must never hold the same token bytes twice:
BREACH), while every masked copy, and the bare token the JSON API hands out, still works."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import Engine

from app.edge.csrf import unmask
from tests.api.helpers import dump
from tests.web.conftest import Browser

Person = Callable[[str], Browser]
TOKEN = re.compile(r'name="csrf_token" value="([^"]*)"')


def _tokens(browser: Browser, url: str) -> set[str]:
    return set(TOKEN.findall(browser.get(url).text))


def test_two_responses_never_carry_the_same_token_bytes_and_both_work(
    person: Person, engine: Engine
) -> None:
    ruby = person("ruby")
    first, second = _tokens(ruby, "/account"), _tokens(ruby, "/account")
    assert len(first) == 1 and len(second) == 1  # one copy per response, on every form
    (one,), (two,) = first, second
    bare = ruby.client.get("/api/v1/auth/csrf").json()["csrf_token"]
    assert one != two and bare not in (one, two)
    assert bare not in ruby.get("/account").text  # the bare token is never on a page
    assert unmask(one) == unmask(two) == bare
    for n, token in enumerate((two, one, bare)):  # in any order, each copy works
        sent = {"csrf_token": token, "name": f"bot {n}"}
        made = ruby.client.post("/account/tokens", data=sent, follow_redirects=False)
        assert made.status_code == 200, made.text
    # a page's copy works in the scripts' header as well
    header = ruby.client.post(
        "/api/v1/campaigns", json={"name": "Masked"}, headers={"X-CSRF-Token": one}
    )
    assert header.status_code == 201, header.text
    names = [t["name"] for t in ruby.api("GET", "/auth/tokens")["items"]]
    assert sorted(names) == ["bot 0", "bot 1", "bot 2"]


def test_a_tampered_or_foreign_token_is_refused_and_changes_nothing(
    person: Person, engine: Engine
) -> None:
    ruby, kai = person("ruby"), person("kai")
    (mine,) = _tokens(ruby, "/account")
    (theirs,) = _tokens(kai, "/account")
    flipped = mine[:-1] + ("0" if mine[-1] != "0" else "1")
    before = dump(engine)
    for token in (flipped, theirs, mine[:64], mine + "00", "zz" * 64, ""):
        refused = ruby.client.post(
            "/account/tokens", data={"csrf_token": token, "name": "bot"}, follow_redirects=False
        )
        assert refused.status_code == 403, (token, refused.status_code)
        assert "reload the page" in refused.text
        api = ruby.client.post(
            "/api/v1/campaigns", json={"name": "No"}, headers={"X-CSRF-Token": token}
        )
        assert api.status_code == 403 and api.json()["code"] == "csrf_token_invalid"
    assert dump(engine) == before


def test_pages_go_compressed_and_small_answers_as_they_are(person: Person) -> None:
    ruby = person("ruby")
    page = ruby.client.get("/account", headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200
    assert page.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in page.headers["vary"].lower()
    assert int(page.headers["content-length"]) < len(page.content)  # fewer bytes on the wire
    assert page.headers["content-security-policy"]  # the security headers still on it
    small = ruby.client.get("/api/v1/auth/csrf", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers
    plain = ruby.client.get("/account", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert TOKEN.search(plain.text)
