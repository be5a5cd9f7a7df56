"""Tournaments: create, start, cancel, show with progress, standings, matches."""

from __future__ import annotations

import logging
import threading
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from atout_arena.api import queries
from atout_arena.api.deps import (
    TOKEN_OPTIONAL,
    ArenaDep,
    CallerDep,
    OrganizerDep,
    Responses,
    SessionDep,
    TournamentIdPath,
    known_id,
)
from atout_arena.api.errors import refused
from atout_arena.api.schemas import (
    MatchPage,
    MatchStatusName,
    Standings,
    TournamentCreate,
    TournamentDetail,
    TournamentPublic,
    TournamentStatusName,
)
from atout_arena.core.models import Bot, Tournament
from atout_arena.services.bots import find_bot
from atout_arena.services.competitions import CompetitionError, CompetitionSpec
from atout_arena.services.tournaments import (
    TournamentError,
    cancel_tournament,
    create_started,
    create_tournament,
    not_connected,
    start_tournament,
    tournament_summary,
)

router = APIRouter(prefix="/v1/tournaments", tags=["tournaments"])
log = logging.getLogger(__name__)

NOT_FOUND: Responses = {404: {"description": "no such tournament"}}
AUTH: Responses = {
    401: {"description": "no token, or an unknown one"},
    403: {"description": "not the organizer"},
}


def _tournament(session: Session, tournament_id: int) -> Tournament:
    known_id(tournament_id, "tournament")
    t = session.get(Tournament, tournament_id, options=[selectinload(Tournament.entries)])
    if t is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no tournament {tournament_id}")
    return t


def _detail(arena: ArenaDep, tournament_id: int, organizer: bool = True) -> TournamentDetail:
    summary = tournament_summary(arena.sessions, tournament_id, organizer=organizer)
    with arena.sessions() as session:
        t = _tournament(session, tournament_id)
        public = queries.tournaments_public(session, [t])[0]
    return TournamentDetail.model_validate(
        {**public, "seed": summary.seed, "deal_key": summary.deal_key,
         "deal_commitment": summary.deal_commitment, "deals_public": summary.deals_public,
         "standings": summary.standings, "ratings": summary.ratings}
    )


