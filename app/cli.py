"""Command line: `crusade serve`, `crusade db upgrade`."""

from __future__ import annotations

import gc
import json
import sys
import threading
import zipfile
from pathlib import Path
from typing import Annotated, BinaryIO

import typer
import uvicorn
from fastapi import FastAPI
from sqlmodel import Session

from app.config import get_settings, secret_key
from app.db import migrate
from app.db.session import get_engine, session_scope
from app.errors import DomainError
from app.main import create_app
from app.routing import build_route_state
from app.services.accounts import accounts
from app.services.campaigns import demo as demo_service
from app.services.campaigns import kept_totals, transfer
from app.services.campaigns import photos as photo_service
from app.services.campaigns.kept_totals import install_kept_totals
from app.services.feed import webhook_worker
from app.web.pages import compile_templates


def _before_any_command() -> None:
    """What create_app() switches on for the server, switched on for every command here too:
    the commands write through the services without the web app (demo, import, users)."""
    install_kept_totals()


app = typer.Typer(
    help="Crusade campaign tracker", no_args_is_help=True, callback=_before_any_command
)
db = typer.Typer(help="Database schema commands", no_args_is_help=True)
app.add_typer(db, name="db")
user = typer.Typer(help="Accounts", no_args_is_help=True)
app.add_typer(user, name="user")
totals_commands = typer.Typer(
    help="Standings, chart points and card battle lists kept as battles are recorded",
    no_args_is_help=True,
)
app.add_typer(totals_commands, name="totals")


@user.command("create")
def user_create(
    username: str,
    password: Annotated[str, typer.Option(prompt=True, hide_input=True, confirmation_prompt=True)],
    admin: Annotated[bool, typer.Option(help="Make the account a site admin")] = False,
) -> None:
    """Create an account (the first one on an empty install is always an admin)."""
    migrate.upgrade(get_settings().effective_database_url)
    with session_scope() as session:
        created = accounts.create_user(session, username=username, password=password, admin=admin)
        role = "site admin" if created.is_admin else "user"
        typer.echo(f"created {role} {created.username}")


@user.command("reset-password")
def user_reset_password(username: str) -> None:
    """Print a one-time link that lets USERNAME choose a new password (valid 24 hours)."""
    settings = get_settings()
    with session_scope(writes=False) as session:
        token = accounts.reset_token(accounts.get_user(session, username), secret_key(settings))
    typer.echo(f"{settings.public_url.rstrip('/')}/reset-password?token={token}")


@db.command("upgrade")
def db_upgrade(revision: str = "head") -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    migrate.upgrade(get_settings().effective_database_url, revision)
    typer.echo(f"database at {revision}")


@app.command()
def demo() -> None:
    """Load the demo campaign (four forces, several battles) into an empty database."""
    migrate.upgrade(get_settings().effective_database_url)
    _load_demo(required=True)


def _load_demo(*, required: bool) -> None:
    with session_scope() as session:
        if not demo_service.is_empty(session):
            if required:
                typer.echo("the database already holds a campaign; demo not loaded", err=True)
                raise typer.Exit(1)
            return
        campaign = demo_service.load_demo(session)
        typer.echo(f"demo campaign loaded: {campaign.name} (id {campaign.id})")


@app.command()
def serve(
    host: str | None = None,
    port: int | None = None,
    demo_if_empty: Annotated[
        bool, typer.Option(help="Load the demo campaign into an empty database")
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="App processes (more than 1 needs PostgreSQL, and Redis for rate limits)",
        ),
    ] = 1,
    worker: Annotated[
        bool, typer.Option(help="Send webhook deliveries from this process too")
    ] = True,
) -> None:
    """Apply migrations, then serve the app with uvicorn (HOST, PORT, DATABASE_URL), with
    the webhook worker in a background thread."""
    settings = get_settings()
    migrate.upgrade(settings.effective_database_url)
    if demo_if_empty:
        _load_demo(required=False)
    stop = webhook_worker.start_in_background(get_engine()) if worker else None
    try:
        uvicorn.run(
            "app.cli:served_app",
            factory=True,
            host=host or settings.host,
            port=port or settings.port,
            log_level=settings.log_level,
            workers=workers,
        )
    finally:
        if stop is not None:
            stop.set()


