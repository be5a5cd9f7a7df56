"""The workers' Celery app, built from the settings by the shared factory
(:func:`atout_arena.core.tasks.make_celery`) with the workers' tasks included.

``atout-arena worker`` builds it and runs :meth:`celery.Celery.worker_main`: a small thread pool
whose tasks claim matches and hand them to the process's event loop
(:mod:`atout_workers.loop`), which keeps up to ``ATOUT_WORKER_CONCURRENCY`` (1000) matches in
flight. ``atout-arena worker --practice`` runs one for the practice queue alone, with room for
``ATOUT_PRACTICE_CONCURRENCY`` matches: capacity that tournaments never take.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

from atout_arena.core.settings import Settings
from atout_arena.core.tasks import make_celery
from atout_workers.keeper import start_keeper, stop_keeper
from atout_workers.loop import STOP_WAIT_S
from atout_workers.world import get_world

TASK_MODULES = ("atout_workers.tasks",)
log = logging.getLogger(__name__)


def create_app(settings: Settings) -> Celery:
    """The app a worker or beat runs, for ``settings``."""
    return make_celery(settings, include=TASK_MODULES)


@worker_ready.connect(weak=False)
def _start_keeper(**_: Any) -> None:
    """Every worker sweeps (under a Redis lock) and publishes its liveness: no beat needed."""
    start_keeper(get_world())


@worker_shutdown.connect(weak=False)
def _stop_keeper(**_: Any) -> None:
    """A warm shutdown: the matches in flight on the event loop finish first (as Celery's own
    tasks do; those still playing after ``ATOUT_WORKER_SHUTDOWN_S`` go back to the queue), then the keeper
    stops, and what the event sink holds (the decisions' metrics added up) is written."""
    world = get_world()
    if world._loop is not None and world.matches.in_flight:
        matches, grace = world.matches, world.settings.worker_shutdown_s
        log.info("waiting for %d matches in flight to finish (at most %.0f s)", matches.in_flight, grace)
        if not matches.drain(grace):
            log.warning("%d matches still in flight: they stop and go back to the queue", matches.in_flight)
            matches.stopping.set()
            matches.drain(STOP_WAIT_S)
    stop_keeper()
    world.events.flush(5.0)
