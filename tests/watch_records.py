"""Real recorded games of the four games for the watch tests: heuristic bots played by
atout.local.play, written as atout-game/1 records (one line per game)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atout.bots import heuristic_bot_class
from atout.local import play
from atout.record import GameRecord, RecordWriter, SeatRecord, StepRecord

PLAYERS = {"tiercon": 2, "regicide": 2, "merde": 3, "fool": 3}  # short games: a test stays quick
SEEDS = {"regicide": 2}  # 234 moves (seed 7: 276)
NOTE = "my best card"


def recorded_game(game: str, seed: int | None = None, options: dict[str, Any] | None = None) -> GameRecord:
    """One game of heuristic bots, seat 0's first decision and every 5th after it with a note."""
    players = PLAYERS[game]
    seed = SEEDS.get(game, 7) if seed is None else seed
    options = dict(options or {})
    result = play(game, [heuristic_bot_class(game)() for _ in range(players)], seed=seed, **options)
    steps: list[StepRecord] = []
    for seat, action in result.history:
        mine = len([step for step in steps if step.seat == seat])  # the seat's earlier decisions
        steps.append(StepRecord(seat=seat, action=action, think_ms=1.0,
                                note=NOTE if seat == 0 and mine % 5 == 0 else None))
    return GameRecord(
        game=game, players=players, options=options, seed=seed,
        seats=[SeatRecord(seat=s, bot="heuristic", version=f"v{s}") for s in range(players)],
        steps=steps, scores=result.scores, ranking=result.ranking,
        source={"kind": "local", "command": "tests/watch_records.py"},
    )


def write_records(path: Path, records: list[GameRecord]) -> Path:
    with RecordWriter(path) as out:
        for record in records:
            out.write(record)
    return path
