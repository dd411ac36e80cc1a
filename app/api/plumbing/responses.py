"""The OpenAPI schema is the API's contract: every status an /api/v1 operation can answer is
documented, in one place, with the problem+json body errors have.

``document_responses(app)`` wraps the app's schema builder. The generated schema gets, for
each operation under /api/v1:

- from its access rule (app/api/plumbing/route_access.py POLICIES): 401 (no caller, or a bad Bearer
token),
  403 (a read-only or campaign-limited token, a missing CSRF token, a role that may not),
  404 and 422 for the ids in its path that the access check looks up;
- from its shape: 422 ``request_invalid`` when it takes parameters or a body, 413 when it
  takes a body, and on POST the Idempotency-Key header with its 409 and 422;
- what its handler answers itself (``EXTRA`` below: conflicts, expired invites, rate limits);
- OpenAPI links from the operations that create something to those that use its id, so a
  client (and schemathesis's stateful tests) can follow them.

tests/api/test_fuzz.py has schemathesis check that every answer is documented: status code,
content type and body.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from pydantic import BaseModel, Field

from app.api.plumbing.route_access import API, policy_for
from app.edge.hardening import ID_LIMIT
from app.edge.read_cache import etag_matches, kept_body, not_modified
from app.edge.schemas.decisions import DecisionOfferPublic
from app.services.accounts.access import Access

PROBLEM_JSON = "application/problem+json"
PROBLEM_REF = "#/components/schemas/Problem"


class Problem(BaseModel):
    """Every error answer of the API (RFC 9457 problem details, as application/problem+json)."""

    type: str = Field(description="`/problems/` and the code")
    title: str = Field(description="The code in words")
    status: int = Field(description="The HTTP status, repeated")
    code: str = Field(description="Stable, machine-readable: what went wrong")
    detail: str = Field(description="For people: what went wrong and what to do")
    field: str | None = Field(
        default=None, description="The input the problem is about, when there is one"
    )
    offer: DecisionOfferPublic | None = Field(
        default=None,
        description="A refused answer to a decision (422): what the decision accepts now, "
        "as its `offer` says (another answer may have changed it, issue 46)",
    )


# A 422 that says a Crusade rule refuses the request carries that rule's own code.
RULE = "a rule's refusal (the code names the rule)"

# What handlers answer beyond what their access rule and shape imply (read from app/api and
# the services' DomainError statuses).
EXTRA: dict[tuple[str, str], dict[int, tuple[str, ...]]] = {
    ("POST", "/api/v1/auth/signup"): {
        409: ("username_taken",),
        422: ("username_invalid", "password_length"),
    },
    ("POST", "/api/v1/auth/login"): {401: ("invalid_credentials",), 429: ("rate_limited",)},
    ("POST", "/api/v1/auth/password"): {
        401: ("invalid_credentials",),
        422: ("password_length",),
    },
    ("POST", "/api/v1/auth/reset-password"): {
        400: ("reset_link_invalid",),
        422: ("password_length",),
        429: ("rate_limited",),
    },
    ("POST", "/api/v1/auth/pin"): {
        422: ("password_invalid", "pin_invalid"),
        429: ("rate_limited",),
    },
    ("POST", "/api/v1/auth/tokens"): {422: ("campaign_not_found",), 429: ("rate_limited",)},
    ("DELETE", "/api/v1/auth/tokens/{token_id}"): {404: ("token_not_found",)},
    ("GET", "/api/v1/rules/missions"): {404: ("battle_size_unknown",)},
    ("GET", "/api/v1/rules/missions/{mission_id}"): {404: ("mission_unknown",)},
    ("POST", "/api/v1/campaigns/{campaign_id}/forces"): {422: (RULE,)},
    ("PATCH", "/api/v1/forces/{force_id}"): {422: ("force_name_missing",)},
    ("POST", "/api/v1/forces/{force_id}/cards"): {422: (RULE,)},
    ("POST", "/api/v1/forces/{force_id}/cards/batch"): {422: (RULE,)},
    ("PATCH", "/api/v1/cards/{card_id}"): {422: (RULE,)},
    ("DELETE", "/api/v1/cards/{card_id}"): {422: (RULE,)},
    ("POST", "/api/v1/forces/{force_id}/requisitions"): {422: (RULE,)},
    ("POST", "/api/v1/forces/{force_id}/roster"): {
        409: ("roster_unit_present",),
        413: ("roster_too_large",),
        422: ("roster_unreadable", "roster_wrong_game_system", "roster_unit_unknown", RULE),
    },
    ("DELETE", "/api/v1/campaigns/{campaign_id}/members/{user_id}"): {404: ("member_not_found",)},
    ("POST", "/api/v1/campaigns/{campaign_id}/members/{user_id}/reset-link"): {
        404: ("member_not_found",)
    },
    ("DELETE", "/api/v1/campaigns/{campaign_id}/invites/{code}"): {404: ("invite_not_found",)},
    ("POST", "/api/v1/invites/{code}/accept"): {
        404: ("invite_not_found",),
        409: ("already_a_member",),
        410: ("invite_expired", "invite_used_up"),
    },
    ("POST", "/api/v1/campaigns/{campaign_id}/join"): {
        403: ("campaign_invite_only",),
        409: ("already_a_member",),
    },
    ("POST", "/api/v1/campaigns/{campaign_id}/battles"): {
        403: ("muster_not_yours",),
        404: ("force_not_found", "territory_not_found"),
        409: ("decisions_pending", "battle_in_progress"),
        422: (RULE,),
    },
    ("POST", "/api/v1/battles/{battle_id}/result"): {
        409: ("battle_already_recorded",),
        422: (RULE,),
    },
    ("POST", "/api/v1/battles/{battle_id}/confirm"): {
        403: ("result_disputed", "cannot_confirm_own_result"),
        409: ("no_result_to_confirm",),
        422: (RULE,),
    },
    ("POST", "/api/v1/battles/{battle_id}/dispute"): {409: ("no_result_to_dispute",)},
    ("POST", "/api/v1/battles/{battle_id}/revert"): {
        409: ("battle_already_reverted", "battle_revert_blocked"),
    },
    ("POST", "/api/v1/battles/{battle_id}/call-off"): {409: ("battle_not_mustered",)},
    ("POST", "/api/v1/battles/{battle_id}/photos"): {
        409: ("battle_not_reportable", "photo_limit"),
        413: ("photo_too_large", "request_too_large"),
        422: ("photo_type", "photo_too_many_pixels", "photo_too_complex", "photo_unreadable"),
        503: ("photo_busy", "storage_unavailable"),  # photo_busy: every decoding slot taken
    },
    ("DELETE", "/api/v1/battles/{battle_id}/photos/{photo_id}"): {404: ("photo_not_found",)},
    ("GET", "/api/v1/battles/{battle_id}/photos/{photo_id}/{width}"): {
        404: ("photo_not_found",),
    },
    ("POST", "/api/v1/campaigns/{campaign_id}/rule-packs"): {
        409: ("rule_pack_version_exists", "rule_pack_update_breaks"),
        413: ("request_too_large",),
        422: ("rule_pack_invalid",),
    },
    ("GET", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): {
        404: ("rule_pack_not_found",),
    },
    ("DELETE", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): {
        404: ("rule_pack_not_found",),
        409: ("rule_pack_in_use",),
    },
    ("POST", "/api/v1/campaigns/{campaign_id}/territories"): {
        409: ("territory_limit",),
        422: ("territory_name_required", "territory_not_found", "force_not_in_campaign"),
    },
    ("PATCH", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): {
        404: ("territory_not_found",),
        422: ("territory_name_required", "territory_not_found", "force_not_in_campaign"),
    },
    ("DELETE", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): {
        404: ("territory_not_found",),
        409: ("territory_in_use",),
    },
    ("PUT", "/api/v1/battles/{battle_id}/report"): {
        409: ("battle_not_reportable",),
        422: ("played_on_invalid", "unit_not_in_battle"),
    },
    ("POST", "/api/v1/decisions/{decision_id}/answer"): {
        409: ("decision_already_answered", "decision_cancelled"),
        422: ("decision_answer_incomplete", RULE),
    },
    ("GET", "/api/v1/campaigns/{campaign_id}/events"): {422: ("cursor_invalid",)},
    ("POST", "/api/v1/campaigns/{campaign_id}/webhooks"): {
        409: ("webhook_limit",),
        422: (
            "webhook_url_invalid",
            "webhook_url_private",
            "webhook_url_unresolvable",
            "webhook_event_unknown",
        ),
    },
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): {404: ("webhook_not_found",)},
    ("DELETE", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): {
        404: ("webhook_not_found",)
    },
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries"): {
        404: ("webhook_not_found",)
    },
    (
        "POST",
        "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
    ): {404: ("webhook_not_found", "delivery_not_found")},
}

# Path ids the access check looks up before the handler runs (app/services/accounts/access.py).
LOOKED_UP = {
    "campaign_id": "campaign_not_found",
    "force_id": "force_not_found",
    "card_id": "card_not_found",
    "battle_id": "battle_not_found",
    "decision_id": "decision_not_found",
}

REASONS = {
    400: "Bad request",
    401: "Not authenticated",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict",
    410: "Gone",
    413: "Request body too large",
    422: "Invalid request",
    429: "Too many requests",
    503: "Busy, or the database down: nothing was done, retry after the seconds Retry-After gives",
    507: "The server's disk is full: nothing was done, retry after the seconds Retry-After gives",
}

IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Send the same key when retrying a POST: the first answer is replayed "
    "instead of the change being made twice",
    "schema": {"type": "string"},
}
ETAG = {"description": "The force's version and its campaign's", "schema": {"type": "string"}}
# issue 50: the cached reads, each with the version its body was built from.
CAMPAIGN_ETAG = {
    "description": "The campaign's version (it rises with every change the read shows)",
    "schema": {"type": "string"},
}
FEED_ETAG = {
    "description": "The first page's version (only on a page read without `after`)",
    "schema": {"type": "string"},
}
IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "An ETag this read answered: 304 while it still matches (with `wait`, "
    "once the time is up)",
}
RETRY_AFTER: dict[str, Any] = {
    "description": "Seconds to wait before retrying",
    "schema": {"type": "integer"},
}
# Headers of every answer to a request with an API token (app/api/plumbing/token_limits.py),
# declared once under components/headers and referred to from each answer.
RATE_LIMIT_HEADERS = {
    "RateLimit-Limit": "With an API token: the requests it may make in any minute",
    "RateLimit-Remaining": "With an API token: the requests left in the window now",
    "RateLimit-Reset": "With an API token: seconds until the oldest request in the window "
    "leaves it",
}
IDEMPOTENT_REPLAYED = {
    "description": "`true` when this is the kept answer to an earlier request with the same "
    "Idempotency-Key (nothing was done again)",
    "schema": {"type": "string", "enum": ["true"]},
}
LOCATION = {"description": "Where a GET reads the new resource", "schema": {"type": "string"}}
# Operations whose 201 carries a Location (see ``located``).
LOCATED = {
    "/api/v1/campaigns",
    "/api/v1/campaigns/{campaign_id}/forces",
    "/api/v1/forces/{force_id}/cards",
    "/api/v1/campaigns/{campaign_id}/battles",
    "/api/v1/campaigns/{campaign_id}/webhooks",
}

# Operations that create something, the field of their answer that is its id, and the path
# parameter that id fills. Each links to every operation whose path parameters it can fill
# (with the creating request's own path parameters for the rest).
CREATES: dict[tuple[str, str], tuple[str, str]] = {
    ("POST", "/api/v1/campaigns"): ("id", "campaign_id"),
    ("POST", "/api/v1/campaigns/{campaign_id}/forces"): ("id", "force_id"),
    ("POST", "/api/v1/forces/{force_id}/cards"): ("id", "card_id"),
    ("POST", "/api/v1/campaigns/{campaign_id}/battles"): ("id", "battle_id"),
    ("POST", "/api/v1/campaigns/{campaign_id}/invites"): ("code", "code"),
    ("POST", "/api/v1/auth/tokens"): ("id", "token_id"),
    ("POST", "/api/v1/campaigns/{campaign_id}/webhooks"): ("id", "webhook_id"),
}

_PARAM = re.compile(r"{(\w+)}")


def _codes(method: str, path: str, operation: dict[str, Any]) -> dict[int, list[str]]:
    codes: dict[int, list[str]] = defaultdict(list)
    try:
        access = policy_for(method, path)
    except KeyError:  # no rule: create_app() refuses to start (check_every_route_has_a_rule)
        return codes
    # A bad Bearer token is refused on every route, public ones included.
    codes[401].append("token_invalid")
    if access != Access.PUBLIC:
        codes[401].append("not_authenticated")
        codes[403].append("token_campaign_limited")
        if method != "GET":
            codes[403] += ["token_read_only", "csrf_token_invalid"]
    if access not in (Access.PUBLIC, Access.USER):
        codes[403].append("forbidden")
    for name in _PARAM.findall(path):
        if name in LOOKED_UP and access != Access.PUBLIC:
            codes[404].append(LOOKED_UP[name])
    if operation.get("parameters") or "requestBody" in operation:
        codes[422] += ["request_invalid", "text_invalid"]  # text_invalid: U+0000 in text
    if "requestBody" in operation:
        codes[400] += ["utf8_invalid", "http_error"]  # a body that is not UTF-8 / JSON text
        codes[413].append("request_too_large")
    if method != "GET":
        # A clash with a simultaneous change that the database caught (app/edge/conflicts.py).
        codes[409].append("concurrent_change")
    if method == "POST":  # the Idempotency-Key header (app/api/plumbing/idempotency.py)
        codes[409] += [
            "idempotency_request_in_progress",
            "idempotency_request_applied",
            "idempotency_claim_lost",
        ]
        codes[422] += ["idempotency_key_reused", "idempotency_key_invalid"]
    for status, extra in EXTRA.get((method, path), {}).items():
        codes[status] += [c for c in extra if c not in codes[status]]
    # An API token past its requests a minute (app/api/plumbing/token_limits.py).
    if "rate_limited" not in codes[429]:
        codes[429].append("rate_limited")
    # More requests than the process takes at once (app/edge/admission.py), or the database
    # down; a write may find its disk full (app/faults.py).
    codes[503] += ["server_busy", "database_unavailable"]
    if method != "GET":
        codes[507].append("storage_full")
    return codes


# Codes answered with Retry-After; a status whose every code does says it is required.
RETRIED = {
    "rate_limited",
    "pin_locked",
    "server_busy",
    "database_unavailable",
    "storage_full",
    "storage_unavailable",
    "photo_busy",
    "idempotency_request_in_progress",
}


def _response(status: int, codes: list[str]) -> dict[str, Any]:
    named = ", ".join(c if c == RULE else f"`{c}`" for c in codes)
    response: dict[str, Any] = {
        "description": f"{REASONS[status]}: {named}",
        "content": {PROBLEM_JSON: {"schema": {"$ref": PROBLEM_REF}}},
    }
    retried = [c for c in codes if c in RETRIED]
    if retried:
        header = dict(RETRY_AFTER)
        if len(retried) < len(codes):
            header["description"] += " (with " + ", ".join(f"`{c}`" for c in retried) + ")"
        response["headers"] = {"Retry-After": header}
    return response


def _headers(method: str, responses: dict[str, Any]) -> None:
    """Every answer may carry the RateLimit-* headers (to a token); a POST's may be a
    replay (Idempotent-Replayed)."""
    for answer in responses.values():
        if "$ref" in answer:
            continue
        headers = answer.setdefault("headers", {})
        for name in RATE_LIMIT_HEADERS:
            headers.setdefault(name, {"$ref": f"#/components/headers/{name}"})
        if method == "post":
            headers.setdefault("Idempotent-Replayed", {"$ref": _REPLAYED_REF})


_REPLAYED_REF = "#/components/headers/Idempotent-Replayed"


def _links(schema: dict[str, Any]) -> None:
    paths: dict[str, dict[str, Any]] = schema["paths"]
    for (method, path), (field, param) in CREATES.items():
        creator = paths.get(path, {}).get(method.lower())
        if creator is None:
            continue
        own = set(_PARAM.findall(path))
        links: dict[str, Any] = {}
        for target_path, operations in paths.items():
            wanted = set(_PARAM.findall(target_path))
            if param not in wanted or not wanted <= own | {param}:
                continue
            for target_method, target in operations.items():
                parameters = {
                    name: f"$response.body#/{field}" if name == param else f"$request.path.{name}"
                    for name in sorted(wanted)
                }
                links[target["operationId"]] = {
                    "operationId": target["operationId"],
                    "parameters": parameters,
                    "description": f"{target_method.upper()} {target_path} with the new {param}",
                }
        success = next(c for c in creator["responses"] if c.startswith("2"))
        creator["responses"][success]["links"] = links


def contract(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the documented errors, headers and links to a schema FastAPI generated."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    for path, operations in schema["paths"].items():
        if not path.startswith(API + "/"):
            continue
        for method, operation in operations.items():
            _path_id_bounds(operation)
            responses: dict[str, Any] = operation["responses"]
            responses.pop("422", None)  # FastAPI's own: a body this API never sends
            if method == "post":
                operation.setdefault("parameters", []).append(dict(IDEMPOTENCY_KEY))
            for status, codes in sorted(_codes(method.upper(), path, operation).items()):
                responses[str(status)] = _response(status, codes)
    # The reads with an ETag: a generated client gets an `If-None-Match` argument.
    for read, etag in (
        (f"{API}/forces/{{force_id}}", ETAG),
        (f"{API}/campaigns/{{campaign_id}}/events", FEED_ETAG),
        (f"{API}/campaigns/{{campaign_id}}/standings", CAMPAIGN_ETAG),
        (f"{API}/campaigns/{{campaign_id}}/battles", CAMPAIGN_ETAG),
        (f"{API}/cards/{{card_id}}", CAMPAIGN_ETAG),
        (f"{API}/battles/{{battle_id}}", CAMPAIGN_ETAG),
    ):
        operation = schema["paths"].get(read, {}).get("get")
        if operation is None:
            continue
        for answered in ("200", "304"):
            operation["responses"][answered]["headers"] = {"ETag": dict(etag)}
        operation.setdefault("parameters", []).append(dict(IF_NONE_MATCH))
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if path in LOCATED and method == "post":
                operation["responses"]["201"]["headers"] = {"Location": dict(LOCATION)}
    headers = schema["components"].setdefault("headers", {})
    for name, description in RATE_LIMIT_HEADERS.items():
        headers[name] = {"description": description, "schema": {"type": "integer"}}
    headers["Idempotent-Replayed"] = dict(IDEMPOTENT_REPLAYED)
    for path, operations in schema["paths"].items():
        if path.startswith(API + "/"):
            for method, operation in operations.items():
                _headers(method, operation["responses"])
    _links(schema)
    for unused in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 body, now unused
        if f'"#/components/schemas/{unused}"' not in json.dumps(schema):
            components.pop(unused, None)
    return schema


def _path_id_bounds(operation: dict[str, Any]) -> None:
    """Integer path ids are 1 to 2^31 - 1 (app/edge/hardening.py check_path_ids): say so."""
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        if parameter.get("in") == "path" and schema.get("type") == "integer":
            schema.setdefault("minimum", 1)
            schema.setdefault("maximum", ID_LIMIT - 1)


def located(response: Response, path: str) -> None:
    """A 201 names what it created: ``Location`` is the path a GET reads it back from."""
    response.headers["Location"] = f"{API}{path}"


# The contracts this process built, as JSON text, by the routes they were built from (see
# _routes_key). Every app create_app() makes has the same routes, and building the schema
# takes seconds: an app the tests make for one test, then another, each paid it again. Text,
# so that no app's copy can change another's.
_CONTRACTS: dict[tuple[Any, ...], str] = {}


def document_responses(app: FastAPI) -> None:
    """Make ``app.openapi()`` (and so /openapi.json and /docs) return the full contract."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            key = _routes_key(app)
            if key not in _CONTRACTS:
                _CONTRACTS[key] = json.dumps(contract(generate()))
            app.openapi_schema = json.loads(_CONTRACTS[key])
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    _serve_contract(app)


