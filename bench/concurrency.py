"""Matches in flight in ONE worker process, with bots that think: how many, what they cost.

    python bench/concurrency.py                      # 1000 matches, bots thinking 1 s (about 80 s)
    python bench/concurrency.py --matches 2000 --think-s 1 --json out.json

Starts, on loopback only: an embedded Redis, a temporary SQLite database, a game server, 4 SDK
bots (``atout-bot run tests/workers/worker_bots.py:Sleepy``, each ``act`` sleeps ``--think-s``
on one of ``--bot-threads`` threads) and ONE Celery worker process (``atout-arena worker``,
room for ``--matches`` matches). Then one tournament of ``--matches`` matches of merde with
``--deals`` deals (3: 4 players, 36 decisions, about 40 s a match with bots thinking 1 s, so
that the worker has claimed them all before the first ends) between the 4 bots, all sent at once.

It reports:

- ``matches_in_flight``: the most matches that worker process had running at once (from the
  matches' own start and end times);
- ``faults``: faults charged in all the matches (every decision must be answered within its
  deadline, ``--move-ms``), and the slowest decision the arena observed;
- ``mb_per_match``: the worker's resident memory growth while the matches are in flight
  (sampled every 0.2 s from /proc, peak minus the idle worker's, after a warm-up tournament)
  divided by the matches in flight at that peak.

The last line is ``ratios: matches_in_flight=... faults=... mb_per_match=...`` (targets:
>= 1000 matches in flight, 0 faults, <= 1 MB a match).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

from tournament import Children, cpu_seconds, peak_in_flight, run_directory, start_bots, wait_for

ROOT = Path(__file__).resolve().parent.parent


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssSampler:
    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.samples = pid, 0.0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                value = rss_mb(self.pid)
            except FileNotFoundError:
                return
            self.samples.append((time.monotonic(), value))
            self.peak = max(self.peak, value)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def run(args: argparse.Namespace) -> dict:
    from sqlalchemy import select

    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.embedded_redis import EmbeddedRedis
    from atout_arena.core.models import Match, Tournament
    from atout_arena.core.settings import Settings
    from atout_arena.core.tasks import Tasks
    from atout_arena.services.bots import BotRegistry
    from atout_arena.services.tournaments import create_tournament, start_tournament

    with run_directory("atout-conc-") as directory:
        redis_server = EmbeddedRedis(directory / "redis").start()
        database_url = f"sqlite:///{directory / 'atout.db'}"
        engine = make_engine(database_url)
        create_all(engine)
        sessions = make_session_factory(engine)
        env = {"ATOUT_REDIS_URL": redis_server.url, "ATOUT_DATABASE_URL": database_url,
               "PYTHONUNBUFFERED": "1", "ATOUT_DATA_DIR": str(directory),
               "ATOUT_TEST_THINK_S": str(args.think_s)}
        tasks = Tasks.for_settings(Settings(redis_url=redis_server.url))
        children = Children(directory, env)
        try:
            gateway, log = children.start("gateway", [sys.executable, "-m", "atout_arena.cli", "gateway",
                                                      "--address", "127.0.0.1:0"])
            address = "127.0.0.1:" + wait_for(log, r"listening on 127\.0\.0\.1:(\d+)", gateway).group(1)
            bots, _ = start_bots(children, BotRegistry(sessions), redis_server.url, address,
                                 "tests/workers/worker_bots.py:Sleepy", args.bot_threads, "think")
            worker, log = children.start("worker", [
                sys.executable, "-m", "atout_arena.cli", "worker", "--concurrency", str(args.matches),
                "--hostname", "conc@%h", "--loglevel", "info"])
            wait_for(log, r"\bready\b", worker)
            worker_pid = worker.pid  # `atout-arena worker` execs `python -m atout_workers`: the same pid

            def tournament(name: str, n: int) -> tuple[int, float]:
                tid = create_tournament(sessions, name=name, game="merde", bots=bots, players=4,
                                        options={"deals": args.deals}, games_per_pairing=n,
                                        move_ms=args.move_ms, seed=1)
                started = time.perf_counter()
                tasks.play_matches(start_tournament(sessions, tid))
                limit = time.monotonic() + args.timeout_s
                while True:
                    with sessions() as session:
                        if session.get(Tournament, tid).status == "finished":
                            break
                    if time.monotonic() > limit:
                        raise RuntimeError(f"tournament {name} did not finish within {args.timeout_s} s")
                    time.sleep(0.2)
                return tid, time.perf_counter() - started

            tournament("warm-up", 8)  # the worker's loop, clients and caches exist before the baseline
            time.sleep(1.0)
            idle_mb = rss_mb(worker_pid)
            cpu_before = cpu_seconds(worker_pid)
            with RssSampler(worker_pid) as sampler:
                tid, elapsed = tournament("in-flight", args.matches)
            cpu = cpu_seconds(worker_pid) - cpu_before
            with sessions() as session:
                matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
                steps = [a for m in matches for a in (m.actions or [])]
                faults = sum(len(a[4]) for a in steps)
                failed = sum(m.status != "finished" for m in matches)
                think = [a[3] for a in steps if a[2] == "bot"]
                peak = peak_in_flight(matches)
            growth = sampler.peak - idle_mb
            return {
                "matches": len(matches), "failed": failed, "decisions": len(think), "faults": faults,
                "think_s": args.think_s, "move_ms": args.move_ms,
                "slowest_decision_ms": round(max(think, default=0.0), 1),
                "seconds": round(elapsed, 1), "matches_in_flight": peak,
                "worker_idle_mb": round(idle_mb, 1), "worker_peak_mb": round(sampler.peak, 1),
                "mb_per_match": round(growth / max(1, peak), 3), "worker_cpu_s": round(cpu, 2),
                "decisions_per_s": round(len(think) / elapsed),
            }
        finally:
            children.stop_all()
            redis_server.stop()
            engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=1000, help="matches sent at once")
    parser.add_argument("--think-s", type=float, default=1.0, help="each decision's thinking time")
    parser.add_argument("--deals", type=int, default=3, help="merde deals a match (3: 36 decisions)")
    parser.add_argument("--move-ms", type=int, default=5000, help="each decision's deadline")
    parser.add_argument("--bot-threads", type=int, default=400, help="threads of each bot")
    parser.add_argument("--timeout-s", type=float, default=600.0)
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args()
    row = run(args)
    print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(row, indent=2))
    print(f"ratios: matches_in_flight={row['matches_in_flight']} faults={row['faults']} "
          f"mb_per_match={row['mb_per_match']}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
