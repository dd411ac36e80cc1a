"""The phone wizard that records a battle: set-up, muster, after the game, Out of Action and
review, one page a step. Every rule is the services' (``battles``, ``wizard``); the wizard's
progress is saved on the server per step by ``app.services.battles.wizard``, so a lost
connection or a closed tab loses nothing. The battle it submits is shown by ``app.web.battles``.

Every step is sent the same way: a form opened by ``_step_form`` (the draft, sent back to the
step it is on if this one is not open yet, or its page again when the form is from an older
version), read and checked inside ``attempt``, saved, and on a refusal its page shown again
with the form as sent (``StepForm.page``). A script's request on a step (an autosave, a tap, a
live total) opens the draft with ``_script_draft``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from sqlmodel import Session
from starlette.datastructures import FormData

from app.db.models import BattleDraft
from app.db.session import SessionDep
from app.errors import DomainError, NotFound
from app.routing import OneHopRoute
from app.rules.data import ArchiveRoll, HighestTally
from app.rules.errors import RuleError
from app.services.accounts import accounts
from app.services.accounts.access import Access
from app.services.accounts.accounts import Principal
from app.services.battles import confirmation, lifecycle, two_screens, wizard
from app.services.campaigns import territories
from app.services.forces.forces import get_campaign, load_force
from app.services.packs import pack_watch, rulebooks
from app.web.battles import confirm_here, to_the_opponents_decisions
from app.web.forms import Form, field_int, field_ints, field_text, field_texts
from app.web.pages import STATIC, Outcome, Viewer, attempt, page, redirect, render

router = APIRouter(route_class=OneHopRoute)

Player = Annotated[Principal, page(Access.CAMPAIGN_PLAY)]


STEP_LABELS = {
    "setup": "Set-up",
    "muster": "Muster",
    "after": "After the game",
    "out_of_action": "Out of Action",
    "review": "Review & submit",
}


# --- the wizard: start and find a draft ---------------------------------------------------


def _draft(session: Session, principal: Principal, campaign_id: int, draft_id: int) -> BattleDraft:
    organizer = wizard.is_organizer(session, campaign_id=campaign_id, user=principal.user)
    return wizard.get_draft(
        session,
        campaign_id=campaign_id,
        draft_id=draft_id,
        user=principal.user,
        organizer=organizer,
    )


def _base(draft: BattleDraft) -> str:
    return f"/campaigns/{draft.campaign_id}/drafts/{draft.id}"


def _step_url(draft: BattleDraft, step: str | None = None) -> str:
    return f"{_base(draft)}/{step or draft.step}"


@router.get("/wizard-sw.js", include_in_schema=False)
def service_worker(_viewer: Viewer) -> Response:
    """The wizard's service worker, from the site's root so it may serve the wizard's pages
    when the phone has no signal (see static/wizard-sw.js)."""
    return FileResponse(
        STATIC / "wizard-sw.js",
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache"},
    )


@router.get("/campaigns/{campaign_id}/battles/new")
def new_battle_page(
    request: Request, session: SessionDep, principal: Player, campaign_id: int
) -> Response:
    campaign = get_campaign(session, campaign_id)
    assert principal.user.id is not None
    found = wizard.open_draft(session, campaign_id=campaign_id, user_id=principal.user.id)
    return render(
        request,
        "pages/battle_new.html",
        principal,
        campaign=campaign,
        draft=found,
        draft_url=_step_url(found) if found else None,
    )


@router.post("/campaigns/{campaign_id}/battles/new")
def start_battle(
    request: Request, session: SessionDep, principal: Player, form: Form, campaign_id: int
) -> Response:
    assert principal.user.id is not None
    draft = wizard.start(
        session,
        campaign_id=campaign_id,
        user_id=principal.user.id,
        rematch=field_text(form, "rematch", 5) == "1",
    )
    return redirect(_step_url(draft))


@router.get("/campaigns/{campaign_id}/drafts/{draft_id}")
def resume_draft(
    session: SessionDep, principal: Player, campaign_id: int, draft_id: int
) -> Response:
    draft = _draft(session, principal, campaign_id, draft_id)
    if draft.step == wizard.FINISHED:
        return redirect(f"/battles/{draft.battle_id}" if draft.battle_id else "/")
    return redirect(_step_url(draft))


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/discard")
def discard_draft(
    request: Request, session: SessionDep, principal: Player, campaign_id: int, draft_id: int
) -> Response:
    draft = _draft(session, principal, campaign_id, draft_id)
    wizard.discard(session, draft)
    return redirect(f"/campaigns/{campaign_id}/battles/new")


def _wizard_page(
    request: Request,
    session: Session,
    principal: Principal,
    draft: BattleDraft,
    step: str,
    *,
    refusal: Outcome | None = None,
    d: dict[str, Any] | None = None,
) -> Response:
    """The step's page from the draft as saved or, after a refusal, from `d` (the form as
    sent, so nothing typed is lost) with the error in place."""
    data = wizard.data(draft) if d is None else d
    context = STEP_CONTEXTS[step](session, principal, draft, data)
    if refusal is not None:
        context["error"] = refusal.error
    reached = wizard.STEPS.index(draft.step) if draft.step in wizard.STEPS else 0
    steps = [
        {
            "id": s,
            "label": STEP_LABELS[s],
            "url": _step_url(draft, s) if i <= reached else None,
            "current": s == step,
        }
        for i, s in enumerate(wizard.STEPS)
    ]
    campaign = get_campaign(session, draft.campaign_id)
    return render(
        request,
        f"pages/wizard_{step}.html",
        principal,
        status=refusal.status if refusal else 200,
        draft=draft,
        campaign=campaign,
        base=_base(draft),
        steps=steps,
        step=step,
        step_number=wizard.STEPS.index(step) + 1,
        **context,
    )


def _guard(draft: BattleDraft, step: str) -> Response | None:
    """Send the player to where they are if this step is not open yet (or all is done)."""
    if draft.step == wizard.FINISHED:
        return redirect(f"/battles/{draft.battle_id}")
    if wizard.STEPS.index(step) > wizard.STEPS.index(draft.step):
        return redirect(_step_url(draft))
    if step in ("after", "out_of_action", "review") and draft.battle_id is None:
        return redirect(_step_url(draft, "muster"))
    return None


def _conflict(draft: BattleDraft, form: FormData) -> Outcome | None:
    """A form sent from an older version of the draft, as a refusal to show on the step's
    page as saved now (so the player sees the newer entries and can redo theirs)."""
    try:
        wizard.check_version(draft, field_int(form, "version"))
    except RuleError as error:
        return Outcome(error)
    return None


def _saved(response: Response, draft: BattleDraft) -> Response:
    """A script's answer carries the draft's version for its next request."""
    response.headers[VERSION_HEADER] = str(draft.version)
    return response


def _version_only(draft: BattleDraft) -> Response:
    """An autosave's answer: only the new version, in the body too, since a replay of an
    Idempotency-Key keeps the body but not this header."""
    return HTMLResponse(f'<span data-draft-version="{draft.version}"></span>')


VERSION_HEADER = "X-Draft-Version"
BEFORE_HEADER = "X-Draft-Version-Before"


@dataclass
class StepForm:
    """A step's form sent without a script, opened on its draft: ``d`` is the draft's data,
    which the step reads the form into, checks and saves."""

    request: Request
    session: Session
    principal: Principal
    draft: BattleDraft
    step: str
    d: dict[str, Any]

    def page(self, refusal: Outcome, d: dict[str, Any] | None = None) -> Response:
        """The step's page again, with the refusal in place and the form as sent (``d``, by
        default the data the form was read into), so nothing typed is lost."""
        return _wizard_page(
            self.request,
            self.session,
            self.principal,
            self.draft,
            self.step,
            refusal=refusal,
            d=self.d if d is None else d,
        )


def _step_form(
    request: Request,
    session: Session,
    principal: Principal,
    form: FormData,
    ids: tuple[int, int],
    step: str,
) -> StepForm | Response:
    """The step's form opened on its draft (``ids``: the campaign's and the draft's), or the
    answer instead: the step the player is on, if this one is not open yet; this step's page
    as saved now, if the form came from an older version of the draft."""
    draft = _draft(session, principal, *ids)
    if (sent := _guard(draft, step)) is not None:
        return sent
    if (conflict := _conflict(draft, form)) is not None:
        return _wizard_page(request, session, principal, draft, step, refusal=conflict)
    return StepForm(request, session, principal, draft, step, wizard.data(draft))


# Why a step's form can no longer change the draft: set-up and muster close at the muster,
# the result opens with it; a finished draft takes nothing.
_CLOSED = {
    "setup": ("draft_mustered", "This battle is mustered; its set-up is fixed."),
    "muster": ("draft_mustered", "This battle is already mustered."),
    "after": ("draft_not_open", "This battle's result is not open."),
}


def _refuse_if_closed(draft: BattleDraft, step: str) -> None:
    mustered = draft.battle_id is not None
    if draft.step == wizard.FINISHED or mustered == (step in ("setup", "muster")):
        code, message = _CLOSED[step]
        raise DomainError(code, message, status=409)


def _script_draft(
    session: Session, principal: Principal, form: FormData, ids: tuple[int, int], step: str
) -> BattleDraft:
    """The draft a script's request changes (an autosave, a tap, the live total): refused
    when the step is closed, or when the page's version is older than the draft's."""
    draft = _draft(session, principal, *ids)
    _refuse_if_closed(draft, step)
    wizard.check_version(draft, field_int(form, "version"))
    return draft


# --- step 1: set-up --------------------------------------------------------------------


def _setup_context(
    session: Session, principal: Principal, draft: BattleDraft, d: dict[str, Any]
) -> dict[str, Any]:
    book = rulebooks.campaign_book(session, draft.campaign_id)
    organizer = wizard.is_organizer(session, campaign_id=draft.campaign_id, user=principal.user)
    mine, every = wizard.selectable_forces(
        session, campaign_id=draft.campaign_id, user=principal.user, organizer=organizer
    )
    setup = d["setup"]
    size_id = setup.get("battle_size") or ""
    size = next((s for s in book.battle_sizes if s.id == size_id), None)
    missions = book.missions_for(size_id) if size else ()
    by_size = {s.id: book.missions_for(s.id) for s in book.battle_sizes}
    chosen = next((m for m in missions if m.id == setup.get("mission")), None)
    names = {f.id: f.name for f in every}
    # Each army is offered the Agendas of its own rulebook (a pack's scope, issue 47).
    books = [
        rulebooks.book_of(session, force)
        if (force := next((f for f in every if f.id == setup.get(key)), None))
        else book
        for key in ("force_id", "opponent_id")
    ]
    side_categories = [wizard.agenda_categories(b) for b in books]
    return {
        "d": d,
        "setup": setup,
        "my_forces": mine,
        "all_forces": every,
        "sizes": book.battle_sizes,
        "size": size,
        "by_points": book.numbers.muster_by == "points",
        "missions": missions,
        "missions_by_size": by_size,
        "mission": chosen,
        "agenda_categories": wizard.agenda_categories(book),
        "side_agenda_categories": side_categories,
        "territories": territories.map_of(session, draft.campaign_id),
        "agenda_names": {a.id: a.name for a in book.agendas},
        "side_names": [
            names.get(setup.get("force_id"), "Your force"),
            names.get(setup.get("opponent_id"), "Opponent's force"),
        ],
        "mustered": draft.battle_id is not None,
        # both armies already chosen ("same as last battle", or back from the muster step)
        "armies_known": all(d["rosters"]),
        "roster_sizes": [len(r) for r in d["rosters"]],
        "rematch": bool(setup.get("force_id") and setup.get("opponent_id"))
        and wizard.last_battle(session, int(setup["force_id"]), int(setup["opponent_id"]))
        is not None,
        "opponents": wizard.opponents(every, principal.user),
    }


def _read_setup(form: FormData, d: dict[str, Any]) -> None:
    setup = d["setup"]
    before = (setup.get("force_id"), setup.get("opponent_id"))
    setup["force_id"] = field_int(form, "force_id")
    setup["opponent_id"] = field_int(form, "opponent_id")
    if (setup["force_id"], setup["opponent_id"]) != before:
        d["rosters"], d["warlords"] = [[], []], [None, None]
    size = field_text(form, "battle_size", 40)
    if size != setup.get("battle_size"):
        setup["mission"], setup["mission_roll"] = None, None
    setup["battle_size"] = size
    mission = field_text(form, "mission", 60) or None
    if mission != setup.get("mission"):
        setup["mission"], setup["mission_roll"] = mission, None
    setup["role"] = field_text(form, "role", 20) or "attacker"
    setup["agendas"] = [field_texts(form, "agendas_0"), field_texts(form, "agendas_1")]
    setup["territory_id"] = field_int(form, "territory_id")


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/setup")
def save_setup(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    opened = _step_form(request, session, principal, form, (campaign_id, draft_id), "setup")
    if isinstance(opened, Response):
        return opened
    draft, d = opened.draft, opened.d
    action = field_text(form, "action", 80)
    # "Next" (issue 40): with every unit of both armies in, nothing changes at the muster, so
    # the battle is mustered at once; the muster stays one tap away ("next": its own step).
    ahead = action == "ahead"
    if ahead:
        action = "next"
    with attempt(session) as outcome:
        _refuse_if_closed(draft, "setup")
        _read_setup(form, d)
        if action.startswith("muster:"):  # a mission button of "Same armies": muster at once
            d["setup"]["mission"], d["setup"]["mission_roll"] = action.split(":", 1)[1], None
            action = "muster_now"
        if action == "roll":
            wizard.roll_mission(d, rulebooks.campaign_book(session, campaign_id))
        elif action == "use_roll":
            entered = field_int(form, "mission_roll", low=1, high=6)
            if entered is None:
                raise RuleError(
                    "dice_missing", "Enter the D6 rolled at the table.", field="mission_roll"
                )
            wizard.roll_mission(d, rulebooks.campaign_book(session, campaign_id), entered=entered)
        elif action == "same_as_last" and not wizard.same_as_last(session, d):
            raise RuleError(
                "no_last_battle", "These two forces have not met before.", field="opponent_id"
            )
        if action in ("next", "muster_now"):
            if not d["setup"].get("mission") and d["setup"].get("battle_size"):
                # "Next" without a mission rolls one: a tap saved
                wizard.roll_mission(d, rulebooks.campaign_book(session, campaign_id))
            wizard.check_setup(session, draft, d, user=principal.user)
            wizard.default_rosters(session, d)
            wizard.save(session, draft, d, step="muster" if draft.step == "setup" else None)
            if ahead and wizard.whole_armies(session, d):
                action = "muster_now"
        else:  # an unchecked change: the muster waits until "Next" checks it again
            wizard.save(session, draft, d, step="setup")
    if outcome.refused:
        return opened.page(outcome)
    if action == "muster_now":  # the armies are known (same as last battle): muster at once
        with attempt(session) as mustered:
            wizard.muster(session, draft, d)
        if mustered.refused:
            return _wizard_page(request, session, principal, draft, "muster", refusal=mustered, d=d)
        return redirect(_step_url(draft, "after"))
    if action == "next":
        return redirect(_step_url(draft, "muster"))
    return redirect(_step_url(draft, "setup") + ("#mission" if "roll" in action else ""))


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/setup/save")
def autosave_setup(
    session: SessionDep, principal: Player, form: Form, campaign_id: int, draft_id: int
) -> Response:
    """Script: the set-up form saved on every change (a tick, a size, a mission), so a
    reload or a closed tab keeps it; the step goes back to set-up until "Next" checks it."""
    draft = _script_draft(session, principal, form, (campaign_id, draft_id), "setup")
    d = wizard.data(draft)
    _read_setup(form, d)
    wizard.save(session, draft, d, step="setup")
    return _saved(_version_only(draft), draft)


# --- step 2: muster ----------------------------------------------------------------------


def _muster_context(
    session: Session, principal: Principal, draft: BattleDraft, d: dict[str, Any]
) -> dict[str, Any]:
    """The rosters to pick from, or (once mustered) the battle's own sides."""
    book = rulebooks.campaign_book(session, draft.campaign_id)
    setup = d["setup"]
    armies = []
    for index, key in enumerate(("force_id", "opponent_id")):
        view = load_force(session, int(setup[key]))
        role = setup["role"] if index == 0 else _other(setup["role"])
        units = [
            {
                "card": c,
                "value": view.value.card(str(c.id)),
                "pending": c.id in view.pending_card_ids,
                "rank": book.rank(c.rank).name,
            }
            for c in view.cards
            if not c.removed
        ]
        armies.append(
            {
                "index": index,
                "force": view.force,
                "role": role,
                "units": units,
                "roster": [int(i) for i in d["rosters"][index]],
                "warlord": d["warlords"][index],
            }
        )
    context = {
        "d": d,
        "armies": armies,
        "totals": wizard.army_totals(session, d),
        "size": book.battle_size(setup["battle_size"]),
        "mission": book.mission(setup["mission"]),
        "by_points": book.numbers.muster_by == "points",
    }
    if draft.battle_id is not None:
        context["battle_sides"] = wizard.battle_sides(session, draft)
    return context


