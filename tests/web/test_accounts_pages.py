"""Sign up, log in, the account page and its API tokens, through the pages."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import dump
from tests.web.conftest import CSRF, Browser, campaign_with_two_players


def test_sign_up_logs_in_and_shows_the_account(site: TestClient) -> None:
    response = site.post(
        "/signup",
        data={"username": "Ruby", "password": "a good password", "display_name": "Ruby R"},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"] == "/"
    page = site.get("/account")
    assert page.status_code == 200
    assert "Ruby R" in page.text and "ruby" in page.text


def test_refused_sign_up_keeps_the_values_and_changes_nothing(
    site: TestClient, engine: Engine
) -> None:
    before = dump(engine)
    response = site.post(
        "/signup", data={"username": "ruby", "password": "short", "display_name": "Ruby R"}
    )
    assert response.status_code == 422
    assert "A password must be 8 to 200 characters long." in response.text
    assert 'value="ruby"' in response.text and 'value="Ruby R"' in response.text
    assert dump(engine) == before


def test_wrong_password_is_refused_in_words(
    site: TestClient, person: Callable[[str], Browser]
) -> None:
    person("ruby")
    response = site.post("/login", data={"username": "ruby", "password": "not it at all"})
    assert response.status_code == 401
    assert 'role="alert"' in response.text and 'value="ruby"' in response.text


def test_log_in_goes_back_to_the_page_asked_for_but_never_off_site(
    site: TestClient, person: Callable[[str], Browser]
) -> None:
    person("ruby")
    asked = site.get("/account", follow_redirects=False)
    assert asked.status_code == 303 and asked.headers["location"] == "/login?next=/account"
    creds = {"username": "ruby", "password": "a good password"}
    back = site.post("/login", data={**creds, "next": "/account"}, follow_redirects=False)
    assert back.headers["location"] == "/account"
    site.cookies.clear()
    away = site.post("/login", data={**creds, "next": "//evil.example"}, follow_redirects=False)
    assert away.headers["location"] == "/"


def test_a_form_without_its_csrf_field_is_refused(person: Callable[[str], Browser]) -> None:
    ruby = person("ruby")
    response = ruby.client.post("/account/tokens", data={"name": "bot"})
    assert response.status_code == 403
    assert "reload the page" in response.text
    assert ruby.api("GET", "/auth/tokens")["items"] == []


def test_an_api_token_is_shown_once_and_works_then_is_revoked(
    person: Callable[[str], Browser],
) -> None:
    ruby = person("ruby")
    created = ruby.post("/account/tokens", {"name": "discord bot", "can_write": "true"})
    assert created.status_code == 200
    token = created.text.split('data-testid="new-token"')[0].rsplit('value="', 1)[1].split('"')[0]
    assert token.startswith("crt_") or len(token) > 20
    me = ruby.client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["username"] == "ruby"
    assert token not in ruby.get("/account").text  # shown once
    token_id = ruby.api("GET", "/auth/tokens")["items"][0]["id"]
    revoked = ruby.post(f"/account/tokens/{token_id}/revoke")
    assert "revoked" in revoked.text
    again = ruby.client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert again.status_code == 401


def test_log_out_ends_the_session(person: Callable[[str], Browser]) -> None:
    ruby = person("ruby")
    out = ruby.post("/logout")
    assert out.status_code == 303
    assert ruby.get("/account", follow_redirects=False).status_code == 303


def test_an_unknown_page_is_an_html_page_and_the_api_stays_json(site: TestClient) -> None:
    page = site.get("/campaigns/999999")
    assert page.status_code in (401, 404) or page.status_code == 200
    missing = site.get("/no-such-page")
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    api = site.get("/api/v1/campaigns/999999")
    assert api.headers["content-type"] == "application/problem+json"


def test_an_organizer_hands_a_player_a_reset_link_that_works_once(
    person: Callable[[str], Browser], site: TestClient, engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, kai = world["orga"], world["ruby"], world["kai"]
    members = f"/campaigns/{world['campaign_id']}/members"
    ruby_id = ruby.api("GET", "/auth/me")["id"]
    orga_id = orga.api("GET", "/auth/me")["id"]
    page = orga.get(members).text
    assert 'aria-label="Password reset link for ruby"' in page
    assert f"/members/{orga_id}/reset-link" not in page  # not for yourself (nor site admins)
    assert "reset-link" not in kai.get(members).text  # players see no such button
    before = dump(engine)
    assert kai.post(f"{members}/{ruby_id}/reset-link").status_code == 403
    assert orga.post(f"{members}/{orga_id}/reset-link").status_code == 404
    assert dump(engine) == before

    made = orga.post(f"{members}/{ruby_id}/reset-link")
    assert made.status_code == 200 and "Password reset link for ruby" in made.text
    found = re.search(r'id="reset-link" type="text" readonly value="([^"]+)"', made.text)
    assert found and found.group(1).startswith("http://testserver/reset-password?token=")
    link = found.group(1).removeprefix("http://testserver")
    token = link.split("token=", 1)[1]

    # the player, logged out on another device, opens the link
    assert "Choose a new password" in site.get(link).text
    short = site.post("/reset-password", data={"token": token, "new_password": "short"})
    assert short.status_code == 422 and 'aria-invalid="true"' in short.text
    assert f'name="token" value="{token}"' in short.text  # the link survives a refusal
    assert dump(engine) == before
    done = site.post(
        "/reset-password",
        data={"token": token, "new_password": "a fresh password"},
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"] == "/account?password_reset=1"
    assert "New password saved: you are logged in." in site.get(done.headers["location"]).text
    assert ruby.get("/account", follow_redirects=False).status_code == 303  # old login ended
    stranger = TestClient(site.app)  # `site` is now ruby's login: it would need the CSRF field
    again = stranger.post("/reset-password", data={"token": token, "new_password": "another one!"})
    assert again.status_code == 400 and "already used" in again.text
    assert "ask a campaign organizer for a new one" in again.text
    logged_in = stranger.post(
        "/login", data={"username": "ruby", "password": "a fresh password"}, follow_redirects=False
    )
    assert logged_in.status_code == 303


def test_the_reset_page_without_a_token_says_what_to_do(site: TestClient) -> None:
    page = site.get("/reset-password")
    assert page.status_code == 200
    assert 'name="new_password"' not in page.text
    assert "ask a campaign organizer for a new one" in page.text


def test_pages_with_credentials_are_never_stored(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    ruby = person("ruby")
    assert ruby.get("/account").headers["cache-control"] == "no-store"
    made = ruby.post("/account/tokens", {"name": "bot"})
    assert "new-token" in made.text and made.headers["cache-control"] == "no-store"
    assert site.get("/reset-password?token=x").headers["cache-control"] == "no-store"
    assert "cache-control" not in site.get("/rules").headers  # public reference: cacheable


def test_after_a_password_change_the_next_form_still_works(
    person: Callable[[str], Browser],
) -> None:
    """The change starts a new session, so the page after it must carry the new session's
    CSRF token (it used to be rendered with the old one: the next form said 'expired')."""
    ruby = person("ruby")
    changed = ruby.post(
        "/account/password",
        {"current_password": "a good password", "new_password": "a better password"},
    )
    assert changed.status_code == 303
    assert changed.headers["location"] == "/account?password_changed=1"
    page = ruby.get(changed.headers["location"])
    assert "Password changed." in page.text
    csrf = CSRF.search(page.text)
    assert csrf is not None
    made = ruby.client.post(
        "/account/tokens", data={"csrf_token": csrf.group(1), "name": "bot"}, follow_redirects=False
    )
    assert made.status_code == 200, made.text
    assert "crt_" in made.text
