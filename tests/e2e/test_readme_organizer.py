"""The README's organizer section, word for word: ``.venv/bin/atout-arena up`` (here on free
ports), then its "organizer quickstart" block run by bash from a directory of its own (where
``.venv`` is this installation), with only the game server's port put in. The bots are
connected before the tournament, and the tournament between them is played and replayed."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_up import Up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

README = Path(__file__).resolve().parents[2] / "README.md"


def organizer_blocks() -> tuple[str, str]:
    """The section's ``up`` block and its quickstart block."""
    section = README.read_text().split("## For organizers\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    quickstart = next(b for b in blocks if b.startswith("# organizer quickstart"))
    return blocks[0], quickstart


def test_the_readme_organizer_quickstart_runs_as_written(tmp_path: Path) -> None:
    up_block, script = organizer_blocks()
    assert up_block.strip() == ".venv/bin/atout-arena up"
    assert script.index("atout-bot run") < script.index("tournament create")  # bots connected first
    assert "ATOUT_ADMIN_TOKEN" not in script  # the config file written by up gives the token
    up = Up(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.prefix))  # the README's .venv/bin/...: this installation
    run = None
    try:
        up.wait_for("running; Ctrl-C (or SIGTERM) stops everything")
        run = subprocess.Popen(
            ["bash", "-e", "-c", script.replace("127.0.0.1:50051", f"127.0.0.1:{up.grpc_port}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=up.env, cwd=work,
            start_new_session=True)  # the bots it starts with & are in its process group
        out, err = run.communicate(timeout=240)
        assert run.returncode == 0, f"{out}\n{err}"
        listed = re.compile(r"^\s*\d+ │ (alice|bob|carol) .*│ enabled │")  # bots list
        rows = [line for line in out.splitlines() if listed.match(line)]
        assert len(rows) == 3 and all("│ yes " in row for row in rows), out  # connected first
        assert "tournament 1 started: 1 match sent to the workers" in out
        assert "finished; 1/1 matches done" in out and "95% interval" in out
        assert re.search(r"match 1: \d+ actions replayed; .*as stored", out), out
        assert "Traceback" not in err and "Warning" not in err, err
        assert sorted(p.name for p in work.iterdir() if p.name != ".venv") == [
            "alice.log", "alice.token", "bob.log", "bob.token", "carol.log", "carol.token"]
    finally:
        if run is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGTERM)  # the bots
        if up.process.poll() is None:
            assert up.stop(signal.SIGINT) == 0
    assert [p.cmdline for p in up.children() if p.alive()] == []
