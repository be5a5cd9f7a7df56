"""The Celery app: Redis as broker and result backend (``ATOUT_REDIS_URL``).

Run a worker with ``atout-arena worker`` (or ``celery -A atout_workers.celery_app worker``): a
thread pool of ``ATOUT_WORKER_CONCURRENCY`` (32) threads, one match per thread, so one process
keeps that many matches in flight while their bots think (a thread waiting on a bot's reply
waits in Redis ``BLPOP`` and holds no GIL).

Delivery: tasks are acknowledged *after* they run (``acks_late``) and given back if the
worker dies under them (``reject_on_worker_lost``): every task is idempotent by its ids.
A task that was taken by a worker killed with ``-9`` stays unacknowledged in the broker until
the Redis transport's ``visibility_timeout`` (``ATOUT_VISIBILITY_TIMEOUT_S``, one hour) passes;
that timeout must exceed the longest match, or a running match would be delivered to a second
worker. The arena does not wait that long: the sweeper (beat, every
``ATOUT_SWEEP_INTERVAL_S``) gives a match whose heartbeat went silent to another worker at
once (see :mod:`atout_workers.sweeper`).

Queues: ``atout.matches`` for matches, ``atout.control`` for everything else (start, finalize,
sweep, leagues), so that a long queue of matches never delays a finalize or the sweeper.
"""

from __future__ import annotations

from celery import Celery

from atout_arena.core.settings import Settings
from atout_arena.core.worker_config import WorkerConfig

MATCH_QUEUE = "atout.matches"
CONTROL_QUEUE = "atout.control"
QUEUES = (MATCH_QUEUE, CONTROL_QUEUE)
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def celery_url(redis_url: str) -> str:
    """The Celery/kombu spelling of a redis-py URL: ``unix:///p`` -> ``redis+socket:///p``."""
    if redis_url.startswith("unix://"):
        return "redis+socket://" + redis_url[len("unix://"):].split("?", 1)[0]
    return redis_url


def configure(app: Celery, redis_url: str | None = None, config: WorkerConfig | None = None) -> None:
    """(Re)configure ``app`` for ``redis_url`` (default: ``ATOUT_REDIS_URL``)."""
    config = config or WorkerConfig.from_env()
    url = celery_url(redis_url or Settings.from_env().redis_url or DEFAULT_REDIS_URL)
    app.conf.update(
        broker_url=url,
        result_backend=url,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": config.visibility_timeout_s},
        result_backend_transport_options={"visibility_timeout": config.visibility_timeout_s},
        result_expires=3600,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_default_queue=CONTROL_QUEUE,
        task_routes={"atout.play_match": {"queue": MATCH_QUEUE}},
        worker_prefetch_multiplier=1,
        worker_pool="threads",
        worker_concurrency=config.concurrency,
        worker_hijack_root_logger=False,
        beat_schedule={
            # expires: a tick nobody ran in time is dropped, the next one does its work
            "atout-sweep": {"task": "atout.sweep", "schedule": config.sweep_interval_s,
                            "options": {"expires": config.sweep_interval_s}},
            "atout-leagues": {"task": "atout.league_tick", "schedule": config.league_tick_s,
                              "options": {"expires": config.league_tick_s}},
        },
    )


app = Celery("atout", include=["atout_workers.tasks"])
configure(app)
