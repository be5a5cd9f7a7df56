"""matches.errors (a match's own errors, not its workers' deaths), match_seats.absent,
tournaments.absent_grace_s

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('errors', sa.Integer(), server_default='0', nullable=False))
    with op.batch_alter_table('match_seats', schema=None) as batch_op:
        batch_op.add_column(sa.Column('absent', sa.Boolean(), server_default='0', nullable=False))
    with op.batch_alter_table('tournaments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('absent_grace_s', sa.Float(), server_default='10', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('tournaments', schema=None) as batch_op:
        batch_op.drop_column('absent_grace_s')
    with op.batch_alter_table('match_seats', schema=None) as batch_op:
        batch_op.drop_column('absent')
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_column('errors')
