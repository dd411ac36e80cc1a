"""Reading the website's forms: each field as text, a list, or a whole number, trimmed and
bounded; a number that is not one is refused with the field named."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import FormData

from app.rules.errors import RuleError


async def _read_form(request: Request) -> FormData:
    return await request.form()


Form = Annotated[FormData, Depends(_read_form)]


def field_text(form: FormData, name: str, limit: int = 4000) -> str:
    value = form.get(name)
    return value[:limit].strip() if isinstance(value, str) else ""


def field_texts(form: FormData, name: str) -> list[str]:
    return [v[:120].strip() for v in form.getlist(name) if isinstance(v, str) and v.strip()]


def field_int(form: FormData, name: str, *, low: int = 0, high: int = 2**31 - 1) -> int | None:
    """A whole number from a form field (None when empty); anything else is refused."""
    raw = field_text(form, name, 12)
    if not raw:
        return None
    if not raw.lstrip("-").isdigit() or not low <= int(raw) <= high:
        raise RuleError("number_invalid", f"Give a whole number from {low} to {high}.", field=name)
    return int(raw)


def field_ints(form: FormData, name: str) -> list[int]:
    return [int(v) for v in field_texts(form, name) if v.isdigit() and len(v) < 10]
