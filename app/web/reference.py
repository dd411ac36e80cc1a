"""Pages of the rules reference: the rulebook's tables from seed_data, in our own words."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.routing import OneHopRoute
from app.rules.data import (
    Achieved,
    Agenda,
    ArchiveRoll,
    CrusadeRelic,
    HighestTally,
    Mission,
    PerMark,
    Requisition,
    RequisitionTarget,
    RequisitionTiming,
    Rulebook,
    TallySource,
    Threshold,
    UnitType,
    VictorRole,
    rulebook,
)
from app.web.pages import Viewer, render

router = APIRouter(route_class=OneHopRoute)

UNIT_TYPES = {
    UnitType.CHARACTER: "CHARACTER units (not VEHICLE or MONSTER)",
    UnitType.VEHICLE: "VEHICLE units",
    UnitType.MONSTER: "MONSTER units",
    UnitType.OTHER: "Every other unit",
}
TIMINGS = {
    RequisitionTiming.ANY_TIME: "Any time outside a battle",
    RequisitionTiming.BEFORE_OR_AFTER_BATTLE: "Before or after a battle",
    RequisitionTiming.CARD_ADDED: "Only as the unit joins the Order of Battle",
    RequisitionTiming.CARD_ADDED_OR_CHARACTER_RANK: (
        "As the CHARACTER joins, or right after it gains a rank"
    ),
}
VICTORS = {
    VictorRole.EITHER: "The winner",
    VictorRole.ATTACKER: "The Attacker, if it wins",
    VictorRole.DEFENDER: "The Defender, if it wins",
}
PAGES = (
    ("/rules/ranks", "Ranks and key numbers", "Experience needed for each rank; RP and supply."),
    ("/rules/missions", "Missions", "Each battle size's D6 mission table and victor bonuses."),
    ("/rules/agendas", "Agendas", "What each Agenda asks of a unit and the XP it earns."),
    (
        "/rules/honours",
        "Battle Honours",
        "Battle Traits, Weapon Enhancements, Psychic Fortitudes and Crusade Relics.",
    ),
    ("/rules/scars", "Battle Scars", "The scar tables for each kind of unit."),
    ("/rules/requisitions", "Requisitions", "What RP can buy, when, and for which units."),
)


def agenda_xp(agenda: Agenda) -> str:
    """How an Agenda turns its tally into experience, in a few words."""
    xp = agenda.xp
    if isinstance(xp, PerMark):
        text = f"{xp.xp_per_mark} XP per mark"
    elif isinstance(xp, Threshold):
        text = f"{xp.xp} XP for a unit whose tally reaches {xp.min_tally}"
    elif isinstance(xp, Achieved):
        text = f"{xp.xp} XP for each unit that achieves it"
    elif isinstance(xp, HighestTally):
        text = f"{xp.xp} XP for the unit with the highest tally"
    else:
        assert isinstance(xp, ArchiveRoll)
        text = f"{xp.xp} XP for one unit on a successful D6 roll"
    limits = []
    if agenda.tally_source == TallySource.UNITS_DESTROYED:
        limits.append("the tally is enemy units destroyed")
    if agenda.max_units:
        limits.append(f"at most {agenda.max_units} unit{'s' if agenda.max_units > 1 else ''}")
    if agenda.max_tally:
        limits.append(f"tally of {agenda.max_tally} at most")
    return text + (f" ({'; '.join(limits)})" if limits else "")


def requisition_terms(requisition: Requisition, book: Rulebook) -> list[str]:
    """When a Requisition may be bought and which units it may target."""
    terms = [TIMINGS[requisition.timing]]
    if requisition.target == RequisitionTarget.FORCE:
        terms.append("For the whole force")
    else:
        terms.append("For one unit")
    if requisition.required_keywords:
        terms.append(f"Only {' '.join(requisition.required_keywords)} units")
    if requisition.excluded_keywords:
        terms.append(f"Not {', '.join(requisition.excluded_keywords)} units")
    if requisition.max_rank:
        terms.append(f"Units of rank {book.rank(requisition.max_rank).name} or below")
    if requisition.needs_battle_scar:
        terms.append("A unit with a Battle Scar")
    if requisition.eligible:
        who = "forces" if requisition.target == RequisitionTarget.FORCE else "units"
        terms.append(f"Only for {who} that meet: {requisition.eligible}")
    if requisition.cost_per_power:
        per = requisition.cost_per_power
        terms.append(f"Costs {per.rp} RP more for each {per.per} Power Rating of the unit")
    if requisition.pack:
        terms.append(f"From the rule pack {requisition.pack.replace('_', ' ')}")
    return terms


def relic_terms(relic: CrusadeRelic, book: Rulebook) -> list[str]:
    """Who may carry a Crusade Relic and what it costs beyond the usual honour."""
    rule = book.honours.relic_categories[relic.category]
    terms = ["CHARACTER models only"]
    if rule.min_rank != book.ranks[0].id:
        terms.append(f"Rank {book.rank(rule.min_rank).name} or higher")
    if relic.keywords_any:
        terms.append(f"Bearer must be {' or '.join(relic.keywords_any)}")
    if relic.selects_weapon:
        terms.append("Upgrades one of the bearer's weapons")
    if rule.extra_crusade_points:
        terms.append(f"+{rule.extra_crusade_points} extra Crusade points")
    if rule.requisition_points:
        terms.append(f"Costs {rule.requisition_points} RP")
    return terms


def mission_results(book: Rulebook, size_id: str) -> list[Mission]:
    return sorted(book.missions_for(size_id), key=lambda m: m.low)


def _page(request: Request, principal: Viewer, template: str, **context: Any) -> Response:
    return render(request, template, principal, book=rulebook(), **context)


@router.get("/rules")
def rules_index(request: Request, principal: Viewer) -> Response:
    return _page(request, principal, "pages/rules.html", pages=PAGES)


@router.get("/rules/ranks")
def ranks(request: Request, principal: Viewer) -> Response:
    return _page(request, principal, "pages/rules_ranks.html")


@router.get("/rules/missions")
def missions(request: Request, principal: Viewer) -> Response:
    book = rulebook()
    sizes = [(size, mission_results(book, size.id)) for size in book.battle_sizes]
    return _page(request, principal, "pages/rules_missions.html", sizes=sizes, victors=VICTORS)


@router.get("/rules/agendas")
def agendas(request: Request, principal: Viewer) -> Response:
    groups: dict[str, list[tuple[Agenda, str]]] = {}
    for agenda in rulebook().agendas:
        groups.setdefault(agenda.category, []).append((agenda, agenda_xp(agenda)))
    return _page(request, principal, "pages/rules_agendas.html", groups=groups)


@router.get("/rules/honours")
def honours(request: Request, principal: Viewer) -> Response:
    book = rulebook()
    relics = [(r, relic_terms(r, book)) for r in book.honours.crusade_relics]
    return _page(
        request, principal, "pages/rules_honours.html", unit_types=UNIT_TYPES, relics=relics
    )


@router.get("/rules/scars")
def scars(request: Request, principal: Viewer) -> Response:
    return _page(request, principal, "pages/rules_scars.html", unit_types=UNIT_TYPES)


@router.get("/rules/requisitions")
def requisitions(request: Request, principal: Viewer) -> Response:
    book = rulebook()
    rows = [(r, requisition_terms(r, book)) for r in book.requisitions]
    return _page(request, principal, "pages/rules_requisitions.html", requisitions=rows)
