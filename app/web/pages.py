"""What every page route shares: who is calling, the access rule it declares, CSRF for form
posts, rendering a template, and keeping a refused form's changes out of the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import BackgroundTasks, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.config import get_settings, secret_key, site_address
from app.db.session import SessionDep
from app.edge.csrf import CSRF_HEADER, SAFE_METHODS, csrf_matches, masked_csrf_token
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
formatting.install(templates.env)
CSRF_FIELD = "csrf_token"


class PageAccess:
    """A page's access rule, as a dependency. Every page route declares one (create_app
    checks), decided by the same authorize() as the JSON API."""

    def __init__(self, access: Access) -> None:
        self.access = access

    async def __call__(
        self, request: Request, session: SessionDep, background: BackgroundTasks
    ) -> Principal | None:
        # The database work in one thread hand-off, never on the event loop (issue 41).
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
