"""A duplicate set's next rotation is played by the worker process that stored the one before it,
on its own loop, with no task through the broker (Celery's consumer and the claim were
about 4 ms of a fool match); a process whose loop is full sends it to the workers as before.

A real worker world (database, Redis, the process's event loop, the real claim, store and
follow-ups) plays a duplicate tournament; the bots' seats are answered in-process (their first
legal action; the network is not what this tests) and the tasks a match would send are
recorded, not sent."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from sqlalchemy import select

from atout_arena.core.match import Answer
from atout_arena.core.models import Match
from atout_arena.core.settings import Settings
from atout_arena.services.tournaments import create_started
from atout_workers import play
from atout_workers import tasks as worker_tasks
from atout_workers.world import build_world

pytestmark = pytest.mark.timeout(120)


class Recorder:
    """The tasks a match sends after it, recorded."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def play_matches(self, ids: list[int]) -> int:
        self.sent.append(("play", list(ids)))
        return len(ids)

    def finalize_tournament(self, tournament_id: int) -> None:
        self.sent.append(("finalize", tournament_id))

    def test_tick(self, test_id: int) -> None:
        self.sent.append(("tick", test_id))

    def ladder_tick(self, ladder_id: int, **_: Any) -> None:
        self.sent.append(("ladder", ladder_id))

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _seats_answered_here(monkeypatch: pytest.MonkeyPatch) -> None:
    async def present(*_: Any) -> tuple[list[int], bool]:
        return [], False

    def first_legal(*_: Any, **__: Any) -> Any:
        async def ask(a: Any) -> Answer:
            return Answer(a.legal_actions[0], 0.1)
        return ask

    monkeypatch.setattr(play, "absent_seats", present)
    monkeypatch.setattr(play, "decision_asker", first_legal)


def world_of(database_url: str, redis_url: str, concurrency: int) -> Any:
    world = build_world(Settings(database_url=database_url, redis_url=redis_url,
                                 worker_concurrency=concurrency))
    world.tasks = Recorder()  # type: ignore[assignment]
    return world


def rows(world: Any, tid: int) -> list[Match]:
    with world.sessions() as session:
        return list(session.scalars(select(Match).where(Match.tournament_id == tid)
                                    .order_by(Match.deal_group, Match.rotation)).all())


def wait_done(world: Any, tid: int, count: int, timeout_s: float = 60.0) -> list[Match]:
    give_up = time.monotonic() + timeout_s
    while time.monotonic() < give_up:
        found = rows(world, tid)
        if sum(m.status == "finished" for m in found) == count:
            return found
        time.sleep(0.1)
    raise AssertionError([(m.id, m.rotation, m.status) for m in rows(world, tid)])


def test_a_sets_rotations_are_played_here_one_after_another_with_no_task(database_url, redis_url,
                                                                        make_bot) -> None:
    world = world_of(database_url, redis_url, concurrency=50)
    try:
        bots = [make_bot(f"here-{n}")[0].name for n in range(3)]
        tid, queued = create_started(world.sessions, name="here", bots=bots, game="fool", players=3,
                                     duplicate=True, games_per_pairing=3, seed=11)
        assert len(queued) == 1  # one deal group of three rotations, its first one queued
        assert worker_tasks._play_one(world, queued[0]) == "playing"
        matches = wait_done(world, tid, 3)
        assert [m.rotation for m in matches] == list(range(3))
        process = world.new_lease_id().rsplit(":", 1)[0]  # host:pid
        assert {str(m.lease_id).rsplit(":", 1)[0] for m in matches} == {process}
        for before, after in itertools.pairwise(matches):  # never two rotations of a set at once
            assert after.started_at and before.finished_at and after.started_at >= before.finished_at
        assert world.matches.drain(10)  # (the last match's follow-ups run before it lets go)
        assert world.tasks.sent == [("finalize", tid)]  # no play_match task for any rotation
    finally:
        world.close()


def test_a_full_loop_sends_the_next_rotation_to_the_workers(database_url, redis_url, make_bot) -> None:
    world = world_of(database_url, redis_url, concurrency=1)  # the match that ends holds the room
    try:
        bots = [make_bot(f"full-{n}")[0].name for n in range(3)]
        tid, queued = create_started(world.sessions, name="full", bots=bots, game="fool", players=3,
                                     duplicate=True, games_per_pairing=3, seed=12)
        assert worker_tasks._play_one(world, queued[0]) == "playing"
        wait_done(world, tid, 1)
        give_up = time.monotonic() + 10
        while not world.tasks.sent and time.monotonic() < give_up:
            time.sleep(0.05)
        second = rows(world, tid)[1]
        assert world.tasks.sent == [("play", [second.id])] and second.status == "queued"
    finally:
        world.close()


@pytest.mark.parametrize("flag", ["closing", "stopping"])
def test_a_process_shutting_down_sends_the_next_rotation_to_the_workers(database_url, redis_url,
                                                                        flag: str) -> None:
    """``closing``: a warm shutdown began (set before it drains the matches in flight: a rotation
    started then would be stopped and played again); ``stopping``: the drain ran out."""
    world = world_of(database_url, redis_url, concurrency=50)
    try:
        getattr(world.matches, flag).set()
        worker_tasks.play_next_rotation(world, [41, 42])
        assert world.tasks.sent == [("play", [41, 42])]
    finally:
        world.close()


def test_a_warm_shutdown_closes_the_loop_before_it_drains(monkeypatch: pytest.MonkeyPatch, database_url,
                                                          redis_url) -> None:
    from atout_workers import celery_app

    world = world_of(database_url, redis_url, concurrency=50)
    try:
        seen: list[bool] = []
        matches = world.matches
        monkeypatch.setattr(celery_app, "get_world", lambda: world)
        monkeypatch.setattr(celery_app, "stop_keeper", lambda: None)
        monkeypatch.setattr(type(matches), "in_flight", property(lambda self: 1))
        def drain(timeout_s: float | None = None) -> bool:
            seen.append(matches.closing.is_set())
            return True

        monkeypatch.setattr(matches, "drain", drain)
        celery_app._stop_keeper()
        assert seen == [True]  # closed first: what ends during the drain starts nothing here
    finally:
        world.close()
