"""The worker-side call: ask a bot for a decision, get an action or a typed fault.

>>> client = DecisionClient(redis_url)                                        # doctest: +SKIP
>>> decision = client.request(address, match_id, "merde", seat, state.observation(seat),
...                           state.legal_actions(), deadline_ms=1000, check=legality_check(state))
>>> decision.action if decision.ok else decision.fault                         # doctest: +SKIP

``check(action)`` returns ``None`` when the action is legal, else the engine's reason (the
match loop's :func:`atout_arena.core.match.legality_check`). An
illegal answer goes back to the bot as a Rejection with that reason, and the call keeps
waiting for a legal answer until the deadline.

The clock runs at the edge: ``deadline_ms`` is the decision's time, and it starts when the game
server writes the request to the bot's stream (``atout_arena.gateway.session``), which also
says when it passed. So nothing this worker, Redis or a game server's queue delays is charged.
While it waits, the call watches the bot's stream (:data:`atout_arena.core.relay.STREAM_STATE`):

- live: the edge has the request (a bot that reconnected elsewhere was sent it again there,
  its clock afresh): wait for its answer or its verdict;
- away (the bot has no stream: it left, or never came): wait up to ``grace_s`` for it; back,
  it is sent the request afresh; not back, ``disconnected``;
- cut off by the arena (its game server is dead, hung or stopped, the arena moved it, or Redis
  is unreachable): the clock is stopped and nothing is charged; the call waits up to
  ``outage_s`` for the bot to be back, then raises :class:`ArenaOutage`: the match is voided and
  played again from its seed.

Faults (:class:`Fault`), only ever the bot's own:

- ``disconnected``: the bot had no stream, or dropped it while its game server was healthy,
  and was not back within ``grace_s`` (or its token was revoked);
- ``illegal``: the deadline passed after at least one illegal answer, or the bot gave
  :data:`~atout_arena.core.relay.MAX_REJECTIONS` illegal answers (faulted at once);
- ``timeout``: the deadline passed at the edge with no answer.

Concurrency: :class:`AsyncDecisionClient` is the one client; a worker process plays all its
matches on one event loop with it, every request's commands pipelined on one connection and
every reply read from one mailbox. :class:`DecisionClient` is the same client for callers on
threads (it runs it on an event loop of its own). The Redis keys and scripts are described in
:mod:`atout_arena.core.relay`.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import json
import logging
import math
import secrets
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

import redis

from atout._loop import new_event_loop
from atout.v1 import atout_pb2 as pb
from atout_arena.core.keys import reply_key
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.relay import (
    COMMAND_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    MAX_DEADLINE_MS,
    MAX_REJECTIONS,
    REPLY_DISCONNECTED,
    REPLY_EXPIRED,
    REQ_GRACE_MS,
    STREAM_AWAY,
    STREAM_OUTAGE,
    cancel_command,
    live_conn_command,
    notify_command,
    notify_if_started_command,
    now_ms,
    parse_reply,
    push_decision_command,
    push_decisions_command,
    reject_command,
    reject_final_command,
    stream_state_command,
)
from atout_arena.core.vocabulary import Fault
from atout_arena.core.wire import Wire, is_outage, redis_outage, resolve
from atout_workers.fastjson import dumps_text

log = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")
Check = Callable[[str], str | None]
RECONNECT_POLL_S = 0.1  # while waiting for a bot to come back
MAX_ASKS = 4  # a decision is asked again (a request the arena lost) at most this many times
OUTAGE_LIMIT_S = 300.0  # ATOUT_OUTAGE_LIMIT_S's default
# A request's stream is looked at when its time plus this has passed with no word from the edge
# (the edge's lag compensation, at most 0.5 s, and the relay's own time), then every WATCH_S.
EDGE_SLACK_S = 2.0
WATCH_S = 1.0
# A request held by a live edge this long past its time with no verdict was lost by the arena
# (e.g. the edge could not tell Redis): it is asked again, nothing charged.
STUCK_S = 30.0
REDIS_RECENT_S = 60.0  # after Redis was unreachable, a bot away is not charged for this long


class ArenaOutage(Exception):  # noqa: N818 - what happened, not an error of the caller
    """A bot stayed cut off by the arena's own outage longer than the outage limit: the match
    is voided (played again from its seed), never stored as a result."""


@dataclass(frozen=True)
class Decision:
    """The outcome of one request: ``action`` (legal) or ``fault``, never both."""

    request_id: str
    action: str | None
    fault: Fault | None
    think_ms: float  # from the request pushed to the legal answer received (or to the fault)
    rejected: tuple[tuple[str, str], ...] = ()  # (illegal answer, reason given), in order
    bot_think_ms: float | None = None  # the bot's own time for the legal answer, as it told it
    note: str | None = None  # the bot's note with the legal answer

    @property
    def ok(self) -> bool:
        return self.fault is None


def new_request_id() -> str:
    return secrets.token_hex(12)


class _Exchange:
    """One request's logic without I/O (the client below does the Redis calls)."""

    def __init__(
        self,
        address: str,
        match_id: str,
        game: str,
        seat: int,
        observation: dict[str, Any] | str,
        legal_actions: Sequence[str],
        deadline_ms: int,
        check: Check,
        max_deadline_ms: int,
        request_id: str | None = None,
        hold_ms: int = 0,
    ) -> None:
        if not 0 < deadline_ms <= max_deadline_ms:
            raise ValueError(f"deadline_ms={deadline_ms}: must be in 1..{max_deadline_ms}")
        self.address = address
        self.check = check
        self.request_id = request_id or new_request_id()
        self.reply_key = reply_key(self.request_id)
        self.started = time.perf_counter()
        self.deadline_ms = deadline_ms
        # the request is kept for its edge (and for a bot's reconnection) until the worker gives
        # up on it: its time, the outage limit and a margin; it is dropped as soon as decided
        self.hold_ms = deadline_ms + hold_ms + REQ_GRACE_MS
        self.hold_until_ms = now_ms() + self.hold_ms  # its score in ``pending``: kept until then
        self.ttl_ms = self.hold_ms
        self.rejected: list[tuple[str, str]] = []
        self.final_rejection = b""  # the Rejection of the last allowed illegal answer (final)
        self.request = pb.ArenaMessage(
            decision=pb.DecisionRequest(
                request_id=self.request_id,
                match_id=match_id,
                game=game,
                seat=seat,
                observation_json=observation if isinstance(observation, str) else dumps_text(observation),
                legal_actions=legal_actions,
                deadline_ms=deadline_ms,  # the edge sets deadline_unix_ms when it sends it
            )
        ).SerializeToString()
        self.match_id = match_id

    def push(self) -> tuple[Any, ...]:
        return push_decision_command(
            self.address, self.request_id, self.hold_until_ms, self.request, self.ttl_ms
        )

    def _elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def outcome(self, fault: Fault | None, action: str | None = None,
                bot_ms: float | None = None, edge_ms: float | None = None,
                note: str | None = None) -> Decision:
        think = self._elapsed_ms() if edge_ms is None else edge_ms
        return Decision(self.request_id, action, fault, think, tuple(self.rejected), bot_ms, note)

    def on_reply(self, value: bytes) -> Decision | tuple[Any, ...] | None:
        """A Decision when done; the REJECT command to send (then wait again); or None after
        the last allowed illegal answer (send :meth:`final_command`: its final Rejection and the
        request cancelled; then fault it ``illegal``)."""
        if value == REPLY_DISCONNECTED:  # its token was revoked
            return self.outcome(Fault.DISCONNECTED)
        if value.startswith(REPLY_EXPIRED):  # the edge's deadline passed
            return self.outcome(Fault.ILLEGAL if self.rejected else Fault.TIMEOUT,
                                edge_ms=float(value[1:] or 0) or None)
        reply = parse_reply(value)
        reason = self.check(reply.action)
        if reason is None:
            return self.outcome(None, reply.action, reply.bot_ms, reply.edge_ms, reply.note)
        self.rejected.append((reply.action, reason))
        final = len(self.rejected) >= MAX_REJECTIONS
        action = reply.action
        rejection = pb.ArenaMessage(
            rejection=pb.Rejection(
                request_id=self.request_id, match_id=self.match_id, action=action, reason=reason,
                code="illegal", final=final,
            )
        ).SerializeToString()
        if final:
            self.final_rejection = rejection
            return None
        return reject_command(
            self.address, self.request_id, self.hold_until_ms, self.request, rejection, self.ttl_ms
        )

