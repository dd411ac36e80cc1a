"""Result confirmation: a result entered by a player is only a proposal until the opponent
(or an organizer) confirms it; either side may dispute it, and an organizer settles it.
Until then no card changes. A result an organizer enters for other players' battle applies
at once; a battle the organizer plays in themselves waits for the opponent like any
player's, unless the campaign's ``organizer_results_need_confirmation`` is off.

At the table the opponent confirms on the recorder's phone with their password or their
short PIN (``accounts.set_pin``); both are checked like a log-in."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, Campaign, Decision, Force, User
from app.errors import DomainError
from app.services.accounts import access, accounts
from app.services.battles import lifecycle
from app.services.battles.lifecycle import SideResult
from app.services.campaigns.membership import role_of
from app.services.feed import events, history

WAITING = ("proposed", "disputed")


def submit(
    session: Session, *, battle_id: int, results: list[SideResult]
) -> tuple[Battle, list[BattleSide]]:
    """Apply the result (organizer) or store it as a proposal (player), after checking it
    fully: the proposal is resolved inside a savepoint and rolled back, so a result that the
    rules would refuse is refused now, not at confirmation. The battle and its sides as
    they now stand (the answer shows them without reading them again)."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    if _applies_at_once(session, battle, sides):
        return lifecycle.record_result(
            session, battle_id=battle_id, results=results, loaded=(battle, sides)
        )
    if battle.status != "mustered":
        raise DomainError(
            "battle_already_recorded",
            f"Battle {battle_id} is {battle.status}; its result cannot be entered again.",
            status=409,
        )
    with session.begin_nested() as trial:
        lifecycle.record_result(session, battle_id=battle_id, results=results)
        trial.rollback()
    session.expire_all()
    battle, sides = lifecycle.get_battle(session, battle_id)
    battle.status = "proposed"
    battle.proposal = {"sides": [asdict(r) for r in results]}
    battle.proposed_by = session.info.get("actor_id")
    session.add(battle)
    history.record(
        session, campaign_id=battle.campaign_id, battle_id=battle.id, kind="result_proposed"
    )
    return battle, sides


def preview(session: Session, *, battle_id: int, results: list[SideResult]) -> list[dict[str, Any]]:
    """What applying the result would do, worked out by the rules engine itself: the result
    is recorded inside a savepoint and rolled back. Per side: its report (XP by source,
    Out of Action tests, Devastating Blows, promotions), the Requisition points it would
    have after, and the decisions it would owe. Dice the app rolls are seeded by the battle,
    so a confirmation later rolls exactly these."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    if battle.status != "mustered":
        raise DomainError(
            "battle_already_recorded",
            f"Battle {battle_id} is {battle.status}; its result cannot be entered again.",
            status=409,
        )
    before = {s.force_id: _points(session, s.force_id) for s in sides}
    newest = history.mark(session)
    with session.begin_nested() as trial:
        lifecycle.record_result(session, battle_id=battle_id, results=results)
        _battle, after = lifecycle.get_battle(session, battle_id)
        owed = session.exec(select(Decision).where(Decision.battle_id == battle_id)).all()
        news = _pack_news(session, newest)
        found = [
            {
                "force_id": side.force_id,
                "report": copy.deepcopy(side.report),
                "rp_before": before[side.force_id],
                "rp_after": _points(session, side.force_id),
                "won": side.won,
                "decisions": [
                    {"kind": d.kind, "card_id": d.card_id, **_source(d)}
                    for d in owed
                    if d.force_id == side.force_id
                ],
                "pack_news": news.get(side.force_id, []),
            }
            for side in after
        ]
        trial.rollback()
    session.expire_all()
    return found


# What a rule pack's triggers, quests and thresholds did, as the feed will tell it (issue 38).
PACK_NEWS = ("counter_changed", "threshold_reached", "card_removed", "card_transformed")


def _pack_news(session: Session, since: int) -> dict[int, list[str]]:
    """Each force's feed sentences about its pack counters, quests and thresholds, from the
    events the trial result recorded (read before it is rolled back)."""
    rows = [
        e
        for e in history.unwritten(session, since=since)
        if e.force_id and (e.kind in PACK_NEWS or e.kind.startswith("quest_"))
    ]
    found: dict[int, list[str]] = {}
    for row, sentence in zip(rows, events.summaries(session, rows), strict=True):
        assert row.force_id is not None
        found.setdefault(row.force_id, []).append(sentence)
    return found


def _source(decision: Decision) -> dict[str, str]:
    """The threshold or quest a free-requisition decision comes from, by name."""
    payload = decision.payload if isinstance(decision.payload, dict) else {}
    named = payload.get("threshold") or payload.get("quest") or {}
    return {"source": str(named["name"])} if isinstance(named, dict) and named.get("name") else {}


def _points(session: Session, force_id: int) -> int:
    force = session.get(Force, force_id)
    return force.requisition_points if force is not None else 0


def table_opponent(session: Session, battle: Battle, sides: list[BattleSide]) -> User | None:
    """Who confirms a proposed result at the table: the other force's player (the one who
    did not enter it), when that force has a player."""
    return table_opponent_among(
        session,
        status=battle.status,
        proposed_by=battle.proposed_by,
        players=_owners(session, sides),
    )


def table_opponent_among(
    session: Session, *, status: str, proposed_by: int | None, players: Iterable[int]
) -> User | None:
    """``table_opponent``, from the battle's status, recorder and players read already (the
    battle page keeps them)."""
    if status != "proposed":
        return None
    return _the_other(session, set(players), proposed_by)


def _the_other(session: Session, players: set[int], player: int | None) -> User | None:
    """The one player of the battle who is not ``player`` (None: none, or no one player)."""
    others = players - {player}
    return session.get(User, min(others)) if len(others) == 1 else None


def table_opponent_of(session: Session, *, battle_id: int) -> User | None:
    """The player who would confirm this battle at the table, if one is awaited."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    return table_opponent(session, battle, sides)


