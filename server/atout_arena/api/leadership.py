"""Which API serves the arena-wide series on ``/metrics``: the one that holds the metrics lease.

The arena's counts live in Redis (:mod:`atout_arena.core.metrics`) and every API could read
them, but Prometheus scrapes every API (each is a target): were each to serve them, a
``sum()`` over the APIs would count each match once per API. So the APIs share a lease
(:class:`atout_arena.core.lease.Lease` on :data:`~atout_arena.core.keys.METRICS_LEADER_KEY`):
the one holding it serves the arena-wide series (what Redis counts, the ladders' from the
database), every API serves its own (``atout_metrics_leader``, 1 on the leader and 0 on the
others, and ``atout_collector_errors_total``). A thread of each API renews or tries to take the
lease every :data:`RENEW_S`; when the leader dies, another serves the series within
:data:`LEASE_TTL_MS` and a second or so, and says so in one line. A clean stop gives the lease
up at once.

``atout-arena api`` runs it (:func:`atout_arena.api.serve_api`); an app made by
:func:`atout_arena.api.create_app` without ``metrics_lease`` serves everything, as a lone API.
"""

from __future__ import annotations

import contextlib
import logging
import threading

import redis

from atout_arena.core.keys import METRICS_LEADER_KEY
from atout_arena.core.lease import Lease, process_holder
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.wire import is_outage, redis_outage

log = logging.getLogger(__name__)

LEASE_TTL_MS = 5_000  # a dead leader's series are back on another API within this (and RENEW_S)
RENEW_S = 1.0


class MetricsLeadership:
    """This API's side of the metrics lease: :meth:`start` (one try at once, then a thread),
    :meth:`leads` (at scrape time), :meth:`stop` (the lease given up)."""

    def __init__(self, redis_url: str, *, ttl_ms: int = LEASE_TTL_MS, renew_s: float = RENEW_S,
                 holder: str | None = None) -> None:
        timeout = max(0.5, ttl_ms / 1000 / 2)  # a hung call must not outlast the lease by much
        self.client = sync_client(redis_url, socket_timeout=timeout, socket_connect_timeout=timeout)
        holder = holder or f"api {process_holder()}"
        self.lease = Lease(self.client, METRICS_LEADER_KEY, ttl_ms, holder=holder)
        self.renew_s = renew_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._said: str | None = None  # the last leader this API said was serving the series

    def leads(self) -> bool:
        return self.lease.held()

    def start(self) -> None:
        self.step()  # before the first scrape: a lone API serves the series from the start
        self._thread = threading.Thread(target=self._run, name="metrics-lease", daemon=True)
        self._thread.start()

    def step(self) -> None:
        """One renewal or try; the change of leader said once, a Redis outage said once."""
        try:
            leads = self.lease.hold()
        except Exception as exc:
            if not is_outage(exc):
                log.warning("metrics lease: %s: %s", type(exc).__name__, exc)
            else:
                redis_outage.failed("the metrics lease", exc)
            return
        redis_outage.ok()
        holder = self.lease.holder
        if holder == self._said:
            return
        first = self._said is None
        self._said = holder
        if leads:
            log.info("metrics: this API (%s) serves the arena-wide series on /metrics%s", self.lease.me,
                     "" if first else " now: it took the metrics lease over")
        else:
            log.info("metrics: %s serves the arena-wide series; this API's /metrics has its own only", holder)

    def _run(self) -> None:
        while not self._stop.wait(self.renew_s):
            self.step()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.renew_s + 5)
        with contextlib.suppress(redis.RedisError):  # else it expires by itself
            self.lease.release()
        self.client.close()
