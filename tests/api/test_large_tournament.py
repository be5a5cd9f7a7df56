"""Issue 11, finding 8: creating the largest tournaments answers quickly, on the real API.

64 bots x 59 games per pairing at 4-player tables used to build its schedule for 400 s of CPU
(the request never answered); the cap was checked on a lower bound of the match count. Now the
schedule is built in well under a second, stored in bulk, and the cap is the real count.
"""

from __future__ import annotations

import time

from atout_arena.core.schedule import tables
from atout_arena.services.competitions import MAX_MATCHES, CompetitionSpec


def test_64_bots_59_games_per_pairing_answers_within_2_s(api, new_bot) -> None:  # type: ignore[no-untyped-def]
    # About 1 s on a quiet 2-core machine (schedule 0.3 s, 100,000 rows stored 0.4 s). The
    # suite runs beside heavy tests on those 2 cores, so the best of up to three requests is
    # held to 2 s, as a benchmark takes its best run: one slow request under a neighbour's
    # load is not the API hanging (the bug was 400 s).
    names = [new_bot("big")[0] for _ in range(64)]
    body = {"name": "big", "game": "merde", "players": 4, "games_per_pairing": 59, "bots": names}
    times = []
    for _ in range(3):
        started = time.monotonic()
        response = api.organizer.post("/v1/tournaments", json=body)
        times.append(time.monotonic() - started)
        assert response.status_code == 201, response.text
        created = response.json()
        assert created["progress"]["total"] == 19904
        page = api.organizer.get(f"/v1/tournaments/{created['id']}/matches", params={"limit": 5}).json()
        assert all(len(m["seats"]) == 4 for m in page["items"])
        if times[-1] < 2.0:
            break
    print(f"64 bots x 59 games per pairing: 19904 matches in {', '.join(f'{t:.2f}' for t in times)} s")
    assert min(times) < 2.0


def test_the_cap_is_checked_on_the_real_match_count(api, new_bot) -> None:  # type: ignore[no-untyped-def]
    # 64 bots at 5-player tables, 99 games per pairing: the lower bound is 19,959 matches (under
    # the cap), the real schedule has 20,032.
    spec = CompetitionSpec.of("merde", players=5, games_per_pairing=99)
    assert spec.estimated_matches(64) <= MAX_MATCHES < len(tables(list(range(64)), 5, 99))
    names = [new_bot("cap")[0] for _ in range(64)]
    body = {"name": "too-big", "game": "merde", "players": 5, "games_per_pairing": 99, "bots": names}
    started = time.monotonic()
    response = api.organizer.post("/v1/tournaments", json=body)
    elapsed = time.monotonic() - started
    print(f"64 bots x 99 games per pairing refused in {elapsed:.2f} s: {response.json()['detail']}")
    assert response.status_code == 422
    assert "20032 matches" in response.json()["detail"] and str(MAX_MATCHES) in response.json()["detail"]
    assert elapsed < 2.0
