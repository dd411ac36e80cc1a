"""A unit's own rule pack counters on the website (issue 47), on SQLite and PostgreSQL: its
card page and its row in the Order of Battle say each counter it holds, what moves it and
the next threshold, and a named choice by name."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from tests.api.helpers import campaign, force, unit
from tests.api.test_rule_packs import attached

SISTERS = """
format: crusade-rule-pack/1
id: sisters_trials
name: Sisters' Trials
version: "1"
counters:
  - {id: sanctity, name: Sanctity, scope: card, start: 0, min: 0, max: 20}
  - {id: trial, name: Trial, scope: card, choices: [faith, penitent]}
requisitions:
  - id: anoint
    name: Anoint
    cost_rp: 0
    target: unit
    summary: The Sister is anointed; 10 Sanctity.
    effects: [{kind: change_counter, counter: sanctity, amount: 10}]
  - id: repent
    name: Repent
    cost_rp: 0
    target: unit
    summary: The Sister takes the penitent trial.
    effects: [{kind: set_choice, counter: trial, value: penitent}]
triggers:
  - id: devotion
    name: Devotion
    when: battle_played
    counter: sanctity
    amount: 1
    summary: Each battle.
thresholds:
  - id: exalted
    name: Exalted
    counter: sanctity
    at: 12
    effects: [{kind: add_xp, amount: 2}]
    summary: Exalted.
  - id: saintly
    name: Saintly
    counter: sanctity
    at: 18
    effects: [{kind: add_xp, amount: 3}]
    summary: Saintly.
"""


def test_a_units_counters_are_on_its_card_and_its_row(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, SISTERS)
    fid = force(client, cid)
    sister = unit(client, fid, "Canoness Veradis")["id"]
    for requisition in ("anoint", "repent"):
        bought = client.post(
            f"/api/v1/forces/{fid}/requisitions",
            json={"requisition": requisition, "card_id": sister},
        )
        assert bought.status_code == 201, bought.text
    said = "Sanctity 10 (0 to 20): +1 per battle it fights (Devotion); next: Exalted at 12, 2 to go"
    card = html.unescape(client.get(f"/cards/{sister}").text)
    counters = card.split('data-testid="card-counters"')[1].split("</ul>")[0]
    assert said in counters and "Trial: Penitent" in counters
    page = html.unescape(client.get(f"/forces/{fid}").text)
    row = page.split(f'data-testid="unit-counters-{sister}"')[1].split("</ul>")[0]
    assert said in row and "Trial: Penitent" in row
