"""One thread per worker process that writes every match's spectator events and metrics to
Redis, many per round trip.

A match thread only serialises its events and puts a small writer function on a queue; the
sink thread takes everything queued, runs the writers on one Redis pipeline and executes it.
With 32 matches in flight that is one round trip for many steps instead of one per step,
and the match threads never wait on Redis for spectators. Order is kept (one queue, one
thread), so a match's events reach its channels in the order they were played.

The decisions' metrics of every match of the process are added up here too
(:meth:`EventSink.add_decisions`) and written once every :data:`METRICS_FLUSH_S`, a few commands
per bot whatever the matches in flight (a thousand matches each writing its own every second
were a tenth of a worker's work), and at once when a :meth:`~EventSink.flush` is asked for.

The sink also keeps track of which channels have subscribers (``PUBSUB NUMSUB``, asked in
its own pipelines every :data:`LISTEN_CHECK_S`), so that matches serialise a seat's view only
for someone listening.

Delivery is best effort: a batch that fails (Redis gone) is logged and dropped; the match
goes on. The queue is bounded: when Redis is slower than the matches, they wait for room.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import redis

from atout_arena.core.metrics import MetricsRecorder
from atout_arena.core.wire import is_outage, redis_outage

log = logging.getLogger(__name__)

Writer = Callable[[Any], None]  # adds commands to a pipeline
LISTEN_CHECK_S = 0.5
# The latest-event key of unwatched matches (what a spectator who opens a match sees first) is
# refreshed at most this many times a second in one process, whatever the matches in flight:
# with a thousand matches each refreshing once a second, building those views was as much work
# as the decisions themselves. A match then waits its turn (its key is a few seconds old at
# most); one that someone watches publishes every step, as before.
LATEST_EVENTS_PER_S = 200.0
MAX_BATCH = 2000
QUEUE_SIZE = 20_000
METRICS_FLUSH_S = 1.0  # how often the decisions' metrics added up in the process are written


class EventSink:
    def __init__(self, client: redis.Redis, metrics: MetricsRecorder | None = None) -> None:
        self.client = client
        self.metrics = metrics
        self._decisions: dict[tuple[str, str], list[float]] = {}  # (game, bot) -> seconds, not written yet
        self._decisions_written = time.monotonic()
        self._queue: queue.Queue[Writer | threading.Event] = queue.Queue(QUEUE_SIZE)
        self._channels: dict[str, int] = {}  # watched channel -> matches watching it
        self._listening: set[str] = set()
        self._on_heard: dict[str, Callable[[], None]] = {}  # channel -> called when a listener comes
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._checked = 0.0
        self._refresh_tokens = LATEST_EVENTS_PER_S
        self._refreshed_at = time.monotonic()

    # -- match side ---------------------------------------------------------------------------

    def put(self, writer: Writer | threading.Event) -> None:
        """Queue a writer; an Event is set once what was queued before it is written (flush)."""
        self._start()
        self._queue.put(writer, timeout=60)

    def add_decisions(self, game: str, decisions: Sequence[tuple[str, float]]) -> None:
        """Decision times ``(bot, seconds)`` of one match, added up with those of every match of
        the process and written by the sink's thread within :data:`METRICS_FLUSH_S` (or at the
        next :meth:`flush`). Needs the ``metrics`` the sink was made with."""
        if not decisions or self.metrics is None:
            return
        with self._lock:
            tally = self._decisions
            for bot, seconds in decisions:
                times = tally.get((game, bot))
                if times is None:
                    tally[(game, bot)] = [seconds]
                else:
                    times.append(seconds)
        self._start()

    def listening_any(self, channels: frozenset[str]) -> bool:
        """Whether any of ``channels`` has a subscriber (one set operation: asked at every step)."""
        return not self._listening.isdisjoint(channels)

    def watch(self, channels: Iterable[str], on_heard: Callable[[], None] | None = None) -> None:
        """Start tracking whether these channels have subscribers (asked at once). ``on_heard()``
        is called (on the sink's thread) when one of them gets a subscriber it did not have."""
        channels = list(channels)
        with self._lock:
            for channel in channels:
                self._channels[channel] = self._channels.get(channel, 0) + 1
                if on_heard is not None:
                    self._on_heard[channel] = on_heard
        try:
            counts = self.client.pubsub_numsub(*channels)
        except redis.RedisError:
            return
        with self._lock:
            for subscribed, count in counts:
                name = subscribed.decode() if isinstance(subscribed, bytes) else subscribed
                if count:
                    self._listening.add(name)

    def unwatch(self, channels: Iterable[str]) -> None:
        with self._lock:
            for channel in channels:
                left = self._channels.get(channel, 0) - 1
                if left <= 0:
                    self._channels.pop(channel, None)
                    self._listening.discard(channel)
                    self._on_heard.pop(channel, None)
                else:
                    self._channels[channel] = left

    def listening(self, channel: str) -> bool:
        return channel in self._listening

    def take_refresh(self, now: float) -> bool:
        """Whether an unwatched match may refresh its latest event now (a token of the
        process's :data:`LATEST_EVENTS_PER_S` budget); ``now`` is ``time.monotonic()``."""
        with self._lock:
            refill = (now - self._refreshed_at) * LATEST_EVENTS_PER_S
            tokens = min(LATEST_EVENTS_PER_S, self._refresh_tokens + refill)
            self._refreshed_at = now
            if tokens < 1.0:
                self._refresh_tokens = tokens
                return False
            self._refresh_tokens = tokens - 1.0
            return True

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is written (True) or ``timeout`` passes."""
        done = threading.Event()
        self.put(done)
        return done.wait(timeout)

    # -- sink side ----------------------------------------------------------------------------

    def _start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="atout-events", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                first = self._queue.get(timeout=LISTEN_CHECK_S)
            except queue.Empty:
                first = None
            batch = [] if first is None else [first]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(batch)
            except Exception:  # keep the sink alive whatever happens; the batch is lost
                log.exception("writing %d spectator events / metrics failed", len(batch))

    def _write(self, batch: list[Writer | threading.Event]) -> None:
        done = [item for item in batch if isinstance(item, threading.Event)]
        try:
            pipe = self.client.pipeline(transaction=False)
            for item in batch:
                if isinstance(item, threading.Event):
                    continue
                try:
                    item(pipe)
                except Exception:  # one bad writer (a bug) must not cost the others their events
                    log.exception("a spectator event / metrics writer failed; skipped")
            now = time.monotonic()
            if done or now - self._decisions_written >= METRICS_FLUSH_S:
                self._write_decisions(pipe, now)
            check = now - self._checked >= LISTEN_CHECK_S
            with self._lock:
                channels = list(self._channels) if check else []
            numsub_at = len(pipe)
            if channels:
                pipe.pubsub_numsub(*channels)
                self._checked = time.monotonic()
            if not len(pipe):
                return
            try:
                replies = pipe.execute()
            except redis.RedisError as exc:
                if is_outage(exc):  # said once per outage, for the whole process (core.wire)
                    redis_outage.failed("the spectator events", exc)
                else:
                    log.exception("could not write %d spectator events / metrics to Redis: dropped",
                                  len(batch))
                return
            redis_outage.ok()
            if channels:
                heard = {(c.decode() if isinstance(c, bytes) else c) for c, n in replies[numsub_at] if n}
                with self._lock:
                    asked = set(channels)  # a channel watched since this batch began was asked on its own
                    new = heard - self._listening
                    self._listening = (heard & set(self._channels)) | (self._listening - asked)
                    calls = {id(f): f for c in new if (f := self._on_heard.get(c)) is not None}
                for call in calls.values():
                    try:
                        call()
                    except Exception:
                        log.exception("a listener callback failed")
        finally:
            for event in done:
                event.set()

    def _write_decisions(self, pipe: Any, now: float) -> None:
        with self._lock:
            tally, self._decisions = self._decisions, {}
        self._decisions_written = now
        if not tally:
            return
        metrics = self.metrics
        assert metrics is not None  # decisions are tallied only with a recorder
        for (game, bot), times in tally.items():
            try:
                metrics.decisions(game, bot, times, pipe)
            except Exception:  # (a bug) it must not cost the other bots nor the batch their writes
                log.exception("the decisions' metrics of %s in %s could not be written; skipped", bot, game)

    def stop(self) -> None:
        self._stop.set()
