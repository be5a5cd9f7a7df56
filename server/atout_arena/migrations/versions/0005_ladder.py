"""ladders, ladder_members, ladder_sets and matches.ladder_id: the continuous ladder

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('ladders',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('open', sa.Boolean(), nullable=False),
    sa.Column('target_in_flight', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('next_set', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('game', sa.String(length=32), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('players', sa.Integer(), nullable=False),
    sa.Column('games_per_pairing', sa.Integer(), nullable=False),
    sa.Column('duplicate', sa.Boolean(), nullable=False),
    sa.Column('move_ms', sa.Integer(), nullable=False),
    sa.Column('time_bank_ms', sa.Integer(), nullable=False),
    sa.Column('max_faults', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    with op.batch_alter_table('ladders', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ladders_status'), ['status'], unique=False)

    op.create_table('ladder_members',
    sa.Column('ladder_id', sa.Integer(), nullable=False),
    sa.Column('bot_id', sa.Integer(), nullable=False),
    sa.Column('mu', sa.Float(), nullable=False),
    sa.Column('sigma', sa.Float(), nullable=False),
    sa.Column('games', sa.Integer(), nullable=False),
    sa.Column('sets', sa.Integer(), nullable=False),
    sa.Column('baseline', sa.Float(), nullable=False),
    sa.Column('joined_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['bot_id'], ['bots.id'], ),
    sa.ForeignKeyConstraint(['ladder_id'], ['ladders.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('ladder_id', 'bot_id')
    )
    with op.batch_alter_table('ladder_members', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ladder_members_bot_id'), ['bot_id'], unique=False)

    op.create_table('ladder_sets',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('ladder_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('bots', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('ranks', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('rated_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['ladder_id'], ['ladders.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('ladder_id', 'number', name='uq_ladder_sets_ladder_number')
    )
    with op.batch_alter_table('ladder_sets', schema=None) as batch_op:
        batch_op.create_index('ix_ladder_sets_ladder_status', ['ladder_id', 'status'], unique=False)

    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ladder_id', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_matches_ladder_id'), ['ladder_id'], unique=False)
        batch_op.create_foreign_key('fk_matches_ladder_id', 'ladders', ['ladder_id'], ['id'])


def downgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_constraint('fk_matches_ladder_id', type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_matches_ladder_id'))
        batch_op.drop_column('ladder_id')
    op.drop_table('ladder_sets')
    op.drop_table('ladder_members')
    op.drop_table('ladders')
