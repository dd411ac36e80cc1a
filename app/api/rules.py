"""GET /api/v1/rules/...: the rule tables as JSON, for bots and the website."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.errors import NotFound
from app.routing import OneHopRoute
from app.rules.data import (
    Agenda,
    BattleSize,
    CrusadeNumbers,
    DiceTable,
    Mission,
    Rank,
    Requisition,
    UnitType,
    WeaponType,
    rulebook,
)

router = APIRouter(prefix="/rules", tags=["rules reference"], route_class=OneHopRoute)


def _dump(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _dump(v) for k, v in value.items()}
    return value.model_dump(mode="json")


@router.get("", summary="Index of the rule tables")
def rules_index() -> dict[str, list[str]]:
    return {
        "tables": [
            "/api/v1/rules/numbers",
            "/api/v1/rules/ranks",
            "/api/v1/rules/battle-sizes",
            "/api/v1/rules/battle-traits",
            "/api/v1/rules/weapon-enhancements",
            "/api/v1/rules/psychic-fortitudes",
            "/api/v1/rules/crusade-relics",
            "/api/v1/rules/battle-scars",
            "/api/v1/rules/requisitions",
            "/api/v1/rules/agendas",
            "/api/v1/rules/missions",
        ]
    }


@router.get(
    "/numbers",
    summary="Fixed numbers of the Crusade rules",
    responses={200: {"model": CrusadeNumbers}},
)
def numbers() -> Any:
    return _dump(rulebook().numbers)


@router.get("/ranks", summary="Ranks by experience points", responses={200: {"model": list[Rank]}})
def ranks() -> Any:
    return _dump(rulebook().ranks)


@router.get(
    "/battle-sizes",
    summary="Battle sizes: Power Level, CP, Agendas",
    responses={200: {"model": list[BattleSize]}},
)
def battle_sizes() -> Any:
    return _dump(rulebook().battle_sizes)


@router.get(
    "/battle-traits",
    summary="Battle Trait tables by unit type",
    responses={200: {"model": dict[UnitType, DiceTable]}},
)
def battle_traits() -> Any:
    return _dump(rulebook().honours.battle_traits)


@router.get(
    "/battle-traits/{unit_type}",
    summary="The Battle Trait table for one unit type",
    responses={200: {"model": DiceTable}},
)
def battle_trait_table(unit_type: UnitType) -> Any:
    return _dump(rulebook().honours.battle_traits[unit_type])


@router.get(
    "/weapon-enhancements",
    summary="Weapon Enhancement tables (ranged, melee)",
    responses={200: {"model": dict[WeaponType, DiceTable]}},
)
def weapon_enhancements() -> Any:
    return _dump(rulebook().honours.weapon_enhancements)


@router.get(
    "/weapon-enhancements/{weapon_type}",
    summary="One Weapon Enhancement table",
    responses={200: {"model": DiceTable}},
)
def weapon_enhancement_table(weapon_type: WeaponType) -> Any:
    return _dump(rulebook().honours.weapon_enhancements[weapon_type])


@router.get(
    "/psychic-fortitudes",
    summary="The Psychic Fortitude table",
    responses={200: {"model": DiceTable}},
)
def psychic_fortitudes() -> Any:
    return _dump(rulebook().honours.psychic_fortitudes)


@router.get("/crusade-relics", summary="Crusade Relics and their category rules")
def crusade_relics() -> Any:
    honours = rulebook().honours
    return {
        "categories": _dump(honours.relic_categories),
        "relics": _dump(honours.crusade_relics),
    }


@router.get(
    "/battle-scars",
    summary="Battle Scar tables by unit type",
    responses={200: {"model": dict[UnitType, DiceTable]}},
)
def battle_scars() -> Any:
    return _dump(rulebook().scars.battle_scars)


@router.get(
    "/battle-scars/{unit_type}",
    summary="The Battle Scar table for one unit type",
    responses={200: {"model": DiceTable}},
)
def battle_scar_table(unit_type: UnitType) -> Any:
    return _dump(rulebook().scars.battle_scars[unit_type])


@router.get(
    "/requisitions",
    summary="The Requisitions, their cost, timing and targets",
    responses={200: {"model": list[Requisition]}},
)
def requisitions() -> Any:
    return _dump(rulebook().requisitions)


@router.get(
    "/agendas",
    summary="Agendas with category, tally and XP formula",
    responses={200: {"model": list[Agenda]}},
)
def agendas(category: str | None = None) -> Any:
    chosen = [a for a in rulebook().agendas if category is None or a.category == category]
    return [a.model_dump(mode="json") for a in chosen]


@router.get(
    "/missions",
    summary="Missions, optionally for one battle size",
    responses={200: {"model": list[Mission]}},
)
def missions(battle_size: str | None = None) -> Any:
    book = rulebook()
    if battle_size is not None and battle_size not in {s.id for s in book.battle_sizes}:
        raise NotFound(
            "battle_size_unknown", f"'{battle_size}' is not a battle size.", field="battle_size"
        )
    chosen = book.missions if battle_size is None else book.missions_for(battle_size)
    return _dump(chosen)


@router.get(
    "/missions/{mission_id}",
    summary="One mission with its victor bonus",
    responses={200: {"model": Mission}},
)
def mission(mission_id: str) -> Any:
    try:
        return _dump(rulebook().mission(mission_id))
    except KeyError:
        raise NotFound(
            "mission_unknown", f"'{mission_id}' is not a mission.", field="mission_id"
        ) from None
