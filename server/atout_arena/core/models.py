"""The arena's stored records. Every model derives from :class:`Base`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar, overload

from sqlalchemy import Boolean, DateTime, Integer, String, Table, false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """The base of every arena model."""

    # Every model is mapped to a Table (SQLAlchemy types it as any FROM clause): the workers'
    # and services' Core statements use it as one.
    __table__: ClassVar[Table]


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes: they are UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


MAX_ID = 2**63 - 1  # the largest integer SQLite and PostgreSQL (BIGINT) take as a key


def parse_id(ref: str | int) -> int | None:
    """The database id that ``ref`` names: an int, or a string of ASCII digits, in
    ``1..MAX_ID``; None for anything else (a name, ``"²"``, an id no database can hold).

    Lookups by "name or id" use it so that what is not an id is looked up as a name, and never
    reaches the database as an integer it cannot take."""
    if isinstance(ref, bool):
        return None
    if isinstance(ref, int):
        value = ref
    elif isinstance(ref, str) and ref.isascii() and ref.isdigit() and len(ref) <= len(str(MAX_ID)):
        value = int(ref)
    else:
        return None
    return value if 0 < value <= MAX_ID else None


class Bot(Base):
    """A registered bot. Its token is never stored: only its SHA-256 (``token_hash``)."""

    __tablename__ = "bots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    owner: Mapped[str] = mapped_column(String(128), nullable=False, default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # "bot" (a program on a gRPC stream) or "human" (a person at the dashboard's play page,
    # served by the API: atout_arena.api.routes.play); move_ms: this bot's own move time when
    # longer than a match's (a human's; None: the match's alone).
    kind: Mapped[str] = mapped_column(String(16), nullable=False, default="bot", server_default="bot")
    move_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)

    def __repr__(self) -> str:
        return f"Bot(id={self.id!r}, name={self.name!r}, owner={self.owner!r}, disabled={self.disabled!r})"


# ---------------------------------------------------------------------------------------------
# Tournaments, leagues, matches and ratings (the workers' records).
#
# Indices follow what the API asks: matches by tournament (and status), by bot (through
# match_seats), by status (the sweeper); ratings by game. Rows are written so that a retried
# task never counts twice: one result per match (the conditional update of its status, and the
# (match, seat) key of match_seats), one rating change per (match, bot).

from sqlalchemy import (  # noqa: E402  (kept beside the models that use them)
    JSON,
    BigInteger,
    Float,
    ForeignKey,
    Index,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import relationship  # noqa: E402

# Match statuses: "pending" (its tournament is not started), "queued" (a task is on its way),
# "running" (a worker holds it: lease_id + heartbeat), "finished", "failed" (gave up after its
# attempts; counts as done for its tournament), "cancelled".


class _Competition:
    """Columns shared by tournaments and leagues: the game and how its matches are played."""

    game: Mapped[str] = mapped_column(String(32), nullable=False)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)  # game options
    players: Mapped[int] = mapped_column(Integer, nullable=False)  # seats per match
    games_per_pairing: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    duplicate: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    move_ms: Mapped[int] = mapped_column(Integer, nullable=False, default=1000)
    time_bank_ms: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    max_faults: Mapped[int] = mapped_column(Integer, nullable=False, default=3)


class League(_Competition, Base):
    """A standing competition on one game: members, and seasons that are tournaments."""

    __tablename__ = "leagues"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True, nullable=False)
    every_s: Mapped[int | None] = mapped_column(Integer, nullable=True)  # season interval (beat)
    next_season_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)

    members: Mapped[list[LeagueMember]] = relationship(back_populates="league", cascade="all, delete-orphan")
    seasons: Mapped[list[Tournament]] = relationship(back_populates="league", order_by="Tournament.season")


class LeagueMember(Base):
    __tablename__ = "league_members"

    league_id: Mapped[int] = mapped_column(ForeignKey("leagues.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True, index=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)

    league: Mapped[League] = relationship(back_populates="members")
    bot: Mapped[Bot] = relationship()


class Tournament(_Competition, Base):
    """A fixed schedule of matches between its entrants; a league's season is one."""

    __tablename__ = "tournaments"
    __table_args__ = (UniqueConstraint("league_id", "season", name="uq_tournaments_league_season"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), nullable=False)
    seed: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="created", index=True)
    league_id: Mapped[int | None] = mapped_column(ForeignKey("leagues.id"), nullable=True, index=True)
    season: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Written once by the finalize task: the standings as a list of plain dicts.
    standings: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    # How long a match waits for an entrant that is not connected before it forfeits its seat
    # as `absent` (services.competitions.DEFAULT_ABSENT_GRACE_S when created).
    absent_grace_s: Mapped[float] = mapped_column(Float, nullable=False, default=10.0, server_default="10")
    # The secret its match seeds derive from (core.deals), shown once it is over; None: seeds
    # of a tournament made before secret deal keys existed (a plain hash of the seed).
    deal_key: Mapped[str | None] = mapped_column(String(64), nullable=True)

    league: Mapped[League | None] = relationship(back_populates="seasons")
    entries: Mapped[list[TournamentEntry]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", order_by="TournamentEntry.position"
    )
    matches: Mapped[list[Match]] = relationship(back_populates="tournament", order_by="Match.number")
    fitted: Mapped[list[TournamentRating]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", order_by="TournamentRating.rank"
    )


