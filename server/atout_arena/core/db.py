"""Storage: the SQLAlchemy engine and sessions (models and ``Base``: :mod:`atout_arena.core.models`).

SQLite by default (a file under ``ATOUT_DATA_DIR``, in WAL mode with a busy timeout so that
the game server, workers and API can share it), PostgreSQL when ``ATOUT_DATABASE_URL`` says so.

SQLite runs with ``synchronous=NORMAL``, SQLite's advice for WAL mode: a commit is written to
the WAL at once (a process killed with -9, even Redis or the machine's other processes, loses
nothing committed) but not fsynced; only a power cut or an OS crash may lose the last commits,
and the file is never corrupted. A match whose result was lost so is still running in the
database: the sweeper plays it again from its seed. (``FULL``, the default, fsynced every
commit: 0.3 ms each on our machines, three per match.) PostgreSQL keeps its own settings.

Parts started together on a new database (compose, systemd) create its schema once: whoever
creates or migrates it holds :func:`schema_lock` (a file lock beside a SQLite file, an advisory
lock in PostgreSQL), and the others wait for it, then find the tables made.

>>> engine = make_engine("sqlite://")
>>> create_all(engine)
>>> Session = make_session_factory(engine)
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ColumnDefault,
    Connection,
    DefaultClause,
    Engine,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    text,
)
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from atout_arena.core.models import Base

SQLITE_BUSY_TIMEOUT_MS = 10_000
# How long a part waits for another's schema work (a migration of a large database may take
# minutes); past it, it stops with an error that says who holds what.
SCHEMA_LOCK_TIMEOUT_S = 600.0
SCHEMA_LOCK_POLL_S = 0.05
# The PostgreSQL advisory lock's key: one for the arena's schema in a database (a 32-bit CRC of
# a fixed name, so that another application's locks in a shared cluster are unlikely to meet it).
SCHEMA_LOCK_KEY = zlib.crc32(b"atout schema")
SCHEMA_LOCK_SUFFIX = ".schema-lock"


class SchemaLockTimeoutError(TimeoutError):
    """Another process held the schema lock longer than the wait allowed."""


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``. SQLite files get WAL, a busy timeout and foreign keys on;
    their folder is created when missing."""
    if url.startswith("sqlite"):
        database = url.split("///", 1)[1] if "///" in url else ""
        in_memory = database in ("", ":memory:")
        if not in_memory:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        connect_args = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        if in_memory:
            kwargs.setdefault("poolclass", StaticPool)  # one shared in-memory database
        engine = create_engine(url, connect_args=connect_args, **kwargs)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            if not in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")  # see the module's docstring
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded attributes after commit (objects stay readable)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


# Columns renamed since (as the migrations rename them): (table, old name) -> new name.
RENAMED_COLUMNS = {("matches", "runner"): "lease_id"}  # migration 0010


def _sqlite_file(engine: Engine) -> Path | None:
    """The file of a SQLite engine's database; None for an in-memory one or another kind."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:" or "mode=memory" in str(engine.url):
        return None
    return Path(database)


@contextmanager
def schema_lock(engine: Engine, timeout_s: float = SCHEMA_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Held while this process creates or migrates the schema of ``engine``'s database; another
    process that asks waits until it is released (up to ``timeout_s``, then
    :class:`SchemaLockTimeoutError`). Without it, two parts started together on a new database both
    ran ``CREATE TABLE``: one exited on "table bots already exists".

    SQLite: ``flock`` on a file beside the database (``atout.db.schema-lock``, left in place:
    removing it would let a process lock a new file while another holds the old one). PostgreSQL:
    a session advisory lock (:data:`SCHEMA_LOCK_KEY`) on a connection of its own, released by
    the server if this process dies. An in-memory database is never shared: no lock."""
    if engine.dialect.name == "postgresql":
        with _advisory_lock(engine, timeout_s):
            yield
        return
    database = _sqlite_file(engine)
    if database is None:
        yield
        return
    with _file_lock(database.with_name(database.name + SCHEMA_LOCK_SUFFIX), timeout_s):
        yield


def _waited_too_long(what: str, timeout_s: float) -> SchemaLockTimeoutError:
    return SchemaLockTimeoutError(f"waited {timeout_s:.0f} s for {what}, held by another part creating or "
                             "migrating the schema: is a migration still running?")


@contextmanager
def _file_lock(path: Path, timeout_s: float) -> Iterator[None]:
    import fcntl  # POSIX: the arena's parts run on Linux (and macOS)

    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    with open(path, "a+b") as lock_file:
        while True:
            try:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _waited_too_long(f"the lock file {path}", timeout_s) from None
                time.sleep(SCHEMA_LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)


