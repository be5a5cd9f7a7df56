"""Outages of the arena's own parts, on real processes: a worker killed with no beat running,
a worker killed in a loop, a game server killed (-9), restarted (SIGTERM) or hung (SIGSTOP, then
killed) for 20 s, longer than the reconnect grace, Redis restarted under a worker and a game
server. None of them is charged to the bots.

Figures are printed (``-s`` shows them) and bounded generously.
"""

from __future__ import annotations

import signal
import sys
import time

import pytest
import redis
from e2e_helpers import FAST, WORKER_BOTS, wait_until
from sqlalchemy import func, select

from atout_arena.core.embedded_redis import EmbeddedRedis, free_tcp_port
from atout_arena.core.models import Match, MatchSeat, RatingChange, Tournament
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.services.tournaments import create_tournament, retry_match, start_tournament

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

NO_FAST_STALE = {"ATOUT_MATCH_STALE_S": "120"}  # only the workers' liveness can recover in seconds


def _status(sessions, tid: int) -> dict[str, int]:
    with sessions() as session:
        rows = session.execute(select(Match.status, func.count()).where(Match.tournament_id == tid)
                               .group_by(Match.status)).all()
    return dict(rows)


def _finished(sessions, tid: int) -> bool:
    with sessions() as session:
        return session.get(Tournament, tid).status == "finished"


def _outage_damage(sessions, tid: int) -> tuple[int, int, int, int]:
    """(forfeited seats, disconnected faults, other faults, rated results with every seat forfeited)."""
    with sessions() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        forfeits = session.scalar(select(func.count()).select_from(MatchSeat).join(Match)
                                  .where(Match.tournament_id == tid, MatchSeat.forfeited.is_(True)))
        disconnected = sum(1 for m in matches for row in (m.actions or []) if "disconnected" in row[4])
        others = sum(len([f for f in row[4] if f != "disconnected"])
                     for m in matches for row in (m.actions or []))
        all_out = [m.id for m in matches if m.seats and all(s.forfeited for s in m.seats)]
        rated = session.scalar(select(func.count()).select_from(RatingChange)
                               .where(RatingChange.match_id.in_(all_out))) if all_out else 0
    return int(forfeits or 0), disconnected, others, int(rated or 0)


def _victim_busy(sessions, tid: int, pid: int) -> bool:
    with sessions() as session:
        return bool(session.scalar(
            select(func.count()).select_from(Match)
            .where(Match.tournament_id == tid, Match.status == "running", Match.lease_id.like(f"%:{pid}:%"))))


def test_a_worker_killed_with_no_beat_has_its_matches_finished_within_seconds_elsewhere(
    arena_bots, start_worker, run_tournament, sessions
) -> None:
    bots = arena_bots(["Sleepy"] * 3, "--max-workers", "16", ATOUT_TEST_THINK_S="0.02")
    victim = start_worker("victim", concurrency=4, **NO_FAST_STALE)
    start_worker("survivor", concurrency=4, **NO_FAST_STALE)
    tid = run_tournament(bots, game="regicide", players=3, games_per_pairing=8)
    # (a regicide match of these bots takes 350 decisions or more, over 7 s of thinking alone: one
    # seen running is far from its end, and still running at the kill just after)
    wait_until(lambda: _victim_busy(sessions, tid, victim.popen.pid), 60, "the victim to play a match")
    victim.kill()
    killed = time.monotonic()
    mark = f"%:{victim.popen.pid}:%"

    def held() -> set[int]:
        with sessions() as session:
            return set(session.scalars(select(Match.id).where(
                Match.tournament_id == tid, Match.status == "running", Match.lease_id.like(mark))))

    interrupted = held()  # what the dead process held: nothing of it can change until taken back
    assert interrupted, "the victim held no running match when it was killed: nothing to take back"

    def orphans_gone() -> bool:
        return not held()

    wait_until(orphans_gone, 30, "the dead worker's matches to be taken back")
    recovered = time.monotonic() - killed
    wait_until(lambda: _finished(sessions, tid), 120, "the tournament to finish")
    finished = time.monotonic() - killed
    print(f"\nno beat: dead worker's matches taken back {recovered:.1f} s after kill -9, "
          f"tournament finished {finished:.1f} s after (ATOUT_MATCH_STALE_S=120)")
    assert recovered < 15, recovered
    assert _status(sessions, tid) == {"finished": 8}
    with sessions() as session:  # played again, elsewhere
        rerun = session.scalars(select(Match).where(Match.id.in_(interrupted))).all()
        assert all(m.attempts >= 2 and f":{victim.popen.pid}:" not in m.lease_id for m in rerun), [
            (m.id, m.attempts, m.lease_id) for m in rerun]


