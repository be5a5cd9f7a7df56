"""``atout-arena demo`` end to end, as a newcomer runs it: a fresh virtual environment, the
README's install command (``pip install -e ./sdk -e .``), then the command itself.

Checked: the printed standings (every bot, its match count, Elo with its interval), the exit
code, and that nothing the demo started is left running — after a normal end, after Ctrl-C in
the middle of the tournament, and after a part fails to start. "Started by the demo" is known
two ways: its child processes, watched while it runs, and every process whose command line or
environment names the demo's data dir (each part gets ``ATOUT_DATA_DIR``; redis-server has the
dir in its arguments).

Select with ``pytest -m e2e``; they run by default.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[2]
PART_NAMES = re.compile(
    r"redis-server|celery|atout-arena|atout-bot|atout_arena\.cli|atout_workers|atout\.cli"
)
ROW = re.compile(  # rank, bot, Elo, ± interval, points, wins, matches, faults
    r"^\s*(\d+)\s+(\S+)\s+(\d+)\s+(?:±|\+/-)(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)", re.MULTILINE
)


# -- the process table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Proc:
    pid: int
    start: str  # start time in clock ticks: with the pid, names a process even if pids are reused
    cmdline: str

    def alive(self) -> bool:
        info = read_proc(self.pid)
        return info is not None and info.start == self.start


def read_proc(pid: int) -> Proc | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":  # a zombie has finished; its parent just has not reaped it yet
        return None
    return Proc(pid, fields[19], cmdline.strip())


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return None


def all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def mentions(pid: int, text: str) -> bool:
    """Whether the process's command line or environment holds ``text``."""
    needle = text.encode()
    for name in ("cmdline", "environ"):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, PermissionError):
            if needle in Path(f"/proc/{pid}/{name}").read_bytes():
                return True
    return False


