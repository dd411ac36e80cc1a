"""The table pass: after the opponent confirms a result on the recorder's phone (with their
password or PIN), the same phone may answer *their* decisions of *that* battle for a short
while, then it is handed back (issue 21). A signed cookie, not a session: it names one user
and one battle, lasts minutes, and gives nothing else (no pages of theirs, no other battle)."""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

from fastapi import Request, Response

from app.config import get_settings, secret_key

COOKIE = "crusade_table_pass"
LIFETIME = 15 * 60  # seconds: the time to answer a few decisions at the table


@dataclass(frozen=True)
class TablePass:
    user_id: int
    battle_id: int


def _signature(payload: str) -> str:
    key = secret_key(get_settings()).encode()
    return hmac.new(key, f"table-pass:{payload}".encode(), hashlib.sha256).hexdigest()


def grant(request: Request, response: Response, *, user_id: int, battle_id: int) -> None:
    payload = f"{user_id}.{battle_id}.{int(time.time()) + LIFETIME}"
    response.set_cookie(
        COOKIE,
        f"{payload}.{_signature(payload)}",
        max_age=LIFETIME,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def drop(response: Response) -> None:
    response.delete_cookie(COOKIE)


def read(request: Request, *, battle_id: int | None = None) -> TablePass | None:
    """The pass the phone holds, if it is genuine, unexpired (and for ``battle_id``)."""
    raw = request.cookies.get(COOKIE, "")[:200]
    payload, _, signature = raw.rpartition(".")
    parts = payload.split(".")
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() and len(p) < 12 for p in parts):
        return None
    if not hmac.compare_digest(signature, _signature(payload)):
        return None
    user_id, battle, expires = (int(p) for p in parts)
    if expires < time.time() or (battle_id is not None and battle != battle_id):
        return None
    return TablePass(user_id=user_id, battle_id=battle)