def test_a_worker_killed_in_a_loop_leaves_no_failed_match(
    arena_bots, start_worker, run_tournament, sessions
) -> None:
    bots = arena_bots(["Sleepy"] * 3, "--max-workers", "16", ATOUT_TEST_THINK_S="0.02")
    tid = run_tournament(bots, game="regicide", players=3, games_per_pairing=6)
    deaths = 0
    for _ in range(4):  # the same matches die with their worker again and again
        worker = start_worker("looped", concurrency=6)
        wait_until(lambda w=worker: _victim_busy(sessions, tid, w.popen.pid), 60, "a match in flight")
        worker.kill()
        deaths += 1
    start_worker("last", concurrency=6)
    wait_until(lambda: _finished(sessions, tid), 120, "the tournament to finish")
    with sessions() as session:
        claims = max(session.scalars(select(Match.attempts).where(Match.tournament_id == tid)))
    print(f"\ncrash loop: {deaths} kill -9 of the worker; most claims of one match {claims}; "
          f"statuses {_status(sessions, tid)}")
    assert deaths >= 3 and claims >= 3
    assert _status(sessions, tid) == {"finished": 6}


# ---------------------------------------------------------------- game server outages


DOWN_S = 20.0  # longer than the reconnect grace (15 s): an outage of the arena is never the grace's


