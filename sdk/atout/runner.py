"""Connect a bot to the arena and play every match it is seated in: :func:`atout.run`.

>>> import atout
>>> from atout.bots import RandomBot
>>> atout.run(RandomBot, "arena.example.org:50051", token="...")  # doctest: +SKIP

One ``BotGateway.Connect`` stream carries every match. The runner makes one Bot instance per
match (from the class or zero-argument factory it is given), calls its hooks in order for that
match, and plays different matches concurrently on a thread pool (an inline bot, such as the
random bot, answers on the stream's own event loop: ``grpc.aio``, no thread hand-off). It answers the arena's
keep-alives, and reconnects with exponential backoff when the stream breaks.

A hung game server (its process stopped, its loop stalled) keeps the connection open and says
nothing: the runner pings the arena itself after :data:`PING_AFTER_S` of silence (the game
server's loop answers a Pong), and gives the stream up after :data:`SILENCE_LIMIT_S` of silence,
whatever keep-alive the arena announced, with one line in the log; a Welcome that does not come
is bounded alike (``connect_timeout``). Both are well under the arena's reconnect grace (15 s),
so its decisions are asked again on the new stream, charged nothing. When the arena itself ends
the stream (Error ``shutting_down``: its game server stops; ``moved``: it hands the bot over to
a less loaded one) the runner reconnects at once, its backoff untouched.

What happens when a bot misbehaves:

- ``act()`` raises: the traceback is logged with the match and seat; nothing is sent, so the arena
  times the decision out and plays its fallback (a fault). The runner keeps playing.
- ``act()`` returns a string that is not in ``legal_actions``: a warning is logged and the string is
  sent anyway: the arena's engine decides (it may accept another spelling of a legal action), and
  a refusal comes back as a Rejection.
- A Rejection is logged as a warning with the arena's reason, then ``bot.on_rejection(observation,
  action, reason)`` is asked for another answer (default: none), at most 3 times per request.
- A request the arena sends again after a reconnect is answered from memory: the bot is never asked
  the same request twice.

Batching: the Hello lists the features ``"batch"`` and ``"bundle"``, so the arena may send
several decision requests in one ``DecisionBatch``, or several messages of any match kind
(starts, requests, rejections, ends) in one ``ArenaBundle``; each is dispatched as if it had
come alone, in order (to its match's bot, with its own deadline). Answers that are ready
together (queued while the stream was sending) go in one ``ActionBatch``; a lone answer goes as
a plain ``Action`` at once: nothing ever waits for a batch to fill.

TLS: ``tls=True`` checks the arena's certificate against the system's CAs, ``ca=FILE`` (or the
``ATOUT_CA_FILE`` environment variable; either implies TLS) against a private CA's PEM file. An
arena whose certificate is refused (another CA, another host name) or that does not speak TLS
stops the runner at once when it has not been welcomed yet (:class:`TLSError`, one line that
says what to pass): retrying cannot change a certificate. After a Welcome, the same refusal (a
certificate changed under a running bot) is a failed attempt, said in each reconnection line
and bounded by ``max_reconnects``, so that an organizer can fix it without the bots exiting.

It stops (raising) when the token is refused (:class:`AuthenticationError`), when another
connection of the same bot takes over (:class:`ConnectionReplacedError`), when the arena does not speak
this protocol (:class:`ProtocolError`), at a TLS refusal before any Welcome (:class:`TLSError`),
or after ``max_reconnects`` failed attempts in a row (:class:`ConnectionLostError`). ``stop()``,
a ``stop`` event, Ctrl-C or SIGTERM end it cleanly
(``run`` returns ``None``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import platform
import random
import re
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import Any

from . import _grpc_engine

_grpc_engine.choose()  # before gRPC's first import, which reads GRPC_EXPERIMENTS once
_grpc_engine.quiet_core_logs()  # and GRPC_VERBOSITY

import grpc  # noqa: E402
import grpc.aio  # noqa: E402

from . import _loop  # noqa: E402
from ._dispatch import MatchDispatcher  # noqa: E402
from .bot import Bot  # noqa: E402
from .v1 import atout_pb2 as pb  # noqa: E402
from .v1 import atout_pb2_grpc  # noqa: E402

log = logging.getLogger("atout")

PROTOCOL_VERSION = 1
MAX_VERSION_LENGTH = 64  # a Hello version label (the arena refuses longer ones)
DEFAULT_SERVER = "127.0.0.1:50051"
CA_ENV = "ATOUT_CA_FILE"  # the PEM file of a private CA that signed the arena's certificate
FEATURE_BATCH = "batch"  # Hello.features: DecisionBatch welcome, ActionBatch sent
FEATURE_BUNDLE = "bundle"  # Hello.features: ArenaBundle welcome
MAX_ACTION_BATCH = 1024  # Actions in one ActionBatch (the arena refuses more)
STOP_POLL_S = 0.05  # how often a stop request (a thread's event) is looked at
LOST_STATUS_DETAILS = "Internal error from Core"  # grpc.aio's status when it lost the real one
# connections whose status was lost (grpc/grpc#36066) asked again in a row before they count as
# failures: a bound on retrying a race the Hello's growing wait below makes rare
MAX_LOST_STATUSES = 10
HELLO_DELAY_S = 0.002  # the Hello's wait after one lost status, doubled after each one in a row
HELLO_DELAY_CAP_S = 0.1
# A silent arena: pinged after this long without a message from it (or after its announced
# keep-alive, when shorter), every as long while it stays silent ...
PING_AFTER_S = 1.0
# ... and given up after this long (or three keep-alives and a second, when shorter): a game server
# that answers none of four pings is hung. Well under the arena's reconnect grace (15 s): the bot
# is back, on another game server, before any of its decisions is charged.
SILENCE_LIMIT_S = 5.0
# This runner's own loop stalled this long (a busy machine, an inline bot that thinks on it)
# is not the arena's silence: the watchdog did not look meanwhile, and the messages of that
# time may be waiting to be read.
OWN_STALL_S = 0.5
CONNECT_TIMEOUT_S = 5.0  # the Welcome's wait: the arena sends it at once after the Hello
# The arena's own ends of a stream: reconnect at once (its game server stops, or hands the bot
# over to a less loaded one), not after a backoff, which they do not make grow.
ARENA_CLOSES = frozenset({"shutting_down", "moved"})
ARENA_CLOSE_JITTER_S = 0.05  # ... spread over this much, so that a server's bots do not all come at once
# A stream the arena closed this soon after its Welcome is backed off as a failure: an arena that
# kept ending streams at once would otherwise be asked again in a tight loop.
ARENA_CLOSE_MIN_LIFE_S = 1.0


class AtoutError(Exception):
    """Why the runner stopped, when it did not stop because it was asked to."""

    exit_code = 1


class ConnectionLostError(AtoutError):
    """The arena could not be reached (again) within ``max_reconnects`` attempts."""

    exit_code = 1


class NothingListensError(ConnectionLostError):
    """Nothing answered at the server's address on the first connection: a wrong ``--server``,
    or an arena that is not running."""

    exit_code = 2


class AuthenticationError(AtoutError):
    """The arena refused the token (or none was given)."""

    exit_code = 2


class ConnectionReplacedError(AtoutError):
    """Another connection with the same bot token took over this bot."""

    exit_code = 3


class TooManyVersionsError(AtoutError):
    """The bot already has as many streams of other versions connected as the arena allows."""

    exit_code = 2


class TLSError(AtoutError):
    """The TLS handshake failed: the arena's certificate is not trusted (another CA: pass
    ``ca``), not for the host dialled, or the arena does not speak TLS."""

    exit_code = 2


class ProtocolError(AtoutError):
    """The server is not an Atout arena speaking this protocol version."""

    exit_code = 4


def read_ca(path: str) -> bytes:
    """The PEM bytes of a CA file, checked to hold a certificate.

    :raises ValueError: the file cannot be read or holds no PEM certificate."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise ValueError(f"--ca {path!r}: cannot read it ({exc.strerror or exc})") from None
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise ValueError(f"--ca {path!r}: not a PEM certificate (expected -----BEGIN CERTIFICATE-----)")
    return data


