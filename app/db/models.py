"""SQLModel tables: the one place persistence is defined. Alembic migrations are the
schema's source of truth and a test keeps them equal to these models.

A card's honours, scars and upgrades are stored as JSON lists on the card row: they are
always read with the card, so one row per card keeps "get Order of Battle" at a constant
number of statements however many units a force has.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import JSON, Column, Index, UniqueConstraint, event, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified
from sqlmodel import Field, SQLModel

metadata = SQLModel.metadata


def utcnow() -> datetime:
    return datetime.now(UTC)


_PLAIN = TypeAdapter(dict[str, Any])


def insert_values(model: type[SQLModel], **values: Any) -> dict[str, Any]:
    """The values ``model(**values).model_dump(exclude={"id"})`` gives, for a Core INSERT of
    many rows, without making the mapped object: the ORM's instrumentation costs about 60
    µs a row, 3 ms of a resolution's 50 events (issue 50). Defaults are the model's own;
    nested values are copied as model_dump copies them."""
    fields = model.model_fields
    unknown = values.keys() - fields.keys()
    if unknown:
        raise TypeError(f"{model.__name__} has no field {sorted(unknown)}")
    row: dict[str, Any] = {}
    for name, field in fields.items():
        if name == "id":
            continue
        if name in values:
            row[name] = values[name]
        elif field.is_required():
            raise TypeError(f"{model.__name__}.{name} is required")
        elif field.default_factory is not None:
            row[name] = field.default_factory()  # type: ignore[call-arg]
        else:
            row[name] = field.default
    copied: dict[str, Any] = _PLAIN.dump_python(row)
    return copied


def as_utc(moment: datetime) -> datetime:
    """SQLite hands datetimes back without a zone; they were stored as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _json(default: Any) -> Any:
    return Field(default_factory=lambda: type(default)(), sa_column=Column(JSON, nullable=False))


def _json_added(default: Any) -> Any:
    """A JSON column added to a table with rows: they start with the empty value."""
    empty = "{}" if isinstance(default, dict) else "[]"
    return Field(
        default_factory=lambda: type(default)(),
        sa_column=Column(JSON, nullable=False, server_default=empty),
    )


class Campaign(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=120)
    description: str = Field(default="", max_length=4000)
    created_at: datetime = Field(default_factory=utcnow)
    public: bool = Field(
        default=False,
        sa_column_kwargs={"server_default": "0"},
        description="Anyone may read the campaign",
    )
    join_policy: str = Field(
        default="invite",
        max_length=10,
        sa_column_kwargs={"server_default": "invite"},
        description="invite: by invite only; open: any account may join as a player",
    )
    organizer_results_need_confirmation: bool = Field(
        default=True,
        sa_column_kwargs={"server_default": "1"},
        description=(
            "A battle an organizer plays in waits for the opponent's confirmation like any"
            " player's; off: an organizer's own result applies at once"
        ),
    )
    version: int = Field(
        default=0,
        sa_column_kwargs={"server_default": "0"},
        description="Raised by every change to anything the campaign's reads show (issue 50)",
    )


class Force(SQLModel, table=True):
    """A Crusade force and its Order of Battle."""

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    name: str = Field(max_length=120)
    player_name: str = Field(default="", max_length=120)
    crusade_faction: str = Field(max_length=40)
    requisition_points: int
    supply_limit: int
    battle_tally: int = 0
    victories: int = 0
    notes: str = Field(default="", max_length=8000)
    created_at: datetime = Field(default_factory=utcnow)
    owner_id: int | None = Field(default=None, foreign_key="user_account.id", index=True)
    counters: dict[str, int] = _json_added({})  # a rule pack's force counters (issue 22)
    # Army faction keywords beyond the Crusade faction (issue 47): a rule pack's scope.
    army_keywords: list[str] = _json_added([])
    version: int = Field(
        default=0,
        sa_column_kwargs={"server_default": "0"},
        description="Raised by every change to the force, its cards or its decisions",
    )


