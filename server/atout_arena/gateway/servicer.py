"""The gRPC servicers of the game server, kept thin: ``BotGateway`` and ``Games``.

The calling bot is put in :data:`CURRENT_BOT` by the auth interceptor
(``atout_arena.gateway.server``); a stream's work is done by ``atout_arena.gateway.session.BotSession``, a
practice match's by ``atout_arena.services.practice.Practice`` (the same as the REST API's:
it stores the match and sends it to the workers).
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextvars import ContextVar
from typing import Any

import grpc
import redis
from google.protobuf.message import DecodeError
from sqlalchemy.exc import OperationalError

from atout.games import GAMES
from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc
from atout_arena.core.relay import GatewayRelay
from atout_arena.core.wire import is_outage, redis_outage
from atout_arena.gateway.session import BotSession, SessionEnd
from atout_arena.services.bots import BotInfo
from atout_arena.services.practice import HEURISTIC, Practice, PracticeError

log = logging.getLogger(__name__)

REVOKED = {"disabled": "disabled by the organizer", "token_rotated": "its token was replaced"}
CURRENT_BOT: ContextVar[BotInfo | None] = ContextVar("atout_current_bot", default=None)


class BotGatewayServicer(pb_grpc.BotGatewayServicer):
    def __init__(
        self, relay: GatewayRelay, *, server_id: str, keepalive_ms: int, hello_timeout_ms: int,
        outage_limit_ms: int = 300_000,
    ) -> None:
        self.relay = relay
        self.server_id = server_id
        self.keepalive_ms = keepalive_ms
        self.hello_timeout_ms = hello_timeout_ms
        self.outage_limit_ms = outage_limit_ms
        self.sessions: set[BotSession] = set()
        self.closing = False

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        bot = CURRENT_BOT.get()
        if bot is None:  # the interceptor lets no such call through; be safe anyway
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing bot token")
            return
        if self.closing:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the game server is shutting down")
            return

        async def recv() -> pb.BotMessage | None:
            try:
                message = await context.read()
            except DecodeError as exc:  # bytes that are no BotMessage: nothing more can be trusted
                raise SessionEnd("bad_message", f"a message is not an atout.v1.BotMessage ({exc})") from None
            return None if message is grpc.aio.EOF else message

        session = BotSession(
            self.relay,
            bot,
            recv,
            context.write,
            server_id=self.server_id,
            keepalive_ms=self.keepalive_ms,
            hello_timeout_ms=self.hello_timeout_ms,
            outage_limit_ms=self.outage_limit_ms,
        )
        self.sessions.add(session)
        try:
            await session.run()
        except Exception as exc:
            if is_outage(exc):  # said once for the server, not once per stream and reconnection
                redis_outage.failed(f"bot {bot.name}'s stream", exc)
            elif isinstance(exc, redis.RedisError):
                log.error("bot %s stream %s: Redis error: %s", bot.name, session.conn_id, exc)
            else:
                log.exception("bot %s stream %s: unexpected error", bot.name, session.conn_id)
                await context.abort(
                    grpc.StatusCode.INTERNAL, "unexpected error in the game server (logged there)"
                )
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                f"the arena cannot reach its Redis: {str(exc) or type(exc).__name__}")
        finally:
            self.sessions.discard(session)

    def revoke(self, bot_id: str, reason: str) -> int:
        """Close every stream of ``bot_id`` on this game server (every version), faulting its
        open decisions ``disconnected``; returns how many were closed."""
        closed = 0
        for session in list(self.sessions):
            if session.bot_id == bot_id:
                why = REVOKED.get(reason, reason)
                session.revoke(f"bot {session.bot.name!r}: {why}; this stream is closed")
                closed += 1
        return closed

    def close_all(self, code: str, message: str) -> None:
        """End every stream with an Error (graceful shutdown); refuse new ones."""
        self.closing = True
        for session in list(self.sessions):
            session.stop(code, message)


def allowed_text(option: dict[str, Any]) -> str:
    """An option's allowed values in words, each value in JSON's spelling (``false or true``,
    ``"ten" or "five_plus_tricks"``, ``36 or 52``), as in ``choices_json``; else the game's words."""
    choices = option.get("choices") or []
    if choices:
        return " or ".join(json.dumps(c) for c in choices)
    return str(option.get("allowed", ""))