def _other(role: str) -> str:
    return "defender" if role == "attacker" else "attacker"


def _read_muster(form: FormData, d: dict[str, Any]) -> None:
    d["rosters"] = [field_ints(form, "roster_0"), field_ints(form, "roster_1")]
    d["warlords"] = [field_int(form, "warlord_0"), field_int(form, "warlord_1")]


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/muster")
def save_muster(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    opened = _step_form(request, session, principal, form, (campaign_id, draft_id), "muster")
    if isinstance(opened, Response):
        return opened
    draft, d = opened.draft, opened.d
    action = field_text(form, "action", 20)
    with attempt(session) as outcome:
        _refuse_if_closed(draft, "muster")
        _read_muster(form, d)
        if action == "muster":
            wizard.muster(session, draft, d)
        else:
            wizard.save(session, draft, d)
    if outcome.refused:
        return opened.page(outcome)
    if action == "muster":
        return redirect(_step_url(draft, "after"))
    return redirect(_step_url(draft, "muster") + "#pl-counter")


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/muster/total")
def muster_total(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    """Script: save the roster selection and return the live Power Level counter."""
    draft = _draft(session, principal, campaign_id, draft_id)
    _refuse_if_closed(draft, "muster")
    if (sent := _guard(draft, "muster")) is not None:
        return sent
    wizard.check_version(draft, field_int(form, "version"))
    d = wizard.data(draft)
    _read_muster(form, d)
    wizard.save(session, draft, d)
    response = render(
        request,
        "partials/wizard_pl.html",
        principal,
        totals=wizard.army_totals(session, d),
        d=d,
    )
    return _saved(response, draft)


# --- step 3: after the game ------------------------------------------------------------------


def _after_context(
    session: Session, principal: Principal, draft: BattleDraft, d: dict[str, Any]
) -> dict[str, Any]:
    book = rulebooks.campaign_book(session, draft.campaign_id)
    armies = []
    sides = wizard.battle_sides(session, draft)
    for index, side in enumerate(sides):
        view = load_force(session, side.force_id)
        own = rulebooks.book_of(session, view.force)
        # a pack of this army counts kills by the enemy's keyword: ask which (issue 47)
        enemies = (
            _enemy_units(session, sides[1 - index]) if pack_watch.reads_named_kills(own) else []
        )
        cards = {c.id: c for c in view.cards}
        agendas = [book.agenda(a) for a in side.agendas]
        armies.append(
            {
                "index": index,
                "side": side,
                "force": view.force,
                "agendas": agendas,
                "tally_agendas": wizard.tally_agendas(side.agendas, book),
                "archive_roll": "recover_mission_archives" in side.agendas,
                "choice_agendas": [
                    a for a in agendas if isinstance(a.xp, HighestTally | ArchiveRoll)
                ],
                "units": [
                    {
                        "card": cards[i],
                        "state": wizard.unit_state(d, i),
                        "tally_agendas": wizard.scorable(
                            wizard.tally_agendas(side.agendas, book), cards[i], book
                        ),
                    }
                    for i in side.roster
                    if i in cards
                ],
                "entered": d["sides"][index],
                # a rule pack's counters and quests this battle moves (issue 38)
                "watch": pack_watch.army(own, view.value, side.roster),
                # a pack reads whether a unit ended below Half-strength: ask it (issue 47)
                "asks_half": pack_watch.reads(own, "below_half_strength"),
                "enemies": enemies,
                # a pack counts a unit's named quarry destroyed: ask it (issue 47)
                "asks_quarry": bool(enemies) and pack_watch.reads(own, "quarry_destroyed"),
            }
        )
    mission = book.mission(str(d["setup"]["mission"]))
    return {
        "d": d,
        "armies": armies,
        "tally_limit": wizard.tally_limit,
        "mission": mission,
        "overlaps": wizard.overlaps_view(session, draft, d),
    }


def _enemy_units(session: Session, enemy: Any) -> list[dict[str, Any]]:
    """The enemy's rostered units a unit may name as destroyed by it: id and name."""
    cards = {c.id: c for c in load_force(session, enemy.force_id).cards}
    return [{"id": i, "name": cards[i].name} for i in enemy.roster if i in cards]


def _read_after(session: Session, draft: BattleDraft, form: FormData, d: dict[str, Any]) -> None:
    """The after-game form's fields (counters are not fields: each tap is saved)."""
    sides = wizard.battle_sides(session, draft)
    for index, side in enumerate(sides):
        enemy_roster = set(sides[1 - index].roster)
        entered = d["sides"][index]
        entered["vp"] = wizard.victory_points(field_text(form, f"vp_{index}", 40), index)
        entered["painted"] = bool(field_text(form, f"painted_{index}"))
        marked = field_int(form, f"marked_{index}")
        entered["marked"] = marked if marked in side.roster else None
        entered["agenda_choices"] = {
            a: choice
            for a in side.agendas
            if (choice := field_int(form, f"agenda_choice_{index}_{a}")) in side.roster
        }
        for card_id in side.roster:
            state = wizard.unit_state(d, card_id)
            state["destroyed"] = bool(field_text(form, f"destroyed_{card_id}"))
            state["below_half"] = bool(field_text(form, f"below_half_{card_id}"))
            state["exfiltrated"] = bool(field_text(form, f"exfiltrated_{card_id}"))
            state["destroyed_enemies"] = [
                int(v)
                for v in dict.fromkeys(str(v) for v in form.getlist(f"killed_{card_id}")[:99])
                if v.isdigit() and int(v) in enemy_roster
            ]
            quarry = field_int(form, f"quarry_{card_id}")
            state["quarry"] = quarry if quarry in enemy_roster else None
            d["units"][str(card_id)] = state
    _read_table_dice(session, draft, form, d)


def _read_table_dice(
    session: Session, draft: BattleDraft, form: FormData, d: dict[str, Any]
) -> None:
    """The Out of Action dice typed on the after-game step itself: one field for both
    armies (issue 40), "4 2 6 5 3" or "4 2 6 / 5 3", or one field per army ("4 2 6", as
    pages before issue 40 sent them): for each army the dice needed, in the order the rules
    use them, then any more as extra dice. An emptied field hands the rolls back to the
    app. A field left out of the form (another step's post) changes nothing."""
    typed = {
        i: str(form.get(f"dice_{i}") or "") for i in range(len(d["sides"])) if f"dice_{i}" in form
    }
    needed: list[list[str]] = []
    if "dice" in form:
        text = str(form.get("dice") or "")[:200]
        needed = wizard.dice_needed(session, draft, d) if text.strip() else []
        typed = dict(enumerate(_split_table_dice(text, [len(n) for n in needed], len(d["sides"]))))
    if not typed:
        return
    if not needed and any(typed.values()):
        needed = wizard.dice_needed(session, draft, d)
    for index, text in typed.items():
        entered = d["sides"][index]
        try:
            dice = wizard.parse_dice(str(text or "")[:200], "dice")
        except RuleError:  # kept as typed: the review names the field to fix
            entered.update(dice_mode="enter", dice=[], dice_extra=str(text)[:200])
            continue
        count = len(needed[index]) if needed else 0
        entered["dice_mode"] = "enter" if dice else "roll"
        entered["dice"] = dice[:count]
        entered["dice_extra"] = " ".join(str(v) for v in dice[count:])


def _split_table_dice(text: str, counts: list[int], sides: int) -> list[str]:
    """Both armies' dice typed in one field, as each army's text: split at "/" when the
    players typed one, else the first army takes as many dice as it needs (``counts``)
    and the second the rest."""
    if "/" in text:
        parts = [p.strip() for p in text.split("/")] + [""] * sides
        return [*parts[: sides - 1], " ".join(parts[sides - 1 :]).strip()]
    words = text.replace(",", " ").split()
    first = counts[0] if counts else len(words)
    return [" ".join(words[:first]), " ".join(words[first:]), *[""] * (sides - 2)]


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/after")
def save_after(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    """Without script: a counter tap (``bump``) or "Next" submits the whole form."""
    opened = _step_form(request, session, principal, form, (campaign_id, draft_id), "after")
    if isinstance(opened, Response):
        return opened
    draft, d = opened.draft, opened.d
    spec = field_text(form, "bump", 80)
    action = field_text(form, "action", 20)
    with attempt(session) as typed:  # a value the step cannot take: refused as typed
        _read_after(session, draft, form, d)
        wizard.save(session, draft, d)
    if typed.refused:
        return opened.page(typed)
    with attempt(session) as outcome:
        if spec:
            wizard.bump(session, draft, d, spec)
        elif action in ("next", "review"):
            wizard.check_after(d)
            wizard.save(session, draft, d, step=wizard.step_after(draft, _AFTER_TARGET[action]))
            if action == "review":
                wizard.refresh_preview(session, draft, d)
                wizard.save(session, draft, d)
    if outcome.refused:
        return opened.page(outcome, wizard.data(draft))
    if spec:
        return redirect(_step_url(draft, "after") + f"#unit-{spec.split(':')[0]}")
    if action not in _AFTER_TARGET:
        return redirect(_step_url(draft, "after"))
    return redirect(_step_url(draft, _AFTER_TARGET[action]))


# "Next" goes to the dice entered at the table; "Review" lets the app roll them.
_AFTER_TARGET = {"next": "out_of_action", "review": "review"}


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/after/bump")
def bump_counter(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    """Script: one tap of a − or + button, saved at once; returns the updated counter. When
    the tap comes from the page's form, the form's other fields are saved with it."""
    draft = _script_draft(session, principal, form, (campaign_id, draft_id), "after")
    before = draft.version
    d = wizard.data(draft)
    if field_text(form, "form") == "after":
        _read_after(session, draft, form, d)
        wizard.save(session, draft, d)
    spec = field_text(form, "bump", 80)
    try:
        seen = field_int(form, "seen")
    except RuleError:
        seen = None
    with attempt(session) as outcome:
        card_id, field, _value = wizard.bump(
            session, draft, d, spec, screen=field_text(form, "screen", 64) or None, seen=seen
        )
    if outcome.refused:
        parts = spec.split(":")
        card_id = int(parts[0]) if parts and parts[0].isdigit() else 0
        field = parts[1] if len(parts) > 1 else ""
        d = wizard.data(draft)
    response = _counter(
        request, session, principal, draft, d, card_id, field, outcome.status, outcome.error
    )
    # A tap is sent without a version and counts on whatever the draft holds; the page
    # learns from this whether the draft was still the one it shows (then the new version
    # is its own) or changed elsewhere first (then its next form change is rebased).
    response.headers[BEFORE_HEADER] = str(before)
    if two_screens.open_overlaps(d):  # the page reads the step again to show them
        response.headers[OVERLAP_HEADER] = str(len(two_screens.open_overlaps(d)))
    return _saved(response, draft)


OVERLAP_HEADER = "X-Draft-Overlaps"


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/after/settle")
def settle_overlap(
    session: SessionDep, principal: Player, form: Form, campaign_id: int, draft_id: int
) -> Response:
    """A counter moved on two screens while apart: keep the sum or one screen's count
    (issue 49); back to the step the answer was given on."""
    draft = _draft(session, principal, campaign_id, draft_id)
    _refuse_if_closed(draft, "after")
    d = wizard.data(draft)
    wizard.settle(session, draft, d, field_text(form, "counter", 80), field_text(form, "keep", 64))
    back = "review" if field_text(form, "back", 20) == "review" else "after"
    return redirect(_step_url(draft, back) + ("#overlaps" if back == "after" else ""))


def _counter(
    request: Request,
    session: Session,
    principal: Principal,
    draft: BattleDraft,
    d: dict[str, Any],
    card_id: int,
    field: str,
    status: int,
    error: RuleError | None,
) -> Response:
    state = wizard.unit_state(d, card_id)
    if field.startswith("agenda."):
        value = int(state["agenda_tallies"].get(field.removeprefix("agenda."), 0))
        # as on the full page (wizard_after.html), so a tap keeps the buttons' names
        book = rulebooks.campaign_book(session, draft.campaign_id)
        label = book.agenda(field.removeprefix("agenda.")).name + " tally"
    else:
        value = int(state.get(field, 0))
        label = COUNTER_LABELS.get(field, field)
    return render(
        request,
        "partials/wizard_counter.html",
        principal,
        status=status,
        base=_base(draft),
        card_id=card_id,
        field=field,
        value=value,
        label=label,
        unit_name=card.name
        if (card := wizard.roster_cards(session, [card_id]).get(card_id))
        else f"unit {card_id}",
        error=error,
        version=draft.version,
    )


COUNTER_LABELS = {
    "destroyed_psychic": "Psychic kills",
    "destroyed_ranged": "Ranged kills",
    "destroyed_melee": "Melee kills",
}


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/after/save")
def autosave_after(
    session: SessionDep, principal: Player, form: Form, campaign_id: int, draft_id: int
) -> Response:
    """Script: the after-game form saved on every change (nothing to show back)."""
    draft = _script_draft(session, principal, form, (campaign_id, draft_id), "after")
    d = wizard.data(draft)
    _read_after(session, draft, form, d)
    wizard.save(session, draft, d)
    return _saved(_version_only(draft), draft)


# --- step 4: Out of Action --------------------------------------------------------------------


def _ooa_context(
    session: Session, principal: Principal, draft: BattleDraft, d: dict[str, Any]
) -> dict[str, Any]:
    needed = wizard.dice_needed(session, draft, d)
    sides = wizard.battle_sides(session, draft)
    forces = wizard.forces_by_id(session, [s.force_id for s in sides])
    return {
        "d": d,
        "armies": [
            {
                "index": i,
                "force": forces[s.force_id],
                "needed": needed[i],
                "entered": d["sides"][i],
            }
            for i, s in enumerate(sides)
        ],
    }


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/out_of_action")
def save_out_of_action(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    ids = (campaign_id, draft_id)
    opened = _step_form(request, session, principal, form, ids, "out_of_action")
    if isinstance(opened, Response):
        return opened
    draft, d = opened.draft, opened.d
    needed = wizard.dice_needed(session, draft, d)
    with attempt(session) as outcome:
        for index, purposes in enumerate(needed):
            entered = d["sides"][index]
            entered["dice_extra"] = field_text(form, f"dice_extra_{index}", 200)
            entered["dice_mode"] = _dice_mode(form, index, len(purposes))
            dice: list[int] = []
            for n, purpose in enumerate(purposes):
                value = field_text(form, f"die_{index}_{n}", 4)
                if value:
                    dice.append(_die(value, f"die_{index}_{n}"))
                elif entered["dice_mode"] == "enter":
                    entered["dice"] = dice
                    raise RuleError(
                        "dice_missing",
                        f"Enter the D6 rolled for {purpose}.",
                        field=f"die_{index}_{n}",
                    )
            entered["dice"] = dice
            if entered["dice_mode"] == "enter":
                wizard.parse_dice(entered["dice_extra"], f"dice_extra_{index}")
        wizard.save(session, draft, d, step="review" if draft.step == "out_of_action" else None)
        wizard.refresh_preview(session, draft, d)
        wizard.save(session, draft, d)
    if outcome.refused:
        return opened.page(outcome)
    return redirect(_step_url(draft, "review"))


def _dice_mode(form: FormData, index: int, count: int) -> str:
    """ "roll" or "enter", as chosen; with no choice made, dice typed at the table are
    theirs to use (a player who typed them never meant the app to roll instead)."""
    chosen = field_text(form, f"dice_mode_{index}")
    if chosen in ("roll", "enter"):
        return chosen
    typed = [field_text(form, f"die_{index}_{n}", 4) for n in range(count)]
    return "enter" if any(typed) or field_text(form, f"dice_extra_{index}") else "roll"


def _die(text: str, field: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 6:
        raise RuleError("dice_invalid", "A D6 shows a number from 1 to 6.", field=field)
    return int(text)


# --- step 5: review and submit -----------------------------------------------------------------


def _review_context(
    session: Session, principal: Principal, draft: BattleDraft, d: dict[str, Any]
) -> dict[str, Any]:
    book = rulebooks.campaign_book(session, draft.campaign_id)
    context = _after_context(session, principal, draft, d)
    battle, _sides = lifecycle.get_battle(session, draft.battle_id or 0)
    context["needed"] = wizard.dice_needed(session, draft, d)
    context["battle"] = battle
    context["mission"] = book.mission(battle.mission)
    context["size"] = book.battle_size(battle.battle_size)
    context["organizer"] = wizard.is_organizer(
        session, campaign_id=draft.campaign_id, user=principal.user
    )
    context["applies_at_once"] = confirmation.applies_at_once(
        session, battle_id=battle.id or 0, user=principal.user
    )
    # issue 40: the opponent at the table checks this page and confirms with their PIN here
    opponent = confirmation.opponent_to_confirm(
        session, battle_id=battle.id or 0, recorder_id=principal.user.id or 0
    )
    context["table_opponent"] = opponent if opponent and opponent.pin_hash else None
    context["preview"] = wizard.preview_view(session, draft, d)
    context["preview_error"] = (wizard.current_preview(d) or {}).get("error")
    return context


@router.post("/campaigns/{campaign_id}/drafts/{draft_id}/review")
def submit_result(
    request: Request,
    session: SessionDep,
    principal: Player,
    form: Form,
    campaign_id: int,
    draft_id: int,
) -> Response:
    action = field_text(form, "action", 20)
    draft = _draft(session, principal, campaign_id, draft_id)
    if draft.step == wizard.FINISHED and action in ("submit", "submit_confirm"):
        return _submitted_elsewhere(request, session, principal, draft, form)
    opened = _step_form(request, session, principal, form, (campaign_id, draft_id), "review")
    if isinstance(opened, Response):
        return opened
    draft, d = opened.draft, opened.d
    if action == "preview":
        with attempt(session) as outcome:
            wizard.refresh_preview(session, draft, d)
            wizard.save(session, draft, d)
        return redirect(_step_url(draft, "review") + "#consequences")
    confirming = action == "submit_confirm"
    locked: list[int] = []
    with attempt(session) as outcome:
        battle = wizard.submit(session, draft, d, seen=_seen(form, d))
        # issue 40: the opponent at the table confirms what they just checked here, with
        # their PIN; refused, nothing is submitted either
        opponent = (
            confirm_here(request, session, form, battle.id or 0, locked) if confirming else None
        )
    for user_id in locked:  # a PIN locked by this try stays noted
        accounts.note_pin_locked(session, user_id=user_id, battle_id=draft.battle_id or 0)
    if outcome.refused:
        return opened.page(outcome)
    if opponent is not None:
        return to_the_opponents_decisions(session, request, battle.id or 0, opponent)
    return redirect(f"/battles/{battle.id}")


def _seen(form: FormData, d: dict[str, Any]) -> wizard.Seen:
    """What the review page showed (its version and score) when Submit was tapped."""
    points: list[int | None] = []
    for index in range(len(d["sides"])):
        try:
            points.append(field_int(form, f"seen_vp_{index}", high=9999))
        except RuleError:
            points.append(None)
    return wizard.Seen(version=field_int(form, "version"), victory_points=tuple(points))


def _submitted_elsewhere(
    request: Request, session: Session, principal: Principal, draft: BattleDraft, form: FormData
) -> Response:
    """A submit that did not count (issue 49): the result was submitted from another
    screen first. Says what counted and how it differs from what this page showed."""
    with attempt(session) as outcome:
        wizard.submit(session, draft, wizard.data(draft), seen=_seen(form, wizard.data(draft)))
    assert outcome.error is not None  # a finished draft is always refused
    return render(
        request,
        "pages/wizard_submitted_elsewhere.html",
        principal,
        status=409,
        error=outcome.error,
        campaign=get_campaign(session, draft.campaign_id),
        battle_url=f"/battles/{draft.battle_id}",
    )


# --- any step's page --------------------------------------------------------------------------

StepContext = Callable[[Session, Principal, BattleDraft, dict[str, Any]], dict[str, Any]]
STEP_CONTEXTS: dict[str, StepContext] = {
    "setup": _setup_context,
    "muster": _muster_context,
    "after": _after_context,
    "out_of_action": _ooa_context,
    "review": _review_context,
}


@router.get("/campaigns/{campaign_id}/drafts/{draft_id}/version")
def draft_version(
    session: SessionDep, principal: Player, campaign_id: int, draft_id: int
) -> Response:
    """Script: the draft's version and step, looked at every few seconds by a step's page
    while nothing waits to be sent, so it shows what another screen changed (issue 40)."""
    draft = _draft(session, principal, campaign_id, draft_id)
    return JSONResponse(
        {"version": draft.version, "step": draft.step}, headers={"Cache-Control": "no-store"}
    )


@router.get("/campaigns/{campaign_id}/drafts/{draft_id}/{step}")
def step_page(
    request: Request,
    session: SessionDep,
    principal: Player,
    campaign_id: int,
    draft_id: int,
    step: str,
) -> Response:
    if step not in STEP_CONTEXTS:
        raise NotFound("page_not_found", f"The battle wizard has no step '{step[:40]}'.")
    draft = _draft(session, principal, campaign_id, draft_id)
    if (sent := _guard(draft, step)) is not None:
        return sent
    return _wizard_page(request, session, principal, draft, step)
