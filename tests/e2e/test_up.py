"""``atout-arena up`` end to end, as an organizer runs it: the real command in its own process
on free ports, the organizer's commands run from another directory against it (through the
REST API, with the URL and token of the config file it writes), real SDK bots connected first,
a tournament played; a part killed with SIGKILL is started again; SIGTERM or Ctrl-C stops
everything, and no process it started is left (its descendants are watched through /proc).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_demo import ChildWatch, Proc, clean_env

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def organizer_token(output: str) -> str:
    """The organizer's token that ``up`` (or ``demo --keep``) prints."""
    found = re.search(r"organizer token  (atout_admin_\S+)", output)
    assert found, output
    return found.group(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Up:
    """``python -m atout_arena.cli up ...`` running, its output collected, its descendants watched."""

    def __init__(self, tmp_path: Path, *extra: str, workers: int = 1) -> None:
        self.api_port, self.grpc_port = free_port(), free_port()
        self.data_dir = tmp_path / "data"
        self.env = {**clean_env(), "XDG_CONFIG_HOME": str(tmp_path / "config")}
        self.config = tmp_path / "config" / "atout" / "arena.json"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "atout_arena.cli", "up", "--api-port", str(self.api_port),
             "--grpc-port", str(self.grpc_port), "--workers", str(workers),
             "--data-dir", str(self.data_dir), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env, cwd=tmp_path)
        self.lines: list[str] = []
        stdout = self.process.stdout
        assert stdout is not None
        self.reader = threading.Thread(
            target=lambda: self.lines.extend(iter(stdout.readline, "")), daemon=True)
        self.reader.start()
        self.watch = ChildWatch(self.process.pid).__enter__()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            assert self.process.poll() is None, f"up exited ({self.process.returncode}):\n{self.output}"
            assert time.monotonic() < deadline, f"no {text!r} within {timeout} s:\n{self.output}"
            time.sleep(0.1)

    def stop(self, sig: int, timeout: float = 60) -> int:
        self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail(f"up did not stop within {timeout} s after {sig}:\n{self.output}")
        self.reader.join(10)
        time.sleep(0.3)  # the watcher's last look
        self.watch.__exit__()
        return code

    def children(self) -> list[Proc]:
        return list(self.watch.seen.values())

    def child(self, fragment: str) -> Proc:
        found = [p for p in self.children() if fragment in p.cmdline and p.alive()]
        assert found, f"no running {fragment!r} among {[p.cmdline for p in self.children()]}"
        return found[0]


@pytest.fixture
def up_run(tmp_path: Path) -> Iterator[Up]:
    run = Up(tmp_path)
    yield run
    if run.process.poll() is None:
        run.stop(signal.SIGKILL)
    for p in run.children():  # never left behind by a failed test
        if p.alive():
            os.kill(p.pid, signal.SIGKILL)


