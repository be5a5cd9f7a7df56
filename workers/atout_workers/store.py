"""The workers' database transactions: claim a match, keep it alive, store its result once.

Every function takes a ``sessionmaker`` and runs one short transaction. They are written for
SQLite and PostgreSQL alike:

- **Write first.** Each transaction that writes starts with its conditional ``UPDATE``
  (``... WHERE status = 'queued'``, ``... WHERE lease_id = :me``): on SQLite that takes the
  database's write lock before anything is read (no read-to-write upgrade, no stale snapshot),
  on PostgreSQL it locks the row and re-checks the condition after any concurrent writer
  commits. The number of rows it changed says whether we won.
- **Exactly one result.** A result is stored only under the lease that holds the match
  (``status = 'running' AND lease_id = :me``) and only once (``status`` becomes
  ``finished`` in the same statement). ``match_seats`` and ``rating_history`` have keys that
  refuse a second copy.
- **Ratings never lose an update.** The online Elo of the seated bots is read and written in
  the result's transaction, with ``SELECT ... FOR UPDATE`` on their rating rows in bot-id order
  (PostgreSQL: concurrent results for the same bots wait for each other, and cannot deadlock;
  SQLite: the transaction already holds the only write lock).
- **Core statements** on the hot path (a claim and a result per match): no ORM objects loaded
  or flushed there, whose cost was about 4x the database's own work.
- **Tournament completion.** The same transaction locks the tournament row and counts the
  matches not done: the one result that brings it to zero says so, and its task dispatches
  the finalize task after the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker

from atout_arena.core.match import FaultPolicy, MatchOutcome, MatchSetup, SeatBot
from atout_arena.core.models import (
    Bot,
    Match,
    MatchSeat,
    Rating,
    RatingChange,
    SprtTest,
    Tournament,
    utcnow,
)
from atout_arena.core.ratings import DEFAULT_RATING, RatedSeat, elo_update, rated_result
from atout_arena.core.vocabulary import MATCH_DONE, MatchStatus, SprtStatus, TournamentStatus
from atout_arena.services.practice import is_practice as practice_match

log = logging.getLogger(__name__)

INITIAL_RATING = DEFAULT_RATING


# -- claim, heartbeat, release ----------------------------------------------------------------

# The worker's hot path (a claim and a result per match) is written with Core statements on
# the tables: SQLAlchemy's ORM (loading objects, flushing their changes) cost about 4x the
# database's own work there (bench: 2.0 -> 0.6 ms per claim, 5.7 -> 1.6 ms per result on SQLite).
MATCHES, SEATS, BOTS, RATINGS = Match.__table__, MatchSeat.__table__, Bot.__table__, Rating.__table__
TOURNAMENTS, CHANGES = Tournament.__table__, RatingChange.__table__
_SETUP = (MATCHES.c.game, MATCHES.c.options, MATCHES.c.seed, MATCHES.c.move_ms, MATCHES.c.time_bank_ms,
          MATCHES.c.max_faults, MATCHES.c.suits, MATCHES.c.attempts, MATCHES.c.tournament_id)


# Each statement is built once with bind parameters: building and hashing a new expression per
# call cost as much again as running it.
_SEATS_OF = (
    select(SEATS.c.seat, SEATS.c.bot_id, SEATS.c.version, BOTS.c.name, BOTS.c.move_ms, BOTS.c.disabled)
    .join(BOTS, BOTS.c.id == SEATS.c.bot_id).where(SEATS.c.match_id == bindparam("k_match"))
    .order_by(SEATS.c.seat)
)
_CLAIM = (
    update(MATCHES)
    .where(
        MATCHES.c.id == bindparam("k_id"),
        or_(
            MATCHES.c.status == MatchStatus.QUEUED,
            and_(MATCHES.c.status == MatchStatus.RUNNING, MATCHES.c.heartbeat_at < bindparam("k_stale")),
        ),
    )
    .values(status=MatchStatus.RUNNING, lease_id=bindparam("v_lease_id"),
            heartbeat_at=bindparam("v_now", type_=MATCHES.c.heartbeat_at.type),
            attempts=MATCHES.c.attempts + 1,
            started_at=func.coalesce(MATCHES.c.started_at,
                                     bindparam("v_started", type_=MATCHES.c.started_at.type)))
    .returning(*_SETUP)
)
_GRACE = select(TOURNAMENTS.c.absent_grace_s).where(TOURNAMENTS.c.id == bindparam("k_id"))


def _seats_of(connection: Connection, match_id: int) -> list[Any]:
    """The seats of a match in seat order, with their bots: (seat, bot_id, version, name, move_ms,
    disabled)."""
    return list(connection.execute(_SEATS_OF, {"k_match": match_id}))


def claim_match(
    sessions: sessionmaker, match_id: int, lease_id: str, stale_s: float
) -> tuple[MatchSetup, int] | None:
    """Take the match to play it: a queued one, or a running one whose lease holder went silent for
    ``stale_s``. Returns its setup and how many times it was claimed (this time included);
    None when it is not ours to play (done, pending, or alive elsewhere)."""
    now = utcnow()
    with sessions() as session:
        connection = session.connection()
        row = connection.execute(_CLAIM, {"k_id": match_id, "k_stale": now - timedelta(seconds=stale_s),
                                          "v_lease_id": lease_id, "v_now": now, "v_started": now}).first()
        if row is None:
            session.rollback()
            return None
        grace = None if row.tournament_id is None else connection.execute(
            _GRACE, {"k_id": row.tournament_id}).scalar()
        seats = _seats_of(connection, match_id)
        session.commit()
    setup = MatchSetup(
        match_id=str(match_id),
        game=row.game,
        options=dict(row.options or {}),
        seed=int(row.seed),
        seats=tuple(SeatBot(s.bot_id, s.name, s.version, move_ms=s.move_ms or 0) for s in seats),
        policy=FaultPolicy(row.move_ms, row.time_bank_ms, row.max_faults),
        absent_grace_s=grace,
        suits=row.suits,
    )
    return setup, row.attempts


def heartbeat(sessions: sessionmaker, beats: Sequence[tuple[int, str]]) -> set[int]:
    """Renew the heartbeat of the matches ``(match id, lease id)``; returns those that are no
    longer held under that lease (it is lost: stop playing them). A match whose lease holder
    has just finished it itself (its result stored while the heartbeat was on its way) is not
    lost: it is simply over."""
    lost: set[int] = set()
    if not beats:
        return lost
    now = utcnow()
    with sessions() as session:
        for chunk in _chunks(list(beats), HEARTBEAT_CHUNK):  # a thousand matches: two statements a chunk
            session.execute(
                update(Match)
                # by id first: the primary key finds the rows (lease_id has no index of its own)
                .where(Match.id.in_([match_id for match_id, _ in chunk]),
                       Match.lease_id.in_([lease_id for _, lease_id in chunk]),
                       Match.status == MatchStatus.RUNNING)
                .values(heartbeat_at=now)
                .execution_options(synchronize_session=False)
            )
            rows = session.execute(select(Match.id, Match.status, Match.lease_id)
                                   .where(Match.id.in_([match_id for match_id, _ in chunk])))
            found = {row.id: row for row in rows}
            for match_id, lease_id in chunk:
                row = found.get(match_id)
                ours = row is not None and row.lease_id == lease_id
                if row is None or not ours or not (row.status == MatchStatus.RUNNING
                                                   or row.status in MATCH_DONE):
                    lost.add(match_id)
        session.commit()
    return lost


HEARTBEAT_CHUNK = 400  # (SQLite takes at most 999 parameters per statement before 3.32)


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def record_error(sessions: sessionmaker, match_id: int, lease_id: str, reason: str, limit: int) -> str:
    """A match's own error (an outage faulted every seat): counted in ``errors``; the match
    goes back to the queue to be played again from its seed, or fails with ``reason`` once it
    has had ``limit`` errors. Returns ``queued``, ``failed`` or ``lost`` (not ours any more)."""
    with sessions() as session:
        result = session.execute(
            update(Match)
            .where(Match.id == match_id, Match.lease_id == lease_id, Match.status == MatchStatus.RUNNING)
            .values(errors=Match.errors + 1, error=reason[:4000])
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:
            session.rollback()
            return "lost"
        errors = session.scalar(select(Match.errors).where(Match.id == match_id))
        session.commit()
    if errors is not None and errors >= limit:
        return "failed"
    return "queued" if release_match(sessions, match_id, lease_id) else "lost"


def release_match(sessions: sessionmaker, match_id: int, lease_id: str) -> bool:
    """Give a match back to the queue (a transient error): True if it was ours."""
    with sessions() as session:
        result = session.execute(
            update(Match)
            .where(Match.id == match_id, Match.lease_id == lease_id, Match.status == MatchStatus.RUNNING)
            .values(status=MatchStatus.QUEUED, lease_id=None, queued_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        session.commit()
        return result.rowcount == 1


# -- results ----------------------------------------------------------------------------------


@dataclass
class Completion:
    """What a stored result changed, for the work done after the commit."""

    match_id: int
    game: str
    tournament_id: int | None
    tournament_done: bool
    test_id: int | None = None  # its test, which decides what comes next once a set is done
    set_done: bool = True  # a test's match: the last of its set to be done (only then is the test ticked)
    bot_names: dict[int, str] = field(default_factory=dict)
    ratings: dict[int, tuple[float, float]] = field(default_factory=dict)  # bot -> (before, after)


_DONE = (MATCHES.c.game, MATCHES.c.tournament_id, MATCHES.c.test_id, MATCHES.c.deal_group)
_MINE = (MATCHES.c.id == bindparam("k_id"), MATCHES.c.lease_id == bindparam("k_lease_id"),
         MATCHES.c.status == MatchStatus.RUNNING)
_FINISHED = (
    update(MATCHES).where(*_MINE)
    .values(status=MatchStatus.FINISHED, error=None, **{
        c: bindparam(f"v_{c}", type_=MATCHES.c[c].type)
        for c in ("finished_at", "heartbeat_at", "outcome", "scores", "ranking", "actions", "rules_version")})
    .returning(*_DONE)
)
_FAILED = (
    update(MATCHES).where(*_MINE)
    .values(status=MatchStatus.FAILED, error=bindparam("v_error"),
            finished_at=bindparam("v_finished_at", type_=MATCHES.c.finished_at.type))
    .returning(*_DONE)
)
_LOCK_TOURNAMENT = select(TOURNAMENTS.c.id).where(TOURNAMENTS.c.id == bindparam("k_id")).with_for_update()
_REMAINING = (select(func.count()).select_from(MATCHES)
              .where(MATCHES.c.tournament_id == bindparam("k_id"), MATCHES.c.status.not_in(MATCH_DONE)))


_SET_OPEN = (select(func.count()).select_from(MATCHES)
             .where(MATCHES.c.test_id == bindparam("k_test"), MATCHES.c.deal_group == bindparam("k_group"),
                    MATCHES.c.status.not_in(MATCH_DONE)))


def _set_done(session: Session, row: Any) -> bool:
    """Whether a test's match just done was the last of its duplicate set not done: a test's
    tick changes nothing until a set is complete (its statistics and its sets in flight count
    complete sets only), so the worker sends it then, not after every game. A set whose tick is
    lost (a race of two of its games, a worker killed) is caught by the next set's tick, or by
    the sweeper's, which ticks every running test with nothing in flight (stalled_tests)."""
    if row.test_id is None or row.deal_group is None:
        return True
    found = session.connection().execute(_SET_OPEN, {"k_test": row.test_id, "k_group": row.deal_group})
    return found.scalar() == 0


