"""How many matches a ladder needs to order bots of known strength, and what its scheduler costs.

    python bench/ladder.py [--seeds 20] [--bots 3,6] [--sets 600]

Outcomes are simulated, everything else is the arena's own code on a real (SQLite) database:
a ladder is created by :func:`atout_arena.services.ladders.create_ladder`, and each round calls
:func:`~atout_arena.services.ladders.tick` (which rates the finished sets with OpenSkill and
seats the next ones through the matchmaker), then finishes the matches it scheduled by hand: a
duplicate set's games all get one Plackett-Luce draw of the seated bots' true strengths
(``exp(strength)`` weights), the same in both seats, as a set whose deal luck cancels.

Reported per bot count: the matches played until the order by ordinal (mu - 3 sigma) is the
true order *for good* (it stays right to the end of the run), median and 90th percentile over
the seeds, and how many seeds never got there; then the CPU time of ``tick`` per match it
scheduled (``time.process_time``: rating, choosing, storing). The last line, ``ratios:``, is
the 6-bot median over the 3-bot one, and the CPU per match with 6 bots over 3.

    python bench/ladder.py --live [--game tiercon] [--live-bots 6] [--seconds 60] [--target 4,32]

``--live`` plays instead (issue 38): every part a real process on loopback (embedded Redis,
SQLite, a game server, one worker, ``--live-bots`` SDK bots ``atout-bot run random`` and
``heuristic`` in turn, each its own process), a ladder of them created by the service and
ticked by the worker as in production (``atout.ladder_tick``: after every match and every
``ATOUT_LADDER_TICK_S``). After ``--warmup`` seconds it counts the ladder's matches finished in
the next ``--seconds``: matches per minute, and the CPU time per match of the worker, the game
server, the bots and Redis; once per ``--target`` (the ladder's ``target_in_flight``; 4 is the
default of ``atout-arena ladder create``). The goal of issue 38: at least 600 tiercon matches a
minute with 6 instant bots. The last line is ``ratios:``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.models import Bot, LadderMember, Match, utcnow
from atout_arena.core.vocabulary import LadderStatus, MatchStatus
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.ladders import create_ladder, tick
from atout_arena.services.matchmaking import ordinal


def strengths_of(bots: int) -> list[float]:
    """Bot 0 the strongest: 3.0 down to 0.0 evenly (3 bots: a neighbour wins 82% of its duels; 6: 65%)."""
    return [3.0 * (bots - 1 - i) / (bots - 1) for i in range(bots)]


def run(bots: int, seed: int, max_sets: int, directory: Path) -> tuple[int | None, int | None, float, int]:
    """One ladder: (matches until first ordered, until ordered for good (None: never), tick CPU
    seconds, matches)."""
    engine = make_engine(f"sqlite:///{directory / f'ladder-{bots}-{seed}.db'}")
    create_all(engine)
    sessions = make_session_factory(engine)
    rng = random.Random(seed)
    strength = strengths_of(bots)
    with sessions() as session:
        rows = [Bot(name=f"b{i}", owner="bench", token_hash=f"{seed}-{bots}-{i}".ljust(64, "0"))
                for i in range(bots)]
        session.add_all(rows)
        session.commit()
        ids = [b.id for b in rows]
    shuffled = list(strength)
    rng.shuffle(shuffled)  # no help from the ids' order: ties in the standings prove nothing
    true_of = dict(zip(ids, shuffled, strict=True))
    truth = sorted(ids, key=lambda i: -true_of[i])
    ladder_id = create_ladder(sessions, name="bench", spec=CompetitionSpec.of("tiercon"),
                              bots=[f"b{i}" for i in range(bots)], target_in_flight=2 * bots, seed=seed)
    live = set(ids)
    cpu = 0.0
    played = 0
    right_since: int | None = None
    first_right: int | None = None
    sets = 0
    while sets < max_sets:
        start = time.process_time()
        report = tick(sessions, ladder_id, lambda: live)
        cpu += time.process_time() - start
        with sessions() as session:
            members = session.scalars(select(LadderMember).where(LadderMember.ladder_id == ladder_id)).all()
            shown = {m.bot_id: ordinal(m.mu, m.sigma) for m in members}
            if all(shown[x] > shown[y] for x, y in itertools.pairwise(truth)):  # strictly, in order
                right_since = played if right_since is None else right_since
                first_right = played if first_right is None else first_right
            else:
                right_since = None
            matches = [session.get(Match, m) for m in report.match_ids]
            by_set: dict[int, list[Match]] = {}
            for match in matches:
                by_set.setdefault(match.deal_group, []).append(match)
            for group in by_set.values():
                seated = [s.bot_id for s in group[0].seats]
                left, places = list(seated), {}
                while left:
                    pick = rng.choices(left, [math.exp(true_of[b]) for b in left])[0]
                    places[pick] = len(places) + 1
                    left.remove(pick)
                for match in group:
                    match.status = MatchStatus.FINISHED
                    match.ranking = [places[s.bot_id] for s in sorted(match.seats, key=lambda s: s.seat)]
                    played += 1
                sets += 1
            session.commit()
    engine.dispose()
    return first_right, right_since, cpu, played


def live(args: argparse.Namespace) -> int:
    """A ladder of real bots played by a real worker: matches per minute (see the docstring)."""
    import os

    from tournament import Children, cpu_seconds, run_directory, start_bots, wait_for

    from atout_arena.core.embedded_redis import EmbeddedRedis
    from atout_arena.core.models import Ladder
    from atout_arena.core.settings import Settings
    from atout_arena.core.tasks import Tasks
    from atout_arena.services.bots import BotRegistry

    targets = [int(t) for t in args.target.split(",")]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = []
    with run_directory("atout-bench-ladder-") as directory:
        redis_server = EmbeddedRedis(directory / "redis").start()
        database_url = f"sqlite:///{directory / 'atout.db'}"
        engine = make_engine(database_url)
        create_all(engine)
        sessions = make_session_factory(engine)
        env = {"ATOUT_REDIS_URL": redis_server.url, "ATOUT_DATABASE_URL": database_url,
               "PYTHONUNBUFFERED": "1", "ATOUT_DATA_DIR": str(directory)}
        tasks = Tasks.for_settings(Settings(redis_url=redis_server.url))
        children = Children(directory, env)
        try:
            gateway, log = children.start("gateway", [sys.executable, "-m", "atout_arena.cli", "gateway",
                                                      "--address", "127.0.0.1:0"])
            address = "127.0.0.1:" + wait_for(log, r"listening on 127\.0\.0\.1:(\d+)", gateway).group(1)
            worker, log = children.start("worker", [sys.executable, "-m", "atout_arena.cli", "worker",
                                                    "--loglevel", "info"])
            wait_for(log, r"\bready\b", worker)
            registry = BotRegistry(sessions)
            names, bots = [], []
            for i in range(args.live_bots):  # random and heuristic in turn, one process each
                got, processes = start_bots(children, registry, redis_server.url, address,
                                            ("random", "heuristic")[i % 2], 4, f"ladder-{i}", n=1)
                names += got
                bots += processes
            groups = {"worker": [worker.pid], "gateway": [gateway.pid], "bots": [p.pid for p in bots],
                      "redis": [redis_server.process.pid]}
            for target in targets:
                ladder_id = create_ladder(sessions, name=f"live-{target}", spec=CompetitionSpec.of(args.game),
                                          bots=names, target_in_flight=target, seed=1)
                tasks.ladder_tick(ladder_id)
                time.sleep(args.warmup)
                cpu = {k: sum(cpu_seconds(pid) for pid in pids) for k, pids in groups.items()}
                began, wall = utcnow(), time.perf_counter()
                time.sleep(args.seconds)
                ended, wall = utcnow(), time.perf_counter() - wall
                cpu = {k: sum(cpu_seconds(pid) for pid in pids) - cpu[k] for k, pids in groups.items()}
                with sessions() as session:
                    ladder = session.get(Ladder, ladder_id)
                    assert ladder is not None
                    ladder.status = LadderStatus.PAUSED  # its ticks end, its sets in flight play out
                    session.commit()
                    done = session.scalars(select(Match).where(
                        Match.ladder_id == ladder_id, Match.status == MatchStatus.FINISHED,
                        Match.finished_at >= began, Match.finished_at < ended)).all()
                    decisions = sum(len(m.actions or []) for m in done)
                n = len(done)
                row = {"game": args.game, "bots": args.live_bots, "target_in_flight": target, "matches": n,
                       "seconds": round(wall, 1), "matches_per_minute": round(n / wall * 60),
                       "decisions_per_match": round(decisions / max(1, n), 1),
                       "cpu_ms_per_match": {k: round(v / max(1, n) * 1e3, 2) for k, v in cpu.items()},
                       "worker_cpu_us_per_decision": round(cpu["worker"] / max(1, decisions) * 1e6, 1),
                       "load": [round(x, 2) for x in os.getloadavg()]}
                rows.append(row)
                print(json.dumps(row), flush=True)
                time.sleep(3)  # the paused ladder's last matches end before the next one starts
        finally:
            children.stop_all()
            redis_server.stop()
            engine.dispose()
    print("ratios: " + " ".join(
        f"{r['game']}_{r['bots']}bots_target{r['target_in_flight']}_matches_per_minute_over_goal="
        f"{r['matches_per_minute'] / LIVE_GOAL:.2f}" for r in rows))
    return 0


LIVE_GOAL = 600  # issue 38: tiercon matches a minute, a ladder of 6 instant bots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--bots", default="3,6")
    parser.add_argument("--sets", type=int, default=600, help="sets per ladder run")
    parser.add_argument("--live", action="store_true", help="real bots and a real worker: matches per minute")
    parser.add_argument("--game", default="tiercon", help="--live: the ladder's game (its default players)")
    parser.add_argument("--live-bots", type=int, default=6, help="--live: bots in the ladder")
    parser.add_argument("--seconds", type=float, default=60.0, help="--live: seconds counted")
    parser.add_argument("--warmup", type=float, default=5.0, help="--live: seconds before counting")
    parser.add_argument("--target", default="4,32", help="--live: target_in_flight of each ladder played")
    args = parser.parse_args()
    if args.live:
        return live(args)
    medians, cpus = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for bots in (int(b) for b in args.bots.split(",")):
            needed, firsts, cpu_total, matches_total = [], [], 0.0, 0
            for seed in range(args.seeds):
                first, at, cpu, played = run(bots, seed, args.sets, Path(tmp))
                needed.append(at)
                firsts.append(first)
                cpu_total += cpu
                matches_total += played
            got = sorted(n for n in needed if n is not None)
            median = statistics.median(got) if got else float("nan")
            p90 = got[min(len(got) - 1, int(0.9 * len(got)))] if got else float("nan")
            medians[bots], cpus[bots] = median, cpu_total / max(1, matches_total)
            seen = sorted(f for f in firsts if f is not None)
            print(f"{bots} bots (strengths {strengths_of(bots)}): first ordered after a median of "
                  f"{statistics.median(seen) if seen else float('nan'):.0f} matches; "
                  f"ordered for good after a median of "
                  f"{median:.0f} matches, p90 {p90:.0f}; {len(needed) - len(got)} of {args.seeds} seeds not "
                  f"within {args.sets} sets; tick CPU {cpus[bots] * 1e3:.2f} ms per match "
                  f"({matches_total} matches)")
    keys = sorted(medians)
    if len(keys) >= 2:
        a, b = keys[0], keys[-1]
        print(f"ratios: matches_to_order_{b}_over_{a}={medians[b] / medians[a]:.2f} "
              f"cpu_per_match_{b}_over_{a}={cpus[b] / cpus[a]:.2f}")
    else:
        print(f"ratios: cpu_ms_per_match={cpus[keys[0]] * 1e3:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
