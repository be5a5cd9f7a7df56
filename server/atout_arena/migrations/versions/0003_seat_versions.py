"""match_seats.version and played_version: the bot's version a seat asks for and played with

A seat stored before this revision asked for no version and was played by an unversioned
stream (both empty).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("match_seats") as batch:
        batch.add_column(sa.Column("version", sa.String(length=64), nullable=False, server_default=""))
        batch.add_column(sa.Column("played_version", sa.String(length=64), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("match_seats") as batch:
        batch.drop_column("played_version")
        batch.drop_column("version")
