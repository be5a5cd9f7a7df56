"""Tournaments: create one (its whole schedule of matches), start it, finalize it.

Plain functions of a ``sessionmaker``; the Celery tasks (:mod:`atout_workers.tasks`) only dispatch
what they return. A tournament is created with every match stored ``pending`` (seats, seed,
deadlines), started by turning them ``queued`` (the caller then sends one task per match),
and finalized once, when its last match is done: standings (:mod:`atout_arena.core.standings`) and the
batch rating fit with 95% intervals (:mod:`atout_arena.core.ratings`) are stored with it.

Schedules come from :mod:`atout_arena.core.schedule`: a round robin in both seatings for 2-player
games, balanced tables with rotated seats for 3 to 7 players, and ``duplicate`` deal groups
(every seeded deal played in every seat rotation of its table).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, selectinload, sessionmaker

from atout.games import new_game
from atout_arena.core.models import Bot, Match, MatchSeat, Tournament, TournamentEntry, TournamentRating
from atout_arena.core.ratings import fit
from atout_arena.core.schedule import tables
from atout_arena.core.standings import MatchResult, Standing, standings
from atout_arena.services.bots import find_bot
from atout_workers.decisions import DEFAULT_MAX_DEADLINE_MS
from atout_workers.store import utcnow


class TournamentError(ValueError):
    """A tournament that cannot be created or changed; the message says why."""


def find_bots(session: Session, names_or_ids: Sequence[str | int], *, distinct: bool = False) -> list[Bot]:
    """Bots by name or id, in the order given; a clear error for an unknown one. With
    ``distinct`` a bot named twice (by name and by id, say) is listed once, where it came first."""
    found: dict[int, Bot] = {}
    listed = []
    for key in names_or_ids:
        bot = find_bot(session, key)
        if bot is None:
            raise TournamentError(f"no bot named {key!r}")
        if distinct and bot.id in found:
            continue
        found[bot.id] = bot
        listed.append(bot)
    return listed


def check_rules(game: str, players: int | None, options: dict[str, Any], move_ms: int, time_bank_ms: int,
                max_faults: int) -> int:
    """Check a game, its options and the deadlines; returns the number of players."""
    try:
        rules = new_game(game, players=players, **options)
    except ValueError as exc:
        raise TournamentError(str(exc)) from None
    if not move_ms >= 1 or move_ms + time_bank_ms > DEFAULT_MAX_DEADLINE_MS:
        raise TournamentError(
            f"move_ms={move_ms}, time_bank_ms={time_bank_ms}: a move needs at least 1 ms and at most "
            f"{DEFAULT_MAX_DEADLINE_MS} ms with the bank"
        )
    if time_bank_ms < 0 or max_faults < 0:
        raise TournamentError("time_bank_ms and max_faults must be >= 0")
    return rules.players


def create_tournament(
    sessions: sessionmaker,
    *,
    name: str,
    game: str,
    bots: Sequence[str | int],
    players: int | None = None,
    options: dict[str, Any] | None = None,
    games_per_pairing: int = 1,
    duplicate: bool = False,
    move_ms: int = 1000,
    time_bank_ms: int = 0,
    max_faults: int = 3,
    seed: int | None = None,
    league_id: int | None = None,
    season: int | None = None,
) -> int:
    """Store a tournament and its whole schedule (matches ``pending``); returns its id."""
    options = dict(options or {})
    options.pop("players", None)
    n = check_rules(game, players, options, move_ms, time_bank_ms, max_faults)
    seed = secrets.randbits(62) if seed is None else seed
    with sessions() as session:
        entrants = find_bots(session, bots)
        ids = [b.id for b in entrants]
        try:
            schedule = tables(ids, n, games_per_pairing, seed=seed, duplicate=duplicate)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
        tournament = Tournament(
            name=name, game=game, options=options, players=n, games_per_pairing=games_per_pairing,
            duplicate=duplicate, move_ms=move_ms, time_bank_ms=time_bank_ms, max_faults=max_faults,
            seed=seed, status="created", league_id=league_id, season=season,
        )
        tournament.entries = [TournamentEntry(bot_id=b, position=i) for i, b in enumerate(ids)]
        session.add(tournament)
        session.flush()
        for scheduled in schedule:
            match = Match(
                tournament_id=tournament.id, number=scheduled.index, deal_group=scheduled.deal_group,
                rotation=scheduled.rotation, game=game, options=options, seed=scheduled.seed,
                move_ms=move_ms, time_bank_ms=time_bank_ms, max_faults=max_faults, status="pending",
            )
            match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(scheduled.seats)]
            session.add(match)
        session.commit()
        return tournament.id


def start_tournament(sessions: sessionmaker, tournament_id: int) -> list[int]:
    """Mark the tournament running and its pending matches queued; returns the ids of the
    matches to dispatch (none when it was started already: starting twice is harmless)."""
    now = utcnow()
    with sessions() as session:
        result = session.execute(
            update(Tournament).where(Tournament.id == tournament_id, Tournament.status == "created")
            .values(status="running", started_at=now).execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:
            session.rollback()
            if session.get(Tournament, tournament_id) is None:
                raise TournamentError(f"no tournament {tournament_id}")
            return []
        ids = list(session.scalars(
            update(Match).where(Match.tournament_id == tournament_id, Match.status == "pending")
            .values(status="queued", queued_at=now).returning(Match.id)
            .execution_options(synchronize_session=False)
        ))
        session.commit()
        return sorted(ids)


def cancel_tournament(sessions: sessionmaker, tournament_id: int) -> int:
    """Cancel a created or running tournament: its matches not started yet (``pending``,
    ``queued``) become ``cancelled``; running ones play to the end and keep their result.
    Returns how many matches were cancelled (0 when cancelled already); a finished tournament
    cannot be cancelled. Safe against workers: only a ``queued`` match is claimed, and only a
    ``running`` tournament is finalized."""
    now = utcnow()
    with sessions() as session:
        result = session.execute(
            update(Tournament).where(Tournament.id == tournament_id,
                                     Tournament.status.in_(("created", "running")))
            .values(status="cancelled", finished_at=now).execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:
            session.rollback()
            tournament = session.get(Tournament, tournament_id)
            if tournament is None:
                raise TournamentError(f"no tournament {tournament_id}")
            if tournament.status == "cancelled":
                return 0
            raise TournamentError(
                f"tournament {tournament_id} is {tournament.status}: it cannot be cancelled"
            )
        cancelled = session.execute(
            update(Match).where(Match.tournament_id == tournament_id, Match.status.in_(("pending", "queued")))
            .values(status="cancelled", finished_at=now).execution_options(synchronize_session=False)
        )
        session.commit()
        return int(cancelled.rowcount)


def match_results(session: Session, tournament_ids: Sequence[int]) -> list[MatchResult]:
    """The finished matches of some tournaments, as :class:`atout_arena.core.standings.MatchResult`."""
    matches = session.scalars(
        select(Match).where(Match.tournament_id.in_(tournament_ids), Match.status == "finished")
        .options(selectinload(Match.seats)).order_by(Match.id)
    )
    results = []
    for match in matches:
        seats = sorted(match.seats, key=lambda s: s.seat)
        results.append(MatchResult(
            seats=tuple(s.bot_id for s in seats), ranking=tuple(s.place for s in seats),
            faults=tuple(s.faults for s in seats), forfeited=tuple(s.forfeited for s in seats),
        ))
    return results


def standing_rows(session: Session, table: list[Standing]) -> list[dict[str, Any]]:
    """Standings as JSON-ready dicts, with the bots' names."""
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_([s.bot for s in table]))).all())
    rows = []
    for line in table:
        row = asdict(line)
        row["bot_id"] = row.pop("bot")
        row["bot"] = names.get(line.bot, str(line.bot))
        row["places"] = {str(k): v for k, v in line.places.items()}
        rows.append(row)
    return rows


