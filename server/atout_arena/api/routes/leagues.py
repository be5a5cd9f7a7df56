"""Leagues: create, members, start a season, standings across seasons."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, status
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from atout_arena.api import queries
from atout_arena.api.deps import ArenaDep, LeaguePath, OrganizerDep, Responses, SessionDep
from atout_arena.api.schemas import (
    LeagueCreate,
    LeagueMembers,
    LeaguePublic,
    LeagueStandings,
    MembersUpdate,
    SeasonStarted,
)
from atout_arena.core.models import League, Tournament
from atout_arena.services.competitions import CompetitionError, CompetitionSpec
from atout_arena.services.leagues import (
    create_league,
    find_league,
    league_standings,
    set_members,
    start_season,
)

router = APIRouter(prefix="/v1/leagues", tags=["leagues"])

NOT_FOUND: Responses = {404: {"description": "no such league"}}
CODES = {"invalid": status.HTTP_422_UNPROCESSABLE_CONTENT, "not_found": status.HTTP_404_NOT_FOUND,
         "conflict": status.HTTP_409_CONFLICT}
AUTH: Responses = {
    401: {"description": "no token, or an unknown one"},
    403: {"description": "not the organizer"},
}


def _league(session: Session, ref: str) -> League:
    try:
        return find_league(session, ref)
    except CompetitionError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no league {ref!r}") from None


def _public(arena: ArenaDep, league_id: int) -> LeaguePublic:
    with arena.sessions() as session:
        league = session.get(League, league_id, options=[selectinload(League.members)])
        assert league is not None
        return LeaguePublic.model_validate(queries.league_public(session, league))


@router.post(
    "",
    response_model=LeaguePublic,
    status_code=status.HTTP_201_CREATED,
    responses={**AUTH, 404: {"description": "a bot named in bots does not exist"},
               409: {"description": "the name is taken"}},
)
def create(body: LeagueCreate, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> LeaguePublic:
    """Create a league: a standing competition on one game and options, with its first
    members. A season is a tournament of its active members; with ``every_s`` a season starts
    every so many seconds (under ``atout-arena beat``), otherwise on demand."""
    try:
        league_id = create_league(arena.sessions, name=body.name, bots=body.bots, every_s=body.every_s,
                                  spec=CompetitionSpec.of(**body.competition()))
    except CompetitionError as exc:
        raise HTTPException(CODES[exc.kind], str(exc)) from None
    return _public(arena, league_id)


@router.get("", response_model=list[LeaguePublic])
def list_leagues(session: SessionDep, limit: Annotated[int, Query(ge=1, le=500)] = 100) -> list[LeaguePublic]:
    """Leagues, with their members and seasons."""
    leagues = session.scalars(
        select(League).options(selectinload(League.members)).order_by(League.id).limit(limit)
    )
    return [LeaguePublic.model_validate(queries.league_public(session, lg)) for lg in leagues]


@router.get("/{league}", response_model=LeaguePublic, responses=NOT_FOUND)
def show(league: LeaguePath, session: SessionDep) -> LeaguePublic:
    """A league (by name or id): game, options, active members, seasons."""
    return LeaguePublic.model_validate(queries.league_public(session, _league(session, league)))


@router.post("/{league}/members", response_model=LeagueMembers, responses={**AUTH, **NOT_FOUND})
def members(
    league: LeaguePath, body: MembersUpdate, arena: ArenaDep, session: SessionDep, _: OrganizerDep
) -> LeagueMembers:
    """Bots join (or come back to) and leave the league; the answer lists the active members.
    Leaving keeps a bot's past seasons in the standings; the next season counts the members
    of the moment it starts."""
    found = _league(session, league)
    try:
        active = set_members(arena.sessions, found.id, join=body.join, leave=body.leave)
    except CompetitionError as exc:
        raise HTTPException(CODES[exc.kind], str(exc)) from None
    return LeagueMembers(league_id=found.id, members=active)


@router.post(
    "/{league}/seasons",
    response_model=SeasonStarted,
    status_code=status.HTTP_201_CREATED,
    responses={**AUTH, **NOT_FOUND, 409: {"description": "a season still runs, or too few members"}},
)
def new_season(league: LeaguePath, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> SeasonStarted:
    """Start the league's next season now: a tournament of its active members, started at
    once. A 409 while the previous season still runs."""
    found = _league(session, league)
    league_id = found.id
    session.close()
    try:
        started = start_season(arena.sessions, league_id)
    except CompetitionError as exc:  # too few members: the league must change first
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    if started is None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"league {found.name!r} has a season still running")
    tournament_id, match_ids = started
    arena.dispatch(match_ids)
    with arena.sessions() as s:
        season = s.scalar(select(Tournament.season).where(Tournament.id == tournament_id))
    return SeasonStarted(
        league_id=league_id, season=season or 0, tournament_id=tournament_id, matches=len(match_ids)
    )


@router.get("/{league}/standings", response_model=LeagueStandings, responses=NOT_FOUND)
def standings(league: LeaguePath, arena: ArenaDep, session: SessionDep) -> LeagueStandings:
    """Standings across every season so far (every finished match of every season)."""
    found = _league(session, league)
    data = league_standings(arena.sessions, found.id)
    return LeagueStandings(
        league_id=found.id, name=data["name"], seasons=data["seasons"], standings=data["standings"]
    )
