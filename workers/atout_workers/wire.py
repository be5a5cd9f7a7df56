"""One Redis connection shared by every match of a worker's event loop, pipelined by itself.

Each :meth:`Wire.call` queues a command and returns a future of its reply; the commands queued
during one turn of the event loop leave in one write, and Redis answers them in order on the
connection, so one round trip carries the decisions of every match that moved meanwhile. With
hundreds of matches in flight that is a few writes per millisecond instead of one round trip
per decision (redis-py's asyncio client costs tens of microseconds per command: its
connection pool, a lock and a task per call). Replies are parsed by ``hiredis``, which redis-py
already depends on for speed.

A connection that breaks (Redis restarted, a timeout) fails every command in flight with
``redis.ConnectionError`` — the caller's transient error, as with redis-py — and the next call
connects again.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import time
from typing import Any

import hiredis
import redis
from redis.connection import parse_url

CONNECT_TIMEOUT_S = 5.0


def pack(args: tuple[Any, ...]) -> bytes:
    """One command in RESP (what ``redis-cli`` sends), packed by ``hiredis`` (C, 3x the
    hand-written packing it replaced); a str, int, float or bytes argument, else TypeError."""
    return hiredis.pack_command(args)


class Wire:
    """A pipelined connection to the Redis at ``url`` (``redis://`` or ``unix://``), for one
    event loop. ``timeout_s`` bounds a reply (a blocking command's own timeout comes on top:
    pass it as ``extra_s``)."""

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.options = parse_url(url)
        self.timeout_s = timeout_s
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._connecting: asyncio.Future[None] | None = None
        self._outbox: list[bytes] = []
        self._waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._flush_scheduled = False
        self._read_task: asyncio.Task[None] | None = None
        self._parser = hiredis.Reader()
        self._closed = False
        self._shas: dict[str, str] = {}
        self._last_read = time.monotonic()
        self._watchdog: asyncio.Task[None] | None = None

    # -- calls ------------------------------------------------------------------------------------

    def call(self, *args: Any) -> asyncio.Future[Any]:
        """Queue ``args`` as one command; the future gets its reply (a ``ResponseError`` reply
        is raised by the future)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._outbox.append(pack(args))
        self._waiting.append(future)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return future

    async def execute(self, *args: Any) -> Any:
        return await self.call(*args)

    async def eval(self, script: str, *args: Any) -> Any:
        """``EVAL script ...`` sent as ``EVALSHA`` (Redis keeps the script; only its hash
        travels), loading it again when Redis does not know it (it restarted): :meth:`eval_soon`,
        awaited."""
        return await self.eval_soon(script, *args)

    def eval_soon(self, script: str, *args: Any) -> asyncio.Future[Any]:
        """:meth:`eval` as a future, queued at once: no coroutine and no task per call (a
        decision's push, on the hot path). ``NOSCRIPT`` is answered by sending ``EVAL`` at once."""
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = hashlib.sha1(script.encode()).hexdigest()
        out: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def relay(done: asyncio.Future[Any]) -> None:
            if done.cancelled():
                if not out.done():
                    out.cancel()
                return
            exc = done.exception()  # retrieved even when nobody waits any more (no asyncio warning)
            if out.done():
                return
            if exc is None:
                out.set_result(done.result())
            elif isinstance(exc, redis.ResponseError) and str(exc).startswith("NOSCRIPT") and done is first:
                self.call("EVAL", script, *args).add_done_callback(relay)
            else:
                out.set_exception(exc)

        first = self.call("EVALSHA", sha, *args)
        first.add_done_callback(relay)
        return out

    def _flush(self) -> None:
        self._flush_scheduled = False
        if not self._outbox:
            return
        if self._writer is None:
            if self._connecting is None:
                self._connecting = asyncio.ensure_future(self._connect())
            return  # sent once connected
        data, self._outbox = b"".join(self._outbox), []
        self._writer.write(data)

    async def _connect(self) -> None:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                if self.options.get("path"):
                    reader, writer = await asyncio.open_unix_connection(self.options["path"])
                else:
                    reader, writer = await asyncio.open_connection(
                        self.options.get("host", "localhost"), self.options.get("port", 6379))
            hello: list[bytes] = []
            if self.options.get("password"):
                user, password = self.options.get("username"), self.options["password"]
                hello.append(pack(("AUTH", user, password) if user else ("AUTH", password)))
            if self.options.get("db"):
                hello.append(pack(("SELECT", int(self.options["db"]))))
            self._parser = hiredis.Reader()
            self._reader, self._writer = reader, writer
            self._last_read = time.monotonic()
            for _ in hello:  # their replies come first: skip them
                self._waiting.appendleft(asyncio.get_running_loop().create_future())
            writer.write(b"".join(hello) + b"".join(self._outbox))
            self._outbox = []
            self._read_task = asyncio.ensure_future(self._read_loop(reader))
            if self._watchdog is None:
                self._watchdog = asyncio.ensure_future(self._watch())
        except (OSError, TimeoutError) as exc:
            self._fail(redis.ConnectionError(f"cannot reach Redis: {exc}"))
        finally:
            self._connecting = None

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        parser = self._parser
        waiting = self._waiting
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    raise redis.ConnectionError("Redis closed the connection")
                parser.feed(data)
                self._last_read = time.monotonic()
                while True:
                    reply = parser.gets()
                    if reply is False:
                        break
                    future = waiting.popleft()
                    if future.done():
                        continue
                    if isinstance(reply, hiredis.ReplyError):
                        future.set_exception(redis.ResponseError(str(reply)))
                    else:
                        future.set_result(reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the connection is gone: everything in flight fails
            if self._reader is reader:  # (not an old connection already given up)
                self._fail(exc if isinstance(exc, redis.RedisError) else redis.ConnectionError(str(exc)))

    async def _watch(self) -> None:
        """A Redis that stops answering (no reply for ``timeout_s`` while commands wait) is
        treated as a broken connection: the commands in flight fail, the next call reconnects."""
        while not self._closed:
            await asyncio.sleep(1.0)
            silent_s = time.monotonic() - self._last_read
            if self._waiting and self._writer is not None and silent_s > self.timeout_s:
                self._fail(redis.TimeoutError(f"no reply from Redis within {self.timeout_s:.0f} s"))

    def _fail(self, exc: BaseException) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        self._outbox = []
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_exception(exc)

    async def close(self) -> None:
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._read_task is not None:
            self._read_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._read_task
        self._fail(redis.ConnectionError("closed"))
