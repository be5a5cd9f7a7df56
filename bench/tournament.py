"""Tournament throughput: matches/s and decisions/s through every real part, 1 worker vs 2.

    python bench/tournament.py                       # about a minute on a 2-core machine
    python bench/tournament.py --workers 1,2,4 --games-per-pairing 40 --json results.json

Starts, on loopback only: an embedded Redis, a temporary SQLite database, a game server
(``atout-arena gateway``), 4 SDK bots (``atout-bot run random``, one process each) and, for
each entry of ``--workers``, that many Celery worker processes (``atout-arena worker``, each
playing up to ``--concurrency`` matches on its event loop). Then it creates a round-robin
tournament of the 4 bots (by default merde, 4 players, 4 deals: 200 matches of 56 decisions;
see ``--game``, ``--options``), starts it and measures from the dispatch of its matches to its
finalize: matches/s, decisions/s (every decision a bot answered through the relay), and the
peak number of matches in flight in one worker process.

The baseline of each configuration is a plain gRPC ping-pong on one stream (``roundtrip.py``'s
echo server), timed just before and just after it with every process idle; the ratio is
against the mean of the two (the shared machine's speed drifts within a minute). The last line
is ``ratios: throughput_vs_pingpong=...`` (the last configuration's decisions/s ÷ that
baseline; target: >= 1.0 with 2 workers).

Every part runs on the same machine, so workers, the game server, the bots and Redis share
its cores: the figures say what one small machine does, not how far the design scales.
``cpu_s`` in the JSON lines splits the CPU time between the parts. Results: ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# gRPC first, so that the raw ping-pong of the baseline runs gRPC as installed (its default
# engine): importing the arena's package would choose its iomgr engine for this process
# (atout._grpc_engine); the arena's own processes choose it for themselves.
import grpc  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent

START_TIMEOUT_S = 30.0


def wait_for(path: Path, pattern: str, process: subprocess.Popen,
             timeout: float = START_TIMEOUT_S) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace")) if path.exists() else None
        if found:
            return found
        if process.poll() is not None:
            break
        time.sleep(0.05)
    tail = path.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"{path.name}: no {pattern!r} within {timeout} s:\n{tail}")


class Children:
    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = env
        self.started: list[tuple[subprocess.Popen, Path]] = []

    def start(self, name: str, args: list[str], **env: str) -> tuple[subprocess.Popen, Path]:
        log = self.directory / f"{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=ROOT, env={**os.environ, **self.env, **env})
        self.started.append((process, log))
        return process, log

    def stop(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(15)

    def stop_all(self) -> None:
        for process, _ in reversed(self.started):
            self.stop(process)


@contextlib.contextmanager
def run_directory(prefix: str) -> Iterator[Path]:
    """A new directory for one run (database, Redis, every process's log): removed after a run
    that went well; after a failure it is kept, and said where, to read the logs."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield directory
    except BaseException:
        print(f"the logs of every process are kept in {directory}", file=sys.stderr)
        raise
    if os.environ.get("ATOUT_BENCH_KEEP"):  # to read the logs of a run that went well too
        print(f"the logs of every process are kept in {directory}", file=sys.stderr)
        return
    shutil.rmtree(directory, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_in_flight(matches: list) -> int:
    """The most matches one worker process had running at once."""
    by_process: dict[str, list[tuple[object, int]]] = {}
    for m in matches:
        process = m.lease_id.rsplit(":", 1)[0]
        by_process.setdefault(process, []).extend([(m.started_at, 1), (m.finished_at, -1)])
    peak = 0
    for events in by_process.values():
        level = 0
        for _, step in sorted(events, key=lambda e: (e[0], e[1])):
            level += step
            peak = max(peak, level)
    return peak


def start_bots(children: Children, registry: object, redis_url: str, address: str, spec: str,
               threads: int, prefix: str, n: int = 4) -> tuple[list[str], list[subprocess.Popen]]:
    """Register ``n`` bots and run each (``atout-bot run spec``) in its own process; returns
    their names and processes once all are connected."""
    import redis

    names, processes = [], []
    for i in range(n):
        bot, token = registry.add(f"{prefix}-{i}")  # type: ignore[attr-defined]
        names.append(bot.name)
        process, _ = children.start(f"bot-{i}", [sys.executable, "-m", "atout.cli", "run", spec,
                                                 "--server", address, "--token", token,
                                                 "--max-workers", str(threads), "--log-level", "WARNING"])
        processes.append(process)
    client = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + START_TIMEOUT_S
    while client.zcard("atout:connected") < n:
        if time.monotonic() > deadline:
            raise RuntimeError("the bots did not connect")
        time.sleep(0.05)
    client.close()
    return names, processes


def raw_roundtrips_per_s(directory: Path, n: int = 3000) -> tuple[float, float]:
    """The baseline of the same run: a plain gRPC ping-pong on one stream (``roundtrip.py``'s
    echo server in another process, a payload the size of a decision request): round trips/s
    and p50 in ms."""
    import statistics

    from roundtrip import raw_pingpong, start_echo_server

    echo, port = start_echo_server(directory / "echo.port")
    try:
        times = raw_pingpong(port, n, b"x" * 700)
    finally:
        echo.terminate()
        echo.wait(10)
    return len(times) / sum(times), statistics.median(times) * 1000


def run(args: argparse.Namespace) -> list[dict]:
    from sqlalchemy import select

    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.embedded_redis import EmbeddedRedis
    from atout_arena.core.models import Match, Tournament
    from atout_arena.core.settings import Settings
    from atout_arena.core.tasks import Tasks
    from atout_arena.services.bots import BotRegistry
    from atout_arena.services.tournaments import create_tournament, start_tournament

    with run_directory("atout-bench-") as directory:
        redis_server = EmbeddedRedis(directory / "redis").start()
        database_url = f"sqlite:///{directory / 'atout.db'}"
        engine = make_engine(database_url)
        create_all(engine)
        sessions = make_session_factory(engine)
        env = {"ATOUT_REDIS_URL": redis_server.url, "ATOUT_DATABASE_URL": database_url,
               "PYTHONUNBUFFERED": "1", "ATOUT_DATA_DIR": str(directory)}
        tasks = Tasks.for_settings(Settings(redis_url=redis_server.url))
        children = Children(directory, env)
        results = []
        try:
            raw_per_s, raw_p50_ms = raw_roundtrips_per_s(directory)
            raw_before = raw_per_s
            baseline = {"raw_pingpong_roundtrips_per_s": round(raw_per_s), "raw_p50_ms": round(raw_p50_ms, 3)}
            print(json.dumps(baseline), flush=True)
            gateway, log = children.start("gateway", [sys.executable, "-m", "atout_arena.cli", "gateway",
                                                      "--address", "127.0.0.1:0"])
            address = "127.0.0.1:" + wait_for(log, r"listening on 127\.0\.0\.1:(\d+)", gateway).group(1)
            registry = BotRegistry(sessions)
            bots, bot_processes = start_bots(children, registry, redis_server.url, address, args.bot,
                                             args.bot_threads, "bench")

            for n_workers in args.workers:
                workers = []
                for w in range(n_workers):
                    process, log = children.start(f"worker-{n_workers}-{w}", [
                        sys.executable, "-m", "atout_arena.cli", "worker",
                        "--concurrency", str(args.concurrency), "--hostname", f"bench{n_workers}-{w}@%h",
                        "--loglevel", "info"])
                    workers.append((process, log))
                for process, log in workers:
                    wait_for(log, r"\bready\b", process)
                if n_workers != args.workers[0]:
                    raw_before, _ = raw_roundtrips_per_s(directory)  # every process idle, just before
                options = json.loads(args.options)
                tid = create_tournament(sessions, name=f"bench-{n_workers}", game=args.game, bots=bots,
                                        players=args.players, options=options,
                                        games_per_pairing=args.games_per_pairing, move_ms=args.move_ms,
                                        seed=1)
                groups = {"workers": [p.pid for p, _ in workers], "gateway": [gateway.pid],
                          "bots": [p.pid for p in bot_processes], "redis": [redis_server.process.pid]}
                cpu_before = {k: sum(cpu_seconds(pid) for pid in pids) for k, pids in groups.items()}
                started = time.perf_counter()
                tasks.play_matches(start_tournament(sessions, tid))
                while True:
                    with sessions() as session:
                        if session.get(Tournament, tid).status == "finished":
                            break
                    time.sleep(0.02)
                elapsed = time.perf_counter() - started
                cpu = {k: round(sum(cpu_seconds(pid) for pid in pids) - cpu_before[k], 2)
                       for k, pids in groups.items()}
                with sessions() as session:
                    matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
                    decisions = sum(1 for m in matches for a in (m.actions or []) if a[2] == "bot")
                    think = [a[3] for m in matches for a in (m.actions or []) if a[2] == "bot"]
                    faults = sum(len(a[4]) for m in matches for a in (m.actions or []))
                    failed = sum(m.status != "finished" for m in matches)
                    peak = peak_in_flight(matches)
                row = {
                    "workers": n_workers, "concurrency": args.concurrency, "game": args.game,
                    "players": args.players,
                    "matches": len(matches), "failed": failed, "decisions": decisions, "faults": faults,
                    "seconds": round(elapsed, 2), "matches_per_s": round(len(matches) / elapsed, 1),
                    "decisions_per_s": round(decisions / elapsed), "peak_in_flight_per_process": peak,
                    "think_ms_mean": round(sum(think) / max(1, len(think)), 2),
                    "cpu_s": cpu, "raw_pingpong_roundtrips_per_s": round(raw_per_s),
                    "throughput_vs_pingpong": round(decisions / elapsed / raw_per_s, 3),
                }
                for process, _ in workers:
                    children.stop(process)
                # the baseline again, right after (the machine's load drifts within a minute): the
                # ratio is against the mean of the ping-pongs just before and just after this run
                raw_after, _ = raw_roundtrips_per_s(directory)
                raw_mean = (raw_before + raw_after) / 2
                row.update(raw_pingpong_before_after=[round(raw_before), round(raw_after)],
                           raw_pingpong_roundtrips_per_s=round(raw_mean),
                           throughput_vs_pingpong=round(decisions / elapsed / raw_mean, 3))
                results.append(row)
                print(json.dumps(row), flush=True)
        finally:
            children.stop_all()
            redis_server.stop()
            engine.dispose()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2", help="worker process counts to compare (default 1,2)")
    parser.add_argument("--concurrency", type=int, default=1000, help="matches in flight per worker")
    parser.add_argument("--game", default="merde")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--options", default='{"deals": 4}', help="game options as JSON")
    parser.add_argument("--games-per-pairing", type=int, default=200)
    parser.add_argument("--move-ms", type=int, default=5000)
    parser.add_argument("--bot", default="random", help="what each of the 4 bots runs (atout-bot run BOT)")
    parser.add_argument("--bot-threads", type=int, default=32, help="--max-workers of each bot")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",")]
    results = run(args)
    print()
    print("| workers | matches | decisions | seconds | matches/s | decisions/s | peak in flight / process |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['workers']} | {r['matches']} | {r['decisions']:,} | {r['seconds']} "
              f"| {r['matches_per_s']} | {r['decisions_per_s']:,} | {r['peak_in_flight_per_process']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    # Against the baselines of the same run (the machine is shared: absolute figures drift): the raw
    # gRPC ping-pong of one stream, and the first configuration.
    base, last = results[0], results[-1]
    scaling = " ".join(
        f"decisions_{r['workers']}w/{base['workers']}w={r['decisions_per_s'] / base['decisions_per_s']:.2f}"
        for r in results[1:]
    )
    print(f"{last['workers']} workers: {last['decisions_per_s']} decisions/s; raw ping-pong, one stream: "
          f"{last['raw_pingpong_roundtrips_per_s']} round trips/s")
    print(f"ratios: throughput_vs_pingpong={last['throughput_vs_pingpong']:.2f} {scaling}".rstrip())


if __name__ == "__main__":
    main()
