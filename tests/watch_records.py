"""Real recorded games of the four games for the watch tests: heuristic bots played by
atout.local.play(record=True), seat 0's bot leaving notes (``return action, note``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atout.bot import Bot, Observation
from atout.bots import heuristic_bot_class
from atout.local import play
from atout.record import GameRecord, RecordWriter

PLAYERS = {"tiercon": 2, "regicide": 2, "merde": 3, "fool": 3}  # short games: a test stays quick
SEEDS = {"regicide": 2}  # 234 moves (seed 7: 276)
NOTE = "my best card"


def noting(game: str) -> Bot:
    """The game's heuristic bot, with a note on its first decision and every 5th after it."""
    base = heuristic_bot_class(game)

    class Noting(base):  # type: ignore[valid-type,misc]
        decisions = 0

        def act(self, observation: Observation) -> Any:
            action = super().act(observation)
            self.decisions += 1
            return (action, NOTE) if self.decisions % 5 == 1 else action

    return Noting()


def recorded_game(game: str, seed: int | None = None, options: dict[str, Any] | None = None) -> GameRecord:
    """One game of heuristic bots, recorded; seat 0 leaves notes; seat s's version is "vS"."""
    players = PLAYERS[game]
    seed = SEEDS.get(game, 7) if seed is None else seed
    bots = [noting(game)] + [heuristic_bot_class(game)() for _ in range(players - 1)]
    record = play(game, bots, seed=seed, record=True, specs=["heuristic"] * players, **(options or {})).record
    assert record is not None
    for seat in record.seats:
        seat.version = f"v{seat.seat}"
    return record


def write_records(path: Path, records: list[GameRecord]) -> Path:
    with RecordWriter(path) as out:
        for record in records:
            out.write(record)
    return path
