"""Datasets of decisions (atout.dataset, docs/datasets.md): one row per decision of a recorded
game, rebuilt through the engine; the rows hold what the seat's bot saw (checked against a bot
that keeps every observation it receives), its legal actions and action, and the final scores;
JSON Lines and Parquet (pyarrow) carry the same rows; ``atout-bot test --dataset`` and
``atout-bot dataset RECORDS -o ROWS`` write them; what cannot be written is one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pyarrow.parquet as pq
import pytest

from atout import Bot, Observation
from atout.bots import HeuristicBot
from atout.cli import main
from atout.dataset import (
    FORMAT,
    SCHEMA_PATH,
    DatasetError,
    DatasetWriter,
    decision_rows,
    read_parquet_rows,
    write_jsonl,
    write_parquet,
)
from atout.local import play
from atout.record import GameRecord, RecordError, RecordWriter, StepRecord, iter_records, read_records

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
TABLES = {"merde": 3, "tiercon": 2, "regicide": 4, "fool": 3}
OPTIONS: dict[str, dict[str, Any]] = {"merde": {"deals": 2}, "tiercon": {}, "regicide": {}, "fool": {}}


class Keeper(Bot):
    """Plays at random and keeps every observation it receives, as it received it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[dict[str, Any], list[str], str]] = []

    def act(self, observation: Observation) -> str:
        action = self.rng.choice(observation.legal_actions)
        self.seen.append((json.loads(json.dumps(observation.raw)), list(observation.legal_actions), action))
        return action


def _game(game: str, seed: int = 5) -> tuple[GameRecord, list[Keeper]]:
    keepers = [Keeper() for _ in range(TABLES[game])]
    result = play(game, keepers, seed=seed, record=True, **OPTIONS[game])
    assert result.record is not None
    return result.record, keepers


@pytest.mark.parametrize("game", list(TABLES))
def test_each_row_is_what_the_seat_saw_and_chose(game: str) -> None:
    record, keepers = _game(game)
    rows = list(decision_rows(record))
    assert len(rows) == len(record.steps) > 0  # one row per step, in order
    assert [r["decision"] for r in rows] == list(range(len(rows)))
    for seat, keeper in enumerate(keepers):
        mine = [r for r in rows if r["seat"] == seat]
        # exactly what this seat's bot received, decision by decision
        assert [(r["observation"], r["legal_actions"], r["action"]) for r in mine] == keeper.seen
    for row in rows:
        SCHEMA.validate(row)
        assert row["format"] == FORMAT and row["game"] == game and row["players"] == TABLES[game]
        assert row["action"] in row["legal_actions"] and row["by"] == "bot" and row["think_ms"] >= 0
        assert (row["scores"], row["ranking"]) == (record.scores, record.ranking)
        assert (row["score"], row["rank"]) == (record.scores[row["seat"]], record.ranking[row["seat"]])
        assert (row["seed"], row["source"], row["competition"], row["match"]) == (5, "local", None, "local")
        assert row["observation"]["seat"] == row["seat"] and "deal_history" in row["observation"]


def test_a_fallback_decision_says_who_chose_it() -> None:
    class Clumsy(Bot):
        def act(self, observation: Observation) -> str:
            return "play nothing" if observation.phase == "play" else observation.legal_actions[0]

    result = play("tiercon", [Clumsy(), HeuristicBot()], seed=2, record=True, fallback=True)
    assert result.record is not None
    rows = list(decision_rows(result.record))
    faulted = [r for r in rows if r["by"] == "fallback"]
    assert faulted and all(r["seat"] == 0 and r["fault"] == "illegal" for r in faulted)
    assert all(r["action"] == r["legal_actions"][0] for r in faulted)


def test_jsonl_and_parquet_carry_the_same_rows(tmp_path: Path) -> None:
    records = [_game("merde", seed)[0] for seed in (1, 2)]
    rows = [row for record in records for row in decision_rows(record)]
    assert write_jsonl(iter(rows), tmp_path / "rows.jsonl") == len(rows)
    assert [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()] == rows
    import atout.dataset

    atout.dataset.PARQUET_BATCH, batch = 7, atout.dataset.PARQUET_BATCH  # several row groups
    try:
        assert write_parquet(iter(rows), tmp_path / "rows.parquet") == len(rows)
    finally:
        atout.dataset.PARQUET_BATCH = batch
    table = pq.read_table(tmp_path / "rows.parquet")
    assert table.num_rows == len(rows) and pq.ParquetFile(tmp_path / "rows.parquet").num_row_groups > 1
    assert table.column_names == list(rows[0])
    assert table.column("action").to_pylist() == [r["action"] for r in rows]
    assert json.loads(table.column("observation")[7].as_py()) == rows[7]["observation"]
    assert list(read_parquet_rows(tmp_path / "rows.parquet")) == rows


