"""Reproducible messages (issue 33): every fault ``atout-bot validate`` and ``atout-bot test``
report comes with the one ``atout-bot replay`` command that plays its game again, and that
command, run, shows the same fault; validate's same-seed check covers every player count; every
bad bot spec is one line and exit 2; no help text prints ``%%``."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from atout.cli import _parser, main
from atout.loading import load_bot
from atout.local import play
from atout.validate import validate

pytestmark = pytest.mark.timeout(120)
SAMPLE_BOTS = Path(__file__).resolve().parent / "sample_bots.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "atout.cli", *args], capture_output=True, text=True,
                          timeout=100, check=False)  # fmt: skip


def _command(output: str, prefix: str) -> list[str]:
    """The words of the command on the line that starts with ``prefix``."""
    line = next(line for line in output.splitlines() if line.strip().startswith(prefix))
    words = shlex.split(line.strip().removeprefix(prefix).strip())
    assert words[:2] == ["atout-bot", "replay"], line
    return words[2:]


def test_validate_prints_the_command_that_shows_its_fault_again() -> None:
    proc = _run("validate", f"{SAMPLE_BOTS}:Raising", "--game", "tiercon", "--games", "2")
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.split("exceptions       4; first: ", 1)[1].splitlines()[0]
    assert first.startswith("seat 0, decision ") and "RuntimeError" in first
    words = _command(proc.stdout, "reproduce the first exception:")
    assert words == ["--game", "tiercon", "--players", "2", "--seed", "0",
                     "--seats", f"{SAMPLE_BOTS}:Raising,heuristic", "--seat", "0"]  # fmt: skip
    replayed = _run("replay", *words)
    assert replayed.returncode == 0, replayed.stderr
    assert first in replayed.stdout  # the same decision, the same error


def test_test_prints_the_command_that_shows_its_fault_again() -> None:
    proc = _run("test", "random", f"{SAMPLE_BOTS}:Illegal", "--game", "merde", "--option", "deals=2",
                "--games", "8")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    told = next(line for line in proc.stderr.splitlines() if "played an illegal action" in line)
    fault = told.split(", game 1, ", 1)[1]  # "seat 1, decision 7 of the game: illegal action ..."
    words = _command(proc.stderr, "reproduce:")
    args = dict(zip(words[::2], words[1::2], strict=True))
    assert args["--seats"].split(",")[int(args["--seat"])] == f"{SAMPLE_BOTS}:Illegal"
    # the printed seeds are the game's: atout.local.play with them gives the same fault ...
    bots = [load_bot(spec)() for spec in args["--seats"].split(",")]
    result = play("merde", bots, seed=int(args["--seed"]), fallback=True, deals=2,
                  bot_seeds=args["--bot-seeds"].split(","))  # fmt: skip
    assert result.faults[0].describe() == fault
    # ... and so does the command
    replayed = _run("replay", *words)
    assert replayed.returncode == 0, replayed.stderr
    assert fault in replayed.stdout


RANDOM_AT_3 = '''
import random
from atout import Bot

class RandomAtThree(Bot):
    """Reproducible at two players; draws from the random module (not self.rng) at three or more."""

    def act(self, observation):
        legal = observation.legal_actions
        return random.choice(legal) if self.match.players >= 3 else legal[0]
'''


def test_the_same_seed_check_covers_every_player_count(tmp_path: Path) -> None:
    path = tmp_path / "random_at_3.py"
    path.write_text(RANDOM_AT_3)
    report = validate(f"{path}:RandomAtThree", "regicide", games=1)
    assert report.ok and not report.reproducible  # a warning, not a fault
    assert "players" in report.reproducible_detail and "2 players" not in report.reproducible_detail
    assert any(
        line.startswith("reproduce the first game that differs: atout-bot replay") for line in report.lines()
    )
    steady = validate("heuristic", "regicide", games=1)
    assert steady.reproducible
    assert steady.reproducible_detail.startswith("yes: 9 games twice: 2 to 4 players, seeds 0 to 2")


BAD_BOTS = """
from atout import Bot

class NeedsDepth(Bot):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth

def act(observation):
    return observation.legal_actions[0]

def not_a_factory():
    return "random"

def failing_factory():
    raise RuntimeError("no model file")
"""


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "bad_bots.py:NeedsDepth",
            "the class NeedsDepth cannot be called with no arguments: missing a required argument: 'depth'",
        ),
        (
            "bad_bots.py:act",
            "'bad_bots.py:act' cannot be called with no arguments: missing a required argument: "
            "'observation' (a function must be a zero-argument factory of bots)",
        ),
        ("bad_bots.py:not_a_factory", "gave str 'random', not a Bot"),
        ("bad_bots.py:failing_factory", "creating a bot failed: RuntimeError: no model file"),
        ("raising_mod.py:Bot", "importing 'raising_mod.py' failed: ValueError: first line"),
        ("exiting_mod.py:Bot", "importing 'exiting_mod.py' failed: SystemExit: 3"),
        ("raising_mod:Bot", "importing 'raising_mod' failed: ValueError: first line"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "test", "run"])
def test_a_bad_bot_spec_is_one_line_and_exit_2(
    command: str, spec: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    (tmp_path / "bad_bots.py").write_text(BAD_BOTS)
    (tmp_path / "raising_mod.py").write_text("raise ValueError('first line\\nsecond line')\n")
    (tmp_path / "exiting_mod.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    for name in ("bad_bots", "raising_mod", "exiting_mod"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    argv = {"validate": ["validate", spec, "--game", "tiercon", "--games", "1"],
            "test": ["test", spec, "random", "--game", "tiercon", "--games", "2"],
            "run": ["run", spec, "--token", "t", "--server", "127.0.0.1:1"]}[command]  # fmt: skip
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and message in lines[0], captured.err


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def test_no_help_text_prints_a_doubled_percent_sign() -> None:
    from atout_arena.cli import build_parser

    parsers = _parsers(_parser()) + _parsers(build_parser())
    assert {p.prog for p in parsers} >= {"atout-bot test", "atout-bot validate", "atout-bot replay",
                                         "atout-arena match export"}  # fmt: skip
    doubled = [p.prog for p in parsers if "%%" in p.format_help()]
    assert doubled == []
    assert "95% interval" in next(p for p in parsers if p.prog == "atout-bot test").format_help()


SLOW_ONCE = '''
import time
from atout import Bot

class SlowOnce(Bot):
    """Thinks 30 ms on its first decision of each game, at once after."""

    def on_match_start(self, match):
        self.first = True

    def act(self, observation):
        if self.first:
            self.first = False
            time.sleep(0.03)
        return observation.legal_actions[0]
'''


def test_a_decision_over_the_budget_comes_with_its_command(tmp_path: Path) -> None:
    path = tmp_path / "slow_once.py"
    path.write_text(SLOW_ONCE)
    report = validate(f"{path}:SlowOnce", "tiercon", games=1, move_ms=20)
    assert not report.ok and report.over_budget == 2  # one per game, 2 seats
    line = next(line for line in report.lines() if line.startswith("reproduce the first decision over"))
    assert line.endswith(f"--seed 0 --seats {path}:SlowOnce,heuristic --seat 0")


def test_the_sdk_readme_installs_from_the_repository() -> None:
    readme = (Path(__file__).resolve().parents[2] / "sdk" / "README.md").read_text()
    assert "pip install atout" not in readme.replace("pip install atout-", "")
    assert "pip install ./sdk" in readme and "python -m build sdk" in readme
