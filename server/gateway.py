"""The gRPC servicers of the game server, kept thin: ``BotGateway`` and ``Games``.

The calling bot is put in :data:`CURRENT_BOT` by the auth interceptor
(``server.grpc_server``); a stream's work is done by ``server.session.BotSession``.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from typing import Any

import grpc
import redis
from google.protobuf.message import DecodeError

from atout.games import GAMES
from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc

from .registry import BotInfo
from .relay import GatewayRelay
from .session import BotSession, SessionEnd

log = logging.getLogger(__name__)

CURRENT_BOT: ContextVar[BotInfo | None] = ContextVar("atout_current_bot", default=None)


class BotGatewayServicer(pb_grpc.BotGatewayServicer):
    def __init__(
        self, relay: GatewayRelay, *, server_id: str, keepalive_ms: int, hello_timeout_ms: int
    ) -> None:
        self.relay = relay
        self.server_id = server_id
        self.keepalive_ms = keepalive_ms
        self.hello_timeout_ms = hello_timeout_ms
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
        )
        self.sessions.add(session)
        try:
            await session.run()
        except redis.RedisError as exc:
            log.error("bot %s stream %s: Redis error: %s", bot.name, session.conn_id, exc)
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"the arena cannot reach its Redis: {exc}")
        except Exception:
            log.exception("bot %s stream %s: unexpected error", bot.name, session.conn_id)
            await context.abort(
                grpc.StatusCode.INTERNAL, "unexpected error in the game server (logged there)"
            )
        finally:
            self.sessions.discard(session)

    def close_all(self, code: str, message: str) -> None:
        """End every stream with an Error (graceful shutdown); refuse new ones."""
        self.closing = True
        for session in list(self.sessions):
            session.stop(code, message)


def game_info(description: dict[str, Any]) -> pb.GameInfo:
    """A ``Game.describe()`` dict as the wire's GameInfo."""
    return pb.GameInfo(
        id=description["id"],
        name=description["name"],
        players=description["players"],
        default_players=description["default_players"],
        summary=description.get("summary", ""),
        options=[
            pb.GameOption(
                name=o["name"],
                default_json=json.dumps(o["default"]),
                choices_json=[json.dumps(c) for c in o.get("choices", [])],
                allowed=o.get("allowed", ""),
                doc=o.get("doc", ""),
            )
            for o in description.get("options", [])
        ],
    )


def list_games() -> pb.ListGamesResponse:
    return pb.ListGamesResponse(games=[game_info(cls.describe()) for cls in GAMES.values()])


class GamesServicer(pb_grpc.GamesServicer):
    def __init__(self) -> None:
        self._games = list_games()  # rulesets do not change while the server runs

    async def ListGames(  # noqa: N802
        self, request: pb.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListGamesResponse:
        return self._games

    async def StartPractice(  # noqa: N802
        self, request: pb.PracticeRequest, context: grpc.aio.ServicerContext
    ) -> pb.PracticeResponse:
        await context.abort(
            grpc.StatusCode.UNIMPLEMENTED,
            "practice matches are not available yet: they come with the match workers",
        )
        raise AssertionError("unreachable: abort raises")