def served_app() -> FastAPI:
    """The app as each server process runs it. The objects made at start-up (the rule
    tables, routes, templates: ~170k) are moved out of the garbage collector's sight, so a
    full collection no longer walks them all in the middle of a request (~100 ms pauses).
    What the first requests add for good (compiled statements, the driver's caches: ~40k
    objects) still made each full collection 11-13 ms, one every ~0.4 s under a stream of
    battle results: full collections are made ten times rarer (issue 50: a resolution's p90
    lower in four paired runs, its p95 in three; garbage in cycles lives a little longer).
    Young collections are made rarer too (YOUNG_COLLECTION_AFTER)."""
    application = create_app()
    before_first_request(application)  # before the freeze: what it makes is kept for good
    gc.collect()
    gc.freeze()
    _young, middle, _full = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, middle, FULL_COLLECTION_EVERY)
    return application


def before_first_request(application: FastAPI) -> None:
    """What a served process builds before it listens, so that no request builds it on the
    event loop or for its player: each route's matching state and every template (issue 50).
    The tests' live servers do the same."""
    build_route_state(application)
    compile_templates()


# Second-generation collections between full ones (CPython's default: 10).
FULL_COLLECTION_EVERY = 100
# New objects between young collections (CPython's default: 700). At 700 a battle's result
# (its rows, models and the rules' values) set off about 4 young collections and one
# middle one in three, each walking objects the request still used and promoting them;
# at 20,000 most results set off none (issue 50: a result's p50 0.5-1 ms lower in paired
# runs).
YOUNG_COLLECTION_AFTER = 20_000


@totals_commands.command("check")
def totals_check() -> None:
    """Recompute every kept total from the cards and battles and list any that differ
    (exit status 1 if one does)."""
    with session_scope(writes=False) as session:
        found = kept_totals.differences(session.connection())
    for line in found:
        typer.echo(line)
    typer.echo(f"{len(found)} difference(s)")
    if found:
        raise typer.Exit(1)


@totals_commands.command("rebuild")
def totals_rebuild() -> None:
    """Recompute every kept total from the cards and battles and store it."""
    migrate.upgrade(get_settings().effective_database_url)
    with session_scope() as session:
        fresh = kept_totals.rebuild(session.connection())
    typer.echo(
        f"rebuilt {len(fresh.standings)} standings lines, {len(fresh.sides)} chart points, "
        f"{len(fresh.card_battles)} card battle entries"
    )


@app.command("worker")
def worker_command(
    once: Annotated[bool, typer.Option(help="Send what is due now, then exit")] = False,
) -> None:
    """Send webhook deliveries (for deployments with several app processes; any number of
    workers may run, none sends a delivery twice)."""
    migrate.upgrade(get_settings().effective_database_url)
    if once:
        sent = webhook_worker.run_once(get_engine())
        typer.echo(f"{sent} delivered")
        return
    stop = threading.Event()
    try:
        webhook_worker.run_forever(get_engine(), stop)
    except KeyboardInterrupt:
        stop.set()


@app.command("export")
def export_command(
    campaign_id: int,
    output: Annotated[Path, typer.Option("--output", "-o", help="File; - is stdout")] = Path("-"),
    photos: Annotated[
        bool, typer.Option("--photos", help="A ZIP: the document and the photos' files")
    ] = False,
) -> None:
    """Write a campaign as one JSON document (to OUTPUT, or standard output); with --photos,
    a ZIP archive holding the document and the battle photos."""
    if photos:
        with session_scope(writes=False) as session:
            if str(output) == "-":
                _archive(session, campaign_id, sys.stdout.buffer)
            else:
                with output.open("wb") as out:
                    _archive(session, campaign_id, out)
        return
    with session_scope(writes=False) as session:
        document = transfer.export_campaign(session, campaign_id=campaign_id)
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if str(output) == "-":
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


def _archive(session: Session, campaign_id: int, out: BinaryIO) -> None:
    transfer.export_archive(
        session, campaign_id=campaign_id, store=photo_service.configured_store(), out=out
    )


@app.command("import")
def import_command(source: Path) -> None:
    """Create a campaign from a JSON document or a ZIP archive written by `crusade export`."""
    migrate.upgrade(get_settings().effective_database_url)
    try:
        with session_scope() as session:
            if zipfile.is_zipfile(source):
                with source.open("rb") as archive:
                    store = photo_service.configured_store()
                    campaign = transfer.import_archive(session, archive, store=store)
            else:
                with source.open(encoding="utf-8") as stream:
                    campaign = transfer.import_file(session, stream)  # read as it is parsed
            session.flush()
            typer.echo(f"imported campaign {campaign.name} as id {campaign.id}")
    except DomainError as refused:  # rolled back: nothing was imported
        typer.echo(f"not imported ({refused.code}): {refused.message}", err=True)
        raise typer.Exit(1) from None