_AWAY = STREAM_AWAY.decode()
_OUTAGE = STREAM_OUTAGE.decode()


def _state(value: Any) -> str:
    """A stream state (relay's STREAM_STATE, PUSH_DECISION): its live connection id, or
    ``A`` (away) or ``O`` (outage)."""
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class _Watch:
    """A decision's allowance of the arena's outages (its re-asks share it)."""

    outage_until: float  # time.monotonic(): past it, ArenaOutage


def _match_start(
    match_id: str, game: str, seat: int, players: int, options: dict[str, Any], seat_names: Sequence[str],
    seat_versions: Sequence[str] = (),
) -> bytes:
    return pb.ArenaMessage(
        match_start=pb.MatchStart(
            match_id=match_id,
            game=game,
            seat=seat,
            players=players,
            options_json=json.dumps(options),
            seat_names=list(seat_names),
            seat_versions=list(seat_versions),
        )
    ).SerializeToString()


def _match_end(match_id: str, seat: int, scores: Sequence[int], ranking: Sequence[int], reason: str,
               faults: Mapping[str, int] | None = None) -> bytes:
    """A MatchEnd; ``faults``: the seat's faults in this run by kind (MatchEnd.faults)."""
    return pb.ArenaMessage(
        match_end=pb.MatchEnd(
            match_id=match_id, seat=seat, scores=list(scores), ranking=list(ranking), reason=reason,
            faults={kind: count for kind, count in (faults or {}).items() if count > 0},
        )
    ).SerializeToString()