class ChildWatch:
    """Records every descendant of ``root`` while it runs (polling /proc)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[tuple[int, str], Proc] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ChildWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            parents = {pid: parent_of(pid) for pid in all_pids()}
            family, grew = {self.root}, True
            while grew:
                grew = False
                for pid, parent in parents.items():
                    if parent in family and pid not in family:
                        family.add(pid)
                        grew = True
            for pid in family - {self.root}:
                info = read_proc(pid)
                # the latest look (a child seen between fork and exec still shows its parent's
                # command), but never an exited one's: a zombie's cmdline reads empty
                if info is not None and (info.cmdline.strip() or (info.pid, info.start) not in self.seen):
                    self.seen[(info.pid, info.start)] = info
            self._stop.wait(0.05)


@dataclass
class DemoRun:
    returncode: int
    output: str
    children: list[Proc] = field(default_factory=list)

    @property
    def data_dir(self) -> Path:
        found = re.search(r"data dir\s+(\S+)", self.output)
        assert found, f"no data dir line in the output:\n{self.output}"
        return Path(found.group(1))


def leftovers(run: DemoRun, before: set[int]) -> list[str]:
    """What the demo started that is still running."""
    left = [f"{p.pid} {p.cmdline}" for p in run.children if p.alive()]
    for pid in set(all_pids()) - before:
        info = read_proc(pid)
        if info is not None and PART_NAMES.search(info.cmdline) and mentions(pid, str(run.data_dir)):
            left.append(f"{pid} {info.cmdline}")
    return sorted(set(left))


def clean_env() -> dict[str, str]:
    """No ATOUT_* (the demo must not share a Redis with other tests' workers), no PYTHONPATH
    (the virtual environment's own installation runs)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ATOUT_") and k != "PYTHONPATH"}


def run_demo(command: list[str], *, env: dict[str, str] | None = None, timeout: float = 150,
             interrupt_when: str | None = None, interrupt_after_s: float = 0.0) -> DemoRun:
    """Run the demo to its end (or SIGINT it once ``interrupt_when`` shows in its output)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env or clean_env(), cwd=ROOT)
    lines: list[str] = []
    with ChildWatch(process.pid) as watch:
        stdout = process.stdout
        assert stdout is not None
        reader = threading.Thread(target=lambda: lines.extend(iter(stdout.readline, "")), daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        interrupted = False
        while process.poll() is None:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"the demo did not end within {timeout} s:\n{''.join(lines)}")
            if interrupt_when and not interrupted and interrupt_when in "".join(lines):
                time.sleep(interrupt_after_s)
                process.send_signal(signal.SIGINT)
                interrupted = True
            time.sleep(0.05)
        reader.join(10)
    return DemoRun(process.returncode, "".join(lines), list(watch.seen.values()))


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with the project installed by the README's pip command."""
    root = tmp_path_factory.mktemp("demo-venv")
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    install = subprocess.run(
        [str(root / "bin" / "pip"), "install", "--quiet", "-e", "./sdk", "-e", "."],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env=clean_env(),
    )
    assert install.returncode == 0, f"pip install failed:\n{install.stdout[-3000:]}\n{install.stderr[-3000:]}"
    yield root


@pytest.fixture
def before() -> set[int]:
    return set(all_pids())


# -- tests ------------------------------------------------------------------------------------


def test_the_demo_plays_a_tournament_shows_standings_and_leaves_nothing(venv: Path, before: set[int]) -> None:
    run = run_demo([str(venv / "bin" / "atout-arena"), "demo", "--game", "fool", "--bots", "3",
                    "--games-per-pairing", "1", "--port", "0"])
    assert run.returncode == 0, run.output
    # a round robin of 3 bots at 2 seats, once per pairing: 3 matches, 2 for each bot
    assert re.search(r"^3 matches, [\d,]+ decisions in", run.output, re.MULTILINE), run.output
    rows = {m.group(2): m for m in ROW.finditer(run.output)}
    assert set(rows) == {"heuristic-1", "random-2", "heuristic-3"}, run.output
    for row in rows.values():
        elo, interval, matches = int(row.group(3)), int(row.group(4)), int(row.group(7))
        assert matches == 2, run.output
        assert 500 < elo < 2500 and interval > 0, run.output
    assert sorted(int(m.group(1)) for m in rows.values())[0] == 1
    # every part was a process of its own, and none is left
    started = " ".join(p.cmdline for p in run.children)
    parts = ("redis-server", "atout_arena.cli gateway", "atout_arena.cli api", "atout_workers worker",
             "atout.cli run")
    for part in parts:
        assert part in started, f"{part!r} not among the demo's processes: {started}"
    assert sum("atout.cli run" in p.cmdline for p in run.children) == 3
    assert leftovers(run, before) == []
    assert not run.data_dir.exists(), "the temporary data dir should be removed"
    assert "stopped." in run.output


def test_ctrl_c_in_the_middle_stops_everything(venv: Path, before: set[int], tmp_path: Path) -> None:
    data_dir = tmp_path / "demo"
    started = time.monotonic()
    run = run_demo([str(venv / "bin" / "atout-arena"), "demo", "--port", "0", "--data-dir", str(data_dir)],
                   interrupt_when="progress:", interrupt_after_s=1.0)
    assert run.returncode == 130, run.output
    assert "interrupted" in run.output and "stopped." in run.output, run.output
    assert time.monotonic() - started < 60, "the default tournament should have been cut short"
    assert len(run.children) >= 9, [p.cmdline for p in run.children]  # redis, 4 parts, 4 bots at least
    assert leftovers(run, before) == []
    # --data-dir keeps the database and the logs; the tournament was cancelled, not finished
    logs = {"gateway.log", "api.log", "worker-1.log", "bot-heuristic-1.log"}
    assert logs <= {p.name for p in data_dir.iterdir()}
    with contextlib.closing(sqlite3.connect(data_dir / "atout.db")) as db:
        assert db.execute("SELECT status FROM tournaments").fetchall() == [("cancelled",)]


def test_a_bad_setting_is_one_line_and_starts_nothing() -> None:
    """One settings object, read by the demo first: a bad value stops it before any part starts."""
    env = {**clean_env(), "ATOUT_WORKER_CONCURRENCY": "many"}
    run = run_demo([sys.executable, "-m", "atout_arena.cli", "demo", "--bots", "2", "--game", "fool",
                    "--games-per-pairing", "1", "--port", "0"], env=env)
    assert run.returncode == 2, run.output
    assert run.output.strip().splitlines() == [
        "error: ATOUT_WORKER_CONCURRENCY='many': Input should be a valid integer, unable to parse string "
        "as an integer"
    ]
    assert run.children == []  # no part was started


SITECUSTOMIZE = """
import os
import sys
if "worker" in sys.orig_argv and "demo" not in sys.orig_argv:
    print("sitecustomize: this worker fails as it starts, for the test", file=sys.stderr, flush=True)
    os._exit(3)
"""


def test_a_part_that_fails_to_start_is_reported_with_its_log(before: set[int], tmp_path: Path) -> None:
    # Every worker process dies as it starts (a sitecustomize on PYTHONPATH, which the demo hands
    # on to its parts): the demo says which part failed, with the tail of its log.
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**clean_env(), "PYTHONPATH": str(tmp_path)}
    run = run_demo([sys.executable, "-m", "atout_arena.cli", "demo", "--bots", "2", "--game", "fool",
                    "--games-per-pairing", "1", "--port", "0"], env=env)
    assert run.returncode == 1, run.output
    failed = r"error: Celery worker \d exited with code 3 before it was ready"
    assert re.search(failed, run.output), run.output
    assert "this worker fails as it starts" in run.output  # the tail of the worker's log
    assert leftovers(run, before) == []
    assert run.data_dir.exists()  # kept for its logs
    assert (run.data_dir / "worker-1.log").exists()
    shutil.rmtree(run.data_dir)