def test_the_shipped_schema_is_the_documented_one() -> None:
    assert SCHEMA_PATH.read_bytes() == (ROOT / "docs" / "decision.schema.json").read_bytes()
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_test_writes_the_rows_of_every_game_and_the_converter_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, rows = tmp_path / "games.jsonl", tmp_path / "rows.parquet"
    code, _, err = _cli(capsys, "test", "heuristic", "random", "--game", "merde", "--option", "deals=1",
                        "--players", "3", "--games", "6", "--record", str(records),
                        "--dataset", str(rows))  # fmt: skip
    assert code == 0, err
    games = read_records(records)
    assert len(games) == 6  # --record kept beside --dataset
    expected = [row for game in games for row in decision_rows(game)]
    assert list(read_parquet_rows(rows)) == expected
    assert {r["bot"] for r in expected} == {"heuristic", "random"}
    assert len(expected) == sum(len(g.steps) for g in games)

    converted = tmp_path / "converted.jsonl"
    code, out, err = _cli(capsys, "dataset", str(records), "-o", str(converted))
    assert code == 0 and out == ""
    assert err.strip() == f"6 games, {len(expected)} decisions written to {converted}"
    assert [json.loads(line) for line in converted.read_text().splitlines()] == expected

    only = tmp_path / "only.jsonl"  # --dataset alone: rows, no record file
    code, _, err = _cli(capsys, "match", "random", "random", "--game", "tiercon", "--games", "2",
                        "--dataset", str(only))  # fmt: skip
    assert code == 0, err
    assert {json.loads(line)["game"] for line in only.read_text().splitlines()} == {"tiercon"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["converted.jsonl", "games.jsonl", "only.jsonl",
                                                          "rows.parquet"]


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``atout-bot ARGS`` fails with one line: exit 2, ``atout-bot COMMAND: error: ...``."""
    code, _, err = _cli(capsys, *args)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"atout-bot {args[0]}: error: "), err
    return err


def test_what_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _ = _game("tiercon")
    good = tmp_path / "games.jsonl"
    with RecordWriter(good) as out:
        out.write(record)
    rows = str(tmp_path / "rows.jsonl")

    assert ".jsonl or .parquet" in _error(capsys, "dataset", str(good), "-o", str(tmp_path / "rows.csv"))
    assert "none.jsonl: cannot read" in _error(capsys, "dataset", str(tmp_path / "none.jsonl"), "-o", rows)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + "{not json\n")
    assert f"{bad}:2: not JSON" in _error(capsys, "dataset", str(bad), "-o", rows)
    refused = tmp_path / "refused.jsonl"
    record.steps[3] = StepRecord(record.steps[3].seat, "play Zz")
    with RecordWriter(refused) as out:
        out.write(record)
    assert "game 1: step 3" in _error(capsys, "dataset", str(refused), "-o", rows)
    assert "No such file" in _error(capsys, "test", "random", "random", "--game", "tiercon", "--games", "2",
                                    "--dataset", str(tmp_path / "no" / "rows.jsonl"))  # fmt: skip

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # pyarrow not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    parquet = str(tmp_path / "rows.parquet")
    assert 'pip install "atout[data]"' in _error(capsys, "dataset", str(good), "-o", parquet)
    with pytest.raises(DatasetError, match=r'pip install "atout\[data\]"'):
        DatasetWriter(parquet)
    (tmp_path / "other.jsonl").write_text('{"format": "other/1"}\n')
    with pytest.raises(RecordError, match=r"other\.jsonl:1: format is"):
        list(iter_records(tmp_path / "other.jsonl"))


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_a_failed_conversion_leaves_the_earlier_file_and_no_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """The rows are written to FILE.part, renamed when complete: a record refused halfway leaves
    the earlier FILE as it was, and no partial file."""
    record, _ = _game("tiercon")
    good, refused = tmp_path / "good.jsonl", tmp_path / "refused.jsonl"
    with RecordWriter(good) as out:
        out.write(record)
    rows = tmp_path / f"rows.{suffix}"
    code, _, err = _cli(capsys, "dataset", str(good), "-o", str(rows))
    assert code == 0, err
    before = rows.read_bytes()
    record.steps[3] = StepRecord(record.steps[3].seat, "play Zz")
    with RecordWriter(refused) as out:
        out.write(read_records(good)[0])  # a first game that converts, then one refused
        out.write(record)
    assert "game 2: step 3" in _error(capsys, "dataset", str(refused), "-o", str(rows))
    assert rows.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.jsonl", "refused.jsonl", rows.name]
