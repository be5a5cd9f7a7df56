"""The contract between the arena's front processes and its workers: Celery task names, queues,
the app factory, and sending a task by name.

The API, the game servers, the CLI and the demo never import the workers' code: they build a
Celery app with :func:`make_celery` and send tasks by name through :class:`Tasks`. The workers
(:mod:`atout_workers.tasks`) register the same names on an app built by the same factory.

==============================  ===================  ==============================================
task                            queue                what it does (each safe to run twice)
==============================  ===================  ==============================================
``atout.play_match``            ``atout.matches``    plays one tournament or league match
``atout.play_match``            ``atout.practice``   plays one practice match (its own queue, so a
                                                     long tournament never delays it)
``atout.start_tournament``      ``atout.control``    turns a tournament's matches queued, sends them
``atout.finalize_tournament``   ``atout.control``    standings and the batch rating fit
``atout.start_season``          ``atout.control``    the next season of a league
``atout.league_tick``           ``atout.control``    (beat) starts the seasons that are due
``atout.test_tick``             ``atout.control``    a test: decides, or schedules its next sets
``atout.ladder_tick``           ``atout.control``    a ladder: rates finished sets, seats the next ones;
                                                     re-arms itself every ``ATOUT_LADDER_TICK_S``
``atout.sweep``                 ``atout.control``    (beat) re-sends matches whose worker went silent
==============================  ===================  ==============================================

Delivery: tasks are acknowledged *after* they run (``acks_late``) and given back if the worker
dies under them (``reject_on_worker_lost``): every task is idempotent by its ids. A task taken
by a worker killed with ``-9`` stays unacknowledged in the broker until the Redis transport's
``visibility_timeout`` (``ATOUT_VISIBILITY_TIMEOUT_S``, one hour) passes; the sweeper does not
wait that long (see :mod:`atout_workers.sweeper`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from celery import Celery

from atout_arena.core.redis_conn import celery_config
from atout_arena.core.settings import Settings

MATCH_QUEUE = "atout.matches"
PRACTICE_QUEUE = "atout.practice"
CONTROL_QUEUE = "atout.control"
QUEUES = (MATCH_QUEUE, PRACTICE_QUEUE, CONTROL_QUEUE)
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

PLAY_MATCH = "atout.play_match"  # args: the ids of one or more matches, played in that order
# matches per play_match task sent by Tasks.play_matches: small enough that two workers share a
# 200-match tournament evenly, large enough that a task's overhead is shared
PLAY_BATCH = 8
START_TOURNAMENT = "atout.start_tournament"
FINALIZE_TOURNAMENT = "atout.finalize_tournament"
START_SEASON = "atout.start_season"
LEAGUE_TICK = "atout.league_tick"
SWEEP = "atout.sweep"
TEST_TICK = "atout.test_tick"
LADDER_TICK = "atout.ladder_tick"


def make_celery(settings: Settings, include: Sequence[str] = ()) -> Celery:
    """A Celery app for ``settings``: Redis (``settings.redis_url``, any URL of
    :func:`~atout_arena.core.redis_conn.celery_config`: TLS, Sentinel) as broker and result
    backend, JSON, late acknowledgement, a thread pool of ``ATOUT_WORKER_CONCURRENCY``, and
    beat's schedule. ``include``: the task modules a worker imports (none for a sender)."""
    connection = celery_config(settings.redis_url or DEFAULT_REDIS_URL,
                               {"visibility_timeout": settings.visibility_timeout_s})
    app = Celery("atout", include=list(include), set_as_current=False)
    app.conf.update(
        **connection,
        broker_connection_retry_on_startup=True,
        # Redis going away is waited out, never a reason to exit: retry for ever, with backoff
        broker_connection_retry=True,
        broker_connection_max_retries=None,
        broker_connection_timeout=5,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        result_backend_always_retry=True,
        result_backend_max_retries=10,
        redis_backend_health_check_interval=10,
        result_expires=3600,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_default_queue=CONTROL_QUEUE,
        task_routes={PLAY_MATCH: {"queue": MATCH_QUEUE}},
        worker_prefetch_multiplier=1,
        worker_pool="threads",
        worker_concurrency=settings.worker_concurrency,
        worker_hijack_root_logger=False,
        beat_schedule={
            # expires: a tick nobody ran in time is dropped, the next one does its work
            "atout-sweep": {"task": SWEEP, "schedule": settings.sweep_interval_s,
                            "options": {"expires": settings.sweep_interval_s}},
            "atout-leagues": {"task": LEAGUE_TICK, "schedule": settings.league_tick_s,
                              "options": {"expires": settings.league_tick_s}},
        },
    )
    return app


class Tasks:
    """Sends the workers' tasks by name, on their queues. One per process; thread-safe."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    @classmethod
    def for_settings(cls, settings: Settings) -> Tasks:
        return cls(make_celery(settings))

    def play_matches(self, match_ids: Iterable[int]) -> int:
        """``play_match`` tasks for tournament or league matches, up to :data:`PLAY_BATCH`
        matches per task (a task's broker and Celery costs, about 1.5 ms of a worker, are then
        shared); returns how many matches were sent."""
        ids = [int(match_id) for match_id in match_ids]
        for start in range(0, len(ids), PLAY_BATCH):
            self.app.send_task(PLAY_MATCH, tuple(ids[start:start + PLAY_BATCH]), queue=MATCH_QUEUE)
        return len(ids)

    def play_practice(self, match_id: int) -> None:
        """A practice match, on the practice queue (workers keep capacity for it)."""
        self.app.send_task(PLAY_MATCH, (int(match_id),), queue=PRACTICE_QUEUE)

    def play(self, match_id: int, practice: bool) -> None:
        """A match on the queue it belongs to (the sweeper re-sends both kinds)."""
        if practice:
            self.play_practice(match_id)
        else:
            self.play_matches([match_id])

    def start_tournament(self, tournament_id: int) -> None:
        self.app.send_task(START_TOURNAMENT, (int(tournament_id),), queue=CONTROL_QUEUE)

    def finalize_tournament(self, tournament_id: int) -> None:
        self.app.send_task(FINALIZE_TOURNAMENT, (int(tournament_id),), queue=CONTROL_QUEUE)

    def test_tick(self, test_id: int) -> None:
        """A test decides, or schedules its next duplicate sets (their matches on the matches queue)."""
        self.app.send_task(TEST_TICK, (int(test_id),), queue=CONTROL_QUEUE)

    def ladder_tick(self, ladder_id: int, *, countdown: float | None = None, chain: str = "") -> None:
        """A ladder rates its finished sets and seats the next ones; ``chain``: the token of the
        ladder's periodic chain of ticks (this one re-arms it), sent ``countdown`` s from now."""
        self.app.send_task(LADDER_TICK, (int(ladder_id), str(chain)), queue=CONTROL_QUEUE,
                           countdown=countdown)

    def start_season(self, league_id: int) -> None:
        self.app.send_task(START_SEASON, (int(league_id),), queue=CONTROL_QUEUE)

    def close(self) -> None:
        self.app.close()
