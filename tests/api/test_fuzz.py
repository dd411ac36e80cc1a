"""Schemathesis holds the API to its OpenAPI schema (app/api/plumbing/responses.py documents every
status): every operation, called as a campaign ORGANIZER with a read-write token (an
ordinary account, not the site admin), on SQLite and on PostgreSQL (when TEST_DATABASE_URL
is set), must answer no 5xx and only what the schema documents: status code, content type,
headers and body. Ids in paths hit real rows: a campaign with three forces and their cards,
a resolved battle that left a decision pending, a mustered battle, a member, an invite and
a spare token; then schemathesis's state machine follows the schema's OpenAPI links (a new
campaign's id into its forces, a force's into its cards, ...), each scenario from that same
seeded state, so that Hypothesis can replay it.

Bounded for `make test`; FUZZ_EXAMPLES (per operation, default 8) and FUZZ_STEPS (stateful
scenarios, default 20) make a longer run: FUZZ_EXAMPLES=200 FUZZ_STEPS=200 .venv/bin/pytest
tests/api/test_fuzz.py (see docs/security.md)."""

from __future__ import annotations

import hashlib
import os
import random
import secrets
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core import NOT_SET
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import Engine, text
from sqlmodel import select

from app.api.plumbing.cache import VersionedBodies
from app.config import get_settings
from app.db.engine import make_engine
from app.db.models import ApiToken, CampaignMember, User, metadata
from app.db.session import session_scope
from app.edge.limits import RateLimits
from app.edge.schemas import decisions as decision_bodies  # seeds the dice of an answer
from app.edge.sessions import TokenUses
from app.main import create_app
from app.services.accounts import accounts
from app.services.battles import lifecycle as battle_service
from tests.conftest import BACKENDS

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))
STEPS = int(os.environ.get("FUZZ_STEPS", "20"))

# Checks: no 5xx, and every answer is one the schema documents. Left out of schemathesis's
# full set: negative_data_rejection and positive_data_acceptance (they judge the generated
# input against the schema alone; this API also refuses schema-valid input by its rules
# (404/409/422) and this file substitutes real ids, so "valid" and "invalid" are not what the
# schema alone says); use_after_free and ensure_resource_availability (DELETE /cards keeps the
# card, marked removed, by design; a new resource can be unreachable on purpose, e.g. a
# withdrawn invite); ignored_auth and missing_required_header (the schema declares no security
# scheme: auth is the Bearer header sent here); unsupported_method, allow_header_conformance
# and max_response_time (not about the contract; 405s come from the framework).
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,  # every run explores afresh; a failure prints its reproduction
)
ORGANIZER = {"username": "fuzz-orga", "password": "organizer password"}


@dataclass
class World:
    """The app under test, its seeded rows, and the organizer's token (kept valid)."""

    app: FastAPI
    engine: Engine
    token: str = ""
    seeded_token: str = ""  # the organizer's token as seeded (the snapshot holds its row)
    restore: Callable[[], None] = lambda: None  # the database back to the seeded snapshot
    organizer_id: int = 0
    campaign_id: int = 0
    members: dict[int, str] = field(default_factory=dict)  # user id: role, kept
    ids: dict[str, list[Any]] = field(default_factory=dict)  # path parameter: seeded values
    only: dict[str, dict[str, list[Any]]] = field(default_factory=dict)  # per path

    def reset(self) -> None:
        """Back to the state seeding left: the database (rows, and the ids to come), the
        organizer's token, and what the app keeps in memory between requests, as a new app
        has it (rate limit counters, the read cache)."""
        self.restore()
        self.token = self.seeded_token
        kept = set(self.app.state._state)
        # photos: a folder store, nothing kept in memory between requests
        # min_free_disk_mb: a setting read once, for the readiness check
        # body_limits: settings read once; body_budget: empty between requests (checked)
        state = {
            "engine",
            "error_page",
            "rate_limits",
            "read_cache",
            "gate",
            "photos",
            "min_free_disk_mb",
            "body_limits",
            "body_budget",
            "token_uses",
            "battle_bodies",
        }
        assert kept == state, (
            f"the app keeps {kept} in app.state: start each scenario with a new one here too"
        )
        assert self.app.state.gate.holders == 0  # between requests the gate is empty
        assert self.app.state.body_budget.held == 0  # every body's bytes given back
        self.app.state.rate_limits = RateLimits(get_settings().rate_limit_storage)
        self.app.state.read_cache = VersionedBodies()
        self.app.state.battle_bodies = VersionedBodies()
        # The restored database's token ids come again: a use planned for an earlier
        # scenario's token (its request answered an error first) is not this one's.
        self.app.state.token_uses = TokenUses()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def keep_organizer(self) -> None:
        """Fuzzing may revoke the organizer's own token or remove members from the campaign
        (both are allowed); put them back so every later call still acts as the organizer
        and finds the seeded member."""
        with session_scope(self.engine) as session:
            digest = hashlib.sha256(self.token.encode()).hexdigest()
            row = session.exec(select(ApiToken).where(ApiToken.token_hash == digest)).first()
            if row is None or row.revoked_at is not None:
                user = session.get(User, self.organizer_id)
                assert user is not None
                _row, self.token = accounts.create_token(
                    session, user=user, name="fuzz again", can_write=True, campaign_id=None
                )
            rows = session.exec(
                select(CampaignMember).where(CampaignMember.campaign_id == self.campaign_id)
            ).all()
            roles = {row.user_id: row.role for row in rows}
            for user_id, role in self.members.items():
                if roles.get(user_id) != role:
                    for row in rows:
                        if row.user_id == user_id:
                            session.delete(row)
                    session.flush()
                    member = CampaignMember(
                        campaign_id=self.campaign_id, user_id=user_id, role=role
                    )
                    session.add(member)


