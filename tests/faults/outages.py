"""Taking a database away and bringing it back, as an operator's outage would.

PostgreSQL: the app's engine reaches the server through a TCP proxy in this process; while
the proxy is stopped, new connections are refused and those open are cut (what a stopped
server looks like to psycopg). SQLite: the database file is moved aside and a folder takes
its place, so opening it fails ("unable to open database file"); the file comes back whole."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from sqlalchemy import Engine

from app.db.engine import make_engine


class Proxy:
    """Forwards 127.0.0.1:<port> to ``target``; ``stop()`` refuses and cuts, ``start()``
    listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.start()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            cut, self._open = self._open, set()
        for sock in cut:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open |= {client, server}
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class Database:
    """The engine an app under test uses, and a switch to take its database away."""

    def __init__(self, engine: Engine) -> None:
        self.proxy: Proxy | None = None
        if engine.dialect.name == "postgresql":
            url = engine.url
            self.proxy = Proxy((url.host or "127.0.0.1", url.port or 5432))
            via = url.set(host="127.0.0.1", port=self.proxy.port)
            self.engine = make_engine(via.render_as_string(hide_password=False))
        else:
            self.engine = engine
            assert engine.url.database
            self.path = Path(engine.url.database)

    def take_away(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
            return
        self.engine.dispose()  # the last connection closed: the WAL is checkpointed
        self.path.rename(self.path.with_suffix(".away"))
        self.path.mkdir()

    def bring_back(self) -> None:
        if self.proxy is not None:
            self.proxy.start()
            return
        shutil.rmtree(self.path)
        self.path.with_suffix(".away").rename(self.path)

    @contextmanager
    def away(self) -> Iterator[None]:
        self.take_away()
        try:
            yield
        finally:
            self.bring_back()

    def close(self) -> None:
        if self.proxy is not None:
            self.engine.dispose()
            self.proxy.stop()
