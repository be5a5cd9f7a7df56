"""Database migrations (Alembic). The schema of :mod:`atout_arena.core.models`, versioned.

    alembic upgrade head                  # from the repository root (alembic.ini), or:
    python -c "from atout_arena.migrations import upgrade; upgrade('sqlite:///var/atout.db')"

The URL is ``ATOUT_DATABASE_URL`` (``atout_arena.core.settings``) unless given. A new migration after a
model change: ``alembic revision --autogenerate -m "what changed"``, then read it through.
``tests/workers/test_migrations.py`` checks that ``upgrade head`` on an empty database gives
exactly the tables, columns, indices and constraints of the models.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

HERE = Path(__file__).resolve().parent


def alembic_config(url: str | None = None) -> Config:
    """An Alembic configuration for this package's scripts and ``url`` (default: settings)."""
    config = Config()
    config.set_main_option("script_location", str(HERE))
    if url is not None:
        config.attributes["url"] = url
    return config


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Bring the database at ``url`` up to ``revision``."""
    command.upgrade(alembic_config(url), revision)
