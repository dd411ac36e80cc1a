"""Pages for the choices the rules leave to a player after a battle (a failed Out of Action
test, a Battle Scar, Battle Honours, a victor's bonus), answered one at a time through the
``decisions`` service, as the JSON API answers them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlmodel import Session
from starlette.datastructures import FormData

from app.db.models import Card, Decision, User
from app.db.session import SessionDep
from app.edge.schemas.decisions import DecisionAnswer, answer_of, dice_of
from app.errors import DomainError
from app.routing import OneHopRoute
from app.rules import eligibility
from app.rules.data import (
    AddUnit,
    FreeRequisitions,
    HonourCategory,
    RequisitionTarget,
    VictorBonus,
    WeaponType,
)
from app.rules.dice import Dice
from app.rules.errors import RuleError
from app.rules.honours import weapon_enhancements_to_choose, weapons_to_enhance
from app.services.accounts.access import Access
from app.services.accounts.accounts import Principal
from app.services.battles import decisions, wizard
from app.services.forces.forces import get_force, load_force
from app.services.packs import pack_reward, rulebooks
from app.web import table_pass
from app.web.form_models import DECISION_REQUISITION_FIELDS as REQUISITION_FIELDS
from app.web.form_models import NEW_UNIT_FIELDS, checked, number_bounds
from app.web.forms import Form, field_int, field_text, field_texts
from app.web.pages import attempt, page, redirect, render

router = APIRouter(route_class=OneHopRoute)

Reader = Annotated[Principal | None, page(Access.CAMPAIGN_READ)]
Owner = Annotated[Principal, page(Access.FORCE_OWN)]
Member = Annotated[Principal, page(Access.CAMPAIGN_READ)]


def decision_title(row: Decision) -> str:
    if row.kind == "victor_bonus" and row.payload.get("quest"):
        return "A quest's requisitions"
    if row.kind == "victor_bonus" and row.payload.get("threshold"):
        return "Free requisitions"  # a rule pack's threshold reached, not a victory
    return {
        "out_of_action": "Failed Out of Action test",
        "battle_scar": "Battle Scar",
        "battle_honour": "Battle Honour",
        "victor_bonus": "Victor bonus",
    }.get(row.kind, row.kind.replace("_", " ").capitalize())


def outcome_words(book: Any, row: Decision) -> list[str]:
    """What an answered decision rolled and what it gained, in words: after "roll for it"
    the player sees the dice and what they mean."""
    answer = row.answer or {}
    # the first letter up, the unit's name as it is (str.capitalize lowers the rest)
    purposes = [str(r["purpose"]) for r in answer.get("rolled") or []]
    words = [
        f"{p[:1].upper()}{p[1:]}: rolled {r['value']} (D{r['sides']})."
        for p, r in zip(purposes, answer.get("rolled") or [], strict=True)
    ]
    if row.kind == "out_of_action" and answer.get("consequence") == "devastating_blow":
        for r in answer.get("rolled") or []:
            words.append(f"So it loses {r['value']} XP (never below 0); rank and honours stay.")
    for gained in answer.get("gained") or []:
        _card, kind, entry_id = str(gained).split(":", 2)
        found = _table_entry(book, kind, entry_id)
        if found is not None:
            words.append(f"Gained {found.name}: {found.summary}")
    return words


def _table_entry(book: Any, kind: str, entry_id: str) -> Any:
    """The scar or honour entry with this id, from whichever table holds it."""
    if kind in ("battle_trait", "psychic_fortitude"):
        found = book.honours.pack_entry(HonourCategory(kind), entry_id)
        if found is not None:
            return found
    if kind == "scar":
        tables = list(book.scars.battle_scars.values())
    elif kind == "battle_trait":
        tables = list(book.honours.battle_traits.values())
    elif kind == "weapon_enhancement":
        tables = list(book.honours.weapon_enhancements.values())
    elif kind == "psychic_fortitude":
        tables = [book.honours.psychic_fortitudes]
    else:
        return next((r for r in book.honours.crusade_relics if r.id == entry_id), None)
    return next((e for t in tables for e in t.entries if e.id == entry_id), None)


def _name(user: User | None) -> str:
    return (user.display_name or user.username) if user else ""


def _next_pending(session: Session, force_id: int) -> Decision | None:
    waiting = decisions.list_decisions(session, force_id=force_id, status="pending")
    return waiting[0] if waiting else None


@router.get("/forces/{force_id}/decisions")
def next_decision(
    request: Request, session: SessionDep, principal: Reader, force_id: int
) -> Response:
    found = _next_pending(session, force_id)
    if found is not None:
        return redirect(f"/decisions/{found.id}")
    force = get_force(session, force_id)  # its name: not its units
    return render(request, "pages/decision_none.html", principal, force=force)


def _decision_context(
    session: Session,
    principal: Principal | None,
    row: Decision,
    *,
    category: str = "",
    card_choice: int | None = None,
    weapon_type: str = "",
    held: table_pass.TablePass | None = None,
) -> dict[str, Any]:
    view = load_force(session, row.force_id)
    book = rulebooks.book_of(session, view.force)
    cards = {c.id: c for c in view.cards}
    card = cards.get(row.card_id) if row.card_id else None
    battle = decisions.battle_of(session, row)
    waiting = decisions.list_decisions(session, force_id=row.force_id, status="pending")
    user = principal.user if principal else None
    may_answer = bool(
        user
        and (
            user.id == view.force.owner_id
            or wizard.is_organizer(session, campaign_id=view.force.campaign_id, user=user)
        )
    )
    # the opponent who confirmed on this phone answers their own decision of that battle
    guest = bool(held and held.battle_id == row.battle_id and held.user_id == view.force.owner_id)
    context: dict[str, Any] = {
        "guest": guest,
        "guest_name": _name(session.get(User, view.force.owner_id)) if guest else "",
        "answer_url": f"/decisions/{row.id}/answer" + ("-at-table" if guest else ""),
        "row": row,
        "force": view.force,
        "card": card,
        "battle": battle,
        "mission": book.mission(battle.mission) if battle else None,
        "title": decision_title(row),
        "waiting": len(waiting),
        "position": next((i + 1 for i, w in enumerate(waiting) if w.id == row.id), None),
        "may_answer": (may_answer or guest) and row.status == "pending",
        "units": [c for c in view.cards if not c.removed],
        "values": {},
        "used": [],
        "entry_names": _pack_entry_names(book),  # a pack table's results by name
    }
    if row.kind == "out_of_action":
        context["gain"] = row.payload.get("gain", {})
        gain = context["gain"]
        context["xp_kept"] = (
            gain.get("battle_experience", 0)
            + gain.get("marked_for_greatness", 0)
            + gain.get("dealers_of_death", 0)
            + sum((gain.get("agendas") or {}).values())
        )
        context["xp_after_blow"] = gain.get("dealers_of_death", 0)
        context["options"] = row.payload.get("options", [])
        # issue 40: the scar (rolled or chosen) on the same page as the consequence
        if "battle_scar" in context["options"] and card is not None:
            context.update(_scar_context(book, view, card))
    elif row.kind == "battle_scar" and card is not None:
        context.update(_scar_context(book, view, card))
    elif row.kind == "battle_honour":
        context.update(_honour_context(book, view, row, card, category, card_choice, weapon_type))
    elif row.kind == "victor_bonus":
        bonus = VictorBonus.model_validate(row.payload["bonus"])
        effect = bonus.effect
        context["bonus"] = bonus
        granted = list(effect.requisitions) if isinstance(effect, FreeRequisitions) else []
        context["granted"] = [
            {
                "index": i,
                "requisition": book.requisition(r),
                "unit": book.requisition(r).target == RequisitionTarget.UNIT,
                "fields": REQUISITION_FIELDS.get(r, ()) or _new_unit_fields(book, r),
            }
            for i, r in enumerate(granted)
        ]
        context["one_of"] = isinstance(effect, FreeRequisitions) and effect.mode == "one_of"
        context["number_bounds"] = number_bounds(book)  # the server's (issue 47)
        if pack_reward.owed_by_pack(row.payload):  # issue 47: only the units it may go to
            allowed = pack_reward.units(row, view.value, book)
            context["units"] = [c for c in context["units"] if str(c.id) in allowed]
            context["reward_source"] = pack_reward.source_words(row.payload)
    return context


def _new_unit_fields(book: Any, requisition: str) -> tuple[tuple[str, str, str], ...]:
    """A pack's requisition whose new unit the player names (``add_unit`` with ``chosen``):
    its name, Power, points and keywords, as the Requisitions page asks them (issue 47)."""
    found = next((r for r in book.requisitions if r.id == requisition), None)
    if found is None or not any(isinstance(e, AddUnit) and e.chosen for e in found.effects):
        return ()
    return tuple((f.name, f.label, f.kind) for f in NEW_UNIT_FIELDS)


def _scar_context(book: Any, view: Any, card: Card) -> dict[str, Any]:
    value = view.value.card(str(card.id))
    table = book.scars.battle_scars[value.unit_type]
    return {
        "scars": [e for e in table.entries if e.id not in value.scar_ids],
        "pack_tables": _tables(book, "battle_scar", value, view.value.counters),
        "pack_scars": [
            e
            for e in book.scars.pack_scars
            if e.id not in value.scar_ids
            and not book.rolled_only("battle_scar", e.id)
            and (not e.eligible or eligibility.meets(e.eligible, value, {}, book))
        ],
    }


def _honour_context(
    book: Any,
    view: Any,
    row: Decision,
    card: Card | None,
    category: str,
    card_choice: int | None,
    weapon_type: str,
) -> dict[str, Any]:
    categories = [HonourCategory(c) for c in row.payload.get("categories", [])]
    eligible = [int(i) for i in row.payload.get("eligible", [])]
    if row.status == "pending":  # what the answer accepts now, as the API offers it
        offer = decisions.offer_of(view.value, row, book)
        eligible = offer.eligible
        categories = [HonourCategory(c) for c in offer.categories] or categories
    target = card.id if card else card_choice
    if card is None and len(eligible) == 1:
        target = eligible[0]
    chosen_card = next((c for c in view.cards if c.id == target), None)
    categories = [c for c in categories if _may_gain(c, chosen_card, book)] or categories
    chosen = HonourCategory(category) if category in {c.value for c in categories} else None
    if chosen is None and len(categories) == 1 and target is not None:
        chosen = categories[0]
    context: dict[str, Any] = {
        "categories": categories,
        "eligible": [c for c in view.cards if c.id in eligible],
        "target": target,
        "category": chosen,
        "weapon_type": weapon_type if weapon_type in ("ranged", "melee", "both") else "ranged",
        "reason": _honour_reason(book, row.payload.get("reason", "")),
    }
    if target is None or target not in {c.id for c in view.cards}:
        context["category"] = None
        return context
    context["target_card"] = next(c for c in view.cards if c.id == target)
    # the weapons its wargear lists that may take one, suggested under the weapon's field
    context["weapons"] = weapons_to_enhance(view.value.card(str(target)))
    if chosen is None:
        # issue 40: every kind with its entries on one page (the kind and the entry in two
        # taps at most; a Weapon Enhancement's melee table is a link away)
        context["kinds"] = [
            {"category": c, **_honour_entries(book, view, target, c, "ranged")} for c in categories
        ]
        return context
    context.update(_honour_entries(book, view, target, chosen, context["weapon_type"]))
    return context


def _honour_entries(
    book: Any, view: Any, target: int, chosen: HonourCategory, weapon_type: str
) -> dict[str, Any]:
    """The entries of one kind of Battle Honour the unit may take, and how many to pick."""
    context: dict[str, Any] = {"weapon_type": weapon_type, "relics": False}
    value = view.value.card(str(target))
    held = value.honour_ids(chosen)
    # a rule pack's own entries the unit may take come after the core table's
    packs = [
        e
        for e in book.honours.pack_entries(chosen)
        if e.id not in held
        and not book.rolled_only(chosen.value, e.id)
        and (not e.eligible or eligibility.meets(e.eligible, value, view.value.counters, book))
    ]
    context["pack_tables"] = _tables(book, chosen.value, value, view.value.counters)
    if chosen == HonourCategory.BATTLE_TRAIT:
        table = book.honours.battle_traits[value.unit_type]
        context["entries"] = [e for e in table.entries if e.id not in held] + packs
        context["picks"] = 1
    elif chosen == HonourCategory.PSYCHIC_FORTITUDE:
        context["entries"] = [
            e for e in book.honours.psychic_fortitudes.entries if e.id not in held
        ] + packs
        context["picks"] = 1
    elif chosen == HonourCategory.WEAPON_ENHANCEMENT:
        kind = WeaponType.RANGED if weapon_type == "ranged" else WeaponType.MELEE
        # A pack's enhancement goes to a weapon of its kind, one per weapon (ruling 60): the
        # same one may improve several weapons of the unit.
        fits = ("any", weapon_type) if weapon_type != "both" else None
        own = [
            e
            for e in book.honours.pack_weapon_enhancements
            if (fits is None or e.weapon_type in fits)
            and not book.rolled_only("weapon_enhancement", e.id)
            and (not e.eligible or eligibility.meets(e.eligible, value, view.value.counters, book))
        ]
        context["entries"] = list(book.honours.weapon_enhancements[kind].entries) + own
        context["picks"] = weapon_enhancements_to_choose(value)
        context["pack_enhancements"] = bool(own)
    else:
        context["entries"] = [r for r in book.honours.crusade_relics if r.withdrawn_by is None]
        context["picks"] = 1
        context["relics"] = True
    return context


def _pack_entry_names(book: Any) -> dict[str, str]:
    """Each rule pack entry's name by id: a pack table's results name them (issue 38)."""
    names = {e.id: e.name for c in HonourCategory for e in book.honours.pack_entries(c)}
    return names | {e.id: e.name for e in book.scars.pack_scars}


def _tables(book: Any, category: str, card: Any, counters: Any) -> list[Any]:
    """A rule pack's own tables of ``category`` the unit may roll on (issue 38)."""
    return [
        t
        for t in book.pack_tables
        if t.category == category
        and (not t.eligible or eligibility.meets(t.eligible, card, counters, book))
    ]