class Card(SQLModel, table=True):
    """A Crusade card. ``removed`` cards stay for history but never return."""

    __tablename__ = "crusade_card"

    id: int | None = Field(default=None, primary_key=True)
    force_id: int = Field(foreign_key="force.id", index=True)
    name: str = Field(max_length=120)
    datasheet: str = Field(default="", max_length=120)
    battlefield_role: str = Field(default="", max_length=40)
    power_rating: int
    keywords: list[str] = _json([])
    champion: str | None = Field(default=None, max_length=120)
    named_character: bool = False
    split_unit: str | None = Field(default=None, max_length=120)
    points: int | None = None  # as a roster gives them; the rules count Power Rating only
    wargear: str = Field(default="", max_length=4000)
    psychic_powers: str = Field(default="", max_length=2000)
    narrative: str = Field(default="", max_length=8000)
    xp: int = 0
    rank: str = Field(default="battle_ready", max_length=40)
    honours: list[dict[str, Any]] = _json([])
    scars: list[dict[str, Any]] = _json([])
    upgrades: list[dict[str, Any]] = _json([])
    battles_played: int = 0
    battles_survived: int = 0
    destroyed_psychic: int = 0
    destroyed_ranged: int = 0
    destroyed_melee: int = 0
    marked_for_greatness: int = 0
    removed: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    counters: dict[str, int] = _json_added({})  # a rule pack's card counters (issue 22)


# A card's columns as a command writes them (app.services.forces.convert.write_card): its
# numbers, which a battle moves on most of its units, and the rest, which it rarely does.
CARD_NUMBERS = (
    "power_rating",
    "points",
    "xp",
    "rank",
    "battles_played",
    "battles_survived",
    "destroyed_psychic",
    "destroyed_ranged",
    "destroyed_melee",
    "marked_for_greatness",
)
CARD_REST = (
    "name",
    "keywords",
    "datasheet",
    "wargear",
    "psychic_powers",
    "narrative",
    "honours",
    "scars",
    "upgrades",
    "counters",
)


@event.listens_for(Session, "before_flush")
def _cards_in_one_update(session: Session, _context: Any, _instances: Any) -> None:
    """The ORM sends one executemany UPDATE per run of rows (in id order) that change the
    same columns. A changed card writes its numbers, or its numbers and the rest: once one
    card of the flush writes the rest, every card writing its numbers writes the rest too
    (unchanged values), so a battle's units stay one UPDATE however their ids interleave."""
    numbers_only: list[Card] = []
    whole = False
    for row in session.dirty:
        if not isinstance(row, Card):
            continue
        written = sa_inspect(row).committed_state.keys()
        if written.isdisjoint(CARD_NUMBERS):
            continue  # not written by write_card (a removal, a split unit's label)
        if written.isdisjoint(CARD_REST):
            numbers_only.append(row)
        else:
            whole = True
    if whole:
        for row in numbers_only:
            for name in CARD_REST:
                flag_modified(row, name)


