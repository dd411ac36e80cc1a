"""Rate limits, counted in one store (memory, or Redis shared by the processes): log-ins and
token creation per address and name, requests per API token, and the PIN lockout (wrong
PINs per account, app/web/battles.py's confirmation at the table)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute, storage, strategies
from limits.errors import StorageError

from app.errors import DomainError
from app.faults import OUTAGES, RATE_LIMIT_STORE

PIN_FAILURES_PER_HOUR = 5
# A shared store that does not answer at once is treated as down: a request never waits
# long for a counter.
STORE_TIMEOUTS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
T = TypeVar("T")


@dataclass(frozen=True)
class Window:
    """One counted request: allowed or not, the limit, what is left, seconds until reset."""

    allowed: bool
    limit: int
    remaining: int
    reset: int


class RateLimits:
    """Moving-window limits (the `limits` package; memory by default, Redis via a URI).

    A shared store (Redis) that cannot be reached never fails a request: the limits are
    counted by this process alone meanwhile (as with ``memory://``), the outage is logged
    once, and the shared store is tried again every ``retry_seconds`` (issue 35)."""

    def __init__(
        self,
        uri: str = "memory://",
        *,
        retry_seconds: float = 5.0,
        token_requests_per_minute: int = 300,
    ) -> None:
        self._local = strategies.MovingWindowRateLimiter(storage.storage_from_string("memory://"))
        self._shared = (
            None
            if uri.startswith("memory://")
            else strategies.MovingWindowRateLimiter(
                storage.storage_from_string(uri, wrap_exceptions=True, **STORE_TIMEOUTS)
            )
        )
        self.retry_seconds = retry_seconds
        self._retry_at = 0.0
        self.login = RateLimitItemPerMinute(10)
        self.token = RateLimitItemPerMinute(10)
        self.api_token = RateLimitItemPerMinute(token_requests_per_minute)
        # Wrong PINs per account, whatever the address or battle: a 4-digit PIN would fall
        # in hours to 10 tries a minute; at 5 an hour it takes months, and the password
        # still works meanwhile.
        self.pin_failures = RateLimitItemPerHour(PIN_FAILURES_PER_HOUR)

    def _limiter(self, call: Callable[[strategies.MovingWindowRateLimiter], T]) -> T:
        """``call`` on the shared store, or on this process's own counters while the shared
        one is unreachable (not tried again for ``retry_seconds``: a request never waits
        for a store that is down)."""
        shared = self._shared
        if shared is not None and time.monotonic() >= self._retry_at:
            try:
                answer = call(shared)
            except StorageError as error:
                self._retry_at = time.monotonic() + self.retry_seconds
                OUTAGES.down(RATE_LIMIT_STORE, str(error.storage_error))
            else:
                OUTAGES.up(RATE_LIMIT_STORE)
                return answer
        return call(self._local)

    @property
    def shared(self) -> bool:
        """Whether a shared store (Redis) is configured."""
        return self._shared is not None

    def token_request(self, key: str) -> Window:
        """Count one request of the API token ``key``: whether it is allowed, and the window
        it leaves (for the RateLimit-* headers, app/api/plumbing/token_limits.py)."""
        item = self.api_token
        allowed = self._limiter(lambda limiter: limiter.hit(item, "api-token", key))
        stats = self._limiter(lambda limiter: limiter.get_window_stats(item, "api-token", key))
        reset = max(0, math.ceil(stats.reset_time - time.time()))
        return Window(allowed, item.amount, stats.remaining, reset)

    def token_window(self, key: str) -> Window:
        """The API token ``key``'s window without counting a request: whether one more
        would be allowed now (a long poll that may wait for free, issue 46)."""
        item = self.api_token
        stats = self._limiter(lambda limiter: limiter.get_window_stats(item, "api-token", key))
        reset = max(0, math.ceil(stats.reset_time - time.time()))
        return Window(stats.remaining > 0, item.amount, stats.remaining, reset)

    def shared_store_answers(self) -> bool | None:
        """Whether the shared store answers a ping now (None: none is configured)."""
        if self._shared is None:
            return None
        answers = bool(self._shared.storage.check())
        if answers:
            self._retry_at = 0.0  # use it again from the next request on
        return answers

    def refuse_if_pin_locked(self, user_id: int, who: str) -> None:
        """A 429 while the account has used up its wrong PINs for the hour."""
        item = self.pin_failures
        if self._limiter(lambda limiter: limiter.test(item, "pin-failures", str(user_id))):
            return
        reset = self._limiter(
            lambda limiter: limiter.get_window_stats(item, "pin-failures", str(user_id))
        )
        wait = max(1, math.ceil((reset.reset_time - time.time()) / 60))
        raise DomainError(
            "pin_locked",
            f"{who}'s PIN is locked after {PIN_FAILURES_PER_HOUR} wrong tries; confirm with "
            f"the password, or try the PIN again in {wait} min.",
            status=429,
            field="pin",
            retry_after=max(1, math.ceil(reset.reset_time - time.time())),
        )

    def count_pin_failure(self, user_id: int) -> bool:
        """Count a wrong PIN; True when this one used up the hour's tries (the lock starts)."""
        item = self.pin_failures
        self._limiter(lambda limiter: limiter.hit(item, "pin-failures", str(user_id)))
        return not self._limiter(lambda limiter: limiter.test(item, "pin-failures", str(user_id)))

    def hit(self, item: RateLimitItem, *keys: str) -> None:
        if self._limiter(lambda limiter: limiter.hit(item, *keys)):
            return
        reset = self._limiter(lambda limiter: limiter.get_window_stats(item, *keys)).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        raise DomainError(
            "rate_limited",
            f"Too many attempts; try again in {wait} s.",
            status=429,
            retry_after=wait,
        )
