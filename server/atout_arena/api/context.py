"""What the API's routes share: database, Redis, the bot registry, the task sender, practice.

One :class:`Arena` per app, built by :func:`atout_arena.api.create_app` and reached by the routes
through ``deps.ArenaDep``. It plays no match: the routes call the services
(:mod:`atout_arena.services`), which read and write the database, and send the workers' tasks
by name (:class:`atout_arena.core.tasks.Tasks`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from atout_arena.api.leadership import MetricsLeadership
from atout_arena.core.db import open_database
from atout_arena.core.embedded_redis import find_redis_url
from atout_arena.core.metrics import FailSafeCollectors
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.services.bots import BotRegistry
from atout_arena.services.ladders import LadderCollector
from atout_arena.services.practice import Practice

log = logging.getLogger(__name__)

Dispatch = Callable[[Iterable[int]], int]
API_DB_POOL = 20  # connections for the threads that serve requests at once
REDIS_TIMEOUT_S = 30  # SSE readers block up to this in a read (they pass their own, shorter, timeouts)


class Arena:
    """The API's shared resources. ``close()`` releases them (the app's lifespan calls it)."""

    def __init__(
        self,
        settings: Settings,
        *,
        admin_token: str | None = None,
        dispatch: Dispatch | None = None,
    ) -> None:
        token = admin_token if admin_token is not None else settings.admin_token
        self.admin_token = (token or "").strip() or None
        url, self.embedded = find_redis_url(settings)
        assert url is not None  # start=True: found or started
        self.settings = settings.replace(redis_url=url)
        self.redis_url = url
        self.engine, self.sessions = open_database(self.settings.database_url, pool_size=API_DB_POOL)
        self.redis = sync_client(url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=5)
        self.registry = BotRegistry(self.sessions)
        self.tasks = Tasks.for_settings(self.settings)
        self.dispatch: Dispatch = dispatch or self.tasks.play_matches
        self.practice = Practice(self.sessions, self.redis, self.tasks)
        self.cache: dict[Any, Any] = {}  # leaderboards, keyed by what they were computed from
        self.cache_lock = threading.Lock()
        # /metrics's collectors that read the database: one that fails is left out of the
        # scrape (and counted), never the counts read from Redis (they kept their own state)
        self.database_metrics = FailSafeCollectors({"ladders": LadderCollector(self.sessions)})
        # several APIs: the one holding the metrics lease serves the arena-wide series (None: this one)
        self.metrics_leadership: MetricsLeadership | None = None

    def serves_arena_metrics(self) -> bool:
        """Whether this API's ``/metrics`` serves the arena-wide series now."""
        return self.metrics_leadership is None or self.metrics_leadership.leads()

    def close(self) -> None:
        self.tasks.close()
        self.redis.close()
        self.engine.dispose()
        if self.embedded is not None:
            self.embedded.stop()
