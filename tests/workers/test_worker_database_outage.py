"""A database outage under a worker playing matches (issue 30): the results of the matches
that end while PostgreSQL is down are kept and stored once it is back, not given back to be
played again; the outage is two lines in the worker's log, not a traceback per heartbeat.

Real processes: a throwaway PostgreSQL cluster of the test's own (stopped and started again), a
game server, a worker and three SDK bots.
"""

from __future__ import annotations

import sys
import time

import pytest
from e2e_helpers import FAST, WORKER_BOTS, wait_until
from sqlalchemy import func, select

from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.models import Match, MatchSeat, Tournament
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.services.bots import BotRegistry
from atout_arena.services.tournaments import create_tournament, start_tournament

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

DOWN_S = 10.0


def test_results_of_matches_ending_during_a_database_outage_are_kept(
    cluster, processes, spawn_bot, redis_url, redis_client
) -> None:
    engine = make_engine(cluster.url)
    create_all(engine)
    sessions = make_session_factory(engine)
    registry = BotRegistry(sessions)
    env = {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": cluster.url, "ATOUT_KEEPALIVE_MS": "1000",
           **FAST, "ATOUT_MATCH_STALE_S": "120"}
    try:
        cli = [sys.executable, "-m", "atout_arena.cli"]
        server = processes.start("gateway-db", [*cli, "gateway", "--address", "127.0.0.1:0"],
                                 {**env, "ATOUT_SERVER_ID": "gs-db"})
        address = "127.0.0.1:" + server.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)").group(1)
        bots = []
        for i in range(3):
            info, token = registry.add(f"dbout-{time.monotonic_ns() % 10**9}-{i}", owner="tests")
            spawn_bot(address, token, f"{WORKER_BOTS}:Sleepy", "--max-workers", "16",
                      ATOUT_TEST_THINK_S="0.005")
            bots.append(info)
        for info in bots:
            wait_until(lambda info=info: is_connected(redis_client, info.bot_id), 30, f"bot {info.name}")
        worker = processes.start("worker-db", [*cli, "worker", "--concurrency", "12", "--hostname", "db@%h",
                                               "--loglevel", "info"], env)
        worker.wait_for_log(r"\bready\b", timeout=30)
        tasks = Tasks.for_settings(Settings(redis_url=redis_url))
        tid = create_tournament(sessions, name="db-outage", bots=[b.name for b in bots], game="regicide",
                                players=3, games_per_pairing=40, move_ms=5000)
        tasks.play_matches(start_tournament(sessions, tid))

        def statuses() -> dict[str, int]:
            with sessions() as session:
                rows = session.execute(select(Match.status, func.count())
                                       .where(Match.tournament_id == tid).group_by(Match.status))
                return dict(rows.all())

        wait_until(lambda: statuses().get("finished", 0) >= 1, 90, "a first match finished")
        engine.dispose()
        cluster.stop()
        time.sleep(DOWN_S)
        cluster.start()
        back = time.time()

        def finished() -> bool:
            with sessions() as session:
                tournament = session.get(Tournament, tid)
                return tournament is not None and tournament.status == "finished"

        wait_until(finished, 150, "the tournament to finish")
        log = worker.log()
        with sessions() as session:
            matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
            # played to their end during the outage, stored the moment it was over
            stored_at_once = [m.id for m in matches
                              if m.finished_at and 0 <= m.finished_at.timestamp() - back < 3]
            claims = sum(m.attempts for m in matches)
            forfeits = session.scalar(select(func.count()).select_from(MatchSeat).join(Match)
                                      .where(Match.tournament_id == tid, MatchSeat.forfeited.is_(True)))
            faults = sum(len(row[4]) for m in session.scalars(select(Match).where(Match.tournament_id == tid))
                         for row in (m.actions or []))
        print(f"\ndatabase down {DOWN_S:.0f} s: statuses {statuses()}, forfeits {forfeits}, faults {faults}, "
              f"{len(stored_at_once)} results kept and stored within 3 s of its return, {claims} claims")
        assert statuses() == {"finished": 40}
        assert (forfeits, faults) == (0, 0)
        # kept, not given back to be played again: one claim each
        assert len(stored_at_once) >= 3, stored_at_once
        assert claims == 40
        assert "goes back to the queue" not in log, log[-3000:]
        said = [line for line in log.splitlines() if "the database unreachable" in line]
        assert len(said) == 1, log[-3000:]
        assert "the database is back after" in log
        first = min((log.find(w) for w in ("heartbeat failed", "Traceback") if w in log), default=-1)
        assert first < 0, log[max(0, first - 1500):first + 6000]
        tasks.close()
    finally:
        processes.stop_all()
        engine.dispose()
