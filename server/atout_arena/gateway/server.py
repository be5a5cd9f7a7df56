"""The game server: gRPC (asyncio) with bot-token auth, health checking and reflection.

>>> server, port = create_server("127.0.0.1:0", settings=..., registry=...)   # doctest: +SKIP
>>> await server.start(); ...; await server.stop()                             # doctest: +SKIP

``serve()`` runs one until SIGTERM or SIGINT, then shuts down gracefully: health turns
NOT_SERVING, the server marks itself gone in Redis, every bot stream gets an Error
``shutting_down`` (its bot reconnects at once, to this server's replacement or another one;
the workers wait for it up to ``ATOUT_RECONNECT_GRACE_S`` and ask its pending decision
again), and open calls get ``shutdown_grace_s`` to finish.

While it runs, the server renews its own liveness in Redis every second
(:func:`atout_arena.core.relay.server_beat_command`): a server killed with ``-9`` stops,
and within :data:`~atout_arena.core.relay.SERVER_TTL_MS` its bots read as not connected (their
presence keys would otherwise live for three keep-alives). Redis going away is logged and
retried; the server never exits because of it.
It plays no match: ``Games.StartPractice`` (given an :class:`atout_arena.services.practice.Practice`)
stores a practice match and sends it to the workers' practice queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc
import redis
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc
from atout_arena.core.keys import CONTRACT_KEY, CONTROL_CHANNEL, SERVERS_KEY
from atout_arena.core.relay import (
    SERVER_BEAT_S,
    ContractMismatch,
    GatewayRelay,
    check_contract_async,
    make_async_redis,
    now_ms,
    parse_control,
    server_beat_command,
)
from atout_arena.core.settings import Settings
from atout_arena.gateway.servicer import CURRENT_BOT, BotGatewayServicer, GamesServicer
from atout_arena.services.bots import BotInfo, BotRegistry
from atout_arena.services.practice import Practice

log = logging.getLogger(__name__)

SERVICE_NAMES = tuple(s.full_name for s in pb.DESCRIPTOR.services_by_name.values())
ALL_SERVICE_NAMES = (
    *SERVICE_NAMES,
    health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
    reflection.SERVICE_NAME,
)
# Methods callable without a token (a token, when given, must still be valid).
TOKEN_OPTIONAL = frozenset({"/atout.v1.Games/ListGames"})
PROTECTED_PREFIX = "/atout.v1."

SERVER_OPTIONS: Sequence[tuple[str, Any]] = (
    ("grpc.so_reuseport", 0),  # a port already taken is an error, not a silent share
    ("grpc.max_receive_message_length", 1 << 20),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # A bot stream's receive window stays small (no BDP growth): a bot sending faster than its
    # session reads (the session's token bucket) is held by HTTP/2 flow control after a few
    # thousand small messages, instead of the transport taking them in at any rate.
    ("grpc.http2.bdp_probe", 0),
    ("grpc.http2.lookahead_bytes", 65_536),
)


class AuthError(Exception):
    pass


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | None) -> str | None:
    """The token of ``authorization: Bearer <token>``; None when there is no such header.

    Raises :class:`AuthError` (with the message for the client) when it is malformed."""
    values = [v for k, v in (metadata or ()) if k.lower() == "authorization"]
    if not values:
        return None
    if len(values) > 1:
        raise AuthError("send one 'authorization' header, not several")
    value = values[0].decode("latin-1") if isinstance(values[0], bytes) else values[0]
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("the 'authorization' header must be 'Bearer <bot token>'")
    return token.strip()


def _aborting_handler(
    handler: grpc.RpcMethodHandler, code: grpc.StatusCode, details: str
) -> grpc.RpcMethodHandler:
    async def abort(_request: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort(code, details)

    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(abort)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(abort)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(abort)
    return grpc.unary_unary_rpc_method_handler(abort)


def _with_bot(handler: grpc.RpcMethodHandler, bot: BotInfo) -> grpc.RpcMethodHandler:
    """The same handler, running with :data:`CURRENT_BOT` set to ``bot``."""
    kinds = {
        (False, False): ("unary_unary", grpc.unary_unary_rpc_method_handler),
        (False, True): ("unary_stream", grpc.unary_stream_rpc_method_handler),
        (True, False): ("stream_unary", grpc.stream_unary_rpc_method_handler),
        (True, True): ("stream_stream", grpc.stream_stream_rpc_method_handler),
    }
    attribute, factory = kinds[(handler.request_streaming, handler.response_streaming)]
    behaviour = getattr(handler, attribute)

    async def with_bot(request: Any, context: grpc.aio.ServicerContext) -> Any:
        CURRENT_BOT.set(bot)  # this call runs in its own task: the value stays in it
        return await behaviour(request, context)

    return factory(
        with_bot,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Every ``atout.v1`` call needs a valid, enabled bot token (except :data:`TOKEN_OPTIONAL`);
    anything else ends with UNAUTHENTICATED and a message saying what is wrong."""

    def __init__(self, verify: Callable[[str], Awaitable[BotInfo | None]]) -> None:
        self._verify = verify

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(details)
        method = details.method
        if handler is None or not method.startswith(PROTECTED_PREFIX):
            return handler  # unknown methods (UNIMPLEMENTED), health, reflection

        def deny(message: str) -> grpc.RpcMethodHandler:
            log.info("refused %s: %s", method, message)
            return _aborting_handler(handler, grpc.StatusCode.UNAUTHENTICATED, message)

        try:
            token = bearer_token(details.invocation_metadata)
        except AuthError as exc:
            return deny(str(exc))
        if token is None:
            if method in TOKEN_OPTIONAL:
                return handler
            return deny("missing bot token: send the metadata 'authorization: Bearer <bot token>'")
        bot = await self._verify(token)
        if bot is None:
            return deny("invalid bot token (unknown, or replaced by a newer one)")
        if bot.disabled:
            return deny(f"bot {bot.name!r} is disabled")
        return _with_bot(handler, bot)


