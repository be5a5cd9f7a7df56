"""play_match with several match ids (Tasks.play_matches sends up to PLAY_BATCH a task): each is
played in order; one whose claim raises is sent again on its own, and the others go on."""

from __future__ import annotations

from typing import Any

import pytest

from atout_arena.core.tasks import PLAY_BATCH
from atout_workers import tasks as worker_tasks


class FakeTasks:
    def __init__(self) -> None:
        self.sent: list[list[int]] = []

    def play_matches(self, ids: list[int]) -> int:
        self.sent.append(list(ids))
        return len(ids)


class FakeWorld:
    def __init__(self) -> None:
        self.tasks = FakeTasks()


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> FakeWorld:
    fake = FakeWorld()
    monkeypatch.setattr(worker_tasks, "get_world", lambda: fake)
    return fake


def test_a_task_of_several_matches_plays_each_and_resends_alone_the_one_that_failed(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    played: list[int] = []

    def play_one(_world: Any, match_id: int) -> str:
        if match_id == 12:
            raise ConnectionError("Redis went away")
        played.append(match_id)
        return "playing"

    monkeypatch.setattr(worker_tasks, "_play_one", play_one)
    assert worker_tasks.play_match.run(11, 12, 13) == "playing resent playing"
    assert played == [11, 13]
    assert world.tasks.sent == [[12]]  # a task of its own: it retries or fails alone


def test_a_lone_match_raises_as_before(world: FakeWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    def play_one(_world: Any, match_id: int) -> str:
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(worker_tasks, "_play_one", play_one)
    with pytest.raises(ConnectionError):
        worker_tasks.play_match.run(21)  # Celery's autoretry takes it from here
    assert world.tasks.sent == []


def test_play_matches_sends_batches_of_play_batch_ids_in_order() -> None:
    from atout_arena.core.tasks import Tasks

    sent: list[tuple[str, tuple, str]] = []

    class App:
        def send_task(self, name: str, args: tuple, queue: str) -> None:
            sent.append((name, args, queue))

    ids = list(range(100, 100 + 2 * PLAY_BATCH + 3))
    assert Tasks(App()).play_matches(iter(ids)) == len(ids)  # type: ignore[arg-type]
    assert [args for _, args, _ in sent] == [tuple(ids[:PLAY_BATCH]), tuple(ids[PLAY_BATCH:2 * PLAY_BATCH]),
                                             tuple(ids[2 * PLAY_BATCH:])]
    assert {(name, queue) for name, _, queue in sent} == {("atout.play_match", "atout.matches")}
