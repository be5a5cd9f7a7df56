"""How often the SPRT of ``atout-bot test`` and of arena tests accepts the wrong hypothesis.

    python scripts/sprt_error_rates.py [--runs 2000] [--pool 2000] [--sprt 0,50] [--games merde,fool]
                                       [--modes sdk,arena] [--jobs 2] [--seed 1] [--pools FILE]

For each game at its default player count, ``--pool`` real duplicate sets of random against
random are played by the real engines (:func:`atout.sprt.set_scores`, the sets ``atout-bot test``
plays, the field the house bots' heuristic). Each set also counts mirrored, A and B swapped (A's
score ``1 - s`` in each game): two equal bots are symmetric, so the pool's mean set score is
exactly ½, an Elo of 0. For a true Elo ``e`` the pool is tilted, weight ``exp(t x)`` on a set of
score ``x``, ``t`` such that the weighted mean set score is ``L(e) = 1 / (1 + 10^(-e/400))``:
the set-score distribution of a bot ``e`` Elo stronger, as close to the real one as a
one-parameter family gets.

A run draws sets from that distribution (with replacement, whole sets: the games of a set stay
together) and feeds them into the real stopping code until it decides or ``max_games`` would be
passed:

- ``sdk``: :func:`atout.sprt.sequential`, the loop of ``atout-bot test`` (:func:`atout.sprt.run_test`),
  after every set, ``DEFAULT_MAX_GAMES`` games at most;
- ``arena``: what :func:`atout_arena.services.sprt.tick` does after every finished set, the
  arena's own ``analyse`` over every finished set (``analysis_of``) until its result is ``H0`` or
  ``H1`` or ``max_games`` (``create_test``'s default) games are played; set size
  ``set_size_of(players)``. The sets of a test finish in any order, but they are independent
  and identically drawn, so the order they are analysed in changes nothing.

H0 runs have a true Elo of ``elo0`` (a false positive is an H1), H1 runs ``elo1`` (a false
negative is an H0). The table gives, per game, mode and truth, the runs, the verdicts, the error
rate with its 95% Wilson interval, and the mean sets per run. Exit status 1 if an error rate is
above its nominal value (alpha or beta) plus one percentage point.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from atout.games import new_game
from atout.sprt import DEFAULT_MAX_GAMES, TestConfig, sequential, set_scores
from atout.stats import Sprt, elo_to_score

GAMES = ("merde", "tiercon", "regicide", "fool")
MODES = ("sdk", "arena")
TOLERANCE = 0.01  # an error rate may exceed its nominal value by one percentage point
Z95 = 1.959963984540054


def wilson(errors: int, runs: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default)."""
    if runs == 0:
        return 0.0, 1.0
    p = errors / runs
    centre = (p + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z / (1 + z * z / runs) * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    return max(0.0, centre - half), min(1.0, centre + half)


def game_pool(
    game: str, sets: int, seed: int = 0, jobs: int = 1, players: int | None = None
) -> list[list[float]]:
    """``sets`` real duplicate sets of random against random (seats and field as ``atout-bot test``)."""
    return set_scores(TestConfig(game, "random", "random", players=players, seed=seed), sets, jobs)


@dataclass(frozen=True)
class SetDistribution:
    """Whole duplicate sets with their probabilities: a pool, mirrored, tilted to a true Elo."""

    sets: list[list[float]]
    cumulative: list[float]

    @classmethod
    def at_elo(cls, pool: Sequence[Sequence[float]], elo: float) -> SetDistribution:
        """The pool and its mirror (an exact Elo of 0), tilted so that the mean set score is ``L(elo)``."""
        sets = [list(s) for s in pool] + [[1.0 - x for x in s] for s in pool]
        means = [sum(s) / len(s) for s in sets]
        target = elo_to_score(elo)

        def weights(t: float) -> list[float]:
            return [math.exp(t * (m - 0.5)) for m in means]

        def mean(t: float) -> float:
            w = weights(t)
            return sum(wi * m for wi, m in zip(w, means, strict=True)) / sum(w)

        if not min(means) < target < max(means):
            raise ValueError(f"no tilt of the pool has a mean set score of {target:.4f} (Elo {elo:g})")
        lo, hi = -1.0, 1.0
        while mean(lo) > target:
            lo *= 2
        while mean(hi) < target:
            hi *= 2
        for _ in range(200):  # the tilted mean increases with t: bisection
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if mean(mid) < target else (lo, mid)
        w = weights(0.5 * (lo + hi)) if elo != 0 else [1.0] * len(sets)
        total, cumulative = 0.0, []
        for wi in w:
            total += wi
            cumulative.append(total)
        return cls(sets, cumulative)

    @property
    def mean(self) -> float:
        previous, total = 0.0, 0.0
        for s, c in zip(self.sets, self.cumulative, strict=True):
            total += (c - previous) * sum(s) / len(s)
            previous = c
        return total / self.cumulative[-1]

    def draw(self, rng: random.Random) -> Iterator[list[float]]:
        """Sets drawn independently, with replacement, for ever."""
        while True:
            yield rng.choices(self.sets, cum_weights=self.cumulative)[0]


def run_sdk(sets: Iterator[list[float]], sprt: Sprt, set_size: int, max_games: int = DEFAULT_MAX_GAMES
            ) -> tuple[str, int]:
    """One ``atout-bot test`` on drawn sets: its verdict and the sets it took."""
    result, count = "inconclusive", 0
    capped = (s for _, s in zip(range(max_games // set_size), sets, strict=False))
    for _, analysis in sequential(capped, sprt, lambda s: s):
        result, count = analysis.result or "inconclusive", analysis.sets
    return result, count


def run_arena(sets: Iterator[list[float]], sprt: Sprt, set_size: int, max_games: int) -> tuple[str, int]:
    """One arena test on drawn sets, as its ticks count them: the sets counted so far kept as
    JSON in the test's row (``Tally.to_dict``, read back with ``from_dict``), one more set added
    at each tick, the analysis after each."""
    from atout_arena.services import sprt as arena

    kept = json.dumps(arena.Tally().to_dict())
    count = 0
    while True:
        tally = arena.Tally.from_dict(json.loads(kept))
        tally.add(next(sets))
        count += 1
        kept = json.dumps(tally.to_dict())
        analysis = tally.analysis(sprt)
        if analysis.result in ("H0", "H1"):
            return analysis.result, count
        if analysis.games >= max_games or (count + 1) * set_size > max_games:
            return "inconclusive", count


def arena_defaults() -> tuple[int, float, float]:
    """``create_test``'s defaults: max_games, alpha, beta."""
    from atout_arena.services.sprt import create_test

    params = inspect.signature(create_test).parameters
    return params["max_games"].default, params["alpha"].default, params["beta"].default


@dataclass(frozen=True)
class Row:
    game: str
    players: int
    mode: str
    truth: str  # "H0" or "H1": which hypothesis holds
    elo: float
    runs: int
    verdicts: Counter[str]
    sets: int  # over every run
    nominal: float  # alpha for H0 runs, beta for H1 runs
    lengths: tuple[tuple[int, bool], ...] = ()  # each run's sets and whether it erred

    @property
    def errors(self) -> int:
        return self.verdicts["H1" if self.truth == "H0" else "H0"]

    @property
    def rate(self) -> float:
        return self.errors / self.runs

    @property
    def within(self) -> bool:
        return self.rate <= self.nominal + TOLERANCE


def measure(game: str, pool: Sequence[Sequence[float]], elo0: float, elo1: float, mode: str, runs: int,
            seed: int = 1, players: int | None = None) -> list[Row]:
    """H0 and H1 runs of one game and mode; ``pool`` from :func:`game_pool`."""
    n = new_game(game, **({} if players is None else {"players": players})).players
    if mode == "sdk":
        sprt = Sprt(elo0, elo1)
        size = TestConfig(game, "random", "random", players=n).set_size
        max_games = DEFAULT_MAX_GAMES
    else:
        from atout_arena.services.sprt import set_size_of

        max_games, alpha, beta = arena_defaults()
        sprt = Sprt(elo0, elo1, alpha, beta)
        size = set_size_of(n)
    run = run_sdk if mode == "sdk" else run_arena
    rows = []
    for truth, elo, nominal in (("H0", elo0, sprt.alpha), ("H1", elo1, sprt.beta)):
        distribution = SetDistribution.at_elo(pool, elo)
        rng = random.Random(f"{seed}/{game}/{mode}/{truth}")
        verdicts: Counter[str] = Counter()
        lengths = []
        for _ in range(runs):
            result, count = run(distribution.draw(rng), sprt, size, max_games)
            verdicts[result] += 1
            lengths.append((count, result == ("H1" if truth == "H0" else "H0")))
        total = sum(count for count, _ in lengths)
        rows.append(Row(game, n, mode, truth, elo, runs, verdicts, total, nominal, tuple(lengths)))
    return rows


def table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| game | players | mode | true Elo | runs | H0 accepted | H1 accepted | inconclusive "
        "| error rate (95% interval) | nominal | mean sets |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        low, high = wilson(r.errors, r.runs)
        kind = "false positives" if r.truth == "H0" else "false negatives"
        lines.append(
            f"| {r.game} | {r.players} | {r.mode} | {r.elo:g} | {r.runs} | {r.verdicts['H0']} | "
            f"{r.verdicts['H1']} | {r.verdicts['inconclusive']} | {kind} {r.rate:.1%} "
            f"({low:.1%}–{high:.1%}) | {r.nominal:.0%} | {r.sets / r.runs:.1f} |"
        )
    return "\n".join(lines)


def by_length(rows: Sequence[Row], edges: Sequence[int] = (20, 50, 100, 200)) -> str:
    """The error rate of the runs by the number of sets they took to decide."""
    bins = [f"<{edges[0]}"] + [f"{a}-{b - 1}" for a, b in itertools.pairwise(edges)] + [f">={edges[-1]}"]
    lines = ["| game | mode | true Elo | " + " | ".join(f"{b} sets" for b in bins) + " |",
             "|---|---|---:|" + "---|" * len(bins)]
    for r in rows:
        cells = []
        for i in range(len(bins)):
            low = edges[i - 1] if i > 0 else 0
            high = edges[i] if i < len(edges) else math.inf
            runs = [erred for count, erred in r.lengths if low <= count < high]
            cells.append(f"{sum(runs)} of {len(runs)}" + (f" ({sum(runs) / len(runs):.1%})" if runs else ""))
        lines.append(f"| {r.game} | {r.mode} | {r.elo:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _elos(text: str) -> tuple[float, float]:
    try:
        elo0, elo1 = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ELO0,ELO1, not {text!r}") from None
    return elo0, elo1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="SPRT runs per game, mode and hypothesis")
    parser.add_argument("--pool", type=int, default=2000, help="real duplicate sets played per game")
    parser.add_argument("--sprt", type=_elos, default=(0.0, 50.0), metavar="ELO0,ELO1")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--jobs", type=int, default=1, help="processes playing the pool")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--by-sets", action="store_true", help="also the error rates by the sets a run took")
    parser.add_argument("--pools", type=Path, metavar="FILE",
                        help="a JSON file of pools: read the game's (same --pool, --seed), else add it")
    args = parser.parse_args(argv)
    elo0, elo1 = args.sprt
    saved = json.loads(args.pools.read_text()) if args.pools and args.pools.exists() else {}
    rows: list[Row] = []
    for game in args.games.split(","):
        name = f"{game}/{args.pool}/{args.seed}"
        if name not in saved:
            saved[name] = game_pool(game, args.pool, seed=args.seed, jobs=args.jobs)
            if args.pools:
                args.pools.write_text(json.dumps(saved))
        pool = saved[name]
        for mode in args.modes.split(","):
            rows += measure(game, pool, elo0, elo1, mode, args.runs, seed=args.seed)
            print(table(rows[-2:]).splitlines()[-2], file=sys.stderr)
            print(table(rows[-2:]).splitlines()[-1], file=sys.stderr)
    print(f"SPRT [{elo0:g}, {elo1:g}], pool {args.pool} sets per game, seed {args.seed}")
    print(table(rows))
    if args.by_sets:
        print()
        print(by_length(rows))
    over = [r for r in rows if not r.within]
    for r in over:
        print(f"{r.game} {r.mode} {r.truth}: error rate {r.rate:.1%} above {r.nominal:.0%} + 1 point")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
