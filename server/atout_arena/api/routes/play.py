"""Human seats: the browser is the client. The API is the human's game server.

A game server serves a bot's stream over gRPC; a browser cannot speak gRPC, so the API serves a
human's seats on the same Redis contract (:mod:`atout_arena.core.relay`), with the same
deadlines, faults and replays:

- ``GET /v1/play/events`` (server-sent events) takes over the human's stream address exactly as
  a game server does for a bot (``TAKEOVER``, ``HEARTBEAT``, ``RELEASE``, ``XREAD BLOCK`` on the
  inbox) and forwards what the workers write as JSON events: ``hello``, ``match_start``,
  ``decision`` (the seat's own observation and legal actions, its deadline), ``rejection``
  (the engine's reason), ``match_end``, and ``error`` (``replaced``: the human opened another
  play stream) before it ends. Only this human's seat's observation is ever sent: it is what
  the worker put in the DecisionRequest.
- ``POST /v1/play/answer`` hands an answer to the waiting worker (``ANSWER_IF_PENDING``: only
  for a request pending for this human, before its deadline). The worker checks it with the
  engine: an illegal one comes back as a ``rejection`` event, and the human may answer again
  until the deadline; no legal answer by then is a ``timeout`` (or ``illegal``) fault and the
  fallback plays, as for any bot.
- ``POST /v1/play/practice``: "play against your bot": the bot's token starts an unrated
  practice match of the bot, its owner (the bot's companion human,
  :mod:`atout_arena.services.humans`) and house bots.

Authentication: ``Authorization: Bearer <token>`` on every call, a human's token or a bot's
(a bot's token plays its companion). EventSource cannot send headers, so the dashboard reads
the stream with ``fetch`` (a header-bearing stream, ``dashboard/js/api.js``): the token never
goes into a URL, nor into a cookie.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import AsyncGenerator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.sse import EventSourceResponse, ServerSentEvent
from google.protobuf.message import DecodeError
from pydantic import BaseModel, Field, StringConstraints
from starlette.concurrency import run_in_threadpool

from atout.v1 import atout_pb2 as pb
from atout_arena.api.deps import ArenaDep, BotCallerDep
from atout_arena.api.routes.practice import CODES
from atout_arena.api.schemas import PracticeCreate, PracticeStarted
from atout_arena.core.edge import EdgeClock
from atout_arena.core.presence import Presence
from atout_arena.core.relay import (
    COMMAND_TIMEOUT_S,
    MAX_DEADLINE_MS,
    Answer,
    GatewayRelay,
    answer_if_pending_command,
    call_sync,
    make_async_redis,
    now_ms,
)
from atout_arena.services.bots import BotInfo
from atout_arena.services.humans import HUMAN, human_for
from atout_arena.services.practice import HOUSE_KINDS, PracticeError, house_bot_name

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/play", tags=["play"])

MAX_ACTION_LENGTH = 256
READ_BLOCK_MS = 2_000  # an idle stream renews its presence at least this often


def _human(arena: ArenaDep, caller: BotCallerDep) -> BotInfo:
    try:
        return human_for(arena.sessions, caller)
    except ValueError as exc:
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"no human seat to play: {exc}") from None


HumanDep = Annotated[BotInfo, Depends(_human)]


def _relay(request: Request, arena: ArenaDep) -> GatewayRelay:
    relay = getattr(request.app.state, "play_relay", None)
    if relay is None:  # made in the event loop that uses it
        relay = GatewayRelay(make_async_redis(arena.redis_url), arena.settings.presence_ttl_ms,
                             url=arena.redis_url)
        request.app.state.play_relay = relay
    return relay


def _json(kind: str, data: dict[str, Any]) -> ServerSentEvent:
    return ServerSentEvent(raw_data=json.dumps(data, separators=(",", ":")), event=kind)


async def message_event(payload: bytes, clock: EdgeClock | None = None) -> ServerSentEvent | None:
    """An inbox message as the JSON event the page reads (None: nothing to send). A decision's
    clock starts here (``clock``: the stream's, core/edge.py)."""
    try:
        message = pb.ArenaMessage.FromString(payload)
    except DecodeError:
        log.error("human inbox entry is not an ArenaMessage (%d bytes): dropped", len(payload))
        return None
    kind = message.WhichOneof("kind")
    if kind == "decision":
        d = message.decision
        if clock is not None:
            await clock.sent(d)
        left = max(0, d.deadline_unix_ms - now_ms())
        return _json("decision", {
            "request_id": d.request_id, "match_id": d.match_id, "game": d.game, "seat": d.seat,
            "observation": json.loads(d.observation_json or "{}"), "legal_actions": list(d.legal_actions),
            "deadline_ms": left, "deadline_unix_ms": d.deadline_unix_ms,
        })  # fmt: skip
    if kind == "rejection":
        r = message.rejection
        if clock is not None:
            await clock.rejected(r.request_id)
        return _json("rejection", {"request_id": r.request_id, "match_id": r.match_id, "action": r.action,
                                   "reason": r.reason, "code": r.code, "final": r.final})  # fmt: skip
    if kind == "match_start":
        s = message.match_start
        return _json("match_start", {
            "match_id": s.match_id, "game": s.game, "seat": s.seat, "players": s.players,
            "options": json.loads(s.options_json or "{}"), "seat_names": list(s.seat_names),
        })  # fmt: skip
    if kind == "match_end":
        e = message.match_end
        if clock is not None:
            clock.ended(e.match_id)
        return _json("match_end", {"match_id": e.match_id, "seat": e.seat, "scores": list(e.scores),
                                   "ranking": list(e.ranking), "reason": e.reason})  # fmt: skip
    return None


@router.get(
    "/events",
    response_class=EventSourceResponse,
    responses={
        401: {"description": "no token"},
        403: {"description": "the organizer's token, a disabled bot, or a house bot"},
        200: {"content": {"text/event-stream": {}}, "description": "a stream of server-sent events"},
    },
)
async def play_events(
    request: Request, arena: ArenaDep, human: HumanDep, caller: BotCallerDep
) -> AsyncGenerator[ServerSentEvent, None]:
    """The human's seats, as server-sent events (see the module's text): while this stream is
    open the human counts as connected, and its decisions come here. ``hello`` names the human
    and, for a bot's token, the bot (``POST /v1/play/practice`` then starts a match against it).
    One stream per human: a newer one replaces this one (``event: error``, code ``replaced``)."""
    relay = _relay(request, arena)
    conn_id = f"api-{arena.settings.server_id}/{secrets.token_hex(6)}"
    replaced = _json("error", {"code": "replaced", "message": "you opened another play stream"})
    # The presence session the game server's bot streams have (core.presence): taken over on
    # entering, given up however the stream ends (a closed page cancels it anywhere).
    clock = EdgeClock(relay, human.bot_id, conn_id)

    async def stop_clock() -> None:
        clock.close()

    async with Presence(relay, human.bot_id, conn_id, name=f"play stream {conn_id}",
                        before_release=stop_clock) as presence:
        yield _json("hello", {"human": human.name, "human_id": human.id, "move_ms": human.move_ms,
                              "bot": None if caller.kind == HUMAN else caller.name})  # fmt: skip
        for payload in presence.pending:
            event = await message_event(payload, clock)
            if event is not None:
                yield event
        beat = time.monotonic()
        while True:
            payloads, replaced_by = await presence.read(READ_BLOCK_MS)
            for payload in payloads:
                event = await message_event(payload, clock)
                if event is not None:
                    yield event
            if replaced_by is not None:
                yield replaced
                return
            if time.monotonic() - beat >= READ_BLOCK_MS / 1000:
                beat = time.monotonic()
                if not await presence.heartbeat():
                    yield replaced
                    return
                # a comment line (EventSource ignores it): a page closed meanwhile is noticed
                # by this write, within READ_BLOCK_MS, not at FastAPI's own 15 s ping
                yield ServerSentEvent(comment="beat")


class PlayAnswer(BaseModel):
    model_config = {"extra": "forbid"}

    request_id: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    action: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ACTION_LENGTH)]