def _routes_key(app: FastAPI) -> tuple[Any, ...]:
    """What the generated schema is made from: the app's own fields and, for each route (an
    included router's routes among them, as the schema builder walks them), its path,
    methods, whether it is documented, its operation id and response model, and its
    handler's code (the code, not the function: a handler defined in install_health() is a
    new function in every app, with the same code and so the same schema)."""
    routes = tuple(
        (
            type(route.original_route).__name__,
            route.path_format,
            tuple(sorted(route.methods or ())),
            getattr(route, "include_in_schema", None),
            getattr(route, "operation_id", None),
            getattr(route, "response_model", None),
            getattr(route.endpoint, "__code__", None),
        )
        for route in iter_route_contexts(app.routes)
    )
    return (app.title, app.version, app.description, app.openapi_version, routes)


def _serve_contract(app: FastAPI) -> None:
    """/openapi.json as bytes made once per process (the contract cannot change while it
    runs), sent with an ETag and compressed once: a bot that holds it gets a 304. FastAPI's
    own route serialised the whole schema again on every request (issue 50)."""
    path = app.openapi_url
    if path is None:
        return
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != path]
    made: list[tuple[bytes, str]] = []

    async def contract(request: Request) -> Response:
        if not made:
            body = bytes(JSONResponse(app.openapi()).body)
            made.append((body, f'"openapi-{hashlib.blake2b(body, digest_size=12).hexdigest()}"'))
        body, etag = made[0]
        if etag_matches(request, etag):
            return not_modified(etag)
        cache = request.app.state.read_cache
        kind = "application/json"
        return kept_body(request, cache, ("openapi",), etag, body, {}, media_type=kind)

    app.add_route(path, contract, include_in_schema=False)
