"""Rule-pack effects the trial missed (issue 47, item 4), through the API on SQLite and
PostgreSQL: a threshold grants the pack's Battle Trait to the unit whose counter rose and a
revert takes it back exactly; a requisition grants one within the core's limits, refused
with the database untouched otherwise; a pack naming no such trait is refused where it is."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attach, attached
from tests.rules.test_pack_effects_more import PLAGUE

PENITENTS = """
format: crusade-rule-pack/1
id: penitents
name: Penitents
version: "1"
counters:
  - {id: penance, name: Penance, scope: card, start: 0, min: 0, max: 5}
  - {id: zeal, name: Zeal, scope: force, start: 0, min: 0, max: 10}
battle_traits:
  - {id: absolved, name: Absolved, counters: {zeal: 2}, summary: The unit has atoned.}
  - {id: sanctified, name: Sanctified, eligible: CHARACTER, summary: A hero blessed.}
agendas:
  - {id: vigil, name: Vigil, summary: s, xp_per_tally: 1, max_tally: 1}
triggers:
  - {id: atone, name: Atone, when: battle_played, counter: penance, amount: 1, summary: s}
thresholds:
  - id: absolution
    name: Absolution
    counter: penance
    at: 1
    effects: [{kind: grant_honour, entry: absolved}]
    summary: A battle of penance and the unit is absolved.
requisitions:
  - id: anoint
    name: Anoint
    cost_rp: 1
    target: unit
    summary: A hero is blessed.
    effects: [{kind: grant_honour, entry: sanctified}]
"""


AGENDA = """
format: crusade-rule-pack/1
id: vigils
name: Vigils
version: "1"
agendas:
  - {id: vigil, name: Vigil, summary: s, xp_per_tally: 1, max_tally: 1}
"""


def _played(
    client: TestClient, cid: int, blue: int, mine: int, red: int, foe: int, dice: object = None
) -> int:
    sides = [
        {"force_id": blue, "role": "attacker", "roster": [mine], "agendas": ["vigil"]},
        {"force_id": red, "role": "defender", "roster": [foe], "agendas": ["vigil"]},
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    battle = int(mustered.json()["id"])
    result = [
        {"force_id": blue, "victory_points": 30, "units": [{"card_id": mine}], "dice": dice},
        {"force_id": red, "victory_points": 10, "units": [{"card_id": foe}], "dice": dice},
    ]
    done = client.post(f"/api/v1/battles/{battle}/result", json={"sides": result})
    assert done.status_code == 200, done.text
    return battle


def _traits(client: TestClient, card_id: int) -> list[list[str]]:
    card = client.get(f"/api/v1/cards/{card_id}").json()
    return [[e["id"] for e in h["entries"]] for h in card["honours"]]


def test_a_threshold_grants_the_trait_and_a_revert_takes_it_back(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, PENITENTS)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine, foe = unit(client, blue)["id"], unit(client, red, keywords=["CHAOS", "INFANTRY"])["id"]
    before = client.get(f"/api/v1/cards/{mine}").json()
    battle = _played(client, cid, blue, mine, red, foe)
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert _traits(client, mine) == [["absolved"]]
    assert card["crusade_points"] == before["crusade_points"] + 1
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"]["zeal"] == 2
    assert _traits(client, foe) == [["absolved"]]  # the pack reaches every force: its own unit

    assert client.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert card["honours"] == [] and card["crusade_points"] == before["crusade_points"]
    assert card["xp"] == before["xp"]
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"].get("zeal", 0) == 0


def test_a_requisition_grants_the_trait_within_the_core_limits(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, PENITENTS)
    blue = force(client, cid)
    hero = unit(client, blue, "Canoness", keywords=["IMPERIUM", "INFANTRY", "CHARACTER"])["id"]
    squad = unit(client, blue)["id"]

    untouched = dump(engine)
    refused = client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "anoint", "card_id": squad}
    )
    assert_problem(refused, 422, "honour_not_eligible")
    assert dump(engine) == untouched

    bought = client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "anoint", "card_id": hero}
    )
    assert bought.status_code in (200, 201), bought.text
    assert _traits(client, hero) == [["sanctified"]]
    assert client.get(f"/api/v1/forces/{blue}").json()["requisition_points"] == 4

    untouched = dump(engine)
    again = client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "anoint", "card_id": hero}
    )
    assert_problem(again, 422, "honour_duplicate")
    assert dump(engine) == untouched


def test_a_pack_granting_a_trait_it_lacks_is_refused_with_line_and_column(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    untouched = dump(engine)
    refused = attach(client, cid, PENITENTS.replace("entry: sanctified", "entry: sainted"))
    assert refused.status_code == 422, refused.text
    assert (
        "requisitions[0].effects[0].entry (line 29, column 43): no Battle Trait 'sainted'"
        in refused.text
    )
    assert dump(engine) == untouched


def test_a_threshold_rolls_on_the_pack_table_with_the_dice_entered_and_a_revert_undoes_it(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, PLAGUE)
    attached(client, cid, AGENDA)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine, foe = unit(client, blue)["id"], unit(client, red, keywords=["CHAOS", "INFANTRY"])["id"]
    before = client.get(f"/api/v1/cards/{mine}").json()
    battle = _played(client, cid, blue, mine, red, foe, dice=[5])
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert [(h["entries"][0]["id"], h["dice"]) for h in card["honours"]] == [("rotting", [[6, 5]])]
    assert card["crusade_points"] == before["crusade_points"] + 1

    assert client.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert card["honours"] == [] and card["crusade_points"] == before["crusade_points"]
    assert card["counters"].get("contagion", 0) == 0


def test_a_requisition_rolls_on_the_pack_table(client: TestClient, engine: Engine) -> None:
    cid = campaign(client)
    attached(client, cid, PLAGUE)
    blue = force(client, cid)
    squad = unit(client, blue)["id"]
    bought = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "pathogen", "card_id": squad, "dice": [5]},
    )
    assert bought.status_code in (200, 201), bought.text
    card = client.get(f"/api/v1/cards/{squad}").json()
    assert [(s["id"], s["dice"]) for s in card["scars"]] == [("palsy", [[6, 5]])]
    assert card["crusade_points"] == -1
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"]["misery"] == 1
    rolled = client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "pathogen", "card_id": squad}
    )
    assert rolled.status_code in (200, 201), rolled.text  # the app's dice
    scars = client.get(f"/api/v1/cards/{squad}").json()["scars"]
    assert [s["id"] for s in scars] == ["palsy", "weeping_sores"]  # palsy held: rolled again


def test_a_pack_rolling_on_a_table_it_lacks_is_refused_with_line_and_column(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    untouched = dump(engine)
    refused = attach(client, cid, PLAGUE.replace("table: gifts}", "table: gift}"))
    assert refused.status_code == 422, refused.text
    assert "thresholds[0].effects[0].table (line 33, column 41): no table 'gift'" in refused.text
    assert dump(engine) == untouched
