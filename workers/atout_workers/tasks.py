"""The Celery tasks: thin, taking ids, re-reading the world, idempotent.

Their names, queues and what each does are the contract of :mod:`atout_arena.core.tasks`; the
bodies are plain functions: how a match is played (:func:`atout_workers.play.play_on_loop`, which
claims a match on the task's thread and hands it to the process's event loop), the
competition services (:mod:`atout_arena.services.tournaments`, :mod:`~atout_arena.services.leagues`)
and the sweeper. Transient errors (Redis, a locked database) are retried by Celery itself
(``autoretry_for``) with a bounded exponential backoff.

No task waits for another: a tournament fans out its matches in ``play_match`` tasks (up to
:data:`~atout_arena.core.tasks.PLAY_BATCH` matches each), and the match that stores the
tournament's last result sends ``finalize_tournament`` (not a chord: a chord's counter lives in
the result backend and never completes when one of its tasks is replaced by a re-sent one after
a worker died).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from celery import shared_task

from atout_arena.core import tasks as contract
from atout_arena.core.keys import ladder_armed_key
from atout_arena.core.relay import connected_bots, is_connected
from atout_arena.core.vocabulary import RunResult
from atout_arena.core.wire import is_outage, redis_outage
from atout_arena.services import deals, ladders, leagues, sprt, tournaments
from atout_arena.services.competitions import tell_workers
from atout_workers.keeper import sweep_world
from atout_workers.play import TRANSIENT_ERRORS, play_on_loop
from atout_workers.world import get_world

log = logging.getLogger(__name__)


# Every task is safe to run twice: acknowledged late, given back when its worker dies, and
# retried on a transient error at most MAX_RETRIES times, 1 s, 2 s, 4 s ... at most 30 s apart.
MAX_RETRIES = 5
RELIABLE: dict[str, Any] = {
    "acks_late": True, "reject_on_worker_lost": True, "autoretry_for": TRANSIENT_ERRORS,
    "max_retries": MAX_RETRIES, "retry_backoff": 1, "retry_backoff_max": 30, "retry_jitter": False,
}


# Acknowledged as it starts: the task only claims the match and hands it to the event loop (a
# match lost before its claim is still queued in the database: the sweeper sends it again).
# Late acks of tasks this short raced Redis broker outages in kombu (a worker crashing with
# "'NoneType' object has no attribute 'hostname'" while restoring unacknowledged messages).
EARLY = {**RELIABLE, "acks_late": False, "reject_on_worker_lost": False}


@shared_task(name=contract.PLAY_MATCH, ignore_result=True, **EARLY)
def play_match(*match_ids: int) -> str:
    """Claim each match (one, or up to 8 sent together by ``Tasks.play_matches``), in order, and
    hand it to the process's event loop (``playing``), or say why not; the follow-ups run when
    each match is over. A lone match's error retries the task (transient) or fails it, as ever;
    in a task of several, a match whose claim raises is sent again as a task of its own (which
    then retries or fails alone), and the others go on: one match never holds up seven."""
    world = get_world()
    if len(match_ids) == 1:
        return str(_play_one(world, match_ids[0]))
    results = []
    for match_id in match_ids:
        try:
            results.append(str(_play_one(world, match_id)))
        except Exception as exc:
            log.warning("match %s: claim failed in a task of %d (%s: %s); sent again on its own",
                        match_id, len(match_ids), type(exc).__name__, exc)
            world.tasks.play_matches([match_id])
            results.append("resent")
    return " ".join(results)


def _play_one(world: Any, match_id: int, wait: bool = True) -> str | None:
    def then(result: RunResult) -> None:
        after_match(world, match_id)

    return play_on_loop(world, match_id, on_finalize=world.tasks.finalize_tournament,
                        on_test=world.tasks.test_tick, then=then, wait=wait)


def after_match(world: Any, match_id: int) -> None:
    """What follows a match, played or not: a duplicate's next rotation, else its ladder's tick.
    A match that released the next rotation of its set leaves the set unfinished: its tick
    would rate nothing and seat nothing (the set still holds its place in flight), so it is
    sent by the set's last game; the ladder's periodic ticks see anything else."""
    ladder_id, released = deals.follow_up(world.sessions, match_id)
    if released:  # queued in the database already: played here, or sent to any worker
        play_next_rotation(world, released)
    elif ladder_id is not None:
        world.tasks.ladder_tick(ladder_id)  # rate its set if complete, seat the next one


def play_next_rotation(world: Any, match_ids: list[int]) -> None:
    """A set's next rotation, released by the game before it (on a thread of the loop's pool):
    claimed and played on this process's loop, as a ``play_match`` task would, without the
    broker's round trip and Celery's consumer in between (about 2 ms of a worker's CPU and a
    few ms of wall time a rotation; a set's rotations are played one after another, so that no
    bot holds the same deal in two seats at once). What this process cannot take now (its
    loop full, its warm shutdown begun: ``closing``, set before it drains; a claim that raised)
    is sent as a task, as before. A
    kill -9 between the release and the claim leaves the match queued with no task: the
    sweeper sends it (``keeper``), as it does for a task lost before its claim."""
    matches = getattr(world, "matches", None)
    rest: list[int] = []
    for match_id in match_ids:
        if rest or matches is None or matches.closing.is_set() or matches.stopping.is_set():
            rest.append(match_id)
            continue
        try:
            if _play_one(world, match_id, wait=False) is None:  # the loop is full
                rest.append(match_id)
        except Exception as exc:  # sent as a task: it retries or fails on its own
            log.warning("match %s: could not claim it here (%s: %s); sent to the workers",
                        match_id, type(exc).__name__, exc)
            rest.append(match_id)
    if rest:
        world.tasks.play_matches(rest)


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

    return world.tasks.play_matches(sprt.tick(world.sessions, test_id, connected,
                                              wait_timeout_s=world.settings.test_wait_timeout_s))


@shared_task(name=contract.LADDER_TICK, **RELIABLE)
def ladder_tick(ladder_id: int, chain: str = "") -> int:
    """A ladder's matchmaking tick (:func:`atout_arena.services.ladders.tick`), then its chain of
    periodic ticks kept alive: no beat is needed for a ladder to seat bots that connect."""
    world = get_world()
    report = ladders.tick(world.sessions, ladder_id, lambda: connected_bots(world.redis))
    tell_workers(world.redis, report.stopped or [], ladders.LEFT)  # a member left: its games stop now
    sent = world.tasks.play_matches(report.to_send)  # later rotations: released one at a time
    if report.running:
        arm_ladder(world, ladder_id, chain)
    elif chain:
        disarm_ladder(world, ladder_id, chain)
    return sent


def arm_ladder(world: Any, ladder_id: int, chain: str = "") -> bool:
    """Keep one chain of periodic ticks per running ladder, every ``ATOUT_LADDER_TICK_S``. The
    armed key holds the chain's token, and outlives a tick's delay three times over: a tick of
    the chain (``chain`` = the token) sends the next one; any other tick starts a chain only when
    none is armed (a lost chain is restarted by the next match stored, or by the sweeper)."""
    interval = world.settings.ladder_tick_s
    key, token = ladder_armed_key(ladder_id), uuid.uuid4().hex
    ttl_ms = int(interval * 3000) + 1000
    if chain:
        held = world.redis.get(key)
        if held is not None and (held.decode() if isinstance(held, bytes) else held) != chain:
            return False  # another chain holds the ladder
        world.redis.set(key, token, px=ttl_ms)
    elif not world.redis.set(key, token, nx=True, px=ttl_ms):
        return False
    world.tasks.ladder_tick(ladder_id, countdown=interval, chain=token)
    return True


def disarm_ladder(world: Any, ladder_id: int, chain: str) -> None:
    """The chain ends with its ladder (paused): its key goes, so that a resume starts a new one."""
    key = ladder_armed_key(ladder_id)
    held = world.redis.get(key)
    if held is not None and (held.decode() if isinstance(held, bytes) else held) == chain:
        world.redis.delete(key)


# Beat's two ticks are not retried: the next tick (seconds later) does their work. A Redis
# outage met by one is said once for the process (redis_outage), not as a failed task with its
# traceback at every tick until Redis is back.


@shared_task(name=contract.LEAGUE_TICK, acks_late=True, ignore_result=True)
def league_tick() -> list[int]:
    world = get_world()
    due = leagues.due_leagues(world.sessions)
    try:
        for league_id in due:
            world.tasks.start_season(league_id)
    except Exception as exc:
        if not is_outage(exc):
            raise
        redis_outage.failed("the league tick", exc)
        return []
    return due


@shared_task(name=contract.SWEEP, acks_late=True, ignore_result=True)
def sweep() -> dict[str, Any]:
    """Beat's sweep (optional: every worker sweeps by itself, :mod:`atout_workers.keeper`)."""
    try:
        report = sweep_world(get_world()).as_dict()
    except Exception as exc:
        if not is_outage(exc):
            raise
        redis_outage.failed("the sweep", exc)
        return {}
    redis_outage.ok()
    return report
