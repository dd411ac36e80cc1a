"""The demo campaign: four forces and a few battles, played through the real services so
every number on the cards is the rules engine's."""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from PIL import Image, ImageDraw
from sqlmodel import Session, func, select

from app.db.models import Campaign, Decision
from app.rules.agendas import EnemyLoss, kill_marks_allowed
from app.rules.data import SEED_DATA, VictorRole, rulebook
from app.rules.dice import SeededDice
from app.services.battles import decisions, lifecycle
from app.services.campaigns import photos, stories, territories
from app.services.forces import forces

PER_MARK_DEMO = ("assassins", "first_strike", "priority_target")


def is_empty(session: Session) -> bool:
    return session.exec(select(func.count()).select_from(Campaign)).one() == 0


def load_demo(session: Session, path: Path = SEED_DATA / "demo.yaml") -> Campaign:
    spec: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    campaign = forces.create_campaign(session, **spec["campaign"])
    campaign.public = bool(spec.get("public", False))
    assert campaign.id is not None
    force_ids, unit_ids, unit_specs = [], [], []
    for force_spec in spec["forces"]:
        units = force_spec.pop("units")
        unit_specs.append(units)
        force = forces.create_force(session, campaign_id=campaign.id, **force_spec)
        assert force.id is not None
        force_ids.append(force.id)
        added = [forces.add_card(session, force_id=force.id, **u) for u in units]
        unit_ids.append([card.id for card in added if card.id is not None])
    places = _draw_map(session, campaign.id, spec.get("territories", []), force_ids)
    played = [
        _play(
            session,
            campaign.id,
            battle,
            force_ids,
            unit_ids,
            unit_specs,
            spec["seed"] + number,
            places[battle["territory"]] if "territory" in battle else None,
        )
        for number, battle in enumerate(spec["battles"])
    ]
    for report in spec.get("reports", []):
        _tell(session, played[report["battle"]], report, unit_ids)
    return campaign


def _draw_map(
    session: Session, campaign_id: int, specs: list[dict[str, Any]], force_ids: list[int]
) -> list[int]:
    ids = []
    for spec in specs:
        change = territories.TerritoryChange(
            name=spec["name"],
            description=spec.get("description", ""),
            bonus=spec.get("bonus", "none"),
            holder_force_id=force_ids[spec["holder"]] if "holder" in spec else None,
        )
        row = territories.create(session, campaign_id=campaign_id, change=change)
        assert row.id is not None
        ids.append(row.id)
    for spec, territory_id in zip(specs, ids, strict=True):
        links = territories.TerritoryChange(neighbours=[ids[n] for n in spec.get("neighbours", [])])
        territories.edit(session, campaign_id=campaign_id, territory_id=territory_id, change=links)
    return ids


def _tell(
    session: Session, battle_id: int, report: dict[str, Any], unit_ids: list[list[int]]
) -> None:
    """A battle's report, and a drawn photo of its table (the demo ships no image files)."""
    notes = {unit_ids[n["force"]][n["unit"]]: n["note"] for n in report.get("notes", [])}
    story = stories.Story(
        title=report["title"],
        played_on=date.fromisoformat(report["played_on"]),
        location=report.get("location", ""),
        narrative=report.get("narrative", ""),
        unit_notes=notes,
    )
    stories.write_report(session, battle_id=battle_id, story=story, by="demo")
    if "photo" in report:
        store = photos.configured_store()
        made = photos.render(_table_picture())  # our own picture: read within the seeding
        photos.add_photo(
            session,
            store,
            battle_id=battle_id,
            made=made,
            caption=report["photo"].get("caption", ""),
            by="demo",
        )


def _table_picture() -> bytes:
    """A top-down sketch of a battlefield: a mat, ruins and two armies."""
    picture = Image.new("RGB", (1200, 800), (74, 92, 58))
    draw = ImageDraw.Draw(picture)
    for box in ((150, 120, 420, 300), (700, 480, 1000, 690), (520, 330, 680, 470)):
        draw.rectangle(box, fill=(120, 110, 100), outline=(60, 55, 50), width=8)
    for n in range(10):
        draw.ellipse((80 + n * 40, 680, 110 + n * 40, 710), fill=(20, 60, 160))
        draw.ellipse((700 + n * 40, 90, 730 + n * 40, 120), fill=(140, 20, 20))
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=85)
    return out.getvalue()