def _tournament_done(session: Session, tournament_id: int | None) -> bool:
    if tournament_id is None:
        return False
    # Lock the tournament row so that two last results cannot both miss each other (PostgreSQL,
    # READ COMMITTED: the count below runs after the other transaction has committed).
    connection = session.connection()
    connection.execute(_LOCK_TOURNAMENT, {"k_id": tournament_id})
    return connection.execute(_REMAINING, {"k_id": tournament_id}).scalar() == 0


_SEAT_RESULT = (
    update(SEATS)
    .where(SEATS.c.match_id == bindparam("k_match"), SEATS.c.seat == bindparam("k_seat"))
    .values(score=bindparam("v_score"), place=bindparam("v_place"), faults=bindparam("v_faults"),
            forfeited=bindparam("v_forfeited"), think_ms=bindparam("v_think"), absent=bindparam("v_absent"))
)


def store_result(
    sessions: sessionmaker, match_id: int, lease_id: str, outcome: MatchOutcome, rated: bool = True,
    played_versions: Sequence[str] | None = None, absent: Sequence[int] = (),
) -> Completion | None:
    """Store the result of a match we hold, update the online ratings, and say whether its
    tournament is complete. None (nothing stored) when the match is not ours any more."""
    now = utcnow()
    with sessions() as session:
        connection = session.connection()
        row = connection.execute(_FINISHED, {
            "k_id": match_id, "k_lease_id": lease_id, "v_finished_at": now, "v_heartbeat_at": now,
            "v_outcome": outcome.outcome, "v_scores": outcome.scores, "v_ranking": outcome.ranking,
            "v_actions": [step.to_json() for step in outcome.steps], "v_rules_version": outcome.rules_version,
        }).first()
        if row is None:
            session.rollback()
            return None
        seats = _seats_of(connection, match_id)
        statement = _SEAT_RESULT
        if played_versions is not None:
            statement = statement.values(played_version=bindparam("v_played"))
        connection.execute(statement, [  # (a match always has seats: an empty list would be one bare row)
            {"k_match": match_id, "k_seat": s.seat, "v_score": outcome.scores[s.seat],
             "v_place": outcome.ranking[s.seat], "v_faults": outcome.faults[s.seat],
             "v_forfeited": outcome.forfeited[s.seat], "v_think": outcome.think_ms[s.seat],
             "v_absent": s.seat in absent,
             **({"v_played": played_versions[s.seat]} if played_versions is not None else {})}
            for s in seats
        ])
        completion = Completion(match_id, row.game, row.tournament_id, False, test_id=row.test_id,
                                set_done=_set_done(session, row))
        completion.bot_names = {s.bot_id: s.name for s in seats}
        # Ratings count tournament (and league) matches only: practice matches are unrated.
        # Who is rated is core.ratings.rated_result's rule: not an absent bot, nor one disabled
        # by now (read in this transaction); the others among themselves. The rating rows
        # written here are what the batch fits count (services.tournaments.rated_results).
        kept = rated_result([RatedSeat(s.bot_id, outcome.ranking[s.seat], absent=s.seat in absent,
                                       disabled=bool(s.disabled)) for s in seats])
        if rated and row.tournament_id is not None and kept is not None:
            completion.ratings = _rate(session, row.game, match_id, list(kept[0]), list(kept[1]), now)
        completion.tournament_done = _tournament_done(session, row.tournament_id)
        session.commit()
        return completion


