"""One bot stream on a game server: handshake, takeover, and forwarding in both directions.

:class:`BotSession` knows nothing of gRPC: it is given ``recv()`` (the bot's next
``BotMessage``, or ``None`` at the end) and ``send(ArenaMessage)``. The protocol it speaks is
the header comment of ``proto/atout/v1/atout.proto``; the Redis side is ``atout_arena.core.relay``.

What a bot sends can never hurt another bot nor the server: an answer is only forwarded for a
request id that this very stream was sent, before its deadline, and at most
``MAX_REJECTIONS`` times per request (the decision ends with them: a legal one, or the last
rejected with a final Rejection); anything else gets a Rejection or an ``Error`` with
code ``bad_message`` saying why, and the stream goes on. A stream is read at the pace of what
it is asked (a token bucket: :data:`MESSAGE_RATE`): a flood waits in gRPC's flow control.
What the limits hold back is logged and counted (``atout_stream_limited_total``).

Batching: the inbox is read up to :data:`INBOX_READ_COUNT` entries at a time. To a
stream whose Hello listed the feature ``"batch"`` (its Welcome then lists it back), the decision
requests of one read go as one ``DecisionBatch`` (at most :data:`MAX_DECISION_BATCH` requests and
about :data:`MAX_DECISION_BATCH_BYTES`; a lone request as a plain ``DecisionRequest``);
every other message stays single and in its place, so a match's MatchStart still comes before
its first request and its MatchEnd after its last. To a stream whose Hello listed ``"bundle"``,
everything of one read goes in ``ArenaBundle``s instead (the same limits; MatchStarts, MatchEnds,
decisions and the workers' Rejections, in their order): a gRPC message costs the game server and
the bot far more than its bytes, and a match's start and end were half of all messages. Any
stream may send an ``ActionBatch``: each of its Actions is handled exactly as if it came alone
(each takes a token of the bucket and counts towards ``MAX_REJECTIONS``), and the answers of one
message go to Redis in one pipeline.
An empty ActionBatch, or one of more than :data:`MAX_ACTION_BATCH` Actions, gets an Error
``bad_message`` and none of its Actions is read.

The clock runs here, at the edge. A request's worker sets only its time (``deadline_ms``); its
deadline starts when this stream writes it to the bot: ``deadline_unix_ms`` is then + that
time, and whatever the request waited before (the worker, Redis, this server's queue) is not
counted. Answers are read until that deadline plus the network lag measured on this stream
(:class:`LagCompensation`: the keep-alive pings' round trip, capped per decision and per
match, as lichess does) plus any stall of this server's own event loop (:class:`LoopLag`).
When it passes with no answer waiting for the worker's verdict, this server tells the worker
(``EXPIRE``: a ``timeout``, or ``illegal`` after rejected answers). The answer's time at the
edge goes to the worker with it, for the match's clock and time bank. A stream the arena ends
itself (``shutting_down``, ``moved``) leaves its bot cut off by an outage, not gone: its
decisions wait with their clocks stopped until it is back (``ATOUT_OUTAGE_LIMIT_S``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError

from atout.bot import clean_note
from atout.v1 import atout_pb2 as pb
from atout_arena.core.keys import stream_address
from atout_arena.core.metrics import STREAM_LIMITED, limited_field
from atout_arena.core.presence import Presence
from atout_arena.core.relay import (
    INBOX_READ_COUNT,
    MAX_REJECTIONS,
    PROCESS_BOOT,
    Answer,
    GatewayRelay,
    now_ms,
)
from atout_arena.core.wire import is_outage, redis_outage
from atout_arena.services.bots import BotInfo

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
MAX_ACTION_LENGTH = 256
MAX_VERSION_LENGTH = 64
MAX_STREAMS = 4  # live streams (versions) of one bot at once
MAX_THINK_MS = 10_000_000.0  # a reported think time beyond this (or negative, or not a number) is ignored
ANSWER_GRACE_MS = 2_000  # an open request is forgotten this long after its deadline
CLOSED_KEPT = 4096  # request ids recently closed (deadline, match end, 8th rejection) remembered per stream
# Rejection.code values (docs/protocol.md, "Answers"): stable, for programs; the reason is for people
REJECT_ILLEGAL = "illegal"  # the engine's (sent by the worker)
REJECT_UNKNOWN = "unknown_request"
REJECT_WRONG_MATCH = "wrong_match"
REJECT_TOO_LONG = "too_long"
REJECT_TOO_LATE = "too_late"
REJECT_DECIDED = "decided"
# Network lag compensation (docs/protocol.md, "Deadlines and clocks"): each decision's deadline
# at the edge is extended by the stream's measured round trip, at most MAX_LAG_COMP_MS, and a
# match's decisions together by at most LAG_QUOTA_MS (what a bot that delays its Pongs can win).
MAX_LAG_COMP_MS = 500.0
LAG_QUOTA_MS = 5_000.0
ARENA_ENDS = frozenset({"shutting_down", "moved"})  # a stream the arena ends itself: not the bot's doing
EXPIRE_RETRY_S = 0.5  # an EXPIRE that Redis did not take is sent again (a Redis blip)
EXPIRE_TRIES = 20
# Per stream: a token bucket on the bot's messages, so a flooding bot cannot slow the others. It
# fills at MESSAGE_RATE a second (up to MESSAGE_BURST: pings, pongs, a few stray answers) and by
# MAX_REJECTIONS + 1 for every decision the stream is sent (up to MAX_CREDIT), so a bot answering
# what it is asked, however fast, never waits. Beyond that the stream is simply read later:
# gRPC's flow control then holds the bot's sends, so a flooding bot costs the game server (and
# every other match) next to nothing.
MESSAGE_RATE = 50.0  # messages per second
MESSAGE_BURST = 200.0
MAX_CREDIT = 100_000.0
CLOSE_TIMEOUT_S = 2.0
FEATURE_BATCH = "batch"  # Hello.features: the bot takes DecisionBatch messages
FEATURE_BUNDLE = "bundle"  # Hello.features: the bot takes ArenaBundle messages
FEATURES = frozenset({FEATURE_BATCH, FEATURE_BUNDLE})  # what this arena understands; others are ignored
MAX_ACTION_BATCH = 1024  # Actions in one ActionBatch (well under the 1 MiB message cap); more: bad_message
MAX_DECISION_BATCH = INBOX_READ_COUNT  # requests in one DecisionBatch sent
# ... and about this many bytes at most (a lone request may be bigger): well under the 4 MiB a
# gRPC client receives by default, so a batch can never be too big for a bot to read
MAX_DECISION_BATCH_BYTES = 1 << 20


class SessionEnd(Exception):  # noqa: N818  (a control-flow signal, not an error)
    """Ends a session; ``code`` / ``message`` go to the bot in an Error (when code is set)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class LoopLag:
    """How late this event loop has been lately: a task sleeps :data:`TICK_S` and measures
    how much longer it took. An answer read late because the server itself stalled (load, a
    long garbage collection) is not the bot's: deadlines stretch by :meth:`recent_ms`."""

    TICK_S = 0.1
    WINDOW_S = 5.0

    def __init__(self) -> None:
        self._samples: list[tuple[float, float]] = []  # (when, lag ms), the last WINDOW_S
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch(), name="loop-lag")

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(self.TICK_S)
            now = loop.time()
            lag = (now - before - self.TICK_S) * 1000
            self._samples = [(at, ms) for at, ms in self._samples if now - at < self.WINDOW_S]
            if lag > 1.0:
                self._samples.append((now, lag))

    def recent_ms(self) -> float:
        """The longest stall of the loop in the last :data:`WINDOW_S` seconds (ms)."""
        return max((ms for _, ms in self._samples), default=0.0)


