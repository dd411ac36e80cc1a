"""A served app builds FastAPI's per-route state before its first request
(app/routing.py build_route_state): otherwise the first request that walks the routes
builds it on the event loop, and /health waits behind it (1.24 s on a loaded host). The
state is kept for the process (the routes are shared by its apps), so each case runs in a
fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIRST_REQUEST = """
import json, sys
import fastapi.routing
from fastapi.testclient import TestClient
from app.db.engine import make_engine
from app.main import create_app

built = []
context = fastapi.routing._EffectiveRouteContext
real = context.from_api_route
def counted(*args, **kwargs):
    built.append(kwargs["original_route"].path)
    return real(*args, **kwargs)
context.from_api_route = counted

if sys.argv[2] == "served":
    from app.cli import served_app  # as `crusade serve` makes its app (DATABASE_URL)
    app = served_app()
else:
    app = create_app(make_engine(sys.argv[1]))
at_start = len(built)
from app.web.pages import templates
compiled = len(templates.env.cache)
# a path no route answers walks past every route
assert TestClient(app).get("/no/such/page/anywhere").status_code == 404
print(json.dumps({
    "at_start": at_start,
    "first_request": len(built) - at_start,
    "templates": len(templates.env.list_templates()),
    "compiled": compiled,
}))
"""


def _built(tmp_path: Path, how: str) -> dict[str, int]:
    database = f"sqlite:///{tmp_path / 'routes.db'}"
    ran = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST, database, how],
        env={**os.environ, "DATABASE_URL": database},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return dict(json.loads(ran.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("how", ["created", "served"])
def test_a_served_app_builds_its_routes_before_its_first_request(tmp_path: Path, how: str) -> None:
    """Created only (the API's routes are built by create_app's own check of them), the
    first request builds the state of the routes it walks past (the website's pages, ~90)
    and no template is compiled yet; served (app.cli.served_app), the routes were built
    and every template compiled at start, and the first request builds none."""
    built = _built(tmp_path, how)
    if how == "served":
        assert built["first_request"] == 0 and built["compiled"] == built["templates"], built
    else:
        assert built["first_request"] > 50 and built["compiled"] == 0, built
    assert built["templates"] > 50
