"""An arena test (``POST /v1/tests``) of two instant bots against ``atout-bot test`` of the same bots.

    python bench/arena_test.py                       # about 2 minutes on a 2-core machine
    python bench/arena_test.py --quick               # fool only, fewer games: about 40 s
    python bench/arena_test.py --games fool:3:240,merde:4:192 --sets-in-flight 8 --json out.json  # a fixed 8

Every part is a real process on loopback, as in production: embedded Redis, SQLite, a game
server (``atout-arena gateway``), the API (``atout-arena api``), one worker (``atout-arena
worker``) and two SDK bots (``atout-bot run heuristic`` as A, ``atout-bot run random`` as B, one
process each). For each game, one test is created by ``POST /v1/tests`` (organizer token, the
field ``heuristic``, ``max_games`` as given, SPRT bounds no such pair can reach, ``elo0`` 995
and ``elo1`` 1000: every test plays its ``max_games``) and timed from the POST to its last match
stored. The baseline, measured in the same run just before: ``atout-bot test heuristic random``
of the same game, players and games (:func:`atout.sprt.run_test` in this process: the engine's
speed with no arena).

Reported per game: games/s of each, ``test_vs_local`` (the arena's games/s over the local
one; issue 38's goals: at least 0.05 for fool, 0.20 for merde), and the CPU time of each part
of the arena (psutil: the worker, the game server, the API, the two bots, Redis) per match
and, for the worker, per decision (every step of a match, the house seats' included: the
worker plays those itself). The last line is ``ratios:``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import redis
from sqlalchemy import func, select
from tournament import Children, run_directory, wait_for

from atout.sprt import TestConfig, run_test
from atout_arena.core.db import open_database
from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.models import Match, SprtTest
from atout_arena.services.bots import BotRegistry

ADMIN = "atout_admin_bench-organizer-token-0123"
GOALS = {"fool": 0.05, "merde": 0.20}  # issue 38: test_vs_local


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of a process and its children so far (0 once gone)."""
    try:
        process = psutil.Process(pid)
        total = sum(process.cpu_times()[:2])
        for child in process.children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                total += sum(child.cpu_times()[:2])
        return total
    except psutil.NoSuchProcess:
        return 0.0


def local_rate(game: str, players: int, games: int, a: str, b: str) -> tuple[float, float, int]:
    """``atout-bot test A B`` of this game in this process: (seconds, CPU seconds, games)."""
    config = TestConfig(game, a, b, players=players)
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = run_test(config, None, max_games=games)
    return time.perf_counter() - wall, time.process_time() - cpu, outcome.analysis.games


def profile(directory: str, game: str, pids: dict[str, int]) -> list[subprocess.Popen]:
    """``py-spy record --gil`` of each process into ``directory``: the samples of the thread
    holding the GIL, i.e. where its Python CPU goes (waits left out)."""
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        raise SystemExit("error: --profile needs py-spy: pip install py-spy")
    Path(directory).mkdir(parents=True, exist_ok=True)
    return [subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "250", "--format", "raw",
                              "--threads", "--gil", "--output", str(Path(directory) / f"{game}-{name}.txt")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name, pid in pids.items()]