def opponent_to_confirm(session: Session, *, battle_id: int, recorder_id: int) -> User | None:
    """Who would confirm a result ``recorder_id`` is about to submit for this battle (the
    review step offers them the PIN there): as ``table_opponent`` once it is proposed."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    if _applies_at_once(session, battle, sides, actor=recorder_id):
        return None
    return _the_other(session, _owners(session, sides), recorder_id)


def confirm_at_table(
    session: Session, *, battle_id: int, password: str | None = None, pin: str | None = None
) -> Battle:
    """The opponent confirms on the recorder's phone, with their own password or their PIN:
    both players are at the table, so nobody has to find the result again later.
    Confirming is then theirs, exactly as from their own account."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    opponent = table_opponent(session, battle, sides)
    if opponent is None:
        raise DomainError(
            "no_result_to_confirm",
            f"Battle {battle_id} has no result waiting for an opponent at the table.",
            status=409,
        )
    who = opponent.display_name or opponent.username
    if pin is not None:
        accounts.check_pin(opponent, pin, who=who)
    else:
        try:
            accounts.authenticate(session, username=opponent.username, password=password or "")
        except DomainError:
            raise DomainError(
                "password_invalid",
                f"That is not {who}'s password.",
                status=422,
                field="password",
            ) from None
    return confirm(session, battle_id=battle_id, actor_id=opponent.id)


def applies_at_once(session: Session, *, battle_id: int, user: User) -> bool:
    """Whether a result ``user`` enters for this battle applies at once (for the review
    page's wording); ``submit`` decides the same way."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    return _applies_at_once(session, battle, sides, actor=user.id)


def _applies_at_once(
    session: Session, battle: Battle, sides: list[BattleSide], actor: int | None = None
) -> bool:
    """An organizer's result applies at once, except in a battle they play against another
    player while the campaign wants organizers' results confirmed."""
    actor = actor if actor is not None else session.info.get("actor_id")
    if not _is_organizer(session, battle, actor):
        return False
    if actor is None or not _organizers_confirmed(session, battle):
        return True
    owners = _owners(session, sides)
    return actor not in owners or not owners - {actor}


def _organizers_confirmed(session: Session, battle: Battle) -> bool:
    campaign = session.get(Campaign, battle.campaign_id)
    return campaign is None or campaign.organizer_results_need_confirmation


