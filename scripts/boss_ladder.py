"""The ladder of bosses, measured: each step an SPRT of the stronger boss against the one below,
and each boss's Elo against ``random``, per game (issue 36; docs/bots.md shows the figures).

    .venv/bin/python scripts/boss_ladder.py --game tiercon:2 --game fool:2
    .venv/bin/python scripts/boss_ladder.py --game merde:4 --option merde:deals=3 --max-games 400

Every figure comes from ``atout-bot test`` (its ``--json``), run as a separate process with the
command printed beside the result, so each line can be measured again by hand. The bosses are
the arena's house kinds (``atout_arena.services.practice.HOUSE_KINDS``: the same SDK specs the
arena seats). A step is held when its SPRT (elo0 0, elo1 50, alpha = beta = 0.05) accepts H1;
``H0`` or ``inconclusive`` (``--max-games`` reached) are printed as they are.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import time
from pathlib import Path

from atout_arena.services.practice import HOUSE_KINDS

ROOT = Path(__file__).resolve().parent.parent
BOT = str(ROOT / ".venv" / "bin" / "atout-bot")

# (stronger, weaker): the ladder's steps, then where ISMCTS lands
STEPS = [("heuristic", "random"), ("pimc-small", "heuristic"), ("pimc-large", "pimc-small"),
         ("ismcts", "heuristic"), ("ismcts", "pimc-small")]


def spec(kind: str) -> str:
    return "random" if kind == "random" else HOUSE_KINDS[kind].spec


def run(a: str, b: str, game: str, players: int, options: list[str], max_games: int,
        sprt: bool = True, jobs: int = 1) -> tuple[str, dict]:
    command = [BOT, "test", spec(a), spec(b), "--game", game, "--players", str(players),
               "--games", str(max_games), "--json"]
    if jobs > 1:
        command += ["--jobs", str(jobs)]
    if sprt:
        command += ["--sprt", "0,50"]
    for option in options:
        command += ["--option", option]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed: {done.stderr.strip().splitlines()[-1:]}")
    result = json.loads(done.stdout)
    result["wall_s"] = round(time.monotonic() - started, 1)
    shown = shlex.join(["atout-bot", *command[1:]])
    return shown, result


def all_won_bound(sets: int) -> float:
    """Elo's one-sided 95% lower bound when each of ``sets`` duplicate sets was won outright: the
    least per-set win rate ``p`` with ``p ** sets >= 0.05`` (Clopper-Pearson for n of n), as Elo.
    The SPRT's interval says nothing there (its variance is 0): this is the bound docs/bots.md
    gives for "every game won"."""
    p = 0.05 ** (1 / sets)
    return -400 * math.log10(1 / p - 1)


def line(kind: str, result: dict) -> str:
    def elo(value: float | None, infinite: str) -> str:  # None: every game won (or lost)
        return infinite if value is None else f"{value:.0f}"

    if result["score"] == 1.0:
        return (f"{kind}: {result.get('result') or '-'} after {result['games']} games, every game "
                f"won: Elo >= {all_won_bound(result['sets']):.0f} (95% one-sided, "
                f"{result['sets']} sets), {result['wall_s']} s")
    low, high = result["elo_ci95"]
    sign = "-" if result["score"] < 0.5 else "+"
    return (f"{kind}: {result.get('result') or '-'} after {result['games']} games, score "
            f"{result['score']:.3f}, Elo {elo(result['elo'], sign + '∞')} [{elo(low, '-∞')}, "
            f"{elo(high, '+∞')}], {result['wall_s']} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", required=True,
                        help="GAME:PLAYERS, e.g. tiercon:2 (repeat for more)")
    parser.add_argument("--option", action="append", default=[],
                        help="GAME:K=V, a game option for that game's matches (repeat)")
    parser.add_argument("--max-games", type=int, default=600, help="games at most per SPRT (default 600)")
    parser.add_argument("--steps", default="all", help="'all', 'none', or indices into the steps, e.g. 0,1")
    parser.add_argument("--no-elo", action="store_true", help="skip each boss against random")
    parser.add_argument("--elo", default="heuristic,pimc-small,pimc-large,ismcts",
                        help="the bosses measured against random (comma-separated)")
    parser.add_argument("--elo-games", type=int, default=0,
                        help="each boss against random over this many games, no SPRT (default: "
                             "the SPRT, which needs 46 games to accept when every game is won)")
    parser.add_argument("--jobs", type=int, default=1, help="processes per SPRT (atout-bot test --jobs)")
    args = parser.parse_args(argv)
    steps = (STEPS if args.steps == "all"
             else [] if args.steps == "none" else [STEPS[int(i)] for i in args.steps.split(",")])
    for entry in args.game:
        game, _, players_text = entry.partition(":")
        players = int(players_text or 2)
        options = [o.split(":", 1)[1] for o in args.option if o.split(":", 1)[0] == game]
        print(f"## {game}, {players} players{' (' + ', '.join(options) + ')' if options else ''}", flush=True)
        for stronger, weaker in steps:
            command, result = run(stronger, weaker, game, players, options, args.max_games,
                                  jobs=args.jobs)
            print(f"- {line(f'{stronger} > {weaker}', result)}\n  `{command}`", flush=True)
        if not args.no_elo:
            for kind in args.elo.split(","):
                command, result = run(kind, "random", game, players, options,
                                      args.elo_games or args.max_games, sprt=not args.elo_games,
                                      jobs=args.jobs)
                print(f"- {line(f'{kind} vs random', result)}\n  `{command}`", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
