"""Storage: the SQLAlchemy engine and sessions (models and ``Base``: :mod:`atout_arena.core.models`).

SQLite by default (a file under ``ATOUT_DATA_DIR``, in WAL mode with a busy timeout so that
the game server, workers and API can share it), PostgreSQL when ``ATOUT_DATABASE_URL`` says so.

SQLite runs with ``synchronous=NORMAL``, SQLite's advice for WAL mode: a commit is written to
the WAL at once (a process killed with -9, even Redis or the machine's other processes, loses
nothing committed) but not fsynced; only a power cut or an OS crash may lose the last commits,
and the file is never corrupted. A match whose result was lost so is still running in the
database: the sweeper plays it again from its seed. (``FULL``, the default, fsynced every
commit: 0.3 ms each on our machines, three per match.) PostgreSQL keeps its own settings.

>>> engine = make_engine("sqlite://")
>>> create_all(engine)
>>> Session = make_session_factory(engine)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
)
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from atout_arena.core.models import Base

SQLITE_BUSY_TIMEOUT_MS = 10_000


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


def create_all(engine: Engine) -> None:
    """Create every table that does not exist yet (every model of :mod:`atout_arena.core.models`),
    and add to existing tables the columns added since, nullable or with a server default
    (such as ``matches.rules_version``), and rename those renamed since (:data:`RENAMED_COLUMNS`),
    so that a database made by an older arena keeps working. Alembic
    (``atout_arena.migrations``) remains the way to upgrade a shared PostgreSQL database."""
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
