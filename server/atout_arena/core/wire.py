"""One Redis connection shared by every caller on an event loop, pipelined by itself.

Each :meth:`Wire.call` queues a command and returns a future of its reply; the commands queued
during one turn of the event loop leave in one write, and Redis answers them in order on the
connection, so one round trip carries the commands of every match (or bot stream) that moved
meanwhile. A command sent while nothing is in flight on the connection leaves at once (the
rest of its turn follows at the turn's end): a lone request does not wait for the turn to end,
and a busy connection still writes about once a turn. With hundreds of matches in flight that
is a few writes per millisecond instead of one round trip per decision (redis-py's asyncio
client costs tens of microseconds per command: its connection pool, a lock and a task per
call). Replies are parsed by ``hiredis``, which
redis-py already depends on for speed.

The connection is an :class:`asyncio.Protocol`: a reply is handed over from ``data_received``
itself, not through a reader task (a task costs a turn of the loop per read, and a decision's
round trip crosses two of these connections). :meth:`Wire.call_then` goes one step further for
the hottest replies (a worker's mailbox): its callback runs inside ``data_received``.

A connection that breaks (Redis restarted, a timeout) fails every command in flight with
``redis.ConnectionError`` — the caller's transient error, as with redis-py — and the next call
connects again. Used by the workers (every decision) and by the game server (the bots' answers
and inboxes).

:class:`RedisOutage` (one per process: :data:`redis_outage`) is how a part says that Redis is
away: one warning when the first call fails, one line when a call succeeds again, nothing for
the retries in between, however many loops of the process retry.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import hiredis
import redis
from redis.connection import parse_url

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0
Then = Callable[[Any, BaseException | None], None]  # (reply, None) or (None, the error)


def pack(args: tuple[Any, ...]) -> bytes:
    """One command in RESP (what ``redis-cli`` sends), packed by ``hiredis`` (C, 3x the
    hand-written packing it replaced); a str, int, float or bytes argument, else TypeError."""
    packed: bytes = hiredis.pack_command(args)
    return packed


def resolve(future: asyncio.Future[Any], reply: Any, exc: BaseException | None) -> None:
    """Give ``future`` the reply, or raise ``exc`` from it (nothing if it is done already)."""
    if future.done():
        return
    if exc is None:
        future.set_result(reply)
    else:
        future.set_exception(exc)


def _deliver(waiter: asyncio.Future[Any] | Then, reply: Any, exc: BaseException | None) -> None:
    """Hand a reply (or an error) to what waits for it: a future, or a call_then callback."""
    if isinstance(waiter, asyncio.Future):
        resolve(waiter, reply, exc)
        return
    try:
        waiter(reply, exc)
    except Exception:
        log.exception("a Redis reply's callback failed")


def _hello_reply(reply: Any, exc: BaseException | None) -> None:
    if isinstance(exc, redis.ResponseError):
        log.error("Redis refused AUTH or SELECT: %s", exc)


# What says "Redis is not there": a refused or broken connection, a timeout (Redis hung), Redis
# still loading its snapshot (BusyLoadingError is a ConnectionError), and the same errors
# wrapped by Celery's transport (kombu's OperationalError is raised from redis's error).
OUTAGE_ERRORS: tuple[type[BaseException], ...] = (redis.ConnectionError, redis.TimeoutError, ConnectionError,
                                                  TimeoutError)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised ``from``) says Redis cannot be reached. Only
    explicit causes count: an error merely raised while another was handled (a database error
    in an ``except`` of a Redis one) is not a Redis outage."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        if isinstance(error, OUTAGE_ERRORS):
            return True
        seen.add(id(error))
        error = error.__cause__
    return False


class RedisOutage:
    """Says a Redis outage once per process: a warning when a call first fails
    (:meth:`failed`), one line when a call succeeds again (:meth:`ok`), nothing in between.

    A part has several loops that talk to Redis (a worker: its keeper, its mailbox, its event
    sink, Celery's consumer); each retrying on its own would log every retry, with tracebacks.
    They all report here instead, so an outage is
    two lines per part, whichever loop notices first. Thread-safe; :meth:`ok` is one attribute
    read when Redis is up (it is called on hot paths)."""

    def __init__(self, logger: logging.Logger | None = None,
                 clock: Callable[[], float] = time.monotonic, service: str = "Redis") -> None:
        self.log = logger or log
        self.service = service  # what is away: "Redis" (database_outage: "the database")
        self.clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self.outages = 0  # how many began in this process

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def failed(self, where: str, exc: BaseException | str) -> bool:
        """A call of ``where`` (what was trying, for people) failed with ``exc``; True when
        this began an outage (and said so)."""
        with self._lock:
            if self._down_since is not None:
                return False
            self._down_since = self.clock()
            self.outages += 1
        what = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        self.log.warning("%s unreachable (%s, %s); retrying quietly until it is back",
                         self.service, where, what)
        return True

    def ok(self) -> bool:
        """A call succeeded; True when this ended an outage (and said so). The line is a warning
        too, so that a log filtered at warning level shows the end of what it showed begin."""
        if self._down_since is None:  # no lock: the common case, on hot paths
            return False
        with self._lock:
            since, self._down_since = self._down_since, None
        if since is None:
            return False
        self.log.warning("%s is back after %.1f s", self.service, self.clock() - since)
        return True


redis_outage = RedisOutage()  # the process's: every loop of a part reports to this one
# ... and the same for the database, in the parts that keep working without it (workers)
database_outage = RedisOutage(service="the database")


class _Connection(asyncio.Protocol):
    """Hands what Redis sends to its :class:`Wire` (while it is the wire's current one)."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    def data_received(self, data: bytes) -> None:
        self.wire._received(self, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.wire._lost(self, exc)


class Wire:
    """A pipelined connection to the Redis at ``url`` (``redis://`` or ``unix://``), for one
    event loop. ``timeout_s`` bounds a reply (a blocking command's own timeout comes on top:
    pass a ``timeout_s`` that includes it)."""

    def __init__(self, url: str | dict[str, Any], timeout_s: float = 10.0) -> None:
        # a URL, or the connection options of a redis-py pool (the same names: path or host
        # and port, db, username, password)
        self.options = parse_url(url) if isinstance(url, str) else dict(url)
        if "SSL" in getattr(self.options.get("connection_class"), "__name__", ""):
            raise ValueError("Wire speaks plain TCP or a unix socket to Redis, not TLS (rediss://)")
        self.timeout_s = timeout_s
        self._transport: asyncio.Transport | None = None
        self._connection: _Connection | None = None
        self._connecting: asyncio.Future[None] | None = None
        self._outbox: list[bytes] = []
        # what waits for each reply, in order: a future, or a call_then callback
        self._waiting: collections.deque[asyncio.Future[Any] | Then] = collections.deque()
        self._flush_scheduled = False
        self._parser = hiredis.Reader()
        self._closed = False
        self._shas: dict[str, str] = {}
        self._last_read = time.monotonic()
        self._watchdog: asyncio.Task[None] | None = None

    # -- calls ------------------------------------------------------------------------------------

    def call(self, *args: Any) -> asyncio.Future[Any]:
        """Queue ``args`` as one command; the future gets its reply (a ``ResponseError`` reply
        is raised by the future)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue(args, future)
        return future

    def call_then(self, then: Then, *args: Any) -> None:
        """Queue ``args``; ``then(reply, None)`` (or ``then(None, error)``) is called as soon
        as the reply is read, from the connection's ``data_received``: it must be quick and
        must not raise (an exception is logged and lost)."""
        self._queue(args, then)

    def _queue(self, args: tuple[Any, ...], waiter: asyncio.Future[Any] | Then) -> None:
        data = pack(args)  # first: an argument that cannot be packed raises with nothing queued
        idle = not self._waiting
        if idle:  # the watchdog counts a reply's silence from here
            self._last_read = time.monotonic()
        self._waiting.append(waiter)
        if self._flush_scheduled:
            self._outbox.append(data)
            return
        self._flush_scheduled = True
        asyncio.get_running_loop().call_soon(self._flush)
        if idle and self._transport is not None:
            self._transport.write(data)  # nothing in flight: it leaves at once
        else:
            self._outbox.append(data)

    async def execute(self, *args: Any) -> Any:
        return await self.call(*args)

    async def eval(self, script: str, *args: Any) -> Any:
        """``EVAL script ...`` sent as ``EVALSHA`` (Redis keeps the script; only its hash
        travels), loading it again when Redis does not know it (it restarted): :meth:`eval_soon`,
        awaited."""
        return await self.eval_soon(script, *args)

    def eval_soon(self, script: str, *args: Any) -> asyncio.Future[Any]:
        """:meth:`eval` as a future, queued at once: no coroutine and no task per call (a
        decision's push, on the hot path)."""
        out: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.eval_then(lambda reply, exc: resolve(out, reply, exc), script, *args)
        return out

    def eval_then(self, then: Then, script: str, *args: Any) -> None:
        """:meth:`eval` with a :meth:`call_then` callback. ``NOSCRIPT`` (Redis restarted and
        forgot the script) is answered by sending ``EVAL`` at once."""
        sha = self._sha(script)
        first = True

        def relay(reply: Any, exc: BaseException | None) -> None:
            nonlocal first
            if first and isinstance(exc, redis.ResponseError) and str(exc).startswith("NOSCRIPT"):
                first = False
                self.call_then(relay, "EVAL", script, *args)
            else:
                then(reply, exc)

        self.call_then(relay, "EVALSHA", sha, *args)

    def _sha(self, script: str) -> str:
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = hashlib.sha1(script.encode()).hexdigest()
        return sha

    @property
    def idle(self) -> bool:
        """Nothing in flight on the connection and nothing queued."""
        return not self._waiting

    def flush(self) -> None:
        """Write what is queued now, not at the end of the turn (its caller batched it already)."""
        self._flush()

    def _flush(self) -> None:
        self._flush_scheduled = False
        if not self._outbox:
            return
        if self._closed:
            self._fail(redis.ConnectionError("closed"))
            return
        if self._transport is None:
            if self._connecting is None:
                self._connecting = asyncio.ensure_future(self._connect())
            return  # sent once connected
        data, self._outbox = b"".join(self._outbox), []
        self._transport.write(data)

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                if self.options.get("path"):
                    transport, connection = await loop.create_unix_connection(
                        lambda: _Connection(self), self.options["path"])
                else:
                    transport, connection = await loop.create_connection(
                        lambda: _Connection(self), self.options.get("host", "localhost"),
                        self.options.get("port", 6379))
            hello: list[bytes] = []
            if self.options.get("password"):
                user, password = self.options.get("username"), self.options["password"]
                hello.append(pack(("AUTH", user, password) if user else ("AUTH", password)))
            if self.options.get("db"):
                hello.append(pack(("SELECT", int(self.options["db"]))))
            if self._closed:  # closed while connecting
                transport.close()
                self._fail(redis.ConnectionError("closed"))
                return
            self._parser = hiredis.Reader()
            self._transport, self._connection = transport, connection
            self._last_read = time.monotonic()
            for _ in hello:  # their replies come first (an error is logged)
                self._waiting.appendleft(_hello_reply)
            transport.write(b"".join(hello) + b"".join(self._outbox))
            self._outbox = []
            if self._watchdog is None:
                self._watchdog = asyncio.ensure_future(self._watch())
        except (OSError, TimeoutError) as exc:
            self._fail(redis.ConnectionError(f"cannot reach Redis: {exc}"))
        finally:
            self._connecting = None

    def _received(self, connection: _Connection, data: bytes) -> None:
        if connection is not self._connection:
            return  # an old connection already given up
        parser, waiting = self._parser, self._waiting
        self._last_read = time.monotonic()
        try:
            parser.feed(data)
            while (reply := parser.gets()) is not False:
                if isinstance(reply, hiredis.ReplyError):
                    _deliver(waiting.popleft(), None, redis.ResponseError(str(reply)))
                else:
                    _deliver(waiting.popleft(), reply, None)
        except (hiredis.ProtocolError, IndexError) as exc:  # garbage, or a reply nobody asked for
            self._fail(redis.ConnectionError(f"Redis protocol error: {exc}"))

    def _lost(self, connection: _Connection, exc: Exception | None) -> None:
        if connection is self._connection:
            self._fail(redis.ConnectionError(f"Redis closed the connection{f' ({exc})' if exc else ''}"))

    async def _watch(self) -> None:
        """A Redis that stops answering (no reply for ``timeout_s`` while commands wait) is
        treated as a broken connection: the commands in flight fail, the next call reconnects."""
        while not self._closed:
            await asyncio.sleep(1.0)
            silent_s = time.monotonic() - self._last_read
            if self._waiting and self._transport is not None and silent_s > self.timeout_s:
                self._fail(redis.TimeoutError(f"no reply from Redis within {self.timeout_s:.0f} s"))

    def _fail(self, exc: BaseException) -> None:
        transport = self._transport
        self._transport = self._connection = None
        if transport is not None:
            transport.close()
        self._outbox = []
        waiting, self._waiting = self._waiting, collections.deque()  # a callback may queue again
        while waiting:
            _deliver(waiting.popleft(), None, exc)

    async def close(self) -> None:
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watchdog
        self._fail(redis.ConnectionError("closed"))