def _may_gain(category: HonourCategory, card: Card | None, book: Any) -> bool:
    """Offer only what the unit can take (issue 12): Psychic Fortitudes are for PSYKERs and
    Crusade Relics for CHARACTERs (or any unit, where a pack's relic says so: issue 38);
    the rules refuse the others anyway."""
    if card is None:
        return True
    keywords = {k.upper() for k in card.keywords or []}
    if category == HonourCategory.PSYCHIC_FORTITUDE:
        return "PSYKER" in keywords
    if category == HonourCategory.CRUSADE_RELIC:
        return "CHARACTER" in keywords or any(
            r.bearer == "any_unit" for r in book.honours.crusade_relics
        )
    return True


def _honour_reason(book: Any, reason: str) -> str:
    if reason.startswith("rank:"):
        return f"reached the rank {book.rank(reason.removeprefix('rank:')).name}"
    if reason == "victor_bonus":
        return "won the battle: a victor bonus"
    return reason


@router.get("/decisions/{decision_id}")
def decision_page(
    request: Request,
    session: SessionDep,
    principal: Reader,
    decision_id: int,
    category: str = "",
    card_id: str = "",
    weapon_type: str = "",
    after: str = "",
    handed_back: str = "",
) -> Response:
    row = decisions.get_decision(session, decision_id)
    context = _decision_context(
        session,
        principal,
        row,
        category=category[:40],
        card_choice=int(card_id) if card_id.isdigit() and len(card_id) < 10 else None,
        weapon_type=weapon_type[:10],
        held=table_pass.read(request, battle_id=row.battle_id) if principal else None,
    )
    book = rulebooks.force_book(session, row.force_id)
    context["outcome"] = outcome_words(book, row) if row.status == "answered" else []
    context["handed_back"] = handed_back == "1"
    if after.isdigit() and len(after) < 10:
        answered = decisions.find_decision(session, int(after))
        if answered is not None and answered.force_id == row.force_id:
            context["previous"] = outcome_words(book, answered)
    return render(request, "pages/decision.html", principal, **context)