class AnswerTaken(BaseModel):
    request_id: str
    action: str
    note: str = Field(description="the engine's verdict comes on the play stream")


@router.post(
    "/answer",
    response_model=AnswerTaken,
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: {"description": "no such request pending for you, or too late"}},
)
async def play_answer(body: PlayAnswer, arena: ArenaDep, human: HumanDep) -> AnswerTaken:
    """Answer one of your pending decisions. Accepted here means handed to the match: the
    engine checks it there, and a refused action comes back on the play stream as
    ``event: rejection`` with its reason (answer again before the deadline)."""
    answer = Answer(human.bot_id, body.request_id, body.action, MAX_DEADLINE_MS)
    (result,) = await run_in_threadpool(
        call_sync, arena.redis.connection_pool, [answer_if_pending_command(answer)], COMMAND_TIMEOUT_S
    )
    if result == 0:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"request {body.request_id!r} is not waiting for your answer (answered already, or over)",
        )
    if result < 0:
        raise HTTPException(status.HTTP_409_CONFLICT, f"too late: the deadline passed {-result} ms ago")
    return AnswerTaken(request_id=body.request_id, action=body.action,
                       note="handed to the match: a refusal comes on the play stream")  # fmt: skip


@router.post(
    "/practice",
    response_model=PracticeStarted,
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: {"description": "the bot, or your play stream, is not connected"}},
)
async def play_practice(body: PracticeCreate, arena: ArenaDep, bot: BotCallerDep) -> PracticeStarted:
    """Play against your bot: an unrated practice match of the calling bot (its token), you
    (its companion human, whose play stream must be open) in ``seat`` (default: drawn), and
    house bots in the other seats. The bot keeps the match's ``move_ms``; you get your own
    (longer) move time. ``house``: the house bots' kind (``GET /v1/play/opponents``);
    ``with_bot`` false: you alone against house bots of that kind."""
    if bot.kind == HUMAN:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "this needs your bot's token: a human has no bot")
    try:
        human = await run_in_threadpool(human_for, arena.sessions, bot)
        started = await run_in_threadpool(
            arena.practice.start,
            bot.id, body.game, body.players, body.options, body.move_ms, body.seat, human.id,
            house=body.house, with_bot=body.with_bot,
        )  # fmt: skip
    except PracticeError as exc:
        raise HTTPException(CODES.get(exc.kind, status.HTTP_422_UNPROCESSABLE_CONTENT), str(exc)) from None
    except ValueError as exc:
        raise HTTPException(status.HTTP_403_FORBIDDEN, str(exc)) from None
    base = f"/v1/matches/{started.match_id}"
    return PracticeStarted(
        match_id=started.match_id, game=started.game, seat=started.seat, seats=started.seats,
        match_url=base, events_url=f"{base}/events", replay_url=f"{base}/replay",
    )  # fmt: skip


class Opponent(BaseModel):
    kind: str = Field(description="a house bot kind, for POST /v1/play/practice's house")
    label: str = Field(description="its strength, in words")
    example: str = Field(description="its house bots' names, e.g. house-tiercon-pimc-small-1")


@router.get("/opponents", response_model=list[Opponent])
async def play_opponents() -> list[Opponent]:
    """The kinds of house bots to play against, weakest first, each labelled in words (the Play
    page's choice of opponents' strength; docs/bosses.md)."""
    return [Opponent(kind=k.kind, label=k.label, example=house_bot_name("<game>", 1, k.kind))
            for k in HOUSE_KINDS.values()]
