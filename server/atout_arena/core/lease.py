"""A leader lease in Redis: one process of several does a job, another takes it over within
seconds of the first one's death.

Two jobs use it: the API whose ``/metrics`` serves the arena-wide series
(:data:`~atout_arena.core.keys.METRICS_LEADER_KEY`) and the beat that sends the periodic tasks
(:data:`~atout_arena.core.keys.BEAT_LEADER_KEY`). The key holds the holder's id
(``host:pid``) and expires ``ttl_ms`` after its last renewal; the holder renews it well before
(every ``ttl_ms / 5``, say), a standby tries to take it at the same pace, and takes it once the
holder stopped renewing (killed, frozen, cut off from Redis) and the key expired.

:meth:`Lease.hold` is one atomic step (a script): renew the lease if this process holds it,
take it if nobody does, else say who holds it. The process believes it leads for a little less
than ``ttl_ms`` after the step *began* (:meth:`Lease.held`), so that a leader that could not
renew (Redis away, the process frozen) stops leading before Redis lets another one take over:
two leaders never act at once, as long as clocks run at the same rate.

>>> lease = Lease(redis_client, "atout:beat:leader", ttl_ms=5000)     # doctest: +SKIP
>>> lease.hold()            # True: this process leads; False: lease.holder does  # doctest: +SKIP
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import Any

# KEYS[1] the lease; ARGV[1] this holder, ARGV[2] the time to live (ms). {1, me} when this
# holder holds it now (renewed or taken), {0, holder} when another one does.
HOLD = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, held}
end
if held then
  return {0, held}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, ARGV[1]}
"""

# KEYS[1] the lease; ARGV[1] this holder: deleted only if it still holds it.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

TRUST = 0.8  # of the time to live: how long after a renewal began the holder still believes it leads


def process_holder() -> str:
    """This process, as a lease names its holder: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Lease:
    """One process's side of a lease on ``key`` (a Redis client of redis-py, sync). Not
    thread-safe by itself: one thread calls :meth:`hold` (others may read :meth:`held`)."""

    def __init__(self, redis: Any, key: str, ttl_ms: int, holder: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if ttl_ms < 10:
            raise ValueError(f"lease {key}: a time to live of {ttl_ms} ms is too short")
        self.redis = redis
        self.key = key
        self.ttl_ms = int(ttl_ms)
        self.me = holder or process_holder()
        self.clock = clock
        self.holder: str | None = None  # who held it at the last hold() that answered
        self._until = float("-inf")  # the clock's time until which this process leads

    def hold(self) -> bool:
        """Renew the lease, or take it if it is free; True when this process leads now. A Redis
        error is raised (the caller says the outage its own way); leadership then lasts only
        until the last renewal's trust runs out (:meth:`held`)."""
        began = self.clock()
        leads, holder = self.redis.eval(HOLD, 1, self.key, self.me, self.ttl_ms)
        self.holder = _text(holder)
        if int(leads):
            self._until = began + self.ttl_ms / 1000 * TRUST
            return True
        self._until = float("-inf")
        return False

    def held(self) -> bool:
        """Whether this process leads now: its last :meth:`hold` took or renewed the lease, and
        not too long ago for the lease to have expired in Redis since."""
        return self.clock() < self._until

    def release(self) -> bool:
        """Give the lease up (a clean stop: the standby takes over at its next try, not after the
        time to live); True when this process held it. A Redis error is raised."""
        self._until = float("-inf")
        return bool(self.redis.eval(RELEASE, 1, self.key, self.me))