DONE = ("finished", "failed", "cancelled")


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``seconds = a + b * steps`` over the matches: ``(a, b)`` (0s if it cannot)."""
    n = len(points)
    if n < 2:
        return 0.0, 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return my, 0.0
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - b * mx, b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default="fool:3:240,merde:4:192",
                        help="game:players:max_games of each test (default fool:3:240,merde:4:192)")
    parser.add_argument("--quick", action="store_true", help="fool:3:60 alone")
    parser.add_argument("--sets-in-flight", type=int, default=None,
                        help="the tests' sets_in_flight (default: none given, so they grow from 8 to 64)")
    parser.add_argument("--a", default="heuristic", help="bot A (atout-bot run A)")
    parser.add_argument("--b", default="random", help="bot B")
    parser.add_argument("--concurrency", type=int, default=1000, help="the worker's matches in flight")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds a test may take")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--profile", metavar="DIR", help="record the worker, game server and API with py-spy "
                        "(pip install py-spy) while the tests run: DIR/<part>.txt, collapsed stacks")
    args = parser.parse_args(argv)
    plan = [(g, int(p), int(n)) for g, p, n in (item.split(":") for item in
                                                ("fool:3:60" if args.quick else args.games).split(","))]

    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    results = []
    with run_directory("atout-bench-test-") as directory:
        redis_server = EmbeddedRedis(directory / "redis").start()
        database_url = f"sqlite:///{directory / 'atout.db'}"
        engine, sessions = open_database(database_url)
        env = {"ATOUT_REDIS_URL": redis_server.url, "ATOUT_DATABASE_URL": database_url,
               "PYTHONUNBUFFERED": "1", "ATOUT_DATA_DIR": str(directory), "ATOUT_ADMIN_TOKEN": ADMIN}
        children = Children(directory, env)
        client = redis.Redis.from_url(redis_server.url)
        try:
            gateway, log = children.start("gateway", [sys.executable, "-m", "atout_arena.cli", "gateway",
                                                      "--address", "127.0.0.1:0"])
            address = "127.0.0.1:" + wait_for(log, r"listening on 127\.0\.0\.1:(\d+)", gateway).group(1)
            api, log = children.start("api", [sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"])
            api_url = wait_for(log, r"API listening on (http://\S+)", api).group(1)
            worker, log = children.start("worker", [sys.executable, "-m", "atout_arena.cli", "worker",
                                                    "--concurrency", str(args.concurrency),
                                                    "--loglevel", "info"])
            wait_for(log, r"\bready\b", worker)
            registry = BotRegistry(sessions)
            names, bots = [], []
            for role, spec in (("a", args.a), ("b", args.b)):
                bot, token = registry.add(f"bench-{role}")
                names.append(bot.name)
                process, _ = children.start(f"bot-{role}", [sys.executable, "-m", "atout.cli", "run", spec,
                                                            "--server", address, "--token", token,
                                                            "--log-level", "WARNING"])
                bots.append(process)
            deadline = time.monotonic() + 30
            while client.zcard("atout:connected") < 2:
                if time.monotonic() > deadline:
                    raise RuntimeError("the bots did not connect")
                time.sleep(0.05)
            http = httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30)
            groups = {"worker": [worker.pid], "gateway": [gateway.pid], "api": [api.pid],
                      "bots": [p.pid for p in bots], "redis": [redis_server.process.pid]}
            spies = []
            for game, players, max_games in plan:
                local_s, local_cpu, local_games = local_rate(game, players, max_games, args.a, args.b)
                if args.profile:
                    spies = profile(args.profile, game, {"worker": worker.pid, "gateway": gateway.pid,
                                                         "api": api.pid})
                cpu_before = {k: sum(cpu_of(pid) for pid in pids) for k, pids in groups.items()}
                began = time.perf_counter()
                created = http.post("/v1/tests", json={
                    "game": game, "players": players, "a": names[0], "b": names[1], "max_games": max_games,
                    "sets_in_flight": args.sets_in_flight, "sprt": {"elo0": 995, "elo1": 1000},
                    "move_ms": 5000})
                created.raise_for_status()
                test_id = created.json()["id"]
                deadline = time.monotonic() + args.timeout
                while True:  # (two light reads a poll: the columns, never the action logs)
                    with sessions() as session:
                        status = session.scalar(select(SprtTest.status).where(SprtTest.id == test_id))
                        open_matches = session.scalar(select(func.count()).select_from(Match).where(
                            Match.test_id == test_id, Match.status.not_in(DONE)))
                        if status != "running" and not open_matches:
                            break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"test {test_id} ({game}) not over within {args.timeout} s")
                    time.sleep(0.2)
                elapsed = time.perf_counter() - began
                for spy in spies:
                    spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                for spy in spies:
                    spy.wait(30)
                cpu = {k: sum(cpu_of(pid) for pid in pids) - cpu_before[k] for k, pids in groups.items()}
                with sessions() as session:
                    matches = session.query(Match).filter(Match.test_id == test_id).all()
                    finished = [m for m in matches if m.status == "finished"]
                    steps = sum(len(m.actions or []) for m in finished)
                    bot_steps = sum(1 for m in finished for a in (m.actions or []) if a[2] == "bot")
                n = len(finished)
                timed = [(len(m.actions or []), (m.finished_at - m.started_at).total_seconds())
                         for m in finished if m.started_at and m.finished_at]
                durations = sorted(d for _, d in timed)
                match_s = durations[len(durations) // 2] if durations else 0.0
                fixed_s, step_s = fit(timed)
                row = {
                    "game": game, "players": players, "games": n, "seconds": round(elapsed, 2),
                    "games_per_s": round(n / elapsed, 2), "local_games": local_games,
                    "local_seconds": round(local_s, 3), "local_games_per_s": round(local_games / local_s, 1),
                    "local_cpu_ms_per_game": round(local_cpu / local_games * 1e3, 3),
                    "test_vs_local": round((n / elapsed) / (local_games / local_s), 4),
                    "decisions": steps, "bot_decisions": bot_steps,
                    "cpu_ms_per_match": {k: round(v / max(1, n) * 1e3, 2) for k, v in cpu.items()},
                    "worker_cpu_us_per_decision": round(cpu["worker"] / max(1, steps) * 1e6, 1),
                    # Little's law: the matches in flight on average, and how long one lasted
                    "mean_in_flight": round(sum(durations) / elapsed, 1),
                    "match_s_p50": round(match_s, 3), "match_s_max": round(max(durations, default=0.0), 3),
                    "ms_per_step_p50": round(match_s / max(1, steps / max(1, n)) * 1e3, 2),
                    # a match's wall time = fixed + steps * per step (least squares over its matches)
                    "match_fixed_ms": round(fixed_s * 1e3, 1), "step_ms": round(step_s * 1e3, 3),
                    "load": [round(x, 2) for x in os.getloadavg()],
                }
                results.append(row)
                print(json.dumps(row), flush=True)
        finally:
            children.stop_all()
            client.close()
            engine.dispose()
            redis_server.stop()

    print()
    print("| game | players | arena games | s | games/s | local games/s | test_vs_local (goal) "
          "| worker CPU ms / match | worker CPU µs / decision "
          "| CPU ms / match: game server, API, bots, Redis |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        c = r["cpu_ms_per_match"]
        print(f"| {r['game']} | {r['players']} | {r['games']} | {r['seconds']} | {r['games_per_s']} "
              f"| {r['local_games_per_s']:,} | {r['test_vs_local']:.4f} ({GOALS.get(r['game'], 0):.2f}) "
              f"| {c['worker']} | {r['worker_cpu_us_per_decision']} "
              f"| {c['gateway']}, {c['api']}, {c['bots']}, {c['redis']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    parts = []
    for r in results:
        key = f"{r['game']}{r['players']}"
        parts += [f"{key}_test_vs_local={r['test_vs_local']:.4f}",
                  f"{key}_worker_cpu_ms_per_match={r['cpu_ms_per_match']['worker']:.2f}",
                  f"{key}_worker_cpu_us_per_decision={r['worker_cpu_us_per_decision']:.0f}"]
    print("ratios: " + " ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
