"""A phone's own link to the live server that a test can cut (issue 49): a TCP relay on a
free loopback port, in a thread of its own. Cut, it drops every open connection and
refuses new ones (reset), so nothing gets through — not a page's request, not a service
worker's — as at a table without signal; Playwright's offline switch lets a service
worker's requests through. A phone opened at ``link.url`` goes through it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from tests.browser.live import free_port


class Link:
    def __init__(self, server_url: str) -> None:
        target = urlsplit(server_url)
        self._target = (target.hostname or "127.0.0.1", target.port or 80)
        self._up = True
        self._open: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        port = free_port()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._relay, "127.0.0.1", port), self._loop
        ).result(timeout=10)
        self.url = f"http://127.0.0.1:{port}"

    async def _relay(self, phone: asyncio.StreamReader, to_phone: asyncio.StreamWriter) -> None:
        if not self._up:
            to_phone.transport.abort()
            return
        try:
            server, to_server = await asyncio.open_connection(*self._target)
        except OSError:
            to_phone.transport.abort()
            return
        pair = (to_phone, to_server)
        self._open.add(pair)
        await asyncio.gather(
            _pipe(phone, to_server), _pipe(server, to_phone), return_exceptions=True
        )
        self._open.discard(pair)
        for writer in pair:
            writer.transport.abort()

    def _drop_all(self) -> None:
        for pair in list(self._open):
            for writer in pair:
                writer.transport.abort()
        self._open.clear()

    def cut(self) -> None:
        """No signal: open connections dropped, new ones refused."""
        self._up = False
        asyncio.run_coroutine_threadsafe(_call(self._drop_all), self._loop).result(timeout=10)

    def restore(self) -> None:
        self._up = True

    def close(self) -> None:
        self.cut()
        self._server.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


async def _call(function: object) -> None:
    assert callable(function)
    function()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


@contextmanager
def links(server_url: str, count: int) -> Iterator[list[Link]]:
    """``count`` links to the server, closed at the end."""
    made = [Link(server_url) for _ in range(count)]
    try:
        yield made
    finally:
        for link in made:
            link.close()
