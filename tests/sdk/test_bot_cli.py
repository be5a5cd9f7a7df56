"""The atout-bot command: argument errors, bot loading, exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fake_arena import TOKEN, FakeArena

from atout.bots import HeuristicBot, RandomBot
from atout.cli import BotLoadError, load_bot, main

pytestmark = pytest.mark.timeout(60)


def test_builtin_bots_by_name() -> None:
    assert load_bot("random") is RandomBot
    assert load_bot("heuristic") is HeuristicBot
    assert load_bot("atout.bots:RandomBot") is RandomBot


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:Bot", "cannot import module 'no_such_module_xyz'"),
        (
            "atout.bots:Nope",
            "module 'atout.bots' has no 'Nope'; its bots: FoolHeuristicBot, HeuristicBot, IsmctsBot, Merde",
        ),
        ("atout.bot:MatchInfo", "not a subclass of atout.Bot"),
        ("atout:__version__", "give a Bot subclass"),
        ("justaname", "is not module:Class"),
        ("missing_file.py:Bot", "no file 'missing_file.py'"),
    ],
)
def test_bad_bot_specs(spec: str, message: str) -> None:
    with pytest.raises(BotLoadError) as info:
        load_bot(spec)
    assert message in str(info.value)


def test_load_from_a_file_and_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cli_test_bot_mod.py").write_text(
        "from atout import Bot\nclass MyBot(Bot):\n    def act(self, o):\n        return o.legal_actions[0]\n"
    )
    (tmp_path / "broken_bot_mod.py").write_text("import no_such_dependency_xyz\n")
    assert load_bot(f"{tmp_path / 'cli_test_bot_mod.py'}:MyBot").__name__ == "MyBot"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "cli_test_bot_mod", raising=False)
    assert load_bot("cli_test_bot_mod:MyBot").__name__ == "MyBot"
    with pytest.raises(BotLoadError, match="importing 'broken_bot_mod' failed: ModuleNotFoundError"):
        load_bot("broken_bot_mod:MyBot")


def test_main_reports_a_bad_module(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no_such_module_xyz:Bot", "--token", "t"]) == 2
    assert "atout-bot: cannot import module 'no_such_module_xyz'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "random"], "no token: pass --token T or set ATOUT_TOKEN"),
        (["run", "random", "--token", "t", "--server", "localhost"], "--server must be HOST:PORT"),
        (["run", "random", "--token", "t", "--max-workers", "0"], "--max-workers must be at least 1"),
        (["run", "random", "--token", "t", "--log-level", "LOUD"], "invalid choice"),
        (["run"], "the following arguments are required: bot"),
        (["fly"], "invalid choice"),
    ],
)
def test_argument_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATOUT_TOKEN", raising=False)
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "atout-bot run" in capsys.readouterr().out


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "atout.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_process_exits_2_on_a_refused_token(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    proc = _cli("run", "random", "--server", f"127.0.0.1:{port}", "--token", "wrong")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2, err
    assert f"the arena rejected the token for 127.0.0.1:{port}: unknown bot token" in err
    assert servicer.attempts == 1


def test_process_plays_and_stops_cleanly_on_sigterm(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    proc = _cli("run", "heuristic", "--server", f"127.0.0.1:{port}", env={"ATOUT_TOKEN": TOKEN})
    try:
        conn = servicer.next_connection(timeout=20)
        assert conn.metadata["authorization"] == f"Bearer {TOKEN}"
        # signalled once it says it is connected (the call reaches the arena before its Welcome
        # is even sent), not after a sleep that a slow machine may need more than
        said: list[str] = []
        stderr = proc.stderr
        assert stderr is not None
        while not said or "connected as" not in said[-1]:
            line = stderr.readline()
            if not line:
                break
            said.append(line)
        assert said and "connected as testbot" in said[-1], "".join(said)
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        # (read from the file, not communicate(): that reads the pipe and would miss what
        # readline has buffered)
        err = "".join(said) + stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "connected as testbot" in err and "SIGTERM received: closing" in err
    assert conn.ended.wait(5)
