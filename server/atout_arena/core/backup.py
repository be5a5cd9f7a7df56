"""Backups of the arena's database and their restore (``atout-arena backup FILE``, ``restore FILE``).

A backup is in the database's own format, with no wrapper of ours, so that the standard tools
read it too (``pg_restore``, ``sqlite3``):

- PostgreSQL: ``pg_dump``'s custom format (``-Fc``, compressed), taken in one snapshot that the
  printed counts share (the arena may run meanwhile). Restored by ``pg_restore`` in one
  transaction (a file that fails half-way leaves the target as it was), without the source's
  owners and grants (the restoring user owns what it restores).
- SQLite: SQLite's online backup API, a consistent copy of the file while the arena writes it;
  restored by the same API into the target file.

What a file is, is known by its first bytes (``PGDMP``, ``SQLite format 3``), then checked before
anything is touched: ``pg_restore --list`` must read the archive's table of contents, SQLite's
``quick_check`` must pass, and either must hold the arena's ``matches`` table. A restore goes
into an empty database only, unless ``clean`` (then what the backup holds replaces it).

The database password never goes on a command line nor in a message: ``pg_dump`` and
``pg_restore`` get the connection from libpq's environment (``PGHOST``, ``PGPASSWORD``, ...),
made from the SQLAlchemy URL (:func:`libpq_environment`). A backup holds the arena's secrets (the
deal secret, token hashes): its file is created readable by its owner only.

Every failure is a :class:`BackupError` of one line.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sqlalchemy import Connection, Engine, create_engine, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from atout_arena.core.db import make_engine, make_session_factory

Kind = Literal["postgresql", "sqlite"]
PG_MAGIC = b"PGDMP"  # the custom format's first bytes
SQLITE_MAGIC = b"SQLite format 3\x00"
ARENA_TABLE = "matches"  # a backup, or a database, of an arena holds it
PG_BIN_ROOT = Path("/usr/lib/postgresql")  # Debian's versions, searched after PATH
PG_TIMEOUT_S = 6 * 3600.0  # pg_dump / pg_restore of a very large arena
PG_CONNECT_TIMEOUT_S = "10"  # an unreachable server fails in seconds, not minutes (unless PGCONNECT_TIMEOUT)
# The URL query parameters libpq also reads from its environment (psycopg passes them to libpq)
LIBPQ_PARAMETERS = {
    "host": "PGHOST", "hostaddr": "PGHOSTADDR", "port": "PGPORT", "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT", "sslcert": "PGSSLCERT", "sslkey": "PGSSLKEY", "sslcrl": "PGSSLCRL",
    "sslcompression": "PGSSLCOMPRESSION", "requiressl": "PGREQUIRESSL", "gssencmode": "PGGSSENCMODE",
    "channel_binding": "PGCHANNELBINDING", "connect_timeout": "PGCONNECT_TIMEOUT",
    "application_name": "PGAPPNAME", "options": "PGOPTIONS", "service": "PGSERVICE",
    "passfile": "PGPASSFILE", "target_session_attrs": "PGTARGETSESSIONATTRS", "krbsrvname": "PGKRBSRVNAME",
    "client_encoding": "PGCLIENTENCODING",
}


class BackupError(Exception):
    """A backup or restore that cannot be done, said in one line."""


@dataclass(frozen=True)
class Contents:
    """What an arena's database holds: its tables and its main records."""

    tables: int
    matches: dict[str, int] = field(default_factory=dict)  # by status
    bots: int = 0
    tournaments: int = 0

    @property
    def match_count(self) -> int:
        return sum(self.matches.values())

    def describe(self) -> str:
        statuses = ", ".join(f"{n} {status}" for status, n in sorted(self.matches.items()))
        return (f"{self.tables} tables, {self.match_count} matches" + (f" ({statuses})" if statuses else "")
                + f", {self.tournaments} tournaments, {self.bots} bots")


@dataclass(frozen=True)
class Report:
    """What a backup or restore did, for its one printed line."""

    action: Literal["backed up", "restored"]
    database: str  # described without its password
    file: Path
    kind: Kind
    contents: Contents
    size: int  # the backup file's bytes
    seconds: float

    def line(self) -> str:
        where = f"{self.database} to {self.file}" if self.action == "backed up" else \
            f"{self.file} into {self.database}"
        return (f"{self.action} {where}: {self.contents.describe()}; {human_size(self.size)}, "
                f"{self.seconds:.1f} s")


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("not reached")


# --- the database's URL ---------------------------------------------------------------------------

