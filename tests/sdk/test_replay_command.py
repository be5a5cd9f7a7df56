"""``atout-bot replay`` on local games (the arena's match: tests/api/test_replay_arena_match.py):
a record file asked again of the same bot (no difference) and of a changed one (the first
difference, exactly), ``--from K`` (plays on to a legal end), seed mode (a bot's faults, as
validate played them), and the bad inputs (one line, exit 2)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from replay_bots import CHANGED_FROM

from atout.bots import HeuristicBot
from atout.cli import main
from atout.loading import load_bot
from atout.local import play
from atout.record import GameRecord, RecordWriter, read_records
from atout.replay import compare, continue_from

BOTS = str(Path(__file__).resolve().parent.parent / "replay_bots.py")
CHANGED, FAULTY = f"{BOTS}:Changed", f"{BOTS}:Faulty"


def changed_decisions(record: GameRecord, seat: int) -> list[int]:
    """Where Changed must differ from a heuristic game, found from the record alone: the seat's
    decisions from its CHANGED_FROM-th on with more than one legal action (1-based, every seat counted)."""
    found, asked = [], 0
    for k, state, step in record.positions():
        if step.seat == seat:
            asked += 1
            if asked >= CHANGED_FROM and len(state.legal_actions()) > 1:
                found.append(k + 1)
    return found


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, GameRecord]:
    result = play("merde", [HeuristicBot() for _ in range(3)], seed=11, record=True,
                  specs=["heuristic"] * 3, deals=3)  # fmt: skip
    assert result.record is not None
    path = tmp_path / "games.jsonl"
    with RecordWriter(path) as out:
        out.write(result.record)
    (record,) = read_records(path)
    return path, record


def test_the_same_bot_answers_as_played_a_changed_one_differs_first_where_it_was_changed(
    recorded: tuple[Path, GameRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    path, record = recorded
    assert main(["replay", str(path), "--bot", "heuristic", "--seat", "1"]) == 0
    out = capsys.readouterr().out
    asked = sum(step.seat == 1 for step in record.steps)
    assert f"seat 1: {asked} decisions asked, 0 answered differently; first difference: none" in out

    expected = changed_decisions(record, 1)
    assert expected  # the game gives the changed bot a choice
    comparison = compare(record, load_bot(CHANGED), 1)
    assert [d.decision for d in comparison.differences] == expected
    assert main(["replay", str(path), "--bot", CHANGED, "--seat", "1"]) == 0
    out = capsys.readouterr().out
    first = comparison.differences[0]
    assert f"decision {expected[0]} (seat 1's decision {first.seat_decision}): played {first.played}, " in out
    assert "(you)" in out and "hand:" in out  # the position, as the seat saw it
    assert out.rstrip().endswith(
        f"seat 1: {asked} decisions asked, {len(expected)} answered differently; "
        f"first difference: decision {expected[0]}"
    )


def test_from_k_plays_on_to_a_legal_end_the_same_bots_play_it_again(
    recorded: tuple[Path, GameRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    path, record = recorded
    start = changed_decisions(record, 1)[0]
    # the recorded bots from decision K: the recorded game again, exactly
    again = continue_from(record, start, [HeuristicBot() for _ in range(3)])
    assert [(s, a) for s, a, _ in again.steps] == [(s.seat, s.action) for s in record.steps[start - 1 :]]
    assert (again.scores, again.ranking) == (record.scores, record.ranking)

    assert main(["replay", str(path), "--bot", CHANGED, "--seat", "1", "--from", str(start)]) == 0
    out = capsys.readouterr().out
    assert (
        f"from decision {start} on, seat 1 played by your bot, the others by 0: heuristic, 2: heuristic:"
        in out
    )
    changed = continue_from(record, start, [HeuristicBot(), load_bot(CHANGED)(), HeuristicBot()])
    state = record.new_state()  # the recorded start, then the new moves: every one legal, to the end
    for step in record.steps[: start - 1]:
        state.apply(step.action)
    for seat, action, by in changed.steps:
        assert by == "bot" and state.current_player == seat and action in state.legal_actions()
        state.apply(action)
    assert state.is_terminal and state.scores == changed.scores
    assert changed.steps[0][1] != record.steps[start - 1].action  # the changed bot's own move
    assert f"recorded: scores {record.scores}, ranking {record.ranking}" in out
    assert f"now:      scores {changed.scores}, ranking {changed.ranking}" in out


def test_seed_mode_shows_every_fault_of_the_seat_as_validate_played_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    specs = ["heuristic", FAULTY, "heuristic"]
    # as validate plays: fallback, the seed, bots seeded SEED/SEAT
    played = play("merde", [load_bot(s)() for s in specs], seed=5, fallback=True, deals=4)
    faults = [f for f in played.faults if f.seat == 1]
    assert faults and all(f.kind == "illegal" for f in faults)
    command = (f"atout-bot replay --game merde --players 3 --seed 5 --option deals=4 "
               f"--seats {','.join(specs)} --seat 1")  # fmt: skip
    assert main(shlex.split(command)[1:]) == 0
    out = capsys.readouterr().out
    for fault in faults:
        assert f"seat 1, decision {fault.turn + 1} of the game: illegal action 'nonsense'" in out
    assert out.count("the bot's answer: 'nonsense'") == len(faults)
    assert out.count("hand: ") == len(faults)  # each with its position: 3 cards in hand
    assert f"{len(faults)} fault(s) of seat 1 in {len(played.history)} decisions" in out


def test_local_play_records_what_it_played() -> None:
    result = play("tiercon", [HeuristicBot(), load_bot(FAULTY)()], seed=3, fallback=True, record=True,
                  suit_permutation="dhsc", specs=["heuristic", FAULTY])  # fmt: skip
    record = result.record
    assert record is not None and record.suit_permutation == "dhsc"
    assert [(s.seat, s.action) for s in record.steps] == result.history
    assert (record.scores, record.ranking) == (result.scores, result.ranking)
    assert [s.bot for s in record.seats] == ["heuristic", FAULTY]
    fallbacks = [k for k, s in enumerate(record.steps) if s.by == "fallback"]
    assert fallbacks == [f.turn for f in result.faults] and fallbacks
    assert all(record.steps[k].fault == "illegal" for k in fallbacks)
    assert record.final_state().scores == result.scores  # the engine plays it again to the same end
    # and without record=True, the same game
    again = play(
        "tiercon", [HeuristicBot(), load_bot(FAULTY)()], seed=3, fallback=True, suit_permutation="dhsc"
    )
    assert (again.history, again.record) == (result.history, None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nofile.jsonl", "--bot", "heuristic", "--seat", "0"], "nofile.jsonl"),
        (["{games}", "--bot", "nomodule:Bot", "--seat", "0"], "cannot import module 'nomodule'"),
        (["{games}", "--bot", "heuristic", "--seat", "7"], "--seat 7: the game has seats 0..2"),
        (
            ["{games}", "--bot", "heuristic", "--seat", "0", "--from", "999"],
            "--from 999: the game has decisions",
        ),
        (["{games}", "--bot", "heuristic", "--seat", "0", "--game", "2"], "--game 2:"),
        (
            ["12345", "--api", "http://127.0.0.1:9", "--bot", "heuristic", "--seat", "0"],
            "GET http://127.0.0.1:9/",
        ),
    ],
)
def test_a_bad_input_is_one_line_and_exit_2(
    recorded: tuple[Path, GameRecord], capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path, _ = recorded
    assert main(["replay", *(a.replace("{games}", str(path)) for a in args)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        captured.err.count("\n") == 1
        and captured.err.startswith("atout-bot replay: ")
        and message in captured.err
    )


def test_the_command_line_exits_2_on_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    command = [sys.executable, "-m", "atout.cli", "replay", str(bad), "--bot", "heuristic", "--seat", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and str(bad) in done.stderr, done.stderr


def test_a_fallback_step_is_said_and_an_illegal_answer_is_the_engines_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = play("tiercon", [HeuristicBot(), load_bot(FAULTY)()], seed=3, fallback=True, record=True,
                  specs=["heuristic", FAULTY])  # fmt: skip
    assert result.record is not None and result.faults
    path = tmp_path / "faulty.jsonl"
    with RecordWriter(path) as writer:
        writer.write(result.record)
    assert main(["replay", str(path), "--bot", FAULTY, "--seat", "1"]) == 0
    out = capsys.readouterr().out
    for fault in result.faults:
        played = result.history[fault.turn][1]
        said = f"played {played} (by fallback, illegal), your bot now: (illegal: illegal action 'nonsense'"
        assert f"decision {fault.turn + 1} (seat 1's decision " in out and said in out
    assert f"{len(result.faults)} answered differently" in out
