"""The workers' Celery app, built from the settings by the shared factory
(:func:`atout_arena.core.tasks.make_celery`) with the workers' tasks included.

``atout-arena worker`` builds it and runs :meth:`celery.Celery.worker_main`: a thread pool of
``ATOUT_WORKER_CONCURRENCY`` (32) threads, one match per thread, so one process keeps that many
matches in flight while their bots think (a thread waiting on a bot's reply waits in Redis
``BLPOP`` and holds no GIL). ``atout-arena worker --practice`` runs one for the practice queue
alone, with ``ATOUT_PRACTICE_CONCURRENCY`` threads: capacity that tournaments never take.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

from atout_arena.core.settings import Settings
from atout_arena.core.tasks import make_celery
from atout_workers.keeper import start_keeper, stop_keeper
from atout_workers.world import get_world

TASK_MODULES = ("atout_workers.tasks",)


def create_app(settings: Settings) -> Celery:
    """The app a worker or beat runs, for ``settings``."""
    return make_celery(settings, include=TASK_MODULES)


@worker_ready.connect(weak=False)
def _start_keeper(**_: Any) -> None:
    """Every worker sweeps (under a Redis lock) and publishes its liveness: no beat needed."""
    start_keeper(get_world())


@worker_shutdown.connect(weak=False)
def _stop_keeper(**_: Any) -> None:
    stop_keeper()
