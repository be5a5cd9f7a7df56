"""Ladders: connected bots matched all the time, rated by OpenSkill; the live standings."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, HTTPException, Query, status
from fastapi.encoders import jsonable_encoder
from fastapi.sse import EventSourceResponse, ServerSentEvent
from sqlalchemy import select

from atout_arena.api.deps import ArenaDep, OrganizerDep, Responses, SessionDep, known_id
from atout_arena.api.schemas import LadderCreate, LadderHistory, LadderPublic, LadderStanding
from atout_arena.core.models import Ladder
from atout_arena.core.relay import connected_bots
from atout_arena.core.vocabulary import LadderStatus
from atout_arena.services.competitions import CompetitionError, CompetitionSpec
from atout_arena.services.ladders import create_ladder, history, ladder_summary, set_status

router = APIRouter(prefix="/v1/ladders", tags=["ladders"])

NOT_FOUND: Responses = {404: {"description": "no such ladder"}}
AUTH: Responses = {
    401: {"description": "no token, or an unknown one"},
    403: {"description": "not the organizer"},
}
CODES = {"invalid": status.HTTP_422_UNPROCESSABLE_CONTENT, "not_found": status.HTTP_404_NOT_FOUND,
         "conflict": status.HTTP_409_CONFLICT}
EVENT_POLL_S = 1.0  # how often the live stream looks for a change


def _live(arena: ArenaDep) -> set[int]:
    return {int(b) for b in connected_bots(arena.redis) if str(b).isdigit()}


def _summary(arena: ArenaDep, ladder_id: int) -> LadderPublic:
    known_id(ladder_id, "ladder")
    try:
        return LadderPublic.model_validate(ladder_summary(arena.sessions, ladder_id, _live(arena)))
    except CompetitionError as exc:
        raise HTTPException(CODES[exc.kind], str(exc)) from None


@router.post("", response_model=LadderPublic, status_code=status.HTTP_201_CREATED,
             responses={**AUTH, 404: {"description": "a bot named is unknown"},
                        409: {"description": "a ladder of that name exists"}})
def create(body: LadderCreate, arena: ArenaDep, _: OrganizerDep) -> LadderPublic:
    """Start a ladder: its members (``bots``, or any registered bot when omitted) play whenever
    they are connected, in duplicate sets (one seeded deal in every seat rotation) seated by the
    matchmaker, ``target_in_flight`` matches at a time; each set moves the OpenSkill
    (Plackett-Luce) ratings once. Ladder matches count for no Elo of ``/v1/ratings``."""
    try:
        spec = CompetitionSpec.of(game=body.game, players=body.players, options=body.options,
                                  move_ms=body.move_ms, time_bank_ms=body.time_bank_ms,
                                  max_faults=body.max_faults)
        ladder_id = create_ladder(arena.sessions, name=body.name, spec=spec, bots=body.bots,
                                  target_in_flight=body.target_in_flight)
    except CompetitionError as exc:
        raise HTTPException(CODES[exc.kind], str(exc)) from None
    arena.tasks.ladder_tick(ladder_id)
    return _summary(arena, ladder_id)


@router.get("", response_model=list[LadderPublic])
def list_ladders(arena: ArenaDep, session: SessionDep,
                 limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[LadderPublic]:
    """The ladders, newest first, with their standings."""
    ids = list(session.scalars(select(Ladder.id).order_by(Ladder.id.desc()).limit(limit)))
    session.close()
    return [_summary(arena, ladder_id) for ladder_id in ids]


@router.get("/{ladder_id}", response_model=LadderPublic, responses=NOT_FOUND)
def show(ladder_id: int, arena: ArenaDep) -> LadderPublic:
    """A ladder: its rules, its matches by status and those in flight, and its standings."""
    return _summary(arena, ladder_id)


@router.get("/{ladder_id}/standings", response_model=list[LadderStanding], responses=NOT_FOUND)
def standings(ladder_id: int, arena: ArenaDep) -> list[LadderStanding]:
    """The members by ordinal (mu - 3 sigma), best first, with mu, sigma and games played: the
    established members, then the provisional ones (fewer than 5 rated sets, or sigma above 4)."""
    return _summary(arena, ladder_id).standings


@router.get("/{ladder_id}/history", response_model=list[LadderHistory],
            responses={404: {"description": "no such ladder, or the bot is no member of it"}})
def rating_history(ladder_id: int, arena: ArenaDep,
                   bot: Annotated[str | None, Query(max_length=64, description="a member's name or id")]
                   = None) -> list[LadderHistory]:
    """Each member's rating (mu, sigma, ordinal) after each of its rated sets, oldest first;
    ``?bot=`` for one member."""
    known_id(ladder_id, "ladder")
    try:
        return [LadderHistory.model_validate(h) for h in history(arena.sessions, ladder_id, bot)]
    except CompetitionError as exc:
        raise HTTPException(CODES[exc.kind], str(exc)) from None


def _set(arena: ArenaDep, ladder_id: int, to: LadderStatus) -> LadderPublic:
    known_id(ladder_id, "ladder")
    try:
        changed = set_status(arena.sessions, ladder_id, to)
    except CompetitionError as exc:
        raise HTTPException(CODES[exc.kind], str(exc)) from None
    if not changed:
        raise HTTPException(status.HTTP_409_CONFLICT, f"ladder {ladder_id} is {to} already")
    if to == LadderStatus.RUNNING:
        arena.tasks.ladder_tick(ladder_id)
    return _summary(arena, ladder_id)


@router.post("/{ladder_id}/pause", response_model=LadderPublic,
             responses={**NOT_FOUND, **AUTH, 409: {"description": "paused already"}})
def pause(ladder_id: int, arena: ArenaDep, _: OrganizerDep) -> LadderPublic:
    """Seat nobody more; the sets in flight finish and are rated."""
    return _set(arena, ladder_id, LadderStatus.PAUSED)


@router.post("/{ladder_id}/resume", response_model=LadderPublic,
             responses={**NOT_FOUND, **AUTH, 409: {"description": "running already"}})
def resume(ladder_id: int, arena: ArenaDep, _: OrganizerDep) -> LadderPublic:
    """Seat the connected members again."""
    return _set(arena, ladder_id, LadderStatus.RUNNING)


def existing(ladder_id: int, session: SessionDep) -> int:
    """The ladder's id, checked before the stream starts (a real 404)."""
    known_id(ladder_id, "ladder")
    if session.get(Ladder, ladder_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no ladder {ladder_id}")
    return ladder_id


def _event(arena: ArenaDep, ladder_id: int) -> str:
    summary = ladder_summary(arena.sessions, ladder_id, _live(arena))
    return json.dumps(jsonable_encoder(LadderPublic.model_validate(summary)), separators=(",", ":"))


STREAM: Responses = {
    200: {"content": {"text/event-stream": {}}, "description": "a stream of server-sent events"},
}


@router.get("/{ladder_id}/events", response_class=EventSourceResponse, responses={**NOT_FOUND, **STREAM})
async def events(ladder_id: Annotated[int, Depends(existing)],
                 arena: ArenaDep) -> AsyncIterator[ServerSentEvent]:
    """The ladder live, as server-sent events: ``event: ladder`` with the whole ladder (as
    ``GET /v1/ladders/{id}``) at once, then each time it changes (looked at every second)."""
    last = await anyio.to_thread.run_sync(_event, arena, ladder_id)
    sent = 0
    yield ServerSentEvent(raw_data=last, event="ladder", id=str(sent))
    while True:
        await anyio.sleep(EVENT_POLL_S)
        now = await anyio.to_thread.run_sync(_event, arena, ladder_id)
        if now != last:
            sent += 1
            last = now
            yield ServerSentEvent(raw_data=now, event="ladder", id=str(sent))
