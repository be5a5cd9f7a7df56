"""Leagues: a standing competition on one game and options, with members and seasons.

A season is a tournament of the league's active members (``league_id`` and ``season`` set),
started on demand (:func:`start_season`) or by beat when the league has an interval
(``every_s``) and its next season is due (:func:`due_leagues`). A season never starts while
the previous one still runs: a late one starts as soon as it can. Standings across seasons
(:func:`league_standings`) count every finished match of every season.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from atout_arena.core.models import League, LeagueMember, Tournament, as_utc, parse_id, utcnow
from atout_arena.core.standings import standings
from atout_arena.services.competitions import CompetitionError, CompetitionSpec, entrants
from atout_arena.services.tournaments import (
    OPEN,
    create_tournament,
    match_results,
    standing_rows,
    start_tournament,
)


def create_league(
    sessions: sessionmaker,
    *,
    name: str,
    bots: Sequence[str | int] = (),
    every_s: int | None = None,
    spec: CompetitionSpec | None = None,
    **fields: Any,
) -> int:
    """Store a league and its first members; returns its id. Its game and rules are ``spec``
    or a spec made of ``fields``, as for :func:`~atout_arena.services.tournaments.create_tournament`."""
    spec = spec or CompetitionSpec.of(**fields)
    if every_s is not None and every_s < 1:
        raise CompetitionError(f"every_s={every_s}: a season interval is at least 1 second")
    with sessions() as session:
        league = League(name=name, **spec.columns(), every_s=every_s,
                        next_season_at=utcnow() if every_s else None)
        league.members = [LeagueMember(bot_id=b.id) for b in entrants(session, bots, distinct=True)]
        session.add(league)
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            raise CompetitionError(f"a league named {name!r} already exists", "conflict") from None
        return league.id


def find_league(session: Any, name_or_id: str | int) -> League:
    """The league with this id (an int, or a string of ASCII digits), else with this name;
    :class:`TournamentError` when there is none."""
    league = None
    league_id = parse_id(name_or_id)
    if league_id is not None:
        league = session.get(League, league_id)
    if league is None:
        league = session.scalars(select(League).where(League.name == str(name_or_id))).one_or_none()
    if league is None:
        raise CompetitionError(f"no league {name_or_id!r}", "not_found")
    return league


def set_members(sessions: sessionmaker, league: str | int, join: Sequence[str | int] = (),
                leave: Sequence[str | int] = ()) -> list[str]:
    """Bots join (or come back to) and leave a league; returns the active members' names.
    Leaving keeps the bot's past seasons in the standings."""
    with sessions() as session:
        lg = find_league(session, league)
        members = {m.bot_id: m for m in lg.members}
        for bot in entrants(session, join, distinct=True):  # a bot named twice joins once
            if bot.id in members:
                members[bot.id].active = True
            else:
                members[bot.id] = LeagueMember(bot_id=bot.id)
                lg.members.append(members[bot.id])
        for bot in entrants(session, leave, distinct=True):
            if bot.id in members:
                members[bot.id].active = False
        session.commit()
        return [m.bot.name for m in lg.members if m.active]


def start_season(sessions: sessionmaker, league: str | int) -> tuple[int, list[int]] | None:
    """Create and start the league's next season; returns (tournament id, match ids to
    dispatch), or None when a season is still running."""
    with sessions() as session:
        lg = find_league(session, league)
        running = session.scalar(
            select(Tournament.id).where(Tournament.league_id == lg.id,
                                        Tournament.status.in_(OPEN)).limit(1)
        )
        if running is not None:
            return None
        last = session.scalar(select(func.max(Tournament.season)).where(Tournament.league_id == lg.id))
        season = (last or 0) + 1
        members = [m.bot_id for m in lg.members if m.active and not m.bot.disabled]  # disabled: sit out
        spec = CompetitionSpec.of(game=lg.game, players=lg.players, options=dict(lg.options),
                                  games_per_pairing=lg.games_per_pairing, duplicate=lg.duplicate,
                                  move_ms=lg.move_ms, time_bank_ms=lg.time_bank_ms, max_faults=lg.max_faults)
        league_id, league_name, every_s = lg.id, lg.name, lg.every_s
    if len(members) < spec.players:
        raise CompetitionError(
            f"league {league_name!r} has {len(members)} active members; "
            f"a season needs at least {spec.players}", "conflict"
        )
    try:
        tournament_id = create_tournament(sessions, name=f"{league_name} season {season}", bots=members,
                                          league_id=league_id, season=season, spec=spec)
    except IntegrityError:  # another start of the same season won the race
        return None
    with sessions() as session:
        session.execute(update(League).where(League.id == league_id).values(
            next_season_at=(utcnow() + timedelta(seconds=every_s)) if every_s else None))
        session.commit()
    return tournament_id, start_tournament(sessions, tournament_id)


def due_leagues(sessions: sessionmaker, now: datetime | None = None) -> list[int]:
    """Active leagues with an interval whose next season is due."""
    now = now or utcnow()
    with sessions() as session:
        rows = session.execute(
            select(League.id, League.next_season_at).where(
                League.active.is_(True), League.every_s.is_not(None),
                or_(League.next_season_at.is_(None), League.next_season_at <= now),
            )
        ).all()
        return [league_id for league_id, at in rows if at is None or as_utc(at) <= now]


def league_standings(sessions: sessionmaker, league: str | int) -> dict[str, Any]:
    """The league and its standings over every season so far."""
    with sessions() as session:
        lg = find_league(session, league)
        seasons = list(session.execute(
            select(Tournament.id, Tournament.season, Tournament.status)
            .where(Tournament.league_id == lg.id).order_by(Tournament.season)
        ).all())
        results = match_results(session, [t for t, _, _ in seasons])
        members = [m.bot_id for m in lg.members if m.active]
        return {
            "id": lg.id, "name": lg.name, "game": lg.game, "options": lg.options, "players": lg.players,
            "every_s": lg.every_s, "next_season_at": lg.next_season_at and lg.next_season_at.isoformat(),
            "members": [m.bot.name for m in lg.members if m.active],
            "seasons": [{"season": s, "tournament_id": t, "status": st} for t, s, st in seasons],
            "standings": standing_rows(session, standings(results, bots=members)),
        }
