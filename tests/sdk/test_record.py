"""Recorded games (atout.record, docs/record.md): the format reads back and rebuilds a game, a
bad file is one line naming the file and line, and ``atout-bot validate/test --record FILE``
save every game they play, readable by ``read_records`` and rebuilt by ``positions()``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from atout import Bot, Observation
from atout.bots import HeuristicBot, RandomBot
from atout.local import play
from atout.record import (
    FORMAT,
    SCHEMA_PATH,
    GameRecord,
    RecordError,
    RecordWriter,
    SeatRecord,
    StepRecord,
    read_records,
    replay_command,
)

pytestmark = pytest.mark.timeout(120)
SAMPLE_BOTS = Path(__file__).resolve().parent / "sample_bots.py"
SCHEMA = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


class Noting(Bot):
    """Explains its every decision."""

    def act(self, observation: Observation) -> tuple[str, str]:  # type: ignore[override]  # (action, note)
        return observation.legal_actions[0], f"{len(observation.legal_actions)} choices"


def _record(seed: int = 3) -> GameRecord:
    result = play("merde", [Noting(), RandomBot(), HeuristicBot()], seed=seed, record=True, deals=2,
                  specs=["noting", "random", "heuristic"])  # fmt: skip
    assert result.record is not None
    return result.record


def test_a_record_round_trips_and_rebuilds_the_game(tmp_path: Path) -> None:
    record = _record()
    path = tmp_path / "games.jsonl"
    with RecordWriter(path) as out:
        out.write(record)
        out.write(_record(seed=4))
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["format"] == FORMAT for line in lines)
    for line in lines:
        SCHEMA.validate(json.loads(line))
    first, second = read_records(path)
    assert first.to_dict() == record.to_dict() and second.seed == 4
    assert [s.bot for s in first.seats] == ["noting", "random", "heuristic"]
    notes = [(s.seat, s.note) for s in first.steps if s.note is not None]  # act()'s notes, recorded
    assert notes and all(seat == 0 and note.endswith("choices") for seat, note in notes)
    seen = 0
    for k, state, step in first.positions():
        assert k == seen and state.current_player == step.seat and step.action in state.legal_actions()
        seen += 1
    final = first.final_state()
    assert seen == len(first.steps) and final.is_terminal
    assert (final.scores, final.ranking) == (first.scores, first.ranking)


def test_a_rebuilt_state_is_the_seeded_one_with_its_suits_and_dealer() -> None:
    record = GameRecord("tiercon", 2, {}, 9, suit_permutation="hscd", dealer=1,
                        seats=[SeatRecord(0, "a"), SeatRecord(1, "b")])  # fmt: skip
    state = record.new_state()
    assert state.first_dealer == 1
    plain = GameRecord("tiercon", 2, {}, 9, seats=record.seats).new_state()
    assert state.observation(0)["hand"] != plain.observation(0)["hand"]  # the suits relabelled


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "games.jsonl:2: not JSON"),
        ('{"format": "pgn"}', "games.jsonl:2: format is 'pgn', expected 'atout-game/1'"),
        ('{"format": "atout-game/1", "game": "merde"}', "games.jsonl:2: missing field 'players'"),
        (
            '{"format": "atout-game/1", "game": "merde", "players": "3", "options": {}, "seed": 1, '
            '"seats": [], "steps": [], "scores": [], "ranking": []}',
            "games.jsonl:2: field 'players' is str '3'",
        ),
        (
            '{"format": "atout-game/1", "game": "merde", "players": 1, "options": {}, "seed": 1, '
            '"seats": [{"seat": 0, "bot": "x", "colour": "red"}], "steps": [], "scores": [], "ranking": []}',
            "games.jsonl:2: bad seat or step",
        ),
    ],
)
def test_a_bad_line_is_one_line_naming_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(_record().to_dict()) + "\n" + line + "\n")
    with pytest.raises(RecordError) as info:
        read_records(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_step_the_engine_refuses_is_a_record_error() -> None:
    record = _record()
    record.steps[5] = StepRecord(record.steps[5].seat, "play Zz")
    with pytest.raises(RecordError, match="step 5: 'play Zz' is refused"):
        list(record.positions())


def test_the_replay_command_quotes_and_carries_options() -> None:
    options = {"deals": 2, "players": 3, "hidden": True}
    command = replay_command("merde", 3, 7, options, ["my bot.py:B", "h", "h"], 0,
                             bot_seeds=["7/0/0", "7/0/1", "7/0/2"])  # fmt: skip
    assert command == ("atout-bot replay --game merde --players 3 --seed 7 --option deals=2 "
                       "--option hidden=true --bot-seeds 7/0/0,7/0/1,7/0/2 --seats 'my bot.py:B,h,h' "
                       "--seat 0")  # fmt: skip


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "atout.cli", *args], capture_output=True, text=True,
                          timeout=100, check=False, cwd=cwd)  # fmt: skip


def test_validate_records_every_game(tmp_path: Path) -> None:
    path = tmp_path / "validate.jsonl"
    proc = _cli(
        "validate", f"{SAMPLE_BOTS}:Raising", "--game", "tiercon", "--games", "2", "--record", str(path)
    )
    assert proc.returncode == 1, proc.stderr
    records = read_records(path)
    assert len(records) == 4  # 2 games x 2 seats
    bot = f"{SAMPLE_BOTS}:Raising"
    assert [[s.bot for s in r.seats] for r in records] == [[bot, "heuristic"]] * 2 + [["heuristic", bot]] * 2
    assert [r.seed for r in records] == [0, 1, 0, 1]
    for r in records:
        SCHEMA.validate(r.to_dict())
        seat = next(s.seat for s in r.seats if s.bot == bot)
        faulted = [s for s in r.steps if s.by == "fallback"]
        assert [s.seat for s in faulted] == [seat] and faulted[0].fault == "exception"
        assert all(s.think_ms is not None and s.think_ms >= 0 for s in r.steps)
        assert r.source["tool"] == "validate" and r.source["replay"].startswith(
            "atout-bot replay --game tiercon"
        )
        final = r.final_state()
        assert (final.scores, final.ranking) == (r.scores, r.ranking)


def test_test_records_every_game_in_order(tmp_path: Path) -> None:
    path = tmp_path / "test.jsonl"
    proc = _cli("test", "heuristic", "random", "--game", "merde", "--option", "deals=1", "--players", "3",
                "--games", "12", "--jobs", "2", "--record", str(path))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    records = read_records(path)
    assert len(records) == 12  # two duplicate sets of 6
    assert [r.source["set"] for r in records] == [0] * 6 + [1] * 6
    assert [r.source["game_of_set"] for r in records] == list(range(6)) * 2
    for r in records:
        roles = r.source["roles"]
        assert [s.bot for s in r.seats] == [
            {"A": "heuristic", "B": "random", "field": "heuristic"}[x] for x in roles
        ]
        final = r.final_state()
        assert (final.scores, final.ranking) == (r.scores, r.ranking)
    # a set's games share its deal
    assert len({r.seed for r in records[:6]}) == 1 and records[0].seed != records[6].seed


def test_an_unwritable_record_file_is_one_line(tmp_path: Path) -> None:
    proc = _cli(
        "validate", "random", "--game", "tiercon", "--games", "1", "--record", str(tmp_path / "no" / "x")
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("atout-bot validate: error: ") and "No such file" in proc.stderr
