"""The website's "waiting for you" count in the header of every page, and each member's
"since your last visit" on the campaign page (issue 15)."""

from __future__ import annotations

import re

from tests.web.conftest import campaign_with_two_players
from tests.web.test_campaign_pages import Person, enter_result, muster


def header_count(html: str) -> str | None:
    found = re.search(r'class="waiting-count" aria-label="Waiting for you (\d+)"', html)
    return found.group(1) if found else None


def since_section(html: str) -> str:
    start = html.index('id="since"')
    return html[start : html.index("</section>", start)]


class TestWaitingCount:
    def test_a_pending_decision_shows_on_every_page_until_answered(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        kai, ruby = world["kai"], world["ruby"]
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"], kai_captain_falls=True)
        campaign = f"/campaigns/{world['campaign_id']}"
        for path in ("/", "/rules", campaign, f"/forces/{world['kai_force']}"):
            page = kai.get(path)
            assert page.status_code == 200
            assert header_count(page.text) == "1", path
        assert f'href="{campaign}#waiting" class="waiting-count"' in kai.get("/rules").text
        assert header_count(ruby.get("/rules").text) is None  # nothing waits for Ruby
        decision = kai.api("GET", f"/forces/{world['kai_force']}/decisions")["items"][0]
        kai.api(
            "POST", f"/decisions/{decision['id']}/answer", json={"consequence": "devastating_blow"}
        )
        assert header_count(kai.get("/rules").text) is None


class TestSinceLastVisit:
    def test_a_member_sees_what_happened_since_they_last_looked(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        kai = world["kai"]
        url = f"/campaigns/{world['campaign_id']}"
        assert "from your next visit on" in since_section(kai.get(url).text)
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"])
        news = since_section(kai.get(url).text)
        assert f"Battle {battle['id']} mustered:" in news
        assert f"Battle {battle['id']}: " in news and " won." in news
        assert news.index(f"Battle {battle['id']}: ") < news.index("mustered:")  # newest first
        assert "Nothing new since you last looked." in since_section(kai.get(url).text)

    def test_a_visitor_who_is_not_a_member_gets_no_such_section(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        stranger = person("stranger")
        url = f"/campaigns/{world['campaign_id']}"
        page = stranger.get(url)
        assert page.status_code in (200, 403, 404)
        assert 'id="since"' not in page.text
