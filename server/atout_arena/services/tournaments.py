"""Tournaments: create one (its whole schedule of matches), start it, finalize it.

Plain functions of a ``sessionmaker``, called alike by the REST routes, the CLI and the Celery
tasks (:mod:`atout_workers.tasks`), which send what they return. Every rule on a competition's
game, options and entrants is :mod:`atout_arena.services.competitions`'s.

A tournament is created with every match stored ``pending`` (seats, seed,
deadlines), started by turning them ``queued`` (the caller then sends one task per match),
and finalized once, when its last match is done: standings (:mod:`atout_arena.core.standings`) and the
batch rating fit with 95% intervals (:mod:`atout_arena.core.ratings`) are stored with it.

Schedules come from :mod:`atout_arena.core.schedule`: a round robin in both seatings for 2-player
games, balanced tables with rotated seats for 3 to 7 players, and ``duplicate`` deal groups
(every seeded deal played in every seat rotation of its table).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import select, update
from sqlalchemy.orm import Session, selectinload, sessionmaker

from atout_arena.core.db import insert_many
from atout_arena.core.deals import commitment, deal_key
from atout_arena.core.match import rules_version
from atout_arena.core.models import (
    Bot,
    Match,
    MatchSeat,
    RatingChange,
    SprtTest,
    Tournament,
    TournamentEntry,
    TournamentRating,
    utcnow,
)
from atout_arena.core.ratings import RatedSeat, fit, rated_result
from atout_arena.core.relay import is_connected
from atout_arena.core.schedule import ScheduledMatch, deal_suits, tables
from atout_arena.core.standings import MatchResult, Standing, sides_of, standings
from atout_arena.core.vocabulary import MATCH_DONE, MatchStatus, TournamentStatus
from atout_arena.services.bots import is_house
from atout_arena.services.competitions import (
    CompetitionError,
    CompetitionSpec,
    entrants,
    stop_running,
    tell_workers,
)
from atout_arena.services.deals import open_tournaments
from atout_arena.services.practice import is_practice

TournamentError = CompetitionError  # the error of every competition service
DEFAULT_ABSENT_GRACE_S = 10.0  # a match waits this long for an entrant that is not connected
MAX_ABSENT_GRACE_S = 3600.0
OPEN = (TournamentStatus.CREATED, TournamentStatus.RUNNING)  # a tournament that may still change
ONCE = {"synchronize_session": False}


def create_tournament(
    sessions: sessionmaker,
    *,
    name: str,
    bots: Sequence[str | int],
    seed: int | None = None,
    league_id: int | None = None,
    season: int | None = None,
    spec: CompetitionSpec | None = None,
    absent_grace_s: float = DEFAULT_ABSENT_GRACE_S,
    **fields: Any,
) -> int:
    """Store a tournament and its whole schedule (matches ``pending``); returns its id.

    Its game and rules are ``spec``, or a spec made of ``fields`` (``game``, ``players``,
    ``options``, ``games_per_pairing``, ``duplicate``, ``move_ms``, ``time_bank_ms``,
    ``max_faults``: see :meth:`CompetitionSpec.of`). ``absent_grace_s``: how long each match
    waits at its start for an entrant that is not connected before forfeiting its seat as
    ``absent``. Raises :class:`CompetitionError`."""
    return _create(sessions, False, name=name, bots=bots, seed=seed, league_id=league_id, season=season,
                   spec=spec, absent_grace_s=absent_grace_s, **fields)[0]


def create_started(sessions: sessionmaker, **kwargs: Any) -> tuple[int, list[int]]:
    """:func:`create_tournament` and :func:`start_tournament` in one transaction: the
    tournament stored ``running``, its first matches stored ``queued`` (every match; a duplicate
    schedule's first rotations) rather than updated so after. Returns its id and the ids of the
    matches to send, as :func:`start_tournament` does."""
    return _create(sessions, True, **kwargs)


def _create(
    sessions: sessionmaker,
    start: bool,
    *,
    name: str,
    bots: Sequence[str | int],
    seed: int | None = None,
    league_id: int | None = None,
    season: int | None = None,
    spec: CompetitionSpec | None = None,
    absent_grace_s: float = DEFAULT_ABSENT_GRACE_S,
    **fields: Any,
) -> tuple[int, list[int]]:
    spec = spec or CompetitionSpec.of(**fields)
    if not (isinstance(absent_grace_s, int | float) and 0 <= absent_grace_s <= MAX_ABSENT_GRACE_S):
        raise CompetitionError(f"absent_grace_s={absent_grace_s!r}: from 0 to {MAX_ABSENT_GRACE_S:g} seconds")
    seed = secrets.randbits(62) if seed is None else seed
    key = deal_key(sessions, "tournament", seed)  # match seeds are secret (core.deals)
    with sessions() as session:
        ids = [b.id for b in entrants(session, bots, game=None if league_id is not None else spec.game)]
        spec.check_size(len(ids))  # the lower bound first: a schedule far too long is never built
        try:
            schedule = tables(ids, spec.players, spec.games_per_pairing, seed=seed, duplicate=spec.duplicate,
                              key=key)
        except ValueError as exc:
            raise CompetitionError(str(exc)) from None
        spec.check_count(len(schedule))
        now = utcnow()
        tournament = Tournament(name=name, **spec.columns(), seed=seed, deal_key=key,
                                status=TournamentStatus.RUNNING if start else TournamentStatus.CREATED,
                                started_at=now if start else None, league_id=league_id, season=season,
                                absent_grace_s=float(absent_grace_s))
        tournament.entries = [TournamentEntry(bot_id=b, position=i) for i, b in enumerate(ids)]
        session.add(tournament)
        session.flush()
        queued = _store_schedule(session, tournament.id, spec, schedule, seed, key,
                                 queued_at=now if start else None)
        session.commit()
        return tournament.id, queued


def _store_schedule(session: Session, tournament_id: int, spec: CompetitionSpec,
                    schedule: Sequence[ScheduledMatch], seed: int = 0, key: str | None = None,
                    queued_at: datetime | None = None) -> list[int]:
    """Insert the matches and their seats in bulk: 20,000 matches take seconds as ORM objects,
    a fraction of one as two Core executemany. Duplicate rotations are disguised by a suit
    permutation each (:func:`atout_arena.core.schedule.deal_suits`). With ``queued_at`` (a
    tournament created started) the matches a start queues are stored ``queued`` (every one;
    a duplicate's first rotations), the others ``pending``; returns the queued ones' ids."""
    version = rules_version(spec.game)
    connection = session.connection()
    duplicate = spec.duplicate

    def queued(m: ScheduledMatch) -> bool:
        return queued_at is not None and (not duplicate or m.rotation == 0)

    insert_many(connection, Match.__table__,
                ("number", "deal_group", "rotation", "seed", "suits", "status", "queued_at"), (
        (m.index, m.deal_group, m.rotation, m.seed,
         deal_suits(seed, m.deal_group, m.rotation, key) if duplicate else None,
         MatchStatus.QUEUED.value if queued(m) else MatchStatus.PENDING.value,
         queued_at if queued(m) else None)
        for m in schedule
    ), tournament_id=tournament_id, game=spec.game, options=spec.options, move_ms=spec.move_ms,
        time_bank_ms=spec.time_bank_ms, max_faults=spec.max_faults, rules_version=version,
        attempts=0, created_at=utcnow())
    ids = dict(connection.execute(
        select(Match.number, Match.id).where(Match.tournament_id == tournament_id)).all())
    insert_many(connection, MatchSeat.__table__, ("match_id", "seat", "bot_id"), (
        (ids[m.index], s, b) for m in schedule for s, b in enumerate(m.seats)
    ), faults=0, forfeited=False, think_ms=0.0, version="", played_version="")
    return sorted(ids[m.index] for m in schedule if queued(m))


def start_tournament(
    sessions: sessionmaker, tournament_id: int, *, refuse_started: bool = False
) -> list[int]:
    """Mark the tournament running and its pending matches queued; returns the ids of the
    matches to dispatch (none when it was started already: starting twice is harmless, as the
    workers' task needs). ``refuse_started``: a tournament that is not ``created`` is refused
    instead (:class:`TournamentError`, kind ``conflict``), as the organizer's start is; an
    unknown one is always refused (kind ``not_found``)."""
    now = utcnow()
    with sessions() as session:
        result = session.execute(
            update(Tournament)
            .where(Tournament.id == tournament_id, Tournament.status == TournamentStatus.CREATED)
            .values(status=TournamentStatus.RUNNING, started_at=now).execution_options(**ONCE)
        )
        if result.rowcount != 1:
            session.rollback()
            tournament = session.get(Tournament, tournament_id)
            if tournament is None:
                raise TournamentError(f"no tournament {tournament_id}", "not_found")
            if refuse_started:
                raise TournamentError(
                    f"tournament {tournament_id} is {tournament.status}: only a created tournament can start",
                    "conflict")
            return []
        duplicate = session.scalar(select(Tournament.duplicate).where(Tournament.id == tournament_id))
        first = (Match.rotation == 0,) if duplicate else ()  # later rotations: services.deals.release_next
        ids = list(session.scalars(
            update(Match)
            .where(Match.tournament_id == tournament_id, Match.status == MatchStatus.PENDING, *first)
            .values(status=MatchStatus.QUEUED, queued_at=now).returning(Match.id)
            .execution_options(synchronize_session=False)
        ))
        session.commit()
        return sorted(ids)


def cancel_tournament(sessions: sessionmaker, tournament_id: int, redis_client: Any = None) -> int:
    """Cancel a created or running tournament: its matches not started yet (``pending``,
    ``queued``) become ``cancelled``, and so do its running ones, which their workers stop
    within a second (told through ``redis_client``; without it, at their next heartbeat): no
    result is stored for them, nobody is rated by them. Returns how many matches were cancelled
    (0 when cancelled already); a finished tournament cannot be cancelled. Safe against
    workers: only a ``queued`` match is claimed, only a ``running`` one's result is stored (by
    the lease holder), and only a ``running`` tournament is finalized."""
    now = utcnow()
    reason = f"tournament {tournament_id} cancelled"
    with sessions() as session:
        result = session.execute(
            update(Tournament).where(Tournament.id == tournament_id, Tournament.status.in_(OPEN))
            .values(status=TournamentStatus.CANCELLED, finished_at=now).execution_options(**ONCE)
        )
        if result.rowcount != 1:
            session.rollback()
            tournament = session.get(Tournament, tournament_id)
            if tournament is None:
                raise TournamentError(f"no tournament {tournament_id}")
            if tournament.status == TournamentStatus.CANCELLED:
                return 0
            raise TournamentError(
                f"tournament {tournament_id} is {tournament.status}: it cannot be cancelled"
            )
        cancelled = session.execute(
            update(Match)
            .where(Match.tournament_id == tournament_id,
                   Match.status.in_((MatchStatus.PENDING, MatchStatus.QUEUED)))
            .values(status=MatchStatus.CANCELLED, finished_at=now).execution_options(**ONCE)
        )
        stopped = stop_running(session, Match.tournament_id == tournament_id, reason)
        session.commit()
    tell_workers(redis_client, stopped, reason)
    return int(cancelled.rowcount) + len(stopped)


def retry_match(sessions: sessionmaker, match_id: int) -> bool:
    """Play a ``failed`` match again from its seed: it turns ``queued`` with its errors and
    claims reset, and its tournament (finished with failures) runs again until the match is
    done, then is finalized again. Returns whether it is a practice match (the queue to send
    it to); a match that did not fail is refused (:class:`TournamentError`)."""
    now = utcnow()
    with sessions() as session:
        result = session.execute(
            update(Match).where(Match.id == match_id, Match.status == MatchStatus.FAILED)
            .values(status=MatchStatus.QUEUED, queued_at=now, finished_at=None, lease_id=None, errors=0,
                    attempts=0, error=None).execution_options(**ONCE)
        )
        match = session.get(Match, match_id)
        if match is None:
            raise TournamentError(f"no match {match_id}")
        if result.rowcount != 1:
            session.rollback()
            raise TournamentError(f"match {match_id} is {match.status}: only a failed match can be retried")
        if match.tournament_id is not None:
            session.execute(
                update(Tournament).where(Tournament.id == match.tournament_id,
                                         Tournament.status == TournamentStatus.FINISHED)
                .values(status=TournamentStatus.RUNNING, finished_at=None).execution_options(**ONCE)
            )
        if match.test_id is not None:  # its set, counted void, counts again: the test's tally is
            session.execute(  # read again from every match at its next tick (services.sprt)
                update(SprtTest).where(SprtTest.id == match.test_id)
                .values(counted_sets=0, counted=None).execution_options(**ONCE))
        practice = is_practice(match)  # a ladder's match too goes back to the matches queue
        session.commit()
        return practice


def retry_and_send(
    sessions: sessionmaker,
    match_id: int,
    *,
    dispatch: Callable[[Iterable[int]], object],
    play_practice: Callable[[int], object],
) -> bool:
    """:func:`retry_match`, then send the match to the queue it belongs to: a practice match with
    ``play_practice`` (the practice queue), any other with ``dispatch`` (the matches queue).
    Returns whether it was a practice match; a match that did not fail is refused
    (:class:`TournamentError`) and nothing is sent."""
    practice = retry_match(sessions, match_id)
    if practice:
        play_practice(match_id)
    else:
        dispatch([match_id])
    return practice


def match_results(session: Session, tournament_ids: Sequence[int]) -> list[MatchResult]:
    """The finished matches of some tournaments, as :class:`atout_arena.core.standings.MatchResult`."""
    matches = session.scalars(
        select(Match).where(Match.tournament_id.in_(tournament_ids), Match.status == MatchStatus.FINISHED)
        .options(selectinload(Match.seats)).order_by(Match.id)
    )
    results = []
    for match in matches:
        seats = sorted(match.seats, key=lambda s: s.seat)
        results.append(MatchResult(
            # a finished match's seats all have their place (0, as None, is refused: not a place)
            seats=tuple(s.bot_id for s in seats), ranking=tuple(s.place or 0 for s in seats),
            faults=tuple(s.faults for s in seats), forfeited=tuple(s.forfeited for s in seats),
            sides=sides_of(match.options or {}, len(seats)),
        ))
    return results


def rated_results(
    session: Session, tournament_ids: Sequence[int] | None = None, *, game: str | None = None
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``(seats, ranking)`` of the finished matches for a batch fit: a tournament's
    (``tournament_ids``), or every rated match of ``game`` (the leaderboard). A seat counts
    where its result rated it online: its rating row, written by the workers under
    :func:`~atout_arena.core.ratings.rated_result`'s rule (not an absent bot, nor one disabled
    by then), which is applied again to the stored seats; a match that rated nobody is skipped."""
    rows = select(RatingChange.match_id, RatingChange.bot_id)
    if game is not None:
        rows = rows.where(RatingChange.game == game)
    if tournament_ids is not None:
        rows = rows.where(RatingChange.match_id.in_(
            select(Match.id).where(Match.tournament_id.in_(tournament_ids))))
    rated_seats = {(match_id, bot_id) for match_id, bot_id in session.execute(rows)}
    matches = session.scalars(
        select(Match).where(Match.id.in_(rows.with_only_columns(RatingChange.match_id).distinct()),
                            Match.status == MatchStatus.FINISHED)
        .options(selectinload(Match.seats)).order_by(Match.id)
    )
    out = []
    for match in matches:
        kept = rated_result([RatedSeat(s.bot_id, s.place, absent=s.absent)
                             for s in sorted(match.seats, key=lambda s: s.seat)
                             if (match.id, s.bot_id) in rated_seats])
        if kept is not None:
            out.append(kept)
    return out


def absent_bots(session: Session, tournament_ids: Sequence[int]) -> set[int]:
    """The bots that never came: absent from every finished match they were seated in."""
    rows = session.execute(
        select(MatchSeat.bot_id, MatchSeat.absent).join(Match)
        .where(Match.tournament_id.in_(tournament_ids), Match.status == MatchStatus.FINISHED)
    ).all()
    seen: dict[int, bool] = {}
    for bot_id, absent in rows:
        seen[bot_id] = seen.get(bot_id, True) and bool(absent)
    return {bot for bot, always in seen.items() if always}


def not_connected(sessions: sessionmaker, redis: Any, tournament_id: int) -> list[str]:
    """The names of a tournament's entrants with no live stream now (told when it is created
    or started: their matches wait ``absent_grace_s`` for them, then forfeit their seats)."""
    with sessions() as session:
        rows = session.execute(
            select(Bot.id, Bot.name).join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
            .where(TournamentEntry.tournament_id == tournament_id).order_by(TournamentEntry.position)
        ).all()
    return [name for bot_id, name in rows if not is_house(name) and not is_connected(redis, bot_id)]


def standing_rows(session: Session, table: list[Standing],
                  absent: set[int] | None = None) -> list[dict[str, Any]]:
    """Standings as JSON-ready dicts, with the bots' names; ``absent``: bots that never came."""
    names: dict[Hashable, str] = dict(
        session.execute(select(Bot.id, Bot.name).where(Bot.id.in_([s.bot for s in table]))).all())
    rows = []
    for line in table:
        row = asdict(line)
        row["bot_id"] = row.pop("bot")
        row["bot"] = names.get(line.bot, str(line.bot))
        row["places"] = {str(k): v for k, v in line.places.items()}
        row["absent"] = line.bot in (absent or set())
        rows.append(row)
    return rows


def finalize_tournament(sessions: sessionmaker, tournament_id: int) -> bool:
    """Store the standings and the batch rating fit, once every match is done. Idempotent:
    False when the tournament is not complete or was finalized already."""
    with sessions() as session:
        # Write first (see atout_workers.store): only one finalize gets past this line.
        done = session.execute(
            update(Tournament)
            .where(Tournament.id == tournament_id, Tournament.status == TournamentStatus.RUNNING)
            .values(status=TournamentStatus.FINISHED, finished_at=utcnow()).execution_options(**ONCE)
        )
        if done.rowcount != 1:
            session.rollback()
            return False
        open_matches = session.scalar(
            select(Match.id).where(Match.tournament_id == tournament_id,
                                   Match.status.not_in(MATCH_DONE)).limit(1)
        )
        if open_matches is not None:
            session.rollback()
            return False
        tournament = session.get(Tournament, tournament_id)
        assert tournament is not None
        entrants = [e.bot_id for e in tournament.entries]
        results = match_results(session, [tournament_id])
        tournament.standings = standing_rows(session, standings(results, bots=entrants),
                                             absent_bots(session, [tournament_id]))
        for old in list(tournament.fitted):
            session.delete(old)
        session.flush()
        rated = rated_results(session, [tournament_id])
        if rated:
            fitted = fit(rated)
            for rank, line in enumerate(fitted.ratings, 1):
                session.add(TournamentRating(
                    tournament_id=tournament_id, bot_id=line.bot, rank=rank, rating=line.elo,
                    ci_low=line.ci_low, ci_high=line.ci_high, los_next=line.los, games=line.games,
                ))
        session.commit()
        return True


class FittedRow(TypedDict):
    """A line of a finished tournament's batch rating fit (:mod:`atout_arena.core.ratings`)."""

    rank: int
    bot: str
    rating: float
    ci_low: float | None
    ci_high: float | None
    los_next: float | None
    games: int


@dataclass(frozen=True)
class TournamentSummary:
    """What :func:`tournament_summary` tells of a tournament. ``standings`` are the rows of
    :func:`standing_rows` (stored with it once finished, live before); ``matches`` counts its
    matches by status; ``seed`` and ``deal_key`` are None while they are not the caller's to see."""

    id: int
    name: str
    game: str
    options: dict[str, Any]
    players: int
    games_per_pairing: int
    duplicate: bool
    move_ms: int
    time_bank_ms: int
    max_faults: int
    status: TournamentStatus
    seed: int | None
    deal_key: str | None
    deal_commitment: str | None
    deals_public: bool
    league_id: int | None
    season: int | None
    entrants: list[str]
    matches: dict[str, int]
    standings: list[dict[str, Any]]
    ratings: list[FittedRow]

    @property
    def final(self) -> bool:
        """Whether its standings are final: it is finished (cancelled or running: not)."""
        return self.status == TournamentStatus.FINISHED



def tournament_summary(
    sessions: sessionmaker, tournament_id: int, *, organizer: bool = True
) -> TournamentSummary:
    """Everything a person (or the API) wants to see of a tournament. Its ``seed`` and
    ``deal_key`` are None for anyone but the ``organizer`` until its deals are public
    (:mod:`atout_arena.services.deals`); ``deal_commitment`` is always shown."""
    with sessions() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            raise TournamentError(f"no tournament {tournament_id}")
        shown = organizer or t.id not in open_tournaments(session, [t.id])
        counts: dict[str, int] = {}
        for status in session.scalars(select(Match.status).where(Match.tournament_id == tournament_id)):
            counts[status] = counts.get(status, 0) + 1
        names = dict(session.execute(select(Bot.id, Bot.name)).all())
        table = t.standings
        if table is None:  # live standings while it runs
            table = standing_rows(session, standings(match_results(session, [tournament_id]),
                                                     bots=[e.bot_id for e in t.entries]),
                                  absent_bots(session, [tournament_id]))
        return TournamentSummary(
            id=t.id, name=t.name, game=t.game, options=t.options, players=t.players,
            games_per_pairing=t.games_per_pairing, duplicate=t.duplicate, move_ms=t.move_ms,
            time_bank_ms=t.time_bank_ms, max_faults=t.max_faults, status=TournamentStatus(t.status),
            seed=t.seed if shown else None, deal_key=t.deal_key if shown else None,
            deal_commitment=commitment(t.deal_key),
            deals_public=t.id not in open_tournaments(session, [t.id]),
            league_id=t.league_id, season=t.season,
            entrants=[names.get(e.bot_id, str(e.bot_id)) for e in t.entries],
            matches=counts, standings=table,
            ratings=[
                FittedRow(rank=r.rank, bot=names.get(r.bot_id, str(r.bot_id)), rating=r.rating,
                          ci_low=r.ci_low, ci_high=r.ci_high, los_next=r.los_next, games=r.games)
                for r in t.fitted
            ],
        )
