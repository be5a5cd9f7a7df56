"""matches.suits: the suit permutation disguising a duplicate rotation's deal

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('matches', sa.Column('suits', sa.String(length=4), nullable=True))


def downgrade() -> None:
    op.drop_column('matches', 'suits')
