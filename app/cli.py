"""Command line: `crusade serve`, `crusade db upgrade`."""

from __future__ import annotations

import typer
import uvicorn

from app.config import get_settings
from app.db import migrate
from app.db.session import session_scope
from app.services import demo as demo_service

app = typer.Typer(help="Crusade campaign tracker", no_args_is_help=True)
db = typer.Typer(help="Database schema commands", no_args_is_help=True)
app.add_typer(db, name="db")


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
    demo_if_empty: bool = typer.Option(False, help="Load the demo campaign into an empty database"),
) -> None:
    """Apply migrations, then serve the app with uvicorn (HOST, PORT, DATABASE_URL)."""
    settings = get_settings()
    migrate.upgrade(settings.effective_database_url)
    if demo_if_empty:
        _load_demo(required=False)
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level=settings.log_level,
    )