def _snapshot(engine: Engine, directory: Path) -> Callable[[], None]:
    """Keep the database as seeding left it; the returned function puts it back exactly: the
    same rows and the same ids to come (SQLite numbers a new row max(id) + 1; PostgreSQL's
    sequences are saved and set back). A few milliseconds, so it can run before every
    scenario (PostgreSQL's TRUNCATE would take some 50 ms)."""
    if engine.dialect.name == "sqlite":
        live, copy = str(engine.url.database), str(directory / "seeded.db")
        with closing(sqlite3.connect(live)) as source, closing(sqlite3.connect(copy)) as kept:
            source.backup(kept)

        def restore_sqlite() -> None:
            engine.dispose()  # no pooled connection keeps pages of the state replaced
            with closing(sqlite3.connect(copy)) as kept, closing(sqlite3.connect(live)) as db:
                kept.backup(db)

        return restore_sqlite
    tables = metadata.sorted_tables  # parents first
    with engine.connect() as connection:
        rows = {
            table: [r._asdict() for r in connection.execute(table.select())] for table in tables
        }
        names = (
            connection.execute(
                text("SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema()")
            )
            .scalars()
            .all()
        )
        sequences = {
            f'"{name}"': connection.execute(
                text(f'SELECT last_value, is_called FROM "{name}"')
            ).one()
            for name in names
        }
    setval = text(
        "SELECT "
        + ", ".join(f"setval(CAST(:s{i} AS regclass), :v{i}, :c{i})" for i in range(len(sequences)))
    )
    values = {
        key: value
        for i, (name, (last, called)) in enumerate(sequences.items())
        for key, value in ((f"s{i}", name), (f"v{i}", last), (f"c{i}", called))
    }

    def restore_postgresql() -> None:
        with engine.begin() as connection:
            for table in reversed(tables):
                connection.execute(table.delete())
            for table in tables:
                if rows[table]:
                    connection.execute(table.insert(), rows[table])
            connection.execute(setval, values)

    return restore_postgresql


