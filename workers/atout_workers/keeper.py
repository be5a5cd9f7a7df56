"""Recovery without beat: every worker process sweeps, under a Redis lock.

Two threads started when the worker is ready (Celery's ``worker_ready`` signal, see
:mod:`atout_workers.celery_app`). The first does, every :data:`TICK_S`:

- **liveness**: it renews this process in the ``atout:workers`` sorted set (member
  ``host:pid``, the prefix of its lease ids, scored by when it expires:
  :data:`LIVENESS_TTL_S`). A worker killed with ``-9`` stops renewing: once its entry has
  expired and its matches' heartbeats are older than two heartbeat intervals, any live worker
  puts them back in the queue and sends them again (:func:`atout_workers.store.orphaned_running`),
  so a match whose worker died is played again within seconds, not after ``ATOUT_MATCH_STALE_S``
  (which still applies to a worker that is alive but silent, and to lease holders that never
  registered);
The second does **the sweep** (:func:`atout_workers.sweeper.sweep`) every
``ATOUT_SWEEP_INTERVAL_S``, by one worker at a time: the one that takes ``atout:sweeper:lock``
(``SET NX`` expiring after the interval) sweeps, the others skip that interval. It has a thread
of its own because a sweep reads the whole database: on a large one, or a loaded machine, it
may take seconds, and while it lasted this worker's liveness went unrenewed (the others took
its matches) and its own late renewal read as a partition, so it never judged a dead worker
(a worker killed with kill -9 kept its matches until ``ATOUT_MATCH_STALE_S``).

Beat's ``atout.sweep`` still works (it is the same function), but no arena needs beat to
recover. Redis or the database being away is retried at the next tick; the thread never dies
of it. A Redis outage is said once for the whole process (:data:`atout_arena.core.wire.redis_outage`:
a line when it begins, a line when Redis is back), not once a tick.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time

import redis
from sqlalchemy.exc import OperationalError

from atout_arena.core.keys import CONTRACT_KEY, SWEEPER_LOCK_KEY, WORKERS_KEY, ladder_armed_key
from atout_arena.core.relay import ContractMismatch, check_contract
from atout_arena.core.tasks import MATCH_QUEUE, PRACTICE_QUEUE
from atout_arena.core.wire import database_outage, is_outage, redis_outage
from atout_arena.services import ladders
from atout_workers import store
from atout_workers.sweeper import SweepReport, sweep
from atout_workers.world import World

log = logging.getLogger(__name__)

TICK_S = 1.0
LIVENESS_TTL_S = 3.0  # a worker that did not renew its entry for this long is dead
MATCH_QUEUES = (MATCH_QUEUE, PRACTICE_QUEUE)  # where a lost match task may still wait


def process_id() -> str:
    """This process as it prefixes its lease ids (:meth:`atout_workers.world.World.new_lease_id`)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def contract_part() -> str:
    """This process in the Redis contract's registry (:func:`atout_arena.core.relay.check_contract`)."""
    return f"worker {process_id()}"


def sweep_world(world: World) -> SweepReport:
    """One sweep of the world's matches, tournaments and tests (beat's task and the keeper)."""

    report = sweep(
        world.sessions,
        stale_s=world.settings.match_stale_s,
        requeue_after_s=world.settings.requeue_after_s,
        queue_length=lambda: sum(int(world.redis.llen(q)) for q in MATCH_QUEUES),
        dispatch_match=world.send_match,
        dispatch_finalize=world.tasks.finalize_tournament,
        dispatch_test=world.tasks.test_tick,
    )
    for ladder_id in ladders.running_ladders(world.sessions):  # a chain of ticks lost with its worker
        if not world.redis.exists(ladder_armed_key(ladder_id)):
            world.tasks.ladder_tick(ladder_id)
    return report