LOOP_LAG = LoopLag()  # one per game server process (its one event loop)


class LagCompensation:
    """The network lag of one stream, measured by its keep-alive pings' round trips (an
    exponential average), and each match's quota of compensation."""

    ALPHA = 0.3

    def __init__(self) -> None:
        self.rtt_ms: float | None = None
        self.used: dict[str, float] = {}  # match id -> compensation the bot's answers used (ms)

    def sample(self, rtt_ms: float) -> None:
        if 0 <= rtt_ms < 60_000:
            self.rtt_ms = rtt_ms if self.rtt_ms is None else self.rtt_ms + self.ALPHA * (rtt_ms - self.rtt_ms)

    def grant(self, match_id: str) -> float:
        """The compensation a decision of ``match_id`` gets now (ms)."""
        left = LAG_QUOTA_MS - self.used.get(match_id, 0.0)
        return max(0.0, min(self.rtt_ms or 0.0, MAX_LAG_COMP_MS, left))

    def use(self, match_id: str, ms: float) -> None:
        """An answer arrived ``ms`` after the decision's nominal deadline: taken from the quota."""
        if ms > 0:
            self.used[match_id] = self.used.get(match_id, 0.0) + ms


@dataclass
class OpenRequest:
    """A request this stream was sent and may answer."""

    match_id: str
    deadline: int  # the deadline told to the bot (ms since the epoch, this server's clock)
    accept_until: int  # ... plus the lag compensation granted: answers are read until then
    sent_at: float  # time.monotonic() when written to the stream
    timer: asyncio.TimerHandle | None = None
    awaiting: bool = False  # an answer went to the worker and no Rejection came back yet
    expired: bool = False  # the worker was told the deadline passed
    decided: bool = False  # its decision ended with the 8th rejected answer (a final Rejection)
    stretched: bool = False  # the deadline was moved once for a stall of this server's loop
    budget_ms: int = 0  # the request's own time: deadline - budget_ms is when it was written

    def edge_ms(self) -> float:
        return (time.monotonic() - self.sent_at) * 1000

    def remaining_ms(self) -> float:
        """Time left to answer, on the clock :meth:`edge_ms` measures with (the epoch's
        milliseconds are whole: by them alone a deadline could pass up to 1 ms early)."""
        return self.accept_until - (self.deadline - self.budget_ms) - self.edge_ms()