def parse_url(url: str) -> tuple[URL, Kind]:
    """The URL and the kind of database it names; a :class:`BackupError` for another."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise BackupError("the database URL is not a SQLAlchemy URL (postgresql+psycopg://... or "
                          "sqlite:///FILE)") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        if not parsed.database:
            raise BackupError(f"the database URL {describe(parsed)} names no database")
        return parsed, "postgresql"
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:" or parsed.query.get("mode") == "memory":
            raise BackupError("the database URL is an in-memory SQLite database: there is nothing to "
                              "back up or restore")
        return parsed, "sqlite"
    raise BackupError(f"{backend} databases are not supported: PostgreSQL or SQLite only")


def describe(url: URL) -> str:
    """The database, said without its password."""
    if url.get_backend_name() == "sqlite":
        return f"SQLite database {url.database}"
    host = url.host or _query(url).get("host") or "the default host"
    port = url.port or _query(url).get("port")
    return f"PostgreSQL database {url.database} on {host}" + (f":{port}" if port else "")


def _query(url: URL) -> dict[str, str]:
    return {key: value if isinstance(value, str) else ",".join(value) for key, value in url.query.items()}


def libpq_environment(url: URL, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment that gives ``pg_dump``/``pg_restore`` the URL's connection: ``base`` (the
    process's environment: a ``PGPASSWORD`` or ``~/.pgpass`` of its own still works) with the URL's
    user, password, host, port, database and libpq parameters as ``PG*`` variables. A query
    parameter libpq does not know is a :class:`BackupError`."""
    env = dict(os.environ if base is None else base)
    query = _query(url)
    unknown = sorted(set(query) - set(LIBPQ_PARAMETERS))
    if unknown:
        raise BackupError(f"the database URL's parameter {unknown[0]!r} has no libpq environment variable: "
                          "pg_dump cannot be given it (see docs/backups.md)")
    for key, value in query.items():
        env[LIBPQ_PARAMETERS[key]] = value
    given: dict[str, object] = {"PGHOST": url.host, "PGPORT": url.port, "PGUSER": url.username,
                                "PGPASSWORD": url.password, "PGDATABASE": url.database}
    env.update({name: str(value) for name, value in given.items() if value is not None})
    env.setdefault("PGCONNECT_TIMEOUT", PG_CONNECT_TIMEOUT_S)
    return env


# --- the kind of a backup file --------------------------------------------------------------------