def _entered_dice(form: FormData) -> list[int] | None:
    """Dice rolled at the table (typed in), or None: the server rolls."""
    if field_text(form, "dice_mode") == "enter":
        return wizard.parse_dice(field_text(form, "dice", 200), "dice")
    return None


def _answer(row: Decision, form: FormData) -> DecisionAnswer:
    """The form as the JSON API's body: a DecisionAnswer, checked by the same model."""
    answer: dict[str, Any] = {"entries": [], "requisitions": [], "dice": _entered_dice(form)}
    if row.kind == "out_of_action":
        consequence = field_text(form, "consequence", 40)
        if consequence not in ("devastating_blow", "battle_scar"):
            raise RuleError(
                "decision_answer_incomplete",
                "Choose Devastating Blow or Battle Scar.",
                field="consequence",
            )
        answer["consequence"] = consequence
    elif row.kind == "battle_scar":
        if scar := field_text(form, "scar", 60):
            answer["scar"] = scar
        if table := field_text(form, "table", 60):
            answer["table"] = table
    elif row.kind == "battle_honour":
        category = field_text(form, "category", 40)
        if category not in {c.value for c in HonourCategory}:
            raise RuleError("decision_answer_incomplete", "Choose a category.", field="category")
        answer["category"] = category
        # the one-page form names each kind's entries apart (entries_<kind>)
        chosen = field_texts(form, f"entries_{category}") or field_texts(form, "entries")
        answer["entries"] = [e for e in chosen if e][:2]
        # the one-page form names each kind's tables apart too (table_<kind>)
        if table := field_text(form, f"table_{category}", 60) or field_text(form, "table", 60):
            answer["table"] = table
        if row.card_id is None:
            answer["card_id"] = field_int(form, "card_id")
            if answer["card_id"] is None:
                del answer["card_id"]
        model, weapon = field_text(form, "weapon_model", 120), field_text(form, "weapon_name", 120)
        if model or weapon:
            weapon_type = field_text(form, "weapon_type", 10)
            answer["weapon"] = {
                "model": model,
                "weapon": weapon,
                "weapon_type": weapon_type
                if weapon_type in ("ranged", "melee", "both")
                else "ranged",
                "is_relic": bool(field_text(form, "weapon_is_relic")),
            }
    elif row.kind == "victor_bonus":
        answer["requisitions"] = _requisitions(row, form)
    return checked(DecisionAnswer, answer)