def reported_think_ms(value: float) -> float:
    """The bot's own think time of an Action, or 0 (not told) when it is not a sane number."""
    return value if math.isfinite(value) and 0 < value <= MAX_THINK_MS else 0.0


def reported_note(raw: bytes) -> str | None:
    """An Action's note as stored: UTF-8 (other bytes become U+FFFD), no control characters but
    newline and tab, at most 1 KB (cut, never inside a character); ``None`` when nothing is left."""
    return clean_note(raw.decode("utf-8", errors="replace"))[0]


def error_message(code: str, message: str, *, closes: bool) -> pb.ArenaMessage:
    """An Error; ``closes``: the stream ends right after it (``Error.closes``)."""
    return pb.ArenaMessage(error=pb.Error(code=code, message=message, closes=closes))


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved: :meth:`take` says how long to wait."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.at = time.monotonic()

    def credit(self, tokens: float) -> None:
        """Room for ``tokens`` more messages (what a decision sent may bring back)."""
        self.tokens = min(self.tokens + tokens, MAX_CREDIT)

    def take(self, count: int = 1) -> float:
        """Take ``count`` tokens; the seconds to wait before using them (0: at once)."""
        now = time.monotonic()
        if self.tokens < self.burst:  # credit above the burst is kept, the rate refills up to it
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.tokens -= count
        self.at = now
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


