"""What a worker process shares between its match threads: database, Redis, decision client,
metrics, the heartbeat thread that keeps every match it plays alive, and the event sink that
writes every match's spectator events and metrics to Redis in batches.

Built on first use (:func:`get_world`), from the settings (:mod:`atout_arena.core.settings`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from dataclasses import dataclass, field

import redis
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import sessionmaker

from atout_arena.core.db import open_database
from atout_arena.core.metrics import MetricsRecorder
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.core.wire import database_outage
from atout_workers import store
from atout_workers.decisions import AsyncDecisionClient, DecisionClient
from atout_workers.events import EventSink
from atout_workers.loop import SYNC_THREADS, MatchLoop

log = logging.getLogger(__name__)


@dataclass
class Lease:
    """A match this process plays: its lease id, and an event set when the lease is lost."""

    match_id: int
    id: str  # host:pid:nonce, as stored in matches.lease_id
    lost: threading.Event = field(default_factory=threading.Event)


class Heartbeater:
    """One thread per process renewing the heartbeat of every match it plays.

    Independent of the matches' threads, so a bot thinking for a long time never makes its
    match look dead; a match whose lease was taken over (its heartbeat went stale, the sweeper
    gave it to another worker) gets ``lost`` set and its thread stops at the next step.
    """

    def __init__(self, sessions: sessionmaker, interval_s: float) -> None:
        self.sessions = sessions
        self.interval_s = interval_s
        self._leases: dict[int, Lease] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, match_id: int, lease_id: str) -> Lease:
        lease = Lease(match_id, lease_id)
        with self._lock:
            self._leases[match_id] = lease
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="atout-heartbeat", daemon=True)
                self._thread.start()
        return lease

    def remove(self, lease: Lease) -> None:
        with self._lock:
            if self._leases.get(lease.match_id) is lease:
                del self._leases[lease.match_id]

    def beat_once(self) -> bool:
        """Renew every lease; False when there was none (the database was not asked)."""
        with self._lock:
            leases = list(self._leases.values())
        if not leases:
            return False
        lost = store.heartbeat(self.sessions, [(lease.match_id, lease.id) for lease in leases])
        with self._lock:  # a lease removed meanwhile is a match its thread ended itself: not lost
            current = set(map(id, self._leases.values()))
        for lease in leases:
            if lease.match_id in lost and id(lease) in current:
                log.warning("match %s: lease of %s lost (another worker took it over)", lease.match_id,
                            lease.id)
                lease.lost.set()
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                asked = self.beat_once()
            except OperationalError as exc:  # the database away: said once, beat again later
                database_outage.failed("the matches' heartbeats", exc)
            except Exception:  # a database hiccup must not kill the thread: log, beat again later
                log.exception("heartbeat failed; retrying in %.1f s", self.interval_s)
            else:
                if asked:
                    database_outage.ok()

    def stop(self) -> None:
        self._stop.set()


@dataclass
class World:
    settings: Settings
    engine: Engine
    sessions: sessionmaker
    redis: redis.Redis
    decisions: DecisionClient
    metrics: MetricsRecorder
    heartbeater: Heartbeater
    events: EventSink
    tasks: Tasks  # sends the tasks that follow a match (finalize) and the sweeper's re-sends
    _loop: MatchLoop | None = None
    _async_decisions: AsyncDecisionClient | None = None
    _loop_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def matches(self) -> MatchLoop:
        """The process's event loop playing its matches, started on first use, with room for
        ``ATOUT_WORKER_CONCURRENCY`` matches in flight."""
        with self._loop_lock:
            if self._loop is None:
                self._loop = MatchLoop(self.settings.worker_concurrency)
            return self._loop

    def send_match(self, match_id: int) -> None:
        """Send match ``match_id`` to the workers again, on its queue (practice or matches)."""
        self.tasks.play(match_id, practice=store.is_practice(self.sessions, match_id))

    def new_lease_id(self) -> str:
        """A unique lease id naming this process (host:pid) for logs and the matches table."""
        return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def close(self) -> None:
        if self._loop is not None:
            if self._async_decisions is not None:
                try:
                    self._loop.call(self._async_decisions.close(), 5)
                except Exception:  # closing anyway
                    log.exception("closing the event loop's decision client failed")
            self._loop.stop()
            self._loop = None
        self.heartbeater.stop()
        self.events.flush(5.0)
        self.events.stop()
        self.decisions.close()
        self.tasks.close()
        self.redis.close()
        self.engine.dispose()


def matches_client(world: World) -> AsyncDecisionClient:
    """The decision client of the process's event loop (made on the loop, on first use)."""
    if world._async_decisions is None:
        url = world.settings.redis_url
        assert url is not None  # build_world refuses settings without one
        world._async_decisions = AsyncDecisionClient(url, outage_limit_s=world.settings.outage_limit_s)
    return world._async_decisions


CELERY_THREADS = 4  # a worker's Celery pool: its threads claim matches and hand them to the loop
_world: World | None = None
_world_lock = threading.Lock()


def build_world(settings: Settings | None = None) -> World:
    settings = settings or Settings.from_env()
    if not settings.redis_url:
        raise RuntimeError("ATOUT_REDIS_URL is not set: workers need the Redis the game servers use")
    # the Celery threads (claims), the event loop's threads (results), the heartbeat thread (and
    # up to 32 threads playing matches by themselves: run_match, in tests)
    pool_size = min(settings.worker_concurrency, 32) + SYNC_THREADS + 2
    engine, sessions = open_database(settings.database_url, pool_size=pool_size)
    client = sync_client(settings.redis_url, socket_timeout=30, socket_connect_timeout=5)
    metrics = MetricsRecorder(client)
    return World(
        settings=settings,
        engine=engine,
        sessions=sessions,
        redis=client,
        decisions=DecisionClient(settings.redis_url, outage_limit_s=settings.outage_limit_s),
        metrics=metrics,
        heartbeater=Heartbeater(sessions, settings.heartbeat_s),
        events=EventSink(client, metrics),
        tasks=Tasks.for_settings(settings),
    )


def get_world() -> World:
    """This process's world, built on first use."""
    global _world
    with _world_lock:
        if _world is None:
            _world = build_world()
        return _world


def reset_world() -> None:
    """Forget (and close) this process's world: tests that change the environment."""
    global _world
    with _world_lock:
        if _world is not None:
            _world.close()
        _world = None
