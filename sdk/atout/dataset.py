"""Datasets of decisions: one row per decision of recorded games, format ``atout-decision/1``
(docs/datasets.md).

>>> from atout.dataset import decision_rows, write_parquet
>>> from atout.record import read_records
>>> rows = (row for record in read_records("games.jsonl") for row in decision_rows(record))  # doctest: +SKIP
>>> write_parquet(rows, "decisions.parquet")  # doctest: +SKIP

Each row is what one seat saw when it chose (its observation and legal actions), what it
chose, who chose it, and how the game ended. The rows come from a game record
(docs/record.md) replayed through the SDK's own engines, so the same code serves local games
(``atout-bot test --dataset``, ``atout-bot dataset``) and the arena's (``atout-arena export``).

Parquet needs pyarrow: ``pip install "atout[data]"`` (imported when a Parquet file is written).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .record import GameRecord, RecordError, RecordWriter

FORMAT = "atout-decision/1"
SCHEMA_PATH = Path(__file__).with_name("decision.schema.json")
PARQUET_BATCH = 4096  # rows per Parquet row group written: the memory a writer holds
FORMATS = ("jsonl", "parquet")
#: The columns that hold JSON objects: nested in JSON Lines, JSON text in Parquet.
JSON_COLUMNS = ("options", "observation")


class DatasetError(ValueError):
    """A dataset that cannot be written: one line saying why."""


def competition_of(record: GameRecord) -> str | None:
    """The record's competition as one string: ``tournament:3``, ``ladder:1``, ``test:7``; None
    for a local game or an arena match of no competition (a practice match)."""
    competition = record.source.get("competition")
    if not isinstance(competition, dict) or not competition:
        return None
    ((kind, ref),) = list(competition.items())[:1]
    return f"{kind}:{ref}"


def _match_of(record: GameRecord) -> str | None:
    source = record.source
    ref = source.get("match", source.get("match_id"))
    return None if ref is None else str(ref)


def _plain(value: Any) -> Any:
    """``value`` as JSON reads it back (tuples become lists): what a row holds."""
    return json.loads(json.dumps(value))


def decision_rows(record: GameRecord) -> Iterator[dict[str, Any]]:
    """One row per step of ``record``, in order: the state is rebuilt from the record's seed,
    suit permutation, dealer and decks, and each step's observation and legal actions are
    taken before its action is applied (docs/datasets.md lists the fields).

    :raises atout.record.RecordError: a step the engine refuses (the record is not this engine's).
    """
    players = record.players
    base: dict[str, Any] = {
        "format": FORMAT,
        "source": record.source.get("kind"),
        "game": record.game,
        "players": players,
        "options": {k: v for k, v in record.options.items() if k != "players"},
        "competition": competition_of(record),
        "match": _match_of(record),
        "seed": record.seed,
        "suit_permutation": record.suit_permutation,
    }
    seats = {s.seat: s for s in record.seats}
    scores, ranking = list(record.scores), list(record.ranking)
    state = record.new_state()
    for k, step in enumerate(record.steps):  # record.positions()'s checks, without a copy per step
        if state.current_player != step.seat:
            turn = state.current_player
            raise RecordError(f"step {k}: seat {step.seat} played, but it is seat {turn}'s turn")
        seat = seats.get(step.seat)
        yield {
            **base,
            "decision": k,
            "seat": step.seat,
            "bot": seat.bot if seat is not None else None,
            "version": seat.version if seat is not None else None,
            "observation": _plain(state.observation(step.seat)),
            "legal_actions": list(state.legal_actions()),
            "action": step.action,
            "by": step.by,
            "fault": step.fault,
            "think_ms": None if step.think_ms is None else round(step.think_ms, 3),  # as records keep it
            "note": step.note,
            "scores": scores,
            "ranking": ranking,
            "score": scores[step.seat] if step.seat < len(scores) else None,
            "rank": ranking[step.seat] if step.seat < len(ranking) else None,
        }
        try:
            state.apply(step.action)
        except ValueError as exc:  # IllegalAction is a ValueError
            raise RecordError(f"step {k}: {step.action!r} is refused: {exc}") from None


def records_rows(records: Iterable[GameRecord]) -> Iterator[dict[str, Any]]:
    """The rows of every record, game after game."""
    for record in records:
        yield from decision_rows(record)


def format_of(path: str | Path) -> str:
    """``jsonl`` or ``parquet`` from the file's name; :class:`DatasetError` for another."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise DatasetError(f"{path}: a dataset file ends in .jsonl or .parquet, not {suffix or 'nothing'!r}")


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError('Parquet needs pyarrow: pip install "atout[data]"') from None
    return pa, pq


def arrow_schema() -> Any:
    """The Parquet files' schema (a ``pyarrow.Schema``): ``options`` and ``observation`` as JSON text."""
    pa, _ = _pyarrow()
    text, integer = pa.string(), pa.int64()
    return pa.schema([
        ("format", text), ("source", text), ("game", text), ("players", integer), ("options", text),
        ("competition", text), ("match", text), ("seed", integer), ("suit_permutation", text),
        ("decision", integer), ("seat", integer), ("bot", text), ("version", text), ("observation", text),
        ("legal_actions", pa.list_(text)), ("action", text), ("by", text), ("fault", text),
        ("think_ms", pa.float64()), ("note", text), ("scores", pa.list_(integer)),
        ("ranking", pa.list_(integer)), ("score", integer), ("rank", integer),
    ])  # fmt: skip


class DatasetWriter:
    """Writes rows to ``path`` (replaced), JSON Lines or Parquet by its name (or ``format``), or
    JSON Lines to an open ``stream`` (left open), streaming: Parquet rows go out in row groups
    of :data:`PARQUET_BATCH`. ``count`` is the rows written. A file is written as ``PATH.part``
    and renamed to ``path`` when the writer is closed (maybe empty of rows); leaving its ``with``
    block by an exception removes ``PATH.part`` instead, so a failed run leaves no partial file
    and an earlier ``path`` untouched.

    >>> with DatasetWriter("decisions.parquet") as out:  # doctest: +SKIP
    ...     out.write_record(record)
    """

    def __init__(self, path: str | Path, format: str | None = None, *, stream: IO[str] | None = None) -> None:
        self.path = Path(path)
        self.format = format or format_of(path)
        if self.format not in FORMATS:
            raise DatasetError(f"format {self.format!r}: expected one of {', '.join(FORMATS)}")
        if stream is not None and self.format != "jsonl":
            raise DatasetError("only JSON Lines is written to a stream")
        self.count = 0
        self._stream = stream  # JSON Lines to this open stream (stdout), left open; ``path`` unused
        self._text: IO[str] | None = stream
        self._parquet: Any = None
        self._batch: list[dict[str, Any]] = []
        self._part: Path | None = None  # the file being written, renamed to ``path`` by close()
        if stream is None:
            self._part = self.path.with_name(self.path.name + ".part")
        if self.format == "parquet":
            _, pq = _pyarrow()
            self._schema = arrow_schema()
            self._parquet = pq.ParquetWriter(self._part, self._schema, compression="zstd")
        elif self._part is not None:
            self._text = self._part.open("w", encoding="utf-8")

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(complete=exc_type is None)

    def write(self, row: dict[str, Any]) -> None:
        """One row."""
        if self._text is not None:
            self._text.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
        else:
            self._batch.append(row)
            if len(self._batch) >= PARQUET_BATCH:
                self._flush()
        self.count += 1

    def write_rows(self, rows: Iterable[dict[str, Any]]) -> int:
        """Every row of ``rows``; how many."""
        before = self.count
        for row in rows:
            self.write(row)
        return self.count - before

    def write_record(self, record: GameRecord) -> int:
        """The rows of one game record; how many. (A writer of records for ``atout.sprt.run_test``.)"""
        return self.write_rows(decision_rows(record))

    def _flush(self) -> None:
        if not self._batch:
            return
        pa, _ = _pyarrow()
        columns: dict[str, list[Any]] = {name: [] for name in self._schema.names}
        for row in self._batch:
            for name, values in columns.items():
                value = row.get(name)
                if name in JSON_COLUMNS:
                    value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
                values.append(value)
        self._parquet.write_table(pa.Table.from_pydict(columns, schema=self._schema))
        self._batch.clear()

    def close(self, complete: bool = True) -> None:
        """Finish the file and rename it to ``path``; ``complete=False``: remove it instead."""
        if self._text is not None:
            if self._stream is None:
                self._text.close()
            else:
                self._text.flush()
            self._text = None
        if self._parquet is not None:
            if complete:
                self._flush()
            self._parquet.close()
            self._parquet = None
        if self._part is not None:
            if complete:
                os.replace(self._part, self.path)
            else:
                self._part.unlink(missing_ok=True)
            self._part = None


class RecordRows(RecordWriter):
    """A :class:`atout.record.RecordWriter` that writes each game's decision rows to ``out``
    and, with ``records``, the game itself to that record file (appended) too: what
    ``atout-bot test --dataset [--record]`` hands to the games it plays."""

    def __init__(self, out: DatasetWriter, records: str | Path | None = None) -> None:
        super().__init__(records if records is not None else out.path)
        self.out = out
        self.keep_records = records is not None
        self.games = 0

    def write(self, record: GameRecord) -> None:
        if self.keep_records:
            super().write(record)
        self.out.write_record(record)
        self.games += 1

    def close(self) -> None:
        super().close()
        self.out.close()


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write ``rows`` to ``path`` (replaced) as JSON Lines; how many."""
    with DatasetWriter(path, "jsonl") as out:
        return out.write_rows(rows)


def write_parquet(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write ``rows`` to ``path`` (replaced) as Parquet (pyarrow: ``pip install "atout[data]"``); how many."""
    with DatasetWriter(path, "parquet") as out:
        return out.write_rows(rows)


def read_parquet_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """The rows of a Parquet dataset as :func:`decision_rows` makes them (the JSON columns read
    back into objects), one row group at a time."""
    _, pq = _pyarrow()
    file = pq.ParquetFile(path)
    for group in range(file.num_row_groups):
        for row in file.read_row_group(group).to_pylist():
            for name in JSON_COLUMNS:
                row[name] = json.loads(row[name])
            yield row
