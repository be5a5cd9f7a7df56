"""The largest tournament created with ``start: true`` answers within 2 s (issue 32, finding
14): it answered in 2.15-2.78 s, 1.4 s more than with ``start: false``, most of it sending its
19,904 matches to the workers (2,488 tasks, one broker round trip each). Now the first wave
(:data:`~atout_arena.api.routes.tournaments.FIRST_WAVE` matches) is sent before the answer and
the rest right after it; every match still reaches the queue.

The real API under uvicorn, its own database (its thousands of queued matches are no other
test's), the session's Redis as the broker (the queue emptied after)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import ADMIN_TOKEN, serve_in_thread
from e2e_helpers import wait_until

from atout_arena.core.tasks import MATCH_QUEUE, PLAY_BATCH

pytestmark = pytest.mark.slow

GOOD_S = 2.0  # as tests/api/test_large_tournament.py: the largest request on this 2-core machine


def best_of(post: Callable[[], httpx.Response], tries: int = 3) -> tuple[float, list[float], httpx.Response]:
    """Up to ``tries`` runs (stopping at the first under :data:`GOOD_S`): the best time, all
    the times, the last answer (test_large_tournament.py's benchmark rule: one slow run under a
    neighbour's load is not the API being slow)."""
    times: list[float] = []
    for _ in range(tries):
        started = time.monotonic()
        response = post()
        times.append(time.monotonic() - started)
        if times[-1] < GOOD_S:
            break
    return min(times), times, response


@pytest.fixture
def own_api(redis_url: str, tmp_path: Path, clean_queues: None) -> Iterator[tuple[httpx.Client, list[str]]]:
    """An API of its own database (64 bots registered) that sends its tasks for real."""
    from atout_arena.api import create_app
    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.settings import Settings
    from atout_arena.services.bots import BotRegistry

    database_url = f"sqlite:///{tmp_path / 'large.db'}"
    engine = make_engine(database_url)
    create_all(engine)
    registry = BotRegistry(make_session_factory(engine))
    names = [registry.add(f"large-{i}")[0].name for i in range(64)]
    app = create_app(Settings(database_url=database_url, redis_url=redis_url, data_dir=tmp_path),
                     admin_token=ADMIN_TOKEN)
    url, server, thread = serve_in_thread(app)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60) as client:
        yield client, names
    server.should_exit = True
    thread.join(10)
    app.state.arena.close()
    engine.dispose()


def _queued_matches(redis_client: Any) -> int:
    return sum(len(json.loads(_body(m))[0]) for m in redis_client.lrange(MATCH_QUEUE, 0, -1))


def _body(message: bytes) -> bytes:
    import base64

    return base64.b64decode(json.loads(message)["body"])


def test_the_largest_tournament_with_start_answers_within_2_s(own_api, redis_client) -> None:
    client, names = own_api
    runs = iter(range(10))
    body = {"game": "merde", "players": 4, "games_per_pairing": 59, "bots": names}

    def post(start: bool) -> httpx.Response:
        response = client.post("/v1/tournaments",
                               json={**body, "start": start, "name": f"large-{next(runs)}"})
        assert response.status_code == 201, response.text
        return response

    best, times, response = best_of(lambda: post(True))
    created = response.json()
    assert created["status"] == "running" and created["progress"]["total"] == 19904
    print(f"64 bots x 59 games per pairing, start: true: 19904 matches in "
          f"{', '.join(f'{t:.2f}' for t in times)} s")
    # every match of every run reaches the workers' queue, the first wave before the answer
    expected = 19904 * len(times)
    wait_until(lambda: _queued_matches(redis_client) == expected, 60, f"{expected} matches queued")
    assert redis_client.llen(MATCH_QUEUE) == len(times) * -(-19904 // PLAY_BATCH)
    if best >= GOOD_S:  # a loaded machine: start: true costs what start: false does, not 2.2x
        unstarted, unstarted_times, _ = best_of(lambda: post(False))
        again, again_times, _ = best_of(lambda: post(True))
        print(f"a loaded machine: start: false in {', '.join(f'{t:.2f}' for t in unstarted_times)} s, "
              f"start: true again in {', '.join(f'{t:.2f}' for t in again_times)} s")
        assert min(best, again) < 1.5 * unstarted, (best, again, unstarted)  # it was 2.2x (2.15-2.78 s)
