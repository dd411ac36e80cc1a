"""The API's routers are included with the cached reads' modules first (app/main.py), so a
hot path is found after fewer routes; that is safe only while no two API routes can match
one request: then the order of the modules changes nothing but the time."""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import compile_path

from app.main import _shared_routes


def _api_routes() -> list[tuple[str, set[str]]]:
    found: list[tuple[str, set[str]]] = []

    def walk(routes: Any, prefix: str) -> None:
        for route in routes:
            included = getattr(route, "original_router", None)
            if included is not None:
                walk(included.routes, prefix + (route.include_context.prefix or ""))
            elif hasattr(route, "path"):
                found.append((prefix + route.path, set(getattr(route, "methods", None) or ())))

    walk(_shared_routes(), "")
    return [(path, methods) for path, methods in found if path.startswith("/api/v1/")]


def test_no_request_matches_two_api_routes() -> None:
    routes = _api_routes()
    assert len(routes) > 80  # every module's routes, under their prefix
    compiled = [(compile_path(path)[0], path, methods) for path, methods in routes]
    for path, methods in routes:
        for value in ("1", "x"):  # a number and a word in every parameter
            sample = re.sub(r"\{[^}]+\}", value, path)
            matching = [p for regex, p, m in compiled if m & methods and regex.match(sample)]
            assert matching == [path], f"{sorted(methods)} {sample}: {matching}"


def test_a_cached_read_is_found_before_the_other_modules() -> None:
    paths = [path for path, _methods in _api_routes()]
    first_auth = paths.index("/api/v1/auth/signup")
    for hot in ("/api/v1/forces/{force_id}", "/api/v1/campaigns/{campaign_id}/standings"):
        assert paths.index(hot) < first_auth