def game_info(description: dict[str, Any]) -> pb.GameInfo:
    """A ``Game.describe()`` dict as the wire's GameInfo."""
    return pb.GameInfo(
        id=description["id"],
        name=description["name"],
        players=description["players"],
        default_players=description["default_players"],
        summary=description.get("summary", ""),
        rules_version=description["rules_version"],
        options=[
            pb.GameOption(
                name=o["name"],
                default_json=json.dumps(o["default"]),
                choices_json=[json.dumps(c) for c in o.get("choices", [])],
                allowed=allowed_text(o),
                doc=o.get("doc", ""),
            )
            for o in description.get("options", [])
        ],
    )


def list_games() -> pb.ListGamesResponse:
    return pb.ListGamesResponse(games=[game_info(cls.describe()) for cls in GAMES.values()])


# PracticeError.kind -> the status of a refused StartPractice
PRACTICE_CODES = {
    "invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "forbidden": grpc.StatusCode.PERMISSION_DENIED,
    "not_connected": grpc.StatusCode.FAILED_PRECONDITION,
    "busy": grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class Refused(Exception):  # noqa: N818 - an answer, not a bug
    """A call answered with a gRPC status other than OK."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def practice_options(options_json: str) -> dict[str, Any]:
    """A PracticeRequest's ``options_json`` ("" or a JSON object) as keywords; ValueError
    saying what is wrong otherwise."""
    if not options_json.strip():
        return {}
    try:
        options = json.loads(options_json)
    except json.JSONDecodeError as exc:
        raise ValueError(f"options_json is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(options, dict):
        raise ValueError(
            f'options_json must be a JSON object such as {{"deals": 2}}, not {options_json[:60]!r}'
        )
    return options


def replay_url(match_id: int, seat: int) -> str:
    """Where a bot fetches its seat's replay of a match once it is over (the REST API's)."""
    return f"/v1/matches/{match_id}/replay?seat={seat}"


async def start_practice(
    practice: Practice, bot: BotInfo, request: pb.PracticeRequest
) -> pb.PracticeResponse:
    """``Games.StartPractice`` without gRPC: the practice match of ``bot`` that ``request``
    asks for, started at once (``Practice.start`` on a thread), or :class:`Refused` with the
    status that says why not."""
    try:
        options = practice_options(request.options_json)
    except ValueError as exc:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
    try:
        started = await asyncio.to_thread(
            practice.start,
            bot.id,
            request.game,
            request.players or None,
            options,
            request.move_time_ms or None,
            house=request.house or HEURISTIC,
        )
    except PracticeError as exc:
        raise Refused(PRACTICE_CODES.get(exc.kind, grpc.StatusCode.INVALID_ARGUMENT), str(exc)) from None
    except (redis.RedisError, OperationalError) as exc:
        log.error("bot %s: practice match not started: %s", bot.name, exc)
        raise Refused(
            grpc.StatusCode.UNAVAILABLE, f"the arena cannot reach its database or Redis: {exc}"[:500]
        ) from None
    log.info(
        "bot %s: practice match %s (%s, seat %d)", bot.name, started.match_id, started.game, started.seat
    )
    return pb.PracticeResponse(
        match_id=str(started.match_id), replay_url=replay_url(started.match_id, started.seat)
    )


class GamesServicer(pb_grpc.GamesServicer):
    """``ListGames`` for anyone; ``StartPractice`` for a bot (its token), when the game server
    was given a :class:`~atout_arena.services.practice.Practice` (``atout-arena gateway`` always is)."""

    def __init__(self, practice: Practice | None = None) -> None:
        self._games = list_games()  # rulesets do not change while the server runs
        self.practice = practice

    async def ListGames(  # noqa: N802
        self, request: pb.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListGamesResponse:
        return self._games

    async def StartPractice(  # noqa: N802
        self, request: pb.PracticeRequest, context: grpc.aio.ServicerContext
    ) -> pb.PracticeResponse:
        """A practice match of the calling bot against house bots, started at once: the same
        as ``POST /v1/practice`` (unrated, never forfeited, at most 4 in flight per bot)."""
        bot = CURRENT_BOT.get()
        try:
            if bot is None:  # the interceptor lets no such call through; be safe anyway
                raise Refused(grpc.StatusCode.UNAUTHENTICATED, "missing bot token")
            if self.practice is None:
                raise Refused(
                    grpc.StatusCode.UNIMPLEMENTED,
                    "this game server was started without practice matches (no database)",
                )
            return await start_practice(self.practice, bot, request)
        except Refused as refused:
            await context.abort(refused.code, refused.message)
            raise AssertionError("unreachable: abort raises") from None
