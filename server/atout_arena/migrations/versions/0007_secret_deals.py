"""arena_secrets, and the deal keys of tournaments and tests: secret seeds

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('arena_secrets',
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('value', sa.String(length=128), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.add_column('tournaments', sa.Column('deal_key', sa.String(length=64), nullable=True))
    op.add_column('sprt_tests', sa.Column('deal_key', sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column('sprt_tests', 'deal_key')
    op.drop_column('tournaments', 'deal_key')
    op.drop_table('arena_secrets')
