"""Lists paged by a key, never by an offset: a client sends back the ``cursor`` of the next
page (the id after which, or before which, it starts), so a page costs the same however far
into a long list it is, and an entry added meanwhile never shifts one into the next page
twice. The next page's address is in the body (``next``) and in a ``Link`` header."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Generic, TypeVar

from fastapi import Query, Request, Response
from pydantic import BaseModel, Field

T = TypeVar("T")
R = TypeVar("R")

Cursor = Annotated[
    int | None,
    Query(
        ge=0,
        lt=2**31,
        description="Where the page starts: the `cursor` of the previous page's `next` link",
    ),
]
Limit = Annotated[int, Query(ge=1, le=200, description="Entries per page")]


class KeysetPage(BaseModel, Generic[T]):
    items: list[T]
    limit: int
    next_cursor: int | None = Field(description="Send as `cursor` for the next page")
    next: str | None = Field(description="The next page's address; null on the last page")


def keyset_page(
    request: Request, response: Response, items: list[T], limit: int, next_cursor: int | None
) -> KeysetPage[T]:
    """The page, with the address of the next one (same query, new cursor) in the body and
    in a ``Link: <...>; rel="next"`` header. The address is relative: behind a proxy the
    request's own host is not the one clients use."""
    following = None
    if next_cursor is not None:
        query = request.url.include_query_params(cursor=next_cursor, limit=limit).query
        following = f"{request.url.path}?{query}"
        response.headers["Link"] = f'<{following}>; rel="next"'
    return KeysetPage(items=items, limit=limit, next_cursor=next_cursor, next=following)


def page_of(
    request: Request,
    response: Response,
    rows: Sequence[R],
    limit: int,
    key: Callable[[R], int | None],
    show: Callable[[R], T],
) -> KeysetPage[T]:
    """The page from ``limit + 1`` rows read: the extra row only tells that more follow, and
    the last row shown (its ``key``) is where the next page starts."""
    following = key(rows[limit - 1]) if len(rows) > limit else None
    return keyset_page(request, response, [show(r) for r in rows[:limit]], limit, following)