class GameServer:
    """A created game server: :meth:`start`, then :meth:`stop` (graceful)."""

    def __init__(
        self,
        server: grpc.aio.Server,
        gateway: BotGatewayServicer,
        health_servicer: health.aio.HealthServicer,
        relay: GatewayRelay,
        grace_s: float,
        server_id: str = "",
    ) -> None:
        self.server = server
        self.gateway = gateway
        self.health = health_servicer
        self.relay = relay
        self.grace_s = grace_s
        self.server_id = server_id
        self._beat: asyncio.Task[None] | None = None
        self._control: asyncio.Task[None] | None = None

    @property
    def part(self) -> str:
        """This server in the Redis contract's registry (:func:`atout_arena.core.relay.check_contract`)."""
        return f"game server {self.server_id}"

    async def start(self) -> None:
        """Serve; :class:`~atout_arena.core.relay.ContractMismatch` (nothing started) while a part
        of another contract version is live on this Redis."""
        if self.server_id:
            try:
                await check_contract_async(self.relay.redis, self.part)
            except redis.RedisError as exc:  # Redis away: the beat registers it once it is back
                log.warning("could not check the Redis contract's version now (%s); the beat will", exc)
        self._control = asyncio.create_task(self._listen_control(), name="control-channel")
        await self.server.start()
        for name in ("", *ALL_SERVICE_NAMES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.server_id:
            self._beat = asyncio.create_task(self._beat_forever(), name="server-liveness")

    async def _beat_forever(self) -> None:
        """This server's liveness in Redis, every second; old entries of others pruned."""
        failing = False
        while True:
            try:
                await self.relay.redis.execute_command(*server_beat_command(self.server_id))
                await self.relay.redis.zremrangebyscore(SERVERS_KEY, 1, now_ms() - 3_600_000)
                try:
                    await check_contract_async(self.relay.redis, self.part)
                except ContractMismatch as exc:  # registered while this one was away: say so
                    log.error("%s", exc)
                if failing:
                    log.info("Redis is back: liveness renewed")
                failing = False
            except Exception as exc:  # Redis away: the bots' streams end and reconnect; we wait
                if not failing:
                    log.warning("cannot renew this server's liveness in Redis (%s); retrying", exc)
                failing = True
            await asyncio.sleep(SERVER_BEAT_S)

    async def _listen_control(self) -> None:
        """Follow the control channel (keys.CONTROL_CHANNEL): a revoked bot's streams close.
        Resubscribes after a Redis error, every second until it can."""
        while True:
            pubsub = self.relay.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CONTROL_CHANNEL)
                async for message in pubsub.listen():
                    parsed = parse_control(message.get("data", b""))
                    if parsed is not None:
                        closed = self.gateway.revoke(*parsed)
                        log.info("bot %s revoked (%s): %d streams closed", parsed[0], parsed[1], closed)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: listen again once it is back
                log.warning("control channel: %r; subscribing again in 1 s", exc)
                await asyncio.sleep(1)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def stop(self, grace_s: float | None = None) -> None:
        grace = self.grace_s if grace_s is None else grace_s
        if self._control is not None:
            self._control.cancel()
            await asyncio.gather(self._control, return_exceptions=True)
        await self.health.enter_graceful_shutdown()
        if self._beat is not None:
            self._beat.cancel()
            try:  # gone at once: workers wait for its bots to reconnect elsewhere
                await asyncio.wait_for(self.relay.redis.execute_command(
                    *server_beat_command(self.server_id, ttl_ms=0)), 2.0)
                await asyncio.wait_for(self.relay.redis.hdel(CONTRACT_KEY, self.part), 2.0)
            except Exception as exc:
                log.warning("could not mark this server stopped in Redis: %s", exc)
        self.gateway.close_all("shutting_down", "the game server is shutting down: reconnect")
        await self.server.stop(grace)
        await self.relay.close()

    async def wait_for_termination(self) -> None:
        await self.server.wait_for_termination()