# ---------------------------------------------------------------------------- on an event loop

MAILBOX_BLOCK_S = 1  # the mailbox reader's BLPOP timeout (it loops)
MAILBOX_BATCH = 1024  # replies taken per read after the first


class _Deadlines:
    """The waits of every request in flight on one event loop, woken at their deadlines by one
    timer at a time (the earliest), not one ``call_later`` handle each (a tenth of a worker's
    loop was making and cancelling those). An entry whose request was answered stays in the
    heap until its time comes or until answered entries are half the heap (deadlines include
    the time bank, up to minutes): then the heap is rebuilt without them, as asyncio does with
    its cancelled timers."""

    COMPACT_FROM = 1024  # entries; a smaller heap is left alone

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._numbers = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self._answered = 0  # entries in the heap whose waiter is done (about: see answered())

    def add(self, loop: asyncio.AbstractEventLoop, when: float, waiter: asyncio.Future[None]) -> None:
        """Wake ``waiter`` (set it to None) at loop time ``when`` unless it is done by then."""
        heapq.heappush(self._heap, (when, next(self._numbers), waiter))
        if when < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = when
            self._timer = loop.call_at(when, self._fire, loop)

    def answered(self) -> None:
        """A waiter was woken by its reply before its deadline (its entry is dead weight now)."""
        self._answered += 1
        heap = self._heap
        if self._answered * 2 > len(heap) >= self.COMPACT_FROM:
            self._heap = [entry for entry in heap if not entry[2].done()]
            heapq.heapify(self._heap)
            self._answered = 0

    def __len__(self) -> int:
        return len(self._heap)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        heap = self._heap
        now = loop.time() + getattr(loop, "_clock_resolution", 0.0)  # asyncio runs timers that early
        while heap and heap[0][0] <= now:
            waiter = heapq.heappop(heap)[2]
            if not waiter.done():
                waiter.set_result(None)
        if heap:
            self._timer_at = heap[0][0]
            self._timer = loop.call_at(self._timer_at, self._fire, loop)
        else:
            self._timer_at, self._timer = math.inf, None