@pytest.mark.parametrize("how", ["kill-9", "sigterm", "sigstop"])
def test_a_game_server_down_for_20_s_costs_the_bots_nothing(
    how, processes, make_bot, spawn_bot, start_worker, sessions, redis_client, redis_url, database_url,
    celery_app, clean_queues,
) -> None:
    port = free_tcp_port()
    address = f"127.0.0.1:{port}"
    env = {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": database_url, "ATOUT_KEEPALIVE_MS": "1000",
           "ATOUT_SHUTDOWN_GRACE_S": "1"}

    def game_server():
        args = [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", address]
        process = processes.start(f"gateway-{how}", args, {**env, "ATOUT_SERVER_ID": f"gs-{how}"})
        process.wait_for_log(r"listening on 127\.0\.0\.1")
        return process

    server = game_server()
    bots = []
    for _ in range(3):
        info, token = make_bot(f"outage-{how}")
        spawn_bot(address, token, f"{WORKER_BOTS}:Sleepy", "--max-workers", "16", ATOUT_TEST_THINK_S="0.02")
        bots.append(info)
    for info in bots:
        wait_until(lambda info=info: is_connected(redis_client, info.bot_id), 30, f"bot {info.name}")
    # the default grace (15 s): the bots cut off by the arena wait with their clocks stopped
    start_worker("outage", concurrency=12)
    tid = create_tournament(sessions, name=f"outage-{how}", bots=[b.name for b in bots], game="regicide",
                            players=3, games_per_pairing=12, move_ms=2000)
    celery_app.play_matches(start_tournament(sessions, tid))
    wait_until(lambda: _status(sessions, tid).get("finished", 0) >= 2, 60, "matches under way")
    down_at = time.monotonic()
    if how == "sigterm":
        server.stop(signal.SIGTERM)
        gone_after = time.monotonic() - down_at
    else:
        if how == "kill-9":
            server.kill()
        else:  # hung: its loop stops, its sockets stay open (a kernel still accepts connections)
            server.popen.send_signal(signal.SIGSTOP)
        wait_until(lambda: not is_connected(redis_client, bots[0].bot_id), 10, "the bots to read as gone")
        gone_after = time.monotonic() - down_at
    time.sleep(max(0.0, DOWN_S - (time.monotonic() - down_at)))
    if how == "sigstop":
        server.kill()
    game_server()
    back_at = time.monotonic()
    wait_until(lambda: _finished(sessions, tid), 150, "the tournament to finish")
    forfeits, disconnected, others, rated_outages = _outage_damage(sessions, tid)
    print(f"\n{how}: bots read as gone {gone_after:.1f} s after the stop; server back after "
          f"{back_at - down_at:.1f} s; tournament done {time.monotonic() - down_at:.1f} s after the stop; "
          f"forfeits {forfeits}, disconnected faults {disconnected}, other faults {others}, "
          f"rated outage results {rated_outages}; "
          f"statuses {_status(sessions, tid)}")
    assert gone_after < 4  # a game server's liveness lasts 2 s
    assert (forfeits, disconnected, others, rated_outages) == (0, 0, 0, 0)
    assert _status(sessions, tid) == {"finished": 12}


# ---------------------------------------------------------------- Redis restarts


@pytest.mark.parametrize("transport", ["unix", "tcp"])
def test_a_worker_and_a_game_server_survive_a_redis_restart(
    transport, tmp_path, processes, make_bot, spawn_bot, sessions, database_url, registry
) -> None:
    own = EmbeddedRedis(tmp_path / "redis", tcp_port=free_tcp_port(), persist=True).start()
    url = own.url if transport == "unix" else own.tcp_url
    assert url is not None
    try:
        env = {"ATOUT_REDIS_URL": url, "ATOUT_DATABASE_URL": database_url, "ATOUT_KEEPALIVE_MS": "1000",
               **FAST}
        args = [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"]
        server = processes.start("gateway-rr", args, {**env, "ATOUT_SERVER_ID": "gs-rr"})
        address = "127.0.0.1:" + server.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)").group(1)
        worker = processes.start("worker-rr", [sys.executable, "-m", "atout_arena.cli", "worker",
                                               "--concurrency", "4", "--hostname", "rr@%h"], env)
        worker.wait_for_log(r"\bready\b", timeout=30)
        client = redis.Redis.from_url(url)
        bots = []
        for _ in range(3):
            info, token = make_bot("redis-restart")
            spawn_bot(address, token, "random")
            bots.append(info)

        def all_connected() -> bool:
            try:
                return all(is_connected(client, b.bot_id) for b in bots)
            except redis.RedisError:
                return False

        wait_until(all_connected, 30, "the bots")
        tasks = Tasks.for_settings(Settings(redis_url=url))

        def play_one(name: str) -> float:
            started = time.monotonic()
            tid = create_tournament(sessions, name=name, bots=[b.name for b in bots], game="regicide",
                                    players=3)
            tasks.play_matches(start_tournament(sessions, tid))
            wait_until(lambda: _finished(sessions, tid), 90, f"tournament {name}")
            return time.monotonic() - started

        before = play_one("before-restart")
        # down in the middle of a tournament: matches in flight, tasks queued, results to store
        during = create_tournament(sessions, name="during-restart", bots=[b.name for b in bots],
                                   game="regicide", players=3, games_per_pairing=6)
        tasks.play_matches(start_tournament(sessions, during))
        wait_until(lambda: _status(sessions, during).get("running"), 30, "matches in flight")
        own.stop()
        time.sleep(8.0)
        assert worker.alive() and server.alive()
        own.start()
        restarted = time.monotonic()
        wait_until(all_connected, 60, "the bots to be back after the restart")
        reconnected = time.monotonic() - restarted
        wait_until(lambda: _finished(sessions, during), 120, "the tournament cut by the restart")
        recovered = time.monotonic() - restarted
        after = play_one("after-restart")
        tasks.close()
        print(f"\nRedis restart (8 s down, mid-tournament): bots back {reconnected:.1f} s after; the cut "
              f"tournament finished {recovered:.1f} s after ({_status(sessions, during)}); a tournament "
              f"took {before:.1f} s before, {after:.1f} s after; worker alive {worker.alive()}, "
              f"game server alive {server.alive()}")
        assert worker.alive() and server.alive()
        assert "Unrecoverable error" not in worker.log()
        # nothing charged to the bots: their decisions waited, clocks stopped, for Redis
        assert _outage_damage(sessions, during) == (0, 0, 0, 0)
    finally:
        processes.stop_all()
        own.stop()


def test_a_failed_match_is_retried_and_its_tournament_finalized_again(
    arena_bots, start_worker, run_tournament, wait_finished, sessions, celery_app
) -> None:
    bots = arena_bots(["random"] * 3)
    start_worker("retry", concurrency=2)
    tid = run_tournament(bots, game="regicide", players=3, games_per_pairing=2)
    wait_finished(tid)
    with sessions() as session:  # as an outage that failed a match 3 times would leave it
        match = session.scalars(select(Match).where(Match.tournament_id == tid)).first()
        match.status, match.error, match.errors = "failed", "every seat was disconnected", 3
        for change in session.scalars(select(RatingChange).where(RatingChange.match_id == match.id)):
            session.delete(change)  # a failed match was never rated
        session.commit()
        failed_id = match.id
    practice = retry_match(sessions, failed_id)
    celery_app.play(failed_id, practice=practice)
    wait_finished(tid)
    with sessions() as session:
        match = session.get(Match, failed_id)
        assert (match.status, match.errors, match.error) == ("finished", 0, None)
    with pytest.raises(ValueError, match="only a failed match"):
        retry_match(sessions, failed_id)
