"""Absent bots: a match waits for its entrants to connect, up to the tournament's
``absent_grace_s``, then forfeits an absent seat as fault ``absent``; a bot that never came is
listed as absent in the standings and rated by nothing (online Elo, batch fit)."""

from __future__ import annotations

import signal
import time

import pytest
from sqlalchemy import select

from atout_arena.core.models import Match, Rating, Tournament, TournamentRating
from atout_arena.core.relay import is_connected
from atout_arena.services.tournaments import (
    cancel_tournament,
    create_tournament,
    not_connected,
    start_tournament,
)

pytestmark = pytest.mark.timeout(180)


def test_a_bot_that_never_connects_is_absent_forfeited_and_unrated(
    arena_bots, start_worker, wait_finished, sessions, redis_client, celery_app, clean_queues
) -> None:
    here_a, here_b, away = arena_bots(["random", "random", None], prefix="absent")
    start_worker("absent", concurrency=4)
    tid = create_tournament(sessions, name="with-absent", bots=[here_a.name, here_b.name, away.name],
                            game="fool", players=2, absent_grace_s=1.0)
    assert not_connected(sessions, redis_client, tid) == [away.name]  # what create and start say
    started = time.monotonic()
    celery_app.play_matches(start_tournament(sessions, tid))
    wait_finished(tid, 120)
    elapsed = time.monotonic() - started
    with sessions() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        away_seats = [s for m in matches for s in m.seats if s.bot_id == away.id]
        here_seats = [s for m in matches for s in m.seats if s.bot_id != away.id]
        assert away_seats and all(s.absent and s.forfeited for s in away_seats)
        assert not any(s.absent for s in here_seats)
        for m in matches:
            faults = [f for row in m.actions for f in row[4]]
            seats = {s.bot_id: s.seat for s in m.seats}
            if away.id in seats:
                assert faults.count("absent") == 1 and "disconnected" not in faults
        # never rated: no online rating, not in the batch fit; the others are
        assert session.scalar(select(Rating).where(Rating.bot_id == away.id)) is None
        fitted = {r.bot_id for r in session.scalars(select(TournamentRating)
                                                    .where(TournamentRating.tournament_id == tid))}
        assert fitted == {here_a.id, here_b.id}
        standings = {row["bot"]: row for row in session.get(Tournament, tid).standings}
    assert standings[away.name]["absent"] is True
    assert standings[here_a.name]["absent"] is False and standings[here_b.name]["absent"] is False
    print(f"\nabsent: {len(matches)} matches, {len(away_seats)} absent seats, finished in {elapsed:.1f} s")


def test_a_match_waits_for_a_bot_that_connects_late(
    arena_bots, game_server, make_bot, spawn_bot, start_worker, wait_finished, sessions, redis_client,
    celery_app, clean_queues,
) -> None:
    (early,) = arena_bots(["random"], prefix="early")
    late, token = make_bot("late")
    start_worker("late", concurrency=2)
    tid = create_tournament(sessions, name="late", bots=[early.name, late.name], game="fool", players=2,
                            absent_grace_s=60.0)
    celery_app.play_matches(start_tournament(sessions, tid))
    time.sleep(2.0)  # the matches wait: nothing is forfeited meanwhile
    with sessions() as session:
        assert {m.status for m in session.scalars(select(Match).where(Match.tournament_id == tid))} <= {
            "queued", "running"}
    spawn_bot(game_server.info["address"], token, "random")
    came = time.monotonic()
    wait_finished(tid, 120)
    with sessions() as session:
        seats = [s for m in session.scalars(select(Match).where(Match.tournament_id == tid)) for s in m.seats]
        assert not any(s.absent or s.forfeited for s in seats)
    assert is_connected(redis_client, late.bot_id)
    print(f"\nlate bot: the tournament finished {time.monotonic() - came:.1f} s after it connected, "
          "no seat forfeited")


def test_a_worker_stopping_does_not_wait_out_the_absent_grace(
    arena_bots, make_bot, start_worker, sessions, celery_app, clean_queues
) -> None:
    """A warm shutdown gives back a match that waits for an absent bot at once, not after
    the tournament's grace (up to minutes): the shutdown budget holds for it too."""
    (here,) = arena_bots(["random"], prefix="stopwait")
    away, _ = make_bot("stopwait-away")
    worker = start_worker("stopwait", concurrency=2, ATOUT_WORKER_SHUTDOWN_S="1")
    tid = create_tournament(sessions, name=f"stopwait-{here.id}", bots=[here.name, away.name], game="fool",
                            players=2, absent_grace_s=120.0)
    try:
        celery_app.play_matches(start_tournament(sessions, tid))

        def statuses() -> set[str]:
            with sessions() as session:
                return {m.status for m in session.scalars(select(Match).where(Match.tournament_id == tid))}

        deadline = time.monotonic() + 30
        while "running" not in statuses():
            assert time.monotonic() < deadline, "no match started"
            time.sleep(0.1)
        time.sleep(0.5)  # it waits for the absent bot
        stopped_at = time.monotonic()
        worker.stop(signal.SIGTERM, timeout=150)
        took = time.monotonic() - stopped_at
        assert took < 20, f"the worker took {took:.1f} s to stop (the grace is 120 s)"
        assert statuses() <= {"queued"}  # given back, nothing forfeited
        assert worker.wait_for_log(r"the process is stopping; the match goes back to the queue", timeout=1)
    finally:
        cancel_tournament(sessions, tid)
