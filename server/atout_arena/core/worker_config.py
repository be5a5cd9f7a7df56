"""The workers' own settings, read from ``ATOUT_*`` environment variables.

They complement :mod:`atout_arena.core.settings` (database and Redis URLs) with what only workers use:

================================  ==========================================================  =======
variable                          meaning                                                     default
================================  ==========================================================  =======
``ATOUT_WORKER_CONCURRENCY``      matches in flight in one worker process (threads)           ``32``
``ATOUT_HEARTBEAT_S``             how often a worker renews the heartbeat of its matches      ``5``
``ATOUT_MATCH_STALE_S``           a running match silent this long is given to another worker ``30``
``ATOUT_REQUEUE_AFTER_S``         a queued match not started this long (and an empty queue)   ``120``
                                  is sent again
``ATOUT_SWEEP_INTERVAL_S``        how often beat runs the sweeper                             ``10``
``ATOUT_LEAGUE_TICK_S``           how often beat looks for leagues due for a season           ``60``
``ATOUT_VISIBILITY_TIMEOUT_S``    Redis transport: an unacknowledged task is delivered again  ``3600``
                                  after this long (see docs/tournaments.md)
``ATOUT_MATCH_ATTEMPTS``          a match started this many times without a result fails      ``3``
================================  ==========================================================  =======

A bad value raises ``ValueError`` naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class WorkerConfig:
    concurrency: int = 32
    heartbeat_s: float = 5.0
    stale_s: float = 30.0
    requeue_after_s: float = 120.0
    sweep_interval_s: float = 10.0
    league_tick_s: float = 60.0
    visibility_timeout_s: int = 3600
    match_attempts: int = 3

    def __post_init__(self) -> None:
        if self.stale_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"ATOUT_MATCH_STALE_S={self.stale_s} must be at least twice "
                f"ATOUT_HEARTBEAT_S={self.heartbeat_s}"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkerConfig:
        env = os.environ if environ is None else environ

        def number(name: str, default: float, kind: type = float, minimum: float = 0.0) -> float:
            raw = env.get(f"ATOUT_{name}", "").strip()
            if not raw:
                return default
            try:
                value = kind(raw)
            except ValueError:
                raise ValueError(f"ATOUT_{name}={raw!r}: not a {kind.__name__}") from None
            if value < minimum or (kind is float and value != value):
                raise ValueError(f"ATOUT_{name}={raw!r}: must be at least {minimum}")
            return value

        return cls(
            concurrency=int(number("WORKER_CONCURRENCY", 32, int, 1)),
            heartbeat_s=number("HEARTBEAT_S", 5.0, minimum=0.05),
            stale_s=number("MATCH_STALE_S", 30.0, minimum=0.1),
            requeue_after_s=number("REQUEUE_AFTER_S", 120.0, minimum=0.1),
            sweep_interval_s=number("SWEEP_INTERVAL_S", 10.0, minimum=0.1),
            league_tick_s=number("LEAGUE_TICK_S", 60.0, minimum=0.1),
            visibility_timeout_s=int(number("VISIBILITY_TIMEOUT_S", 3600, int, 1)),
            match_attempts=int(number("MATCH_ATTEMPTS", 3, int, 1)),
        )
