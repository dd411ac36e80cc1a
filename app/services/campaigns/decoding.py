"""Image work bounded by the operating system, and shared fairly between users (issue 45).

A decoder runs in C: a check made between its reads of the file cannot stop it, and a
file can ask it for thousands of passes hidden where a header walk may miss them. So every
check and every decode of an upload runs in a worker process of its own (``run``), forked
from a small server process that has the image libraries loaded (multiprocessing's
forkserver: no copy of the app's threads or connections), with limits the kernel enforces:

- processor time, ``PHOTO_DECODE_CPU_SECONDS`` (RLIMIT_CPU, and a profiling timer for
  fractions of a second): the worker is ended by a signal, in the middle of C code;
- address space, ``PHOTO_DECODE_MEMORY_MB`` over what the worker holds when it starts
  (RLIMIT_AS): an allocation past it fails;
- wall-clock time, ``PHOTO_DECODE_SECONDS``: the worker is killed at the deadline.

A worker reads one file and exits, so its memory goes back to the system whatever it did,
and the next file starts in a fresh one.

At most ``PHOTO_DECODES`` files are decoded at once in a process (``turns``), and the turns
go round the users who wait: a freed turn goes to the waiting user served least recently,
so one user's files cannot keep another's waiting (a post of several files takes one turn
per file). A user has one upload at the decoder at a time; another meanwhile, or one that
waits longer than ``PHOTO_QUEUE_SECONDS``, is answered 503 ``photo_busy`` with Retry-After."""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import math
import multiprocessing
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import popen_forkserver, spawn
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerProcess
from pathlib import Path
from typing import Any, TypeVar

from app.config import get_settings
from app.errors import DomainError
from app.services.campaigns.image_headers import refused, too_complex

T = TypeVar("T")
BUSY_SECONDS = 2
# The worker's parent: forked from a process that imported nothing but the image code.
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload([__name__, "app.services.campaigns.images"])
_LAUNCHING = threading.Lock()


def _without_main(name: str) -> dict[str, Any]:
    """What a new process is told of this one, but the main script: multiprocessing has
    each worker run the parent's main script again (``crusade``: the whole app, seconds of
    imports per photo); a worker needs only the modules the fork server has loaded."""
    data: dict[str, Any] = _PREPARATION(name)
    data.pop("init_main_from_path", None)
    data.pop("init_main_from_name", None)
    return data


_PREPARATION = spawn.get_preparation_data


class _Launch(popen_forkserver.Popen):
    def _launch(self, process_obj: Any) -> None:
        with _LAUNCHING:  # one launch at a time reads the preparation through the wrapper
            spawn.get_preparation_data = _without_main
            try:
                super()._launch(process_obj)  # type: ignore[misc]
            finally:
                spawn.get_preparation_data = _PREPARATION