def client_string() -> str:
    from . import __version__

    return f"atout-sdk/{__version__} python/{platform.python_version()}"


_END = pb.BotMessage()  # the end of the outgoing queue: the bot's side of the stream is closed


class _Connection:
    """One Connect call: its outgoing queue, its liveness clock, and why it was cancelled.

    It lives on the runner's event loop: only that loop's thread touches its queue (other
    threads go through :meth:`put_threadsafe`).
    """

    def __init__(self, batch: bool = False) -> None:
        self.batch = batch
        self.outgoing: collections.deque[pb.BotMessage] = collections.deque()
        self.ready = asyncio.Event()  # set when something is queued for the writer
        self.started = time.monotonic()
        self.last_received = self.started
        self.last_ping_sent = 0.0
        self.welcome: pb.Welcome | None = None
        self.call: grpc.aio.StreamStreamCall | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = 0  # the loop's thread
        self.cancel_reason = ""
        self.fatal: AtoutError | None = None
        self.unreachable = False  # UNAVAILABLE before any Welcome: nothing answered at the address
        self.tls_refused = ""  # why the TLS handshake failed (TLSError's message), if it did
        self.arena_closed = ""  # the code of the arena's own end of the stream (ARENA_CLOSES), if so
        self.welcomed_at = 0.0  # time.monotonic() of its Welcome
        self.status_lost = False  # the arena's status was lost to grpc.aio's race (see _on_rpc_error)
        self.hello_delay = 0.0  # seconds the Hello waits (after lost statuses: see Runner._run)
        self.closed = False
        self.ended = asyncio.Event()  # the call is over (set by the reader)
        self._half_closed = False
        self._arriving: collections.deque[pb.BotMessage] = collections.deque()  # from other threads
        self._lock = threading.Lock()
        self._wake_scheduled = False
        self.action_batches = self.batched_actions = 0  # ActionBatches sent, Actions in them

    def put(self, msg: pb.BotMessage) -> None:
        """Queue a message for the stream (on the loop's thread)."""
        if self._half_closed:
            log.debug("stream closing: dropping %s", msg.WhichOneof("kind"))
            return
        self.outgoing.append(msg)
        self.ready.set()

    def put_threadsafe(self, msg: pb.BotMessage) -> None:
        """Queue a message from another thread (a pool thread's answer). The answers of many
        threads share one wake-up of the loop: only the first since the loop last looked
        schedules one."""
        self._arriving.append(msg)
        with self._lock:
            if self._wake_scheduled:
                return
            self._wake_scheduled = True
        loop = self.loop
        assert loop is not None  # set before the runner publishes the connection (_connect_once)
        try:
            loop.call_soon_threadsafe(self._take_arriving)
        except RuntimeError:  # the loop is closed: the runner has stopped
            log.debug("not connected: dropping %s", msg.WhichOneof("kind"))

    def _take_arriving(self) -> None:
        with self._lock:
            self._wake_scheduled = False  # first: what arrives from now on schedules a new wake-up
        arriving = self._arriving
        while arriving:
            self.put(arriving.popleft())

    def take(self) -> pb.BotMessage | None:
        """The next message to write, ``_END`` once the bot's side is closed, ``None`` when
        nothing is queued. With ``batch``, the Actions queued together (ready while the
        previous message was being written) make one ActionBatch, never waiting for more."""
        outgoing = self.outgoing
        if not outgoing:
            return None
        msg = outgoing.popleft()
        if not self.batch or msg is _END or msg.WhichOneof("kind") != "action":
            return msg
        actions = [msg]
        while outgoing and len(actions) < MAX_ACTION_BATCH:
            more = outgoing[0]
            if more is _END or more.WhichOneof("kind") != "action":
                break
            actions.append(outgoing.popleft())
        if len(actions) == 1:
            return msg
        self.action_batches += 1
        self.batched_actions += len(actions)
        return pb.BotMessage(actions=pb.ActionBatch(actions=[m.action for m in actions]))

    async def write_all(self, hello: pb.BotMessage) -> None:
        """The stream's writer: ``hello``, then what is queued, until the bot's side closes."""
        call = self.call
        assert call is not None
        try:
            if self.hello_delay > 0:  # after a lost status: let an answer at once come first
                await asyncio.sleep(self.hello_delay)
                if call.done():
                    return
            await call.write(hello)
            while True:
                msg = self.take()
                if msg is None:
                    self.ready.clear()
                    await self.ready.wait()
                elif msg is _END:
                    await call.done_writing()
                    return
                else:
                    await call.write(msg)
        except (grpc.RpcError, asyncio.InvalidStateError) as exc:  # the call ended: the reader says why
            log.debug("stream writer stopped: %s", exc)

    def cancel(self, reason: str) -> None:
        if not self.cancel_reason:
            self.cancel_reason = reason
        if self.call is not None:
            self.call.cancel()

    def half_close(self) -> None:
        """End the bot's side of the stream (the arena sees the end of its request stream)."""
        if self._half_closed:
            return
        self._take_arriving()  # the pool threads' answers handed over before it still go
        self.outgoing.append(_END)
        self._half_closed = True
        self.ready.set()

    def close(self) -> None:
        self.closed = True
        self.half_close()


