"""A match restarted from its seed after its worker died, on real processes (Redis, the game
server, Celery workers and beat, SDK bots): each bot is told the aborted run ended with a
MatchEnd ``restarted`` before the new run's MatchStart, then plays the new run to its end."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from e2e_helpers import wait_until
from sqlalchemy import select

from atout_arena.core.models import Match, Tournament

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

BOTS = Path(__file__).resolve().parent / "protocol_bots.py"


def journal(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def test_a_match_restarted_after_its_worker_died_ends_restarted_then_starts_again(
    arena_bots, start_worker, start_beat, run_tournament, sessions, tmp_path
) -> None:
    path = tmp_path / "journal.jsonl"
    bots = arena_bots([f"{BOTS}:Journal"] * 2, ATOUT_TEST_THINK_S="0.1", ATOUT_TEST_JOURNAL=str(path))
    victim = start_worker("victim", concurrency=1)
    tid = run_tournament(bots, game="fool", players=2, games_per_pairing=1)
    wait_until(lambda: sum(e["event"] == "act" for e in journal(path)) >= 4, 60, "the match to be under way")
    victim.kill()  # SIGKILL: no MatchEnd, the match stays "running" until its heartbeat is stale
    killed_at = time.time()
    start_worker("survivor", concurrency=1)
    start_beat()

    def finished() -> bool:
        with sessions() as session:
            return session.get(Tournament, tid).status == "finished"

    wait_until(finished, 120, "the tournament to finish", poll_s=0.2)
    with sessions() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        killed = [m for m in matches if m.attempts > 1]
        assert killed, [(m.id, m.attempts) for m in matches]
        match = killed[0]
        assert match.status == "finished"
        faults = [row for row in match.actions if row[4]]
        match_id = str(match.id)
    assert not faults, faults  # the new run, played from its seed, charged the bots nothing
    events = journal(path)
    for seat in (0, 1):
        mine = [e for e in events if e["match"] == match_id and e["seat"] == seat and e["event"] != "act"]
        what = [(e["event"], e.get("reason")) for e in mine]
        assert what[:3] == [("start", None), ("end", "restarted"), ("start", None)], what
        assert len(what) == 4 and what[3][0] == "end" and what[3][1] in ("finished", "forfeit"), what
        assert mine[1]["at"] >= killed_at and mine[0]["bot"] != mine[2]["bot"]
        acts_between = [e for e in events if e["match"] == match_id and e["seat"] == seat
                        and e["event"] == "act" and mine[1]["at"] < e["at"] < mine[2]["at"]]
        assert not acts_between, acts_between