def _requisitions(row: Decision, form: FormData) -> list[dict[str, Any]]:
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    effect = bonus.effect
    granted = list(effect.requisitions) if isinstance(effect, FreeRequisitions) else []
    used = {int(v) for v in field_texts(form, "use") if v.isdigit()}
    # issue 40: a unit chosen for a free requisition is a requisition used (one tap less)
    used |= {i for i in range(len(granted)) if field_int(form, f"card_id_{i}") is not None}
    orders = []
    for index, requisition in enumerate(granted):
        if index not in used:
            continue
        order: dict[str, Any] = {"requisition": requisition}
        card = field_int(form, f"card_id_{index}")
        if card is not None:
            order["card_id"] = card
        if field_text(form, f"unit_name_{index}") or field_text(form, f"unit_power_rating_{index}"):
            order["new_unit"] = {  # a pack's unit the player names (issue 47)
                "name": field_text(form, f"unit_name_{index}"),
                "power_rating": field_int(form, f"unit_power_rating_{index}", low=1, high=200),
                "points": field_int(form, f"unit_points_{index}", low=0, high=10_000),
                "keywords": [
                    k.strip().upper()
                    for k in field_text(form, f"unit_keywords_{index}").split(",")
                    if k.strip()
                ],
            }
        for name, _label, kind in REQUISITION_FIELDS.get(requisition, ()):
            key = f"{name}_{index}"
            if kind == "number":
                number = field_int(form, key, low=1, high=200)
                if number is not None:
                    order[name] = number
            elif name == "replaced_weapons":
                order[name] = [w.strip() for w in field_text(form, key).split(",") if w.strip()]
            elif text := field_text(form, key):
                order[name] = text
        orders.append(order)
    return orders


