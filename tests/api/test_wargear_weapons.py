"""Ruling 80 (issue 46): the weapon a Weapon Enhancement goes to is one its card's wargear
lists, as the offer says (another is refused, with the offer), and a card that lists no
wargear is offered the weapon in the player's own words instead of nothing."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, dump, unit
from tests.api.offer_bot import offer_world
from tests.api.test_decision_offers import bonus_of


def test_a_weapon_the_wargear_does_not_list_is_refused_with_the_offer(
    client: TestClient, engine: Engine
) -> None:
    world = offer_world(client)
    bonus = bonus_of(client, world, "narrow_the_search")
    answer = f"/api/v1/decisions/{bonus['id']}/answer"
    captain = world["blue_units"][0]["id"]
    body = {"card_id": captain, "category": "weapon_enhancement", "entries": ["heirloom"]}
    page = client.get(f"/decisions/{bonus['id']}?category=weapon_enhancement&card_id={captain}")
    suggested = page.text.split('<datalist id="f-weapon-list">', 1)[1].split("</datalist>")[0]
    assert suggested == '<option value="Bolt pistol"><option value="Power sword">'  # the site too
    before = dump(engine)
    invented = {"model": "Captain", "weapon": "Thunder hammer", "weapon_type": "melee"}
    refused = assert_problem(
        client.post(answer, json={**body, "weapon": invented}), 422, "weapon_not_in_wargear"
    )
    assert dump(engine) == before
    assert (
        "Thunder hammer" in refused["detail"] and "(Bolt pistol, Power sword)" in refused["detail"]
    )
    assert refused["field"] == "weapon"
    assert refused["offer"] == client.get(f"/api/v1/decisions/{bonus['id']}").json()["offer"]
    # the wargear's weapon, however spaced or capitalised, is kept as the wargear spells it
    listed = {"model": "Captain", "weapon": " power   SWORD", "weapon_type": "melee"}
    taken = client.post(answer, json={**body, "weapon": listed})
    assert taken.status_code == 200, taken.text
    cards = {c["id"]: c for c in client.get(f"/api/v1/forces/{world['blue']}").json()["cards"]}
    assert [h["weapon"] for h in cards[captain]["honours"]] == ["Power sword"]


def test_a_card_without_wargear_is_offered_its_weapon_in_the_players_words(
    client: TestClient,
) -> None:
    world = offer_world(client)
    bare = unit(client, world["blue"], "Eliminators", 5, keywords=["IMPERIUM", "INFANTRY"])
    world["blue_units"].insert(2, bare)  # in the battle, neither warlord nor destroyed
    bonus = bonus_of(client, world, "narrow_the_search")
    offered = {u["card_id"]: u["categories"] for u in bonus["offer"]["units"]}
    [category] = offered[bare["id"]]
    assert (category["weapons"], category["needs"]) == ([], ["weapon"])
    assert category["free_weapon"] == {"model": "Eliminators", "max_length": 120}
    [listed] = offered[world["blue_units"][0]["id"]]
    assert listed["weapons"] and listed["free_weapon"] is None
    weapon = {"model": category["free_weapon"]["model"], "weapon": "Bolt sniper rifle"}
    taken = client.post(
        f"/api/v1/decisions/{bonus['id']}/answer",
        json={"card_id": bare["id"], "category": "weapon_enhancement", "weapon": weapon},
    )
    assert taken.status_code == 200, taken.text
    cards = {c["id"]: c for c in client.get(f"/api/v1/forces/{world['blue']}").json()["cards"]}
    assert [h["weapon"] for h in cards[bare["id"]]["honours"]] == ["Bolt sniper rifle"]