def _ok(response: Any, status: int = 201) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _seed(app: FastAPI, engine: Engine) -> World:
    """A site admin first (the first account is one), then the organizer, who runs a campaign
    with a player in it."""
    world = World(app=app, engine=engine)
    with TestClient(app) as admin:
        _ok(admin.post("/api/v1/auth/signup", json={"username": "admin", "password": "admin pw!"}))
    with TestClient(app) as client:
        organizer = _ok(client.post("/api/v1/auth/signup", json=ORGANIZER))
        assert not organizer["is_admin"]
        world.organizer_id = organizer["id"]
        client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
        token = _ok(client.post("/api/v1/auth/tokens", json={"name": "fuzz", "can_write": True}))
        spare = _ok(client.post("/api/v1/auth/tokens", json={"name": "spare"}))
    world.token = token["token"]
    api = TestClient(app, headers=world.headers())
    campaign = _ok(api.post("/api/v1/campaigns", json={"name": "Fuzz", "description": "d"}))["id"]
    world.campaign_id = campaign
    # The organizer plays Blue against the player below: their result applies at once only
    # with this setting off (issue 12's default sends it to the opponent).
    off = {"organizer_results_need_confirmation": False}
    _ok(api.patch(f"/api/v1/campaigns/{campaign}", json=off), 200)
    join, withdraw, accept = (
        _ok(api.post(f"/api/v1/campaigns/{campaign}/invites", json={"max_uses": 5}))["code"]
        for _ in range(3)
    )

    def force(client: TestClient, name: str, faction: str) -> tuple[int, list[int]]:
        made = _ok(
            client.post(
                f"/api/v1/campaigns/{campaign}/forces",
                json={"name": name, "crusade_faction": faction},
            )
        )["id"]
        cards = [
            _ok(
                client.post(
                    f"/api/v1/forces/{made}/cards",
                    json={"name": unit, "power_rating": 5, "keywords": [faction, *keywords]},
                )
            )["id"]
            for unit, keywords in (("Lord", ["INFANTRY", "CHARACTER"]), ("Squad", ["INFANTRY"]))
        ]
        return made, cards

    with TestClient(app) as player_client:
        player = _ok(
            player_client.post(
                "/api/v1/auth/signup", json={"username": "fuzz-player", "password": "player pw!"}
            )
        )
        player_client.headers["X-CSRF-Token"] = player_client.get("/api/v1/auth/csrf").json()[
            "csrf_token"
        ]
        _ok(player_client.post(f"/api/v1/invites/{join}/accept"))
        red, red_cards = force(player_client, "Red", "CHAOS")
    blue, blue_cards = force(api, "Blue", "IMPERIUM")
    green, green_cards = force(api, "Green", "IMPERIUM")

    def muster(a: tuple[int, list[int]], b: tuple[int, list[int]]) -> int:
        sides = [
            {"force_id": a[0], "role": "attacker", "roster": a[1], "agendas": ["assassins"]},
            {"force_id": b[0], "role": "defender", "roster": b[1], "agendas": ["cull_the_hordes"]},
        ]
        body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
        return int(_ok(api.post(f"/api/v1/campaigns/{campaign}/battles", json=body))["id"])

    fought = muster((blue, blue_cards), (red, red_cards))
    result = {
        "sides": [
            {"force_id": blue, "victory_points": 10},
            {
                "force_id": red,
                "victory_points": 10,
                "units": [{"card_id": red_cards[0], "destroyed": True}],
                "dice": [1],  # the Out of Action test fails: a decision waits
            },
        ]
    }
    _ok(api.post(f"/api/v1/battles/{fought}/result", json=result), 200)
    mustered = muster((blue, blue_cards), (green, green_cards))
    decisions = [d["id"] for d in _ok(api.get(f"/api/v1/forces/{red}/decisions"), 200)["items"]]
    assert decisions, "the seeded battle left no decision"
    world.ids = {
        "campaign_id": [campaign],
        "force_id": [blue, red, green],
        "card_id": blue_cards + red_cards + green_cards,
        "battle_id": [fought, mustered],
        "decision_id": decisions,
        "user_id": [player["id"]],
        "code": [withdraw],
        "token_id": [spare["id"]],
        "mission_id": ["sweep_and_clear", "supply_drop", "assassinate"],
    }
    # The accept invite is not the one the fuzzer may withdraw.
    world.only = {"/api/v1/invites/{code}/accept": {"code": [accept]}}
    world.members = {world.organizer_id: "organizer", player["id"]: "player"}
    world.seeded_token = world.token
    return world


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
        shutil.copy(template, path)
        engine = make_engine(f"sqlite:///{path}")
    else:
        engine = request.getfixturevalue("postgres_engine")
        names = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
        with engine.begin() as connection:
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    world = _seed(create_app(engine), engine)
    world.restore = _snapshot(engine, tmp_path_factory.mktemp("seeded"))
    yield world
    if request.param == "sqlite":
        engine.dispose()


@pytest.fixture(scope="module")
def api_schema(world: World) -> schemathesis.BaseSchema:
    schema = schemathesis.openapi.from_asgi("/openapi.json", world.app)

    @schema.hook
    def before_generate_case(context: Any, strategy: st.SearchStrategy[Any]) -> Any:
        """Two valid cases in three use seeded ids in their path, so calls reach real rows
        (a random id almost always answers 404)."""
        ids = {**world.ids, **world.only.get(context.operation.path, {})}
        names = [p.name for p in context.operation.path_parameters if p.name in ids]
        if not names:
            return strategy
        real = st.fixed_dictionaries({n: st.sampled_from(ids[n]) for n in names})

        def with_real_ids(case: schemathesis.Case) -> st.SearchStrategy[schemathesis.Case]:
            if (
                case.meta is None
                or case.meta.generation.mode != schemathesis.GenerationMode.POSITIVE
            ):
                return st.just(case)

            def use(ids: dict[str, Any]) -> schemathesis.Case:
                case.path_parameters = {**case.path_parameters, **ids}
                return case

            return st.one_of(st.just(case), real.map(use), real.map(use))

        return strategy.flatmap(with_real_ids)

    return schema


