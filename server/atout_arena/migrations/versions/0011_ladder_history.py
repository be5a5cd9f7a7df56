"""ladder_sets.ratings: each bot's [mu, sigma] after the set was rated (the rating history)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('ladder_sets') as batch:
        batch.add_column(sa.Column('ratings', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('ladder_sets') as batch:
        batch.drop_column('ratings')
