"""Matches: results, replays (a seat's, the spectators', the organizer's full one), live events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, HTTPException, Query, status
from fastapi.sse import EventSourceResponse, ServerSentEvent
from sqlalchemy.orm import Session

from atout.record import GameRecord, SeatRecord, StepRecord
from atout_arena.api import queries
from atout_arena.api.deps import (
    TOKEN_OPTIONAL,
    ArenaDep,
    Caller,
    CallerDep,
    MatchIdPath,
    OrganizerDep,
    Responses,
    SessionDep,
    known_id,
)
from atout_arena.api.errors import refused
from atout_arena.api.schemas import MatchPage, MatchPublic, MatchStatusName, Replay, ReplayCheck
from atout_arena.core.keys import last_event_key, public_channel, seat_channel
from atout_arena.core.models import Match
from atout_arena.core.redis_conn import async_client
from atout_arena.core.replay import (
    MatchRecord,
    RulesVersionMismatch,
    check_rules_version,
    iter_views,
    load_match,
    note_seats,
    replay_match,
)
from atout_arena.core.views import StepViews
from atout_arena.core.vocabulary import MATCH_DONE
from atout_arena.services.bots import find_bot
from atout_arena.services.deals import (
    ViewError,
    check_duplicate_open,
    check_replayable,
    check_seat,
    secret_matches,
)
from atout_arena.services.tournaments import TournamentError, retry_and_send

router = APIRouter(prefix="/v1/matches", tags=["matches"])

NOT_FOUND: Responses = {404: {"description": "no such match"}}
SEAT_AUTH: Responses = {
    401: {"description": "a seat's view without a token"},
    403: {"description": "a seat's view with another bot's token"},
}
IDLE_CHECK_S = 15.0  # while no event comes, how often the stream checks that the match still runs

SeatQuery = Annotated[
    int | None,
    Query(
        ge=0,
        le=6,
        description="a seat: what that seat saw (organizer or "
        "that seat's bot only); none: the spectators' public view",
    ),
]
NOT_REPLAYABLE: Responses = {
    409: {"description": "the match is not finished, or was played under other rules"},
}


def _match(session: Session, match_id: int) -> Match:
    known_id(match_id, "match")
    match = queries.get_match(session, match_id)
    if match is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no match {match_id}")
    return match


def check_view(session: Session, match: Match, seat: int | None, caller: Caller, what: str | None) -> None:
    """The rules of services.deals on who may see ``seat``'s view of ``match`` (None: the public
    one) and, with ``what``, whether its duplicate deal lets anyone but the organizer see it; a
    refusal as its HTTP error."""
    try:
        check_seat(match, seat, organizer=caller.organizer, bot_id=caller.bot_id)
        if what is not None:
            check_duplicate_open(session, match, organizer=caller.organizer, what=what)
    except ViewError as exc:
        raise refused(exc.kind, str(exc)) from None


def _public(session: Session, match: Match, organizer: bool = False) -> MatchPublic:
    return MatchPublic.model_validate(queries.matches_public(session, [match], organizer=organizer)[0])


@router.get("", response_model=MatchPage, openapi_extra=TOKEN_OPTIONAL)
def list_matches(
    session: SessionDep,
    caller: CallerDep,
    status_: Annotated[MatchStatusName | None, Query(alias="status")] = None,
    game: Annotated[str | None, Query(max_length=32)] = None,
    tournament_id: Annotated[int | None, Query(ge=1, le=2**62, description="as tournament")] = None,
    tournament: Annotated[int | None, Query(ge=1, le=2**62, description="one tournament's matches")] = None,
    ladder: Annotated[int | None, Query(ge=1, le=2**62, description="the matches of one ladder")] = None,
    bot: Annotated[
        str | None, Query(max_length=64, description="a bot's name or id (404: no such bot)")
    ] = None,
    practice: Annotated[bool | None, Query(description="only practice matches (true) or only others")] = None,
    test: Annotated[int | None, Query(ge=1, le=2**62, description="the matches of one test")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**7)] = 0,
) -> MatchPage:
    """Matches, newest first; ``status=running`` lists the matches one can watch live. Filters
    combine (``?ladder=1&bot=alice``: alice's matches in ladder 1); an unknown one is a 422."""
    bot_id = None
    if bot is not None:
        found = find_bot(session, bot)
        if found is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no bot {bot!r}")
        bot_id = found.id
    return MatchPage.model_validate(
        queries.match_page(
            session,
            status=status_,
            game=game,
            tournament_id=tournament if tournament is not None else tournament_id,
            ladder_id=ladder,
            bot_id=bot_id,
            test_id=test,
            practice=practice,
            limit=limit,
            offset=offset,
            newest_first=True,
            organizer=caller.organizer,
        )
    )


@router.get("/{match_id}", response_model=MatchPublic, responses=NOT_FOUND, openapi_extra=TOKEN_OPTIONAL)
def show(match_id: MatchIdPath, session: SessionDep, caller: CallerDep) -> MatchPublic:
    """A match: game, options, seats (bot, score, place, faults, forfeit, think time), status
    and, once finished, its result. The seed is shown once nothing sharing its deal is still to
    be played (its tournament or test is over; a practice match once it is done)."""
    return _public(session, _match(session, match_id), caller.organizer)


@router.post(
    "/{match_id}/retry",
    response_model=MatchPublic,
    responses={**NOT_FOUND, 401: {"description": "no token"}, 403: {"description": "not the organizer"},
               409: {"description": "the match did not fail"}},
)
def retry(match_id: MatchIdPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> MatchPublic:
    """Play a failed match again from its seed (organizer only): it is queued and sent to the
    workers; its tournament runs again until it is done, then is finalized again."""
    _match(session, match_id)
    try:
        retry_and_send(arena.sessions, match_id, dispatch=arena.dispatch,
                       play_practice=arena.tasks.play_practice)
    except TournamentError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    session.expire_all()
    return _public(session, _match(session, match_id))


def _record(arena: ArenaDep, session: Session, match_id: int) -> tuple[Match, MatchRecord]:
    match = _match(session, match_id)
    try:
        check_replayable(match)
    except ViewError as exc:
        raise refused(exc.kind, str(exc)) from None
    record = load_match(arena.sessions, match_id)
    assert record is not None
    try:
        check_rules_version(record)
    except RulesVersionMismatch as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return match, record


@router.get(
    "/{match_id}/replay",
    response_model=Replay,
    responses={**NOT_FOUND, **SEAT_AUTH, **NOT_REPLAYABLE},
    openapi_extra=TOKEN_OPTIONAL,
)
def replay(
    match_id: MatchIdPath, arena: ArenaDep, session: SessionDep, caller: CallerDep, seat: SeatQuery = None
) -> Replay:
    """A finished match step by step, re-run from its seed and action log: a ``start`` event,
    then one ``step`` event per action with ``view``, what the viewer saw after it. Without
    ``seat``: the spectators' public view (no hidden card). With ``seat``: exactly what that
    seat saw (its hand included), for the organizer and that seat's own bot."""
    match = _match(session, match_id)
    check_view(session, match, seat, caller, "replay")
    match, record = _record(arena, session, match_id)
    return Replay(
        match=_public(session, match, caller.organizer),
        viewer="public" if seat is None else "seat",
        seat=seat,
        events=list(iter_views(record, seat, notes_for(session, match, caller))),
    )


def notes_for(session: Session, match: Match, caller: Caller) -> set[int]:
    """The seats of ``match`` whose bots' notes ``caller`` may read (core.replay.note_seats):
    the organizer's and, once the match's seeds are published (its competition is over; a
    match of none: it is done), everyone's; before, a bot token's own seats."""
    seats = sorted(match.seats, key=lambda s: s.seat)
    ended = caller.organizer or match.id not in secret_matches(session, [match])
    return note_seats(len(seats), [s.bot_id for s in seats], viewer_bot=caller.bot_id,
                      organizer=caller.organizer, ended=ended)


@router.get(
    "/{match_id}/check",
    response_model=ReplayCheck,
    responses={**NOT_FOUND, 401: {"description": "its seed is not published yet, and no token"},
               403: {"description": "its seed is not published yet, and not the organizer"},
               **NOT_REPLAYABLE},
    openapi_extra=TOKEN_OPTIONAL,
)
def check(match_id: MatchIdPath, arena: ArenaDep, session: SessionDep, caller: CallerDep) -> ReplayCheck:
    """Re-run a finished match from its seed and action log and compare the result with the
    stored one (``atout-arena replay``): ``ok`` false says where it diverges. Anyone's once the
    match's seed is published (:mod:`atout_arena.services.deals`: its competition is over);
    the organizer's before (the replay would show the secret deal)."""
    match = _match(session, match_id)
    if not caller.organizer and match.id in secret_matches(session, [match]):
        kind = "unauthorized" if caller.bot is None else "forbidden"
        raise refused(kind, f"match {match.id}'s seed is not published yet (its competition is not over): "
                            "until then only the organizer token checks it")
    record = _record(arena, session, match_id)[1]
    report = replay_match(record)
    return ReplayCheck(match_id=report.match_id, ok=report.ok, plies=report.plies, scores=report.scores,
                       ranking=report.ranking, divergence=report.divergence, summary=report.summary())


def full_views(record: MatchRecord) -> list[dict[str, Any]]:
    """Every step with the public view, every seat's hand, the legal actions of the seat that
    acted and the stored fault detail: the whole table, for organizers."""
    state = record.new_state()
    views = StepViews(state)
    events = []

    def add(base: dict[str, Any], action: str | None) -> None:
        public, seats = views.events(base, action)
        public["hands"] = [event["view"].get("hand", []) for event in seats]
        events.append(public)

    add(
        {
            "type": "start",
            "match_id": record.id,
            "game": record.game,
            "options": record.options,
            "seats": record.seat_names,
            "seed": record.seed,
            "suits": record.suits,
        },
        None,
    )
    for step in record.steps():
        legal = state.legal_actions()
        state.apply(step.action)
        add(
            {
                "type": "step",
                "match_id": record.id,
                "ply": step.ply,
                "seat": step.seat,
                "by": step.by,
                "think_ms": step.think_ms,
                "faults": list(step.faults),
                "detail": step.detail,
                "legal": legal,
                **({"note": step.note} if step.note else {}),
            },
            step.action,
        )
    return events


@router.get(
    "/{match_id}/replay/full",
    response_model=Replay,
    responses={**NOT_FOUND, 401: {}, 403: {}, **NOT_REPLAYABLE},
)
def full_replay(match_id: MatchIdPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> Replay:
    """The whole match for organizers: the public view at every step plus every seat's hand
    (``hands``), the legal actions of the seat to act (``legal``), who chose each action
    (``by``: bot or fallback), think times, faults and their detail, and the seed."""
    match, record = _record(arena, session, match_id)
    return Replay(match=_public(session, match, True), viewer="full", seat=None, events=full_views(record))


@router.get(
    "/{match_id}/record",
    responses={**NOT_FOUND, 401: {"description": "its seeds are not published yet, and no token"},
               403: {"description": "its seeds are not published yet, and not the organizer"},
               **NOT_REPLAYABLE},
    openapi_extra=TOKEN_OPTIONAL,
)
def export(match_id: MatchIdPath, arena: ArenaDep, session: SessionDep, caller: CallerDep) -> dict[str, Any]:
    """The finished match as one recorded game, format ``atout-game/1`` (docs/record.md, the
    schema docs/record.schema.json): seed, suit permutation, seats with bot and version, every
    action with who chose it, think time, faults and the bot's note, scores and ranking (forfeits
    applied). ``atout.record.GameRecord.from_dict`` reads it; ``atout-arena match export`` saves it.
    The organizer's always; anyone's once the match's seeds are published (as ``/check``)."""
    match = _match(session, match_id)
    if not caller.organizer and match.id in secret_matches(session, [match]):
        kind = "unauthorized" if caller.bot is None else "forbidden"
        raise refused(kind, f"match {match.id}'s seed is not published yet (its competition is not over): "
                            "until then only the organizer token exports it")
    match, stored = _record(arena, session, match_id)
    return export_record(match, stored).to_dict()


def export_record(match: Match, stored: MatchRecord) -> GameRecord:
    """``match`` (finished, loaded as ``stored``) as an :class:`atout.record.GameRecord`: every
    note included (who may export it may read them all)."""
    seats = sorted(match.seats, key=lambda s: s.seat)
    competition = next(({kind: ref} for kind, ref in (("tournament", match.tournament_id),
                        ("ladder", match.ladder_id), ("test", match.test_id)) if ref is not None), None)
    return GameRecord(
        game=stored.game, players=stored.players, options=dict(stored.options), seed=stored.seed,
        suit_permutation=stored.suits,
        seats=[SeatRecord(s.seat, stored.seat_names[s.seat], s.played_version or s.version or None)
               for s in seats],
        steps=[StepRecord(step.seat, step.action, step.by, step.think_ms, step.note,
                          ",".join(step.faults) or None) for step in stored.steps()],
        scores=list(stored.scores or []), ranking=list(stored.ranking or []),
        source={"kind": "arena", "match": stored.id, "competition": competition,
                "rules_version": stored.rules_version, "max_faults": stored.max_faults,
                "forfeited": list(stored.forfeited)},
    )  # fmt: skip


# -- live events --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventSource:
    match_id: int
    channel: str
    public: bool


def event_source(
    match_id: MatchIdPath, arena: ArenaDep, caller: CallerDep, seat: SeatQuery = None
) -> EventSource:
    """The checks of the event stream, done before it starts (so they are real status codes)."""
    with arena.sessions() as session:
        match = _match(session, match_id)
        # a seat's own live view is its bot's, whatever the format
        check_view(session, match, seat, caller, "live public view" if seat is None else None)
    channel = public_channel(match_id) if seat is None else seat_channel(match_id, seat)
    return EventSource(match_id, channel, seat is None)


def _sse(text: str | bytes) -> ServerSentEvent:
    raw = text.decode() if isinstance(text, bytes) else text
    event = json.loads(raw)
    kind = str(event.get("type", "message"))
    ident = str(event["ply"]) if "ply" in event else kind
    return ServerSentEvent(raw_data=raw, event=kind, id=ident)


def _end_event(arena: ArenaDep, match_id: int) -> str | None:
    """The ``end`` event of a match that is over (from the database), else None."""
    with arena.sessions() as session:
        match = session.get(Match, match_id)
        if match is None or match.status not in MATCH_DONE:
            return None
        seats = sorted(match.seats, key=lambda s: s.seat)
        return json.dumps(
            {
                "type": "end",
                "match_id": str(match_id),
                "reason": match.outcome or match.status,
                "scores": match.scores,
                "ranking": match.ranking,
                "forfeited": [s.forfeited for s in seats],
            },
            separators=(",", ":"),
        )


@router.get(
    "/{match_id}/events",
    response_class=EventSourceResponse,
    responses={
        **NOT_FOUND,
        **SEAT_AUTH,
        200: {"content": {"text/event-stream": {}}, "description": "a stream of server-sent events"},
    },
    openapi_extra=TOKEN_OPTIONAL,
)
async def events(
    source: Annotated[EventSource, Depends(event_source)], arena: ArenaDep
) -> AsyncIterator[ServerSentEvent]:
    """Live updates of a match as server-sent events (``text/event-stream``), from the
    workers' spectator channel: ``event: start`` (the seats and the initial view), one
    ``event: step`` per action (``action``, who played it, think time, faults, and ``view``:
    the table after it), ``event: end`` (scores, ranking) and the stream ends.

    Without ``seat``: the public view, and a late joiner first gets the latest event (its
    view is the whole public table). With ``seat`` (organizer or that seat's bot): that seat's
    observation, from the next step on. A finished match sends its ``end`` at once."""
    ended = await anyio.to_thread.run_sync(_end_event, arena, source.match_id)
    if ended is not None:
        yield _sse(ended)
        return
    client = async_client(arena.redis_url, socket_timeout=IDLE_CHECK_S * 4, socket_connect_timeout=5)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    seen = -2  # the ply of the last event sent: -1 for a start; a late joiner's first event may come twice
    try:
        await pubsub.subscribe(source.channel)
        if source.public:  # subscribed first: nothing published after this read is missed
            last = await client.get(last_event_key(source.match_id))
            event = None if last is None else _sse(last)
            # An ``end`` there while the database says the match is not over is not this run's
            # end: a run stopped by an outage (played again from its seed), or the key of
            # another database's match of that id. The database is the authority: skipped.
            if event is not None and event.event == "end":
                # ... unless the match ended between the first check and the subscription (its
                # end was published before we listened): the database says so now
                ended = await anyio.to_thread.run_sync(_end_event, arena, source.match_id)
                if ended is not None:
                    yield _sse(ended)
                    return
            elif event is not None:
                yield event
                seen = int(event.id) if event.id and event.id.isdigit() else -1
        while True:
            message = await pubsub.get_message(timeout=IDLE_CHECK_S)
            if message is None:
                ended = await anyio.to_thread.run_sync(_end_event, arena, source.match_id)
                if ended is not None:  # over without an end event reaching us (cancelled, failed)
                    yield _sse(ended)
                    return
                continue
            event = _sse(message["data"])
            ply = int(event.id) if event.id and event.id.isdigit() else -1 if event.event == "start" else None
            if ply is not None and ply <= seen:
                continue  # sent already (read from the latest event before it was published)
            seen = ply if ply is not None else seen
            yield event
            if event.event == "end":
                return
    finally:
        with anyio.CancelScope(shield=True):
            await pubsub.aclose()
            await client.aclose()