def file_kind(file: Path) -> Kind:
    """What ``file`` is by its first bytes: a :class:`BackupError` for what is no backup."""
    try:
        with open(file, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise BackupError(f"{file}: no such file") from None
    except OSError as exc:
        raise BackupError(f"{file}: {exc.strerror or exc}") from None
    if head.startswith(PG_MAGIC):
        return "postgresql"
    if head == SQLITE_MAGIC:
        return "sqlite"
    raise BackupError(f"{file} is not a backup of atout-arena: neither a PostgreSQL custom-format "
                      "dump nor a SQLite database")


# --- PostgreSQL -----------------------------------------------------------------------------------

def find_program(name: str) -> str:
    """``pg_dump`` or ``pg_restore``: PATH's, else Debian's newest (``/usr/lib/postgresql/*/bin``)."""
    found = shutil.which(name)
    if found:
        return found

    def version(directory: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", directory.parent.name))

    for directory in sorted(PG_BIN_ROOT.glob("*/bin"), key=version, reverse=True):
        if (directory / name).is_file():
            return str(directory / name)
    raise BackupError(f"{name} not found on PATH nor in {PG_BIN_ROOT}/*/bin: install PostgreSQL's client "
                      "programs, of the server's major version or newer (Debian: postgresql-client)")


def _run(program: str, args: list[str], env: Mapping[str, str], secret: str | None,
         stdout: int | None = None, what: str = "") -> str:
    """Run a PostgreSQL program; its error as one line (``secret`` never shown)."""
    try:
        result = subprocess.run([program, *args], env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE if stdout is None else stdout,
                                stderr=subprocess.PIPE, timeout=PG_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BackupError(f"{Path(program).name} took more than {PG_TIMEOUT_S:.0f} s: stopped") from None
    out = (result.stdout or b"").decode(errors="replace")
    if result.returncode != 0:
        raise BackupError(_program_error(program, result.stderr.decode(errors="replace"), secret, what))
    return out


def _program_error(program: str, stderr: str, secret: str | None, what: str) -> str:
    name = Path(program).name
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    # pg_dump/pg_restore: "pg_dump: error: connection to server ... failed: FATAL: ..."
    chosen = next((line for line in lines if "error:" in line), lines[0] if lines else "failed")
    chosen = re.sub(rf"^{re.escape(name)}:\s*(error:\s*)?", "", chosen)
    chosen = chosen.replace("\t", " ")
    if secret:
        chosen = chosen.replace(secret, "***")
    return f"{name} {what}failed: {chosen}" if what else f"{name} failed: {chosen}"


def _pg_dump(url: URL, file: Path, program: str) -> Contents:
    """Dump the database into ``file`` (created 0600) in one snapshot, also counted."""
    env = libpq_environment(url)
    engine = make_engine(url.render_as_string(hide_password=False))
    try:
        with _reached(engine, url) as connection, _private_file(file) as out:
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin():
                connection.execute(text("SET TRANSACTION READ ONLY"))
                snapshot = connection.execute(text("SELECT pg_export_snapshot()")).scalar_one()
                if ARENA_TABLE not in inspect(connection).get_table_names():
                    raise BackupError(f"the {describe(url)} holds no arena tables: nothing to back up")
                held = _contents(connection)
                _run(program, ["--format=custom", "--no-password", f"--snapshot={snapshot}"], env,
                     url.password, stdout=out.fileno())
        return held
    finally:
        engine.dispose()


def _pg_restore(url: URL, file: Path, clean: bool) -> None:
    program = find_program("pg_restore")
    env = libpq_environment(url)
    listing = _run(program, ["--list", str(file)], env, url.password, what=f"reading {file} ")
    if not re.search(rf"^\d+;.* TABLE \S+ {ARENA_TABLE}(\s|$)", listing, re.MULTILINE):
        raise BackupError(f"{file} is a PostgreSQL dump, but not of an arena (no {ARENA_TABLE} table)")
    engine = make_engine(url.render_as_string(hide_password=False))
    try:
        with _reached(engine, url) as connection:
            _refuse_unless_empty(url, connection, clean)
    finally:
        engine.dispose()
    args = ["--no-password", "--no-owner", "--no-acl", "--single-transaction", "--exit-on-error",
            *(["--clean", "--if-exists"] if clean else []), f"--dbname={url.database}", str(file)]
    try:
        _run(program, args, env, url.password)
    except BackupError as exc:
        raise BackupError(f"{exc} (nothing was restored: pg_restore ran in one transaction)") from None


@contextmanager
def _reached(engine: Engine, url: URL) -> Iterator[Connection]:
    """A connection, or a :class:`BackupError` that says why the database is out of reach."""
    try:
        connection = engine.connect()
    except SQLAlchemyError as exc:
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
        if url.password:
            reason = reason.replace(url.password, "***")
        raise BackupError(f"cannot reach the {describe(url)}: {reason}") from None
    with connection:
        yield connection


def _refuse_unless_empty(url: URL, connection: Connection, clean: bool) -> None:
    if clean:
        return
    tables = inspect(connection).get_table_names()
    if tables:
        held = (_contents(connection).describe() if ARENA_TABLE in tables
                else f"tables {', '.join(tables[:5])}")
        raise BackupError(f"the {describe(url)} is not empty ({held}): restore into an empty database, "
                          "or pass --clean to replace its contents with the backup's")


@contextmanager
def _private_file(file: Path) -> Iterator[_Opened]:
    """A new file beside ``file``, readable by its owner only, moved onto ``file`` when the block
    succeeds (an interrupted backup leaves no half file under the backup's name)."""
    partial = file.with_name(file.name + ".partial")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        raise BackupError(f"cannot write {file}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(descriptor, "wb") as out:
            yield _Opened(out.fileno(), partial)
        os.replace(partial, file)
    finally:
        partial.unlink(missing_ok=True)


@dataclass(frozen=True)
class _Opened:
    descriptor: int
    path: Path

    def fileno(self) -> int:
        return self.descriptor

    def __fspath__(self) -> str:
        return str(self.path)


# --- SQLite ---------------------------------------------------------------------------------------

def _sqlite_connect(path: Path, read_only: bool) -> sqlite3.Connection:
    if read_only:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
    return sqlite3.connect(path, timeout=10)


def _sqlite_tables(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _sqlite_backup(url: URL, file: Path) -> None:
    source = Path(str(url.database))
    if not source.is_file():
        raise BackupError(f"no SQLite database at {source}")
    try:
        with closing(_sqlite_connect(source, read_only=True)) as db:
            if ARENA_TABLE not in _sqlite_tables(db):
                raise BackupError(f"the {describe(url)} holds no arena tables: nothing to back up")
            with _private_file(file) as out, closing(sqlite3.connect(os.fspath(out))) as copy:
                db.backup(copy)  # the online backup API: consistent while the arena writes
                copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
    except sqlite3.Error as exc:
        raise BackupError(f"{describe(url)}: {exc}") from None


def _check_sqlite_file(file: Path) -> None:
    try:
        with closing(_sqlite_connect(file, read_only=True)) as db:
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            tables = _sqlite_tables(db)
    except sqlite3.Error as exc:
        raise BackupError(f"{file} is a damaged SQLite database: {exc}") from None
    if verdict != "ok":
        raise BackupError(f"{file} is a damaged SQLite database: quick_check says {verdict}")
    if ARENA_TABLE not in tables:
        raise BackupError(f"{file} is a SQLite database, but not of an arena (no {ARENA_TABLE} table)")


def _sqlite_restore(url: URL, file: Path, clean: bool) -> None:
    target = Path(str(url.database))
    if target.resolve() == file.resolve():
        raise BackupError(f"{file} is the database itself")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with closing(_sqlite_connect(file, read_only=True)) as backup, \
                closing(_sqlite_connect(target, read_only=False)) as db:
            tables = _sqlite_tables(db)
            if tables and not clean:
                engine = create_engine(url)
                try:
                    with engine.connect() as connection:
                        _refuse_unless_empty(url, connection, clean)
                finally:
                    engine.dispose()
            backup.backup(db)  # replaces the whole target, in one transaction of SQLite's
    except sqlite3.Error as exc:
        raise BackupError(f"restoring into {describe(url)}: {exc}") from None


# --- what a database holds ------------------------------------------------------------------------

def _contents(connection: Connection) -> Contents:
    tables = inspect(connection).get_table_names()

    def count(table: str) -> int:
        return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()) \
            if table in tables else 0

    matches: dict[str, int] = {}
    if ARENA_TABLE in tables:
        rows = connection.execute(text("SELECT status, count(*) FROM matches GROUP BY status"))
        matches = {str(status): int(n) for status, n in rows}
    return Contents(len(tables), matches, count("bots"), count("tournaments"))


def _file_contents(file: Path) -> Contents:
    """What a SQLite backup file holds, read without writing beside it."""
    engine = create_engine("sqlite://", creator=lambda: _sqlite_connect(file, read_only=True))
    try:
        with engine.connect() as connection:
            return _contents(connection)
    finally:
        engine.dispose()


def contents(url: str) -> Contents:
    """What the database of ``url`` holds (a :class:`BackupError` if it cannot be read)."""
    engine, _ = open_existing(url)
    try:
        parsed = parse_url(url)[0]
        with _reached(engine, parsed) as connection:
            return _contents(connection)
    finally:
        engine.dispose()


def open_existing(url: str) -> tuple[Engine, sessionmaker[Session]]:
    """The engine and sessions of an arena's database that exists (no table nor file created):
    a :class:`BackupError` when its SQLite file is missing or it holds no arena tables."""
    parsed, kind = parse_url(url)
    if kind == "sqlite" and not Path(str(parsed.database)).is_file():
        raise BackupError(f"no SQLite database at {parsed.database}")
    engine = make_engine(url)
    try:
        with _reached(engine, parsed) as connection:
            if ARENA_TABLE not in inspect(connection).get_table_names():
                raise BackupError(f"the {describe(parsed)} holds no arena tables")
    except BaseException:
        engine.dispose()
        raise
    return engine, make_session_factory(engine)


# --- the two commands -----------------------------------------------------------------------------

def backup(url: str, file: Path) -> Report:
    """Back the database of ``url`` up into ``file`` (replaced if it exists, only once the backup
    is whole)."""
    start = time.monotonic()
    parsed, kind = parse_url(url)
    file = Path(file)
    if file.is_dir():
        raise BackupError(f"{file} is a directory: name the backup's file")
    if not file.parent.is_dir():
        raise BackupError(f"{file.parent}: no such directory")
    if kind == "postgresql":
        held = _pg_dump(parsed, file, find_program("pg_dump"))
    else:
        _sqlite_backup(parsed, file)
        held = _file_contents(file)
    return Report("backed up", describe(parsed), file, kind, held, file.stat().st_size,
                  time.monotonic() - start)


def restore(url: str, file: Path, clean: bool = False) -> Report:
    """Restore ``file`` (made by :func:`backup`) into the database of ``url``, which must be empty
    unless ``clean``."""
    start = time.monotonic()
    parsed, kind = parse_url(url)
    file = Path(file)
    got = file_kind(file)
    if got != kind:
        raise BackupError(f"{file} is a backup of a {'PostgreSQL' if got == 'postgresql' else 'SQLite'} "
                          f"database; the target is a {describe(parsed)}: restore it into a database "
                          "of its kind")
    if kind == "postgresql":
        _pg_restore(parsed, file, clean)
    else:
        _check_sqlite_file(file)
        _sqlite_restore(parsed, file, clean)
    held = contents(parsed.render_as_string(hide_password=False))
    return Report("restored", describe(parsed), file, kind, held, file.stat().st_size,
                  time.monotonic() - start)
