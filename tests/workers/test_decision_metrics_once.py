"""Each stored decision is counted once in ``atout_decision_seconds`` (issue 30, finding 6: a
match played again from its seed after its worker died counted the decisions of its first,
unfinished run too: +7.4% after 39 replays, inflating the dashboard's decisions/s).

Real processes: SDK bots on a game server, a worker killed with -9 once it has counted some
decisions of a match it holds, another worker that plays the match again from its seed. Then
the decisions counted for each bot must be those stored in the results, no more.
"""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest
from e2e_helpers import wait_until
from sqlalchemy import select

from atout_arena.core.keys import last_event_key
from atout_arena.core.metrics import DECISION_SECONDS
from atout_arena.core.models import Match, MatchSeat, Tournament
from atout_arena.core.vocabulary import Fault, PlayedBy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

PLIES_BEFORE_KILL = 100  # of 350 or more (a regicide match of three bots)


def _counted(redis_client, names: set[str]) -> Counter[str]:
    """``atout_decision_seconds_count`` of each of ``names`` (every game), as Redis holds it."""
    counts: Counter[str] = Counter()
    for field, value in redis_client.hgetall(DECISION_SECONDS.key).items():
        labels, part = field.decode().split("\t")
        _game, bot = json.loads(labels)
        if bot in names and part != "sum":  # a bucket's count (the +Inf bucket is their sum)
            counts[bot] += int(value)
    return counts


def _stored(sessions, tid: int) -> Counter[str]:
    """The decisions stored in the tournament's results, by bot: the steps its bot was asked
    for (what the workers count: played by the bot, or faulted other than for a disconnection)."""
    counts: Counter[str] = Counter()
    with sessions() as session:
        for match in session.scalars(select(Match).where(Match.tournament_id == tid)).all():
            names = {s.seat: s.bot.name for s in session.scalars(select(MatchSeat)
                                                                  .where(MatchSeat.match_id == match.id))}
            for row in match.actions or []:
                seat, _action, by, _think, faults = row[:5]
                if by == PlayedBy.BOT or any(f != Fault.DISCONNECTED for f in faults):
                    counts[names[seat]] += 1
    return counts


def test_a_match_played_again_after_its_worker_died_counts_its_decisions_once(
    arena_bots, start_worker, run_tournament, sessions, redis_client
) -> None:
    bots = arena_bots(["Sleepy"] * 3, "--max-workers", "16", ATOUT_TEST_THINK_S="0.02", prefix="once")
    names = {b.name for b in bots}
    victim = start_worker("once-victim", concurrency=4)
    # one regicide match of these bots: 350 decisions or more, over 7 s of thinking alone
    tid = run_tournament(bots, game="regicide", players=3, games_per_pairing=1)
    with sessions() as session:
        match_id = session.scalars(select(Match.id).where(Match.tournament_id == tid)).one()

    def ply() -> int:
        latest = redis_client.get(last_event_key(match_id))  # refreshed every second while it plays
        return int(json.loads(latest).get("ply", 0)) if latest else 0

    # the victim's run is well under way (2 s and more: it used to count its decisions every
    # second, the finding's double count)...
    wait_until(lambda: ply() >= PLIES_BEFORE_KILL, 60, f"{PLIES_BEFORE_KILL} plies played", poll_s=0.1)
    with sessions() as session:
        assert session.get(Match, match_id).status == "running", "the match ended before the kill"
    victim.kill()  # ...and it dies: the match is played again from its seed, elsewhere
    counted_before_replay = sum(_counted(redis_client, names).values())
    start_worker("once-survivor", concurrency=4)

    def finished() -> bool:
        with sessions() as session:
            return session.get(Tournament, tid).status == "finished"

    wait_until(finished, 120, "the tournament to finish", poll_s=0.2)
    stored = _stored(sessions, tid)
    with sessions() as session:
        attempts = session.scalars(select(Match.attempts).where(Match.tournament_id == tid)).one()
    assert attempts >= 2, "the match was not played again"
    deadline = time.monotonic() + 10  # the survivor writes its counts within a second or two
    counted = _counted(redis_client, names)
    while counted != stored and time.monotonic() < deadline:
        time.sleep(0.2)
        counted = _counted(redis_client, names)
    print(f"\nkilled with {counted_before_replay} decisions of its run counted; "
          f"stored {sum(stored.values())}, counted {sum(counted.values())}")
    assert counted == stored, f"counted {dict(counted)}, stored {dict(stored)}"