@router.post(
    "",
    response_model=TournamentDetail,
    status_code=status.HTTP_201_CREATED,
    responses={**AUTH, 404: {"description": "a bot named in bots does not exist"}},
)
def create(body: TournamentCreate, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> TournamentDetail:
    """Create a tournament and its whole schedule (every match stored ``pending``): a round
    robin in both seatings for 2-player games, balanced tables with rotated seats otherwise;
    ``duplicate`` plays each seeded deal in every seat rotation. Bad options are a 422 with
    the engine's message. With ``start: true`` it starts at once."""
    try:  # started: stored running with its first matches queued, in one transaction
        tid, match_ids = (create_started if body.start else create_unstarted)(
            arena.sessions, name=body.name, bots=body.bots, seed=body.seed,
            spec=CompetitionSpec.of(**body.competition()), absent_grace_s=body.absent_grace_s)
    except CompetitionError as exc:
        code = status.HTTP_404_NOT_FOUND if exc.kind == "not_found" else status.HTTP_422_UNPROCESSABLE_CONTENT
        raise HTTPException(code, str(exc)) from None
    send_in_waves(arena, match_ids)
    return _with_absent(arena, _detail(arena, tid))


def create_unstarted(sessions: Any, **kwargs: Any) -> tuple[int, list[int]]:
    """:func:`create_tournament`, shaped as :func:`create_started` (no match to send)."""
    return create_tournament(sessions, **kwargs), []


FIRST_WAVE = 512  # matches sent to the workers before the answer (64 tasks); the rest just after


def send_in_waves(arena: ArenaDep, match_ids: list[int]) -> None:
    """Send the first :data:`FIRST_WAVE` matches to the workers now, the rest on a thread of
    their own once the answer is on its way: the largest tournament's 2,488 tasks took over a
    second to send, one broker round trip each, while the first wave alone keeps a few workers
    busy. Nothing is lost if this process dies meanwhile: the matches are ``queued`` in the
    database already, and the sweeper sends a queued match again when the queue is empty."""
    arena.dispatch(match_ids[:FIRST_WAVE])
    rest = match_ids[FIRST_WAVE:]
    if rest:
        threading.Thread(target=_send_rest, args=(arena, rest), name="atout-dispatch", daemon=True).start()


def _send_rest(arena: ArenaDep, match_ids: list[int]) -> None:
    try:
        arena.dispatch(match_ids)
    except Exception:  # the sweeper sends them (queued, with an empty queue)
        log.exception("sending %d matches to the workers failed; the sweeper will", len(match_ids))


def _with_absent(arena: ArenaDep, detail: TournamentDetail) -> TournamentDetail:
    """The entrants not connected now, told when a tournament is created or started."""
    detail.absent = not_connected(arena.sessions, arena.redis, detail.id)
    return detail


@router.get("", response_model=list[TournamentPublic])
def list_tournaments(
    session: SessionDep,
    status_: Annotated[TournamentStatusName | None, Query(alias="status")] = None,
    game: Annotated[str | None, Query(max_length=32)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[TournamentPublic]:
    """Tournaments, newest first, with their progress."""
    query = (
        select(Tournament)
        .options(selectinload(Tournament.entries))
        .order_by(Tournament.id.desc())
        .limit(limit)
    )
    if status_ is not None:
        query = query.where(Tournament.status == status_)
    if game is not None:
        query = query.where(Tournament.game == game)
    return [
        TournamentPublic.model_validate(t)
        for t in queries.tournaments_public(session, list(session.scalars(query)))
    ]


@router.get("/{tournament_id}", response_model=TournamentDetail, responses=NOT_FOUND,
            openapi_extra=TOKEN_OPTIONAL)
def show(
    tournament_id: TournamentIdPath, arena: ArenaDep, session: SessionDep, caller: CallerDep
) -> TournamentDetail:
    """A tournament with its progress (matches by status), its standings (live while it runs)
    and, once finished, the batch rating fit with 95% confidence intervals. Its ``seed`` and
    ``deal_key`` are shown once it is over (to the organizer, always); ``deal_commitment``,
    the SHA-256 of the key, from the start, so anyone can check the key once it is shown."""
    _tournament(session, tournament_id)
    return _detail(arena, tournament_id, caller.organizer)


@router.post(
    "/{tournament_id}/start",
    response_model=TournamentDetail,
    responses={**AUTH, **NOT_FOUND, 409: {"description": "not in the created state"}},
)
def start(
    tournament_id: TournamentIdPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep
) -> TournamentDetail:
    """Start a created tournament: its matches are queued and sent to the workers."""
    _tournament(session, tournament_id)
    try:
        match_ids = start_tournament(arena.sessions, tournament_id, refuse_started=True)
    except TournamentError as exc:  # not created (409), or gone (404)
        raise refused(exc.kind, str(exc)) from None
    send_in_waves(arena, match_ids)
    return _with_absent(arena, _detail(arena, tournament_id))


@router.post(
    "/{tournament_id}/cancel",
    response_model=TournamentDetail,
    responses={**AUTH, **NOT_FOUND, 409: {"description": "finished already"}},
)
def cancel(
    tournament_id: TournamentIdPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep
) -> TournamentDetail:
    """Cancel a tournament: its matches not started yet are cancelled, and its running ones
    too, stopped by their workers within a second (no result stored, nobody rated). Cancelling
    a cancelled tournament does nothing; a finished one is a 409."""
    _tournament(session, tournament_id)
    try:
        cancel_tournament(arena.sessions, tournament_id, arena.redis)
    except TournamentError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return _detail(arena, tournament_id)


@router.get("/{tournament_id}/standings", response_model=Standings, responses=NOT_FOUND)
def standings(tournament_id: TournamentIdPath, arena: ArenaDep, session: SessionDep) -> Standings:
    """The standings: pairwise points (1 per opponent placed below, 0.5 per tie), then direct
    encounters, wins, fewer forfeits, fewer faults. Live while the tournament runs (``final``
    false); with the batch rating fit once it is finished."""
    t = _tournament(session, tournament_id)
    summary = tournament_summary(arena.sessions, tournament_id)
    return Standings.model_validate({
        "tournament_id": t.id,
        "status": summary.status,
        "final": summary.final,
        "standings": summary.standings,
        "ratings": summary.ratings,
    })


@router.get("/{tournament_id}/matches", response_model=MatchPage, responses=NOT_FOUND,
            openapi_extra=TOKEN_OPTIONAL)
def matches(
    tournament_id: TournamentIdPath,
    session: SessionDep,
    caller: CallerDep,
    status_: Annotated[MatchStatusName | None, Query(alias="status")] = None,
    bot: Annotated[
        str | None, Query(max_length=64, description="only the matches of this bot (404: no such bot)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=10**7)] = 0,
) -> MatchPage:
    """The tournament's matches in schedule order, with seats, status and results."""
    _tournament(session, tournament_id)
    bot_id = None
    if bot is not None:
        found: Bot | None = find_bot(session, bot)
        if found is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no bot {bot!r}")
        bot_id = found.id
    return MatchPage.model_validate(
        queries.match_page(
            session, tournament_id=tournament_id, status=status_, bot_id=bot_id, limit=limit, offset=offset,
            organizer=caller.organizer,
        )
    )