@router.post("/decisions/{decision_id}/answer")
def answer_decision(
    request: Request, session: SessionDep, principal: Owner, form: Form, decision_id: int
) -> Response:
    return _answer_and_go(request, session, principal, form, decision_id, None)


@router.post("/decisions/{decision_id}/answer-at-table")
def answer_at_table(
    request: Request, session: SessionDep, principal: Member, form: Form, decision_id: int
) -> Response:
    """The opponent answers their own decision on the recorder's phone, with the table pass
    their confirmation there gave (app/web/table_pass.py)."""
    row = decisions.get_decision(session, decision_id)
    held = table_pass.read(request, battle_id=row.battle_id) if row.battle_id else None
    if held is None:
        raise DomainError(
            "table_pass_missing",
            "Only the opponent who just confirmed the result on this phone can answer here, "
            "for a few minutes; otherwise answer from your own account.",
            status=403,
        )
    decisions.check_table_answer(session, row, user_id=held.user_id, battle_id=held.battle_id)
    session.info["actor_id"] = held.user_id  # the history names who answered
    return _answer_and_go(request, session, principal, form, decision_id, held)


def _answer_and_go(
    request: Request,
    session: Session,
    principal: Principal,
    form: FormData,
    decision_id: int,
    held: table_pass.TablePass | None,
) -> Response:
    row = decisions.get_decision(session, decision_id)
    force_id = row.force_id
    last = row
    with attempt(session) as outcome:
        body = _answer(row, form)
        dice = dice_of(body)
        decisions.answer(session, decision_id=decision_id, answer=answer_of(body), dice=dice)
        if body.consequence == "battle_scar" and "scar" in form:
            last = _answer_scar_too(session, row, form, dice)
    if outcome.refused:
        session.refresh(row)
        card_id = field_text(form, "card_id", 10)
        context = _decision_context(
            session,
            principal,
            row,
            category=field_text(form, "category", 40),
            card_choice=int(card_id) if card_id.isdigit() else None,
            weapon_type=field_text(form, "weapon_type", 10),
            held=held,
        )
        context["values"] = {k: v for k, v in form.items() if isinstance(v, str)}
        context["used"] = field_texts(form, "use")
        context["chosen"] = field_texts(form, "entries")  # kept ticked after a refusal
        return render(
            request,
            "pages/decision.html",
            principal,
            status=outcome.status,
            error=outcome.error,
            **context,
        )
    row = last
    if held is not None:
        return _next_at_table(session, principal, row, held)
    following = _next_pending(session, force_id)
    rolled = bool((row.answer or {}).get("rolled"))
    if following is not None:
        return redirect(f"/decisions/{following.id}" + (f"?after={row.id}" if rolled else ""))
    # a roll is worth seeing before leaving: the answered decision says what it meant
    return redirect(f"/decisions/{row.id}" if rolled else f"/forces/{force_id}")


