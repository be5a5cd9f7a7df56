"""sprt_tests.counted_sets and counted: the sets a test's ticks folded once for all; sets_auto:
its sets in flight grow (no sets_in_flight given); matches (test_id, deal_group) indexed

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('sprt_tests') as batch:
        batch.add_column(sa.Column('counted_sets', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('counted', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('sets_auto', sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index('ix_matches_test_group', 'matches', ['test_id', 'deal_group'])


def downgrade() -> None:
    op.drop_index('ix_matches_test_group', table_name='matches')
    with op.batch_alter_table('sprt_tests') as batch:
        batch.drop_column('sets_auto')
        batch.drop_column('counted')
        batch.drop_column('counted_sets')
