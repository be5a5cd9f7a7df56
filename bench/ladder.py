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
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.models import Bot, LadderMember, Match
from atout_arena.core.vocabulary import MatchStatus
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--bots", default="3,6")
    parser.add_argument("--sets", type=int, default=600, help="sets per ladder run")
    args = parser.parse_args()
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