def finalize_tournament(sessions: sessionmaker, tournament_id: int) -> bool:
    """Store the standings and the batch rating fit, once every match is done. Idempotent:
    False when the tournament is not complete or was finalized already."""
    with sessions() as session:
        # Write first (see atout_workers.store): only one finalize gets past this line.
        done = session.execute(
            update(Tournament).where(Tournament.id == tournament_id, Tournament.status == "running")
            .values(status="finished", finished_at=utcnow()).execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:
            session.rollback()
            return False
        open_matches = session.scalar(
            select(Match.id).where(Match.tournament_id == tournament_id,
                                   Match.status.not_in(("finished", "failed", "cancelled"))).limit(1)
        )
        if open_matches is not None:
            session.rollback()
            return False
        tournament = session.get(Tournament, tournament_id)
        assert tournament is not None
        entrants = [e.bot_id for e in tournament.entries]
        results = match_results(session, [tournament_id])
        tournament.standings = standing_rows(session, standings(results, bots=entrants))
        for old in list(tournament.fitted):
            session.delete(old)
        session.flush()
        if results:
            fitted = fit(results)
            for rank, line in enumerate(fitted.ratings, 1):
                session.add(TournamentRating(
                    tournament_id=tournament_id, bot_id=line.bot, rank=rank, rating=line.elo,
                    ci_low=line.ci_low, ci_high=line.ci_high, los_next=line.los, games=line.games,
                ))
        session.commit()
        return True


def tournament_summary(sessions: sessionmaker, tournament_id: int) -> dict[str, Any]:
    """Everything a person (or the API) wants to see of a tournament, as plain data."""
    with sessions() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            raise TournamentError(f"no tournament {tournament_id}")
        counts: dict[str, int] = {}
        for status in session.scalars(select(Match.status).where(Match.tournament_id == tournament_id)):
            counts[status] = counts.get(status, 0) + 1
        names = dict(session.execute(select(Bot.id, Bot.name)).all())
        table = t.standings
        if table is None:  # live standings while it runs
            table = standing_rows(session, standings(match_results(session, [tournament_id]),
                                                     bots=[e.bot_id for e in t.entries]))
        return {
            "id": t.id, "name": t.name, "game": t.game, "options": t.options, "players": t.players,
            "games_per_pairing": t.games_per_pairing, "duplicate": t.duplicate, "move_ms": t.move_ms,
            "time_bank_ms": t.time_bank_ms, "max_faults": t.max_faults, "seed": t.seed, "status": t.status,
            "league_id": t.league_id, "season": t.season,
            "entrants": [names.get(e.bot_id, str(e.bot_id)) for e in t.entries],
            "matches": counts, "standings": table,
            "ratings": [
                {"rank": r.rank, "bot": names.get(r.bot_id, str(r.bot_id)), "rating": r.rating,
                 "ci_low": r.ci_low, "ci_high": r.ci_high, "los_next": r.los_next, "games": r.games}
                for r in t.fitted
            ],
        }
