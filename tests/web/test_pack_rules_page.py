"""The campaign's Rules page shows a pack as it plays (issue 47), on SQLite and PostgreSQL:
a bonus-only requisition apart from those bought with RP, a pack mission's victor bonus,
each threshold's effects and each quest's reward and penalty, in the engine's words."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from tests.api.helpers import campaign
from tests.api.test_rule_packs import attached
from tests.rules.test_pack_effects_more import PENITENTS, PLAGUE

HOST = """
format: crusade-rule-pack/1
id: ashen_host
name: Ashen Host
version: "1"
counters:
  - {id: zeal, name: Zeal, scope: force, start: 0, min: 0, max: 20}
requisitions:
  - id: pray
    name: Pray
    cost_rp: 1
    target: force
    summary: The host prays.
    effects: [{kind: change_counter, counter: zeal, amount: 2}]
  - id: relics_of_the_road
    name: Relics of the Road
    cost_rp: 1
    only_as_bonus: true
    summary: Supplies found on the road.
    effects: [{kind: change_supply_limit, amount: 10}]
missions:
  - id: the_road_home
    name: The Road Home
    battle_size: combat_patrol
    summary: Reach the far edge first.
    victor_bonus:
      - summary: The victor finds relics.
        effect:
          {kind: free_requisitions, requisitions: [relics_of_the_road], mode: all, target: force}
      - summary: The victor's zeal grows.
        role: attacker
        effect: {kind: change_counter, counter: zeal, amount: 3}
thresholds:
  - id: fervent
    name: Fervent
    counter: zeal
    at: 10
    reset_to: 0
    effects:
      - {kind: change_requisition_points, amount: 1}
      - {kind: change_supply_limit, amount: 5}
    summary: The host burns with zeal.
quests:
  - id: long_march
    name: The Long March
    scope: force
    automatic: true
    summary: March on.
    steps: [{name: March, when: battle_played, count: 3}]
    reward: [{kind: change_counter, counter: zeal, amount: 4}]
    fails_when: own_unit_destroyed
    penalty: [{kind: change_requisition_points, amount: -1}]
"""


def test_the_rules_page_shows_the_pack_as_it_plays(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, HOST)
    page = html.unescape(client.get(f"/campaigns/{cid}/rules").text)
    bought = page.split('data-testid="pack-requisitions-ashen_host"')[1].split("</dl>")[0]
    assert "Pray" in bought and "Relics of the Road" not in bought
    assert "Does: Zeal +2." in bought
    bonus = page.split('data-testid="pack-bonus-requisitions-ashen_host"')[1].split("</dl>")[0]
    assert 'Relics of the Road <small class="muted">bonus only</small>' in bonus
    assert "Does: Supply Limit +10." in bonus
    victor = page.split('data-testid="victor-bonus-the_road_home"')[1].split("</ul>")[0]
    assert "free: Relics of the Road (the force), a decision" in victor
    assert "Zeal +3 (the Attacker only)" in victor
    assert "When Zeal rises to 10: +1 RP (up to the cap); Supply Limit +5; it then starts" in page
    reward = page.split('data-testid="quest-reward-long_march"')[1].split("</dd>")[0]
    assert "Reward: Zeal +4." in reward
    assert "penalty: -1 RP (never below 0)" in reward


def test_the_rules_page_says_a_granted_honour_and_a_table_roll(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, PENITENTS)
    attached(client, cid, PLAGUE)
    page = html.unescape(client.get(f"/campaigns/{cid}/rules").text)
    assert "the unit gains the Battle Trait Absolved, in place of Penitent" in page
    assert "Does: the unit gains the Battle Trait Sanctified." in page
    assert "the unit rolls on Gifts of Decay and gains the result" in page
    assert "Does: the unit rolls on Side Effects and gains the result." in page


def test_the_rules_page_says_a_triggers_effects_and_a_failed_agendas_cost(
    client: TestClient,
) -> None:
    from tests.api.test_pack_facts_api import PACK  # issue 47, items 3-4

    cid = campaign(client)
    attached(client, cid, PACK)
    page = html.unescape(client.get(f"/campaigns/{cid}/rules").text)
    tithe = page.split('data-testid="trigger-effects-tithe"')[1].split("</span>")[0]
    assert "each enemy unit destroyed: +1 RP (up to the cap)" in tithe
    blooded = page.split('data-testid="trigger-effects-blooded"')[1].split("</span>")[0]
    assert "each melee kill, for the unit: the unit gains 2 XP" in blooded
    failed = page.split('data-testid="agenda-on-fail-hold"')[1].split("</span>")[0]
    assert "failed (no unit gains XP from it; XP from each unit it was for):" in failed
    assert "the unit loses 2 XP (never below 0)" in failed
    assert "-1 RP (never below 0)" in failed
