"""Keyword rules on the pages: a named character's own Warlord Trait on the Add a unit form."""

from __future__ import annotations

from collections.abc import Callable

from tests.web.conftest import Browser, campaign_with_two_players


def test_a_named_characters_trait_is_its_own_not_a_requisition(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]
    form = {
        "name": "Chaplain Grimaldus",
        "power_rating": "4",
        "keywords": "IMPERIUM, INFANTRY, CHARACTER",
        "named_character": "true",
        "warlord_trait": "Fiery Orator",
    }
    added = ruby.post(f"/forces/{force_id}/cards", form)
    assert added.status_code == 303, added.text
    oob = ruby.api("GET", f"/forces/{force_id}")
    card = next(c for c in oob["cards"] if c["name"] == "Chaplain Grimaldus")
    assert [(u["requisition"], u["detail"], u["crusade_points"]) for u in card["upgrades"]] == [
        ("warlord_trait", "Fiery Orator", 0)
    ]
    assert oob["requisition_points"] == 5
    assert "Fiery Orator" in ruby.get(f"/cards/{card['id']}").text
