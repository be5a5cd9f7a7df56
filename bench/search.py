"""Speed of what search bots do: clones, sampled worlds, playouts, and a pimc decision.

    python bench/search.py [--seconds S] [--rounds R] [--games merde:4,fool:3] [--all-seats]
                           [--decisions N]

For each game and seat count (by default merde 4, tiercon 2, regicide 3 and fool 3 players;
``--all-seats``: every seat count), with the game's default options:

- ``engine``, the baseline: decisions/s of seeded random playouts from new states (as
  bench/engines.py's plain run: ``rng.choice(state.legal_actions())`` to the game's end);
- ``deepcopy`` and ``clone``: copies/s of mid-game states (random openings of random
  lengths), ``copy.deepcopy`` (what ``State.clone()`` was) against ``state.clone()``;
- ``worlds``: ``game.sample_state(observation, rng)``/s of the acting seat's observations of
  those states, each observation sampled again and again as a pimc decision does (a sampler
  may keep what it works out once per observation); "n/a" for a game without a sampler;
- ``playouts``: playouts/s from sampled worlds, as pimc plays them: a clone of the world, one
  legal action, random moves to the end of the deal (``atout.search.random_rollout``) and the
  seats' values (``playout_values``).

The machine may be shared and noisy, so these rates are this process's CPU time
(``process_time``), in ``--rounds`` interleaved slices (the order reversed every other round),
the median slice reported. Then, when ``atout.search.PimcBot`` exists, the wall time of
``--decisions`` decisions of a default ``PimcBot()`` per game (mid-game positions with two
legal actions or more): median and p99 (of 30 decisions, the slowest), their CPU time beside
(the wall time grows with the machine's load), and the worlds it finished (its default is 24;
it stops early at its time limit). Target (issue 36): median at most 200 ms, p99 under 500 ms.

The last line is ``ratios:``, per game: clone over deepcopy, and worlds/s and playouts/s over
the engine's decisions/s, all measured in the same run.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable

from atout.games import GAMES, Game, State

try:
    from atout.search import playout_values, random_rollout
except ImportError:  # an SDK without search bots: the same playout, here
    playout_values = None  # type: ignore[assignment]
    random_rollout = None  # type: ignore[assignment]

try:
    from atout import Observation
    from atout.search import PimcBot
except ImportError:
    PimcBot = None  # type: ignore[assignment,misc]

DEFAULT_CASES = "merde:4,tiercon:2,regicide:3,fool:3"
TARGET_MEDIAN_MS = 200.0
TARGET_P99_MS = 500.0

# A run: work for about `seconds` of CPU time, return (things done, elapsed seconds).
Run = Callable[[float], tuple[int, float]]


def timed(step: Callable[[], int]) -> Run:
    """A run that calls ``step`` (which returns how many things it did) until time is up."""

    def run(seconds: float) -> tuple[int, float]:
        done = 0
        start = time.process_time()
        end = start + seconds
        while True:
            done += step()
            now = time.process_time()
            if now >= end:
                return done, now - start

    return run


def mid_game_states(game: Game[State], count: int, seed: int) -> list[State]:
    """``count`` states of seeded games after random openings of random lengths, each with a
    decision of two legal actions or more to take."""
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < count:
        state = game.new_state(seed=rng.randrange(10**9))
        for _ in range(rng.randrange(4, 120)):
            if state.is_terminal:
                break
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal and len(state.legal_actions()) > 1:
            found.append(state)
    return found


def play_out(state: State, rng: random.Random) -> None:
    """To the end of the deal (pimc's playout)."""
    if random_rollout is not None:
        random_rollout(state, rng)
        return
    deal = state._deals_started
    while not state.is_terminal and state._deals_started == deal:
        state.apply(rng.choice(state.legal_actions()))


def runs_for(game: Game[State], label: str) -> tuple[dict[str, Run], str | None]:
    """The runs to time for one game (by ``label:what``), and why its sampler is not measured
    (None when it is)."""
    rng = random.Random(1)
    seeds = iter(range(10**9))

    def engine() -> int:
        state = game.new_state(seed=next(seeds))
        while not state.is_terminal:
            state.apply(rng.choice(state.legal_actions()))
        return len(state.history)

    originals = mid_game_states(game, 40, seed=2)
    untouched = mid_game_states(game, 40, seed=2)  # never cloned: deepcopy's fair copies

    def clones() -> int:
        for state in originals:
            state.clone()
        return len(originals)

    def deepcopies() -> int:
        for state in untouched:
            copy.deepcopy(state, {id(game): game})
        return len(untouched)

    runs: dict[str, Run] = {
        f"{label}:engine": timed(engine),
        f"{label}:deepcopy": timed(deepcopies),
        f"{label}:clone": timed(clones),
    }
    observations = [s.observation(s.current_player) for s in originals[:20]]  # type: ignore[arg-type]
    try:
        worlds = [game.sample_state(obs, rng) for obs in observations]
    except NotImplementedError as exc:
        return runs, str(exc) or "no sampler"
    except Exception as exc:  # a sampler still being written must not stop the others' figures
        return runs, f"{type(exc).__name__}: {exc}"

    def sample() -> int:
        for obs in observations:
            game.sample_state(obs, rng)
        return len(observations)

    def playouts() -> int:
        for world in worlds:
            state = world.clone()
            state.apply(rng.choice(state.legal_actions()))
            play_out(state, rng)
            if playout_values is not None:
                playout_values(state)
        return len(worlds)

    runs[f"{label}:worlds"] = timed(sample)
    runs[f"{label}:playouts"] = timed(playouts)
    return runs, None


def measure(runs: dict[str, Run], seconds: float, rounds: int) -> dict[str, float]:
    """Median rate (things/s of CPU time) of each run over interleaved rounds."""
    slices: dict[str, list[float]] = {label: [] for label in runs}
    labels = list(runs)
    for r in range(rounds):
        for label in labels if r % 2 == 0 else reversed(labels):
            done, elapsed = runs[label](seconds / rounds)
            slices[label].append(done / elapsed)
    return {label: statistics.median(found) for label, found in slices.items()}


def pimc_times(game: Game[State], decisions: int) -> tuple[list[float], list[float], list[int]]:
    """Wall-clock and CPU milliseconds of ``decisions`` decisions of a default PimcBot, and the
    worlds each finished."""
    bot = PimcBot()
    bot.rng.seed(3)
    times: list[float] = []
    cpu: list[float] = []
    worlds: list[int] = []
    for state in mid_game_states(game, decisions, seed=4):
        seat = state.current_player
        observation = Observation(state.observation(seat), state.legal_actions())  # type: ignore[arg-type]
        start, start_cpu = time.perf_counter(), time.process_time()
        bot.act(observation)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        worlds.append(bot.stats["last"])
    return times, cpu, worlds


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=1.5, help="CPU time per measurement (default 1.5)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved slices per measurement")
    parser.add_argument("--games", default=DEFAULT_CASES, help=f"game:players,... (default {DEFAULT_CASES})")
    parser.add_argument("--all-seats", action="store_true", help="every seat count of those games")
    parser.add_argument("--decisions", type=int, default=30, help="pimc decisions timed per game (0: none)")
    args = parser.parse_args(argv)
    cases: list[tuple[str, int]] = []
    for item in args.games.split(","):
        game_id, _, players = item.partition(":")
        if game_id not in GAMES:
            parser.error(f"unknown game {game_id!r}; games are: {', '.join(GAMES)}")
        counts = GAMES[game_id].player_counts()
        chosen = [int(players)] if players else [GAMES[game_id].default_players]
        if args.all_seats:
            chosen = list(counts)
        for n in chosen:
            if n not in counts:
                parser.error(f"{game_id} is played by {', '.join(map(str, counts))} players, not {n}")
            if (game_id, n) not in cases:
                cases.append((game_id, n))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {load:.2f}; {args.rounds} interleaved rounds, {args.seconds:g} s of CPU time per measurement"
    )
    games = {f"{g}{n}": GAMES[g](players=n) for g, n in cases}
    runs: dict[str, Run] = {}
    missing: dict[str, str] = {}
    for label, game in games.items():
        found, why = runs_for(game, label)
        runs.update(found)
        if why is not None:
            missing[label] = why
    rates = measure(runs, args.seconds, args.rounds)

    def rate(label: str, what: str) -> str:
        value = rates.get(f"{label}:{what}")
        return "n/a" if value is None else f"{value:,.0f}"

    print(
        f"\n{'game':<10} {'engine dec/s':>13} {'deepcopy/s':>11} {'clones/s':>10} {'clone us':>9} "
        f"{'worlds/s':>9} {'playouts/s':>11}"
    )
    ratios: list[str] = []
    for label in games:
        clone_rate = rates[f"{label}:clone"]
        print(
            f"{label:<10} {rate(label, 'engine'):>13} {rate(label, 'deepcopy'):>11} "
            f"{rate(label, 'clone'):>10} {1e6 / clone_rate:>9.1f} {rate(label, 'worlds'):>9} "
            f"{rate(label, 'playouts'):>11}"
        )
        engine = rates[f"{label}:engine"]
        ratios.append(f"{label}_clone_over_deepcopy={clone_rate / rates[f'{label}:deepcopy']:.1f}")
        for what in ("worlds", "playouts"):
            value = rates.get(f"{label}:{what}")
            ratios.append(
                f"{label}_{what}_over_engine=" + ("n/a" if value is None else f"{value / engine:.4f}")
            )
    for label, why in missing.items():
        print(f"{label}: worlds and playouts n/a ({why})")

    if args.decisions and PimcBot is None:
        print("\npimc: n/a (atout.search.PimcBot is not there)")
    elif args.decisions:
        print(f"\npimc, default parameters, {args.decisions} decisions per game (wall time; CPU time):")
        for label, game in games.items():
            if label in missing:
                print(f"  {label:<10} n/a (no sampler: the heuristic bot would answer)")
                continue
            times, cpu, worlds = pimc_times(game, args.decisions)
            median, p99 = statistics.median(times), percentile(times, 0.99)
            verdict = "meets" if median <= TARGET_MEDIAN_MS and p99 < TARGET_P99_MS else "MISSES"
            print(
                f"  {label:<10} median {median:6.1f} ms  p99 {p99:6.1f} ms  "
                f"(CPU {statistics.median(cpu):.1f} / {percentile(cpu, 0.99):.1f} ms)  "
                f"worlds finished: median {statistics.median(worlds):g}, min {min(worlds)}  "
                f"({verdict} {TARGET_MEDIAN_MS:g} / {TARGET_P99_MS:g} ms)"
            )
            ratios.append(f"{label}_pimc_median_ms={median:.1f} {label}_pimc_p99_ms={p99:.1f}")
    print("ratios: " + " ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