def recover_dead_workers(world: World, me: str, now_ms: int | None = None) -> list[int]:
    """Put back in the queue (and send again) the running matches of worker processes whose
    liveness expired; returns the matches sent. Safe in every worker at once."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    dead = [m.decode() if isinstance(m, bytes) else str(m)
            for m in world.redis.zrangebyscore(WORKERS_KEY, "-inf", now)]
    dead = [d for d in dead if d != me]
    if not dead:
        return []
    silent_s = 2 * world.settings.heartbeat_s  # its heartbeat thread died with it
    back = store.orphaned_running(world.sessions, dead, silent_s)
    for match_id in back:
        log.warning("match %s: its worker process died; dispatching it again", match_id)
        world.send_match(match_id)
    still_held = store.running_of(world.sessions, dead)
    gone = [d for d in dead if d not in still_held]
    if gone:
        world.redis.zrem(WORKERS_KEY, *gone)
    return back


class Keeper:
    """The thread of one worker process: liveness, dead workers' matches, the sweep."""

    def __init__(self, world: World, tick_s: float = TICK_S) -> None:
        self.world = world
        self.tick_s = tick_s
        self.me = process_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sweeper: threading.Thread | None = None
        # since when this keeper has reached Redis without a failed tick: other workers are
        # judged dead only once it has for a liveness TTL (see tick)
        self._reaching_since = time.monotonic()
        self._renewed_at = time.monotonic()  # the last renewal of this worker's liveness that went through

    def start(self) -> None:
        if self._thread is None:
            # Alive from the start, not a tick later: a worker killed before its first tick (it
            # may claim a match at once) would never be seen dead, its matches held until stale.
            try:
                self._renew()
            except redis.RedisError as exc:  # Redis away: the first tick registers it
                if is_outage(exc):
                    redis_outage.failed("the keeper registering this worker", exc)
                else:
                    log.warning("keeper: could not register this process yet (%s)", exc)
            self._thread = threading.Thread(target=self._run, name="atout-keeper", daemon=True)
            self._thread.start()
            self._sweeper = threading.Thread(target=self._run_sweeps, name="atout-sweeper", daemon=True)
            self._sweeper.start()
            log.info("keeper: sweeping every %.1f s under a Redis lock (no beat needed)",
                     self.world.settings.sweep_interval_s)

    def stop(self) -> None:
        self._stop.set()
        for thread in (self._thread, self._sweeper):
            if thread is not None:
                thread.join(5.0)
        with contextlib.suppress(redis.RedisError):
            self.world.redis.zrem(WORKERS_KEY, self.me)
            self.world.redis.hdel(CONTRACT_KEY, contract_part())

    def _renew(self) -> None:
        """This process's liveness in ``atout:workers``, for LIVENESS_TTL_S from now. A renewal
        that comes more than a TTL after the last one (the calls failed, or hung: a partition
        drops packets silently, and a call waits its socket's timeout) means this worker was cut
        off, and so, likely, were the others: it starts the wait of :meth:`tick`."""
        self.world.redis.zadd(WORKERS_KEY, {self.me: int((time.time() + LIVENESS_TTL_S) * 1000)})
        now = time.monotonic()
        if now - self._renewed_at > LIVENESS_TTL_S:
            self._reaching_since = now
        self._renewed_at = now

    def tick(self) -> None:
        world = self.world
        self._renew()
        try:
            check_contract(world.redis, contract_part())
        except ContractMismatch as exc:  # registered while this one could not renew: say so
            log.error("%s", exc)
        # After an outage that cut this worker off (a partition between workers and Redis, a
        # Redis restart), every worker's liveness lapsed together: the others are not dead, they
        # renew at their next tick. Judging them only once this keeper has been back a whole
        # liveness TTL keeps their matches theirs, not played again from their seeds.
        if time.monotonic() - self._reaching_since >= LIVENESS_TTL_S + self.tick_s:
            recover_dead_workers(world, self.me)

    def sweep(self) -> SweepReport | None:
        """One sweep, if this worker takes the sweeper's lock for this interval (else None)."""
        world = self.world
        lock_ms = max(1, int(world.settings.sweep_interval_s * 1000 * 0.9))
        if not world.redis.set(SWEEPER_LOCK_KEY, self.me, nx=True, px=lock_ms):
            return None
        report = sweep_world(world)
        if any(report.as_dict().values()):
            log.info("keeper: swept %s", report.as_dict())
        return report

    def _run(self) -> None:
        while not self._stop.wait(self.tick_s):
            self.tick_safely()

    def _run_sweeps(self) -> None:
        wait = self.tick_s  # the first a tick after the start, as the liveness
        while not self._stop.wait(wait):
            wait = self.world.settings.sweep_interval_s
            try:
                self.sweep()
            except Exception as exc:  # said once per outage, tried again at the next interval
                if is_outage(exc):
                    redis_outage.failed("the keeper's sweep", exc)
                elif isinstance(exc, OperationalError):
                    database_outage.failed("the keeper's sweep", exc)
                else:
                    log.warning("keeper: sweep: %s: %s (retrying in %.1f s)", type(exc).__name__, exc,
                                self.world.settings.sweep_interval_s)

    def tick_safely(self) -> None:
        """One :meth:`tick`, its failure said (once per outage) rather than raised."""
        try:
            self.tick()
        except Exception as exc:  # Redis or the database away: try again at the next tick
            if isinstance(exc, redis.RedisError) or is_outage(exc):  # cut off from the others' liveness
                self._reaching_since = time.monotonic()
            if is_outage(exc):  # said once for the process, not once a tick
                redis_outage.failed("the keeper", exc)
            elif isinstance(exc, OperationalError):
                database_outage.failed("the keeper's recovery of dead workers", exc)
            else:
                log.warning("keeper: %s: %s (retrying in %.1f s)", type(exc).__name__, exc, self.tick_s)
        else:
            redis_outage.ok()  # (the database's end is said by the heartbeats and results)


_keeper: Keeper | None = None


def start_keeper(world: World) -> Keeper:
    global _keeper
    if _keeper is None:
        _keeper = Keeper(world)
        _keeper.start()
    return _keeper


def stop_keeper() -> None:
    global _keeper
    if _keeper is not None:
        _keeper.stop()
        _keeper = None
