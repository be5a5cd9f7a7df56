"""The Celery tasks: thin, taking ids, re-reading the world, idempotent.

Their names, queues and what each does are the contract of :mod:`atout_arena.core.tasks`; the
bodies are plain functions: the match runner (:func:`atout_workers.runner.run_match`), the
competition services (:mod:`atout_arena.services.tournaments`, :mod:`~atout_arena.services.leagues`)
and the sweeper. Transient errors (Redis, a locked database) are retried by Celery itself
(``autoretry_for``) with a bounded exponential backoff.

No task waits for another: a tournament fans out one ``play_match`` per match, and the match
that stores the tournament's last result sends ``finalize_tournament`` (not a chord: a chord's
counter lives in the result backend and never completes when one of its tasks is replaced by a
re-sent one after a worker died).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from atout_arena.core import tasks as contract
from atout_arena.core.relay import is_connected
from atout_arena.services import deals, leagues, sprt, tournaments
from atout_workers import store
from atout_workers.runner import TRANSIENT_ERRORS, run_match
from atout_workers.sweeper import sweep as run_sweep
from atout_workers.world import get_world

log = logging.getLogger(__name__)

MATCH_QUEUES = (contract.MATCH_QUEUE, contract.PRACTICE_QUEUE)  # where a lost match task may still wait

# Every task is safe to run twice: acknowledged late, given back when its worker dies, and
# retried on a transient error at most MAX_RETRIES times, 1 s, 2 s, 4 s ... at most 30 s apart.
MAX_RETRIES = 5
RELIABLE: dict[str, Any] = {
    "acks_late": True, "reject_on_worker_lost": True, "autoretry_for": TRANSIENT_ERRORS,
    "max_retries": MAX_RETRIES, "retry_backoff": 1, "retry_backoff_max": 30, "retry_jitter": False,
}


@shared_task(name=contract.PLAY_MATCH, ignore_result=True, **RELIABLE)
def play_match(match_id: int) -> str:
    world = get_world()
    result = run_match(world, match_id, on_finalize=world.tasks.finalize_tournament,
                       on_test=world.tasks.test_tick)
    world.tasks.play_matches(deals.release_next(world.sessions, match_id))  # duplicate: the next rotation
    return result


@shared_task(name=contract.START_TOURNAMENT, **RELIABLE)
def start_tournament(tournament_id: int) -> int:
    world = get_world()
    return world.tasks.play_matches(tournaments.start_tournament(world.sessions, tournament_id))


@shared_task(name=contract.FINALIZE_TOURNAMENT, **RELIABLE)
def finalize_tournament(tournament_id: int) -> bool:
    return tournaments.finalize_tournament(get_world().sessions, tournament_id)


@shared_task(name=contract.START_SEASON, **RELIABLE)
def start_season(league_id: int) -> int | None:
    world = get_world()
    started = leagues.start_season(world.sessions, league_id)
    if started is None:
        return None
    tournament_id, match_ids = started
    world.tasks.play_matches(match_ids)
    return tournament_id


@shared_task(name=contract.TEST_TICK, **RELIABLE)
def test_tick(test_id: int) -> int:
    """A test: finished when decided, else its next duplicate sets sent to the workers."""
    world = get_world()
    def connected(bot_id: int, version: str) -> bool:
        return is_connected(world.redis, bot_id, version)

    return world.tasks.play_matches(sprt.tick(world.sessions, test_id, connected))


@shared_task(name=contract.LEAGUE_TICK, acks_late=True, ignore_result=True)
def league_tick() -> list[int]:
    world = get_world()
    due = leagues.due_leagues(world.sessions)
    for league_id in due:
        world.tasks.start_season(league_id)
    return due


@shared_task(name=contract.SWEEP, acks_late=True, ignore_result=True)
def sweep() -> dict[str, Any]:
    world = get_world()

    def resend(match_id: int) -> None:
        world.tasks.play(match_id, practice=store.is_practice(world.sessions, match_id))

    report = run_sweep(
        world.sessions,
        stale_s=world.settings.match_stale_s,
        requeue_after_s=world.settings.requeue_after_s,
        queue_length=lambda: sum(int(world.redis.llen(q)) for q in MATCH_QUEUES),
        dispatch_match=resend,
        dispatch_finalize=world.tasks.finalize_tournament,
        dispatch_test=world.tasks.test_tick,
    )
    return report.as_dict()
