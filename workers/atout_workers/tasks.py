"""The Celery tasks: thin, taking ids, re-reading the database, idempotent.

==========================  =========================================================================
task                        what it does (each safe to run twice)
==========================  =========================================================================
``atout.play_match``        plays one match (:func:`atout_workers.runner.run_match`); a match is claimed
                            before it is played and its result stored once
``atout.start_tournament``  turns a created tournament's matches queued and dispatches them
``atout.finalize_tournament``  standings and the batch rating fit, once every match is done
``atout.start_season``      the next season of a league (a tournament), started
``atout.league_tick``       (beat) starts the seasons that are due
``atout.sweep``             (beat) re-dispatches matches whose worker went silent, see
                            :mod:`atout_workers.sweeper`
==========================  =========================================================================

No task waits for another: a tournament fans out one ``play_match`` per match, and the match
that stores the tournament's last result dispatches ``finalize_tournament`` (not a chord: a
chord's counter lives in the result backend and never completes when one of its tasks is
replaced by a re-dispatched one after a worker died).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from atout_workers.celery_app import CONTROL_QUEUE, MATCH_QUEUE, app
from atout_workers.runner import TRANSIENT_ERRORS, run_match
from atout_workers.world import get_world

log = logging.getLogger(__name__)

MAX_RETRIES = 5


def dispatch_matches(match_ids: Iterable[int]) -> int:
    """Send one ``play_match`` task per match; returns how many were sent."""
    sent = 0
    for match_id in match_ids:
        play_match.apply_async((match_id,), queue=MATCH_QUEUE)
        sent += 1
    return sent


def dispatch_finalize(tournament_id: int) -> None:
    finalize_tournament.apply_async((tournament_id,), queue=CONTROL_QUEUE)


@app.task(name="atout.play_match", bind=True, acks_late=True, reject_on_worker_lost=True,
          ignore_result=True, max_retries=MAX_RETRIES)
def play_match(self: Any, match_id: int) -> str:
    try:
        return run_match(get_world(), match_id, on_finalize=dispatch_finalize)
    except TRANSIENT_ERRORS as exc:  # Redis or the database hiccuped: the match was given back
        log.warning("match %s: %s; retrying", match_id, exc)
        raise self.retry(exc=exc, countdown=min(2 ** self.request.retries, 30)) from exc


@app.task(name="atout.start_tournament", bind=True, acks_late=True, reject_on_worker_lost=True,
          max_retries=MAX_RETRIES)
def start_tournament(self: Any, tournament_id: int) -> int:
    from atout_arena.services.tournaments import start_tournament as start

    try:
        return dispatch_matches(start(get_world().sessions, tournament_id))
    except TRANSIENT_ERRORS as exc:
        raise self.retry(exc=exc, countdown=min(2 ** self.request.retries, 30)) from exc


@app.task(name="atout.finalize_tournament", bind=True, acks_late=True, reject_on_worker_lost=True,
          max_retries=MAX_RETRIES)
def finalize_tournament(self: Any, tournament_id: int) -> bool:
    from atout_arena.services.tournaments import finalize_tournament as finalize

    try:
        return finalize(get_world().sessions, tournament_id)
    except TRANSIENT_ERRORS as exc:
        raise self.retry(exc=exc, countdown=min(2 ** self.request.retries, 30)) from exc


@app.task(name="atout.start_season", bind=True, acks_late=True, reject_on_worker_lost=True,
          max_retries=MAX_RETRIES)
def start_season(self: Any, league_id: int) -> int | None:
    from atout_arena.services.leagues import start_season as start

    try:
        started = start(get_world().sessions, league_id)
    except TRANSIENT_ERRORS as exc:
        raise self.retry(exc=exc, countdown=min(2 ** self.request.retries, 30)) from exc
    if started is None:
        return None
    tournament_id, match_ids = started
    dispatch_matches(match_ids)
    return tournament_id


@app.task(name="atout.league_tick", acks_late=True, ignore_result=True)
def league_tick() -> list[int]:
    from atout_arena.services.leagues import due_leagues

    due = due_leagues(get_world().sessions)
    for league_id in due:
        start_season.apply_async((league_id,), queue=CONTROL_QUEUE)
    return due


@app.task(name="atout.sweep", acks_late=True, ignore_result=True)
def sweep() -> dict[str, Any]:
    from atout_workers.sweeper import sweep as run_sweep

    world = get_world()
    report = run_sweep(
        world.sessions,
        stale_s=world.config.stale_s,
        requeue_after_s=world.config.requeue_after_s,
        queue_length=lambda: int(world.redis.llen(MATCH_QUEUE)),
        dispatch_match=lambda match_id: dispatch_matches([match_id]),
        dispatch_finalize=dispatch_finalize,
    )
    return report.as_dict()
