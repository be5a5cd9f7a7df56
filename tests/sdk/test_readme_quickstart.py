"""The quickstart bot of sdk/README.md runs as printed, and beats random bots."""

from __future__ import annotations

import re
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