def arena_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """An organizer's command, in its own process, with neither --api nor ATOUT_ADMIN_TOKEN."""
    return subprocess.run([sys.executable, "-m", "atout_arena.cli", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)


def test_up_serves_an_organizer_flow_restarts_a_killed_part_and_leaves_nothing(
    up_run: Up, tmp_path: Path
) -> None:
    up = up_run
    started = time.monotonic()
    up.wait_for("running; Ctrl-C (or SIGTERM) stops everything")
    ready_s = time.monotonic() - started
    out = up.output
    assert f"game server      127.0.0.1:{up.grpc_port}" in out
    assert f"API              http://127.0.0.1:{up.api_port}" in out
    token = organizer_token(out)
    assert f"ATOUT_ADMIN_TOKEN={token}" in out
    assert "owned by atout-arena up" in out  # the embedded Redis: up's, not a part's
    config = json.loads(up.config.read_text())
    assert config["api_url"] == f"http://127.0.0.1:{up.api_port}" and config["admin_token"] == token
    assert stat.S_IMODE(up.config.stat().st_mode) == 0o600
    parts = " ".join(p.cmdline for p in up.children())
    for part in ("redis-server", "atout_arena.cli gateway", "atout_arena.cli api", "atout_workers worker",
                 "atout_workers beat"):
        assert part in parts, f"{part!r} not among up's processes: {parts}"

    # The organizer, in another directory: register bots, connect them, play a tournament.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tokens = {}
    for name in ("alice", "bob", "carol"):
        added = arena_cli("bots", "add", name, env=up.env, cwd=elsewhere)
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip()
    bots = [subprocess.Popen([sys.executable, "-m", "atout.cli", "run", "random", "--server",
                              f"127.0.0.1:{up.grpc_port}"], env={**up.env, "ATOUT_TOKEN": t},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=elsewhere)
            for t in tokens.values()]
    try:
        deadline = time.monotonic() + 60
        while True:
            listed = json.loads(arena_cli("bots", "list", "--json", env=up.env, cwd=elsewhere).stdout)
            if all(b["connected"] for b in listed):
                break
            assert time.monotonic() < deadline, listed
            time.sleep(0.5)
        cup = arena_cli("tournament", "create", "cup", "--game", "fool", "--players", "3",
                        "--bots", "alice,bob,carol", "--start", "--wait", env=up.env, cwd=elsewhere)
        assert cup.returncode == 0, cup.stderr
        assert "tournament 1 started: 1 match sent to the workers" in cup.stdout
        assert "finished; 1/1 matches done" in cup.stdout
        assert all(name in cup.stdout for name in tokens) and "95% interval" in cup.stdout
        replay = arena_cli("replay", "1", env=up.env, cwd=elsewhere)
        assert replay.returncode == 0 and "as stored" in replay.stdout, replay.stderr
        assert sorted(p.name for p in elsewhere.iterdir()) == []  # no ./var, nothing at all

        # A part killed with SIGKILL is started again, and said so.
        api = up.child("atout_arena.cli api")
        os.kill(api.pid, signal.SIGKILL)
        up.wait_for("the API (api) exited with code -9; restarting it in 1 s (restart 1", timeout=30)
        up.wait_for("the API (api) restarted, pid", timeout=30)
        deadline = time.monotonic() + 60
        while arena_cli("bots", "list", env=up.env, cwd=elsewhere).returncode != 0:
            assert time.monotonic() < deadline, "the restarted API never answered"
            time.sleep(0.5)
        assert up.child("atout_arena.cli api").pid != api.pid
        worker = up.child("atout_workers worker")
        os.kill(worker.pid, signal.SIGKILL)
        up.wait_for("Celery worker 1 (worker-1) restarted", timeout=30)
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            bot.wait(30)

    # SIGTERM: everything stops, nothing is left, the config file no longer names it.
    code = up.stop(signal.SIGTERM)
    assert code == 0, up.output
    assert "stopped." in up.output
    left = [f"{p.pid} {p.cmdline}" for p in up.children() if p.alive()]
    assert left == []
    assert len(up.children()) >= 6  # redis, gateway, api (twice), worker (twice), beat
    assert not up.config.exists()
    assert (up.data_dir / "atout.db").exists() and (up.data_dir / "logs" / "api.log").exists()
    print(f"up ready in {ready_s:.1f} s")


def test_ctrl_c_stops_up_and_everything_it_started(tmp_path: Path) -> None:
    up = Up(tmp_path)
    try:
        up.wait_for("running; Ctrl-C (or SIGTERM) stops everything")
        token = organizer_token(up.output)
        # while it starts it says what it waits for, never silent until the address block
        starting = up.output.split("  game server      ")[0]
        assert re.search(r"^  starting         the game server, the API, 1 Celery worker and Celery beat "
                         r"\(sweeper, league seasons\)   \(logs in \S+/logs\)$", starting, re.M), starting
        ready = re.findall(r"^  ready            (.+) \(\d+\.\d s\)$", starting, re.M)
        assert ready == ["the game server", "the API", "Celery worker 1"], starting
        code = up.stop(signal.SIGINT)
    finally:
        if up.process.poll() is None:
            up.process.kill()
    assert code == 0, up.output
    assert [p.cmdline for p in up.children() if p.alive()] == []
    assert any("redis-server" in p.cmdline for p in up.children())
    # the data dir keeps the organizer token: the next `up` on it gives the same one
    again = Up(tmp_path)
    try:
        again.wait_for("running; Ctrl-C (or SIGTERM) stops everything")
        assert f"organizer token  {token}" in again.output
        assert again.stop(signal.SIGINT) == 0
    finally:
        if again.process.poll() is None:
            again.process.kill()
    assert [p.cmdline for p in again.children() if p.alive()] == []


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


def test_bad_options_are_one_line_exit_2_and_leave_nothing(tmp_path: Path) -> None:
    env = {**clean_env(), "XDG_CONFIG_HOME": str(tmp_path / "config"), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()

    def arena(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "atout_arena.cli", *args], capture_output=True,
                              text=True, timeout=60, env=env, cwd=tmp_path)

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        free = str(free_port())
        assert one_line(arena("up", "--api-port", "99999")) == \
            "error: --api-port 99999: a port is a number from 1 to 65535"
        assert one_line(arena("up", "--api-port", port, "--grpc-port", free)) == \
            f"error: --api-port {port}: the port is in use on 127.0.0.1 (is an arena running already?)"
        assert one_line(arena("up", "--api-port", free, "--grpc-port", port)).startswith(
            f"error: --grpc-port {port}: the port is in use")
        bad_dir = arena("up", "--data-dir", "/proc/nope", "--api-port", free, "--grpc-port", str(free_port()))
        assert one_line(bad_dir) == "error: --data-dir /proc/nope: cannot use it (No such file or directory)"
        assert one_line(arena("up", "--workers", "0")) == "error: --workers 0: at least 1"
        assert "invalid int value: 'x'" in one_line(arena("up", "--api-port", "x"))
        assert one_line(arena("demo", "--port", "99999")) == \
            "error: --port 99999: a port is a number from 1 to 65535"
        assert one_line(arena("demo", "--port", port)).startswith(f"error: --port {port}: the port is in use")
        assert one_line(arena("demo", "--grpc-port", port)).startswith(
            f"error: --grpc-port {port}: the port is in use")
        assert one_line(arena("demo", "--data-dir", "/proc/nope")).startswith("error: --data-dir /proc/nope")
        assert one_line(arena("api", "--port", port)).startswith(
            f"error: --port 127.0.0.1:{port}: the port is in use")
        assert one_line(arena("api", "--port", "99999")).startswith("error: --port 99999: a port is a number")
        assert one_line(arena("gateway", "--address", f"127.0.0.1:{port}")).startswith(
            f"error: --address 127.0.0.1:{port}: the port is in use")
        assert one_line(arena("gateway", "--address", "127.0.0.1:99999")).startswith("error: --address 99999")
    # an unexpected error (here SQLAlchemy's, for an unknown database): one line; --debug: its traceback
    env.update(ATOUT_DATABASE_URL="nosuchdb://x", ATOUT_REDIS_URL="redis://127.0.0.1:1/0")
    gateway = ("gateway", "--address", "127.0.0.1:0")
    assert one_line(arena(*gateway)) == ("error: NoSuchModuleError: Can't load plugin: "
                                         "sqlalchemy.dialects:nosuchdb (--debug shows the traceback)")
    debug = arena("--debug", *gateway)
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
    assert list((tmp_path / "tmp").iterdir()) == []  # no temporary folder left by the demo
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]  # no ./var, no config


