#!/usr/bin/env python3
"""A small bot that follows one campaign's event feed and prints a line for every battle
whose result is applied (entered by an organizer, or confirmed by the opponent).

Standard library only. Run it with an API token (read-only is enough):

    CRUSADE_TOKEN=... python3 examples/feed_bot.py --url http://127.0.0.1:8000 --campaign 1

It long-polls ``GET /api/v1/campaigns/{id}/events?after=<cursor>&wait=30`` (the operation
``list_events`` of /openapi.json): the server answers as soon as something happens (or after
30 s with nothing), so the bot needs no timer and never misses an event. It keeps its cursor
in ``--state`` (if given) so that a restart carries on where it stopped. ``--once`` prints
what is there now and exits. A ``429``/``503`` is waited out for its ``Retry-After``; a
refusal (a revoked token: ``401``) stops the bot with the server's reason. See docs/bots.md.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

WANTED = "battle_recorded"
# Answers that say "not now": wait Retry-After seconds, then ask again (docs/bots.md).
BUSY = (429, 503, 507)


class Refused(Exception):
    """The server refused the request for good (a revoked token, a campaign not readable)."""


def get_json(url: str, token: str, timeout: float) -> Any:
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.load(answer)


def follow(
    base_url: str,
    campaign_id: int,
    token: str,
    *,
    cursor: str | None = None,
    wait: int = 30,
    once: bool = False,
    say: Callable[[str], None] = print,
    save: Callable[[str], None] = lambda cursor: None,
    sleep: Callable[[float], None] = time.sleep,
) -> str | None:
    """Read the feed from ``cursor`` on, saying each applied battle's summary; with
    ``once``, stop when the feed has nothing more. Returns the last cursor."""
    failures = 0
    while True:
        query = {"limit": "100", "wait": "0" if once else str(wait)}
        if cursor:
            query["after"] = cursor
        url = f"{base_url}/api/v1/campaigns/{campaign_id}/events?{urllib.parse.urlencode(query)}"
        try:
            page = get_json(url, token, timeout=wait + 15)
        except urllib.error.HTTPError as error:  # the server answered, with a refusal
            retry_after = error.headers.get("Retry-After")
            if error.code in BUSY and retry_after is not None:
                print(f"server busy ({error.code}); waiting {retry_after} s", file=sys.stderr)
                sleep(int(retry_after))
                continue
            raise Refused(f"{error.code}: {error.read().decode(errors='replace')}") from error
        except (urllib.error.URLError, TimeoutError) as error:
            if once:
                raise
            failures += 1
            sleep(min(2**failures, 60))  # the server is down or restarting: back off
            print(f"feed unreachable ({error}); retrying", file=sys.stderr)
            continue
        failures = 0
        for event in page["items"]:
            if event["kind"] == WANTED:
                say(event["summary"])
        cursor = page["next"]
        save(cursor)
        if once and not page["more"]:
            return cursor


def verify_signature(secret: str, body: bytes, header: str) -> bool:
    """For webhooks: is ``X-Crusade-Signature`` the HMAC-SHA256 of the raw body?"""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the tracker's address")
    parser.add_argument("--campaign", type=int, required=True, help="campaign id")
    parser.add_argument("--state", type=Path, help="file keeping the cursor between runs")
    parser.add_argument("--once", action="store_true", help="print what is there, then exit")
    args = parser.parse_args(argv)
    token = os.environ.get("CRUSADE_TOKEN", "")
    if not token:
        parser.error("set CRUSADE_TOKEN to an API token (Settings → API tokens)")
    cursor = args.state.read_text().strip() if args.state and args.state.exists() else None

    def save(value: str) -> None:
        if args.state:
            args.state.write_text(value)

    def say(line: str) -> None:
        print(line, flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        try:
            follow(
                args.url.rstrip("/"),
                args.campaign,
                token,
                cursor=cursor,
                once=args.once,
                say=say,
                save=save,
            )
        except Refused as refusal:
            print(f"the server refused: {refusal}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