class SprtTest(_Competition, Base):
    """A test between two bots (or two versions of one bot), fishtest-style: duplicate sets of
    seeded deals, played in every seat rotation, in batches until a sequential probability
    ratio test decides or ``max_games`` is reached (:mod:`atout_arena.services.sprt`). Its
    matches have ``test_id`` set; they are never rated."""

    __tablename__ = "sprt_tests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), nullable=False)
    bot_a_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), nullable=False, index=True)
    version_a: Mapped[str] = mapped_column(String(64), nullable=False, default="")
    bot_b_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), nullable=False, index=True)
    version_b: Mapped[str] = mapped_column(String(64), nullable=False, default="")
    field: Mapped[str] = mapped_column(String(32), nullable=False, default="heuristic")  # the other seats
    elo0: Mapped[float] = mapped_column(Float, nullable=False)
    elo1: Mapped[float] = mapped_column(Float, nullable=False)
    alpha: Mapped[float] = mapped_column(Float, nullable=False, default=0.05)
    beta: Mapped[float] = mapped_column(Float, nullable=False, default=0.05)
    max_games: Mapped[int] = mapped_column(Integer, nullable=False)
    sets_in_flight: Mapped[int] = mapped_column(Integer, nullable=False, default=8)
    seed: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="running", index=True)
    result: Mapped[str | None] = mapped_column(String(16), nullable=True)  # H0, H1, inconclusive
    # The statistics when it ended (Analysis.to_dict()): what decided it. Games still running
    # then finish, but never move a decided test.
    final: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    next_set: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # sets scheduled so far
    # Every set below ``counted_sets`` is complete and folded into ``counted`` (its tally, the
    # complete and absent sets): a tick reads the matches of the later sets only (services.sprt).
    counted_sets: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    counted: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # no sets_in_flight was given: they grow with the sets complete (services.sprt.sets_wanted)
    sets_auto: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    deal_key: Mapped[str | None] = mapped_column(String(64), nullable=True)  # as Tournament.deal_key
    created_by: Mapped[str] = mapped_column(String(64), nullable=False, default="organizer")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Ladder(_Competition, Base):
    """A continuous ladder (:mod:`atout_arena.services.ladders`): its members play whenever they
    are connected, in duplicate sets chosen by the matchmaker, rated by OpenSkill
    (Plackett-Luce). Its matches have ``ladder_id`` set; ``deal_group`` is the set's number."""

    __tablename__ = "ladders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True, nullable=False)
    open: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)  # any registered bot joins
    target_in_flight: Mapped[int] = mapped_column(Integer, nullable=False, default=4)  # matches
    seed: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="running", index=True)
    next_set: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # sets scheduled so far
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)


class LadderMember(Base):
    """A bot of a ladder and its OpenSkill rating there (mu, sigma; shown as mu - 3 sigma)."""

    __tablename__ = "ladder_members"

    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True, index=True)
    mu: Mapped[float] = mapped_column(Float, nullable=False)
    sigma: Mapped[float] = mapped_column(Float, nullable=False)
    games: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # games of rated sets
    sets: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # rated sets
    # The games a member is counted as having played when it joined (the mean of the others):
    # its share of games is measured from then on, so a late bot is not owed the past.
    baseline: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)

    bot: Mapped[Bot] = relationship()


class LadderSet(Base):
    """One duplicate set of a ladder: a seeded deal played in every rotation of one table.
    ``status``: ``running`` until its games are done, then ``rated`` (its ranking applied to
    the members' ratings, once) or ``void`` (a game cancelled or failed, a seat absent)."""

    __tablename__ = "ladder_sets"
    __table_args__ = (UniqueConstraint("ladder_id", "number", name="uq_ladder_sets_ladder_number"),
                      Index("ix_ladder_sets_ladder_status", "ladder_id", "status"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id", ondelete="CASCADE"), nullable=False)
    number: Mapped[int] = mapped_column(Integer, nullable=False)  # the matches' deal_group
    bots: Mapped[list[Any]] = mapped_column(JSON, nullable=False)  # the table's bot ids before rotation
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="running")
    ranks: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)  # per bot of ``bots``, 1 = best
    # per bot of ``bots``, its [mu, sigma] once this set was rated: the ladder's rating history
    ratings: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class TournamentEntry(Base):
    __tablename__ = "tournament_entries"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True, index=True)
    position: Mapped[int] = mapped_column(Integer, nullable=False)  # the bot's index in the schedule

    tournament: Mapped[Tournament] = relationship(back_populates="entries")
    bot: Mapped[Bot] = relationship()


