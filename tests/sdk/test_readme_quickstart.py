"""The quickstart bot of sdk/README.md runs as printed, and beats random bots."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from atout.bots import RandomBot
from atout.local import play

README = Path(__file__).resolve().parents[2] / "sdk" / "README.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_quickstart_bot_and_local_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bot_code = next(b for b in _blocks() if b.startswith("# mybot.py"))
    assert len(bot_code.splitlines()) <= 22
    (tmp_path / "mybot.py").write_text(bot_code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    local = next(b for b in _blocks() if "from atout.local import play" in b)
    exec(compile(local, "README.md", "exec"), {})  # the snippet as printed

    from mybot import CautiousBot

    first = sum(
        play("merde", [CautiousBot(), RandomBot(), RandomBot()], seed=seed).ranking[0] == 1
        for seed in range(60)
    )
    assert first > 60 / 3 * 1.2, f"the quickstart bot came first in only {first} of 60 games"


def _console_commands() -> list[tuple[str, str]]:
    """``(command, output)`` of each ``$ atout-bot ...`` line in the README's console blocks."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", README.read_text(), flags=re.S):
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = part.partition("\n")
            found.append((command, output))
    return found


def _masked(text: str) -> str:
    """Output without what depends on the machine: times and memory."""
    text = re.sub(r"\d+ decisions, [\d.]+ s\)", "N decisions, T s)", text)
    text = re.sub(r"decision time .*", "decision time ...", text)
    text = re.sub(r"peak memory .*", "peak memory ...", text)
    text = re.sub(r"(\d+) games in [\d.]+ s", r"\1 games in T s", text)
    return re.sub(r'"seconds": [\d.]+', '"seconds": T', text)


@pytest.mark.timeout(120)
def test_readme_validate_and_match_outputs_are_real(tmp_path: Path) -> None:
    """The README's validate and match examples print what the README shows (times aside)."""
    bot_code = next(b for b in _blocks() if b.startswith("# mybot.py"))
    (tmp_path / "mybot.py").write_text(bot_code)
    commands = _console_commands()
    assert any(c.startswith("atout-bot validate mybot:CautiousBot") for c, _ in commands)
    assert sum(c.startswith("atout-bot test") for c, _ in commands) >= 3
    for command, expected in commands:
        args = shlex.split(command.replace(" 2>/dev/null", ""))
        assert args[0] == "atout-bot"
        proc = subprocess.run(
            [sys.executable, "-m", "atout.cli", *args[1:]],
            capture_output=True, text=True, timeout=100, cwd=tmp_path, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, f"{command}:\n{proc.stderr}"
        assert _masked(proc.stdout) == _masked(expected), command