class RequisitionPurchase(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    force_id: int = Field(foreign_key="force.id", index=True)
    card_id: int | None = Field(default=None, foreign_key="crusade_card.id")
    requisition: str = Field(max_length=40)
    requisition_points_spent: int
    crusade_points_gained: int
    free: bool = False
    details: dict[str, Any] = _json({})
    created_at: datetime = Field(default_factory=utcnow)


class Territory(SQLModel, table=True):
    """A place on the campaign's map (issue 23): planets, sectors, regions."""

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    name: str = Field(max_length=80)
    description: str = Field(default="", max_length=2000)
    neighbours: list[int] = _json([])  # territory ids; kept both ways
    bonus: str = Field(default="none", max_length=40)
    holder_force_id: int | None = Field(default=None, foreign_key="force.id")


class RulePack(SQLModel, table=True):
    """A rule pack a campaign plays with (issue 22): the document as uploaded (validated),
    one row per version; the active one is what new battles use, the older ones stay for
    the battles recorded under them."""

    __tablename__ = "rule_pack"
    __table_args__ = (UniqueConstraint("campaign_id", "pack_id", "pack_version"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    pack_id: str = Field(max_length=60)
    name: str = Field(max_length=80)
    pack_version: str = Field(max_length=20)
    document: dict[str, Any] = _json({})
    active: bool = True
    position: int = 0  # the order packs apply in: a later pack's settings win
    attached_at: datetime = Field(default_factory=utcnow)


class Battle(SQLModel, table=True):
    # Every page's "waiting for you" count and a force's battles under way look for the few
    # battles still open (proposed, disputed, mustered) among a campaign's thousands
    # (issue 50: without it they read every battle the campaign has played).
    __table_args__ = (Index("ix_battle_status_campaign", "status", "campaign_id"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    battle_size: str = Field(max_length=40)
    mission: str = Field(max_length=60)
    mission_roll: int | None = None
    # mustered -> proposed (a player entered the result) -> resolved; or disputed; reverted
    status: str = Field(default="mustered", max_length=20)
    outcome: str | None = Field(default=None, max_length=20)
    seed: int | None = None
    created_at: datetime = Field(default_factory=utcnow)
    resolved_at: datetime | None = None
    proposal: dict[str, Any] = _json({})
    proposed_by: int | None = Field(default=None, foreign_key="user_account.id")
    # The territory fought over (issue 23), and who held it before, so a revert restores it.
    territory_id: int | None = None  # checked by the service (a column added to old rows)
    territory_holder_before: int | None = None
    # The rule packs (id -> version) the battle was recorded under (issue 22).
    rule_packs: dict[str, str] = _json_added({})
    version: int = Field(
        default=1,
        sa_column_kwargs={"server_default": "1"},
        description="Raised by every change to the battle, its sides, report or photos",
    )


class BattleReport(SQLModel, table=True):
    """A battle's story, written by either of its players (issue 23): when and where it was
    played, a title, a Markdown narrative and a short note per unit (by card id)."""

    __tablename__ = "battle_report"

    id: int | None = Field(default=None, primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", unique=True)
    title: str = Field(default="", max_length=120)
    played_on: date | None = None
    location: str = Field(default="", max_length=120)
    narrative: str = Field(default="", max_length=20000)
    unit_notes: dict[str, str] = _json({})
    written_by: str = Field(default="", max_length=80)  # the username of the last writer
    updated_at: datetime = Field(default_factory=utcnow)


class BattlePhoto(SQLModel, table=True):
    """A photo of a battle (issue 23). The files are the renditions, one per width, stored
    by the photo store (app/services/campaigns/photos.py) and never the upload itself."""

    __tablename__ = "battle_photo"
    # Ids are never reused (issue 33): a deleted photo's address stays cached in browsers.
    __table_args__ = {"sqlite_autoincrement": True}

    id: int | None = Field(default=None, primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", index=True)
    width: int  # the largest rendition's pixels
    height: int
    widths: list[int] = _json([])  # every rendition's width, smallest first
    caption: str = Field(default="", max_length=200)
    uploaded_by: str = Field(default="", max_length=80)
    created_at: datetime = Field(default_factory=utcnow)


class BattleSide(SQLModel, table=True):
    """One army in a battle: its roster, agendas, score and (once resolved) its report and
    the state of its force before the battle, kept so the battle can be reverted."""

    __tablename__ = "battle_side"
    # A force's battles newest first (its last battle: the rematch, "same as last time", the
    # purchase window) are read from this index and stop at the first, however many the
    # force has fought (issue 50); it serves the lookups by force alone too.
    __table_args__ = (
        UniqueConstraint("battle_id", "force_id"),
        Index("ix_battle_side_force_battle", "force_id", "battle_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", index=True)
    force_id: int = Field(foreign_key="force.id")
    role: str = Field(max_length=20)  # attacker | defender
    roster: list[int] = _json([])
    agendas: list[str] = _json([])
    warlord_card_id: int | None = None
    crusade_points: int = 0
    bonus_command_points: int = 0
    victory_points: int | None = None
    painted: bool = False
    won: bool = False
    report: dict[str, Any] = _json({})
    snapshot: dict[str, Any] = _json({})


class Decision(SQLModel, table=True):
    """Something the rules leave to a player, waiting for their answer."""

    # Every page's "waiting for you" counts a player's pending decisions: without it,
    # PostgreSQL read every decision ever made (8 ms at 2,000 battles, issue 41).
    __table_args__ = (Index("ix_decision_status_force", "status", "force_id"),)

    id: int | None = Field(default=None, primary_key=True)
    force_id: int = Field(foreign_key="force.id", index=True)
    battle_id: int | None = Field(default=None, foreign_key="battle.id", index=True)
    # Indexed: a Crusade card's page asks whether a choice about it is waiting.
    card_id: int | None = Field(default=None, foreign_key="crusade_card.id", index=True)
    kind: str = Field(max_length=40)
    payload: dict[str, Any] = _json({})
    status: str = Field(default="pending", max_length=20)  # pending | answered | cancelled
    answer: dict[str, Any] = _json({})
    created_at: datetime = Field(default_factory=utcnow)
    answered_at: datetime | None = None


class Event(SQLModel, table=True):
    """Append-only campaign history."""

    # A campaign's newest events (the dashboard's history, "since your last visit", the
    # feed) read backwards along this index: with the campaign's index alone PostgreSQL
    # sorted all of them (28 ms at 2,000 battles, issue 41).
    __table_args__ = (Index("ix_event_campaign_newest", "campaign_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    force_id: int | None = Field(default=None, foreign_key="force.id")
    battle_id: int | None = Field(default=None, foreign_key="battle.id")
    kind: str = Field(max_length=60)
    payload: dict[str, Any] = _json({})
    created_at: datetime = Field(default_factory=utcnow)
    actor_id: int | None = Field(default=None, foreign_key="user_account.id")


class IdempotencyRecord(SQLModel, table=True):
    """The stored answer to a POST made with an Idempotency-Key, replayed on retry.

    ``key`` is a digest of the caller and the key they sent, so two callers never share a
    record. ``status_code`` is 0 while the request runs, 1 once its command committed (set
    in the command's own transaction) and the HTTP status once the answer is stored.
    ``claim`` names the attempt holding the key: an attempt whose claim expired and was
    taken over cannot commit."""

    __tablename__ = "idempotency_record"

    key: str = Field(primary_key=True, max_length=200)
    method_path: str = Field(max_length=400)
    request_hash: str = Field(max_length=64)
    status_code: int
    body: dict[str, Any] = _json({})
    created_at: datetime = Field(default_factory=utcnow, index=True)
    claim: str = Field(default="", max_length=32, sa_column_kwargs={"server_default": ""})


class User(SQLModel, table=True):
    """An account. The first one created on an empty install is the site admin."""

    __tablename__ = "user_account"

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(max_length=40, unique=True, index=True)
    # Set once, at sign-up: kept pages (the battle page) show it per campaign version, so a
    # route that renamed an account would have to raise its campaigns' versions (issue 50).
    display_name: str = Field(default="", max_length=80)
    password_hash: str = Field(max_length=200)
    is_admin: bool = False
    session_version: int = Field(default=0, description="Raised to end every open session")
    pin_hash: str | None = Field(
        default=None,
        max_length=200,
        description="argon2 hash of the short PIN that confirms a result on another's phone",
    )
    # Wrong PINs locked the PIN (app/edge/hardening.py): shown to the owner until they change
    # the PIN or dismiss the notice.
    pin_locked_at: datetime | None = None
    pin_locked_battle_id: int | None = None  # where it was tried (no foreign key: a notice)
    created_at: datetime = Field(default_factory=utcnow)


class UserSession(SQLModel, table=True):
    """A logged-in browser. The cookie carries a random secret whose SHA-256 is stored here,
    so logging out, a password change or a reset ends the session on the server too."""

    __tablename__ = "user_session"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    secret_hash: str = Field(max_length=64, unique=True, index=True)
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime


class ApiToken(SQLModel, table=True):
    """A personal token for bots. Only a hash is stored; the token is shown once."""

    __tablename__ = "api_token"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    name: str = Field(max_length=80)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    prefix: str = Field(max_length=12)
    can_write: bool = False
    campaign_id: int | None = Field(default=None, foreign_key="campaign.id")
    created_at: datetime = Field(default_factory=utcnow)
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class CampaignMember(SQLModel, table=True):
    """A user's role in a campaign: organizer or player."""

    __tablename__ = "campaign_member"
    __table_args__ = (UniqueConstraint("campaign_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    role: str = Field(max_length=20)  # organizer | player
    created_at: datetime = Field(default_factory=utcnow)


class Invite(SQLModel, table=True):
    """A code that lets its holder join a campaign, until it expires or is used up."""

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    code: str = Field(max_length=64, unique=True, index=True)
    role: str = Field(default="player", max_length=20)
    expires_at: datetime
    max_uses: int = 1
    uses: int = 0
    created_by: int | None = Field(default=None, foreign_key="user_account.id")
    created_at: datetime = Field(default_factory=utcnow)
    revoked_at: datetime | None = None


def _battle_ids_touched(session: Session) -> set[int]:
    """The battles whose rows change in this flush: a battle's own (not a new one: it
    starts at its first version), and those whose sides, report or photos change."""
    touched: set[int] = set()
    for row in (*session.dirty, *session.deleted):
        if isinstance(row, Battle) and row.id is not None:
            touched.add(row.id)
    for row in (*session.new, *session.dirty, *session.deleted):
        if isinstance(row, BattleSide | BattleReport | BattlePhoto) and row.battle_id:
            touched.add(row.battle_id)
    return touched


def _force_ids_touched(session: Session) -> set[int]:
    touched: set[int] = set()
    for row in (*session.new, *session.dirty, *session.deleted):
        if isinstance(row, Force) and row.id is not None:
            touched.add(row.id)
        elif isinstance(row, Card | Decision | RequisitionPurchase | BattleSide):
            touched.add(row.force_id)
    return touched


# What a campaign's reads show (issue 50): a change to any of these rows moves the
# campaign's version. Left out on purpose: a member's last visit (written by every
# dashboard view, and shown only to that member), a wizard's draft (its owner's alone, never
# cached), the webhook outbox's attempts, and everything of accounts.
_BY_CAMPAIGN = (
    "Force",
    "Territory",
    "RulePack",
    "Battle",
    "Event",
    "CampaignMember",
    "Invite",
    "Webhook",
    "ForceStanding",
    "SideTotals",
)
_BY_FORCE = ("Card", "Decision", "RequisitionPurchase", "BattleSide", "CardBattle")
_BY_BATTLE = ("BattleReport", "BattlePhoto")


def moves_campaign_version(model: type) -> bool:
    """Whether a change to a row of ``model`` moves its campaign's version."""
    kind = model.__name__
    return model is Campaign or kind in (*_BY_CAMPAIGN, *_BY_FORCE, *_BY_BATTLE)


def campaign_of(
    session: Session, row: object, forces: dict[int, Force | None] | None = None
) -> int | None:
    """The campaign a row belongs to, for the rows whose change moves its version.
    ``forces``: the forces read so far (by id), read once each and held there."""
    kind = type(row).__name__
    if isinstance(row, Campaign):
        return row.id
    if kind in _BY_CAMPAIGN:
        return int(row.campaign_id)  # type: ignore[attr-defined]
    if kind in _BY_FORCE:
        force = _force(session, row.force_id, forces)  # type: ignore[attr-defined]
        return force.campaign_id if force is not None else None
    if kind in _BY_BATTLE:
        battle = session.get(Battle, row.battle_id)  # type: ignore[attr-defined]
        return battle.campaign_id if battle is not None else None
    return None


def _force(session: Session, force_id: int, forces: dict[int, Force | None] | None) -> Force | None:
    """The force, from ``forces`` if read already. Held there, not only in the session (whose
    map lets go of a clean row nobody holds): a flush of a force's N changed cards whose
    force nobody held read it N times (a revert's statements grew with its units)."""
    if forces is None:
        return session.get(Force, force_id)
    if force_id not in forces:
        forces[force_id] = session.get(Force, force_id)
    return forces[force_id]


def _campaign_ids_touched(session: Session, forces: dict[int, Force | None]) -> set[int]:
    touched = {
        campaign_of(session, row, forces)
        for row in (*session.new, *session.dirty, *session.deleted)
    }
    return {campaign_id for campaign_id in touched if campaign_id is not None}


def raise_campaign_versions(session: Session, campaign_ids: set[int]) -> None:
    """Move the campaigns' versions in SQL (``version = version + 1``): two writers never
    both write the same number, however old the copy of the row each one holds. Once per
    transaction is enough (nobody sees its changes before it commits, all at once), so a
    campaign already raised in this one is left alone."""
    raised: set[int] = session.info.setdefault(RAISED, set())
    table = Campaign.__table__  # type: ignore[attr-defined]
    for campaign_id in sorted(campaign_ids - raised):  # a fixed order: no deadlock
        session.connection().execute(
            table.update().where(table.c.id == campaign_id).values(version=table.c.version + 1)
        )
        raised.add(campaign_id)


def lock_campaigns_of(session: Session, campaign_ids: Any) -> None:
    """PostgreSQL: lock the rows of the campaigns a query of campaign ids names, in one
    statement and in id order, with the lock an UPDATE of the row takes (FOR NO KEY UPDATE:
    rows inserted beside it, which only share its key, do not wait). Taking the lock moves
    no version: a command refused after it changes nothing; the flush that does change
    something raises the version of a campaign this transaction holds already."""
    table = Campaign.__table__  # type: ignore[attr-defined]
    statement = (
        select(table.c.id)
        .where(table.c.id.in_(campaign_ids))
        .order_by(table.c.id)
        .with_for_update(key_share=True)
    )
    locked: set[int] = session.info.setdefault(CAMPAIGNS_LOCKED, set())
    locked.update(campaign_id for (campaign_id,) in session.connection().execute(statement))


def campaigns_held(session: Session) -> set[int]:
    """The campaigns this transaction has locked or raised (and so locked) already."""
    raised: set[int] = session.info.get(RAISED, set())
    locked: set[int] = session.info.get(CAMPAIGNS_LOCKED, set())
    return raised | locked


RAISED = "campaign_versions.raised"
CAMPAIGNS_LOCKED = "campaign_versions.locked"


@event.listens_for(Session, "after_commit")
def _raised_committed(session: Session) -> None:
    session.info.pop(RAISED, None)
    session.info.pop(CAMPAIGNS_LOCKED, None)


@event.listens_for(Session, "after_soft_rollback")
def _raised_undone(session: Session, _previous: Any) -> None:
    """A rollback (a savepoint's too) may undo a raise: the next change raises again."""
    session.info.pop(RAISED, None)
    session.info.pop(CAMPAIGNS_LOCKED, None)


@event.listens_for(Session, "before_flush")
def _raise_versions(session: Session, _context: Any, _instances: Any) -> None:
    """Every flush that changes a force, its cards, purchases, sides or decisions raises the
    force's version, and one that changes a battle, its sides, report or photos the battle's,
    so anything cached for an older version is never served again; and every flush that
    changes what a campaign shows raises the campaign's version, first (its row is the first
    lock a writer takes in a campaign: see app.db.locks)."""
    forces: dict[int, Force | None] = {}  # each force read once per flush
    raise_campaign_versions(session, _campaign_ids_touched(session, forces))
    for force_id in _force_ids_touched(session):
        force = _force(session, force_id, forces)
        if force is not None:
            force.version += 1
    deleted = {id(row) for row in session.deleted}
    for battle_id in _battle_ids_touched(session):
        battle = session.get(Battle, battle_id)
        if battle is not None and id(battle) not in deleted:
            battle.version += 1


class BattleDraft(SQLModel, table=True):
    """A battle being recorded on the website, saved step by step so a closed tab or a
    lost connection loses nothing. ``step`` is the wizard step to resume at (``finished``
    once the result is submitted); ``data`` holds what was entered so far."""

    __tablename__ = "battle_draft"

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    battle_id: int | None = Field(default=None, foreign_key="battle.id")
    step: str = Field(default="setup", max_length=20)
    # issue 12: raised by every save, so a page sent from an older version (another tab,
    # the other player) is refused with a conflict instead of overwriting newer entries.
    version: int = Field(default=1, sa_column_kwargs={"server_default": "1"})
    data: dict[str, Any] = _json({})
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


# --- issue 14: totals kept when a battle is recorded or reverted --------------------------
# Read by standings, the dashboard's progress chart and each card's battle list, so their
# cost follows the page shown, never the campaign's past. app.services.campaigns.kept_totals keeps
# them in
# the transaction of every change and rebuilds or checks them (`crusade totals`).


class ForceStanding(SQLModel, table=True):
    """A force's standings line: live units' Crusade points, supply, XP and its record."""

    __tablename__ = "force_standing"

    force_id: int = Field(foreign_key="force.id", primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    crusade_points: int = 0
    supply_used: int = 0
    units: int = 0
    xp: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0


class SideTotals(SQLModel, table=True):
    """A force's Crusade points and XP just before a resolved battle: its totals after its
    previous battle (a progress chart's point)."""

    __tablename__ = "side_totals"

    battle_id: int = Field(foreign_key="battle.id", primary_key=True)
    force_id: int = Field(foreign_key="force.id", primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    crusade_points: int = 0
    xp: int = 0


class CardBattle(SQLModel, table=True):
    """A unit on a battle's roster (battles not reverted): a card's battle list."""

    __tablename__ = "card_battle"

    card_id: int = Field(foreign_key="crusade_card.id", primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", primary_key=True, index=True)
    force_id: int = Field(foreign_key="force.id")
    # What the unit did there (its part of its side's report), kept when the result is
    # recorded so its battle list reads this small value, not the report: see
    # app.services.forces.card_battles.card_line. None until then.
    line: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


# --- issue 15: webhooks and their outbox -----------------------------------------------


class Webhook(SQLModel, table=True):
    """A URL an organizer registered to be told of a campaign's events. ``events`` lists
    the kinds wanted (empty: all). The secret signs each delivery's body."""

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="campaign.id", index=True)
    url: str = Field(max_length=2000)
    events: list[str] = _json([])
    secret: str = Field(max_length=100)
    created_at: datetime = Field(default_factory=utcnow)
    created_by: int | None = Field(default=None, foreign_key="user_account.id")
    # generic | discord; NULL (registered before issue 34): Discord's for a Discord URL
    format: str | None = Field(default=None, max_length=20)


class WebhookDelivery(SQLModel, table=True):
    """One event to POST to one webhook: the outbox row, written in the transaction that
    records the event, and the log of its attempts. ``claimed_until`` is a worker's lease
    while it sends (a worker that dies mid-send lets another retry after it)."""

    __tablename__ = "webhook_delivery"
    # Each target's queue, in order: its head is the first pending id (the worker's query).
    __table_args__ = (Index("ix_webhook_delivery_queue", "webhook_id", "status", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    webhook_id: int = Field(foreign_key="webhook.id", index=True)
    event_id: int = Field(foreign_key="event.id")
    status: str = Field(default="pending", max_length=20, index=True)
    attempts: int = 0
    next_attempt_at: datetime = Field(default_factory=utcnow, index=True)
    claimed_until: datetime | None = None
    last_status_code: int | None = None
    last_error: str = Field(default="", max_length=500)
    created_at: datetime = Field(default_factory=utcnow)
    delivered_at: datetime | None = None


class CampaignVisit(SQLModel, table=True):
    """The newest history event a member had seen on the campaign's page: the next visit
    shows what happened since."""

    __tablename__ = "campaign_visit"
    __table_args__ = (UniqueConstraint("user_id", "campaign_id", name="uq_campaign_visit"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    campaign_id: int = Field(foreign_key="campaign.id")
    last_event_id: int = 0
    seen_at: datetime = Field(default_factory=utcnow)
