"""Creating the largest tournaments answers quickly, on the real API.

64 bots x 59 games per pairing at 4-player tables used to build its schedule for 400 s of CPU
(the request never answered); the cap was checked on a lower bound of the match count. Now the
schedule is built in well under a second, stored in bulk, and the cap is the real count.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from atout_arena.core.schedule import tables
from atout_arena.services.competitions import MAX_MATCHES, CompetitionSpec

GOOD_S = 2.0  # what the largest request takes at most on this project's 2-core machine
CEILING_S = 15.0  # whatever the machine: the bug was 400 s (and no answer)


def best_of(post: Callable[[], httpx.Response], tries: int = 3) -> tuple[float, list[float], httpx.Response]:
    """Up to ``tries`` runs of ``post()`` (stopping at the first under :data:`GOOD_S`): the best
    time, all the times and the last response. A benchmark takes its best run: one slow request
    under a neighbour's load (the suite runs beside heavy tests on 2 cores) is not the API hanging."""
    times: list[float] = []
    for _ in range(tries):
        started = time.monotonic()
        response = post()
        times.append(time.monotonic() - started)
        if times[-1] < GOOD_S:
            break
    return min(times), times, response


def test_64_bots_59_games_per_pairing_answers_within_2_s(api, new_bot) -> None:
    # About 1 s on a quiet 2-core machine (schedule 0.3 s, 100,000 rows stored 0.4 s), 1.7 s on a
    # slower one. Held to 2 s; on a machine too slow for that, the same request 12 times smaller
    # is timed the same way: a schedule that grows faster than its matches (the bug was 400 s of
    # CPU) is caught whatever the machine's speed.
    names = [new_bot("big")[0] for _ in range(64)]
    body = {"name": "big", "game": "merde", "players": 4, "games_per_pairing": 59, "bots": names}

    def post(payload: dict[str, Any]) -> httpx.Response:
        response = api.organizer.post("/v1/tournaments", json=payload)
        assert response.status_code == 201, response.text
        return response

    big, times, response = best_of(lambda: post(body))
    created = response.json()
    assert created["progress"]["total"] == 19904
    page = api.organizer.get(f"/v1/tournaments/{created['id']}/matches", params={"limit": 5}).json()
    assert all(len(m["seats"]) == 4 for m in page["items"])
    print(f"64 bots x 59 games per pairing: 19904 matches in {', '.join(f'{t:.2f}' for t in times)} s")
    if big >= GOOD_S:
        smaller = {**body, "name": "small", "games_per_pairing": 5}
        small, small_times, response = best_of(lambda: post(smaller))
        assert response.json()["progress"]["total"] == 1792
        print(f"a slow machine: the same with 5 games per pairing (1792 matches) in "
              f"{', '.join(f'{t:.2f}' for t in small_times)} s")
        assert big < CEILING_S and big < 30 * small, (big, small)  # linear: about 11x


def test_the_cap_is_checked_on_the_real_match_count(api, new_bot) -> None:
    # 64 bots at 5-player tables, 99 games per pairing: the lower bound is 19,959 matches (under
    # the cap), the real schedule has 20,032.
    spec = CompetitionSpec.of("merde", players=5, games_per_pairing=99)
    assert spec.estimated_matches(64) <= MAX_MATCHES < len(tables(list(range(64)), 5, 99))
    names = [new_bot("cap")[0] for _ in range(64)]
    body = {"name": "too-big", "game": "merde", "players": 5, "games_per_pairing": 99, "bots": names}
    elapsed, times, response = best_of(lambda: api.organizer.post("/v1/tournaments", json=body))
    print(f"64 bots x 99 games per pairing refused in {', '.join(f'{t:.2f}' for t in times)} s: "
          f"{response.json()['detail']}")
    assert response.status_code == 422
    assert "20032 matches" in response.json()["detail"] and str(MAX_MATCHES) in response.json()["detail"]
    assert elapsed < CEILING_S  # 1 s here: the refusal builds the schedule once, stores nothing