class BotSession:
    """The life of one ``BotGateway.Connect`` call."""

    def __init__(
        self,
        relay: GatewayRelay,
        bot: BotInfo,
        recv: Callable[[], Awaitable[pb.BotMessage | None]],
        send: Callable[[pb.ArenaMessage], Awaitable[None]],
        *,
        server_id: str,
        keepalive_ms: int,
        hello_timeout_ms: int,
        outage_limit_ms: int = 300_000,
    ) -> None:
        self.relay = relay
        self.bot = bot
        self.bot_id = bot.bot_id
        self.version = ""  # the version label of its Hello
        self.address = self.bot_id  # where the relay reaches this stream (keys.stream_address)
        self._recv = recv
        self._send_raw = send
        self.server_id = server_id
        self.keepalive_ms = keepalive_ms
        self.hello_timeout_ms = hello_timeout_ms
        self.conn_id = f"{server_id}/{PROCESS_BOOT}{secrets.token_hex(6)}"  # (relay.PROCESS_BOOT)
        self.outage_limit_ms = outage_limit_ms
        # request id -> its OpenRequest: what this stream may answer, and its clock
        self.open: dict[str, OpenRequest] = {}
        self.lag = LagCompensation()
        self._pings: dict[int, float] = {}  # nonce -> time.monotonic() sent (the round trip)
        self.open_in: dict[str, set[str]] = {}  # match id -> its open request ids (forgotten at its end)
        self.last_seen = time.monotonic()
        self._send_lock = asyncio.Lock()
        self._posting: set[asyncio.Future[Any]] = set()  # answers handed to Redis, not confirmed yet
        self._stopped: asyncio.Future[SessionEnd] | None = None
        self._ping_nonce = 0
        self.revoked = False
        self.bucket = TokenBucket(MESSAGE_RATE, MESSAGE_BURST)
        self.answers: dict[str, int] = {}  # request id -> answers forwarded (at most MAX_REJECTIONS)
        # request ids closed lately (match ended, deadline long past) -> why: a late answer to
        # one is told "too late", not "unknown request_id" (at most CLOSED_KEPT, oldest dropped)
        self.closed: dict[str, str] = {}
        self.limited = {"rate": 0, "answers": 0}  # messages held back since the last count
        self.batch = False  # its Hello listed "batch": decisions may go as DecisionBatches
        self.bundle = False  # its Hello listed "bundle": everything of a read may go as ArenaBundles
        self.presence: Presence | None = None  # its hold on its address, once it said Hello

    # ------------------------------------------------------------ life

    async def run(self) -> str:
        """Serve the stream until it ends; returns why (an Error code, or ``eof``)."""
        stopped: asyncio.Future[SessionEnd] = asyncio.get_running_loop().create_future()
        self._stopped = stopped
        try:
            hello = await asyncio.wait_for(self._recv(), self.hello_timeout_ms / 1000)
        except TimeoutError:
            return await self._close(SessionEnd("bad_message", f"no Hello within {self.hello_timeout_ms} ms"))
        except SessionEnd as refused:
            return await self._close(refused)
        if hello is None:
            return "eof"
        if hello.WhichOneof("kind") != "hello":
            return await self._close(SessionEnd("bad_message", "the first message must be a Hello"))
        if hello.hello.protocol_version != PROTOCOL_VERSION:
            return await self._close(
                SessionEnd(
                    "unsupported_version",
                    f"protocol version {hello.hello.protocol_version} is not supported; "
                    f"this arena speaks version {PROTOCOL_VERSION}",
                )
            )
        # at most 64 code points, each printable in Python's sense (letters, marks, numbers,
        # punctuation, symbols of any script, and the ASCII space; no tab, newline, control or
        # format character, no other kind of space); leading and trailing spaces are dropped
        version = hello.hello.version
        if len(version) > MAX_VERSION_LENGTH or not version.isprintable():
            return await self._close(SessionEnd(
                "bad_message",
                f"Hello.version {version[:80]!r}: at most {MAX_VERSION_LENGTH} printable characters",
            ))
        version = version.strip()
        self.version, self.address = version, stream_address(self.bot_id, version)
        features = sorted(FEATURES.intersection(hello.hello.features))  # unknown ones: ignored
        self.batch = FEATURE_BATCH in features
        self.bundle = FEATURE_BUNDLE in features
        others = [a for a in await self.relay.streams_of(self.bot_id) if a != self.address]
        if len(others) >= MAX_STREAMS:
            return await self._close(SessionEnd(
                "too_many_versions",
                f"bot {self.bot.name!r} has {len(others)} other versions connected "
                f"({', '.join(sorted(others))}); at most {MAX_STREAMS} streams of one bot at once",
            ))
        log.info(
            "bot %s (%s%s) connected as %s (%s)", self.bot.name, self.bot_id,
            f", version {version}" if version else "", self.conn_id, hello.hello.client,
        )
        await self.send(
            pb.ArenaMessage(
                welcome=pb.Welcome(
                    protocol_version=PROTOCOL_VERSION,
                    bot_id=self.bot_id,
                    bot_name=self.bot.name,
                    server_id=self.server_id,
                    keepalive_ms=self.keepalive_ms,
                    features=features,
                )
            )
        )
        LOOP_LAG.start()
        await self._ping()  # a first round trip for the lag compensation, before any decision
        tasks: list[asyncio.Task[None]] = []

        async def stop_tasks() -> None:  # before the release: the answers read so far go first
            for request in self.open.values():  # no verdict from a stream that is gone
                if request.timer is not None:
                    request.timer.cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self._posting:  # (their errors are logged as they come)
                await asyncio.wait(self._posting, timeout=CLOSE_TIMEOUT_S)

        self.presence = Presence(self.relay, self.address, self.conn_id,
                                 name=f"bot {self.bot.name} stream {self.conn_id}",
                                 before_release=stop_tasks, after_release=self._after_release)
        async with self.presence as presence:
            await self._deliver_all(presence.pending)
            tasks += [
                asyncio.create_task(self._read_bot(), name=f"bot-{self.bot_id}-reader"),
                asyncio.create_task(self._read_inbox(presence), name=f"bot-{self.bot_id}-inbox"),
                asyncio.create_task(self._keep_alive(presence), name=f"bot-{self.bot_id}-keepalive"),
            ]
            waiting: list[asyncio.Future[Any]] = [*tasks, stopped]
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            end: SessionEnd | None = None
            for finished in done:
                exc = finished.exception()
                if isinstance(exc, SessionEnd):
                    end = exc
                elif exc is not None:
                    raise exc
                elif finished is stopped:
                    end = finished.result()
            if end is not None and end.code in ARENA_ENDS:
                presence.moved_ms = self.outage_limit_ms
            return await self._close(end) if end else "eof"

    def revoke(self, message: str) -> None:
        """End the stream with an Error ``revoked`` and fault every decision waiting for it
        ``disconnected`` (its bot was disabled or its token rotated). Call from its event loop."""
        self.revoked = True
        self.stop("revoked", message)

    def stop(self, code: str, message: str) -> None:
        """Ask the session to end with an Error (e.g. ``shutting_down``). Call from its event loop."""
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(SessionEnd(code, message))

    async def _close(self, end: SessionEnd) -> str:
        log.info("bot %s stream %s closed: %s", self.bot.name, self.conn_id, end)
        try:
            closing = error_message(end.code, end.message, closes=True)
            await asyncio.wait_for(self.send(closing), CLOSE_TIMEOUT_S)
        except Exception as exc:  # the stream may be gone already: there is no one to tell
            log.debug("bot %s stream %s: Error not sent: %r", self.bot.name, self.conn_id, exc)
        return end.code

    async def _after_release(self) -> None:
        await asyncio.wait_for(self._count_limited(), CLOSE_TIMEOUT_S)
        if self.revoked:  # after the release: a decision sent now finds no stream either
            faulted = await asyncio.wait_for(self.relay.fault_pending(self.address), CLOSE_TIMEOUT_S)
            log.info("bot %s stream %s revoked: %d open decisions faulted disconnected",
                     self.bot.name, self.conn_id, faulted)

    # ------------------------------------------------------------ arena -> bot

    async def send(self, message: pb.ArenaMessage) -> None:
        async with self._send_lock:
            await self._send_raw(message)

    async def _read_inbox(self, presence: Presence) -> None:
        while True:
            payloads, replaced_by = await presence.read(self.keepalive_ms)
            await self._deliver_all(payloads)  # what came before a newer stream is still ours
            if replaced_by is not None:
                raise SessionEnd(
                    "replaced",
                    f"bot {self.bot.name!r}{f' version {self.version!r}' if self.version else ''} "
                    f"connected again (stream {replaced_by}); this stream is closed",
                )

    async def _deliver_all(self, payloads: list[bytes]) -> None:
        """Forward inbox messages in order. To a bundle stream, everything read at once goes
        in ArenaBundles; to a batch stream, the decisions among them go as DecisionBatches
        (each run of decisions between two other messages: one batch); else one by one."""
        pending: list[pb.DecisionRequest] = []  # decisions not sent yet (batch streams)
        bundled: list[pb.ArenaMessage] = []  # messages not sent yet (bundle streams)
        pending_bytes = 0
        for payload in payloads:
            try:
                message = pb.ArenaMessage.FromString(payload)
            except DecodeError:
                log.error("bot %s: inbox entry is not an ArenaMessage (%d bytes): dropped",
                          self.bot_id, len(payload))
                continue
            kind = message.WhichOneof("kind")
            if kind == "decision":
                decision = message.decision
                if decision.request_id in self.open:
                    continue  # sent already on this stream: its clock runs
                self._start_clock(decision)
                self.bucket.credit(MAX_REJECTIONS + 1)
            elif kind == "rejection":
                self._rejected(message.rejection.request_id, message.rejection.final)
            elif kind == "match_end":
                match_id = message.match_end.match_id
                self.lag.used.pop(match_id, None)
                for rid in self.open_in.pop(match_id, ()):
                    request = self.open.pop(rid, None)
                    if request is not None and request.timer is not None:
                        request.timer.cancel()
                    self.answers.pop(rid, None)
                    self._remember_closed(rid, f"too late: match {match_id} is over")
            if self.bundle or (self.batch and kind == "decision"):
                if pending_bytes + len(payload) > MAX_DECISION_BATCH_BYTES and (pending or bundled):
                    await self._send_held(pending, bundled)
                    pending_bytes = 0
                if self.bundle:
                    bundled.append(message)
                else:
                    pending.append(message.decision)
                pending_bytes += len(payload)
                if len(pending) + len(bundled) >= MAX_DECISION_BATCH:
                    await self._send_held(pending, bundled)
                    pending_bytes = 0
                continue
            if pending:  # the decisions before this message go first
                await self._send_held(pending, bundled)
                pending_bytes = 0
            await self.send(message)
        if pending or bundled:
            await self._send_held(pending, bundled)

    # ------------------------------------------------------------ the clock

    def _start_clock(self, decision: pb.DecisionRequest) -> None:
        """The request is about to be written to the stream: its time starts now."""
        now = now_ms()
        budget = decision.deadline_ms  # the worker's time for it (the decision's move time and bank)
        decision.deadline_unix_ms = now + budget
        accept_until = now + budget + int(self.lag.grant(decision.match_id))
        request = OpenRequest(decision.match_id, now + budget, accept_until, time.monotonic(),
                              budget_ms=budget)
        loop = asyncio.get_running_loop()
        request.timer = loop.call_later((accept_until - now) / 1000, self._on_deadline,
                                        decision.request_id, loop.time() + (accept_until - now) / 1000)
        self.open[decision.request_id] = request
        self.open_in.setdefault(decision.match_id, set()).add(decision.request_id)

    def _on_deadline(self, rid: str, due: float) -> None:
        request = self.open.get(rid)
        if request is None or request.expired:
            return
        loop = asyncio.get_running_loop()
        late = loop.time() - due
        if late > 0.05 and not request.stretched:
            # this loop stalled: an answer may be waiting, unread, in the stream; read it first
            request.stretched = True
            request.accept_until += int(late * 1000)
            request.timer = loop.call_later(late, self._on_deadline, rid, loop.time() + late)
            return
        if request.awaiting:
            return  # the worker's verdict on an answer is on its way; a Rejection brings us back
        early = request.remaining_ms()
        if early > 0:  # (asyncio runs a timer up to its clock's resolution early)
            request.timer = loop.call_later(early / 1000, self._on_deadline, rid, loop.time() + early / 1000)
            return
        self._expire(rid, request)

    def _rejected(self, rid: str, final: bool = False) -> None:
        """The worker refused an answer to ``rid``: the bot may answer again until the deadline,
        and if that passed meanwhile, the worker is told now. After a ``final`` Rejection (the
        8th) the decision is over: further answers get a Rejection ``decided``."""
        request = self.open.get(rid)
        if request is None:
            return
        request.awaiting = False
        if final:
            request.decided = request.expired = True  # the worker has its verdict: no EXPIRE
            if request.timer is not None:
                request.timer.cancel()
            return
        if now_ms() > request.accept_until and not request.expired:
            self._expire(rid, request)

    def _remember_closed(self, rid: str, why: str) -> None:
        self.closed[rid] = why
        if len(self.closed) > CLOSED_KEPT:
            del self.closed[next(iter(self.closed))]

    def _expire(self, rid: str, request: OpenRequest, tries: int = 0) -> None:
        request.expired = True
        posted = self.relay.expire(self.address, self.conn_id, rid, request.edge_ms())

        def done(future: asyncio.Future[Any]) -> None:
            exc = None if future.cancelled() else future.exception()
            if exc is None or self.open.get(rid) is not request:
                return
            if tries + 1 >= EXPIRE_TRIES:
                log.error("bot %s: the deadline of request %s could not be told to Redis: %s",
                          self.bot_id, rid, exc)
                return
            if tries == 0:
                log.warning("bot %s: Redis did not take a deadline's verdict (%s); trying again",
                            self.bot_id, exc)
            asyncio.get_running_loop().call_later(EXPIRE_RETRY_S, self._expire, rid, request, tries + 1)

        posted.add_done_callback(done)

    async def _ping(self) -> None:
        self._ping_nonce += 1
        self._pings[self._ping_nonce] = time.monotonic()
        if len(self._pings) > 16:  # never answered: forgotten
            del self._pings[min(self._pings)]
        await self.send(pb.ArenaMessage(ping=pb.Ping(nonce=self._ping_nonce)))

    async def _send_held(self, pending: list[pb.DecisionRequest], bundled: list[pb.ArenaMessage]) -> None:
        """Send the held decisions (one DecisionBatch) or messages (one ArenaBundle), and empty
        the lists. One alone goes as itself: a batch of one adds nothing."""
        if pending:
            await self._send_decisions(pending)
            pending.clear()
        if len(bundled) == 1:
            await self.send(bundled[0])
        elif bundled:
            await self.send(pb.ArenaMessage(bundle=pb.ArenaBundle(messages=bundled)))
        bundled.clear()

    async def _send_decisions(self, requests: list[pb.DecisionRequest]) -> None:
        """One DecisionBatch (a lone request: a plain DecisionRequest, as a batch adds nothing)."""
        if len(requests) == 1:
            await self.send(pb.ArenaMessage(decision=requests[0]))
        else:
            await self.send(pb.ArenaMessage(decisions=pb.DecisionBatch(requests=requests)))

    async def _keep_alive(self, presence: Presence) -> None:
        interval = self.keepalive_ms / 1000
        while True:
            await asyncio.sleep(interval)
            if not await presence.heartbeat():
                raise SessionEnd("replaced", f"bot {self.bot.name!r} has a newer stream; this one is closed")
            silent = time.monotonic() - self.last_seen
            if silent > 3 * interval:
                raise SessionEnd("keepalive_timeout", f"no message from the bot for {silent:.1f} s")
            now = now_ms()
            past = [(r, o) for r, o in self.open.items() if o.accept_until + ANSWER_GRACE_MS < now]
            for rid, request in past:
                del self.open[rid]
                self.answers.pop(rid, None)
                self._remember_closed(rid, f"too late: the deadline passed {now - request.deadline} ms ago")
                ids = self.open_in.get(request.match_id)
                if ids is not None:
                    ids.discard(rid)
                    if not ids:
                        del self.open_in[request.match_id]
            await self._count_limited()
            await self._ping()

    async def _count_limited(self) -> None:
        """Add the messages held back since the last time to the metric, and log them."""
        for limit, held in self.limited.items():
            if held:
                self.limited[limit] = 0
                log.warning("bot %s stream %s: %d messages held back (%s limit)",
                            self.bot.name, self.conn_id, held, limit)
                await self.relay.count(STREAM_LIMITED.key, limited_field(self.bot.name, limit), held)

    # ------------------------------------------------------------ bot -> arena

    async def _read_bot(self) -> None:
        while True:
            wait = self.bucket.take()
            if wait > 0:
                self.limited["rate"] += 1
                await asyncio.sleep(wait)
            message = await self._recv()
            if message is None:
                return
            self.last_seen = time.monotonic()
            await self.on_bot_message(message)

    async def on_bot_message(self, message: pb.BotMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "action":
            answers: list[Answer] = []
            await self._on_action(message.action, answers)
            self._post(answers)
        elif kind == "actions":
            await self._on_actions(message.actions.actions)
        elif kind == "ping":
            await self.send(pb.ArenaMessage(pong=pb.Pong(nonce=message.ping.nonce)))
        elif kind == "pong":
            sent = self._pings.pop(message.pong.nonce, None)
            if sent is not None:  # (last_seen was renewed by any message)
                self.lag.sample((time.monotonic() - sent) * 1000)
        elif kind == "hello":
            await self.send(error_message(
                "bad_message", "Hello was already received on this stream", closes=False
            ))
        else:
            await self.send(error_message(
                "bad_message", "empty BotMessage: set one of hello, action, actions, ping, pong", closes=False
            ))

    async def _on_actions(self, actions: Sequence[pb.Action]) -> None:
        """An ActionBatch: each Action as if it came alone; their answers in one pipeline."""
        count = len(actions)
        if count == 0:
            await self.send(error_message(
                "bad_message", "empty ActionBatch: send at least one Action", closes=False
            ))
            return
        if count > MAX_ACTION_BATCH:
            await self.send(error_message(
                "bad_message",
                f"ActionBatch of {count} Actions: at most {MAX_ACTION_BATCH} in one message; "
                "none of them was read (send them in several messages)",
                closes=False,
            ))
            return
        wait = self.bucket.take(count - 1)  # the message took one token already: one per Action
        if wait > 0:
            self.limited["rate"] += count - 1
            await asyncio.sleep(wait)
        answers: list[Answer] = []
        for action in actions:
            await self._on_action(action, answers)
        self._post(answers)

    async def _on_action(self, action: pb.Action, answers: list[Answer]) -> None:
        """Check one Action: a Rejection is sent at once, an answer is added to ``answers``."""
        def reject(code: str, reason: str) -> Awaitable[None]:
            return self.send(
                pb.ArenaMessage(
                    rejection=pb.Rejection(
                        request_id=action.request_id,
                        match_id=action.match_id,
                        action=action.action,
                        reason=reason,
                        code=code,
                    )
                )
            )

        request = self.open.get(action.request_id)
        if request is None:
            closed = self.closed.get(action.request_id)
            if closed is not None:
                await reject(REJECT_TOO_LATE, closed)
                return
            await reject(REJECT_UNKNOWN,
                         f"unknown request_id {action.request_id[:64]!r}: no open request of this bot has it")
            return
        match_id = request.match_id
        if action.match_id and action.match_id != match_id:
            await reject(
                REJECT_WRONG_MATCH,
                f"request {action.request_id!r} belongs to match {match_id!r}, not {action.match_id[:64]!r}",
            )
            return
        if request.decided:
            self.limited["answers"] += 1
            await reject(REJECT_DECIDED, f"the decision of request {action.request_id!r} is over: "
                         f"{MAX_REJECTIONS} answers were rejected and the first legal action was played")
            return
        now = now_ms()
        if request.expired or now - request.accept_until - LOOP_LAG.recent_ms() > 0:
            await reject(REJECT_TOO_LATE, f"too late: the deadline passed {now - request.deadline} ms ago")
            return
        if len(action.action) > MAX_ACTION_LENGTH:
            await reject(REJECT_TOO_LONG,
                         f"action too long ({len(action.action)} characters; at most {MAX_ACTION_LENGTH})")
            return
        answered = self.answers.get(action.request_id, 0)
        if answered >= MAX_REJECTIONS:  # the answers forwarded decide it: one legal, or the 8th rejected
            self.limited["answers"] += 1
            await reject(REJECT_DECIDED,
                         f"request {action.request_id!r} has had its {MAX_REJECTIONS} answers: "
                         "its decision is the first legal one of them, else the fallback")
            return
        self.answers[action.request_id] = answered + 1
        self.lag.use(match_id, now - request.deadline)
        request.awaiting = True
        note = reported_note(action.note) if action.note else None
        answers.append(Answer(self.address, action.request_id, action.action, 60_000,
                              reported_think_ms(action.think_ms), request.edge_ms(), note))

    def _post(self, answers: list[Answer], tries: int = 0) -> None:
        """Hand answers to Redis at once: those of one message (and of every stream that
        answered in this turn of the loop) leave in one pipelined write. Answers Redis did not
        take (it is restarting) are handed again every :data:`EXPIRE_RETRY_S`, while their
        requests are open: the bot answered in time, and its answer is not lost for the arena's
        outage (a Redis outage is said once, by the process's ``redis_outage``)."""
        if not answers:
            return
        count = len(answers)
        posted = self.relay.post_answers(answers)
        self._posting.add(posted)

        def confirmed(done: asyncio.Future[Any]) -> None:
            self._posting.discard(done)
            exc = None if done.cancelled() else done.exception()
            if exc is None:
                redis_outage.ok()
                return
            if is_outage(exc):
                redis_outage.failed("the bots' answers", exc)
            else:
                log.error("bot %s: %d answers could not be handed to Redis: %s", self.bot_id, count, exc)
            still = [a for a in answers if a.request_id in self.open]
            if still and tries + 1 < EXPIRE_TRIES:  # (also after the stream closed: answered in time)
                asyncio.get_running_loop().call_later(EXPIRE_RETRY_S, self._post, still, tries + 1)

        posted.add_done_callback(confirmed)