def confirm(session: Session, *, battle_id: int, actor_id: int | None = None) -> Battle:
    """Apply a waiting result. ``actor_id``: who confirms, when not the request's caller
    (the opponent confirming at the table)."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    if actor_id is not None:
        session.info["actor_id"] = actor_id
    organizer = _is_organizer(session, battle)
    if battle.status not in WAITING:
        raise DomainError(
            "no_result_to_confirm", f"Battle {battle_id} has no result waiting.", status=409
        )
    actor = session.info.get("actor_id")
    if (
        organizer
        and actor is not None
        and actor == battle.proposed_by
        and _organizers_confirmed(session, battle)
    ):
        # an organizer's own result goes to the opponent: they cannot wave it through
        raise DomainError(
            "cannot_confirm_own_result",
            "Your opponent (or another organizer) confirms a result you entered.",
            status=403,
        )
    if not organizer:
        if battle.status == "disputed":
            raise DomainError(
                "result_disputed", "A disputed result is settled by an organizer.", status=403
            )
        actor = session.info.get("actor_id")
        if actor == battle.proposed_by or actor not in _owners(session, sides):
            raise DomainError(
                "cannot_confirm_own_result",
                "The opponent (or an organizer) confirms a result, not the player who entered it.",
                status=403,
            )
    results = [_side_result(r) for r in battle.proposal["sides"]]
    battle.status = "mustered"  # record_result applies from a mustered battle
    lifecycle.record_result(session, battle_id=battle_id, results=results, loaded=(battle, sides))
    history.record(
        session,
        campaign_id=battle.campaign_id,
        battle_id=battle.id,
        kind="result_confirmed",
        forces=[s.force_id for s in sides],
    )
    return battle


def dispute(session: Session, *, battle_id: int) -> Battle:
    battle, _sides = lifecycle.get_battle(session, battle_id)
    if battle.status != "proposed":
        raise DomainError(
            "no_result_to_dispute", f"Battle {battle_id} has no proposed result.", status=409
        )
    battle.status = "disputed"
    session.add(battle)
    history.record(
        session, campaign_id=battle.campaign_id, battle_id=battle.id, kind="result_disputed"
    )
    return battle


def players(session: Session, forces: list[Force]) -> dict[int, User]:
    """The accounts that play these forces, by id (for the battle page)."""
    ids = [f.owner_id for f in forces if f.owner_id is not None]
    return {u.id: u for u in session.exec(select(User).where(col(User.id).in_(ids))).all() if u.id}


def proposer(session: Session, battle: Battle) -> User | None:
    """The player who entered the waiting result."""
    return session.get(User, battle.proposed_by) if battle.proposed_by else None


def battle_decisions(session: Session, battle_id: int) -> list[Decision]:
    """Every decision a battle left, oldest first."""
    query = select(Decision).where(Decision.battle_id == battle_id).order_by(col(Decision.id))
    return list(session.exec(query).all())


def _owners(session: Session, sides: list[BattleSide]) -> set[int]:
    held = access.battle_players(session, sides[0].battle_id) if sides else None
    if held is not None:  # the request's access check read them for this battle
        return set(held)
    ids = [s.force_id for s in sides]
    owners = session.exec(select(Force.owner_id).where(col(Force.id).in_(ids))).all()
    return {o for o in owners if o is not None}


def _is_organizer(session: Session, battle: Battle, actor: int | None = None) -> bool:
    actor = actor if actor is not None else session.info.get("actor_id")
    if actor is None:
        return True  # services called without a caller (CLI, demo) act as the organizer
    if _is_admin(session, actor):
        return True
    return role_of(session, campaign_id=battle.campaign_id, user_id=actor) == "organizer"


def _is_admin(session: Session, actor: int) -> bool:
    user = session.get(User, actor)
    return user is not None and user.is_admin


def _side_result(data: dict[str, Any]) -> SideResult:
    choices = data.get("out_of_action_choices") or {}
    return SideResult(**{**data, "out_of_action_choices": {int(k): v for k, v in choices.items()}})
