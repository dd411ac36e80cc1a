"""Command line: `crusade serve`, `crusade db upgrade`."""

from __future__ import annotations

import typer
import uvicorn

from app.config import get_settings
from app.db import migrate

app = typer.Typer(help="Crusade campaign tracker", no_args_is_help=True)
db = typer.Typer(help="Database schema commands", no_args_is_help=True)
app.add_typer(db, name="db")


@db.command("upgrade")
def db_upgrade(revision: str = "head") -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    migrate.upgrade(get_settings().effective_database_url, revision)
    typer.echo(f"database at {revision}")


@app.command()
def serve(host: str | None = None, port: int | None = None) -> None:
    """Apply migrations, then serve the app with uvicorn (HOST, PORT, DATABASE_URL)."""
    settings = get_settings()
    migrate.upgrade(settings.effective_database_url)
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level=settings.log_level,
    )
