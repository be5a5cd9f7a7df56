"""Practice start latency: from ``POST /v1/practice`` to the bot's first decision, on an idle arena.

    python bench/practice.py                 # about 30 s on a 2-core machine
    python bench/practice.py --n 40 --json results.json

Every part is a real process on loopback, as in production: embedded Redis, SQLite, a game
server (``atout-arena gateway``), the API (``atout-arena api``), a practice worker
(``atout-arena worker --practice``: only workers play matches) and one SDK bot
(``atout-bot run bench/stamp_bot.py:Stamp``), which writes the time each decision request
reaches it. For each of ``--n`` practice matches (tiercon, the bot against a house bot, played
to the end before the next one starts) it measures:

1. ``first decision``: the POST sent -> the first decision request of that match in the bot's
   ``act`` (the bot's own clock; same machine);
2. ``round trip`` (baseline, in the same run): a plain decision round trip through the same
   Redis, game server and bot (``DecisionClient.request``, one at a time).

Target: the first decision of a practice match reaches the bot within 250 ms.
The last line is ``ratios:`` first-decision p50 / 250 ms and first-decision p50 / round-trip p50.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import httpx
import redis
from tournament import Children, run_directory, wait_for

from atout.games import new_game
from atout_arena.core.db import open_database
from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.match import legality_check
from atout_arena.core.relay import is_connected
from atout_arena.services.bots import BotRegistry
from atout_workers.decisions import DecisionClient

HERE = Path(__file__).resolve().parent
TARGET_MS = 250.0
ADMIN = "atout_admin_bench-organizer-token-0123"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def first_stamp(stamps: Path, match_id: str) -> float | None:
    if not stamps.exists():
        return None
    for line in stamps.read_text().splitlines():
        mid, at = line.split()
        if mid == match_id:
            return float(at)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="practice matches (one at a time)")
    parser.add_argument("--round-trips", type=int, default=300, help="baseline round trips")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    with run_directory("atout-bench-practice-") as directory:
        redis_server = EmbeddedRedis(directory / "redis").start()
        database_url = f"sqlite:///{directory / 'atout.db'}"
        engine, sessions = open_database(database_url)
        env = {"ATOUT_REDIS_URL": redis_server.url, "ATOUT_DATABASE_URL": database_url,
               "PYTHONUNBUFFERED": "1", "ATOUT_DATA_DIR": str(directory), "ATOUT_ADMIN_TOKEN": ADMIN}
        children = Children(directory, env)
        stamps = directory / "stamps.txt"
        client = redis.Redis.from_url(redis_server.url)
        try:
            gateway, log = children.start("gateway", [sys.executable, "-m", "atout_arena.cli", "gateway",
                                                      "--address", "127.0.0.1:0"])
            address = "127.0.0.1:" + wait_for(log, r"listening on 127\.0\.0\.1:(\d+)", gateway).group(1)
            api, log = children.start("api", [sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"])
            api_url = wait_for(log, r"API listening on (http://\S+)", api).group(1)
            worker, log = children.start("worker", [sys.executable, "-m", "atout_arena.cli", "worker",
                                                    "--practice", "--concurrency", "4", "--loglevel", "info"])
            wait_for(log, r"\bready\b", worker)
            bot, token = BotRegistry(sessions).add("bench-practice")
            children.start("bot", [sys.executable, "-m", "atout.cli", "run", f"{HERE / 'stamp_bot.py'}:Stamp",
                                   "--server", address, "--token", token, "--log-level", "WARNING"],
                           ATOUT_BENCH_STAMP_FILE=str(stamps))
            deadline = time.monotonic() + 30
            while not is_connected(client, str(bot.id)):
                if time.monotonic() > deadline:
                    raise RuntimeError("the bot did not connect")
                time.sleep(0.05)

            http = httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
            first: list[float] = []
            for _ in range(args.n + 1):  # the first one warms every part up: not counted
                began = time.time()
                started = http.post("/v1/practice", json={"game": "tiercon", "move_ms": 2000})
                started.raise_for_status()
                match_id = str(started.json()["match_id"])
                deadline = time.monotonic() + 30
                while (reached := first_stamp(stamps, match_id)) is None:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"practice match {match_id}: no decision reached the bot")
                    time.sleep(0.002)
                first.append((reached - began) * 1000)
                while http.get(f"/v1/matches/{match_id}").json()["status"] != "finished":
                    time.sleep(0.02)
            first = first[1:]

            decisions = DecisionClient(redis_server.url)
            state = new_game("tiercon").new_state(seed=1)
            request = {"game": "tiercon", "seat": state.current_player, "observation": state.observation(0),
                       "legal_actions": state.legal_actions(), "check": legality_check(state)}
            trips = []
            for i in range(args.round_trips + 20):
                t0 = time.perf_counter()
                decision = decisions.request(str(bot.id), f"bench-rt-{i}", deadline_ms=5000, **request)
                if i >= 20 and decision.ok:
                    trips.append((time.perf_counter() - t0) * 1000)
            decisions.close()
        finally:
            children.stop_all()
            client.close()
            engine.dispose()
            redis_server.stop()

    results = {
        "first_decision_ms": {"p50": statistics.median(first), "p95": percentile(first, 0.95),
                              "max": max(first), "n": len(first)},
        "round_trip_ms": {"p50": statistics.median(trips), "p99": percentile(trips, 0.99), "n": len(trips)},
    }
    f, r = results["first_decision_ms"], results["round_trip_ms"]
    print(f"practice: POST -> the bot's first decision, {f['n']} matches on an idle arena: "
          f"p50 {f['p50']:.1f} ms, p95 {f['p95']:.1f} ms, max {f['max']:.1f} ms (target {TARGET_MS:.0f} ms)")
    print(f"baseline: one decision round trip (DecisionClient -> Redis -> game server -> bot -> back): "
          f"p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"ratios: first_decision_p50/target={f['p50'] / TARGET_MS:.3f} "
          f"first_decision_p50/round_trip_p50={f['p50'] / r['p50']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
