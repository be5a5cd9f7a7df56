"""Beat with a hot standby: any number of ``atout-arena beat`` may run, one sends.

Every beat runs :class:`LeaderScheduler`. It sends the periodic tasks only while it holds the
beat lease (:class:`atout_arena.core.lease.Lease` on
:data:`~atout_arena.core.keys.BEAT_LEADER_KEY`, renewed every :data:`RENEW_S`); another beat
stands by, trying to take the lease at the same pace. When the leading beat dies (killed, its
machine gone, cut off from Redis), its lease expires after :data:`LEASE_TTL_MS` and a standby
takes over within a second of that, saying so in one line. A beat stopped cleanly gives the
lease up at once.

The leader writes when it last sent each periodic task in Redis
(:data:`~atout_arena.core.keys.BEAT_LAST_RUN_KEY`); a beat that takes the lease reads it first,
so the schedule goes on where the dead leader left it: a task it had just sent is not sent again
early, and one overdue is sent at once. Should a leader die between sending a task and writing
it down, the task is sent twice; every periodic task is idempotent (the sweep re-sends only
what the database says is lost, a league's season starts once: its number is unique).

Why not celery-redbeat (a scheduler with such a lock): its lock is extended inside ``tick`` and
an error there (Redis restarting, the lock expired during a pause) ends beat with a traceback
(redbeat issues 230, 285), a standby that met an error while acquiring used to schedule anyway
(issue 208), and it moves the whole schedule into Redis. The arena keeps the schedule in code
and says a Redis outage in two lines (:data:`atout_arena.core.wire.redis_outage`); the lease is
thirty lines of :mod:`atout_arena.core.lease`, shared with the API's metrics lease.
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import UTC, datetime
from typing import Any

import redis

from atout_arena.core.keys import BEAT_LAST_RUN_KEY, BEAT_LEADER_KEY
from atout_arena.core.lease import Lease, process_holder
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.wire import is_outage, redis_outage
from atout_workers.celery_app import REDIS_URL_SETTING, QuietScheduler

log = logging.getLogger(__name__)

LEASE_TTL_MS = 5_000  # a dead beat's tasks are sent again by another within this and RENEW_S
RENEW_S = 1.0


class LeaderScheduler(QuietScheduler):
    """:class:`~atout_workers.celery_app.QuietScheduler` that ticks only while it holds the beat
    lease (``--scheduler atout_workers.beat:LeaderScheduler``, as ``atout-arena beat`` runs it)."""

    lease_ttl_ms = LEASE_TTL_MS
    renew_s = RENEW_S

    def setup_schedule(self) -> None:
        super().setup_schedule()
        url = self.app.conf.get(REDIS_URL_SETTING)
        if not url:
            raise RuntimeError(f"LeaderScheduler: the app's {REDIS_URL_SETTING} is not set "
                               "(atout_workers.celery_app.create_app sets it)")
        timeout = max(0.5, self.lease_ttl_ms / 1000 / 2)
        self.client = sync_client(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self.lease = Lease(self.client, BEAT_LEADER_KEY, self.lease_ttl_ms, holder=f"beat {process_holder()}")
        self.leading = False
        self._said: str | None = None  # the holder this beat last said was sending
        self._tried = float("-inf")  # when this beat last asked Redis for the lease (monotonic)

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if not self.lead():
            return self.renew_s
        return float(min(super().tick(*args, **kwargs), self.renew_s))

    def lead(self) -> bool:
        """Whether this beat sends now: the lease renewed (or taken) at most every ``renew_s``,
        the change of leader said once."""
        now = time.monotonic()
        if now - self._tried >= self.renew_s:
            self._tried = now
            try:
                self.lease.hold()
            except Exception as exc:  # it leads only while the last renewal is trusted
                if not is_outage(exc):
                    log.warning("beat: the lease: %s: %s", type(exc).__name__, exc)
                else:
                    redis_outage.failed("beat's lease", exc)
            else:
                self._say(self.lease.holder)
        leads = self.lease.held()
        if leads and not self.leading:
            self._resume()
        self.leading = leads
        return leads

    def _say(self, holder: str | None) -> None:
        if holder == self._said:
            return
        first, self._said = self._said is None, holder
        if holder == self.lease.me:
            log.warning("beat: this beat (%s) sends the periodic tasks%s", holder,
                        "" if first else " now: it took the lease over")
        else:
            log.warning("beat: %s sends the periodic tasks; this beat stands by", holder)

    def _resume(self) -> None:
        """Taking the lease: each task's last sending as the leader before wrote it down."""
        try:
            sent = self.client.hgetall(BEAT_LAST_RUN_KEY)
        except redis.RedisError as exc:
            log.info("beat: could not read when the tasks were last sent (%s): this beat's own times hold",
                     exc)
            return
        for raw_name, raw_at in sent.items():
            name = raw_name.decode() if isinstance(raw_name, bytes) else str(raw_name)
            entry = self.schedule.get(name)
            if entry is not None:
                entry.last_run_at = datetime.fromtimestamp(float(raw_at), tz=UTC)
        self._heap = None  # rebuilt from the entries at the next tick

    def apply_entry(self, entry: Any, producer: Any = None) -> None:
        super().apply_entry(entry, producer=producer)
        with contextlib.suppress(redis.RedisError):  # an outage: the send failed and was said too
            self.client.hset(BEAT_LAST_RUN_KEY, entry.name, repr(time.time()))

    def close(self) -> None:
        super().close()
        if getattr(self, "leading", False):  # close() may come twice (beat's stop, then its exit)
            self.leading = False
            with contextlib.suppress(redis.RedisError):
                self.lease.release()
                log.info("beat: this beat gave the lease up")
        if hasattr(self, "client"):
            self.client.close()