class Runner:
    """The machinery behind :func:`run`; use it directly to stop a runner from another thread."""

    def __init__(
        self,
        bot: type[Bot] | Callable[[], Bot],
        server: str = DEFAULT_SERVER,
        token: str | None = None,
        *,
        max_workers: int = 8,
        reconnect: bool = True,
        max_reconnects: int | None = 100,
        backoff: tuple[float, float] = (0.2, 10.0),
        connect_timeout: float = CONNECT_TIMEOUT_S,
        keepalive: float = 20.0,
        tls: bool = False,
        ca: str | os.PathLike[str] | None = None,
        stop: threading.Event | None = None,
        version: str | None = None,
        first_connect_timeout: float = 5.0,
        batch: bool = True,
    ) -> None:
        if isinstance(bot, Bot):
            raise TypeError(
                f"pass the bot's class (or a zero-argument factory), not an instance: one "
                f"{type(bot).__name__} is made for each match, e.g. atout.run({type(bot).__name__}, ...)"
            )
        if not callable(bot):
            raise TypeError(f"bot must be a Bot subclass or a zero-argument factory, not {bot!r}")
        if ":" not in server:
            raise ValueError(f"server must be HOST:PORT, not {server!r}")
        token = token if token is not None else os.environ.get("ATOUT_TOKEN")
        if not token:
            raise AuthenticationError("no bot token: pass token=... or set ATOUT_TOKEN")
        version = (version if version is not None else os.environ.get("ATOUT_BOT_VERSION", "")).strip()
        if len(version) > MAX_VERSION_LENGTH or not version.isprintable():
            raise ValueError(f"version {version[:80]!r}: at most {MAX_VERSION_LENGTH} printable characters")
        self.version = version
        self.factory = bot
        self.server = server
        self._token = token
        self.max_workers = max_workers
        self.reconnect = reconnect
        self.max_reconnects = max_reconnects
        self.backoff = backoff
        self.connect_timeout = connect_timeout
        self.first_connect_timeout = first_connect_timeout
        self.keepalive = keepalive
        self.ping_after = PING_AFTER_S
        self.silence_limit = SILENCE_LIMIT_S
        ca = ca if ca is not None else (os.environ.get(CA_ENV, "").strip() or None)
        self.ca = str(ca) if ca is not None else None
        self.root_certificates = read_ca(self.ca) if self.ca is not None else None
        self.tls = tls or self.ca is not None
        # list "batch" and "bundle" in Hello and send ActionBatches (False: one message each)
        self.batch = batch
        # what batching did, over every connection (logged when the runner stops)
        self.stats = {"decision_batches": 0, "batched_requests": 0, "bundles": 0, "bundled": 0,
                      "action_batches": 0, "batched_actions": 0}
        self.stopping = stop if stop is not None else threading.Event()
        self.connections = 0  # Connect calls made, for tests and logs
        self.close_grace = 1.0  # seconds the arena has to end the stream after we close our side
        self._conn: _Connection | None = None
        self._nonce = 0
        self._dispatcher: MatchDispatcher | None = None
        self._held: list[pb.BotMessage] | None = None  # answers held while a bundle is handled
        self._reader = 0  # the thread that handles the bundle

    # ------------------------------------------------------------------ public

    def run(self) -> None:
        """Connect and play until stopped; raise an :class:`AtoutError` when it cannot go on.

        The stream is read and written on an event loop in the calling thread (``grpc.aio``):
        an inline bot answers there too, with no thread hand-off; other bots think on a pool
        of ``max_workers`` threads."""
        executor = ThreadPoolExecutor(self.max_workers, thread_name_prefix="atout-bot")
        # Bot.inline, set on the bot's class itself (a subclass of an inline bot, e.g. of the
        # random bot, may think long: it is not inline unless it says so)
        inline = isinstance(self.factory, type) and bool(vars(self.factory).get("inline", False))
        self._dispatcher = MatchDispatcher(self.factory, self.send, executor, inline=inline)
        try:
            _run_on_a_loop(self._run())
        finally:
            if self.stats["decision_batches"] or self.stats["bundles"] or self.stats["action_batches"]:
                log.info(
                    "batching: %(batched_requests)d requests came in %(decision_batches)d DecisionBatches, "
                    "%(bundled)d messages in %(bundles)d ArenaBundles, "
                    "%(batched_actions)d answers went in %(action_batches)d ActionBatches", self.stats,
                )
            self._dispatcher.close()
            executor.shutdown(wait=False, cancel_futures=True)

    async def _run(self) -> None:
        failures = lost = 0
        began, welcomed = time.monotonic(), False
        while not self.stopping.is_set():
            conn = _Connection(self.batch)
            # The arena's answer to a refused connection is lost when it comes while the Hello is
            # being written (grpc/grpc#36066): after such a loss, the Hello waits a little, which
            # lets an answer given at once arrive first (the write then never starts).
            conn.hello_delay = min(HELLO_DELAY_CAP_S, HELLO_DELAY_S * 2 ** (lost - 1)) if lost else 0.0
            try:
                await self._connect_once(conn)
            finally:
                conn.close()
            if self.stopping.is_set():
                break
            if conn.fatal is not None:
                raise conn.fatal
            if conn.tls_refused and not welcomed:  # a certificate does not change by retrying
                raise TLSError(conn.tls_refused)
            if conn.status_lost and lost < MAX_LOST_STATUSES:
                lost += 1
                log.debug("the arena's answer to the connection was lost (grpc/grpc#36066); asking again")
                continue
            lost = 0
            if conn.welcome is not None:
                welcomed = True
                if not conn.arena_closed:
                    failures = 0
                elif time.monotonic() - conn.welcomed_at >= ARENA_CLOSE_MIN_LIFE_S:
                    # the arena ended the stream itself: nobody failed, come back now
                    failures = 0
                    log.info("the arena closed the stream (%s); reconnecting now", conn.cancel_reason)
                    await self._sleep(random.uniform(0, ARENA_CLOSE_JITTER_S))
                    continue
                # else ended as soon as made: a failure, on top of those before (backoff grows)
            elif not welcomed and conn.unreachable and \
                    time.monotonic() - began >= self.first_connect_timeout:
                # never connected: say so now, not after a long backoff (reconnections keep it)
                hint = "" if self.tls else \
                    " (an arena that serves TLS closes plain connections: pass --tls, --ca FILE)"
                raise NothingListensError(
                    f"nothing answers at {self.server}: is the arena running? "
                    f"({conn.cancel_reason or 'UNAVAILABLE'}){hint}"
                )
            failures += 1
            reason = conn.cancel_reason or "the stream ended"
            if not self.reconnect:
                raise ConnectionLostError(
                    f"connection to {self.server} lost ({reason}); not reconnecting"
                )
            if self.max_reconnects is not None and failures > self.max_reconnects:
                raise ConnectionLostError(
                    f"gave up on {self.server} after {self.max_reconnects} reconnection attempts "
                    f"({reason})"
                )
            base, cap = self.backoff
            delay = min(cap, base * 2 ** (failures - 1)) * random.uniform(0.5, 1.0)
            if not welcomed and conn.unreachable:  # the first connection: try once more at its end
                delay = min(delay, max(0.05, self.first_connect_timeout - (time.monotonic() - began)))
                # not "attempt 1 of 100": a first connection gives up after first_connect_timeout
                attempt = f"giving up {self.first_connect_timeout:g} s after the first try"
            else:
                attempt = f"attempt {failures}" + (
                    f" of {self.max_reconnects}" if self.max_reconnects is not None else "")
            log.warning(
                "%s %s (%s); reconnecting in %.1f s (%s)",
                "connection to" if conn.welcome is not None else "cannot connect to",
                self.server,
                reason,
                delay,
                attempt,
            )
            await self._sleep(delay)
        log.info("stopped")

    async def _sleep(self, seconds: float) -> None:
        """Sleep, waking within 50 ms of a stop request (``stopping`` is a thread's event)."""
        end = time.monotonic() + seconds
        while not self.stopping.is_set() and (left := end - time.monotonic()) > 0:
            await asyncio.sleep(min(STOP_POLL_S, left))

    def stop(self) -> None:
        """Ask the runner to close its stream and return. Safe from any thread or a signal handler."""
        self.stopping.set()  # the connection's watchdog closes the stream within 50 ms

    def send(self, msg: pb.BotMessage) -> None:
        """Send a message on the current stream (dropped when there is none: the arena re-sends).
        Safe from any thread."""
        held = self._held
        if held is not None and threading.get_ident() == self._reader:
            held.append(msg)  # an inline bot's answer while a bundle is handled: sent after it
            return
        conn = self._conn
        if conn is None or conn.closed:
            log.debug("not connected: dropping %s", msg.WhichOneof("kind"))
            return
        if threading.get_ident() == conn.thread:
            conn.put(msg)
        else:
            conn.put_threadsafe(msg)

    def _send_held(self, held: list[pb.BotMessage]) -> None:
        """The answers held while a bundle was handled: one ActionBatch (a lone one as itself)."""
        actions = [m for m in held if m.WhichOneof("kind") == "action"]
        others = [m for m in held if m.WhichOneof("kind") != "action"]
        for msg in others:
            self.send(msg)
        if len(actions) == 1:
            self.send(actions[0])
        elif actions:
            for start in range(0, len(actions), MAX_ACTION_BATCH):
                chunk = actions[start:start + MAX_ACTION_BATCH]
                self.stats["action_batches"] += 1
                self.stats["batched_actions"] += len(chunk)
                self.send(pb.BotMessage(actions=pb.ActionBatch(actions=[m.action for m in chunk])))

    def active_matches(self) -> list[str]:
        return self._dispatcher.active_matches() if self._dispatcher is not None else []

    # ------------------------------------------------------------------ one connection

    def _channel(self) -> grpc.aio.Channel:
        # A subchannel pool of the channel's own: gRPC otherwise shares connections between
        # channels to the same address, and the next attempt went out on the old TCP connection,
        # through a balancer to the hung game server the runner was leaving.
        options = [("grpc.enable_retries", 0), ("grpc.max_receive_message_length", 16 * 1024 * 1024),
                   ("grpc.use_local_subchannel_pool", 1)]
        if self.tls:  # ALPN h2 (gRPC's own): what a TLS-terminating proxy in front must offer
            credentials = grpc.ssl_channel_credentials(root_certificates=self.root_certificates)
            return grpc.aio.secure_channel(self.server, credentials, options=options)
        return grpc.aio.insecure_channel(self.server, options=options)

    async def _connect_once(self, conn: _Connection) -> None:
        """Run one Connect call to its end; record why it ended on ``conn``."""
        self.connections += 1
        log.info("connecting to %s", self.server)
        hello = pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, client=client_string(),
                                             version=self.version,
                                             features=[FEATURE_BATCH, FEATURE_BUNDLE] if self.batch else []))
        # A fresh channel per attempt: a channel that failed keeps its own (long) backoff.
        async with self._channel() as channel:
            stub = atout_pb2_grpc.BotGatewayStub(channel)
            conn.loop, conn.thread = asyncio.get_running_loop(), threading.get_ident()
            conn.call = stub.Connect(metadata=(("authorization", f"Bearer {self._token}"),))
            self._conn = conn
            writer = asyncio.create_task(conn.write_all(hello))
            watchdog = asyncio.create_task(self._watch(conn))
            try:
                await self._read_all(conn)
            except grpc.RpcError as exc:
                self._on_rpc_error(conn, exc)
            except asyncio.CancelledError:
                # grpc.aio raises it in the reader after our own call.cancel(); a cancellation
                # of the runner's task itself (Ctrl-C under asyncio's handler) goes on up
                task = asyncio.current_task()
                if not conn.cancel_reason or (task is not None and task.cancelling()):
                    raise
            finally:
                conn.ended.set()
                conn.close()
                conn.call.cancel()
                for task in (writer, watchdog):
                    task.cancel()
                await asyncio.gather(writer, watchdog, return_exceptions=True)
                self.stats["action_batches"] += conn.action_batches
                self.stats["batched_actions"] += conn.batched_actions

    async def _read_all(self, conn: _Connection) -> None:
        call = conn.call
        assert call is not None
        # ``async for``, not ``read()``: read() raises as soon as the call is over, losing the
        # messages gRPC holds already (an Error "replaced" just before the stream's end).
        async for msg in call:
            if msg is None:  # grpc.aio logs a message it cannot decode and hands over None
                conn.cancel("a message from the arena could not be decoded")
                return
            conn.last_received = time.monotonic()
            try:
                self._on_message(conn, msg)
            except Exception:  # a bug here must not end a long-running bot
                log.exception("error while handling %s from the arena", msg.WhichOneof("kind"))
            if conn.fatal is not None:
                conn.cancel(str(conn.fatal))
                return

    def _on_message(self, conn: _Connection, msg: pb.ArenaMessage) -> None:
        kind = msg.WhichOneof("kind")
        if kind == "ping":
            self.send(pb.BotMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
        elif kind == "pong":
            pass
        elif kind == "welcome":
            conn.welcome = msg.welcome
            conn.welcomed_at = time.monotonic()
            log.info(
                "connected as %s%s to %s%s",
                msg.welcome.bot_name or msg.welcome.bot_id or "?",
                f"@{self.version}" if self.version else "",
                self.server,
                f" (game server {msg.welcome.server_id})" if msg.welcome.server_id else "",
            )
        elif kind == "error":
            self._on_error(conn, msg.error)
        elif kind == "decisions":
            assert self._dispatcher is not None
            self.stats["decision_batches"] += 1
            self.stats["batched_requests"] += len(msg.decisions.requests)
            self._dispatcher.handle_decisions(msg.decisions)
        elif kind == "bundle":
            self.stats["bundles"] += 1
            self.stats["bundled"] += len(msg.bundle.messages)
            # an inline bot answers on this thread: its answers to the bundle go as one batch
            held: list[pb.BotMessage] | None = [] if self.batch else None
            self._held, self._reader = held, threading.get_ident()
            try:
                for entry in msg.bundle.messages:
                    if entry.WhichOneof("kind") in ("bundle", "welcome"):
                        log.warning("a %s inside an ArenaBundle; ignored", entry.WhichOneof("kind"))
                        continue
                    try:  # one entry's error must not cost the bundle's others
                        self._on_message(conn, entry)
                    except Exception:
                        log.exception("error while handling %s from the arena", entry.WhichOneof("kind"))
            finally:
                self._held = None
                if held:
                    self._send_held(held)
        elif kind is None:
            log.warning("empty message from the arena; ignored")
        else:
            assert self._dispatcher is not None
            self._dispatcher.handle(msg)

    def _on_error(self, conn: _Connection, error: pb.Error) -> None:
        if error.code == "replaced":
            log.error("another connection took over this bot (%s); stopping", error.message or "replaced")
            conn.fatal = ConnectionReplacedError(f"another connection took over this bot: {error.message}")
        elif error.code == "too_many_versions":
            log.error("%s; stopping", error.message)
            conn.fatal = TooManyVersionsError(error.message)
        elif error.code == "unsupported_version":
            log.error("the arena does not support this client: %s", error.message)
            conn.fatal = ProtocolError(f"{error.code}: {error.message}")
        elif error.code in ARENA_CLOSES:  # said once, as the stream ends (Runner._run)
            conn.arena_closed = error.code
            conn.cancel_reason = f"{error.code}: {error.message}" if error.message else error.code
        else:
            log.error("the arena reported an error: %s: %s", error.code, error.message)

    def _on_rpc_error(self, conn: _Connection, exc: grpc.RpcError) -> None:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        if self.stopping.is_set():
            return
        if code == grpc.StatusCode.UNAUTHENTICATED:
            log.error("the arena rejected the token for %s: %s", self.server, details)
            conn.fatal = AuthenticationError(f"the arena rejected the token for {self.server}: {details}")
        elif code == grpc.StatusCode.PERMISSION_DENIED:
            log.error("the arena refused this bot on %s: %s", self.server, details)
            conn.fatal = AuthenticationError(f"the arena refused this bot on {self.server}: {details}")
        elif code == grpc.StatusCode.UNIMPLEMENTED:
            log.error("%s is not an Atout arena (no BotGateway.Connect): %s", self.server, details)
            conn.fatal = ProtocolError(f"{self.server} has no BotGateway.Connect: {details}")
        elif (code == grpc.StatusCode.INTERNAL and conn.welcome is None and not conn.cancel_reason
              and details == LOST_STATUS_DETAILS):
            # grpc.aio replaces the arena's status (e.g. UNAUTHENTICATED at once) with this one
            # when it comes while the Hello is being written (grpc/grpc#36066): ask again
            conn.status_lost = True
            conn.cancel_reason = "the stream ended while the Hello was being sent (its status was lost)"
        elif code == grpc.StatusCode.UNAVAILABLE and conn.welcome is None and not conn.cancel_reason \
                and (refused := self._tls_refusal(str(details))):
            conn.tls_refused = conn.cancel_reason = refused
        elif code == grpc.StatusCode.UNAVAILABLE and conn.welcome is None and not conn.cancel_reason:
            conn.unreachable = True
            conn.cancel_reason = f"UNAVAILABLE: {' '.join(str(details).split())[:300]}"
        elif code == grpc.StatusCode.CANCELLED and conn.cancel_reason:
            pass  # cancelled by us (watchdog): the reason is already recorded
        elif not conn.cancel_reason:
            conn.cancel_reason = f"{code.name if code is not None else 'error'}: {details}"

    def _tls_refusal(self, details: str) -> str:
        """The one line for people of a TLS handshake that failed (gRPC's UNAVAILABLE details);
        ``""`` when ``details`` say something else."""
        flat = " ".join(details.split())
        if not self.tls:
            return ""
        if "CERTIFICATE_VERIFY_FAILED" in flat:
            why = flat.partition("CERTIFICATE_VERIFY_FAILED")[2].strip(" :").removesuffix(": OK").strip()
            hint = (f"is {self.ca} the CA that signed it?" if self.ca else
                    "pass --ca FILE (ca=FILE, ATOUT_CA_FILE) with the CA that signed it")
            return (f"TLS: the certificate of the arena at {self.server} is not trusted "
                    f"({why or 'verify failed'}): {hint}")
        if "Hostname Verification" in flat or "No match found for server name" in flat:
            return (f"TLS: the arena's certificate is not for {self.server.rpartition(':')[0]}: connect "
                    "with a host name (or IP address) it names")
        if "handshake failed" in flat.lower():  # e.g. WRONG_VERSION_NUMBER: no TLS server there
            found = re.search(r"OPENSSL_internal:([A-Z_]+)", flat)
            why = found.group(1) if found else flat[-160:]
            return (f"TLS: the handshake with {self.server} failed ({why}): "
                    "does the arena serve TLS on this port? (without TLS, drop --tls and --ca)")
        return ""

    async def _watch(self, conn: _Connection) -> None:
        """Notice a stop request, a missing Welcome, or a silent arena; ping when it is quiet."""
        looked = time.monotonic()
        while not conn.ended.is_set():
            await asyncio.sleep(STOP_POLL_S)
            now = time.monotonic()
            stalled = now - looked - STOP_POLL_S
            looked = now
            if stalled > OWN_STALL_S:  # our loop did not run: that time is not the arena's silence
                conn.started += stalled
                conn.last_received = min(now, conn.last_received + stalled)
            if self.stopping.is_set():
                # Close our side first so the arena sees a clean end; cancel if it lingers.
                conn.half_close()
                try:
                    await asyncio.wait_for(conn.ended.wait(), self.close_grace)
                except TimeoutError:
                    conn.cancel("stopping")
                return
            if conn.welcome is None:
                if now - conn.started > self.connect_timeout:
                    conn.cancel(f"no Welcome within {self.connect_timeout:.0f} s")
                    return
                continue
            interval = conn.welcome.keepalive_ms / 1000 if conn.welcome.keepalive_ms else self.keepalive
            limit = min(self.silence_limit, 3 * interval + 1)
            ping_after = min(self.ping_after, interval)
            silent = now - conn.last_received
            if silent > limit:
                server = f"game server {conn.welcome.server_id}" if conn.welcome.server_id else "it"
                conn.cancel(f"the arena was silent for {silent:.1f} s ({server} answered none of "
                            "the pings: hung?)")
                return
            if silent > ping_after and now - conn.last_ping_sent > ping_after:
                self._nonce += 1
                conn.last_ping_sent = now
                self.send(pb.BotMessage(ping=pb.Ping(nonce=self._nonce)))


def _run_on_a_loop(coroutine: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(coroutine)``; from a thread whose event loop is running (a notebook, async
    code), on a thread of its own, waited for (``asyncio.run`` refuses to nest)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _loop.run(coroutine)
        return
    failure: list[BaseException] = []

    def main() -> None:
        try:
            _loop.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=main, name="atout-runner")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def run(
    bot: type[Bot] | Callable[[], Bot],
    server: str = DEFAULT_SERVER,
    token: str | None = None,
    *,
    max_workers: int = 8,
    reconnect: bool = True,
    max_reconnects: int | None = 100,
    backoff: tuple[float, float] = (0.2, 10.0),
    connect_timeout: float = CONNECT_TIMEOUT_S,
    keepalive: float = 20.0,
    tls: bool = False,
    ca: str | os.PathLike[str] | None = None,
    stop: threading.Event | None = None,
    handle_signals: bool = True,
    version: str | None = None,
) -> None:
    """Connect ``bot`` to the arena at ``server`` and play every match it is seated in.

    - ``bot``: a :class:`~atout.Bot` subclass, or a zero-argument factory returning a fresh Bot;
      one instance is made per match.
    - ``token``: the bot's token (default: the ``ATOUT_TOKEN`` environment variable).
    - ``max_workers``: matches whose decisions can be computed at the same time.
    - ``reconnect``/``max_reconnects``/``backoff``: on a broken stream, retry after ``backoff[0]``
      seconds doubling up to ``backoff[1]`` (with jitter), giving up after ``max_reconnects``
      failed attempts in a row (``None``: never give up).
    - ``connect_timeout``: seconds to wait for the arena's Welcome; ``keepalive``: the arena's
      keep-alive when it did not announce one. A silent arena is pinged after a second and its
      stream given up after :data:`SILENCE_LIMIT_S` (or three keep-alives and a second, if shorter).
      A stream the arena ends itself (``shutting_down``, ``moved``) is reconnected at once.
    - ``tls``: connect with TLS, the arena's certificate checked against the system's CAs;
      ``ca``: the PEM file of a private CA to check it against instead (default the
      ``ATOUT_CA_FILE`` environment variable; implies ``tls``). A certificate refused before the
      first Welcome raises :class:`TLSError` at once.
    - ``version``: a free label of this version of the bot (e.g. a git commit; default the
      ``ATOUT_BOT_VERSION`` environment variable, or none), sent in Hello: every match stores the
      version each seat played with, and two versions of one bot may be connected at once.
    - ``stop``: an event that ends the runner when set. With ``handle_signals`` (and on the main
      thread) Ctrl-C and SIGTERM end it cleanly too.

    Returns ``None`` when stopped; raises :class:`AuthenticationError`, :class:`ConnectionReplacedError`,
    :class:`ProtocolError`, :class:`TLSError` or :class:`ConnectionLostError` otherwise. Logs go to
    the ``"atout"`` logger (configured at INFO level when the program configured no logging at all).
    """
    runner = Runner(
        bot,
        server,
        token,
        max_workers=max_workers,
        reconnect=reconnect,
        max_reconnects=max_reconnects,
        backoff=backoff,
        connect_timeout=connect_timeout,
        keepalive=keepalive,
        tls=tls,
        ca=ca,
        stop=stop,
        version=version,
    )
    if not logging.getLogger().handlers and not log.handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with _signals_stop(runner, handle_signals):
        runner.run()


@contextlib.contextmanager
def _signals_stop(runner: Runner, enabled: bool) -> Iterator[None]:
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("%s received: closing", signal.Signals(signum).name)
        runner.stop()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
