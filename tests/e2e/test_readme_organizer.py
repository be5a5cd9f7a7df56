"""The README's organizer section, word for word: ``.venv/bin/atout-arena up`` (here on free
ports), then its "organizer quickstart" block run by bash from a directory of its own (where
``.venv`` is this installation), with only the game server's port put in. The bots are
connected before the tournament, and the tournament between them is played and replayed; the
tokens are kept where git ignores them, and the bots are stopped at the end. Then its curl
block, with the API's address and the organizer token put in, works on the tournament it
creates."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_demo import read_proc
from test_up import Up, organizer_token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def organizer_blocks() -> tuple[str, str, str]:
    """The section's ``up`` block, its quickstart block and its curl block."""
    section = README.read_text().split("## For organizers\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    quickstart = next(b for b in blocks if b.startswith("# organizer quickstart"))
    curl = next(b for b in blocks if b.startswith("export ATOUT_ADMIN_TOKEN=atout_admin_..."))
    return blocks[0], quickstart, curl


def git_ignores(path: str) -> bool:
    """Whether the repository's .gitignore keeps ``path`` (relative to its root) out of git."""
    return subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", path],
                          check=False).returncode == 0


def test_the_readme_organizer_quickstart_runs_as_written(tmp_path: Path) -> None:
    up_block, script, curl = organizer_blocks()
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
        # the tokens (and logs, pids) in var/bots/ only, which git ignores, and readable by their owner
        assert sorted(p.name for p in work.iterdir() if p.name != ".venv") == ["var"]
        bots = work / "var" / "bots"
        assert sorted(p.name for p in bots.iterdir()) == sorted(
            f"{bot}.{kind}" for bot in ("alice", "bob", "carol") for kind in ("log", "pid", "token"))
        assert (bots.stat().st_mode & 0o777) == 0o700
        assert all(git_ignores(f"var/bots/{bot}.token") and git_ignores(f"{bot}.token")
                   for bot in ("alice", "bob", "carol"))
        # the bots are stopped by the block's last line: none is left retrying
        pids = [int((bots / f"{bot}.pid").read_text()) for bot in ("alice", "bob", "carol")]
        deadline = time.monotonic() + 20
        while [pid for pid in pids if read_proc(pid) is not None]:
            assert time.monotonic() < deadline, [read_proc(pid) for pid in pids]
            time.sleep(0.1)

        # the curl block: the tournament it creates (the second) is the one it then reads
        curl_run = subprocess.run(
            ["bash", "-e", "-c", curl.replace("atout_admin_...", organizer_token(up.output))
             .replace("localhost:8000", f"127.0.0.1:{up.api_port}") + '\necho "tournament id: $id"'],
            capture_output=True, text=True, env=up.env, cwd=work, timeout=60, check=False)
        assert curl_run.returncode == 0, curl_run.stderr
        assert "tournament id: 2\n" in curl_run.stdout, curl_run.stdout
        assert re.search(r'"id":\s*2,\s*"name":\s*"cup"', curl_run.stdout), curl_run.stdout
    finally:
        if run is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGTERM)  # the bots
        if up.process.poll() is None:
            assert up.stop(signal.SIGINT) == 0
    assert [p.cmdline for p in up.children() if p.alive()] == []
