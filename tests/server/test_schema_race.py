"""Parts started together on a fresh database (what compose or systemd do): each creates the
schema it needs, and none exits on another's schema work (issue 30, finding 9: the API exited
with ``table bots already exists`` in 1 of 2 tries).

The four real parts (``atout-arena gateway``, ``worker``, ``beat``, ``api``) start at once, in
several rounds, on a new SQLite file and on an emptied PostgreSQL database. A second API and
a second game server start beside them: more parts at once, more chances to race.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import inspect, text

from atout_arena.core.db import make_engine
from atout_arena.core.models import Base

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROUNDS = 3
CLI = [sys.executable, "-m", "atout_arena.cli"]
ORGANIZER_TOKEN = "atout_admin_schema-race-organizer-0123"  # strong enough for Settings
# what each part prints once it is up (the worker's "ready" comes after its world, and so its
# database, is open: celery's worker_ready signal, then the line)
PARTS: dict[str, tuple[list[str], str]] = {
    "gateway": ([*CLI, "gateway", "--address", "127.0.0.1:0"], r"listening on 127\.0\.0\.1:\d+"),
    "gateway-2": ([*CLI, "gateway", "--address", "127.0.0.1:0"], r"listening on 127\.0\.0\.1:\d+"),
    "api": ([*CLI, "api", "--port", "0"], r"API listening on (http://127\.0\.0\.1:\d+)"),
    "api-2": ([*CLI, "api", "--port", "0"], r"API listening on (http://127\.0\.0\.1:\d+)"),
    "worker": ([*CLI, "worker", "--concurrency", "2", "--loglevel", "info"], r"\bready\b"),
    "beat": ([*CLI, "beat", "--loglevel", "info"], r"beat: Starting"),
}
# what a part that lost a race to another's schema work printed
RACE_SIGNS = ("Traceback", "OperationalError", "ProgrammingError", "IntegrityError", "already exists")


def _start_together(processes: Any, round_no: int, env: dict[str, str]) -> None:
    """Start every part of :data:`PARTS` at once; each must come up, and stay up, with no sign
    of a race in its output."""
    started = {}
    for name, (args, _) in PARTS.items():
        hostname = ["--hostname", f"race{round_no}-{time.monotonic_ns()}@%h"] if name == "worker" else []
        own = {"ATOUT_SERVER_ID": f"gs-race-{round_no}-{name}-{time.monotonic_ns()}"}  # two game servers
        started[name] = processes.start(f"{name}-r{round_no}", [*args, *hostname], {**env, **own})
    apis = []
    for name, (_, ready) in PARTS.items():
        found = started[name].wait_for_log(ready, timeout=60)
        if name.startswith("api"):
            apis.append(found.group(1))
    time.sleep(0.5)  # a part that failed after its line (the worker's keeper) has exited by now
    for name, process in started.items():
        log = process.log()
        assert process.alive(), f"round {round_no}: {name} exited ({process.popen.returncode}):\n{log}"
        signs = [sign for sign in RACE_SIGNS if sign in log]
        assert not signs, f"round {round_no}: {name} printed {signs}:\n{log}"
    for api in apis:
        health = httpx.get(f"{api}/healthz", timeout=10)
        assert health.status_code == 200, health.text
    for process in started.values():
        process.stop()


def _assert_schema_complete(url: str) -> None:
    engine = make_engine(url)
    try:
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert {t.name for t in Base.metadata.sorted_tables} <= tables


def test_parts_started_together_on_a_new_sqlite_file_all_come_up(
    processes, redis_url: str, tmp_path: Path
) -> None:
    for round_no in range(1, ROUNDS + 1):
        url = f"sqlite:///{tmp_path / f'round-{round_no}' / 'atout.db'}"  # its folder does not exist
        env = {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": url,
               "ATOUT_ADMIN_TOKEN": ORGANIZER_TOKEN, "ATOUT_DATA_DIR": str(tmp_path / f"data-{round_no}")}
        _start_together(processes, round_no, env)
        _assert_schema_complete(url)


def _empty(url: str) -> None:
    """Drop everything in the PostgreSQL database at ``url`` (tables, types, alembic's)."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    finally:
        engine.dispose()


def test_parts_started_together_on_an_empty_postgresql_database_all_come_up(
    processes, redis_url: str, postgres_url: str, tmp_path: Path
) -> None:
    for round_no in range(1, ROUNDS + 1):
        _empty(postgres_url)
        env = {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": postgres_url,
               "ATOUT_ADMIN_TOKEN": ORGANIZER_TOKEN, "ATOUT_DATA_DIR": str(tmp_path / f"data-{round_no}")}
        _start_together(processes, round_no, env)
        _assert_schema_complete(postgres_url)


def test_a_lock_file_is_all_the_schema_leaves_beside_a_sqlite_file(tmp_path: Path) -> None:
    """The lock is a file beside the database, kept (removing it would let two parts hold
    two different files' locks at once)."""
    from atout_arena.core.db import open_database

    engine, _ = open_database(f"sqlite:///{tmp_path / 'atout.db'}")
    engine.dispose()
    names = {p.name for p in tmp_path.iterdir()}
    assert {n for n in names if not re.fullmatch(r"atout\.db(-wal|-shm)?", n)} == {"atout.db.schema-lock"}


UPGRADE = "import sys; from atout_arena.migrations import upgrade; upgrade(sys.argv[1])"


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_upgrades_started_together_migrate_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """``alembic upgrade head`` run by several hosts at once (each container's entry point, say):
    one migrates, the others wait, then find the database at head."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'atout.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
        _empty(url)
    runs = [subprocess.Popen([sys.executable, "-c", UPGRADE, url], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True) for _ in range(4)]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0] * len(runs), "\n".join(outputs)
    _assert_schema_complete(url)
