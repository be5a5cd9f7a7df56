"""Fixtures of the workers' tests: real Celery worker processes, beat, bots and tournaments.

Everything runs on the session's real Redis, SQLite database and game server (tests/conftest.py).
Workers use short liveness settings (:data:`FAST`) so that the sweeper tests take seconds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import wait_until

WORKER_BOTS = Path(__file__).resolve().parent / "worker_bots.py"
WORKER_BOT_CLASSES = ("Sleepy", "QuitAfter")

FAST = {
    "ATOUT_HEARTBEAT_S": "0.3",
    "ATOUT_MATCH_STALE_S": "2",
    "ATOUT_SWEEP_INTERVAL_S": "0.5",
    "ATOUT_REQUEUE_AFTER_S": "3",
    "ATOUT_LEAGUE_TICK_S": "0.5",
}


@pytest.fixture(scope="session")
def sessions(database_url: str):  # type: ignore[no-untyped-def]
    from server.db import make_engine, make_session_factory

    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def celery_app(redis_url: str):  # type: ignore[no-untyped-def]
    """The Celery app of this (test) process, sending to the session's Redis."""
    from workers.celery_app import app, configure

    configure(app, redis_url)
    return app


@pytest.fixture
def worker_env(redis_url: str, database_url: str) -> dict[str, str]:
    return {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": database_url, **FAST}


@pytest.fixture
def start_worker(processes, worker_env) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    """``start_worker(name, concurrency=32, **env)``: a real ``atout-arena worker`` process."""

    def start(name: str = "w1", concurrency: int = 32, wait: bool = True, **env: str):  # type: ignore[no-untyped-def]
        process = processes.start(
            f"worker-{name}",
            [sys.executable, "-m", "workers.cli", "worker", "--concurrency", str(concurrency),
             "--hostname", f"{name}@%h", "--loglevel", "info"],
            {**worker_env, **env},
        )
        if wait:
            process.wait_for_log(r"\bready\b", timeout=30)
        return process

    return start


@pytest.fixture
def start_beat(processes, worker_env, tmp_path) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    def start(**env: str):  # type: ignore[no-untyped-def]
        process = processes.start(
            "beat", [sys.executable, "-m", "workers.cli", "beat", "--loglevel", "info"],
            {**worker_env, "ATOUT_DATA_DIR": str(tmp_path / "beat"), **env},
        )
        process.wait_for_log(r"beat: Starting", timeout=30)
        return process

    return start


@pytest.fixture
def arena_bots(game_server, make_bot, spawn_bot, redis_client) -> Callable[..., list]:  # type: ignore[no-untyped-def]
    """``arena_bots(["random", "heuristic", "Sleepy", ...], *args, **env) -> [BotInfo, ...]``:
    registered bots, each run by ``atout-bot run`` in its own process (extra ``args``, ``env``)
    and connected before this returns. Names of :mod:`worker_bots` classes are found there;
    a spec of ``None`` registers a bot that never connects."""
    from server.relay import is_connected

    def make(specs: list[str | None], *args: str, prefix: str = "bot", **env: str) -> list:
        infos = []
        for spec in specs:
            info, token = make_bot(f"{prefix}-{(spec or 'absent').rsplit(':', 1)[-1]}")
            if spec is not None:
                extra_env = dict(env)
                if spec in WORKER_BOT_CLASSES:  # importable by module name (a path would name the log file)
                    spec = f"worker_bots:{spec}"
                    extra_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(WORKER_BOTS.parent),
                                                                            os.environ.get("PYTHONPATH")]))
                spawn_bot(game_server.info["address"], token, spec, *args, **extra_env)
            infos.append((info, spec))
        for info, spec in infos:
            if spec is not None:
                wait_until(lambda info=info: is_connected(redis_client, info.bot_id), 30, f"bot {info.name}")
        return [info for info, _ in infos]

    return make


@pytest.fixture
def run_tournament(sessions, celery_app, clean_queues) -> Callable[..., int]:  # type: ignore[no-untyped-def]
    """``run_tournament(bots, game=..., **spec) -> id``: create, start and dispatch a tournament
    (``via_task=True``: started by the ``atout.start_tournament`` task, as the API does)."""
    from workers.tasks import dispatch_matches
    from workers.tasks import start_tournament as start_task
    from workers.tournaments import create_tournament, start_tournament

    def run(bots: list, name: str = "test", via_task: bool = False, **spec: Any) -> int:
        tid = create_tournament(sessions, name=name, bots=[b.name for b in bots], **spec)
        if via_task:
            start_task.delay(tid)
        else:
            dispatch_matches(start_tournament(sessions, tid))
        return tid

    return run


@pytest.fixture
def wait_finished(sessions) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    from server.models import Tournament

    def wait(tournament_id: int, timeout: float = 90.0) -> None:
        def done() -> bool:
            with sessions() as session:
                return session.get(Tournament, tournament_id).status == "finished"

        wait_until(done, timeout, f"tournament {tournament_id} to finish", poll_s=0.1)

    return wait


@pytest.fixture
def clean_queues(redis_client) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Empty task queues before and after the test (a test's leftovers never reach the next)."""
    from workers.celery_app import QUEUES

    redis_client.delete(*QUEUES)
    yield
    redis_client.delete(*QUEUES)
