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
from typing import Any, cast

import hiredis
import redis

from atout_arena.core import redis_conn

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0  # a (re)connection, asking the sentinels included
SENTINEL_TIMEOUT_S = 1.0  # one sentinel's answer (the next one is asked after)
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
    """Hands what Redis sends to its :class:`Wire` (while it is the wire's current one); before
    that, the replies of its greeting (:meth:`greet`: AUTH, SELECT, ROLE, or a sentinel's
    answer), which the wire reads before it sends anything else."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self._greeting: asyncio.Future[list[Any]] | None = None
        self._replies: list[Any] = []
        self._expected = 0
        self._parser = hiredis.Reader()

    def greet(self, transport: asyncio.BaseTransport,
              commands: list[tuple[Any, ...]]) -> asyncio.Future[list[Any]]:
        """Send ``commands``; the future gets their replies (a ``hiredis.ReplyError`` for an
        error reply), or a ConnectionError if the connection closes first."""
        self._greeting = asyncio.get_running_loop().create_future()
        self._expected = len(commands)
        cast(asyncio.WriteTransport, transport).write(b"".join(pack(c) for c in commands))
        return self._greeting

    def data_received(self, data: bytes) -> None:
        greeting = self._greeting
        if greeting is None:
            self.wire._received(self, data)
            return
        self._parser.feed(data)
        while len(self._replies) < self._expected and (reply := self._parser.gets()) is not False:
            self._replies.append(reply)
        if len(self._replies) >= self._expected:
            self._greeting = None  # what comes next is the wire's (nothing is sent before it is)
            resolve(greeting, self._replies, None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._greeting is not None:
            resolve(self._greeting, None, redis.ConnectionError(f"Redis closed the connection ({exc})"))
        self.wire._lost(self, exc)


class Wire:
    """A pipelined connection to the Redis at ``url`` (any URL of :mod:`redis_conn`), for one
    event loop. ``timeout_s`` bounds a reply (a blocking command's own timeout comes on top:
    pass a ``timeout_s`` that includes it).

    TLS (``rediss://``) goes through asyncio's own TLS with the URL's ``ssl_*`` parameters.
    Through Sentinel, every (re)connection first asks the sentinels which node is the primary
    (``SENTINEL get-master-addr-by-name``), then checks with ``ROLE`` that the node says so
    itself: a primary demoted to replica is left (as redis-py's ``SentinelConnectionPool``
    does), and so is a connection that gets a ``READONLY`` reply."""

    def __init__(self, url: str | dict[str, Any], timeout_s: float = 10.0) -> None:
        # a URL, or :func:`redis_conn.wire_options` of one
        self.options = redis_conn.wire_options(url) if isinstance(url, str) else dict(url)
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

    async def _open(self, host: str, port: int, commands: list[tuple[Any, ...]],
                    path: str | None = None) -> tuple[asyncio.Transport, _Connection, list[Any]]:
        """A connection (TLS when the options say so) and the replies to ``commands`` on it."""
        loop = asyncio.get_running_loop()
        if path:
            transport, connection = await loop.create_unix_connection(lambda: _Connection(self), path)
        else:
            context = self.options.get("ssl")
            transport, connection = await loop.create_connection(
                lambda: _Connection(self), host, port, ssl=context, server_hostname=host if context else None)
        try:
            replies = await connection.greet(transport, commands) if commands else []
        except BaseException:
            transport.close()
            raise
        return transport, connection, replies

    def _auth(self, prefix: str = "") -> list[tuple[Any, ...]]:
        password = self.options.get(f"{prefix}password")
        if not password:
            return []
        user = self.options.get(f"{prefix}username")
        return [("AUTH", user, password) if user else ("AUTH", password)]

    async def _primary(self) -> tuple[str, int]:
        """The address the sentinels give for the primary (the first that answers; it is
        asked first next time)."""
        sentinels: list[tuple[str, int]] = self.options["sentinels"]
        name = self.options["master_name"]
        errors: list[str] = []
        auth = self._auth("sentinel_")
        for number, (host, port) in enumerate(list(sentinels)):
            try:
                async with asyncio.timeout(SENTINEL_TIMEOUT_S):
                    transport, _, replies = await self._open(
                        host, port, [*auth, ("SENTINEL", "get-master-addr-by-name", name)])
                transport.close()
            except (OSError, TimeoutError, redis.ConnectionError) as exc:
                errors.append(f"sentinel {host}:{port}: {exc or type(exc).__name__}")
                continue
            refused = [r for r in replies if isinstance(r, hiredis.ReplyError)]
            if refused:
                errors.append(f"sentinel {host}:{port}: {refused[0]}")
                continue
            address = replies[-1]
            if address:
                sentinels.insert(0, sentinels.pop(number))
                return address[0].decode(), int(address[1])
            errors.append(f"sentinel {host}:{port} knows no primary named {name!r}")
        text = "; ".join(errors)
        if auth and any(word in text for word in redis_conn.REFUSED):
            raise redis.AuthenticationError(f"a sentinel refused the password: {text}")
        raise redis.ConnectionError(f"no sentinel gave the primary {name!r} ({text})")

    async def _handshake(self) -> tuple[asyncio.Transport, _Connection]:
        """A connection to Redis (through Sentinel: to the primary), logged in and on its
        database, before anything else is sent on it."""
        options = self.options
        sentinel = bool(options.get("sentinels"))
        host, port = (await self._primary()) if sentinel else (options.get("host") or "localhost",
                                                               int(options.get("port", 6379)))
        commands = self._auth()
        if options.get("db"):
            commands.append(("SELECT", int(options["db"])))
        if sentinel:
            commands.append(("ROLE",))
        transport, connection, replies = await self._open(host, port, commands, options.get("path"))
        for command, reply in zip(commands, replies, strict=True):
            if command[0] == "ROLE":
                role = reply[0] if isinstance(reply, list) and reply else b"master"  # NOPERM: trusted
                if role != b"master":
                    transport.close()
                    raise redis.ConnectionError(
                        f"{host}:{port}, named primary by the sentinels, is a {role.decode()}: asking again")
            elif isinstance(reply, hiredis.ReplyError):
                transport.close()
                if command[0] == "AUTH":
                    raise redis.AuthenticationError(f"Redis refused the password ({reply})")
                raise redis.ResponseError(f"Redis refused {command[0]} ({reply})")
        return transport, connection

    async def _connect(self) -> None:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                transport, connection = await self._handshake()
            if self._closed:  # closed while connecting
                transport.close()
                self._fail(redis.ConnectionError("closed"))
                return
            self._parser = hiredis.Reader()
            self._transport, self._connection = transport, connection
            self._last_read = time.monotonic()
            transport.write(b"".join(self._outbox))
            self._outbox = []
            if self._watchdog is None:
                self._watchdog = asyncio.ensure_future(self._watch())
        except redis.RedisError as exc:  # refused (the password) or not the primary
            self._fail(exc)
        except (OSError, TimeoutError) as exc:
            self._fail(redis.ConnectionError(f"cannot reach Redis: {exc or type(exc).__name__}"))
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
                    if str(reply).startswith("READONLY"):  # a primary demoted under us: leave it
                        self._fail(redis.ConnectionError(f"the primary became a replica ({reply})"))
                        return
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
