"""What the API's routes share: database, Redis, the bot registry, task dispatch, practice.

One :class:`Arena` per app, built by :func:`atout_arena.api.create_app` and reached by the routes
through ``deps.ArenaDep``. It holds a workers' :class:`~atout_workers.world.World` (engine,
sessions, Redis, decision client, metrics, heartbeat thread): the API reads and writes with
the workers' plain functions, and plays practice matches with it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from atout_arena.core.embedded_redis import find_redis_url
from atout_arena.core.settings import Settings
from atout_arena.services.bots import BotRegistry

log = logging.getLogger(__name__)

Dispatch = Callable[[Iterable[int]], int]


def celery_dispatch(redis_url: str) -> Dispatch:
    """Send ``atout.play_match`` tasks through the workers' Celery app, pointed at ``redis_url``."""
    from atout_workers.celery_app import app, configure

    configure(app, redis_url)
    from atout_workers.tasks import dispatch_matches

    return dispatch_matches


class Arena:
    """The API's shared resources. ``close()`` releases them (the app's lifespan calls it)."""

    def __init__(
        self,
        settings: Settings,
        *,
        admin_token: str | None = None,
        dispatch: Dispatch | None = None,
    ) -> None:
        from atout_arena.core.worker_config import WorkerConfig
        from atout_arena.services.practice import Practice
        from atout_workers.world import build_world

        token = admin_token if admin_token is not None else settings.admin_token
        self.admin_token = (token or "").strip() or None
        url, self.embedded = find_redis_url(settings)
        assert url is not None  # start=True: found or started
        self.settings = dataclasses.replace(settings, redis_url=url)
        self.redis_url = url
        self.world = build_world(self.settings, WorkerConfig.from_env())
        self.sessions = self.world.sessions
        self.redis = self.world.redis
        self.registry = BotRegistry(self.sessions)
        self.dispatch: Dispatch = dispatch or celery_dispatch(url)
        self.practice = Practice(self.world)
        self.cache: dict[Any, Any] = {}  # leaderboards, keyed by what they were computed from
        self.cache_lock = threading.Lock()

    def close(self) -> None:
        self.practice.close()
        self.world.close()
        if self.embedded is not None:
            self.embedded.stop()
