"""A warm starter for `crusade serve`: one process per test process that has imported the
app and built its routes (with the OpenAPI schema the access check reads) once, and forks
a server from that state whenever a test asks for one (`python -m tests.browser.starter`,
started and spoken to by `tests/browser/live.py`).

Each server is still `crusade serve` in a process of its own: the same command, run by the
same code (`app.cli.app`, the console script's entry point) with the server's environment,
working folder and log, and killed or stopped by its own id. What it skips is a cold
Python's start: the imports and the routes, about two thirds of a start's processor time
(3-7 s on the loaded 2-core test machine, paid by every test that starts a server). Nothing
the app builds at import depends on the environment (the settings are read on first use);
the caches that hold what the environment says are emptied in the child.

The protocol: one JSON line in (argv, env, cwd, log), one line out (the child's pid). The
starter ignores SIGCHLD, so the kernel reaps its children: a test watches a server's end
through a pidfd (`Started` in live.py), not its exit status."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
from typing import Any


def _warm() -> None:
    """Everything a server builds before its first request that does not depend on the
    settings: the modules and the shared routes (create_app's first call in a process)."""
    import app.cli  # noqa: F401  (the command's modules)
    from app.main import _shared_routes
    from app.rules.data import rulebook
    from app.web.pages import compile_templates

    rulebook()
    _shared_routes()
    compile_templates()  # served_app compiles them too: each forked server finds them made
    gc.collect()
    gc.freeze()  # the children share these pages until they write to them


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the server the request describes, then exit."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server waits for its own children
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        from app.config import get_settings
        from app.db.session import get_engine

        get_settings.cache_clear()
        get_engine.cache_clear()
        from app.cli import app

        try:
            app(args=request["argv"], prog_name="crusade")
            code = 0
        except SystemExit as ended:
            code = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    _warm()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    for line in sys.stdin:
        request = json.loads(line)
        # A fork copies only the calling thread: the starter must have no other.
        assert threading.active_count() == 1, threading.enumerate()
        pid = os.fork()
        if pid == 0:
            _child(request)
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