def _answer_scar_too(session: Session, row: Decision, form: FormData, dice: Dice) -> Decision:
    """The Battle Scar a failed Out of Action test just led to, answered from the same page
    (issue 40): rolled, or the one chosen there. Returns the decision answered last."""
    waiting = decisions.list_decisions(session, force_id=row.force_id, status="pending")
    scar = next((d for d in waiting if d.kind == "battle_scar" and d.card_id == row.card_id), None)
    if scar is None or scar.id is None:
        return row
    body = DecisionAnswer(
        scar=field_text(form, "scar", 60) or None,
        table=field_text(form, "table", 60) or None,  # a rule pack's own table (issue 38)
    )
    return decisions.answer(session, decision_id=scar.id, answer=answer_of(body), dice=dice)


def _next_at_table(
    session: Session, principal: Principal, row: Decision, held: table_pass.TablePass
) -> Response:
    """The opponent's next decision of the battle; after the last, the pass goes and the
    phone's owner is led to their own first decision of the battle (issue 40), else to the
    battle page, which says to hand the phone back."""
    waiting = decisions.waiting_at_table(session, battle_id=held.battle_id, user_id=held.user_id)
    rolled = bool((row.answer or {}).get("rolled"))
    if waiting:
        return redirect(f"/decisions/{waiting[0].id}" + (f"?after={row.id}" if rolled else ""))
    assert principal.user.id is not None
    own = decisions.waiting_at_table(session, battle_id=held.battle_id, user_id=principal.user.id)
    if own and principal.user.id != held.user_id:
        done = redirect(f"/decisions/{own[0].id}?handed_back=1")
    else:
        done = redirect(f"/battles/{held.battle_id}?handed_back=1")
    table_pass.drop(done)
    return done
