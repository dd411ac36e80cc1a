"""What every page route shares: who is calling, the access rule it declares, CSRF for form
posts, rendering a template, and keeping a refused form's changes out of the database."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import BackgroundTasks, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.config import get_settings, secret_key, site_address
from app.db.session import SessionDep, decided_on_loop, end_quick_read
from app.edge.csrf import CSRF_HEADER, SAFE_METHODS, csrf_matches, masked_csrf_token
from app.edge.read_cache import (
    VersionedBodies,
    etag_matches,
    fresh_build,
    kept_body,
    not_modified,
    page_etag,
)
from app.edge.sessions import COOKIE, resolve_principal
from app.errors import DomainError
from app.rules.errors import RuleError
from app.services.accounts.access import Access, authorize
from app.services.accounts.accounts import Principal
from app.services.campaigns import catchup
from app.web.display import formatting

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parent / "static"
templates = Jinja2Templates(directory=ROOT / "templates")
# Compiled once per process: checking every template file (and those it extends or
# includes) on disk for changes cost a page a stat call each, on every render (issue 50).
# A changed template takes a restart, as a changed Python file does.
templates.env.auto_reload = False
formatting.install(templates.env)
CSRF_FIELD = "csrf_token"


def compile_templates() -> None:
    """Compile every template now: a served process does it before its first request, so
    no player's first view of a page pays for it (62 templates, 1.7 s on a slow host; the
    first dashboard 0.4 s). The environment keeps 400, more than there are."""
    for name in templates.env.list_templates():
        templates.env.get_template(name)


class PageAccess:
    """A page's access rule, as a dependency. Every page route declares one (create_app
    checks), decided by the same authorize() as the JSON API."""

    def __init__(self, access: Access) -> None:
        self.access = access

    async def __call__(
        self, request: Request, session: SessionDep, background: BackgroundTasks
    ) -> Principal | None:
        # The database work in one thread hand-off, never on the event loop (issue 41); a
        # quick read's on PostgreSQL awaits its statements on the loop instead (issue 50).
        found: list[Principal | None] = []
        # On SQLite a member's page is decided in the thread its body is built in; a reader
        # with no session may be answered from a kept page without one (``kept_page``).
        on_loop = COOKIE not in request.cookies
        if await decided_on_loop(
            session,
            lambda: found.append(self._decide(request, session, background)),
            sqlite=on_loop,
        ):
            principal = found[0]
        else:
            principal = await run_in_threadpool(self._decide, request, session, background)
        if request.method not in SAFE_METHODS and principal is not None:
            await _check_form_csrf(request)
        return principal

    def _decide(
        self, request: Request, session: Session, background: BackgroundTasks
    ) -> Principal | None:
        principal = resolve_principal(request, session, background)
        authorize(
            session,
            access=self.access,
            principal=principal,
            params=request.path_params,
            method=request.method,
        )
        session.info["actor_id"] = principal.user.id if principal else None
        if principal is not None and principal.user.id is not None:  # the header's count
            user_id = principal.user.id
            request.state.waiting_for_you = catchup.waiting_counts(session, user_id=user_id)
        end_quick_read(session)
        return principal


def page(access: Access) -> Any:
    return Depends(PageAccess(access))


def declares_access(route: Any) -> bool:
    return any(isinstance(d.call, PageAccess) for d in route.dependant.dependencies)


async def _check_form_csrf(request: Request) -> None:
    """Form posts carry the token in a hidden field; script requests in the header. Only a
    caller the session cookie identifies has an ambient credential to protect."""
    cookie = request.cookies.get(COOKIE)
    if not cookie:
        return
    sent = request.headers.get(CSRF_HEADER)
    if sent is None:
        form = await request.form()
        sent = str(form.get(CSRF_FIELD, ""))
    if not csrf_matches(sent, cookie, secret_key(get_settings())):
        raise DomainError(
            "csrf_token_invalid",
            "This form has expired; reload the page and try again.",
            status=403,
        )


def render(
    request: Request,
    template: str,
    principal: Principal | None = None,
    *,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    cookie = request.cookies.get(COOKIE, "")
    # masked afresh for every response: the same bytes twice would let a compressed page
    # that reflects input give the token away (BREACH; app/edge/csrf.py)
    csrf = masked_csrf_token(cookie, secret_key(get_settings())) if cookie and principal else ""
    request.state.page_csrf = csrf  # left out of the page's ETag (``revalidated``)
    context = {
        "user": principal.user if principal else None,
        "csrf": csrf,
        "waiting_for_you": getattr(request.state, "waiting_for_you", None),
        **context,
    }
    response = templates.TemplateResponse(request, template, context, status_code=status)
    refusal = context.get("error")
    if isinstance(refusal, DomainError) and refusal.retry_after is not None:
        response.headers["Retry-After"] = str(refusal.retry_after)  # a refusal for a while
    if principal is not None:
        # A logged-in page may hold a new API token, an invite or a reset link: no copy of it
        # is kept by the browser or anything in between (the back button fetches it afresh).
        response.headers["Cache-Control"] = "no-store"
    return response


# --- issue 50: the parts of a page that are the same for every reader, kept per version ----


def fragments(
    request: Request,
    session: Session,
    key: tuple[object, ...],
    build: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """What ``build`` gives (rendered fragments, as Markup, and the few plain values the
    page's shell shows), kept under ``key``: what, id, the version read from the database
    this request, and the reader's kind where it matters. Built at most once per key."""
    cache: VersionedBodies = request.app.state.read_cache
    kept = cache.kept(key)
    if kept is not None:
        return dict(kept)  # the parts are shared: strings, and values nobody changes
    fresh_build(session)
    built = build()
    cache.keep(key, dict(built))
    return built


def link(row: Any) -> dict[str, Any]:
    """A force's or campaign's id and name: what a kept page's breadcrumbs show of it."""
    return {"id": row.id, "name": row.name}


def fragment(template: str, **context: Any) -> Markup:
    """A template rendered alone (a part of a page, the same for every reader)."""
    return Markup(templates.env.get_template(template).render(**context))


def revalidated(request: Request, response: Response) -> Response:
    """An ETag for a page as sent, made of its bytes and of the session it was built for;
    a browser that holds that very page gets a 304 and no body."""
    if response.status_code != 200 or not isinstance(response.body, bytes):
        return response
    # The masked CSRF token differs on every render (BREACH): the tag is of the page
    # without it, so an unchanged page keeps its tag (the copy a browser holds still
    # carries a token that is valid for its session).
    sent: str = getattr(request.state, "page_csrf", "")
    body = response.body.replace(sent.encode(), b"") if sent else response.body
    etag = page_etag(body, request.cookies.get(COOKIE, ""))
    if etag_matches(request, etag):
        kept = {k: v for k, v in response.headers.items() if k.lower() in KEPT_ON_304}
        return Response(status_code=304, headers={**kept, "ETag": etag})
    response.headers["ETag"] = etag
    return response


KEPT_ON_304 = {"cache-control", "set-cookie", "vary"}


async def kept_page(
    request: Request,
    principal: Principal | None,
    what: tuple[Hashable, ...],
    version: int | None,
    build: Callable[[], Response],
) -> Response:
    """A page for a reader without a session (a visitor, a bot): one version of it is the
    same bytes for every such reader (no CSRF token, no "waiting for you", no news since a
    visit), so it is kept whole, with its ETag and compressed once, and sent from the event
    loop with no thread hand-off (issue 50). ``version`` is the one this request's access
    check read (None: not known, build); ``build`` makes the page in the thread pool, as a
    member's page always is. ``what`` names the page and what it shows: its ids and its
    query's parameters as the route read them (not the raw query, whose every spelling
    would be another copy kept)."""
    key = _visitor_key(request, principal, what, version)
    cache: VersionedBodies = request.app.state.read_cache
    if key is not None:
        found = cache.get_with_headers(key)
        if found is not None:
            return _kept_answer(request, cache, key, *found)
    response = await run_in_threadpool(build)
    if key is not None and _keepable(response):
        cache.put(key, bytes(response.body), {"ETag": response.headers["etag"]})
    return response


def _visitor_key(
    request: Request, principal: Principal | None, what: tuple[Hashable, ...], version: int | None
) -> tuple[Hashable, ...] | None:
    """The kept page's key, for a reader with no session cookie at all (an expired one still
    names its own page's ETag: ``revalidated``); None for anyone else."""
    if principal is not None or version is None or COOKIE in request.cookies:
        return None
    return ("visitor_page", *what, version)


def _keepable(response: Response) -> bool:
    return (
        response.status_code == 200
        and response.background is None
        and isinstance(response.body, bytes)
        and "etag" in response.headers
        and "set-cookie" not in response.headers
    )


def _kept_answer(
    request: Request, cache: VersionedBodies, key: Hashable, body: bytes, headers: dict[str, str]
) -> Response:
    etag = headers["ETag"]
    if etag_matches(request, etag):
        return not_modified(etag)
    return kept_body(request, cache, key, etag, body, headers, media_type="text/html")


def redirect(url: str) -> RedirectResponse:
    """After a successful post: see the result with a GET (so reload does not resend)."""
    return RedirectResponse(url, status_code=303)


def login_url(request: Request) -> str:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"/login?next={quote(target)}"


def site_url(request: Request) -> str:
    return site_address(str(request.base_url))


@dataclass
class Outcome:
    error: RuleError | None = None

    @property
    def refused(self) -> bool:
        return self.error is not None

    @property
    def status(self) -> int:
        """The HTTP status of the refusal (rule errors are 422)."""
        if isinstance(self.error, DomainError):
            return self.error.status
        return 422 if self.error else 200

    def shown(self, error_as: str = "error") -> dict[str, Any]:
        """What a page shows after its form was refused: the refusal's status, and the
        error in words under ``error_as`` (a page with several forms names whose it is)."""
        return {"status": self.status, error_as: self.error}


@contextmanager
def attempt(session: Session) -> Iterator[Outcome]:
    """Run a command in a savepoint: if it is refused, its changes are undone and the error
    is kept for the page to show in place (the rest of the request's reads stay usable)."""
    outcome = Outcome()
    try:
        with session.begin_nested():
            yield outcome
    except RuleError as error:
        outcome.error = error


# The common page callers: anyone (maybe logged in), and any logged-in account.
Viewer = Annotated[Principal | None, page(Access.PUBLIC)]
Member = Annotated[Principal, page(Access.USER)]
