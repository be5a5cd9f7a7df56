"""sprt_tests, and matches.test_id: tests of one bot (or version) against another

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('sprt_tests',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('bot_a_id', sa.Integer(), nullable=False),
    sa.Column('version_a', sa.String(length=64), nullable=False),
    sa.Column('bot_b_id', sa.Integer(), nullable=False),
    sa.Column('version_b', sa.String(length=64), nullable=False),
    sa.Column('field', sa.String(length=32), nullable=False),
    sa.Column('elo0', sa.Float(), nullable=False),
    sa.Column('elo1', sa.Float(), nullable=False),
    sa.Column('alpha', sa.Float(), nullable=False),
    sa.Column('beta', sa.Float(), nullable=False),
    sa.Column('max_games', sa.Integer(), nullable=False),
    sa.Column('sets_in_flight', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('result', sa.String(length=16), nullable=True),
    sa.Column('final', sa.JSON(), nullable=True),
    sa.Column('next_set', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('game', sa.String(length=32), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('players', sa.Integer(), nullable=False),
    sa.Column('games_per_pairing', sa.Integer(), nullable=False),
    sa.Column('duplicate', sa.Boolean(), nullable=False),
    sa.Column('move_ms', sa.Integer(), nullable=False),
    sa.Column('time_bank_ms', sa.Integer(), nullable=False),
    sa.Column('max_faults', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['bot_a_id'], ['bots.id'], ),
    sa.ForeignKeyConstraint(['bot_b_id'], ['bots.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('sprt_tests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_sprt_tests_bot_a_id'), ['bot_a_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_sprt_tests_bot_b_id'), ['bot_b_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_sprt_tests_status'), ['status'], unique=False)

    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('test_id', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_matches_test_id'), ['test_id'], unique=False)
        batch_op.create_foreign_key('fk_matches_test_id', 'sprt_tests', ['test_id'], ['id'])



def downgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_constraint('fk_matches_test_id', type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_matches_test_id'))
        batch_op.drop_column('test_id')

    with op.batch_alter_table('sprt_tests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_sprt_tests_status'))
        batch_op.drop_index(batch_op.f('ix_sprt_tests_bot_b_id'))
        batch_op.drop_index(batch_op.f('ix_sprt_tests_bot_a_id'))

    op.drop_table('sprt_tests')
