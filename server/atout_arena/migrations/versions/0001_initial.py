"""initial schema: bots, tournaments, leagues, matches, ratings

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=128), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_bots_token_hash"), ["token_hash"], unique=True)

    op.create_table(
        "leagues",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("every_s", sa.Integer(), nullable=True),
        sa.Column("next_season_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("games_per_pairing", sa.Integer(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("time_bank_ms", sa.Integer(), nullable=False),
        sa.Column("max_faults", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "league_members",
        sa.Column("league_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["league_id"], ["leagues.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("league_id", "bot_id"),
    )
    with op.batch_alter_table("league_members", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_league_members_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "ratings",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.PrimaryKeyConstraint("game", "bot_id"),
    )
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ratings_bot_id"), ["bot_id"], unique=False)
        batch_op.create_index("ix_ratings_game_rating", ["game", "rating"], unique=False)

    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("league_id", sa.Integer(), nullable=True),
        sa.Column("season", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("standings", sa.JSON(), nullable=True),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("games_per_pairing", sa.Integer(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("time_bank_ms", sa.Integer(), nullable=False),
        sa.Column("max_faults", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["league_id"],
            ["leagues.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("league_id", "season", name="uq_tournaments_league_season"),
    )
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tournaments_league_id"), ["league_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_tournaments_status"), ["status"], unique=False)

    op.create_table(
        "matches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("deal_group", sa.Integer(), nullable=False),
        sa.Column("rotation", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("time_bank_ms", sa.Integer(), nullable=False),
        sa.Column("max_faults", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("runner", sa.String(length=128), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("scores", sa.JSON(), nullable=True),
        sa.Column("ranking", sa.JSON(), nullable=True),
        sa.Column("actions", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "number", name="uq_matches_tournament_number"),
    )
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.create_index("ix_matches_status_heartbeat", ["status", "heartbeat_at"], unique=False)
        batch_op.create_index("ix_matches_tournament_status", ["tournament_id", "status"], unique=False)

    op.create_table(
        "tournament_entries",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "bot_id"),
    )
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tournament_entries_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "tournament_ratings",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("los_next", sa.Float(), nullable=True),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "bot_id"),
    )
    with op.batch_alter_table("tournament_ratings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tournament_ratings_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "match_seats",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("faults", sa.Integer(), nullable=False),
        sa.Column("forfeited", sa.Boolean(), nullable=False),
        sa.Column("think_ms", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("match_id", "seat"),
    )
    with op.batch_alter_table("match_seats", schema=None) as batch_op:
        batch_op.create_index("ix_match_seats_bot_match", ["bot_id", "match_id"], unique=False)

    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("before", sa.Float(), nullable=False),
        sa.Column("after", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id", "bot_id", name="uq_rating_history_match_bot"),
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.create_index("ix_rating_history_game_bot", ["game", "bot_id", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index("ix_rating_history_game_bot")

    op.drop_table("rating_history")
    with op.batch_alter_table("match_seats", schema=None) as batch_op:
        batch_op.drop_index("ix_match_seats_bot_match")

    op.drop_table("match_seats")
    with op.batch_alter_table("tournament_ratings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_ratings_bot_id"))

    op.drop_table("tournament_ratings")
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_entries_bot_id"))

    op.drop_table("tournament_entries")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_tournament_status")
        batch_op.drop_index("ix_matches_status_heartbeat")

    op.drop_table("matches")
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournaments_status"))
        batch_op.drop_index(batch_op.f("ix_tournaments_league_id"))

    op.drop_table("tournaments")
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.drop_index("ix_ratings_game_rating")
        batch_op.drop_index(batch_op.f("ix_ratings_bot_id"))

    op.drop_table("ratings")
    with op.batch_alter_table("league_members", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_league_members_bot_id"))

    op.drop_table("league_members")
    op.drop_table("leagues")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_bots_token_hash"))

    op.drop_table("bots")