def _play(
    session: Session,
    campaign_id: int,
    spec: dict[str, Any],
    force_ids: list[int],
    unit_ids: list[list[int]],
    unit_specs: list[list[dict[str, Any]]],
    seed: int,
    territory_id: int | None = None,
) -> int:
    order = [spec["attacker"], spec["defender"]]
    # what each side lost, for the Agendas that count kills of a kind (the other side's)
    losses = [
        [
            EnemyLoss(
                unit_specs[f][i]["name"],
                frozenset(unit_specs[f][i]["keywords"]),
                warlord=i == spec["rosters"][n][0],
            )
            for i in spec["destroyed"][n]
            if i in spec["rosters"][n]
        ]
        for n, f in enumerate(order)
    ]
    rosters = [[unit_ids[f][i] for i in spec["rosters"][n]] for n, f in enumerate(order)]
    sides = [
        lifecycle.SideSetup(
            force_id=force_ids[f],
            role=role,
            roster=rosters[n],
            agendas=spec["agendas"][n],
            warlord_card_id=rosters[n][0],
        )
        for n, (f, role) in enumerate(
            zip(order, (VictorRole.ATTACKER, VictorRole.DEFENDER), strict=True)
        )
    ]
    battle, _ = lifecycle.muster(
        session,
        campaign_id=campaign_id,
        battle_size=spec["size"],
        sides=sides,
        mission=spec["mission"],
        seed=seed,
        territory_id=territory_id,
    )
    assert battle.id is not None
    results = [
        lifecycle.SideResult(
            force_id=force_ids[f],
            victory_points=spec["vp"][n],
            painted=n == 0,
            units=_units(spec, n, rosters[n], losses[1 - n]),
            agenda_choices=_choices(spec, n, rosters[n]),
        )
        for n, f in enumerate(order)
    ]
    lifecycle.record_result(session, battle_id=battle.id, results=results)
    session.flush()
    for force_id in (force_ids[f] for f in order):
        _answer_all(session, force_id, seed)
    return battle.id


def _units(
    spec: dict[str, Any], side: int, roster: list[int], enemy_losses: list[EnemyLoss]
) -> list[dict[str, Any]]:
    """A mark of each per-mark Agenda for each unit with two kills or more, while the
    enemy's losses leave marks to give (the rules refuse more)."""
    kills = spec["kills"][side]
    book = rulebook()
    agendas = [a for a in spec["agendas"][side] if a in PER_MARK_DEMO]
    left = {a: kill_marks_allowed(book.agenda(a), enemy_losses) for a in agendas}
    units = []
    for index, card_id in enumerate(roster):
        tallies = {a: 1 for a in agendas if kills[index] >= 2 and left[a] != 0}
        for a in tallies:
            remaining = left[a]
            left[a] = None if remaining is None else remaining - 1
        units.append(
            {
                "card_id": card_id,
                "destroyed": index
                in [
                    spec["rosters"][side].index(i)
                    for i in spec["destroyed"][side]
                    if i in spec["rosters"][side]
                ],
                "destroyed_ranged": kills[index] // 2 + kills[index] % 2,
                "destroyed_melee": kills[index] // 2,
                "agenda_tallies": tallies,
                "marked_for_greatness": spec["rosters"][side][index] == spec["marked"][side],
            }
        )
    return units


def _choices(spec: dict[str, Any], side: int, roster: list[int]) -> dict[str, int]:
    kills = spec["kills"][side]
    best = max(range(len(roster)), key=lambda i: kills[i])
    return {"reaper": roster[best], "lord_of_the_warp": roster[0]}


def _answer_all(session: Session, force_id: int, seed: int) -> None:
    """Answer what a player would: scars over lost XP, traits rolled for new ranks, free
    Supply Limit when a victor bonus offers it."""
    for attempt in range(50):
        pending = session.exec(
            select(Decision).where(Decision.force_id == force_id, Decision.status == "pending")
        ).all()
        if not pending:
            return
        row = pending[0]
        assert row.id is not None
        decisions.answer(
            session, decision_id=row.id, answer=_answer(row), dice=SeededDice(seed + attempt)
        )
        session.flush()


def _answer(row: Decision) -> dict[str, Any]:
    if row.kind == "out_of_action":
        options = row.payload["options"]
        return {"consequence": "battle_scar" if "battle_scar" in options else options[0]}
    if row.kind == "battle_scar":
        return {}
    if row.kind == "battle_honour":
        eligible = row.payload.get("eligible") or []
        category = row.payload["categories"][0]
        answer: dict[str, Any] = {"category": category}
        if category == "crusade_relic":
            answer["entries"] = ["laurels_of_victory"]
        if row.card_id is None and eligible:
            answer["card_id"] = eligible[0]
        return answer
    wanted = [
        r
        for r in row.payload["bonus"]["effect"].get("requisitions", [])
        if r == "increase_supply_limit"
    ]
    return {"requisitions": [{"requisition": r} for r in wanted]}