@contextmanager
def _advisory_lock(engine: Engine, timeout_s: float) -> Iterator[None]:
    deadline = time.monotonic() + timeout_s
    with engine.connect() as connection:
        # try, then sleep: a wait bounded by our clock, and no session setting (lock_timeout)
        # left on a pooled connection
        key = {"key": SCHEMA_LOCK_KEY}
        while not connection.execute(text("SELECT pg_try_advisory_lock(:key)"), key).scalar():
            connection.rollback()
            if time.monotonic() >= deadline:
                raise _waited_too_long(f"PostgreSQL advisory lock {SCHEMA_LOCK_KEY}", timeout_s)
            time.sleep(SCHEMA_LOCK_POLL_S)
        connection.commit()  # the lock is the session's: it outlives this transaction
        try:
            yield
        finally:
            try:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), key)
                connection.commit()
            except Exception:
                # the connection is broken (the server then released the lock itself): never
                # give it back to the pool, and let the schema work's own error be the one seen
                connection.invalidate()


def create_all(engine: Engine) -> None:
    """Create every table that does not exist yet (every model of :mod:`atout_arena.core.models`),
    and add to existing tables the columns added since, nullable or with a server default
    (such as ``matches.rules_version``), and rename those renamed since (:data:`RENAMED_COLUMNS`),
    so that a database made by an older arena keeps working. Alembic
    (``atout_arena.migrations``) remains the way to upgrade a shared PostgreSQL database.

    Under :func:`schema_lock`: processes that start together create the schema once, the
    others find it made."""
    with schema_lock(engine):
        _create_all(engine)


def _create_all(engine: Engine) -> None:
    Base.metadata.create_all(engine)
    existing = inspect(engine)
    with engine.begin() as connection:
        for table in Base.metadata.sorted_tables:
            have = {c["name"] for c in existing.get_columns(table.name)}
            for (renamed_in, old), new in RENAMED_COLUMNS.items():
                if renamed_in == table.name and old in have and new not in have:
                    connection.exec_driver_sql(f"ALTER TABLE {table.name} RENAME COLUMN {old} TO {new}")
                    have = (have - {old}) | {new}
            for column in table.columns:
                if column.name not in have and column.nullable and column.server_default is None:
                    kind = column.type.compile(dialect=engine.dialect)
                    connection.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}")
                elif column.name not in have and column.server_default is not None:
                    kind = column.type.compile(dialect=engine.dialect)
                    # a value (server_default="..."), not a default the database computes
                    assert isinstance(column.server_default, DefaultClause)
                    default = str(column.server_default.arg).replace("'", "''")
                    connection.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind} "
                                               f"NOT NULL DEFAULT '{default}'")


def open_database(url: str, pool_size: int = 5) -> tuple[Engine, sessionmaker[Session]]:
    """The engine (tables created) and session factory of one process. ``pool_size``: the
    connections its threads may hold at once (an in-memory SQLite database has one, shared)."""
    in_memory = url.startswith("sqlite") and ("///" not in url or url.endswith(":memory:"))
    pool = {} if in_memory else {"pool_size": pool_size, "max_overflow": 4, "pool_timeout": 60}
    engine = make_engine(url, **pool)
    create_all(engine)
    return engine, make_session_factory(engine)


def insert_many(connection: Connection, table: Table, keys: Sequence[str], rows: Iterable[Sequence[Any]],
                **same: Any) -> None:
    """Insert many rows of ``table`` with one driver ``executemany``: each of ``rows`` holds the
    values of the columns ``keys``; ``same`` gives values shared by every row, and a column
    left out gets its scalar default (a column whose default is computed must be given).

    Every value goes through its column type's bind processor, as SQLAlchemy's own ``insert``
    would (a shared value once), but not through SQLAlchemy's per-row parameter machinery,
    which costs more than SQLite's insert itself: a 20,000-match schedule's 80,000 seats in
    0.2 s instead of 0.6 s. Raises ``ValueError`` for a column that needs a computed default."""
    dialect = connection.dialect
    shared = dict(same)
    for column in table.columns:
        if column.key in keys or column.key in shared or column.default is None:
            continue
        default = column.default
        if not (isinstance(default, ColumnDefault) and default.is_scalar):
            raise ValueError(f"insert_many into {table.name}: give {column.key} (its default is computed)")
        shared[column.key] = default.arg
    names = [*keys, *shared]
    compiled = insert(table).compile(dialect=dialect, column_keys=names)

    def processor(key: str) -> Any:
        return table.c[key].type.dialect_impl(dialect).bind_processor(dialect)

    fixed = tuple(p(v) if (p := processor(k)) else v for k, v in shared.items())
    processors = [processor(k) for k in keys]
    if any(processors):
        rows = (tuple(v if p is None else p(v) for p, v in zip(processors, row, strict=True)) for row in rows)
    full = (tuple(row) + fixed for row in rows)
    if compiled.positional:
        order = [names.index(name) for name in compiled.positiontup or ()]
        if order != list(range(len(names))):
            pick = itemgetter(*order)
            full = (pick(row) for row in full)
        params: list[Any] = list(full)
    else:
        params = [dict(zip(names, row, strict=True)) for row in full]
    if params:
        connection.exec_driver_sql(compiled.string, params)
