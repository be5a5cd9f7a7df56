"""Play one stored match for real: claim it, play it through the bots, store its result once.

This is the body of the ``atout.play_match`` task, kept out of Celery so that it reads as plain
functions of the :class:`~atout_workers.world.World`. A worker process plays its matches as
coroutines on its event loop (:mod:`atout_workers.loop`), through :func:`play_on_loop`:

1. On the task's thread, :func:`claim`: :func:`atout_workers.store.claim_match` takes the match
   (queued, or running with a stale heartbeat) under a fresh lease id; anything else means
   another worker has it or had it: nothing to do. From then on the process's heartbeat thread
   keeps the lease alive.
2. On the loop, ``_play_and_store``: :func:`atout_arena.core.match.run_loop_async` plays
   the game, asking bots through :class:`atout_workers.decisions.AsyncDecisionClient`; steps are
   published to the spectators' channels while someone watches (:class:`Publisher`), through
   the process's event sink, which also adds up the decisions' metrics of all its matches. What
   blocks (the database, sync Redis) runs on the loop's threads, never on the loop itself.
3. :func:`atout_workers.store.store_result` stores the result, the action log and the ratings in
   one transaction, if the lease is still ours. After the commit: metrics, the bots' MatchEnd,
   the final spectator event, and the tournament's finalize when this was its last match.

A match can be stopped from outside at any point (its competition cancelled, a bot disabled
or gone from its ladder): the database says ``cancelled`` first, then a ``stop`` message on the
control channel reaches the process's :class:`StopListener`, which cancels the game's task,
even mid-decision; :func:`_stopped_from_outside` tells the bots and spectators.

:func:`run_match` is the same match, waited for on the calling thread, with an in-process
asker instead of the bots (tests, tools): the code production runs.

Matches are played by workers only: tournament, league, test and ladder matches from the
matches queue, practice matches (:mod:`atout_arena.services.practice`) from the practice
queue. The seats of house bots are played in-process (:class:`~atout_workers.house.HouseAsker`)
and get no MatchStart / MatchEnd over Redis; only tournament matches are rated here.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import redis
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from atout.games import State
from atout_arena.core.keys import CONTROL_CHANNEL, current_key, last_event_key, public_channel, seat_channel
from atout_arena.core.match import (
    Answer,
    Asker,
    AsyncAsker,
    DecisionAsk,
    MatchOutcome,
    MatchSetup,
    SeatBot,
    Step,
    run_loop_async,
)
from atout_arena.core.models import Match
from atout_arena.core.relay import (
    STREAM_OUTAGE,
    are_connected,
    live_conn_command,
    parse_control,
    parse_stop,
    seat_addresses,
    stream_state_command,
)
from atout_arena.core.views import StepViews
from atout_arena.core.vocabulary import Fault, MatchStatus, PlayedBy, RunResult
from atout_arena.core.wire import database_outage, redis_outage
from atout_arena.services.bots import is_house
from atout_workers import store
from atout_workers.decisions import ArenaOutage, AsyncDecisionClient, Decision
from atout_workers.fastjson import dumps
from atout_workers.house import HouseAsker
from atout_workers.world import Lease, World, matches_client

log = logging.getLogger(__name__)

LAST_EVENT_TTL_S = 3600
LAST_EVENT_EVERY_S = 1.0  # an unwatched match on the event loop writes its latest event this often
EVENTS_FLUSH_TIMEOUT_S = 10.0
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    redis.ConnectionError, redis.TimeoutError, OperationalError,
)


class LeaseLost(Exception):  # noqa: N818 - a condition, not a bug
    """Another worker took the match over: stop playing it, store nothing."""


class Stopped(Exception):  # noqa: N818 - a signal, not an error
    """The process is shutting down: give the match back to the queue."""


ABSENT_POLL_S = 0.2  # while a match waits for its bots to connect
CLAIMS_PER_ATTEMPT = 10  # a match claimed this many times per allowed error (its workers kept dying) fails


def decision_asker(client: AsyncDecisionClient, grace_s: float = 0.0,
                   revoked: set[str] | None = None) -> AsyncAsker:
    """The match loop's ``ask``, through the worker-side call of the game servers' relay.

    A seat whose bot is not connected is waited for up to ``grace_s`` (an outage is not the
    bot's fault); once a seat's grace ran out in this match, its later decisions fault at once
    until its bot is back (a bot that really vanished is not waited for at every decision).
    A bot in ``revoked`` (disabled: it cannot come back) is never waited for; a decision it
    answers takes it out (enabled again)."""
    gone: set[int] = set()

    async def ask(a: DecisionAsk) -> Answer:
        bot = str(a.bot.bot_id)
        grace = 0.0 if a.seat in gone or (revoked and bot in revoked) else grace_s
        d = await client.request(a.bot.stream, a.match_id, a.game, a.seat, a.observation, a.legal_actions,
                                 a.deadline_ms, a.check, grace_s=grace)
        if revoked and d.fault is None:
            revoked.discard(bot)
        return _answer(a, d, gone)

    return ask


def _answer(a: DecisionAsk, d: Decision, gone: set[int]) -> Answer:
    """The match loop's Answer of a relay Decision (``gone``: the seats whose grace ran out)."""
    if d.fault == Fault.DISCONNECTED:
        gone.add(a.seat)
    else:
        gone.discard(a.seat)
    detail = "; ".join(f"{action!r}: {reason}" for action, reason in d.rejected)[:500]
    if d.fault is not None and d.fault == Fault.TIMEOUT:
        detail = f"no legal answer within {a.deadline_ms} ms"
    elif d.fault is not None and d.fault == Fault.DISCONNECTED:
        detail = detail or "not connected"
    fault = None if d.fault is None else str(d.fault)
    return Answer(d.action, d.think_ms, fault, detail, len(d.rejected), d.bot_think_ms, d.note)


@dataclass
class Publisher:
    """Publishes the events of one match and counts its decisions' metrics, through the
    process's :class:`~atout_workers.events.EventSink` (which batches every match's writes).

    The public event of every step goes to the spectators' channel and the latest-event key; a
    seat's event only while someone listens to that seat's channel (serialising every seat's
    view for nobody would be most of a worker's work per decision). Decision metrics are kept
    in the match and handed to the sink when its result is stored (:meth:`end` with an
    outcome; the sink adds up those of every match of the process and writes them once a
    second): a run that stores nothing (its worker died, its lease was lost, it is played again
    from its seed) counts none, so each stored decision is counted once. Faults are written at
    once.
    """

    world: World
    setup: MatchSetup
    views: StepViews | None = None
    channels: list[str] = field(default_factory=list)
    # On the event loop (its ``call_soon_threadsafe``): the steps nobody watches build no event,
    # but one a second (the latest-event key: what a spectator who opens the match sees first),
    # and when someone starts watching (a subscriber appears on a channel of the match, noticed
    # within LISTEN_CHECK_S) the match's current view is published at once, then every step.
    # None: every step is published (a match played on a thread).
    schedule: Callable[[Callable[[], None]], Any] | None = None
    _pending: list[tuple[str, float]] = field(default_factory=list)  # (bot, seconds) to count
    _stale: Step | None = None  # the latest step not written yet (nobody watching)
    _written: float = 0.0  # when an unwatched match last wrote its latest event
    _watching: bool = False  # its channels are tracked by the event sink (watch() .. close())
    _all_channels: frozenset[str] = frozenset()  # the seats' channels and the public one

    def _emit(self, events: tuple[dict[str, Any], list[dict[str, Any]]] | None, stored: bool = False,
              faults: tuple[tuple[str, str], ...] = ()) -> None:
        sink = self.world.events
        if stored and self._pending:
            # added up with the other matches' of the process, written by the sink
            sink.add_decisions(self.setup.game, self._pending)
            self._pending = []
        if events is None and not faults:
            return
        match_id = self.setup.match_id
        text = None
        seat_texts: list[tuple[str, bytes]] = []
        if events is not None:
            public, seats = events
            text = dumps(public)
            seat_texts = [(channel, dumps(event))
                          for channel, event in zip(self.channels, seats, strict=True)
                          if sink.listening(channel)]
        metrics = self.world.metrics

        def write(pipe: Any) -> None:
            if text is not None:
                pipe.publish(public_channel(match_id), text)
                pipe.set(last_event_key(match_id), text, ex=LAST_EVENT_TTL_S)
            for channel, seat_text in seat_texts:
                pipe.publish(channel, seat_text)
            for bot, kind in faults:
                metrics.fault(bot, kind, pipe=pipe)

        sink.put(write)

    def watch(self) -> None:
        """Start tracking who listens to this match's channels. It asks Redis at once, so the
        claiming thread calls it: the event loop never waits for that round trip."""
        if not self._watching:
            self.channels = [seat_channel(self.setup.match_id, s) for s in range(len(self.setup.seats))]
            self._all_channels = frozenset([*self.channels, public_channel(self.setup.match_id)])
            self.world.events.watch(self._all_channels, self._heard)
            self._watching = True

    def start(self, state: State) -> None:
        self.views = StepViews(state)
        self.watch()
        base = {
            "type": "start", "match_id": self.setup.match_id, "game": self.setup.game,
            "options": self.setup.options, "seats": [s.name for s in self.setup.seats],
        }
        self._emit(self.views.events(base))

    def _step_event(self, step: Step) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        assert self.views is not None
        base = {
            "type": "step", "match_id": self.setup.match_id, "ply": step.ply, "seat": step.seat,
            "by": step.by, "think_ms": round(step.think_ms, 3), "faults": list(step.faults),
            "action": step.action,
        }
        return self.views.events(base, step.action)

    def step(self, state: State, step: Step) -> None:
        """After each step, on the match's thread or loop: most steps of a match nobody watches
        do nothing here but count the decision (this runs at every decision of the process)."""
        bot = self.setup.seats[step.seat].name
        faults = step.faults
        if step.by == PlayedBy.BOT or any(f != Fault.DISCONNECTED for f in faults):  # the bot was asked
            self._pending.append((bot, step.think_ms / 1000))
        charged = tuple((bot, k) for k in faults) if faults else ()
        if self.schedule is None or self.world.events.listening_any(self._all_channels):
            self._stale = None
            self._emit(self._step_event(step), faults=charged)
            return
        now = time.monotonic()
        # what a spectator who opens it sees first: once a second, within the process's budget
        if now - self._written >= LAST_EVENT_EVERY_S and self.world.events.take_refresh(now):
            self._written, self._stale = now, None
            self._emit(self._step_event(step), faults=charged)
            return
        self._stale = step  # its event is built if someone comes to watch, from the state as it is then
        if charged:
            self._emit(None, faults=charged)

    def _heard(self) -> None:
        """(The event sink's thread) someone started watching: the current view, on the loop."""
        schedule = self.schedule  # (read once: the loop may settle the match meanwhile)
        if schedule is not None:
            schedule(self._write_stale)

    def _write_stale(self) -> None:
        if self._stale is not None and self.views is not None:
            step, self._stale = self._stale, None
            self._emit(self._step_event(step))

    def settle(self) -> None:
        """On the event loop, when the match stops moving: its latest step is written, and
        nothing is left for the loop to write later (the end is written by another thread)."""
        self.schedule = None
        self._write_stale()

    def end(self, outcome: MatchOutcome | None, reason: str) -> None:
        """The end event; ``outcome``: the result stored (only then are its decisions counted)."""
        event: dict[str, Any] = {"type": "end", "match_id": self.setup.match_id, "reason": reason}
        if outcome is not None:
            event.update(scores=outcome.scores, ranking=outcome.ranking, forfeited=outcome.forfeited)
        if not self.channels:
            self.channels = [seat_channel(self.setup.match_id, s) for s in range(len(self.setup.seats))]
        self._emit((event, [event] * len(self.channels)), stored=outcome is not None)
        self.close()

    def close(self) -> None:
        """Stop tracking this match's channels (after :meth:`end`, or whatever happened)."""
        if self._watching:
            self.world.events.unwatch(self._all_channels)
            self._watching = False
        self.views = None


def with_stream_addresses(redis_client: Any, setup: MatchSetup) -> MatchSetup:
    """The setup with each visiting seat's stream address, chosen once as the match starts:
    the stream of the version the seat asks for, or the bot's current stream (the version it
    was played with is stored with the result)."""
    visiting = [(i, seat) for i, seat in enumerate(setup.seats) if not is_house(seat.name)]
    addresses = seat_addresses(redis_client, [(seat.bot_id, seat.version) for _, seat in visiting])
    seats = list(setup.seats)
    for (i, seat), address in zip(visiting, addresses, strict=True):
        seats[i] = replace(seat, address=address)
    return replace(setup, seats=tuple(seats))


def visiting_seats(setup: MatchSetup) -> list[tuple[int, SeatBot]]:
    """The seats of bots that play over the network (every seat but the house bots')."""
    return [(seat, bot) for seat, bot in enumerate(setup.seats) if not is_house(bot.name)]


async def absent_seats(world: World, setup: MatchSetup, lease: Lease,
                       stop: threading.Event | None = None) -> tuple[list[int], bool]:
    """The seats whose bots are still not connected after the match's ``absent_grace_s``
    (waited for at its start, heartbeats running, holding no thread): they are forfeited as
    ``absent``. And whether the seats' streams must be chosen again (a stream chosen at the
    claim was not live at the start). ``stop`` (default: the process's) ends the wait."""
    if setup.absent_grace_s is None:
        return [], False
    matches = world.matches
    stop = matches.stopping if stop is None else stop
    if await matches.run_sync(_chosen_streams_live, world, setup):
        return [], False
    started = time.monotonic()
    deadline = started + setup.absent_grace_s
    while True:
        missing = await matches.run_sync(_missing, world, setup)
        now = time.monotonic()
        if missing and now >= deadline and now < started + world.settings.outage_limit_s \
                and await matches.run_sync(_cut_off, world, setup, missing):
            pass  # a bot cut off by the arena's outage is not absent: waited for, up to the limit
        elif not missing or now >= deadline:
            return missing, True
        if lease.lost.is_set():
            raise LeaseLost(f"match {setup.match_id}: lease {lease.id} lost")
        if stop.is_set():  # a warm shutdown does not wait out the grace
            raise Stopped(f"match {setup.match_id}: stopping")
        await asyncio.sleep(ABSENT_POLL_S)


def _chosen_streams_live(world: World, setup: MatchSetup) -> bool:
    """Whether the stream chosen for every visiting seat at the claim is live: the usual case,
    in one round trip (the full look, :func:`_missing`, takes three)."""
    pipe = world.redis.pipeline(transaction=False)
    for _, bot in visiting_seats(setup):
        pipe.eval(*live_conn_command(bot.stream))
    return all(pipe.execute())


def _cut_off(world: World, setup: MatchSetup, seats: list[int]) -> bool:
    """Whether one of ``seats`` is cut off by the arena (its stream on a game server that is
    dead, hung or stopped, or moved by the arena): not the bot's absence."""
    pipe = world.redis.pipeline(transaction=False)
    for seat in seats:
        bot = setup.seats[seat]
        address = bot.stream if bot.version else (world.redis.get(current_key(str(bot.bot_id))) or bot.stream)
        address = address.decode() if isinstance(address, bytes) else address
        pipe.eval(*stream_state_command(address, ""))
    return any(state == STREAM_OUTAGE for state, _ in pipe.execute())


def _missing(world: World, setup: MatchSetup) -> list[int]:
    """The visiting seats whose bots have no live stream now."""
    seats = visiting_seats(setup)
    live = are_connected(world.redis, [(bot.bot_id, bot.version) for _, bot in seats])
    return [seat for (seat, _), connected in zip(seats, live, strict=True) if not connected]


def _notify_end(world: World, setup: MatchSetup, outcome: MatchOutcome | None, reason: str,
                house: HouseAsker | None = None) -> None:
    scores = outcome.scores if outcome else [0] * len(setup.seats)
    ranking = outcome.ranking if outcome else [0] * len(setup.seats)
    faults = seat_faults(outcome, len(setup.seats))
    try:
        world.decisions.match_ends([(bot.stream, setup.match_id, seat, scores, ranking, reason, faults[seat])
                                    for seat, bot in visiting_seats(setup)])
    except redis.RedisError:
        log.warning("match %s: could not tell its bots the match ended", setup.match_id)
    if house is not None:  # the house bots' on_match_end, in-process
        house.finish(scores, ranking, reason)


def seat_faults(outcome: MatchOutcome | None, players: int) -> list[dict[str, int]]:
    """Each seat's faults by kind in ``outcome`` (told to its bot in MatchEnd.faults)."""
    faults: list[dict[str, int]] = [{} for _ in range(players)]
    for step in outcome.steps if outcome else ():
        for kind in step.faults:
            faults[step.seat][kind] = faults[step.seat].get(kind, 0) + 1
    return faults


RESTARTED = "restarted"  # the MatchEnd reason of a run aborted by a worker failure


def _notify_aborted(world: World, setup: MatchSetup, reason: str) -> None:
    """A match claimed again: each visiting seat still holding the MatchStart of an earlier
    run (its worker died before the MatchEnd) is told that run ended, with ``reason``
    (:data:`RESTARTED`, before the new run's MatchStart; ``cancelled`` when it is given up)."""
    for seat, bot in visiting_seats(setup):
        try:
            if world.decisions.match_aborted(bot.stream, setup.match_id, seat, len(setup.seats), reason):
                log.info("match %s: bot %s told its earlier run ended (%s)", setup.match_id, bot.name, reason)
        except redis.RedisError:
            log.warning("match %s: could not tell bot %s its earlier run ended", setup.match_id, bot.name)


@dataclass(frozen=True)
class FollowUps:
    """What runs once a match is over, whatever its result: the tournament's finalize when it
    was its last match, the test's next tick when it was the last of a test's set to be done."""

    on_finalize: Callable[[int], None] | None = None
    on_test: Callable[[int], None] | None = None

    def after(self, completion: store.Completion | None) -> None:
        if completion is None:
            return
        if completion.tournament_done and completion.tournament_id is not None and self.on_finalize:
            self.on_finalize(completion.tournament_id)
        if completion.test_id is not None and completion.set_done and self.on_test:
            self.on_test(completion.test_id)  # its set complete: the test decides, or schedules its next sets


@dataclass
class Claimed:
    """A match this process just claimed, ready to play: its setup (stream addresses chosen),
    lease and publisher."""

    match_id: int
    lease_id: str
    setup: MatchSetup
    lease: Lease
    publisher: Publisher


# ------------------------------------------------------------------ matches stopped from outside

STOP_CHECK_S = 0.25  # how often the stop listener looks for leases its heartbeat found lost
LEASE_LOST = "lease lost"  # a stop's reason when the heartbeat, not a message, found it


class Running:
    """A match in flight on the event loop, as the :class:`StopListener` sees it: its game's
    task, cancelled by :meth:`stop` (any thread) with the reason kept."""

    def __init__(self, loop: asyncio.AbstractEventLoop, lease: Lease) -> None:
        self.loop = loop
        self.lease = lease
        self.task: asyncio.Future[Any] | None = None
        self.reason: str | None = None

    def stop(self, reason: str) -> None:
        self.loop.call_soon_threadsafe(self._stop, reason)

    def _stop(self, reason: str) -> None:
        if self.reason is None and self.task is not None and not self.task.done():
            self.reason = reason
            self.task.cancel()  # the decision it waits for is given up at once


class StopListener:
    """One thread per worker process on the control channel (:data:`CONTROL_CHANNEL`):

    - a stop (:func:`atout_arena.core.relay.publish_stop`: a competition cancelled, a bot
      disabled or gone from its ladder; the database says ``cancelled`` already) cancels the
      game of each named match this process plays, even mid-decision: it ends within a second;
    - a bot disabled is remembered (:attr:`revoked`): its decisions are faulted at once, never
      waited for (:func:`decision_asker`);
    - every :data:`STOP_CHECK_S`, a match whose lease the heartbeat found lost (a stop message
      missed while Redis was away) is stopped too: within ``ATOUT_HEARTBEAT_S``.

    Subscribed on the claiming thread that makes it, before its first match plays."""

    def __init__(self, client: redis.Redis, owner: Any = None) -> None:
        self.client = client
        self._owner = weakref.ref(owner) if owner is not None else None  # gone: the thread ends
        self.revoked: set[str] = set()
        self._running: dict[int, Running] = {}
        self._lock = threading.Lock()
        self._pubsub: Any = None
        try:
            self._subscribe()
        except (redis.RedisError, OSError):
            self._pubsub = None  # the thread tries again
        self._thread = threading.Thread(target=self._run, name="atout-stops", daemon=True)
        self._thread.start()

    def _subscribe(self) -> None:
        pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(CONTROL_CHANNEL)
        self._pubsub = pubsub

    def add(self, match_id: int, running: Running) -> None:
        with self._lock:
            self._running[match_id] = running

    def remove(self, match_id: int, running: Running) -> None:
        with self._lock:
            if self._running.get(match_id) is running:
                del self._running[match_id]

    def heard(self, data: bytes | str) -> None:
        """One message of the control channel."""
        stop = parse_stop(data)
        if stop is not None:
            ids, reason = stop
            with self._lock:
                found = [self._running[i] for i in ids if i in self._running]
            for running in found:
                running.stop(reason)
            return
        control = parse_control(data)
        if control is not None and control[1] == "disabled":
            self.revoked.add(control[0])

    def _run(self) -> None:
        while self._owner is None or self._owner() is not None:
            try:
                if self._pubsub is None:
                    self._subscribe()
                message = self._pubsub.get_message(timeout=STOP_CHECK_S)
                if message is not None and message.get("type") == "message":
                    self.heard(message["data"])
            except (redis.RedisError, OSError):  # Redis away: the heartbeats stop what must stop
                self._pubsub = None
                time.sleep(1.0)
            except Exception:
                log.exception("the stop listener failed; going on")
                time.sleep(1.0)
            with self._lock:
                lost = [r for r in self._running.values() if r.lease.lost.is_set() and r.reason is None]
            for running in lost:
                running.stop(LEASE_LOST)


_listeners: list[tuple[weakref.ref[World], StopListener]] = []
_listeners_lock = threading.Lock()


def stop_listener(world: World) -> StopListener:
    """The process's :class:`StopListener` for ``world``, made on first use (on the caller's
    thread: it subscribes at once); it ends when the world is gone (tests make many)."""
    with _listeners_lock:
        _listeners[:] = [(known, listener) for known, listener in _listeners if known() is not None]
        for known, listener in _listeners:
            if known() is world:
                return listener
        listener = StopListener(world.redis, world)
        _listeners.append((weakref.ref(world), listener))
        return listener


def _stopped_from_outside(world: World, claimed: Claimed, setup: MatchSetup, house: HouseAsker | None,
                          reason: str) -> RunResult:
    """A match stopped mid-way by a stop message, or found lost by its heartbeat: cancelled
    (its competition cancelled, a bot disabled or gone from its ladder: the database says so
    already, nothing is stored) or taken over by another worker."""
    match_id = claimed.match_id
    if reason == LEASE_LOST:
        with world.sessions() as session:
            row = session.execute(select(Match.status, Match.error).where(Match.id == match_id)).first()
        if row is None or row.status != MatchStatus.CANCELLED:
            log.warning("match %s: taken over by another worker; stopping", match_id)
            return RunResult.LOST
        reason = row.error or "cancelled"
    log.info("match %s: stopped (%s)", match_id, reason)
    claimed.publisher.end(None, "cancelled")
    _notify_end(world, setup, None, "cancelled", house)
    return RunResult.CANCELLED


def claim(world: World, match_id: int, in_process: bool = False,
          follow_ups: FollowUps = FollowUps()) -> Claimed | RunResult:
    """Claim match ``match_id`` for this process: a :class:`Claimed` to play, or what happened
    instead (``skipped``: not ours; ``failed``: claimed too many times by workers that died)."""
    lease_id = world.new_lease_id()
    claimed = store.claim_match(world.sessions, match_id, lease_id, world.settings.match_stale_s)
    if claimed is None:
        return RunResult.SKIPPED
    setup, attempts = claimed
    setup = with_stream_addresses(world.redis, setup)
    if attempts > world.settings.match_attempts * CLAIMS_PER_ATTEMPT:
        completion = store.fail_match(
            world.sessions, match_id, lease_id,
            f"claimed {attempts - 1} times without a result (its workers kept dying)")
        _notify_aborted(world, setup, "cancelled")
        world.metrics.match(setup.game, "error", 0.0)
        follow_ups.after(completion)
        return RunResult.FAILED
    if attempts > 1:
        _notify_aborted(world, setup, RESTARTED)
    if in_process:  # the seats are answered in-process: nobody to wait for
        setup = replace(setup, absent_grace_s=None)
    lease = world.heartbeater.add(match_id, lease_id)
    publisher = Publisher(world, setup)
    publisher.watch()  # here, on the claiming thread: its Redis round trip never holds the loop
    stop_listener(world)  # (subscribed here too, the first time)
    return Claimed(match_id, lease_id, setup, lease, publisher)


def _let_go(world: World, claimed: Claimed, flush: bool = True) -> None:
    """After the match, whatever happened: its lease and its channels (``flush``: wait until
    its events are out, for a caller that returns when the match ends)."""
    world.heartbeater.remove(claimed.lease)
    claimed.publisher.close()
    if flush:
        world.events.flush(EVENTS_FLUSH_TIMEOUT_S)


def _stepper(claimed: Claimed, stop: threading.Event) -> Callable[[State, Step], None]:
    lease, match_id, lease_id = claimed.lease, claimed.match_id, claimed.lease_id
    publisher = claimed.publisher

    def on_step(state: State, step: Step) -> None:
        if lease.lost.is_set():
            raise LeaseLost(f"match {match_id}: lease {lease_id} lost")
        if stop.is_set():
            raise Stopped(f"match {match_id}: stopping")
        publisher.step(state, step)

    return on_step


def _announce(world: World, setup: MatchSetup, absent: list[int], readdress: bool = True) -> MatchSetup:
    """The match starts: its bots are told (MatchStart), the absent ones are logged.
    ``readdress``: a stream chosen at the claim was not live at the start: they are chosen now."""
    if absent:
        log.warning("match %s: %s not connected: forfeited as absent", setup.match_id,
                    ", ".join(setup.seats[s].name for s in absent))
    if setup.absent_grace_s and readdress:  # the bots that came meanwhile: their streams now
        setup = with_stream_addresses(world.redis, setup)
    names = [s.name for s in setup.seats]
    versions = [s.played_version for s in setup.seats]
    world.decisions.match_starts([
        (bot.stream, setup.match_id, setup.game, seat, len(setup.seats), setup.options, names, versions)
        for seat, bot in visiting_seats(setup) if seat not in absent])
    return setup


def _stopped(world: World, claimed: Claimed, setup: MatchSetup, house: HouseAsker | None, exc: Exception,
             started: float, follow_ups: FollowUps) -> RunResult:
    """A match that stopped before its end: lost, released, or failed with its reason."""
    match_id, lease_id = claimed.match_id, claimed.lease_id
    if isinstance(exc, LeaseLost):
        log.warning("match %s: taken over by another worker; stopping", match_id)
        return RunResult.LOST
    if isinstance(exc, Stopped):
        log.info("match %s: the process is stopping; the match goes back to the queue", match_id)
        store.release_match(world.sessions, match_id, lease_id)
        _notify_end(world, setup, None, RESTARTED, house)  # its bots see it start again elsewhere
        return RunResult.RELEASED
    log.error("match %s failed", match_id, exc_info=exc)
    completion = store.fail_match(world.sessions, match_id, lease_id, f"{type(exc).__name__}: {exc}")
    world.metrics.match(setup.game, "error", time.perf_counter() - started)
    claimed.publisher.end(None, "error")
    _notify_end(world, setup, None, "cancelled", house)
    follow_ups.after(completion)
    return RunResult.FAILED


STORE_RETRY_S = 1.0  # a result the database did not take is offered again this often


def _store_kept(world: World, claimed: Claimed, outcome: MatchOutcome, played_versions: list[str],
                absent: list[int]) -> store.Completion | None:
    """:func:`store.store_result`, kept through a database outage: the result of a match played
    to its end is offered again every :data:`STORE_RETRY_S` until the database takes it, up to
    ``ATOUT_OUTAGE_LIMIT_S`` (or the process stopping), rather than given back to be played
    again. The outage is said once per process (``database_outage``)."""
    give_up = time.monotonic() + world.settings.outage_limit_s
    while True:
        try:
            completion = store.store_result(world.sessions, claimed.match_id, claimed.lease_id, outcome,
                                            played_versions=played_versions, absent=absent)
        except OperationalError as exc:
            if time.monotonic() >= give_up or world.matches.stopping.is_set():
                raise  # given back: played again once the database is back
            database_outage.failed(f"a finished match's result (match {claimed.match_id}; kept)", exc)
            time.sleep(STORE_RETRY_S)
            continue
        database_outage.ok()
        return completion


def _conclude(world: World, claimed: Claimed, setup: MatchSetup, house: HouseAsker | None,
              outcome: MatchOutcome, absent: list[int], started: float, follow_ups: FollowUps) -> RunResult:
    """A match played to its end: its result stored once, then told to everyone."""
    match_id, lease_id, publisher = claimed.match_id, claimed.lease_id, claimed.publisher
    if is_outage(setup, outcome):
        return _replay_outage(world, setup, match_id, lease_id, publisher, house, follow_ups)
    completion = _store_kept(world, claimed, outcome, [s.played_version for s in setup.seats], absent)
    if completion is None:
        return RunResult.DUPLICATE
    elapsed = time.perf_counter() - started
    metrics, game = world.metrics, setup.game
    names_after = [(completion.bot_names.get(bot, str(bot)), after)
                   for bot, (_, after) in completion.ratings.items()]

    def write(pipe: Any) -> None:
        metrics.match(game, outcome.outcome, elapsed, pipe)
        for name, after in names_after:
            metrics.rating(game, name, after, pipe)

    world.events.put(write)
    publisher.end(outcome, outcome.outcome)
    _notify_end(world, setup, outcome, outcome.outcome, house)
    follow_ups.after(completion)
    return RunResult.FINISHED


# ------------------------------------------------------------------ the one way a match is played


def play_on_loop(world: World, match_id: int, on_finalize: Callable[[int], None] | None = None,
                 on_test: Callable[[int], None] | None = None,
                 then: Callable[[RunResult], None] | None = None, wait: bool = True) -> RunResult | None:
    """Claim match ``match_id`` on this thread (a Celery task's, or a thread of the loop's pool
    for a set's next rotation) and, when it is ours, hand it to the
    process's event loop (:class:`atout_workers.loop.MatchLoop`) and return ``playing`` at once;
    otherwise return what happened (``skipped``, ``failed``). ``then(result)`` runs on a
    thread of the loop's pool after the match, whatever its result (or at once, when it was not
    played): the task's follow-ups. Blocks while the loop is full; with ``wait`` false (a
    thread of the loop's own pool, which must never wait for the loop), returns None instead,
    claiming nothing."""
    matches = world.matches
    follow_ups = FollowUps(on_finalize, on_test)
    if not matches.reserve(None if wait else 0):
        return None
    try:
        claimed = claim(world, match_id, False, follow_ups)
    except BaseException:
        matches.release()
        raise
    if isinstance(claimed, RunResult):
        matches.release()
        if then is not None:
            then(claimed)
        return claimed
    matches.start(_play_async(world, claimed, follow_ups, then))
    return RunResult.PLAYING


def run_match(
    world: World,
    match_id: int,
    asker: Asker | None = None,
    on_finalize: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
    on_test: Callable[[int], None] | None = None,
) -> RunResult:
    """:func:`play_on_loop`, waited for on this thread: the same match on the process's event
    loop, with ``asker`` (blocking, called on the loop's threads) answering every visiting
    seat in-process instead of the bots. Returns what happened: ``finished``, ``skipped`` (not
    ours: done, or alive elsewhere), ``lost`` (taken over mid-way), ``duplicate`` (someone
    stored it first), ``released`` (``stop`` was set: the match went back to the queue),
    ``replayed`` (an outage: played again) or ``failed`` (an error no retry would cure).
    Transient errors (Redis, a locked database) give the match back and are raised again."""
    matches = world.matches
    follow_ups = FollowUps(on_finalize, on_test)
    matches.reserve()
    try:
        claimed = claim(world, match_id, asker is not None, follow_ups)
    except BaseException:
        matches.release()
        raise
    if isinstance(claimed, RunResult):
        matches.release()
        return claimed
    in_process: AsyncAsker | None = None
    if asker is not None:
        blocking = asker

        async def in_process(a: DecisionAsk) -> Answer:
            return await matches.run_sync(blocking, a)

    try:
        return matches.start(_play_and_store(world, claimed, follow_ups, in_process, stop)).result()
    except TRANSIENT_ERRORS:
        store.release_match(world.sessions, claimed.match_id, claimed.lease_id)
        raise
    finally:
        _let_go(world, claimed)


async def _play_async(world: World, claimed: Claimed, follow_ups: FollowUps,
                      then: Callable[[RunResult], None] | None) -> RunResult:
    matches = world.matches
    result = RunResult.FAILED
    try:
        result = await _play_and_store(world, claimed, follow_ups)
        if result == RunResult.RELEASED:  # the process stops: another worker plays it at once
            await matches.run_sync(_send_again, world, claimed.match_id)
    except TRANSIENT_ERRORS as exc:  # given back: played again after a while (like a task's retry)
        log.warning("match %s: %s; it goes back to the queue", claimed.match_id, exc)
        result = RunResult.RELEASED
        await matches.run_sync(_give_back, world, claimed)
    except Exception:
        log.exception("match %s: unexpected error around the match", claimed.match_id)
    finally:
        await matches.run_sync(_let_go, world, claimed, False)
        if then is not None:
            await matches.run_sync(follow_up, then, claimed.match_id, result)
    return result


def follow_up(then: Callable[[RunResult], None], match_id: int, result: RunResult) -> None:
    """Run a match's follow-ups (``then``), which never raise out of here. An outage of the
    database or Redis is the process's one line (the sweeper's net does them later: a rotation
    it releases, a ladder's periodic tick); anything else is logged with its traceback."""
    try:
        then(result)
    except TRANSIENT_ERRORS as exc:
        outage = database_outage if isinstance(exc, OperationalError) else redis_outage
        outage.failed(f"a match's follow-ups (match {match_id}; the sweeper does them)", exc)
    except Exception:
        log.exception("match %s: its follow-ups failed", match_id)


def _send_again(world: World, match_id: int) -> None:
    try:
        world.send_match(match_id)
    except TRANSIENT_ERRORS:  # the sweeper sends it again (a queued match with no task)
        log.warning("match %s: could not send it again now; the sweeper will", match_id)


def _give_back(world: World, claimed: Claimed) -> None:
    try:
        store.release_match(world.sessions, claimed.match_id, claimed.lease_id)
        world.send_match(claimed.match_id)
    except TRANSIENT_ERRORS:  # still down: the sweeper re-sends it once its lease is stale
        log.warning("match %s: could not give it back now; the sweeper will", claimed.match_id)


async def _play_and_store(world: World, claimed: Claimed, follow_ups: FollowUps,
                          in_process: AsyncAsker | None = None,
                          stop: threading.Event | None = None) -> RunResult:
    """Play the claimed match on the loop and store its result (or say why it stopped). Every
    visiting seat is asked through the relay, or through ``in_process`` when given; house seats
    are played here. ``stop`` (default: the process's) stops it at its next step."""
    matches = world.matches
    stop = matches.stopping if stop is None else stop
    started = time.perf_counter()
    setup = claimed.setup
    listener = stop_listener(world)
    network = in_process or decision_asker(matches_client(world), world.settings.reconnect_grace_s,
                                           listener.revoked)
    house = HouseAsker(setup) if any(is_house(seat.name) for seat in setup.seats) else None
    ask: AsyncAsker = network if house is None else house.asking(network)
    absent: list[int] = []

    async def play() -> MatchOutcome:
        nonlocal setup, absent
        absent, readdress = await absent_seats(world, setup, claimed.lease, stop)
        setup = await matches.run_sync(_announce, world, setup, absent, readdress)
        claimed.publisher.schedule = matches.loop.call_soon_threadsafe
        try:
            return await run_loop_async(setup, ask, _stepper(claimed, stop),
                                        on_start=claimed.publisher.start, absent=absent)
        finally:
            claimed.publisher.settle()

    running = Running(matches.loop, claimed.lease)
    running.task = asyncio.ensure_future(play())
    listener.add(claimed.match_id, running)  # from now on a stop message cancels the game's task
    try:
        outcome = await running.task
    except asyncio.CancelledError:
        if running.reason is None:  # not a stop: this coroutine itself is cancelled
            raise
        claimed.publisher.settle()
        return await matches.run_sync(_stopped_from_outside, world, claimed, setup, house, running.reason)
    except TRANSIENT_ERRORS:
        raise
    except ArenaOutage as exc:  # a seat cut off by the arena past the outage limit: voided
        claimed.publisher.settle()
        return await matches.run_sync(_replay_outage, world, setup, claimed.match_id, claimed.lease_id,
                                      claimed.publisher, house, follow_ups, str(exc))
    except Exception as exc:
        return await matches.run_sync(_stopped, world, claimed, setup, house, exc, started, follow_ups)
    finally:
        listener.remove(claimed.match_id, running)
    return await matches.run_sync(_conclude, world, claimed, setup, house, outcome, absent, started,
                                  follow_ups)


def is_outage(setup: MatchSetup, outcome: MatchOutcome) -> bool:
    """Every seat of a match between two or more visiting bots was faulted ``disconnected``:
    the arena lost them (a game server or Redis outage), the result says nothing of the bots."""
    visiting = {seat for seat, _ in visiting_seats(setup)}
    if len(visiting) < 2:
        return False
    cut = {step.seat for step in outcome.steps if Fault.DISCONNECTED in step.faults}
    return visiting <= cut


OUTAGE_REASON = "every seat was disconnected (an outage of the arena): no result"


def _replay_outage(world: World, setup: MatchSetup, match_id: int, lease_id: str, publisher: Publisher,
                   house: HouseAsker | None, follow_ups: FollowUps,
                   reason: str = OUTAGE_REASON) -> RunResult:
    """Store nothing: the match is played again from its seed (it counts one error), or fails
    after ``ATOUT_MATCH_ATTEMPTS`` of them with its reason."""
    what = store.record_error(world.sessions, match_id, lease_id, reason, world.settings.match_attempts)
    publisher.end(None, "replayed" if what == "queued" else "error")
    _notify_end(world, setup, None, RESTARTED if what == "queued" else "cancelled", house)
    if what == "queued":
        log.warning("match %s: %s; playing it again from its seed", match_id, reason)
        world.send_match(match_id)
        return RunResult.REPLAYED
    if what == "lost":
        return RunResult.LOST
    errors = world.settings.match_attempts
    completion = store.fail_match(world.sessions, match_id, lease_id, f"{reason} ({errors} times)")
    world.metrics.match(setup.game, "error", 0.0)
    follow_ups.after(completion)
    return RunResult.FAILED