def _validate(case: schemathesis.Case, response: Any) -> None:
    """Run the checks; a failure names the operation first."""
    if os.environ.get("FUZZ_TRACE"):  # what the fuzzer reached: FUZZ_TRACE=1 pytest -s
        print("TRACE", case.operation.label, response.status_code, response.text[:100])
    try:
        case.validate_response(response, checks=CHECKS)
    except FailureGroup as error:
        raise AssertionError(f"{case.operation.label}:\n{error}") from None


def _call(case: schemathesis.Case, world: World) -> Any:
    """Call as the organizer. An exception the app lets escape is a 500 in production (the
    error handler answers internal_error, then the server re-raises it): name the operation."""
    world.keep_organizer()
    try:
        return case.call(headers=world.headers())
    except Exception as error:
        raise AssertionError(
            f"{case.operation.label}: server error (500) {error!r}\n{case.as_curl_command()}"
        ) from error


def _operations() -> list[tuple[str, str]]:
    """Every operation of the schema (the app's routes do not depend on its database)."""
    paths = create_app(make_engine("sqlite://")).openapi()["paths"]
    return sorted((method.upper(), path) for path, ops in paths.items() for method in ops)


OPERATIONS = _operations()


@pytest.mark.parametrize("operation", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_keeps_the_contract(
    operation: tuple[str, str], api_schema: schemathesis.BaseSchema, world: World
) -> None:
    """Valid and invalid requests (schemathesis's positive and negative modes)."""
    method, path = operation
    target = api_schema[path][method]
    cases = st.one_of(
        target.as_strategy(schemathesis.GenerationMode.POSITIVE),
        target.as_strategy(schemathesis.GenerationMode.NEGATIVE),
    )

    @SETTINGS
    @given(cases)
    def call(case: schemathesis.Case) -> None:
        _validate(case, _call(case, world))

    call()


class _Rolls:
    """`secrets` as the battle code sees it, with `randbelow` (a battle's seed: its mission
    roll and its Out of Action tests; a decision's dice) from a generator seeded before every
    call from that call's request. Drawn from `secrets`, the rolls would differ from one run
    of a scenario to the next, and with them what later steps are answered."""

    def __init__(self) -> None:
        self.generator = random.Random(0)

    def seed(self, *request: Any) -> None:
        digest = hashlib.sha256(repr(request).encode()).digest()
        self.generator.seed(int.from_bytes(digest[:8], "big"))

    def randbelow(self, n: int) -> int:
        return self.generator.randrange(n)

    def __getattr__(self, name: str) -> Any:
        return getattr(secrets, name)


def test_linked_operations_keep_the_contract(
    api_schema: schemathesis.BaseSchema, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state machine chains operations through the schema's links (create a campaign,
    then use its id, ...), checked the same way.

    Hypothesis replays a scenario's choices and needs the same answers each time: which
    responses fill the links' bundles decides which steps can follow (otherwise it stops
    with FlakyStrategyDefinition). So every scenario starts from the same state (World.reset:
    the seeded database, rows and ids to come, that the single-operation tests and earlier
    scenarios changed; the seeded token; empty rate limit counters and cache), and the
    server's dice follow from the requests."""
    rolls = _Rolls()
    monkeypatch.setattr(battle_service, "secrets", rolls)
    monkeypatch.setattr(decision_bodies, "secrets", rolls)

    class Machine(api_schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            world.reset()
            self.calls = 0

        def call(self, case: schemathesis.Case, **kwargs: Any) -> Any:
            # What the choices drew (not the path: a link may put a random invite code there).
            self.calls += 1
            body = None if case.body is NOT_SET else case.body
            rolls.seed(self.calls, case.method, case.path, case.query, body)
            return _call(case, world)

        def validate_response(
            self, response: Any, case: schemathesis.Case, *args: Any, **kwargs: Any
        ) -> None:
            _validate(case, response)

    Machine.run(
        settings=settings(
            max_examples=STEPS,
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
    )
