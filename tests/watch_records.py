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


DASHBOARD = Path(__file__).parents[1] / "server/atout_arena/dashboard"


def table_css() -> str:
    """What sdk/atout/web/table.css must hold: the dashboard's rules of the cards and the felt
    (style.css) and of the trick (play.css), with the colours they use."""
    style = (DASHBOARD / "style.css").read_text(encoding="utf-8")
    play = (DASHBOARD / "play.css").read_text(encoding="utf-8")
    cards = style[style.index("/* -- cards"):style.index("/* -- match side panel")]
    trick = play[play.index("/* -- the trick"):play.index("/* -- a match in play")]
    root = style[style.index(":root {"):style.index("}", style.index(":root {")) + 2]
    return TABLE_CSS_HEAD + root + "\n" + cards + trick


TABLE_CSS_HEAD = """/* The card table (table.js, cards.js) for atout-bot watch --web: the dashboard's rules,
   copied from server/atout_arena/dashboard/style.css and play.css (tests/sdk/test_watch.py keeps
   them equal; regenerate with: .venv/bin/python tests/watch_records.py). */

"""


if __name__ == "__main__":  # sdk/atout/web/table.css made again from the dashboard's CSS
    from atout.web import WEB_DIR

    (WEB_DIR / "table.css").write_text(table_css(), encoding="utf-8")