class Match(Base):
    """One game between bots: its setup (game, options, seed, seating, deadlines), its
    liveness (status, lease_id, heartbeat) and, once finished, its result and action log."""

    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("tournament_id", "number", name="uq_matches_tournament_number"),
        Index("ix_matches_tournament_status", "tournament_id", "status"),
        Index("ix_matches_status_heartbeat", "status", "heartbeat_at"),
        Index("ix_matches_test_group", "test_id", "deal_group"),  # a test's tick: its later sets
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"), nullable=True)
    test_id: Mapped[int | None] = mapped_column(ForeignKey("sprt_tests.id"), nullable=True, index=True)
    ladder_id: Mapped[int | None] = mapped_column(ForeignKey("ladders.id"), nullable=True, index=True)
    number: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # index in its schedule
    deal_group: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # same seed, same group
    rotation: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # The suit permutation that disguises its deal (a duplicate rotation's; None: the plain deal)
    suits: Mapped[str | None] = mapped_column(String(4), nullable=True)
    game: Mapped[str] = mapped_column(String(32), nullable=False)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    seed: Mapped[int] = mapped_column(BigInteger, nullable=False)
    move_ms: Mapped[int] = mapped_column(Integer, nullable=False, default=1000)
    time_bank_ms: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    max_faults: Mapped[int] = mapped_column(Integer, nullable=False, default=3)
    # The version of the game's rules the match was played under (Game.RULES_VERSION): set when
    # it is stored, and again by the worker that stores its result. A match of another version
    # does not replay under this engine (core.replay refuses it). Matches stored before the
    # column existed were played under version 1.
    rules_version: Mapped[int] = mapped_column(Integer, nullable=False, default=1, server_default="1")

    status: Mapped[str] = mapped_column(String(16), nullable=False, default="pending")
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # times claimed
    # The match's own errors (an outage that faulted every seat): it fails after
    # ATOUT_MATCH_ATTEMPTS of them. The deaths of the workers that played it do not count.
    errors: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    lease_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    queued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)  # finished, forfeit
    scores: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    ranking: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)  # forfeits applied
    # Every action in order: [seat, action, by ("bot"/"fallback"), think_ms, [faults], detail].
    actions: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)

    tournament: Mapped[Tournament | None] = relationship(back_populates="matches")
    seats: Mapped[list[MatchSeat]] = relationship(
        back_populates="match", cascade="all, delete-orphan", order_by="MatchSeat.seat"
    )


class MatchSeat(Base):
    """Who sat where in a match, and how that seat did."""

    __tablename__ = "match_seats"
    __table_args__ = (Index("ix_match_seats_bot_match", "bot_id", "match_id"),)

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), nullable=False)
    score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)
    faults: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    forfeited: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    think_ms: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    # The bot was not connected when the match started (nor within its absent grace): its
    # seat was forfeited as `absent` and is not rated.
    absent: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default="0")
    # The version the seat must be played with ("" = the bot's most recently connected stream),
    # and the version it was played with (the Hello's label of the stream that played it).
    version: Mapped[str] = mapped_column(String(64), nullable=False, default="", server_default="")
    played_version: Mapped[str] = mapped_column(String(64), nullable=False, default="", server_default="")

    match: Mapped[Match] = relationship(back_populates="seats")
    bot: Mapped[Bot] = relationship()


class Rating(Base):
    """The online Elo of a bot in a game, updated as each of its matches ends."""

    __tablename__ = "ratings"
    __table_args__ = (Index("ix_ratings_game_rating", "game", "rating"),)

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True, index=True)
    rating: Mapped[float] = mapped_column(Float, nullable=False)
    matches: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)

    bot: Mapped[Bot] = relationship()


class RatingChange(Base):
    """The history of online ratings: one row per (match, bot), so a retry never counts twice."""

    __tablename__ = "rating_history"
    __table_args__ = (
        UniqueConstraint("match_id", "bot_id", name="uq_rating_history_match_bot"),
        Index("ix_rating_history_game_bot", "game", "bot_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game: Mapped[str] = mapped_column(String(32), nullable=False)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), nullable=False)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), nullable=False)
    before: Mapped[float] = mapped_column(Float, nullable=False)
    after: Mapped[float] = mapped_column(Float, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)


class TournamentRating(Base):
    """The batch fit of a finished tournament (Bradley-Terry, Elo scale) with its 95% interval
    and the likelihood that the bot is stronger than the next one in the list."""

    __tablename__ = "tournament_ratings"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True, index=True)
    rank: Mapped[int] = mapped_column(Integer, nullable=False)
    rating: Mapped[float] = mapped_column(Float, nullable=False)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    los_next: Mapped[float | None] = mapped_column(Float, nullable=True)
    games: Mapped[int] = mapped_column(Integer, nullable=False, default=0)

    tournament: Mapped[Tournament] = relationship(back_populates="fitted")
    bot: Mapped[Bot] = relationship()


class ArenaSecret(Base):
    """A secret of the arena, made on first use and shared by every process through the
    database: ``deals`` (hex), what competitions' deal keys derive from (core.deals)."""

    __tablename__ = "arena_secrets"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128), nullable=False)