def fail_match(sessions: sessionmaker, match_id: int, lease_id: str, error: str) -> Completion | None:
    """Give up on a match (an error that a retry would not cure): it counts as done for its
    tournament, with no result. None when the match is not ours any more."""
    now = utcnow()
    with sessions() as session:
        row = session.connection().execute(_FAILED, {
            "k_id": match_id, "k_lease_id": lease_id, "v_finished_at": now, "v_error": error[:4000]}).first()
        if row is None:
            session.rollback()
            return None
        completion = Completion(match_id, row.game, row.tournament_id, False, test_id=row.test_id,
                                set_done=_set_done(session, row))
        completion.tournament_done = _tournament_done(session, row.tournament_id)
        session.commit()
        return completion


# -- online ratings ---------------------------------------------------------------------------


_NEW_RATING = {  # a rating row unless it exists (a concurrent insert is no error)
    "postgresql": postgresql.insert(RATINGS).on_conflict_do_nothing(),
    "sqlite": sqlite.insert(RATINGS).on_conflict_do_nothing(),
}
_RATINGS_OF = (select(RATINGS.c.bot_id, RATINGS.c.rating)
               .where(RATINGS.c.game == bindparam("k_game"),
                      RATINGS.c.bot_id.in_(bindparam("k_bots", expanding=True)))
               .order_by(RATINGS.c.bot_id).with_for_update())


