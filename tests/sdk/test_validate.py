"""atout-bot validate: it catches a bot that raises, one that answers illegally and one that is too
slow, warns about one that is not reproducible, and passes the house bots."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from atout.games import GAMES
from atout.validate import percentile, validate

pytestmark = pytest.mark.timeout(120)

SAMPLE_BOTS = Path(__file__).resolve().parent / "sample_bots.py"


def _validate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atout.cli", "validate", *args],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )


@pytest.mark.parametrize("game", list(GAMES))
def test_the_heuristic_bot_passes(game: str) -> None:
    proc = _validate("heuristic", "--game", game, "--games", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    counts = GAMES[game].player_counts()
    games = 2 * sum(counts)  # two games in every seat of every player count
    assert f"validate heuristic on {game}: {games} games against the heuristic bot" in out
    assert "exceptions       0\n" in out and "illegal actions  0\n" in out
    assert "budget 1000 ms: 0 over" in out
    assert "same seed        yes: " in out and "games twice" in out
    assert "peak memory" in out and "tracemalloc" in out
    assert out.strip().endswith("ok: no fault found")


def test_a_bot_that_raises() -> None:
    proc = _validate(f"{SAMPLE_BOTS}:Raising", "--game", "tiercon", "--games", "3")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    # tiercon is 2 players: 2 seats x 3 games, one exception per game (its third decision)
    assert "exceptions       6; first: seat 0, decision" in out
    assert "act() raised RuntimeError: the third decision always fails" in out
    assert "first exception:\nTraceback (most recent call last):" in out
    assert 'sample_bots.py", line' in out and out.count("Traceback") == 1
    assert out.strip().endswith("FAIL: 6 exceptions")


def test_a_bot_that_answers_illegally() -> None:
    proc = _validate(f"{SAMPLE_BOTS}:Illegal", "--game", "merde", "--option", "deals=2", "--games", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # merde: 3 to 7 players, every seat: 25 games, one illegal answer in each
    assert "illegal actions  25; first: seat 0, decision" in proc.stdout
    assert "illegal action 'fly away' for seat 0:" in proc.stdout  # the engine's reason
    assert proc.stdout.strip().endswith("FAIL: 25 illegal actions")


def test_a_bot_that_is_too_slow() -> None:
    # merde, one deal: two decisions per game, 25 games (3 to 7 players, every seat)
    proc = _validate(f"{SAMPLE_BOTS}:Slow", "--game=merde", "--option=deals=1", "--games=1", "--move-ms=20")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = next(line for line in proc.stdout.splitlines() if "decision time" in line)
    assert "budget 20 ms: 50 over" in report
    assert "FAIL:" in proc.stdout and "decisions over 20 ms" in proc.stdout
    # the same bot within a generous budget has no fault
    report_ok = validate(f"{SAMPLE_BOTS}:Slow", "merde", games=1, move_ms=5000, options={"deals": 1})
    assert report_ok.ok and report_ok.over_budget == 0 and percentile(report_ok.think_s, 0.5) >= 0.03


def test_a_bot_that_is_not_reproducible_is_a_warning() -> None:
    report = validate(f"{SAMPLE_BOTS}:Unseeded", "fool", games=1)
    assert not report.reproducible and report.ok  # a warning, not a fault
    assert report.reproducible_detail.startswith("NO (warning): decision")
    assert "use self.rng" in report.reproducible_detail


def test_the_api_report() -> None:
    report = validate("random", "regicide", games=1)
    assert report.ok and report.reproducible
    assert report.games == 2 + 3 + 4 and report.decisions == len(report.think_s) > 0
    assert report.player_counts == (2, 3, 4)
    assert report.peak_memory_bytes > 0


def test_percentiles_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert (percentile(values, 0.5), percentile(values, 0.99), percentile(values, 1.0)) == (50.0, 99.0, 100.0)
    assert percentile([7.0], 0.99) == 7.0 and percentile([], 0.5) == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["heuristic", "--game", "chess"], "argument --game: invalid choice: 'chess'"),
        (["heuristic", "--game", "merde", "--option", "deals=99"], "option 'deals'"),
        (["heuristic", "--game", "merde", "--games", "0"], "argument --games: must be at least 1"),
        (["nope_xyz:Bot", "--game", "merde"], "cannot import module 'nope_xyz'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    proc = _validate(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("atout-bot validate: error: ") and message in lines[0]
