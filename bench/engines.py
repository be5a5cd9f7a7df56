"""Speed of the rules engines: random playouts, beside OpenSpiel's ``oh_hell``.

    python bench/engines.py [--seconds S] [--rounds R] [--games merde,fool]

Every game is played out at random with its default options: seeded games, one seeded random
generator picking ``rng.choice(state.legal_actions())`` until the game ends. Each game is
measured twice: plain, and calling ``state.observation(seat)`` for the acting seat before every
decision (what the arena does to build a bot's request). OpenSpiel's ``oh_hell`` (4 players,
12 tricks) runs through the same kind of loop: chance nodes resolved by Python's ``random``
over ``chance_outcomes()``, decisions counted at player nodes only, plain and with
``information_state_tensor(player)`` at every decision.

The machine may be shared and noisy, so time is this process's CPU time (``process_time``,
which other processes inflate less than wall time) and the measurements are interleaved:
``--rounds`` short slices of every measurement in turn (the order reversed every other round),
and the median slice is reported. The ratios compare merde (4 players) with ``oh_hell`` measured in the same
run.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable

from atout.games import GAMES

try:
    import pyspiel  # type: ignore[import-not-found]
except ImportError:  # the "bench" extra is not installed
    pyspiel = None

# A run: play games for about `seconds`, return (decisions, games, elapsed seconds).
Run = Callable[[float], tuple[int, int, float]]

TARGET_PLAIN = 2.0  # merde plain decisions/s over OpenSpiel's plain
TARGET_OBSERVATION = 8.0  # merde with observation() over OpenSpiel with the tensor


def atout_run(game_id: str, with_observation: bool) -> Run:
    game = GAMES[game_id]()
    seeds = iter(range(10**9))
    rng = random.Random(1)

    def run(seconds: float) -> tuple[int, int, float]:
        decisions = games = 0
        start = time.process_time()
        end = start + seconds
        while True:
            state = game.new_state(seed=next(seeds))
            if with_observation:
                while not state.is_terminal:
                    state.observation(state.current_player)  # type: ignore[arg-type]
                    state.apply(rng.choice(state.legal_actions()))
            else:
                while not state.is_terminal:
                    state.apply(rng.choice(state.legal_actions()))
            decisions += len(state.history)
            games += 1
            now = time.process_time()
            if now >= end:
                return decisions, games, now - start

    return run


def openspiel_run(with_tensor: bool) -> Run:
    game = pyspiel.load_game("oh_hell", {"players": 4, "num_tricks_fixed": 12})
    rng = random.Random(1)

    def run(seconds: float) -> tuple[int, int, float]:
        decisions = games = 0
        start = time.process_time()
        end = start + seconds
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                    continue
                if with_tensor:
                    state.information_state_tensor(state.current_player())
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
            games += 1
            now = time.process_time()
            if now >= end:
                return decisions, games, now - start

    return run


def measurements(game_ids: list[str]) -> tuple[dict[str, Run], dict[str, str]]:
    """The runs to time, by label, and the games that could not be played, with why."""
    runs: dict[str, Run] = {}
    broken: dict[str, str] = {}
    for game_id in game_ids:
        try:  # a game still being written must not stop the benchmark of the others
            atout_run(game_id, True)(0.0)
        except Exception as exc:
            broken[game_id] = f"{type(exc).__name__}: {exc}"
            continue
        runs[f"{game_id} plain"] = atout_run(game_id, False)
        runs[f"{game_id} observation"] = atout_run(game_id, True)
    if pyspiel is not None:
        runs["oh_hell plain"] = openspiel_run(False)
        runs["oh_hell tensor"] = openspiel_run(True)
    return runs, broken


def measure(runs: dict[str, Run], seconds: float, rounds: int) -> dict[str, dict[str, float]]:
    """Median decisions/s and games/s of each run over interleaved rounds."""
    slices: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
    labels = list(runs)
    for r in range(rounds):
        for label in labels if r % 2 == 0 else reversed(labels):
            decisions, games, elapsed = runs[label](seconds / rounds)
            slices[label].append((decisions / elapsed, games / elapsed))
    return {
        label: {
            "decisions_per_s": statistics.median(d for d, _ in found),
            "games_per_s": statistics.median(g for _, g in found),
        }
        for label, found in slices.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="time per measurement (default 4)")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved slices per measurement")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated game ids")
    args = parser.parse_args(argv)
    game_ids = [g for g in args.games.split(",") if g]
    unknown = [g for g in game_ids if g not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; games are: {', '.join(GAMES)}")

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {load:.2f}; {args.rounds} interleaved rounds, {args.seconds:g} s of CPU time per measurement"
    )
    runs, broken = measurements(game_ids)
    if pyspiel is None:
        print("pyspiel (open-spiel) is not installed: our figures only (pip install open-spiel)")
    results = measure(runs, args.seconds, args.rounds)

    print(
        f"\n{'game':<12} {'players':>7} {'path':<12} {'games/s':>10} {'decisions/s':>12} {'us/decision':>12}"
    )
    for label, found in results.items():
        game_id, path = label.split(" ")
        players = GAMES[game_id].default_players if game_id in GAMES else 4
        per_s = found["decisions_per_s"]
        print(
            f"{game_id:<12} {players:>7} {path:<12} {found['games_per_s']:>10.1f} {per_s:>12,.0f} "
            f"{1e6 / per_s:>12.2f}"
        )
    for game_id, why in broken.items():
        print(f"{game_id:<12} not measured: {why}")

    if pyspiel is not None and "merde plain" in results:
        ratios: list[tuple[str, str, str, float]] = [
            ("plain", "merde plain", "oh_hell plain", TARGET_PLAIN),
            ("observation vs tensor", "merde observation", "oh_hell tensor", TARGET_OBSERVATION),
        ]
        print("\nmerde (4 players) decisions/s as a multiple of OpenSpiel oh_hell's:")
        for name, ours, theirs, target in ratios:
            ratio = results[ours]["decisions_per_s"] / results[theirs]["decisions_per_s"]
            verdict = "meets" if ratio >= target else "BELOW"
            print(f"  {name:<22} {ratio:5.2f}x  ({verdict} the {target:g}x target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
