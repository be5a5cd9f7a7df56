"""The matchmaker's promises, measured through the ladder's real chooser
(:func:`atout_arena.services.matchmaking.plan`, which ``services.ladders._schedule`` calls) and
its real OpenSkill rating (:func:`~atout_arena.services.matchmaking.rate`), with bots of known
strength deciding each set (one Plackett-Luce draw), no network: over any 50 sets every
connected bot's share of sets is within 10% of the mean (rounded outward to whole sets), every
pair of neighbours in the standings met in the last 50 sets, and a late member starts from the
mean load, not zero. The figures are printed (``-s``) for the record in docs/ladders.md."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from dataclasses import dataclass, field

import pytest

from atout_arena.services.matchmaking import Candidate, ordinal, plan, prior, rate

WINDOW = 50
SEEDS = 20
SETS = 60
SEATS = range(2, 8)  # every seat count the games allow: tiercon 2, régicide 2-4, fool 2-6, merde 3-7


def set_size(players: int) -> int:
    return 2 if players == 2 else 2 * players  # services.sprt.set_size_of


@dataclass
class Run:
    tables: list[tuple[int, ...]] = field(default_factory=list)
    ordinals: dict[int, float] = field(default_factory=dict)
    joined: dict[int, int] = field(default_factory=dict)  # bot -> the first set it could sit in
    loads_at_join: tuple[float, float] = (0.0, 0.0)  # the late bot's load, the others' mean


def simulate(bots: int, players: int, seed: int, sets: int = SETS, *, in_flight: int = 2,
             late: int | None = None, join_at: int = 0, settled: bool = False) -> Run:
    """A ladder of ``bots`` bots of strengths 0 to 3 (dealt at random), ``in_flight`` sets
    scheduled before the oldest is rated, as the tick does; ``late`` joins at set ``join_at``."""
    rng = random.Random(seed)
    strengths = [3.0 * i / (bots - 1) for i in range(bots)]
    rng.shuffle(strengths)
    mu0, sigma0 = prior()
    rating = {i: (10 + 5 * strengths[i], 1.0) if settled else (mu0, sigma0) for i in range(bots)}
    games = dict.fromkeys(rating, 0.0)
    baseline = dict.fromkeys(rating, 0.0)
    busy = dict.fromkeys(rating, 0)
    last = dict.fromkeys(rating, -1)
    size = set_size(players)
    met: dict[tuple[int, int], int] = {}
    run = Run(joined={i: (join_at if i == late else 0) for i in rating})
    pending: list[tuple[int, ...]] = []
    for number in range(sets):
        pool = [Candidate(i, *rating[i], games[i] + baseline[i] + busy[i] * size, busy[i], last[i])
                for i in rating if i != late or number >= join_at]
        chosen = plan(pool, players, size, room=1, max_busy=in_flight + 1, first=number, met=met, rng=rng)
        for bot, extra in chosen.raised.items():
            baseline[bot] += extra
        if late is not None and number == join_at:
            others = [c.load for c in pool if c.bot_id != late]
            run.loads_at_join = (games[late] + baseline[late], sum(others) / len(others))
        table = chosen.tables[0]
        run.tables.append(table)
        for bot in table:
            busy[bot] += 1
            last[bot] = number
        for a, b in itertools.combinations(table, 2):
            met[(min(a, b), max(a, b))] = number
        pending.append(table)
        if len(pending) > in_flight or number == sets - 1:
            for done in pending[: len(pending) - in_flight if number < sets - 1 else None]:
                left, order = list(done), []
                while left:  # Plackett-Luce: the next place to a bot with probability ~ e^strength
                    pick = rng.choices(left, [math.exp(strengths[i]) for i in left])[0]
                    order.append(pick)
                    left.remove(pick)
                ranks = [order.index(i) + 1 for i in done]
                for i, after in zip(done, rate([rating[i] for i in done], ranks), strict=True):
                    rating[i] = after
                    games[i] += size
                    busy[i] -= 1
            pending = pending[len(pending) - in_flight:] if number < sets - 1 else []
    run.ordinals = {i: ordinal(*rating[i]) for i in rating}
    return run


def worst_share(run: Run, players: int) -> tuple[float, bool]:
    """Over every window of 50 sets (after every bot joined): the largest deviation of a bot's
    sets from the mean, as a fraction of the mean, and whether every count was within 10% of
    the mean rounded outward to whole sets."""
    start = max(run.joined.values())
    bots = len(run.joined)
    worst, ok = 0.0, True
    for a in range(start, len(run.tables) - WINDOW + 1):
        counts = Counter(b for t in run.tables[a:a + WINDOW] for b in t)
        mean = WINDOW * players / bots
        for bot in run.joined:
            n = counts.get(bot, 0)
            worst = max(worst, abs(n - mean) / mean)
            ok = ok and math.floor(0.9 * mean) <= n <= math.ceil(1.1 * mean)
    return worst, ok


def connected(tables: list[tuple[int, ...]], bots: list[int]) -> bool:
    """Whether the comparison graph of these tables (bots joined when they met) is connected."""
    reach, todo = {bots[0]}, [bots[0]]
    while todo:
        bot = todo.pop()
        for table in tables:
            if bot in table:
                todo.extend(b for b in table if b not in reach)
                reach.update(table)
    return reach == set(bots)


def neighbours_met(run: Run) -> tuple[int, int]:
    """How many pairs of neighbours in the final standings met in the last 50 sets, of how many."""
    ranked = sorted(run.ordinals, key=lambda b: -run.ordinals[b])
    recent = {frozenset(p) for t in run.tables[-WINDOW:] for p in itertools.combinations(t, 2)}
    pairs = [frozenset(p) for p in itertools.pairwise(ranked)]
    return sum(p in recent for p in pairs), len(pairs)


@pytest.mark.slow
def test_every_share_is_fair_and_the_comparison_graph_connected_over_many_seeds() -> None:
    worst_by_seats: dict[int, float] = {}
    misses: list[str] = []
    met = pairs = 0
    for players in SEATS:
        for bots in range(max(3, players), 13):
            for seed in range(SEEDS):
                run = simulate(bots, players, seed)
                worst, ok = worst_share(run, players)
                worst_by_seats[players] = max(worst_by_seats.get(players, 0.0), worst)
                if not ok:
                    misses.append(f"share: {bots} bots, {players} seats, seed {seed}: {worst:.0%}")
                if not connected(run.tables[-WINDOW:], list(run.ordinals)):
                    misses.append(f"graph: {bots} bots, {players} seats, seed {seed}: not connected")
                m, p = neighbours_met(run)
                met, pairs = met + m, pairs + p
    print(f"\nworst share deviation over any {WINDOW} sets, by seats:",
          {k: f"{v:.1%}" for k, v in worst_by_seats.items()},
          f"neighbours in the final standings that met in the last {WINDOW} sets: {met}/{pairs}")
    assert not misses, misses[:10]
    # Ratings still move after 60 sets of 12 bots: a pair that became neighbours in the last few
    # sets may not have met yet. Settled ratings: every pair (test_a_two_seat_ladder_...).
    assert met >= 0.99 * pairs


def test_five_settled_bots_at_four_seat_tables_share_the_sets() -> None:
    # issue 32, finding 3: two bots got 56-57 of 100 sets and the others 99-100
    for seed in range(5):
        run = simulate(5, 4, seed, 100, settled=True)
        counts = Counter(b for t in run.tables for b in t)
        assert all(76 <= counts[b] <= 84 for b in range(5)), counts  # 80 each
        assert worst_share(run, 4)[1]


def test_a_two_seat_ladder_does_not_split_into_groups() -> None:
    # issue 32, finding 4: after a strong bot joined, the two weakest met in 90 sets, the others rarely
    for seed in range(5):
        run = simulate(5, 2, seed, 150, late=0, join_at=40, settled=True)
        m, p = neighbours_met(run)
        assert m == p, (seed, m, p)
        pairs = Counter(frozenset(t) for t in run.tables[40:])
        assert max(pairs.values()) <= 30, pairs  # 110 sets over 10 pairs: none takes most of them


def test_a_late_member_starts_from_the_mean_load() -> None:
    for seed in range(5):
        run = simulate(6, 4, seed, 120, late=2, join_at=60)
        late_load, mean_load = run.loads_at_join
        assert late_load == pytest.approx(mean_load)
        assert worst_share(run, 4)[1]  # and it is not owed the 60 sets it missed: fair from then on
        counts = Counter(b for t in run.tables[60:] for b in t)
        assert counts[2] <= 1.1 * 60 * 4 / 6 + 1, counts