class _Worker(ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _Launch:
        return _Launch(process_obj)


_M_ARENA_MAX = -8
_CPU_SIGNALS = {signal.SIGXCPU, signal.SIGPROF, signal.SIGKILL}
_LIBC = ctypes.util.find_library("c")  # once, here: it runs ldconfig
_malloc_trim = getattr(ctypes.CDLL(_LIBC), "malloc_trim", None) if _LIBC else None
_mallopt = getattr(ctypes.CDLL(_LIBC), "mallopt", None) if _LIBC else None


@dataclass(frozen=True)
class Limits:
    seconds: float  # wall clock, from the worker's start
    cpu_seconds: float
    memory_mb: int


def limits() -> Limits:
    """The limits the settings name."""
    settings = get_settings()
    return Limits(
        settings.photo_decode_seconds,
        settings.photo_decode_cpu_seconds,
        settings.photo_decode_memory_mb,
    )


def run(job: Callable[..., T], *args: Any, bounds: Limits | None = None) -> T:
    """``job(*args)`` in a fresh worker process within ``bounds`` (the settings' by
    default): its answer, the DomainError it raised, or a refusal saying which limit ended
    it. ``job`` and its arguments and answer cross a pipe (pickled)."""
    bounds = bounds or limits()
    receiving, sending = _CONTEXT.Pipe(duplex=False)
    worker = _Worker(target=_work, args=(sending, bounds, job, args), daemon=True)
    started = time.monotonic()
    worker.start()
    sending.close()
    try:
        if not receiving.poll(max(0.0, started + bounds.seconds - time.monotonic())):
            raise too_complex(
                f"The image took more than {bounds.seconds:g} s to read; it was given up."
            )
        try:
            done, answer = receiving.recv()
        except (EOFError, OSError):  # ended by a limit, or crashed
            worker.join(5)
            raise _ended(worker.exitcode, bounds) from None
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
        receiving.close()
    if done:
        return answer  # type: ignore[no-any-return]
    code, message, status = answer
    raise refused(code, message, status)


def _ended(exitcode: int | None, bounds: Limits) -> DomainError:
    if exitcode is not None and -exitcode in _CPU_SIGNALS:
        return too_complex(
            f"The image needed more than {bounds.cpu_seconds:g} s of processor time to "
            "read; it was given up."
        )
    return refused("photo_unreadable", "The file is not an image that can be read.")


def _work(sending: Connection, bounds: Limits, job: Callable[..., Any], args: Any) -> None:
    """In the worker: the limits first, then the job; its answer or refusal sent back."""
    _bound(bounds)
    try:
        answer: tuple[bool, Any] = (True, job(*args))
    except DomainError as error:
        answer = (False, (error.code, error.message, error.status))
    except MemoryError:
        answer = (
            False,
            (
                "photo_too_complex",
                f"Reading the image needs more than {bounds.memory_mb} MB; it was given up.",
                422,
            ),
        )
    sending.send(answer)
    sending.close()


def _bound(bounds: Limits) -> None:
    """The kernel's limits on this process: SIGXCPU past whole seconds of processor time
    (SIGKILL a second later), SIGPROF past the exact figure (neither is handled, so either
    ends the process), and no address space beyond ``memory_mb`` more than now."""
    whole = max(1, math.ceil(bounds.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (whole, whole + 1))
    signal.setitimer(signal.ITIMER_PROF, bounds.cpu_seconds)
    if _mallopt is not None:  # a decoder's threads share one heap: no 64 MB arena each
        _mallopt(_M_ARENA_MAX, 1)
    space = _address_space() + bounds.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (space, space))


def _address_space() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


# --- turns, shared round the users ---------------------------------------------------------


def busy(message: str) -> DomainError:
    return DomainError(
        "photo_busy",
        f"{message} Nothing was kept; try again in {BUSY_SECONDS} seconds.",
        status=503,
        field="file",
        retry_after=BUSY_SECONDS,
    )


@dataclass
class _Waiter:
    who: str
    order: int
    granted: bool = False


class Turns:
    """At most ``size`` decodes at once in this process; a freed turn goes to the waiting
    user served least recently (then the one waiting longest); one upload per user at a
    time. Thread-safe: requests wait here in worker threads, never on the event loop."""

    def __init__(self, size: int, wait_seconds: float) -> None:
        self.size = size
        self.wait_seconds = wait_seconds
        self._busy = 0
        self._waiting: list[_Waiter] = []
        self._users: set[str] = set()  # users with an upload at the decoder
        self._served: dict[str, int] = {}  # when each user last had a turn
        self._clock = itertools.count()
        self._changed = threading.Condition()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextmanager
    def upload(self, who: str) -> Iterator[None]:
        """One upload of ``who`` at the decoder (all its files); a second meanwhile is
        refused at once."""
        with self._changed:
            if who in self._users:
                raise busy("Your previous upload is still being read.")
            self._users.add(who)
        try:
            yield
        finally:
            with self._changed:
                self._users.discard(who)

    @contextmanager
    def turn(self, who: str) -> Iterator[None]:
        """A turn to decode one file, waited for at most ``wait_seconds``."""
        with self._changed:
            if self._busy < self.size and not self._waiting:
                self._busy += 1
            else:
                self._wait(_Waiter(who, next(self._clock)))
        try:
            yield
        finally:
            with self._changed:
                self._served[who] = next(self._clock)
                self._busy -= 1
                self._pass_on()

    def _wait(self, waiter: _Waiter) -> None:
        self._waiting.append(waiter)
        deadline = time.monotonic() + self.wait_seconds
        while not waiter.granted:
            left = deadline - time.monotonic()
            if left <= 0:
                self._waiting.remove(waiter)
                raise busy(
                    f"The server is reading as many photos as it reads at once ({self.size})."
                )
            self._changed.wait(left)

    def _pass_on(self) -> None:
        while self._busy < self.size and self._waiting:
            chosen = min(self._waiting, key=lambda w: (self._served.get(w.who, -1), w.order))
            self._waiting.remove(chosen)
            chosen.granted = True
            self._busy += 1
        self._changed.notify_all()


_turns: Turns | None = None
_turns_lock = threading.Lock()


def turns() -> Turns:
    """This process's turns, sized by PHOTO_DECODES, waited for up to PHOTO_QUEUE_SECONDS."""
    global _turns
    with _turns_lock:
        if _turns is None:
            settings = get_settings()
            _turns = Turns(settings.photo_decodes, settings.photo_queue_seconds)
        return _turns


def give_memory_back() -> None:
    """glibc keeps freed memory for later (the dynamic mmap threshold puts a 15 MB upload
    on a thread's heap after the first): what a request copied for its workers would stay
    with the process. Hand it back, once a post is done: the walk over the heaps holds
    their locks (0.35 s measured on a fragmented 1 GB heap), so not after each job."""
    if _malloc_trim is not None:
        _malloc_trim(0)
