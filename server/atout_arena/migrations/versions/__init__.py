"""Alembic revisions (a package, so that installs carry them)."""