def _insert_ignore(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert rating rows that do not exist yet, never failing on a concurrent insert."""
    connection = session.connection()
    statement = _NEW_RATING.get(connection.dialect.name)
    if statement is None:  # pragma: no cover - the two supported databases are above
        raise RuntimeError(f"unsupported database {connection.dialect.name!r}: use SQLite or PostgreSQL")
    connection.execute(statement, rows)


_RATING_AFTER = (
    update(RATINGS)
    .where(RATINGS.c.game == bindparam("k_game"), RATINGS.c.bot_id == bindparam("k_bot"))
    .values(rating=bindparam("v_rating"), matches=RATINGS.c.matches + 1,
            updated_at=bindparam("v_at", type_=RATINGS.c.updated_at.type))
)


def _rate(session: Session, game: str, match_id: int, bot_ids: list[int], ranking: list[int],
          now: datetime) -> dict[int, tuple[float, float]]:
    _insert_ignore(session, [{"game": game, "bot_id": b, "rating": INITIAL_RATING, "matches": 0,
                              "updated_at": now} for b in sorted(bot_ids)])
    connection = session.connection()
    before = dict(connection.execute(_RATINGS_OF, {"k_game": game, "k_bots": bot_ids}).all())
    after = elo_update(before, bot_ids, ranking)
    connection.execute(_RATING_AFTER, [{"k_game": game, "k_bot": b, "v_rating": after[b], "v_at": now}
                                       for b in bot_ids])
    connection.execute(insert(CHANGES), [
        {"game": game, "bot_id": b, "match_id": match_id, "before": before[b], "after": after[b], "at": now}
        for b in bot_ids
    ])
    return {b: (before[b], after[b]) for b in bot_ids}


# -- what the sweeper looks at ----------------------------------------------------------------


def stale_running(sessions: sessionmaker, stale_s: float) -> list[int]:
    """Running matches whose lease holder went silent for ``stale_s``: put back in the queue."""
    cutoff = utcnow() - timedelta(seconds=stale_s)
    return _requeue_running(sessions, Match.heartbeat_at < cutoff)


def orphaned_running(sessions: sessionmaker, processes: Sequence[str], silent_s: float) -> list[int]:
    """Running matches held by one of the worker ``processes`` (``host:pid``, the prefix of
    their lease ids) that died, silent for ``silent_s``: put back in the queue."""
    if not processes:
        return []
    cutoff = utcnow() - timedelta(seconds=silent_s)
    owned = or_(*(Match.lease_id.like(f"{p}:%") for p in processes))
    return _requeue_running(sessions, and_(owned, Match.heartbeat_at < cutoff))


def _requeue_running(sessions: sessionmaker, condition: Any) -> list[int]:
    """Put the running matches that meet ``condition`` back in the queue, each by an UPDATE
    that checks it again (a match whose lease holder spoke meanwhile stays its own); their ids."""
    condition = and_(Match.status == MatchStatus.RUNNING, condition)
    with sessions() as session:
        ids = list(session.scalars(select(Match.id).where(condition)))
        back = []
        for match_id in ids:
            result = session.execute(
                update(Match).where(Match.id == match_id, condition)
                .values(status=MatchStatus.QUEUED, lease_id=None, queued_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            if result.rowcount == 1:
                back.append(match_id)
        session.commit()
        return back


def running_of(sessions: sessionmaker, processes: Sequence[str]) -> set[str]:
    """Which of the worker ``processes`` still hold a running match."""
    if not processes:
        return set()
    owned = or_(*(Match.lease_id.like(f"{p}:%") for p in processes))
    with sessions() as session:
        leases = session.scalars(select(Match.lease_id).where(Match.status == MatchStatus.RUNNING, owned))
        return {lease.rsplit(":", 1)[0] for lease in leases if lease}


def old_queued(sessions: sessionmaker, older_than_s: float) -> list[int]:
    """Queued matches dispatched more than ``older_than_s`` ago; their dispatch time is
    renewed (so each is sent again at most once per period)."""
    cutoff = utcnow() - timedelta(seconds=older_than_s)
    now = utcnow()
    with sessions() as session:
        result = session.execute(
            update(Match)
            .where(Match.status == MatchStatus.QUEUED,
                   or_(Match.queued_at.is_(None), Match.queued_at < cutoff))
            .values(queued_at=now)
            .returning(Match.id)
            .execution_options(synchronize_session=False)
        )
        ids = [row[0] for row in result]
        session.commit()
        return ids


def unfinalized_tournaments(sessions: sessionmaker) -> list[int]:
    """Running tournaments with every match done: their finalize task went missing."""
    with sessions() as session:
        open_matches = (
            select(Match.id).where(Match.tournament_id == Tournament.id, Match.status.not_in(MATCH_DONE))
        )
        return list(session.scalars(
            select(Tournament.id).where(Tournament.status == TournamentStatus.RUNNING, ~open_matches.exists())
        ))


def is_practice(sessions: sessionmaker, match_id: int) -> bool:
    """A practice match (:func:`atout_arena.services.practice.is_practice`): it is played from
    the practice queue."""
    with sessions() as session:
        match = session.get(Match, match_id)
        return match is not None and practice_match(match)


def stalled_tests(sessions: sessionmaker) -> list[int]:
    """Running tests with no match in flight: a tick was lost (its task died); tick them again."""
    with sessions() as session:
        open_matches = select(Match.id).where(Match.test_id == SprtTest.id, Match.status.not_in(MATCH_DONE))
        return list(session.scalars(
            select(SprtTest.id).where(SprtTest.status == SprtStatus.RUNNING, ~open_matches.exists())
        ))
