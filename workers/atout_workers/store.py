"""The workers' database transactions: claim a match, keep it alive, store its result once.

Every function takes a ``sessionmaker`` and runs one short transaction. They are written for
SQLite and PostgreSQL alike:

- **Write first.** Each transaction that writes starts with its conditional ``UPDATE``
  (``... WHERE status = 'queued'``, ``... WHERE runner = :me``): on SQLite that takes the
  database's write lock before anything is read (no read-to-write upgrade, no stale snapshot),
  on PostgreSQL it locks the row and re-checks the condition after any concurrent writer
  commits. The number of rows it changed says whether we won.
- **Exactly one result.** A result is stored only by the runner that holds the match
  (``status = 'running' AND runner = :me``) and only once (``status`` becomes
  ``finished`` in the same statement). ``match_seats`` and ``rating_history`` have keys that
  refuse a second copy.
- **Ratings never lose an update.** The online Elo of the seated bots is read and written in
  the result's transaction, with ``SELECT ... FOR UPDATE`` on their rating rows in bot-id order
  (PostgreSQL: concurrent results for the same bots wait for each other, and cannot deadlock;
  SQLite: the transaction already holds the only write lock).
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

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, defer, joinedload, selectinload, sessionmaker

from atout_arena.core.match import FaultPolicy, MatchOutcome, MatchSetup, SeatBot
from atout_arena.core.models import (
    Bot,
    Match,
    Rating,
    RatingChange,
    SprtTest,
    Tournament,
    utcnow,
)
from atout_arena.core.ratings import DEFAULT_RATING, elo_update
from atout_arena.core.vocabulary import MATCH_DONE, MatchStatus, SprtStatus, TournamentStatus

log = logging.getLogger(__name__)

INITIAL_RATING = DEFAULT_RATING


# -- reading a match --------------------------------------------------------------------------


def setup_of(session: Session, match: Match) -> MatchSetup:
    """The :class:`MatchSetup` of a stored match (its seats' bots loaded by id)."""
    seats = sorted(match.seats, key=lambda s: s.seat)
    rows = session.execute(select(Bot.id, Bot.name, Bot.move_ms).where(Bot.id.in_([s.bot_id for s in seats])))
    bots = {bot_id: (name, own_ms) for bot_id, name, own_ms in rows}
    names = {bot_id: name for bot_id, (name, _) in bots.items()}
    own = {bot_id: own_ms or 0 for bot_id, (_, own_ms) in bots.items()}
    return MatchSetup(
        match_id=str(match.id),
        game=match.game,
        options=dict(match.options or {}),
        seed=int(match.seed),
        seats=tuple(
            SeatBot(s.bot_id, names.get(s.bot_id, f"bot-{s.bot_id}"), s.version, move_ms=own.get(s.bot_id, 0))
            for s in seats
        ),
        policy=FaultPolicy(match.move_ms, match.time_bank_ms, match.max_faults),
        absent_grace_s=match.tournament.absent_grace_s if match.tournament is not None else None,
        suits=match.suits,
    )


# -- claim, heartbeat, release ----------------------------------------------------------------

# What a claim and a result read of the match: its seats at once, never its action log back.
LOAD_TO_PLAY = [selectinload(Match.seats), joinedload(Match.tournament), defer(Match.actions)]
LOAD_TO_STORE = [selectinload(Match.seats), defer(Match.actions)]


def claim_match(
    sessions: sessionmaker, match_id: int, runner: str, stale_s: float
) -> tuple[MatchSetup, int] | None:
    """Take the match to play it: a queued one, or a running one whose runner went silent for
    ``stale_s``. Returns its setup and how many times it was claimed (this time included);
    None when it is not ours to play (done, pending, or alive elsewhere)."""
    now = utcnow()
    with sessions() as session:
        result = session.execute(
            update(Match)
            .where(
                Match.id == match_id,
                or_(
                    Match.status == MatchStatus.QUEUED,
                    and_(Match.status == MatchStatus.RUNNING,
                         Match.heartbeat_at < now - timedelta(seconds=stale_s)),
                ),
            )
            .values(status=MatchStatus.RUNNING, runner=runner, heartbeat_at=now, attempts=Match.attempts + 1,
                    started_at=func.coalesce(Match.started_at, now))
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:
            session.rollback()
            return None
        match = session.get(Match, match_id, options=LOAD_TO_PLAY)
        assert match is not None
        setup = setup_of(session, match)
        attempts = match.attempts
        session.commit()
        return setup, attempts


def heartbeat(sessions: sessionmaker, beats: Sequence[tuple[int, str]]) -> set[int]:
    """Renew the heartbeat of the matches ``(match id, runner)``; returns those that are no
    longer held by that runner (their lease is lost: stop playing them). A match that runner
    has just finished itself (its result stored while the heartbeat was on its way) is not
    lost: it is simply over."""
    lost: set[int] = set()
    if not beats:
        return lost
    now = utcnow()
    with sessions() as session:
        for chunk in _chunks(list(beats), HEARTBEAT_CHUNK):  # a thousand matches: two statements a chunk
            session.execute(
                update(Match)
                .where(Match.runner.in_([runner for _, runner in chunk]), Match.status == MatchStatus.RUNNING)
                .values(heartbeat_at=now)
                .execution_options(synchronize_session=False)
            )
            rows = session.execute(select(Match.id, Match.status, Match.runner)
                                   .where(Match.id.in_([match_id for match_id, _ in chunk])))
            found = {row.id: row for row in rows}
            for match_id, runner in chunk:
                row = found.get(match_id)
                ours = row is not None and row.runner == runner
                if not (ours and (row.status == MatchStatus.RUNNING or row.status in MATCH_DONE)):
                    lost.add(match_id)
        session.commit()
    return lost


HEARTBEAT_CHUNK = 400  # (SQLite takes at most 999 parameters per statement before 3.32)


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def record_error(sessions: sessionmaker, match_id: int, runner: str, reason: str, limit: int) -> str:
    """A match's own error (an outage faulted every seat): counted in ``errors``; the match
    goes back to the queue to be played again from its seed, or fails with ``reason`` once it
    has had ``limit`` errors. Returns ``queued``, ``failed`` or ``lost`` (not ours any more)."""
    with sessions() as session:
        result = session.execute(
            update(Match)
            .where(Match.id == match_id, Match.runner == runner, Match.status == MatchStatus.RUNNING)
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
    return "queued" if release_match(sessions, match_id, runner) else "lost"


def release_match(sessions: sessionmaker, match_id: int, runner: str) -> bool:
    """Give a match back to the queue (a transient error): True if it was ours."""
    with sessions() as session:
        result = session.execute(
            update(Match)
            .where(Match.id == match_id, Match.runner == runner, Match.status == MatchStatus.RUNNING)
            .values(status=MatchStatus.QUEUED, runner=None, queued_at=utcnow())
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
    bot_names: dict[int, str] = field(default_factory=dict)
    ratings: dict[int, tuple[float, float]] = field(default_factory=dict)  # bot -> (before, after)


def _finish_match(session: Session, match_id: int, runner: str, values: dict[str, Any]) -> bool:
    result = session.execute(
        update(Match)
        .where(Match.id == match_id, Match.runner == runner, Match.status == MatchStatus.RUNNING)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def _tournament_done(session: Session, tournament_id: int | None) -> bool:
    if tournament_id is None:
        return False
    # Lock the tournament row so that two last results cannot both miss each other (PostgreSQL,
    # READ COMMITTED: the count below runs after the other transaction has committed).
    session.execute(select(Tournament.id).where(Tournament.id == tournament_id).with_for_update())
    remaining = session.scalar(
        select(func.count()).select_from(Match)
        .where(Match.tournament_id == tournament_id, Match.status.not_in(MATCH_DONE))
    )
    return remaining == 0


def store_result(
    sessions: sessionmaker, match_id: int, runner: str, outcome: MatchOutcome, rated: bool = True,
    played_versions: Sequence[str] | None = None, absent: Sequence[int] = (),
) -> Completion | None:
    """Store the result of a match we hold, update the online ratings, and say whether its
    tournament is complete. None (nothing stored) when the match is not ours any more."""
    now = utcnow()
    with sessions() as session:
        if not _finish_match(session, match_id, runner, {
            "status": MatchStatus.FINISHED, "finished_at": now, "heartbeat_at": now,
            "outcome": outcome.outcome, "scores": outcome.scores, "ranking": outcome.ranking,
            "actions": [step.to_json() for step in outcome.steps], "error": None,
            "rules_version": outcome.rules_version,
        }):
            session.rollback()
            return None
        match = session.get(Match, match_id, options=LOAD_TO_STORE)
        assert match is not None
        seats = sorted(match.seats, key=lambda s: s.seat)
        for s in seats:
            s.score = outcome.scores[s.seat]
            s.place = outcome.ranking[s.seat]
            s.faults = outcome.faults[s.seat]
            s.forfeited = outcome.forfeited[s.seat]
            s.think_ms = outcome.think_ms[s.seat]
            if played_versions is not None:
                s.played_version = played_versions[s.seat]
            s.absent = s.seat in absent
        bot_ids = [s.bot_id for s in seats]
        completion = Completion(match_id, match.game, match.tournament_id, False, test_id=match.test_id)
        names = session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(bot_ids))).all()
        completion.bot_names = dict(names)
        # Ratings count tournament (and league) matches only: practice matches are unrated.
        # An absent bot is not rated by its forfeits: the present seats are rated among themselves.
        present = [(s.bot_id, outcome.ranking[s.seat]) for s in seats if s.seat not in absent]
        present_ids = [b for b, _ in present]
        if (rated and match.tournament_id is not None and len(present) >= 2
                and len(set(present_ids)) == len(present_ids)):
            completion.ratings = _rate(session, match, present_ids, [p for _, p in present], now)
        session.flush()
        completion.tournament_done = _tournament_done(session, match.tournament_id)
        session.commit()
        return completion


def fail_match(sessions: sessionmaker, match_id: int, runner: str, error: str) -> Completion | None:
    """Give up on a match (an error that a retry would not cure): it counts as done for its
    tournament, with no result. None when the match is not ours any more."""
    now = utcnow()
    with sessions() as session:
        if not _finish_match(session, match_id, runner,
                             {"status": MatchStatus.FAILED, "finished_at": now, "error": error[:4000]}):
            session.rollback()
            return None
        match = session.get(Match, match_id)
        assert match is not None
        completion = Completion(match_id, match.game, match.tournament_id, False, test_id=match.test_id)
        completion.tournament_done = _tournament_done(session, match.tournament_id)
        session.commit()
        return completion


# -- online ratings ---------------------------------------------------------------------------


def _insert_ignore(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert rating rows that do not exist yet, never failing on a concurrent insert."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        stmt = postgresql.insert(Rating).values(rows).on_conflict_do_nothing()
    elif dialect == "sqlite":
        stmt = sqlite.insert(Rating).values(rows).on_conflict_do_nothing()
    else:  # pragma: no cover - the two supported databases are above
        raise RuntimeError(f"unsupported database {dialect!r}: use SQLite or PostgreSQL")
    session.execute(stmt)


def _rate(session: Session, match: Match, bot_ids: list[int], ranking: list[int],
          now: datetime) -> dict[int, tuple[float, float]]:
    game = match.game
    _insert_ignore(session, [{"game": game, "bot_id": b, "rating": INITIAL_RATING, "matches": 0,
                              "updated_at": now} for b in sorted(bot_ids)])
    rows = {
        r.bot_id: r
        for r in session.scalars(
            select(Rating).where(Rating.game == game, Rating.bot_id.in_(bot_ids))
            .order_by(Rating.bot_id).with_for_update()
        )
    }
    before = {b: rows[b].rating for b in bot_ids}
    after = elo_update(before, bot_ids, ranking)
    changes: dict[int, tuple[float, float]] = {}
    for bot_id in bot_ids:
        old, new = before[bot_id], after[bot_id]
        row = rows[bot_id]
        row.rating = new
        row.matches += 1
        row.updated_at = now
        session.add(RatingChange(game=game, bot_id=bot_id, match_id=match.id, before=old, after=new, at=now))
        changes[bot_id] = (old, new)
    return changes


# -- what the sweeper looks at ----------------------------------------------------------------


def stale_running(sessions: sessionmaker, stale_s: float) -> list[int]:
    """Running matches whose runner went silent for ``stale_s``: put back in the queue."""
    cutoff = utcnow() - timedelta(seconds=stale_s)
    with sessions() as session:
        ids = list(session.scalars(
            select(Match.id).where(Match.status == MatchStatus.RUNNING, Match.heartbeat_at < cutoff)
        ))
        back = []
        for match_id in ids:
            result = session.execute(
                update(Match)
                .where(Match.id == match_id, Match.status == MatchStatus.RUNNING, Match.heartbeat_at < cutoff)
                .values(status=MatchStatus.QUEUED, runner=None, queued_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            if result.rowcount == 1:
                back.append(match_id)
        session.commit()
        return back


def orphaned_running(sessions: sessionmaker, processes: Sequence[str], silent_s: float) -> list[int]:
    """Running matches held by one of the worker ``processes`` (``host:pid``, the prefix of
    their runner ids) that died, silent for ``silent_s``: put back in the queue."""
    if not processes:
        return []
    cutoff = utcnow() - timedelta(seconds=silent_s)
    owned = or_(*(Match.runner.like(f"{p}:%") for p in processes))
    condition = and_(Match.status == MatchStatus.RUNNING, owned, Match.heartbeat_at < cutoff)
    with sessions() as session:
        ids = list(session.scalars(select(Match.id).where(condition)))
        back = []
        for match_id in ids:
            result = session.execute(
                update(Match).where(Match.id == match_id, condition)
                .values(status=MatchStatus.QUEUED, runner=None, queued_at=utcnow())
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
    owned = or_(*(Match.runner.like(f"{p}:%") for p in processes))
    with sessions() as session:
        runners = session.scalars(select(Match.runner).where(Match.status == MatchStatus.RUNNING, owned))
        return {r.rsplit(":", 1)[0] for r in runners if r}


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
    """A practice match (no tournament): it is played from the practice queue."""
    with sessions() as session:
        match = session.get(Match, match_id)
        return (match is not None and match.tournament_id is None and match.test_id is None
                and match.ladder_id is None)


def stalled_tests(sessions: sessionmaker) -> list[int]:
    """Running tests with no match in flight: a tick was lost (its task died); tick them again."""
    with sessions() as session:
        open_matches = select(Match.id).where(Match.test_id == SprtTest.id, Match.status.not_in(MATCH_DONE))
        return list(session.scalars(
            select(SprtTest.id).where(SprtTest.status == SprtStatus.RUNNING, ~open_matches.exists())
        ))