class _Slot:
    """The replies of one request in flight, as the mailbox reader hands them over."""

    __slots__ = ("deadlines", "values", "waiter")

    def __init__(self, deadlines: _Deadlines) -> None:
        self.values: collections.deque[bytes] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None
        self.deadlines = deadlines

    def put(self, value: bytes) -> None:
        self.values.append(value)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def get(self, timeout_s: float) -> bytes | None:
        """The next reply, or None after ``timeout_s``."""
        if not self.values:
            loop = asyncio.get_running_loop()
            self.waiter = waiter = loop.create_future()
            self.deadlines.add(loop, loop.time() + timeout_s, waiter)
            try:
                await waiter
            finally:
                self.waiter = None
            if self.values:
                self.deadlines.answered()
        return self.values.popleft() if self.values else None


class AsyncDecisionClient:
    """The decision client: one per event loop playing many matches at once.

    No connection per request: every command goes
    through one pipelined :class:`~atout_arena.core.wire.Wire` (the pushes of all matches that
    moved in one turn of the loop leave in one write), and every reply comes back through one
    mailbox list of this client (request ids ``m<mailbox>.<nonce>``, see
    :func:`atout_arena.core.keys.reply_key`), read by one task with ``BLPOP`` + ``LPOP <count>``.
    So a decision costs the worker one pipelined command and a share of one read, whatever the
    number of matches in flight.
    """

    def __init__(self, redis_url: str, *, max_deadline_ms: int = MAX_DEADLINE_MS,
                 outage_limit_s: float = OUTAGE_LIMIT_S) -> None:
        self.redis_url = redis_url
        self.max_deadline_ms = max_deadline_ms
        self.outage_limit_s = outage_limit_s
        self._redis_down = False
        self._redis_seen_down = -math.inf  # time.monotonic() when Redis was last seen unreachable
        self._mailbox_failing = False
        self.wire = Wire(redis_url, COMMAND_TIMEOUT_S)
        self.mailbox = secrets.token_hex(6)
        self._numbers = itertools.count(1)
        self.mailbox_key = reply_key(f"m{self.mailbox}.0")
        self._slots: dict[bytes, _Slot] = {}
        self._deadlines = _Deadlines()
        self._reading = False
        self._closed = False
        self._pushes: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []  # this turn's, not sent yet
        self._mailbox_wire = Wire(redis_url, COMMAND_TIMEOUT_S + MAILBOX_BLOCK_S)
        self._cancelling: set[asyncio.Future[None]] = set()  # requests of stopped matches, being cancelled

    def _new_request_id(self) -> str:
        # unique under this process's random mailbox; a request id is no secret (a stream may
        # answer only the requests it was sent)
        return f"m{self.mailbox}.{next(self._numbers):x}"

    def _start(self) -> None:
        if not self._reading:
            self._reading = True
            self._read_mailbox()

    def _read_mailbox(self) -> None:
        """Ask for the next replies: ``BLPOP`` (waits up to :data:`MAILBOX_BLOCK_S`), then
        ``LPOP <count>``, on the mailbox's own connection. Both replies are handled inside the
        connection's ``data_received`` (:meth:`~atout_arena.core.wire.Wire.call_then`): each
        reply goes to its request's slot at once, then the next read is asked for. So a reply
        wakes its match one turn of the loop after it arrives (a reader task took three)."""
        if self._closed:
            return
        popped: list[Any] = []

        def on_blpop(reply: Any, exc: BaseException | None) -> None:
            popped.append(exc if exc is not None else reply)

        def on_lpop(more: Any, exc: BaseException | None) -> None:
            if self._closed:
                return
            first = popped[0] if popped else None
            loop = asyncio.get_running_loop()
            try:
                entries = [first[1]] if first and not isinstance(first, BaseException) else []
                if exc is None and not isinstance(first, BaseException):
                    entries += more or []
                slots = self._slots
                for entry in entries:  # (a reply BLPOP took is delivered even if LPOP failed)
                    rid, _, value = entry.partition(b" ")
                    slot = slots.get(rid)
                    if slot is not None:  # else: a late reply to a request given up
                        slot.put(value)
            finally:
                error = exc or (first if isinstance(first, BaseException) else None)
                if error is not None:
                    self._redis_seen_down = time.monotonic()
                    # said once per outage, for the whole process (core.wire.redis_outage)
                    if is_outage(error):
                        redis_outage.failed("the replies' mailbox", error)
                    elif not self._mailbox_failing:
                        log.warning("reading the replies' mailbox failed (%s); retrying", error)
                    self._mailbox_failing = True
                    loop.call_later(0.2, self._read_mailbox)
                else:
                    if self._mailbox_failing:
                        self._mailbox_failing = False
                        redis_outage.ok()
                    # the next read is asked for after the matches just woken have run: their
                    # pushes leave first (a write wakes Redis, which on a 2-core machine may take
                    # the CPU from this process for tens of microseconds, and a push is what a
                    # bot waits for)
                    loop.call_soon(self._read_mailbox)

        wire = self._mailbox_wire
        wire.call_then(on_blpop, "BLPOP", self.mailbox_key, MAILBOX_BLOCK_S)
        wire.call_then(on_lpop, "LPOP", self.mailbox_key, MAILBOX_BATCH)

    def _push(self, command: tuple[Any, ...]) -> asyncio.Future[Any]:
        """Send a :func:`push_decision_command`; the future gets its result. A push made while
        the connection is idle leaves at once (one request in flight waits for nothing); the
        others of one turn of the loop go together at its end, in one ``PUSH_DECISIONS`` call
        (a script call costs Redis far more than the commands in it)."""
        wire = self.wire
        if not self._pushes and wire.idle:
            return wire.eval_soon(*command)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pushes.append((command, future))
        if len(self._pushes) == 1:
            asyncio.get_running_loop().call_soon(self._send_pushes)
        return future

    def _send_pushes(self) -> None:
        pushes, self._pushes = self._pushes, []  # (after close: the wire fails them)

        def settle(replies: Any, exc: BaseException | None) -> None:
            for i, (_, future) in enumerate(pushes):
                resolve(future, None if exc else replies[i], exc)

        self.wire.eval_then(settle, *push_decisions_command([command for command, _ in pushes]))
        self.wire.flush()

    async def request(
        self, address: str, match_id: str, game: str, seat: int, observation: dict[str, Any] | str,
        legal_actions: Sequence[str], deadline_ms: int, check: Check, grace_s: float = 0.0,
    ) -> Decision:
        """Ask ``address`` for its action in ``match_id``: ``deadline_ms`` at the edge, plus up
        to ``grace_s`` for a bot that is away to come back, plus up to the outage limit for one
        the arena cut off (then :class:`ArenaOutage`). See the module's text."""
        self._start()
        watch = _Watch(time.monotonic() + self.outage_limit_s)
        for _ in range(MAX_ASKS):
            ex = _Exchange(address, match_id, game, seat, observation, legal_actions, deadline_ms, check,
                           self.max_deadline_ms, request_id=self._new_request_id(),
                           hold_ms=int(self.outage_limit_s * 1000))
            decision = await self._ask_once(ex, grace_s, watch)
            if decision is not None:
                return decision
        raise ArenaOutage(f"match {match_id}: the arena lost the request to {address} {MAX_ASKS} times")

    async def _ask_once(self, ex: _Exchange, grace_s: float, watch: _Watch) -> Decision | None:
        """One request, followed to its decision; None when the arena lost it (ask again)."""
        key = ex.request_id.encode()
        slot = self._slots[key] = _Slot(self._deadlines)
        pushed: asyncio.Future[Any] | None = None
        try:
            try:
                pushed = self._push(ex.push())
                state = await pushed
            except (redis.RedisError, OSError) as exc:
                await self._redis_outage(watch, exc)
                return None  # pushed or not, it is asked again once Redis is back
            return await self._follow(ex, slot, _state(state), grace_s, watch)
        except asyncio.CancelledError:  # its match was stopped: the request goes from the edge too
            cancelling = asyncio.ensure_future(self._cancel(ex.address, ex.request_id))
            self._cancelling.add(cancelling)
            cancelling.add_done_callback(self._cancelled)
            raise
        finally:
            del self._slots[key]
            if pushed is not None and not pushed.done():  # given up (cancelled): its error is nobody's
                pushed.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def _follow(self, ex: _Exchange, slot: _Slot, state: str, grace_s: float,
                      watch: _Watch) -> Decision | None:
        """Wait for the request's answers and verdict, watching its stream (module's text)."""
        address, rid, wire = ex.address, ex.request_id, self.wire
        conn = state if state not in (_AWAY, _OUTAGE) else ""
        conn_since = time.monotonic()  # since when the request has been with this live stream
        wait = ex.deadline_ms / 1000 + EDGE_SLACK_S
        away_until: float | None = None  # the grace of a bot that is away
        lost = 0  # watches that found the request neither pending nor answered
        if state == _AWAY and grace_s <= 0:  # a bot known gone is not waited for
            await self._cancel(address, rid)
            return ex.outcome(Fault.DISCONNECTED)
        while True:
            if state in (_AWAY, _OUTAGE):
                wait = RECONNECT_POLL_S
            value = await slot.get(wait)
            if value is not None:
                step = ex.on_reply(value)
                if isinstance(step, Decision):
                    return step
                if step is None:  # the last illegal answer allowed: its final Rejection, then the fault
                    await wire.eval(*reject_final_command(address, rid, ex.final_rejection))
                    return ex.outcome(Fault.ILLEGAL)
                await wire.eval(*step)  # the Rejection: then wait again
                continue
            try:
                now_state, pending = await wire.eval(*stream_state_command(address, rid))
            except (redis.RedisError, OSError) as exc:
                await self._redis_outage(watch, exc)
                return None  # Redis may have come back empty: asked again
            state = _state(now_state)
            now = time.monotonic()
            if state == _OUTAGE:  # the arena's doing: the clock is stopped
                away_until = None
                if now >= watch.outage_until:
                    await self._cancel(address, rid)
                    raise ArenaOutage(f"{address} cut off by an outage of the arena for over "
                                      f"{self.outage_limit_s:.0f} s")
                continue
            if state == _AWAY:
                if away_until is None:
                    away_until = now + grace_s
                if now >= away_until:
                    if self._redis_restarted_lately():  # the presences may have been lost with it
                        away_until = now + grace_s
                        continue
                    await self._cancel(address, rid)
                    return ex.outcome(Fault.DISCONNECTED)
                continue
            away_until = None
            if state != conn:  # (back) on another stream: its edge was sent the request afresh
                conn, conn_since, lost = state, now, 0
                wait = ex.deadline_ms / 1000 + EDGE_SLACK_S
                continue
            wait = WATCH_S
            if not pending:  # answered (its reply on its way), or lost with a Redis that restarted
                lost += 1
                if lost >= 3:
                    return None
            elif now - conn_since > ex.deadline_ms / 1000 + STUCK_S:
                log.warning("request %s to %s: no verdict from its edge %.0f s after its time; asked again",
                            rid, address, now - conn_since - ex.deadline_ms / 1000)
                await self._cancel(address, rid)
                return None

    def _cancelled(self, done: asyncio.Future[None]) -> None:
        """A stopped match's request withdrawn (or not: it expires by itself; a client closed
        meanwhile is no error of anyone's)."""
        self._cancelling.discard(done)
        if not done.cancelled():
            done.exception()

    def _redis_restarted_lately(self) -> bool:
        """Whether this client saw Redis unreachable less than :data:`REDIS_RECENT_S` ago: a
        Redis that restarted may have lost the presences (restarted empty, or a presence lapsed
        while it was away), and the bots' game servers take theirs back at their next beat;
        until then a bot reads as away through no doing of its own."""
        return time.monotonic() - self._redis_seen_down < REDIS_RECENT_S

    async def _cancel(self, address: str, request_id: str) -> None:
        try:
            await self.wire.eval(*cancel_command(address, request_id))
        except (redis.RedisError, OSError) as exc:  # it expires by itself
            log.debug("request %s not cancelled: %s", request_id, exc)

    async def _redis_outage(self, watch: _Watch, exc: BaseException) -> None:
        """Redis is unreachable: wait for it (the clock stopped) up to the outage limit."""
        self._redis_seen_down = time.monotonic()
        if not self._redis_down:
            self._redis_down = True
            redis_outage.failed("a decision (it waits, its clock stopped)", exc)
        while True:
            if time.monotonic() >= watch.outage_until:
                raise ArenaOutage(f"Redis unreachable for over {self.outage_limit_s:.0f} s") from exc
            await asyncio.sleep(0.5)
            try:
                await self.wire.call("PING")
            except (redis.RedisError, OSError):
                continue
            if self._redis_down:
                self._redis_down = False
                redis_outage.ok()
            return

    async def wait_connected(self, address: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            if await self.is_connected(address):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            await asyncio.sleep(min(RECONNECT_POLL_S, left))

    async def is_connected(self, address: str) -> bool:
        return bool(await self.wire.eval(*live_conn_command(address)))

    async def match_start(self, address: str, match_id: str, game: str, seat: int, players: int,
                          options: dict[str, Any], seat_names: Sequence[str] = ()) -> None:
        message = _match_start(match_id, game, seat, players, options, seat_names)
        await self.wire.eval(*notify_command(address, "start", match_id, message))

    async def match_end(self, address: str, match_id: str, seat: int, scores: Sequence[int],
                        ranking: Sequence[int], reason: str = "finished") -> None:
        message = _match_end(match_id, seat, scores, ranking, reason)
        await self.wire.eval(*notify_command(address, "end", match_id, message))

    async def close(self) -> None:
        self._closed = True
        await self.wire.close()
        await self._mailbox_wire.close()


async def _wind_down(client: AsyncDecisionClient | None) -> None:
    """The requests still in flight on this loop are cancelled, then the client is closed."""
    mine = asyncio.current_task()
    waiting = [task for task in asyncio.all_tasks() if task is not mine]
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    if client is not None:
        await client.close()


def _blocking(
    method: Callable[Concatenate[AsyncDecisionClient, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[DecisionClient, P], T]:
    """``method`` of :class:`AsyncDecisionClient`, run on the :class:`DecisionClient`'s event
    loop and waited for."""

    def blocking(self: DecisionClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._call(lambda client: method(client, *args, **kwargs))

    blocking.__doc__ = f"{method.__doc__}\n\n(Waited for on the caller's thread.)"
    return blocking


class DecisionClient:
    """Blocking and thread-safe: the event loop's client (:class:`AsyncDecisionClient`, the one
    every worker process plays its matches with) for callers on threads (tests, tools), as
    python-chess's ``SimpleEngine`` wraps its asyncio engine: requests run on an event loop of
    its own, started on first use. The MatchStart / MatchEnd notifications a match's follow-ups
    send are plain Redis calls, on the caller's thread."""

    def __init__(self, redis_url: str, *, max_deadline_ms: int = MAX_DEADLINE_MS,
                 outage_limit_s: float = OUTAGE_LIMIT_S) -> None:
        self.redis_url = redis_url
        self.max_deadline_ms = max_deadline_ms
        self.outage_limit_s = outage_limit_s
        self.redis = sync_client(
            redis_url,
            socket_timeout=COMMAND_TIMEOUT_S,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
        )
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: AsyncDecisionClient | None = None

    def _call(self, work: Callable[[AsyncDecisionClient], Coroutine[Any, Any, T]]) -> T:
        """``work(client)`` on the event loop, waited for."""
        with self._lock:
            if self._loop is None:
                loop = new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="atout-decisions", daemon=True)
                thread.start()

                async def make() -> AsyncDecisionClient:  # its connections belong to the loop
                    return AsyncDecisionClient(self.redis_url, max_deadline_ms=self.max_deadline_ms,
                                               outage_limit_s=self.outage_limit_s)

                self._client = asyncio.run_coroutine_threadsafe(make(), loop).result()
                self._loop, self._thread = loop, thread
            loop, client = self._loop, self._client
        assert client is not None
        return asyncio.run_coroutine_threadsafe(work(client), loop).result()

    # AsyncDecisionClient's own, waited for on the caller's thread
    request = _blocking(AsyncDecisionClient.request)
    wait_connected = _blocking(AsyncDecisionClient.wait_connected)

    def match_start(
        self,
        address: str,
        match_id: str,
        game: str,
        seat: int,
        players: int,
        options: dict[str, Any],
        seat_names: Sequence[str] = (),
    ) -> None:
        """Tell the bot a match starts (sent again if it reconnects while the match runs)."""
        message = _match_start(match_id, game, seat, players, options, seat_names)
        self.redis.eval(*notify_command(address, "start", match_id, message))

    def match_starts(self, starts: Sequence[tuple[Any, ...]]) -> None:
        """:meth:`match_start` of each ``(address, match_id, game, seat, players, options,
        seat_names[, seat_versions])``, in one round trip."""
        pipe = self.redis.pipeline(transaction=False)
        for address, match_id, game, seat, players, options, seat_names, *versions in starts:
            message = _match_start(match_id, game, seat, players, options, seat_names, *versions)
            pipe.eval(*notify_command(address, "start", match_id, message))
        pipe.execute()

    def match_ends(self, ends: Sequence[tuple[Any, ...]]) -> None:
        """:meth:`match_end` of each ``(address, match_id, seat, scores, ranking, reason[,
        faults])`` (``faults``: the seat's by kind), in one round trip."""
        pipe = self.redis.pipeline(transaction=False)
        for address, match_id, seat, scores, ranking, reason, *faults in ends:
            message = _match_end(match_id, seat, scores, ranking, reason, *faults)
            pipe.eval(*notify_command(address, "end", match_id, message))
        pipe.execute()

    def match_end(
        self,
        address: str,
        match_id: str,
        seat: int,
        scores: Sequence[int],
        ranking: Sequence[int],
        reason: str = "finished",
    ) -> None:
        message = _match_end(match_id, seat, scores, ranking, reason)
        self.redis.eval(*notify_command(address, "end", match_id, message))

    def match_aborted(self, address: str, match_id: str, seat: int, players: int, reason: str) -> bool:
        """Tell the bot that a run of a match it was told had started is over without a result
        (``restarted``: it is played again from its seed; ``cancelled``: given up). Nothing is
        sent to a bot that was not told the match started, or was told its end. True when sent."""
        message = _match_end(match_id, seat, [0] * players, [0] * players, reason)
        return bool(self.redis.eval(*notify_if_started_command(address, match_id, message)))

    def is_connected(self, address: str) -> bool:
        """A live stream: present, on a game server that is alive."""
        return bool(self.redis.eval(*live_conn_command(address)))

    def close(self) -> None:
        """Close the client; a request still waiting on another thread ends with CancelledError
        (it is never left waiting on a stopped loop)."""
        with self._lock:
            loop, thread, client = self._loop, self._thread, self._client
            self._loop = self._thread = self._client = None
        try:
            if loop is not None and thread is not None:
                asyncio.run_coroutine_threadsafe(_wind_down(client), loop).result(10)
                loop.call_soon_threadsafe(loop.stop)
                thread.join(5)
                if not thread.is_alive():
                    loop.close()
        except Exception:  # closing anyway: the Redis connection below goes too
            log.exception("closing the decision client's event loop failed")
        finally:
            self.redis.close()
