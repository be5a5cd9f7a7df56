"""matches.runner is matches.lease_id: the id of the worker's lease on a running match (runner
was also the SDK's bot runner)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('matches') as batch:
        batch.alter_column('runner', new_column_name='lease_id')


def downgrade() -> None:
    with op.batch_alter_table('matches') as batch:
        batch.alter_column('lease_id', new_column_name='runner')
