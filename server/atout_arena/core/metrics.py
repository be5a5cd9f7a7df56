"""The arena's Prometheus metrics: names, help, labels, and where their values live.

Every process that counts something (Celery workers, game servers) writes into Redis; the
process that serves ``/metrics`` (the API) reads Redis at scrape time through
:class:`ArenaCollector`. That is our multi-process mode: counts of any number of worker
processes, on any number of machines, add up in one place, survive a worker's restart, and
need no shared directory (prometheus_client's ``PROMETHEUS_MULTIPROC_DIR`` mode only works for
processes on one machine and leaves files of dead processes behind). Writes are ``HINCRBY`` /
``HINCRBYFLOAT`` (atomic in Redis), usually batched into the pipeline that already publishes a
match step, so a decision costs no extra round trip.

Redis layout: one hash per metric, ``atout:metrics:<name>``. A field is the JSON list of label
values; histograms add ``\\t<bucket index>`` and ``\\tsum`` (bucket counts are stored per bucket
and made cumulative when read; the count is the ``+Inf`` bucket).

Two gauges are read from what is already in Redis rather than counted:
``atout_bots_connected`` from the game servers' presence records (the ``atout:connected``
sorted set of :mod:`atout_arena.core.relay`, where every game server keeps its live bots with the time
their presence expires: a game server that dies leaves no bot counted once its bots' presence
has expired), and ``atout_queue_depth`` from the lengths of the Celery queues in the broker
(the same Redis; kombu keeps a queue's messages in a list of its name, and those of priorities
above 0 in lists beside it).

Labels are bounded: ``game`` is one of the rulesets, ``outcome`` and ``kind`` come from fixed
lists, ``bot`` is a registered bot's name, ``queue`` one of the Celery queues.

Collectors that read the database (the ladders') run inside :class:`FailSafeCollectors`: when
one fails (the database is down), its metrics are left out of that scrape, the scrape still
serves what Redis counts, and ``atout_collector_errors_total{collector}`` counts the scrapes it
missed (in the serving process: each API is a target of its own).

Several APIs: only the one holding the metrics lease (:mod:`atout_arena.api.leadership`) serves
what :class:`ArenaCollector` and the database's collectors yield; each API serves its own
:data:`METRICS_LEADER` (1 on that one) and :data:`COLLECTOR_ERRORS`. A ``sum()`` over every
API Prometheus scrapes is then the arena's count, whichever API leads.

>>> from prometheus_client import generate_latest
>>> # registry = metrics_registry(redis_client); generate_latest(registry)  # the /metrics body
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import (
    CollectorRegistry,
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from atout.games import GAMES
from atout_arena.core.keys import CONNECTED_KEY, metric_key, split_address
from atout_arena.core.relay import now_ms
from atout_arena.core.vocabulary import FAULT_KINDS, OUTCOMES

log = logging.getLogger(__name__)

# kombu's Redis transport: a message of priority p > 0 waits in "<queue>\x06\x16<p>"
QUEUE_PRIORITY_SUFFIXES = ("", *(f"\x06\x16{p}" for p in (3, 6, 9)))


DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
MATCH_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


@dataclass(frozen=True)
class MetricSpec:
    name: str
    kind: str  # "counter", "gauge" or "histogram"
    help: str
    labels: tuple[str, ...]
    buckets: tuple[float, ...] = ()

    @property
    def key(self) -> str:
        return metric_key(self.name)


DECISION_SECONDS = MetricSpec(
    "atout_decision_seconds", "histogram",
    "Think time of one decision as the worker saw it (request sent to answer received), by game and bot.",
    ("game", "bot"), DECISION_BUCKETS)
MATCHES_TOTAL = MetricSpec(
    "atout_matches_total", "counter",
    "Matches played to the end, by game and outcome (finished, forfeit, error).",
    ("game", "outcome"))
MATCH_SECONDS = MetricSpec(
    "atout_match_seconds", "histogram",
    "Wall-clock duration of a match, from its first decision to its stored result, by game.",
    ("game",), MATCH_BUCKETS)
FAULTS_TOTAL = MetricSpec(
    "atout_faults_total", "counter",
    "Faults charged to bots, by bot and kind (timeout, illegal, disconnected).",
    ("bot", "kind"))
RATING = MetricSpec(
    "atout_rating", "gauge",
    "Current online Elo rating of a bot in a game.",
    ("game", "bot"))
BOTS_CONNECTED = MetricSpec(
    "atout_bots_connected", "gauge",
    "Bots with a live stream to some game server.",
    ())
QUEUE_DEPTH = MetricSpec(
    "atout_queue_depth", "gauge",
    "Celery tasks waiting in the broker, by queue.",
    ("queue",))

STREAM_LIMITED = MetricSpec(
    "atout_stream_limited_total", "counter",
    "Bot messages held back by a game server's limits, by bot and limit: 'rate' (read later: the "
    "stream's token bucket was empty), 'answers' (dropped: its request had its rejected answers).",
    ("bot", "limit"))
STREAM_LIMITS = ("rate", "answers")
COLLECTOR_ERRORS = MetricSpec(
    "atout_collector_errors_total", "counter",
    "Scrapes of /metrics that left out a collector's metrics because it failed (its database "
    "unavailable, say), by collector; counted by the process that serves /metrics, not in Redis.",
    ("collector",))

METRICS_LEADER = MetricSpec(
    "atout_metrics_leader", "gauge",
    "1 when this API serves the arena-wide series on its /metrics (it holds the metrics lease), "
    "0 when another API does; per process, not in Redis: sum() over the APIs is 1.",
    ())

ALL_METRICS: tuple[MetricSpec, ...] = (
    DECISION_SECONDS, MATCHES_TOTAL, MATCH_SECONDS, FAULTS_TOTAL, RATING, BOTS_CONNECTED, QUEUE_DEPTH,
    STREAM_LIMITED,
)


def limited_field(bot: str, limit: str) -> str:
    """The field of :data:`STREAM_LIMITED` for ``bot`` and ``limit`` (one of STREAM_LIMITS)."""
    if limit not in STREAM_LIMITS:
        raise ValueError(f"metrics: unknown limit {limit!r}; limits: {', '.join(STREAM_LIMITS)}")
    return _field((bot, limit))


def _field(labels: Sequence[str]) -> str:
    return json.dumps(list(labels), separators=(",", ":"))


def _bucket_index(buckets: Sequence[float], value: float) -> int:
    for i, bound in enumerate(buckets):
        if value <= bound:
            return i
    return len(buckets)  # +Inf


class MetricsRecorder:
    """The write side, for workers and game servers. Pass ``pipe`` (a Redis pipeline) to
    batch a write with others; without it each call is one round trip."""

    def __init__(self, redis: Any, games: Iterable[str] | None = None) -> None:
        self.redis = redis
        if games is None:
            games = GAMES
        self.games = frozenset(games)

    def _game(self, game: str) -> str:
        if game not in self.games:
            raise ValueError(f"metrics: unknown game {game!r} (labels are bounded to the rulesets)")
        return game

    def _observe(self, spec: MetricSpec, labels: Sequence[str], value: float, pipe: Any) -> None:
        target = pipe if pipe is not None else self.redis.pipeline(transaction=False)
        base = _field(labels)
        target.hincrby(spec.key, f"{base}\t{_bucket_index(spec.buckets, value)}", 1)
        target.hincrbyfloat(spec.key, f"{base}\tsum", float(value))
        if pipe is None:
            target.execute()

    def decision(self, game: str, bot: str, seconds: float, pipe: Any = None) -> None:
        self._observe(DECISION_SECONDS, (self._game(game), bot), seconds, pipe)

    def decisions(self, game: str, bot: str, seconds: Iterable[float], pipe: Any = None) -> None:
        """:meth:`decision` of each of ``seconds`` (one bot's decisions), added up first: one
        HINCRBY per bucket they fall in and one HINCRBYFLOAT, however many decisions."""
        target = pipe if pipe is not None else self.redis.pipeline(transaction=False)
        base = _field((self._game(game), bot))
        buckets = DECISION_SECONDS.buckets
        counts: dict[int, int] = {}
        total = 0.0
        for value in seconds:
            index = _bucket_index(buckets, value)
            counts[index] = counts.get(index, 0) + 1
            total += value
        if counts:
            for index, count in counts.items():
                target.hincrby(DECISION_SECONDS.key, f"{base}\t{index}", count)
            target.hincrbyfloat(DECISION_SECONDS.key, f"{base}\tsum", total)
        if pipe is None:
            target.execute()

    def match(self, game: str, outcome: str, seconds: float, pipe: Any = None) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"metrics: unknown outcome {outcome!r}; outcomes: {', '.join(OUTCOMES)}")
        target = pipe if pipe is not None else self.redis.pipeline(transaction=False)
        target.hincrby(MATCHES_TOTAL.key, _field((self._game(game), outcome)), 1)
        self._observe(MATCH_SECONDS, (game,), seconds, target)
        if pipe is None:
            target.execute()

    def fault(self, bot: str, kind: str, count: int = 1, pipe: Any = None) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"metrics: unknown fault kind {kind!r}; kinds: {', '.join(FAULT_KINDS)}")
        (pipe or self.redis).hincrby(FAULTS_TOTAL.key, _field((bot, kind)), count)

    def rating(self, game: str, bot: str, value: float, pipe: Any = None) -> None:
        (pipe or self.redis).hset(RATING.key, _field((self._game(game), bot)), repr(float(value)))

    def reset(self) -> None:
        """Forget every stored value (tests, and ``atout-arena`` maintenance)."""
        self.redis.delete(*(spec.key for spec in ALL_METRICS))


def _decode(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class ArenaCollector(Collector):
    """The read side: yields every metric of :data:`ALL_METRICS` from Redis at scrape time, in
    one round trip.

    ``queues`` are the Celery queues whose depth is reported (their Redis lists live in the
    broker, which is the same Redis); ``atout_bots_connected`` counts the bots whose presence,
    kept by whichever game server holds their stream, has not expired.
    """

    def __init__(self, redis: Any, queues: Sequence[str] = ()) -> None:
        self.redis = redis
        self.queues = tuple(queues)

    def describe(self) -> Iterator[Metric]:
        return iter(())  # values come from Redis: nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        pipe = self.redis.pipeline(transaction=False)
        for spec in (DECISION_SECONDS, MATCHES_TOTAL, MATCH_SECONDS, FAULTS_TOTAL, RATING):
            pipe.hgetall(spec.key)
        pipe.zrangebyscore(CONNECTED_KEY, now_ms(), "+inf")  # presences not expired yet
        for queue in self.queues:
            for suffix in QUEUE_PRIORITY_SUFFIXES:
                pipe.llen(queue + suffix)
        pipe.hgetall(STREAM_LIMITED.key)
        *replies, limited = pipe.execute()
        raw = dict(zip((DECISION_SECONDS, MATCHES_TOTAL, MATCH_SECONDS, FAULTS_TOTAL, RATING),
                       replies[:5], strict=True))
        yield self._histogram(DECISION_SECONDS, raw[DECISION_SECONDS])
        yield self._simple(MATCHES_TOTAL, raw[MATCHES_TOTAL], CounterMetricFamily)
        yield self._histogram(MATCH_SECONDS, raw[MATCH_SECONDS])
        # Counters of faults and stream limits start at 0 for every bot that has decided, so that
        # a healthy arena's rates are 0 rather than no data (Prometheus's advice for counters)
        deciders = sorted({json.loads(_decode(k).split("\t")[0])[1] for k in raw[DECISION_SECONDS]})
        yield self._simple(FAULTS_TOTAL, raw[FAULTS_TOTAL], CounterMetricFamily,
                           zeros=[(bot, kind) for bot in deciders for kind in FAULT_KINDS])
        yield self._simple(RATING, raw[RATING], GaugeMetricFamily)
        bots = {split_address(_decode(address))[0] for address in replies[5]}  # a bot, whatever its versions
        yield GaugeMetricFamily(BOTS_CONNECTED.name, BOTS_CONNECTED.help, value=float(len(bots)))
        depth = GaugeMetricFamily(QUEUE_DEPTH.name, QUEUE_DEPTH.help, labels=QUEUE_DEPTH.labels)
        lengths = replies[6:]
        step = len(QUEUE_PRIORITY_SUFFIXES)
        for i, queue in enumerate(self.queues):
            depth.add_metric([queue], float(sum(lengths[i * step : (i + 1) * step])))
        yield depth
        yield self._simple(STREAM_LIMITED, limited, CounterMetricFamily,
                           zeros=[(bot, limit) for bot in deciders for limit in STREAM_LIMITS])

    @staticmethod
    def _simple(spec: MetricSpec, data: dict[Any, Any], family: type[GaugeMetricFamily | CounterMetricFamily],
                zeros: Iterable[Sequence[str]] = ()) -> Metric:
        """``zeros``: label values whose series is 0 when nothing was counted for them."""
        name = spec.name[: -len("_total")] if family is CounterMetricFamily else spec.name
        metric = family(name, spec.help, labels=spec.labels)
        values = {_decode(k): float(_decode(v)) for k, v in data.items()}
        for labels in zeros:
            values.setdefault(_field(labels), 0.0)
        for key, value in sorted(values.items()):
            metric.add_metric(json.loads(key), value)
        return metric

    @staticmethod
    def _histogram(spec: MetricSpec, data: dict[Any, Any]) -> Metric:
        series: dict[str, dict[str, float]] = {}
        for k, v in data.items():
            labels, part = _decode(k).split("\t")
            series.setdefault(labels, {})[part] = float(_decode(v))
        metric = HistogramMetricFamily(spec.name, spec.help, labels=spec.labels)
        for labels, parts in sorted(series.items()):
            cumulative, buckets = 0.0, []
            for i, bound in enumerate((*spec.buckets, float("inf"))):
                cumulative += parts.get(str(i), 0.0)
                buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
            metric.add_metric(json.loads(labels), buckets, parts.get("sum", 0.0))
        return metric


def metrics_registry(redis: Any, queues: Sequence[str] = ()) -> CollectorRegistry:
    """A registry holding only the arena's metrics, for ``generate_latest(registry)``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ArenaCollector(redis, queues))
    return registry


class FailSafeCollectors(Collector):
    """Collectors that may fail while the rest of ``/metrics`` must not (those that read the
    database), by name. A collector that raises is left out of that scrape, whole (nothing of
    a collector that failed halfway), and counted in :data:`COLLECTOR_ERRORS`, yielded after
    them. Its failure is logged once per outage: one line when it starts failing, one when it
    works again, nothing for the scrapes between. One instance lives as long as the app (the
    counts are its own), registered in each scrape's registry."""

    def __init__(self, collectors: Mapping[str, Collector]) -> None:
        self.collectors = dict(collectors)
        self.errors = dict.fromkeys(self.collectors, 0)
        self._failing: set[str] = set()
        self._lock = threading.Lock()  # scrapes run on several threads at once

    def describe(self) -> Iterator[Metric]:
        return iter(())

    def collect(self) -> Iterator[Metric]:
        for name, collector in self.collectors.items():
            try:
                metrics = list(collector.collect())
            except Exception as exc:  # whatever it is, the other metrics are still served
                self._failed(name, exc)
                continue
            self._worked(name)
            yield from metrics
        yield self.error_counter()

    def errors_only(self) -> Collector:
        """A collector of :data:`COLLECTOR_ERRORS` alone, the collectors not run: what an API
        that does not serve the arena-wide series (another one leads) still says of itself."""
        return _ErrorsOnly(self)

    def error_counter(self) -> Metric:
        """:data:`COLLECTOR_ERRORS`, as counted so far by this process."""
        counter = CounterMetricFamily(COLLECTOR_ERRORS.name[: -len("_total")], COLLECTOR_ERRORS.help,
                                      labels=COLLECTOR_ERRORS.labels)
        with self._lock:
            for name, count in self.errors.items():
                counter.add_metric([name], float(count))
        return counter

    def _failed(self, name: str, exc: Exception) -> None:
        with self._lock:
            self.errors[name] += 1
            first = name not in self._failing
            self._failing.add(name)
        if first:
            text = " ".join(str(exc).split())[:300]
            log.warning("metrics: the %s collector failed (%s: %s): its metrics are left out of /metrics "
                        "until it works again", name, type(exc).__name__, text)

    def _worked(self, name: str) -> None:
        if name not in self._failing:  # the usual case, without the lock
            return
        with self._lock:
            if name not in self._failing:
                return
            self._failing.discard(name)
            missed = self.errors[name]
        log.info("metrics: the %s collector works again (%d scrapes without it so far)", name, missed)


class _ErrorsOnly(Collector):
    def __init__(self, owner: FailSafeCollectors) -> None:
        self.owner = owner

    def describe(self) -> Iterator[Metric]:
        return iter(())

    def collect(self) -> Iterator[Metric]:
        yield self.owner.error_counter()


def leader_gauge(leads: bool) -> Collector:
    """:data:`METRICS_LEADER` of this process: 1 when it serves the arena-wide series."""
    return _Constant(GaugeMetricFamily(METRICS_LEADER.name, METRICS_LEADER.help, value=1.0 if leads else 0.0))


class _Constant(Collector):
    def __init__(self, metric: Metric) -> None:
        self.metric = metric

    def describe(self) -> Iterator[Metric]:
        return iter(())

    def collect(self) -> Iterator[Metric]:
        yield self.metric
