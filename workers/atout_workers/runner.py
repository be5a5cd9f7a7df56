"""Play one stored match for real: claim it, play it through the bots, store its result once.

This is the body of the ``atout.play_match`` task, kept out of Celery so that it reads as a
plain function of the :class:`~atout_workers.world.World`:

1. :func:`atout_workers.store.claim_match` takes the match (queued, or running with a stale
   heartbeat) under a fresh runner id; anything else means another worker has it or had it:
   nothing to do.
2. The heartbeat thread keeps the lease alive; :func:`atout_arena.core.match.play_match` plays the
   game, asking bots through :class:`atout_workers.decisions.DecisionClient`; each step is published
   to the spectators' channels with the decision's metrics, in one Redis round trip.
3. :func:`atout_workers.store.store_result` stores the result, the action log and the ratings in
   one transaction, if the lease is still ours. After the commit: metrics, the bots' MatchEnd,
   the final spectator event, and the tournament's finalize when this was its last match.

It is the one way a match is played, always by a worker: tournament and league matches from
the matches queue, practice matches (:mod:`atout_arena.services.practice`) from the practice
queue. The seats of house bots are played in-process (:func:`with_house_bots`) and get no
MatchStart / MatchEnd over Redis; only tournament matches are rated.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import redis
from sqlalchemy.exc import OperationalError

from atout.games import State
from atout_arena.core.keys import last_event_key, public_channel, seat_channel
from atout_arena.core.match import (
    Answer,
    Asker,
    DecisionAsk,
    MatchOutcome,
    MatchSetup,
    SeatBot,
    Step,
    play_match,
)
from atout_arena.core.relay import is_connected, seat_address
from atout_arena.core.views import StepViews
from atout_arena.core.vocabulary import Fault, PlayedBy
from atout_arena.services.bots import is_house
from atout_workers import store
from atout_workers.decisions import DecisionClient
from atout_workers.house import HouseAsker
from atout_workers.world import Lease, World

log = logging.getLogger(__name__)

LAST_EVENT_TTL_S = 3600
METRICS_FLUSH_S = 1.0  # how often a match writes its decisions' metrics
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


def decision_asker(client: DecisionClient, grace_s: float = 0.0) -> Asker:
    """The match loop's ``ask``, through the worker-side call of the game servers' relay.

    A seat whose bot is not connected is waited for up to ``grace_s`` (an outage is not the
    bot's fault); once a seat's grace ran out in this match, its later decisions fault at once
    until its bot is back (a bot that really vanished is not waited for at every decision)."""
    gone: set[int] = set()

    def ask(a: DecisionAsk) -> Answer:
        grace = 0.0 if a.seat in gone else grace_s
        d = client.request(a.bot.stream, a.match_id, a.game, a.seat, a.observation, a.legal_actions,
                           a.deadline_ms, a.check, grace_s=grace)
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
        return Answer(d.action, d.think_ms, fault, detail, len(d.rejected), d.bot_think_ms)

    return ask


@dataclass
class Publisher:
    """Publishes the events of one match and counts its decisions' metrics, through the
    process's :class:`~atout_workers.events.EventSink` (which batches every match's writes).

    The public event of every step goes to the spectators' channel and the latest-event key; a
    seat's event only while someone listens to that seat's channel (serialising every seat's
    view for nobody would be most of a worker's work per decision). Decision metrics are added
    up in the match and written every :data:`METRICS_FLUSH_S` and at its end; faults at once.
    """

    world: World
    setup: MatchSetup
    views: StepViews | None = None
    channels: list[str] = field(default_factory=list)
    _pending: list[tuple[str, float]] = field(default_factory=list)  # (bot, seconds) to write
    _flushed: float = 0.0

    def _emit(self, events: tuple[dict[str, Any], list[dict[str, Any]]], force_metrics: bool = False,
              faults: tuple[tuple[str, str], ...] = ()) -> None:
        public, seats = events
        sink = self.world.events
        match_id = self.setup.match_id
        text = json.dumps(public, separators=(",", ":"))
        seat_texts = [(channel, json.dumps(event, separators=(",", ":")))
                      for channel, event in zip(self.channels, seats, strict=True) if sink.listening(channel)]
        decisions: list[tuple[str, float]] = []
        now = time.monotonic()
        if self._pending and (force_metrics or now - self._flushed >= METRICS_FLUSH_S):
            decisions, self._pending, self._flushed = self._pending, [], now
        metrics, game = self.world.metrics, self.setup.game

        def write(pipe: Any) -> None:
            pipe.publish(public_channel(match_id), text)
            pipe.set(last_event_key(match_id), text, ex=LAST_EVENT_TTL_S)
            for channel, seat_text in seat_texts:
                pipe.publish(channel, seat_text)
            for bot, seconds in decisions:
                metrics.decision(game, bot, seconds, pipe)
            for bot, kind in faults:
                metrics.fault(bot, kind, pipe=pipe)

        sink.put(write)

    def start(self, state: State) -> None:
        self.views = StepViews(state)
        self.channels = [seat_channel(self.setup.match_id, s) for s in range(len(self.setup.seats))]
        self.world.events.watch(self.channels)
        self._flushed = time.monotonic()
        base = {
            "type": "start", "match_id": self.setup.match_id, "game": self.setup.game,
            "options": self.setup.options, "seats": [s.name for s in self.setup.seats],
        }
        self._emit(self.views.events(base))

    def step(self, state: State, step: Step) -> None:
        assert self.views is not None
        base = {
            "type": "step", "match_id": self.setup.match_id, "ply": step.ply, "seat": step.seat,
            "by": step.by, "think_ms": round(step.think_ms, 3), "faults": list(step.faults),
        }
        bot = self.setup.seats[step.seat].name
        if step.by == PlayedBy.BOT or any(f != Fault.DISCONNECTED for f in step.faults):  # the bot was asked
            self._pending.append((bot, step.think_ms / 1000))
        self._emit(self.views.events(base, step.action), faults=tuple((bot, k) for k in step.faults))

    def end(self, outcome: MatchOutcome | None, reason: str) -> None:
        event: dict[str, Any] = {"type": "end", "match_id": self.setup.match_id, "reason": reason}
        if outcome is not None:
            event.update(scores=outcome.scores, ranking=outcome.ranking, forfeited=outcome.forfeited)
        if not self.channels:
            self.channels = [seat_channel(self.setup.match_id, s) for s in range(len(self.setup.seats))]
        self._emit((event, [event] * len(self.channels)), force_metrics=True)
        self.close()

    def close(self) -> None:
        """Stop tracking this match's channels (after :meth:`end`, or whatever happened)."""
        if self.views is not None and self.channels:
            self.world.events.unwatch(self.channels)
        self.views = None


def with_house_bots(ask: Asker, setup: MatchSetup) -> Asker:
    """House bots (``atout_arena.services.practice``) sit in practice matches and are played
    in-process; the other seats are asked through ``ask``."""
    if any(is_house(seat.name) for seat in setup.seats):
        return HouseAsker(setup, ask)
    return ask


def with_stream_addresses(redis_client: Any, setup: MatchSetup) -> MatchSetup:
    """The setup with each visiting seat's stream address, chosen once as the match starts:
    the stream of the version the seat asks for, or the bot's current stream (the version it
    was played with is stored with the result)."""
    seats = tuple(
        seat if is_house(seat.name)
        else replace(seat, address=seat_address(redis_client, seat.bot_id, seat.version))
        for seat in setup.seats
    )
    return replace(setup, seats=seats)


def visiting_seats(setup: MatchSetup) -> list[tuple[int, SeatBot]]:
    """The seats of bots that play over the network (every seat but the house bots')."""
    return [(seat, bot) for seat, bot in enumerate(setup.seats) if not is_house(bot.name)]


def absent_seats(world: World, setup: MatchSetup, lease: Lease,
                 stop: threading.Event | None = None) -> list[int]:
    """The seats whose bots are still not connected after the match's ``absent_grace_s``
    (waited for at its start, heartbeats running): they are forfeited as ``absent``."""
    if setup.absent_grace_s is None:
        return []
    deadline = time.monotonic() + setup.absent_grace_s
    while True:
        missing = [seat for seat, bot in visiting_seats(setup)
                   if not is_connected(world.redis, bot.bot_id, bot.version)]
        if not missing or time.monotonic() >= deadline:
            return missing
        if lease.lost.is_set():
            raise LeaseLost(f"match {setup.match_id}: lease {lease.runner} lost")
        if stop is not None and stop.is_set():
            raise Stopped(f"match {setup.match_id}: stopping")
        time.sleep(ABSENT_POLL_S)


def _notify_end(world: World, setup: MatchSetup, outcome: MatchOutcome | None, reason: str,
                ask: Asker | None = None) -> None:
    scores = outcome.scores if outcome else [0] * len(setup.seats)
    ranking = outcome.ranking if outcome else [0] * len(setup.seats)
    for seat, bot in visiting_seats(setup):
        try:
            world.decisions.match_end(bot.stream, setup.match_id, seat, scores, ranking, reason)
        except redis.RedisError:
            log.warning("match %s: could not tell bot %s the match ended", setup.match_id, bot.name)
    if isinstance(ask, HouseAsker):  # the house bots' on_match_end, in-process
        ask.finish(scores, ranking, reason)


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


def run_match(
    world: World,
    match_id: int,
    asker: Asker | None = None,
    on_finalize: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
    on_test: Callable[[int], None] | None = None,
) -> str:
    """Play match ``match_id`` if it is ours to play. Returns what happened: ``finished``,
    ``skipped`` (not ours: done, or alive elsewhere), ``lost`` (taken over mid-way),
    ``duplicate`` (someone stored it first), ``released`` (``stop`` was set: the process is
    shutting down, the match went back to the queue) or ``failed`` (an error no retry would
    cure). Transient errors (Redis, a locked database) give the match back and are raised
    again, for the task to retry."""
    runner = world.new_runner()
    claimed = store.claim_match(world.sessions, match_id, runner, world.settings.match_stale_s)
    if claimed is None:
        return "skipped"
    setup, attempts = claimed
    setup = with_stream_addresses(world.redis, setup)
    if attempts > world.settings.match_attempts * CLAIMS_PER_ATTEMPT:
        completion = store.fail_match(
            world.sessions, match_id, runner,
            f"claimed {attempts - 1} times without a result (its workers kept dying)")
        _notify_aborted(world, setup, "cancelled")
        world.metrics.match(setup.game, "error", 0.0)
        if completion and completion.tournament_done and on_finalize:
            on_finalize(completion.tournament_id)  # type: ignore[arg-type]
        if completion and completion.test_id is not None and on_test:
            on_test(completion.test_id)
        return "failed"
    if attempts > 1:
        _notify_aborted(world, setup, RESTARTED)
    if asker is not None:  # the seats are answered in-process: nobody to wait for
        setup = replace(setup, absent_grace_s=None)
    lease = world.heartbeater.add(match_id, runner)
    publisher = Publisher(world, setup)
    try:
        grace = world.settings.reconnect_grace_s
        ask = with_house_bots(asker or decision_asker(world.decisions, grace), setup)
        return _play_and_store(world, setup, match_id, runner, lease, publisher, ask, on_finalize, stop,
                               on_test)
    finally:
        world.heartbeater.remove(lease)
        publisher.close()
        world.events.flush(EVENTS_FLUSH_TIMEOUT_S)  # the match's events are out when its task ends


def _play_and_store(world: World, setup: MatchSetup, match_id: int, runner: str, lease: Lease,
                    publisher: Publisher, ask: Asker, on_finalize: Callable[[int], None] | None,
                    stop: threading.Event | None, on_test: Callable[[int], None] | None = None) -> str:
    started = time.perf_counter()

    def on_step(state: State, step: Step) -> None:
        if lease.lost.is_set():
            raise LeaseLost(f"match {match_id}: lease {runner} lost")
        if stop is not None and stop.is_set():
            raise Stopped(f"match {match_id}: stopping")
        publisher.step(state, step)

    absent: list[int] = []
    try:
        absent = absent_seats(world, setup, lease, stop)
        if absent:
            log.warning("match %s: %s not connected: forfeited as absent", match_id,
                        ", ".join(setup.seats[s].name for s in absent))
        if setup.absent_grace_s:  # the bots that came meanwhile: their streams now
            setup = with_stream_addresses(world.redis, setup)
        names = [s.name for s in setup.seats]
        for seat, bot in visiting_seats(setup):
            if seat not in absent:
                world.decisions.match_start(bot.stream, setup.match_id, setup.game, seat,
                                            len(setup.seats), setup.options, names)
        outcome = play_match(setup, ask, on_step, on_start=publisher.start, absent=absent)
    except LeaseLost:
        log.warning("match %s: taken over by another worker; stopping", match_id)
        return "lost"
    except Stopped:
        log.info("match %s: the process is stopping; the match goes back to the queue", match_id)
        store.release_match(world.sessions, match_id, runner)
        return "released"
    except TRANSIENT_ERRORS:
        store.release_match(world.sessions, match_id, runner)
        raise
    except Exception as exc:
        log.exception("match %s failed", match_id)
        completion = store.fail_match(world.sessions, match_id, runner, f"{type(exc).__name__}: {exc}")
        world.metrics.match(setup.game, "error", time.perf_counter() - started)
        publisher.end(None, "error")
        _notify_end(world, setup, None, "cancelled", ask)
        if completion and completion.tournament_done and on_finalize:
            on_finalize(completion.tournament_id)  # type: ignore[arg-type]
        if completion and completion.test_id is not None and on_test:
            on_test(completion.test_id)
        return "failed"

    if is_outage(setup, outcome):
        return _replay_outage(world, setup, match_id, runner, publisher, ask, on_finalize, on_test)
    completion = store.store_result(world.sessions, match_id, runner, outcome,
                                    played_versions=[s.played_version for s in setup.seats], absent=absent)
    if completion is None:
        return "duplicate"
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
    _notify_end(world, setup, outcome, outcome.outcome, ask)
    if completion.tournament_done and on_finalize is not None:
        on_finalize(completion.tournament_id)  # type: ignore[arg-type]
    if completion.test_id is not None and on_test is not None:
        on_test(completion.test_id)  # the test decides, or schedules its next sets
    return "finished"


def is_outage(setup: MatchSetup, outcome: MatchOutcome) -> bool:
    """Every seat of a match between two or more visiting bots was faulted ``disconnected``:
    the arena lost them (a game server or Redis outage), the result says nothing of the bots."""
    visiting = {seat for seat, _ in visiting_seats(setup)}
    if len(visiting) < 2:
        return False
    cut = {step.seat for step in outcome.steps if Fault.DISCONNECTED in step.faults}
    return visiting <= cut


def _replay_outage(world: World, setup: MatchSetup, match_id: int, runner: str, publisher: Publisher,
                   ask: Asker, on_finalize: Callable[[int], None] | None,
                   on_test: Callable[[int], None] | None) -> str:
    """Store nothing: the match is played again from its seed (it counts one error), or fails
    after ``ATOUT_MATCH_ATTEMPTS`` of them with its reason."""
    reason = "every seat was disconnected (an outage of the arena): no result"
    what = store.record_error(world.sessions, match_id, runner, reason, world.settings.match_attempts)
    publisher.end(None, "replayed" if what == "queued" else "error")
    _notify_end(world, setup, None, RESTARTED if what == "queued" else "cancelled", ask)
    if what == "queued":
        log.warning("match %s: %s; playing it again from its seed", match_id, reason)
        world.tasks.play(match_id, practice=store.is_practice(world.sessions, match_id))
        return "replayed"
    if what == "lost":
        return "lost"
    errors = world.settings.match_attempts
    completion = store.fail_match(world.sessions, match_id, runner, f"{reason} ({errors} times)")
    world.metrics.match(setup.game, "error", 0.0)
    if completion and completion.tournament_done and on_finalize:
        on_finalize(completion.tournament_id)  # type: ignore[arg-type]
    if completion and completion.test_id is not None and on_test:
        on_test(completion.test_id)
    return "failed"