def test_demo_keep_is_up_plus_the_demo(tmp_path: Path) -> None:
    """``demo --keep``: after its tournament the arena keeps serving, supervised as by ``up``
    (a killed part is started again), its export lines carry ``ATOUT_ADMIN_TOKEN``, the config
    file lets the organizer's commands reach it, and Ctrl-C leaves nothing."""
    env = {**clean_env(), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    grpc_port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "atout_arena.cli", "demo", "--game", "fool", "--bots", "3",
         "--games-per-pairing", "1", "--port", "0", "--grpc-port", str(grpc_port), "--keep"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    lines: list[str] = []
    stdout = process.stdout
    assert stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stdout.readline, "")), daemon=True)
    reader.start()
    watch = ChildWatch(process.pid).__enter__()

    def wait_for(text: str, timeout: float = 150) -> None:
        deadline = time.monotonic() + timeout
        while text not in "".join(lines):
            assert process.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, f"no {text!r}:\n{''.join(lines)}"
            time.sleep(0.1)

    try:
        wait_for("a part that dies is started again")
        out = "".join(lines)
        token = organizer_token(out)
        assert re.search(rf"export ATOUT_API_URL=http://127\.0\.0\.1:\d+ ATOUT_ADMIN_TOKEN={token}", out)
        assert f"game server      127.0.0.1:{grpc_port}" in out
        listed = arena_cli("bots", "list", "--json", env=env, cwd=tmp_path)  # through the config file
        assert listed.returncode == 0, listed.stderr
        assert {b["name"] for b in json.loads(listed.stdout)} >= {"heuristic-1", "random-2", "heuristic-3"}
        bot = next(p for p in watch.seen.values() if "atout.cli run random" in p.cmdline and p.alive())
        os.kill(bot.pid, signal.SIGKILL)
        wait_for("bot random-2 (bot-random-2) restarted", timeout=30)
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 0, "".join(lines)
    finally:
        if process.poll() is None:
            process.kill()
        reader.join(10)
        time.sleep(0.3)
        watch.__exit__()
    assert [p.cmdline for p in watch.seen.values() if p.alive()] == []
    assert not (tmp_path / "config" / "atout" / "arena.json").exists()
