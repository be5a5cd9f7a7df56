"""Alembic environment: the arena's models, the URL from the caller or ATOUT_DATABASE_URL."""

from __future__ import annotations

from alembic import context

from atout_arena.core.db import make_engine, schema_lock
from atout_arena.core.models import Base  # importing it registers every model on it
from atout_arena.core.settings import Settings

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    return (
        config.attributes.get("url")
        or config.get_main_option("sqlalchemy.url")
        or Settings.from_env().database_url
    )


def run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = make_engine(_url())
    # under the lock of the parts' create_all: upgrades started together run one after the
    # other, the later ones finding the database at head; a part starting meanwhile waits
    with schema_lock(engine), engine.connect() as connection:
        # batch mode: SQLite rebuilds a table for the ALTERs it cannot do in place
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=True, compare_type=True
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