def create_server(
    address: str,
    *,
    settings: Settings,
    registry: BotRegistry,
    redis_url: str | None = None,
    practice: Practice | None = None,
) -> tuple[GameServer, int]:
    """A game server bound to ``address`` (port 0: any free port), not started yet.

    Returns it and the port it is bound to. Call from the event loop that will run it. With
    ``practice``, ``Games.StartPractice`` starts practice matches (stored and sent to the
    workers); without it, the call is UNIMPLEMENTED."""
    url = redis_url or settings.redis_url
    if not url:
        raise ValueError("no Redis URL: set ATOUT_REDIS_URL or pass redis_url")
    redis_client = make_async_redis(url)
    relay = GatewayRelay(redis_client, presence_ttl_ms=settings.presence_ttl_ms)

    async def verify(token: str) -> BotInfo | None:
        return await asyncio.to_thread(registry.verify, token)

    server = grpc.aio.server(interceptors=[AuthInterceptor(verify)], options=list(SERVER_OPTIONS))
    gateway = BotGatewayServicer(
        relay,
        server_id=settings.server_id,
        keepalive_ms=settings.keepalive_ms,
        hello_timeout_ms=settings.hello_timeout_ms,
    )
    pb_grpc.add_BotGatewayServicer_to_server(gateway, server)
    pb_grpc.add_GamesServicer_to_server(GamesServicer(practice), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(ALL_SERVICE_NAMES, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    game_server = GameServer(server, gateway, health_servicer, relay, settings.shutdown_grace_s,
                             server_id=settings.server_id)
    return game_server, port


async def serve(
    settings: Settings,
    registry: BotRegistry,
    address: str | None = None,
    redis_url: str | None = None,
    on_ready: Callable[[int], None] | None = None,
    practice: Practice | None = None,
) -> None:
    """Run a game server until SIGTERM or SIGINT, then stop it gracefully."""
    game_server, port = create_server(
        address or settings.grpc_address,
        settings=settings,
        registry=registry,
        redis_url=redis_url,
        practice=practice,
    )
    await game_server.start()
    # What was made to start (modules, the registry, gRPC's tables) lives as long as the process:
    # out of the collector's way, whose full collections walked it all (measured: 91 ms)
    gc.freeze()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if on_ready is not None:
        on_ready(port)
    await stop.wait()
    log.info("stopping: %d bot streams open", len(game_server.gateway.sessions))
    await game_server.stop()
