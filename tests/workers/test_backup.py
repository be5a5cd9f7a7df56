"""Backups: ``atout-arena backup``, ``restore`` and ``verify``, as the commands, on real databases
holding matches played by the real engines and stored by the workers' own code (``run_match``
with an in-process asker, as tests/workers/test_worker_play.py plays them).

PostgreSQL: a cluster whose user has a password (scram), backed up, restored into a FRESH
cluster, every match verified by replay there and every row equal to the source's; a restore
into a non-empty database refused (then done with ``--clean``), a truncated file refused
without a trace in the target. SQLite: the same round trip. A wrong file, a missing
``pg_dump`` and an unreachable server: one line each, exit code 2, no password shown.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import Cluster
from sqlalchemy import select, text, update

from atout_arena.core import backup as backups
from atout_arena.core.db import make_engine
from atout_arena.core.match import Answer, DecisionAsk
from atout_arena.core.models import Base, Match
from atout_arena.core.settings import Settings
from atout_arena.services.bots import BotRegistry
from atout_arena.services.tournaments import create_tournament, finalize_tournament, start_tournament
from atout_workers.play import run_match
from atout_workers.world import build_world

pytestmark = pytest.mark.timeout(120)

ARENA = Path(sys.executable).parent / "atout-arena"
PASSWORD = "s3cret-Pa55word"  # a throwaway cluster's


def random_asker(seed: int) -> Any:
    rng = random.Random(seed)

    def ask(a: DecisionAsk) -> Answer:
        return Answer(rng.choice(a.legal_actions), 1.0)

    return ask


def play_an_arena(url: str, redis_url: str) -> int:
    """Two finished tournaments (merde and fool) and a started one left unplayed, in the database
    of ``url``; returns the number of finished matches."""
    world = build_world(Settings(database_url=url, redis_url=redis_url, heartbeat_s=0.1, match_stale_s=0.5))
    try:
        registry = BotRegistry(world.sessions)
        names = [registry.add(f"bk{i}", owner="tests")[0].name for i in range(4)]
        finished = 0
        plays: list[tuple[str, dict[str, Any]]] = [
            ("merde", {"players": 3, "options": {"deals": 2}}),
            ("fool", {"players": 2, "games_per_pairing": 2}),
        ]
        for n, (game, spec) in enumerate(plays):
            bots = names if game == "merde" else names[:3]
            tid = create_tournament(world.sessions, name=f"cup-{game}", bots=bots, seed=7 + n, game=game,
                                    **spec)
            for i, mid in enumerate(start_tournament(world.sessions, tid)):
                assert run_match(world, mid, asker=random_asker(i)) == "finished"
                finished += 1
            assert finalize_tournament(world.sessions, tid)
        tid = create_tournament(world.sessions, name="later", bots=names[:2], seed=9, game="tiercon",
                                players=2)
        assert start_tournament(world.sessions, tid)  # queued, not played
        return finished
    finally:
        world.close()


def rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every arena table, in primary-key order."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return {table.name: [tuple(row) for row in connection.execute(
                        select(table).order_by(*table.primary_key.columns))]
                    for table in Base.metadata.sorted_tables}
    finally:
        engine.dispose()


def arena(*args: str, url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``atout-arena ARGS`` in another process, its database given by ATOUT_DATABASE_URL."""
    env = {**os.environ, "ATOUT_DATABASE_URL": url, "ATOUT_DATA_DIR": str(cwd / "data")}
    return subprocess.run([str(ARENA), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert PASSWORD not in result.stdout + result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    return lines[0]


def with_password(cluster: Cluster) -> str:
    """The cluster's user gets a password, required from now on (scram over its socket): the
    URL that carries it."""
    engine = make_engine(cluster.url)
    with engine.begin() as connection:
        connection.execute(text(f"ALTER USER atout PASSWORD '{PASSWORD}'"))
    engine.dispose()
    (cluster.data / "pg_hba.conf").write_text("local all all scram-sha-256\n")
    cluster.run("pg_ctl", "-D", str(cluster.data), "reload")
    time.sleep(0.3)  # the postmaster reloads on SIGHUP
    return cluster.url.replace("atout@", f"atout:{PASSWORD}@")


def test_a_postgresql_backup_restores_into_a_fresh_cluster_and_every_match_replays(
    cluster: Cluster, redis_url: str, tmp_path: Path
) -> None:
    source = with_password(cluster)
    wrong = source.replace(PASSWORD, "not-the-password")
    assert "password authentication failed" in one_line_error(arena("backup", "x", url=wrong, cwd=tmp_path))
    finished = play_an_arena(source, redis_url)
    file = tmp_path / "arena.dump"
    said = ok(arena("backup", str(file), url=source, cwd=tmp_path))
    assert said.startswith(f"backed up PostgreSQL database atout on {cluster.directory} to {file}: ")
    assert f"{finished + 1} matches ({finished} finished, 1 queued), 3 tournaments, 4 bots" in said
    assert file.read_bytes().startswith(b"PGDMP") and file.stat().st_mode & 0o777 == 0o600

    fresh = Cluster()
    try:
        fresh.create()
        said = ok(arena("restore", str(file), url=fresh.url, cwd=tmp_path))
        assert said.startswith(f"restored {file} into PostgreSQL database atout on {fresh.directory}: ")
        assert f"{finished + 1} matches ({finished} finished, 1 queued)" in said
        assert ok(arena("verify", url=fresh.url, cwd=tmp_path)).strip() == \
            f"{finished} finished matches verified by replay: {finished} ok, 0 diverge"
        assert rows(fresh.url) == rows(source)  # the same matches, results, ratings, secrets...

        # a second restore: refused, then done with --clean
        refused = one_line_error(arena("restore", str(file), url=fresh.url, cwd=tmp_path))
        assert "is not empty" in refused and "--clean" in refused
        ok(arena("restore", "--clean", str(file), url=fresh.url, cwd=tmp_path))
        assert rows(fresh.url) == rows(source)

        # a truncated file: refused, and the (empty) target left empty: one transaction
        fresh.run("createdb", "-h", str(fresh.directory), "-U", "atout", "other")
        other = fresh.url.replace("/atout?", "/other?")
        cut = tmp_path / "cut.dump"
        cut.write_bytes(file.read_bytes()[:-200])  # its table of contents whole, its data not
        assert one_line_error(arena("restore", str(cut), url=other, cwd=tmp_path)) == (
            "error: pg_restore failed: could not read from input file: end of file (nothing was restored: "
            "pg_restore ran in one transaction)")
        engine = make_engine(other)
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")) == 0
        engine.dispose()

        # a result changed behind the arena's back: verify says where, exit code 1
        engine = make_engine(fresh.url)
        with engine.begin() as connection:
            first = connection.scalar(select(Match.id).where(Match.status == "finished").order_by(Match.id))
            connection.execute(update(Match).where(Match.id == first).values(scores=[99, 0, 0]))
        engine.dispose()
        found = arena("verify", url=fresh.url, cwd=tmp_path)
        assert found.returncode == 1, found
        assert found.stdout.splitlines() == [
            f"match {first}: DIVERGES: " + found.stdout.split("DIVERGES: ")[1].splitlines()[0],
            f"{finished} finished matches verified by replay: {finished - 1} ok, 1 diverge",
        ]
    finally:
        fresh.remove()


def test_a_sqlite_backup_round_trip_and_the_files_a_restore_refuses(redis_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'live' / 'atout.db'}"
    finished = play_an_arena(source, redis_url)
    file = tmp_path / "arena.sqlite"
    said = ok(arena("backup", str(file), url=source, cwd=tmp_path))
    assert f"{finished + 1} matches ({finished} finished, 1 queued), 3 tournaments, 4 bots" in said
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("arena")) == ["arena.sqlite"]
    assert file.stat().st_mode & 0o777 == 0o600

    target = f"sqlite:///{tmp_path / 'restored' / 'atout.db'}"
    ok(arena("restore", str(file), url=target, cwd=tmp_path))
    assert ok(arena("verify", url=target, cwd=tmp_path)).strip() == \
        f"{finished} finished matches verified by replay: {finished} ok, 0 diverge"
    assert rows(target) == rows(source)

    assert "--clean" in one_line_error(arena("restore", str(file), url=target, cwd=tmp_path))
    corrupt = tmp_path / "corrupt.bak"
    corrupt.write_bytes(b"\x00garbage" * 100)
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    assert one_line_error(arena("restore", str(corrupt), url=empty, cwd=tmp_path)) == (
        f"error: {corrupt} is not a backup of atout-arena: neither a PostgreSQL custom-format dump "
        "nor a SQLite database")
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(file.read_bytes()[:100] + b"\xff" * (file.stat().st_size - 100))
    refused = one_line_error(arena("restore", str(damaged), url=empty, cwd=tmp_path))
    assert "damaged SQLite database" in refused
    assert not (tmp_path / "empty.db").exists() or rows(empty)["matches"] == []
    # a SQLite backup into PostgreSQL: refused before any connection
    refused = one_line_error(arena("restore", str(file), url="postgresql+psycopg://u@127.0.0.1:1/db",
                                   cwd=tmp_path))
    assert "is a backup of a SQLite database" in refused
    assert "no SQLite database at" in one_line_error(
        arena("backup", str(tmp_path / "x"), url=f"sqlite:///{tmp_path / 'none.db'}", cwd=tmp_path))
    assert not (tmp_path / "none.db").exists()


def test_a_missing_pg_dump_and_an_unreachable_server_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from atout_arena.cli import main

    unreachable = f"postgresql+psycopg://atout:{PASSWORD}@127.0.0.1:1/atout?connect_timeout=3"
    monkeypatch.setenv("ATOUT_DATABASE_URL", unreachable)
    assert main(["backup", str(tmp_path / "x.dump")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach the PostgreSQL database atout on 127.0.0.1:1: ") and \
        err.count("\n") == 1 and PASSWORD not in err
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(backups, "PG_BIN_ROOT", tmp_path / "nowhere")
    assert main(["backup", str(tmp_path / "x.dump")]) == 2
    assert capsys.readouterr().err.startswith("error: pg_dump not found on PATH")
    assert not list(tmp_path.iterdir())  # no file, not even a partial one


def test_the_password_goes_to_libpq_environment_never_to_a_command_line() -> None:
    url = backups.parse_url(f"postgresql+psycopg://atout:{PASSWORD}@db.example:5433/arena?sslmode=verify-full"
                            "&sslrootcert=/etc/ca.pem")[0]
    env = backups.libpq_environment(url, base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", "PGHOST": "db.example", "PGPORT": "5433", "PGUSER": "atout",
                   "PGPASSWORD": PASSWORD, "PGDATABASE": "arena", "PGSSLMODE": "verify-full",
                   "PGSSLROOTCERT": "/etc/ca.pem", "PGCONNECT_TIMEOUT": "10"}
    assert PASSWORD not in backups.describe(url)
    with pytest.raises(backups.BackupError, match="'nonsense' has no libpq environment variable"):
        backups.libpq_environment(backups.parse_url("postgresql+psycopg://u@h/d?nonsense=1")[0])


def test_a_sqlite_backup_while_the_arena_writes_is_whole(tmp_path: Path) -> None:
    """The online backup API: every backup taken while bots are being added is a sound database
    holding some prefix of them, never a torn one."""
    import sqlite3
    import threading

    from atout_arena.core.db import open_database

    url = f"sqlite:///{tmp_path / 'atout.db'}"
    engine, sessions = open_database(url)
    registry = BotRegistry(sessions)
    stop = threading.Event()
    added: list[int] = []

    def write() -> None:
        while not stop.is_set():
            registry.add(f"w{len(added)}", owner="tests")
            added.append(1)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        counts = []
        for i in range(5):
            report = backups.backup(url, tmp_path / f"b{i}.sqlite")
            with sqlite3.connect(tmp_path / f"b{i}.sqlite") as db:
                assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                counts.append(db.execute("SELECT count(*) FROM bots").fetchone()[0])
            assert report.contents.bots == counts[-1]
            time.sleep(0.05)
    finally:
        stop.set()
        writer.join()
        engine.dispose()
    assert counts == sorted(counts) and counts[-1] > 0 and len(added) >= counts[-1]
