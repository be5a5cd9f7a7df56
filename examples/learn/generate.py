"""Step 1: play games of a strong bot (by default the arena's `pimc-small` boss) and save, for
every decision of its seats that had a choice, the seat's information-state tensor
(`atout.encoding`), the legal actions' mask and the index of the action it chose.

    .venv/bin/python examples/learn/generate.py --games 200 --jobs 2 --out examples/learn/games.npz

The .npz holds `x` (decisions x tensor size, float32), `mask` (decisions x actions, uint8),
`action` (decisions, int), `game` (decisions: the game's number, to hold out whole games) and
the encoding's description (`game_id`, `players`, `options`, `actions`, `sections`), `boss` and
`opponent`.
Decisions with one legal action are left out: they teach nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from atout import Bot
from atout.bot import MatchInfo, MatchResult, Observation, split_note
from atout.bots import bot_factory
from atout.encoding import encoding_for
from atout.loading import BotLoadError
from atout.local import play

HERE = Path(__file__).resolve().parent


class Recorder(Bot):
    """Plays as ``inner`` does and keeps (tensor, mask, action index) of each decision with a choice."""

    def __init__(self, inner: Bot, encoding: Any) -> None:
        super().__init__()
        self.inner = inner
        self.encoding = encoding
        self.rows: list[tuple[list[float], list[int], int]] = []

    def on_match_start(self, match: MatchInfo) -> None:
        self.inner.match, self.inner.rng = match, self.rng
        self.inner.on_match_start(match)

    def act(self, observation: Observation) -> Any:
        answer = self.inner.act(observation)
        legal = observation.legal_actions
        if len(legal) > 1:
            action, _ = split_note(answer)
            enc = self.encoding
            self.rows.append((enc.tensor(observation.raw), enc.mask(legal), enc.index(str(action))))
        return answer

    def on_match_end(self, result: MatchResult) -> None:
        self.inner.on_match_end(result)


def play_one(job: tuple[int, str, str, str, int, dict[str, Any]]) -> tuple[int, list[Any], int]:
    """One game: (its number, the recorded rows, the decisions played by every seat)."""
    number, boss, opponent, game_id, players, options = job
    encoding = encoding_for(game_id, players, **options)
    recorders = []
    bots: list[Bot] = []
    # the boss's seat turns with the game's number; against itself, every seat is recorded
    for seat in range(players):
        if opponent == "self" or seat == number % players:
            recorder = Recorder(bot_factory(boss)(), encoding)
            recorders.append(recorder)
            bots.append(recorder)
        else:
            bots.append(bot_factory(opponent)())
    result = play(game_id, bots, seed=number, **options)
    return number, [row for r in recorders for row in r.rows], len(result.history)


def parse_options(items: list[str]) -> dict[str, Any]:
    """``K=V`` game options, the values read as JSON when they can be (``deals=2`` -> 2)."""
    options: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise SystemExit(f"generate.py: --option {item!r} is not K=V")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Play games of a strong bot and save its decisions (tensor, legal mask, action) as .npz."
    )
    p.add_argument("--game", default="tiercon", help="the game (default: tiercon)")
    p.add_argument("--players", type=int, default=2, help="seats at the table (default: 2)")
    p.add_argument("--option", action="append", default=[], metavar="K=V",
                   help="a game option, as in atout.games.new_game (repeat for more)")
    p.add_argument("--boss", default="pimc:worlds=16",
                   help="the bot whose decisions are recorded, a built-in spec (default: pimc:worlds=16, "
                        "the arena's pimc-small)")  # fmt: skip
    p.add_argument("--opponent", default="self",
                   help="the other seats: 'self' (the boss, every seat recorded) or a built-in spec "
                        "such as heuristic (default: self)")  # fmt: skip
    p.add_argument("--games", type=int, default=100, help="games to play (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="game i is dealt with seed SEED+i (default: 0)")
    p.add_argument("--jobs", type=int, default=1, help="processes playing games (default: 1)")
    p.add_argument("--out", type=Path, default=HERE / "games.npz",
                   help="the .npz to write (default: games.npz beside this script)")  # fmt: skip
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    options = parse_options(args.option)
    if args.games < 1 or args.jobs < 1:
        raise SystemExit("generate.py: --games and --jobs must be at least 1")
    try:
        for spec in {args.boss, args.opponent} - {"self"}:
            bot_factory(spec)
        encoding = encoding_for(args.game, args.players, **options)
    except (BotLoadError, ValueError) as exc:
        raise SystemExit(f"generate.py: {exc}") from None
    jobs = [(args.seed + i, args.boss, args.opponent, args.game, args.players, options)
            for i in range(args.games)]  # fmt: skip
    started = time.perf_counter()
    rows: list[tuple[int, list[float], list[int], int]] = []
    played = 0
    with ProcessPoolExecutor(args.jobs) if args.jobs > 1 else _Inline() as pool:
        for done, (number, game_rows, decisions) in enumerate(pool.map(play_one, jobs), 1):
            rows.extend((number, *row) for row in game_rows)
            played += decisions
            if done % max(1, args.games // 10) == 0 or done == args.games:
                elapsed = time.perf_counter() - started
                print(f"{done}/{args.games} games, {len(rows)} decisions recorded, "
                      f"{len(rows) / elapsed:.1f}/s", file=sys.stderr)  # fmt: skip
    if not rows:
        raise SystemExit("generate.py: no decision with a choice was recorded")
    elapsed = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        x=np.asarray([r[1] for r in rows], dtype=np.float32),
        mask=np.asarray([r[2] for r in rows], dtype=np.uint8),
        action=np.asarray([r[3] for r in rows], dtype=np.int64),
        game=np.asarray([r[0] for r in rows], dtype=np.int64),
        game_id=args.game,
        players=args.players,
        options=json.dumps(options),
        actions=np.asarray(encoding.actions),
        sections=json.dumps(encoding.sections),
        boss=args.boss,
        opponent=args.opponent,
    )
    print(f"wrote {args.out}: {len(rows)} decisions of {args.games} games ({played} decisions in all) "
          f"in {elapsed:.1f} s")  # fmt: skip
    return 0


class _Inline:
    """``pool.map`` in this process (``--jobs 1``)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Any, items: list[Any]) -> Any:
        return map(fn, items)


if __name__ == "__main__":
    sys.exit(main())
