"""bots.kind and bots.move_ms: human players (played at the dashboard) and a bot's own move time

A bot stored before this revision is a program (kind "bot") with no move time of its own.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=16), nullable=False, server_default="bot"))
        batch.add_column(sa.Column("move_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("move_ms")
        batch.drop_column("kind")
