"""No bot holds two rotations of a deal at once: the rotations of a duplicate deal group seat
the same bots, so they are played one after the other, never at the same time. Real processes:
the API, a game server, a Celery worker with room for every match at once, SDK bots.

Before: every rotation of a set started within 30 ms of the others: the union of one bot's
hands over its concurrent rotations was the whole deal."""

from __future__ import annotations

import itertools
from collections import defaultdict

from e2e_helpers import wait_until

from atout_arena.core.models import Match, as_utc


def test_no_bot_plays_two_rotations_of_one_deal_at_once(
    api, start_worker, connected_bots, clean_queues, sessions
) -> None:
    start_worker("dup", concurrency=12)
    names = [name for name, _, _ in connected_bots(4, "Sleepy", prefix="dup", ATOUT_TEST_THINK_S="0.005")]
    created = api.organizer.post("/v1/tournaments", json={
        "name": "duplicate", "game": "merde", "players": 3, "options": {"deals": 2}, "bots": names,
        "games_per_pairing": 3, "duplicate": True, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 180,
               "the tournament to finish")
    with sessions() as session:
        matches = list(session.query(Match).filter(Match.tournament_id == tid))
    groups: dict[int, list[Match]] = defaultdict(list)
    for m in matches:
        groups[m.deal_group].append(m)
    overlaps, gaps = 0, []
    for group in groups.values():
        group.sort(key=lambda m: m.rotation)
        assert [m.rotation for m in group] == list(range(3)) and all(m.status == "finished" for m in group)
        for before, after in itertools.pairwise(group):
            assert after.started_at is not None and before.finished_at is not None
            gap = (as_utc(after.started_at) - as_utc(before.finished_at)).total_seconds()
            gaps.append(gap)
            overlaps += gap < 0
    # and groups did run side by side: the worker was not simply playing one match at a time
    starts = sorted(as_utc(m.started_at) for m in matches if m.rotation == 0)
    ends = sorted(as_utc(m.finished_at) for m in matches if m.rotation == 0)
    parallel = sum(1 for s in starts if s < ends[0])
    print(f"{len(groups)} deal groups x 3 rotations: {overlaps} overlapping rotations; gap between a "
          f"rotation's end and the next one's start {min(gaps) * 1000:.0f} to {max(gaps) * 1000:.0f} ms; "
          f"{parallel} first rotations started before the first one ended")
    assert overlaps == 0
    assert parallel > 1
