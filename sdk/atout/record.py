"""Recorded games: one finished game per JSON line, format ``atout-game/1`` (docs/record.md).

>>> from atout.record import read_records
>>> for record in read_records("games.jsonl"):  # doctest: +SKIP
...     for k, state, step in record.positions():
...         print(k, state.current_player, step.action)

``atout-bot test/validate --record FILE.jsonl`` write this format, and so does the arena
(``GET /v1/matches/{id}/record``, ``atout-arena match export ID``). The JSON Schema ships with
the SDK: :data:`SCHEMA_PATH`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .games import State, new_game

FORMAT = "atout-game/1"
SCHEMA_PATH = Path(__file__).with_name("record.schema.json")


class RecordError(ValueError):
    """A record that cannot be read: one line naming the file, the line and what is wrong."""


@dataclass
class SeatRecord:
    seat: int
    bot: str  # a local bot spec ("mybot:MyBot") or the arena's bot name
    version: str | None = None


@dataclass
class StepRecord:
    seat: int
    action: str
    # "bot", "fallback" (locally: the bot faulted); the arena's own words too ("timeout", ...)
    by: str = "bot"
    think_ms: float | None = None
    note: str | None = None
    fault: str | None = None


_TYPES: dict[str, tuple[type | None, ...]] = {
    "game": (str,),
    "players": (int,),
    "options": (dict,),
    "seed": (int, type(None)),
    "suit_permutation": (str, type(None)),
    "dealer": (int, type(None)),
    "decks": (list, type(None)),
    "seats": (list,),
    "steps": (list,),
    "scores": (list,),
    "ranking": (list,),
    "source": (dict,),
}
_OPTIONAL = {"suit_permutation", "dealer", "decks", "source", "seed"}


def _is(value: Any, types: tuple[type | None, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, tuple(t for t in types if t is not None))


@dataclass
class GameRecord:
    game: str
    players: int
    options: dict[str, Any]
    seed: int | None
    suit_permutation: str | None = None
    dealer: int | None = None
    decks: list[list[str]] | None = None  # when dealt from given decks
    seats: list[SeatRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    ranking: list[int] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)  # {"kind": "local", ...} or {"kind": "arena", ...}

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, ``"format"`` first."""
        data = asdict(self)
        data["options"] = {k: v for k, v in self.options.items() if k != "players"}
        for step in data["steps"]:
            if step["think_ms"] is not None:
                step["think_ms"] = round(step["think_ms"], 3)
        return {"format": FORMAT, **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        """The record ``data`` describes; :class:`RecordError` (one line) when it is not one."""
        if not isinstance(data, dict):
            raise RecordError(f"a record is a JSON object, not {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise RecordError(f"format is {data.get('format')!r}, expected {FORMAT!r}")
        for key, types in _TYPES.items():
            if key not in data:
                if key in _OPTIONAL:
                    continue
                raise RecordError(f"missing field {key!r}")
            if not _is(data[key], types):
                raise RecordError(f"field {key!r} is {type(data[key]).__name__} {data[key]!r:.60}")
        try:
            seats = [SeatRecord(**s) for s in data["seats"]]
            steps = [StepRecord(**s) for s in data["steps"]]
        except TypeError as exc:
            raise RecordError(f"bad seat or step: {exc}") from None
        for i, step in enumerate(steps):
            if not _is(step.seat, (int,)) or not isinstance(step.action, str):
                raise RecordError(f"step {i}: seat must be an integer and action a string")
        if len(seats) != data["players"]:
            raise RecordError(f"{len(seats)} seats for {data['players']} players")
        return cls(
            game=data["game"],
            players=data["players"],
            options=dict(data["options"]),
            seed=data.get("seed"),
            suit_permutation=data.get("suit_permutation"),
            dealer=data.get("dealer"),
            decks=data.get("decks"),
            seats=seats,
            steps=steps,
            scores=list(data["scores"]),
            ranking=list(data["ranking"]),
            source=dict(data.get("source") or {}),
        )

    def new_state(self) -> State:
        """The engine's state before the first step."""
        options = {k: v for k, v in self.options.items() if k != "players"}
        game = new_game(self.game, players=self.players, **options)
        return game.new_state(
            seed=self.seed, decks=self.decks, dealer=self.dealer, suit_permutation=self.suit_permutation
        )

    def positions(self) -> Iterator[tuple[int, State, StepRecord]]:
        """Each decision ``k`` (from 0), the state before it (a copy) and the step played.

        Raises :class:`RecordError` when a step is not what the engine expects (another seat's
        turn, or an action it refuses): the record does not belong to this engine.
        """
        state = self.new_state()
        for k, step in enumerate(self.steps):
            if state.current_player != step.seat:
                turn = state.current_player
                raise RecordError(f"step {k}: seat {step.seat} played, but it is seat {turn}'s turn")
            yield k, state.clone(), step
            try:
                state.apply(step.action)
            except ValueError as exc:  # IllegalAction is a ValueError
                raise RecordError(f"step {k}: {step.action!r} is refused: {exc}") from None

    def final_state(self) -> State:
        """The state after every step."""
        state = self.new_state()
        for step in self.steps:
            state.apply(step.action)
        return state


def replay_command(
    game: str,
    players: int,
    seed: int | None,
    options: Mapping[str, Any],
    seats: Sequence[str],
    seat: int,
    *,
    suit_permutation: str | None = None,
    bot_seeds: Sequence[Any] | None = None,
) -> str:
    """The ``atout-bot replay`` command (seed mode) that plays that local game again and shows
    seat ``seat``'s decisions: what a fault message prints. ``bot_seeds`` only when the bots'
    ``rng`` were not seeded ``f"{seed}/{seat}"`` (as :func:`atout.local.play` does by default)."""
    words = ["atout-bot", "replay", "--game", game, "--players", str(players)]
    if seed is not None:
        words += ["--seed", str(seed)]
    for key, value in options.items():
        if key != "players":
            words += ["--option", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    if suit_permutation is not None:
        words += ["--suit-permutation", suit_permutation]
    if bot_seeds is not None:
        words += ["--bot-seeds", ",".join(str(s) for s in bot_seeds)]
    words += ["--seats", ",".join(seats), "--seat", str(seat)]
    return shlex.join(words)


def read_records(path: str | Path) -> list[GameRecord]:
    """Every game of the JSON Lines file ``path`` (blank lines skipped); :class:`RecordError`
    naming the file and line when one is not a record."""
    return list(iter_records(path))


def iter_records(path: str | Path) -> Iterator[GameRecord]:
    """The games of a record file one at a time, as :func:`read_records` reads them, without
    holding the file in memory; :class:`RecordError` naming the file and line when one is not a
    record."""
    number = 0
    try:
        with Path(path).open(encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise RecordError(f"{path}:{number}: not JSON: {exc.msg}") from None
                try:
                    record = GameRecord.from_dict(data)
                except RecordError as exc:
                    raise RecordError(f"{path}:{number}: {exc}") from None
                yield record
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}:{number + 1}: not UTF-8 text ({exc.reason})") from None


def dumps(record: GameRecord) -> str:
    """The record as one JSON line (no newline)."""
    return json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))


class RecordWriter:
    """Appends one line per game to ``path``, flushed after each game.

    >>> with RecordWriter("games.jsonl") as out:  # doctest: +SKIP
    ...     out.write(record)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None
        self.count = 0

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def write(self, record: GameRecord) -> None:
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(dumps(record) + "\n")
        self._file.flush()
        self.count += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
