"""The API's routers are included with the cached reads' modules first (app/main.py), so a
hot path is found after fewer routes; that is safe only while no two API routes can match
one request: then the order of the modules changes nothing but the time."""

from __future__ import annotations

import re
from typing import Any

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import compile_path

from app.main import _shared_routes


def _walk() -> list[tuple[str, Any]]:
    """Every route of the app's API and pages: its full path, and the route object."""
    found: list[tuple[str, Any]] = []

    def walk(routes: Any, prefix: str) -> None:
        for route in routes:
            included = getattr(route, "original_router", None)
            if included is not None:
                walk(included.routes, prefix + (route.include_context.prefix or ""))
            elif hasattr(route, "path"):
                found.append((prefix + route.path, route))

    walk(_shared_routes(), "")
    return found


def _api_routes() -> list[tuple[str, set[str]]]:
    return [
        (path, set(getattr(route, "methods", None) or ()))
        for path, route in _walk()
        if path.startswith("/api/v1/")
    ]


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


def test_a_page_never_looks_through_the_api_routes(client: TestClient) -> None:
    """The API's router says at once that a path outside /api/v1 is none of its routes
    (app/routing.py PrefixRouter): a page's request is not matched against its routes."""
    api = {id(route) for path, route in _walk() if path.startswith("/api/v1/")}
    looked: list[int] = []
    real = APIRoute.matches

    def watched(self: APIRoute, scope: Any) -> Any:
        looked.append(id(self))
        return real(self, scope)

    APIRoute.matches = watched  # type: ignore[method-assign]
    try:
        assert client.get("/health").status_code == 200
        page = client.get("/campaigns/999999")
    finally:
        APIRoute.matches = real  # type: ignore[method-assign]
    assert page.status_code == 404
    assert looked and api and not api.intersection(looked)
