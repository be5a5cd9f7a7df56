"""The game server: gRPC (asyncio) with bot-token auth, health checking and reflection.

>>> server, port = create_server("127.0.0.1:0", settings=..., registry=...)   # doctest: +SKIP
>>> await server.start(); ...; await server.stop()                             # doctest: +SKIP

``serve()`` runs one until SIGTERM or SIGINT, then shuts down gracefully: health turns
NOT_SERVING, the server marks itself gone in Redis, every bot stream gets an Error
``shutting_down`` (its bot reconnects at once, to this server's replacement or another one;
the workers wait for it up to ``ATOUT_RECONNECT_GRACE_S`` and ask its pending decision
again), and open calls get ``shutdown_grace_s`` to finish.

While it runs, the server renews its own liveness in Redis every half second
(:func:`atout_arena.core.relay.server_beat_command`): a server killed with ``-9`` stops,
and within :data:`~atout_arena.core.relay.SERVER_TTL_MS` its bots read as not connected (their
presence keys would otherwise live for three keep-alives). Redis going away is retried, never
a reason to exit, and said once for the whole process (:data:`atout_arena.core.wire.redis_outage`:
a line when a loop first meets it, a line when it is back), and once more if the server stops
meanwhile: its beat, control channel and every refused stream meet it, and each used to log its
own line, every second or every reconnection attempt.

With ``ATOUT_TLS_CERT`` and ``ATOUT_TLS_KEY`` it serves TLS (ALPN ``h2``); without, plain text.
With a health port (``ATOUT_HEALTH_PORT``) it answers ``GET /healthz`` over plain HTTP from its
event loop (:class:`HealthEndpoint`): 200 while it serves, 503 from SIGTERM to its exit, nothing
while the loop is stalled. A load balancer checking it (deploy/haproxy/haproxy.cfg) takes a hung
or draining server out of its pool within seconds; gRPC's health service, answered by gRPC's own
threads, kept saying SERVING for a SIGSTOPped server, whose kernel still completed handshakes.

Beside its liveness it publishes how many bot streams it holds (``keys.streams_key``), and every
``ATOUT_REBALANCE_S`` it compares with the other live servers: holding more than its fair share
(``ceil(total / servers) +`` :data:`REBALANCE_TOLERANCE`) it ends a few of its streams that wait
for no decision with an Error ``moved`` (:class:`Rebalancer`). Their bots reconnect at once,
through the balancer, to the least loaded server: a server that joins fills within a minute.
It plays no match: ``Games.StartPractice`` (given an :class:`atout_arena.services.practice.Practice`)
stores a practice match and sends it to the workers' practice queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import random
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc
import redis
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc
from atout_arena.core.keys import CONTRACT_KEY, CONTROL_CHANNEL, SERVERS_KEY, streams_key
from atout_arena.core.relay import (
    SERVER_BEAT_S,
    SERVER_TTL_MS,
    ContractMismatch,
    GatewayRelay,
    check_contract_async,
    make_async_redis,
    now_ms,
    parse_control,
    server_beat_command,
)
from atout_arena.core.settings import Settings
from atout_arena.core.wire import is_outage, redis_outage
from atout_arena.gateway.servicer import CURRENT_BOT, BotGatewayServicer, GamesServicer
from atout_arena.gateway.session import BotSession
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


STOP_MARK_TIMEOUT_S = 2.0  # each Redis call of a stop: a hung Redis does not hold the stop longer
HEALTH_PATH = "/healthz"
HEALTH_READ_TIMEOUT_S = 2.0  # a check that does not send its request within this is dropped
HEALTH_MAX_REQUEST = 8192  # bytes of a request's head; a longer one is refused


class HealthEndpoint:
    """``GET /healthz`` over HTTP/1.x on the game server's own event loop: ``200 serving`` while
    :attr:`draining` is false, ``503 draining`` once it is true; anything else ``404``. One
    request per connection (HAProxy's ``option httpchk`` sends one and waits for the close).

    It is answered by the loop that runs every bot stream, on purpose: a loop that cannot answer
    it within the balancer's check timeout cannot serve its bots either."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.draining = False
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        """Listen; returns the port (the one chosen for port 0)."""
        self._server = await asyncio.start_server(self._answer, self.host, self.port, reuse_address=True)
        port: int = self._server.sockets[0].getsockname()[1]
        self.port = port
        return port

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEALTH_READ_TIMEOUT_S)
            method, _, rest = head[:HEALTH_MAX_REQUEST].decode("latin-1").partition(" ")
            path = rest.partition(" ")[0].partition("?")[0]
            if method not in ("GET", "HEAD") or path != HEALTH_PATH:
                status, body = "404 Not Found", f"GET {HEALTH_PATH} only\n"
            elif self.draining:
                status, body = "503 Service Unavailable", "draining\n"
            else:
                status, body = "200 OK", "serving\n"
            writer.write(
                f"HTTP/1.0 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                f"Connection: close\r\n\r\n{'' if method == 'HEAD' else body}".encode("latin-1"))
            await asyncio.wait_for(writer.drain(), HEALTH_READ_TIMEOUT_S)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a checker gone, or not speaking HTTP: nothing to answer, nothing to log
        finally:
            writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)


# -- rebalancing -------------------------------------------------------------------------------

REBALANCE_TOLERANCE = 1  # streams a server may hold above its fair share before it hands any over
REBALANCE_SHARE = 0.1  # at most this share of its streams (and at least REBALANCE_MIN) per round
REBALANCE_MIN = 2
# A bot moved is not asked to move again for this long: without a balancer in front (a bot
# given this server's own address) it comes straight back, and would be moved every round.
MOVE_AGAIN_AFTER_S = 60.0
MOVED_MESSAGE = "this game server hands some of its bots over to another one: reconnect now"


def excess_streams(mine: int, counts: dict[str, int], tolerance: int = REBALANCE_TOLERANCE) -> int:
    """How many streams a server holding ``mine`` should hand over, given ``counts`` (every live
    server's streams, its own included): what it holds above ``ceil(total / servers) +
    tolerance``; 0 for a server alone."""
    if len(counts) < 2:
        return 0
    fair = math.ceil(sum(counts.values()) / len(counts))
    return max(0, mine - fair - tolerance)


class Rebalancer:
    """The rounds of one game server's rebalancing (see the module's docstring). The choice of
    streams is :meth:`pick`; reading Redis and ending streams is :meth:`round`."""

    def __init__(self, gateway: BotGatewayServicer, server_id: str) -> None:
        self.gateway = gateway
        self.server_id = server_id
        self.moved: dict[str, float] = {}  # stream address -> when it was last moved (monotonic)
        self._seen: set[str] = set()  # live servers of the previous round
        self.total_moved = 0

    def held(self) -> list[BotSession]:
        """The streams this server holds: past their Hello, holding their address."""
        return [s for s in self.gateway.sessions if s.presence is not None]

    def pick(self, count: int, now: float) -> list[BotSession]:
        """Up to ``count`` streams to move, not moved within :data:`MOVE_AGAIN_AFTER_S`: those
        waiting for no decision first, then those waiting for the fewest. A bot in many matches
        at once is hardly ever between decisions (in the nemesis rehearsal, never while its
        tournament ran), and moving it mid-decision costs it nothing either: the arena ended the
        stream, so its decisions' clocks stop, and its new stream is sent them again, each with
        its whole time (session.py: ``moved``)."""
        self.moved = {a: t for a, t in self.moved.items() if now - t < MOVE_AGAIN_AFTER_S}
        free = [s for s in self.held() if s.address not in self.moved]
        random.shuffle(free)
        free.sort(key=lambda s: len(s.open))
        return free[:count]

    async def counts(self, redis_client: Any) -> dict[str, int]:
        """Streams held by every live game server (from Redis; this one's counted now)."""
        live = [m.decode() if isinstance(m, bytes) else str(m)
                for m in await redis_client.zrangebyscore(SERVERS_KEY, now_ms(), "+inf")]
        others = [sid for sid in live if sid != self.server_id]
        values = await redis_client.mget([streams_key(sid) for sid in others]) if others else []
        # a live server with no count yet (its first beat is on its way) is left out this round
        counts = {sid: int(v) for sid, v in zip(others, values, strict=True) if v is not None}
        counts[self.server_id] = len(self.held())
        return counts

    async def round(self, redis_client: Any) -> int:
        """One round: read the counts, end this server's excess streams (a few); how many."""
        counts = await self.counts(redis_client)
        # A server seen live for the first time may not be in the balancer's pool yet (its
        # checks must pass first): bots moved now would come straight back. Wait one round.
        ready = {sid: n for sid, n in counts.items() if sid == self.server_id or sid in self._seen}
        self._seen = set(counts)
        mine = ready[self.server_id]
        excess = excess_streams(mine, ready)
        if not excess:
            return 0
        batch = min(excess, max(REBALANCE_MIN, math.ceil(mine * REBALANCE_SHARE)))
        now = time.monotonic()
        chosen = self.pick(batch, now)
        for session in chosen:
            self.moved[session.address] = now
            session.stop("moved", MOVED_MESSAGE)
        if chosen:
            self.total_moved += len(chosen)
            fair = math.ceil(sum(ready.values()) / len(ready))
            log.info("rebalancing: %d streams here, %d on %d live servers (fair share %d): %d asked to "
                     "reconnect elsewhere", mine, sum(ready.values()), len(ready), fair, len(chosen))
        return len(chosen)


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
        *,
        http_health: HealthEndpoint | None = None,
        rebalance_s: float = 0.0,
    ) -> None:
        self.server = server
        self.gateway = gateway
        self.health = health_servicer
        self.http_health = http_health
        self.relay = relay
        self.grace_s = grace_s
        self.server_id = server_id
        self.rebalance_s = rebalance_s
        self.rebalancer = Rebalancer(gateway, server_id)
        self._beat: asyncio.Task[None] | None = None
        self._control: asyncio.Task[None] | None = None
        self._rebalance: asyncio.Task[None] | None = None

    @property
    def part(self) -> str:
        """This server in the Redis contract's registry (:func:`atout_arena.core.relay.check_contract`)."""
        return f"game server {self.server_id}"

    @property
    def health_port(self) -> int | None:
        """The port of its HTTP health check (``None``: none)."""
        return self.http_health.port if self.http_health is not None else None

    async def start(self) -> None:
        """Serve; :class:`~atout_arena.core.relay.ContractMismatch` (nothing started) while a part
        of another contract version is live on this Redis."""
        if self.server_id:
            try:
                await check_contract_async(self.relay.redis, self.part)
            except redis.RedisError as exc:  # Redis away: the beat registers it once it is back
                if is_outage(exc):
                    redis_outage.failed("checking the Redis contract's version (the beat will)", exc)
                else:
                    log.warning("could not check the Redis contract's version now (%s); the beat will",
                                _said(exc))
        self._control = asyncio.create_task(self._listen_control(), name="control-channel")
        await self.server.start()
        for name in ("", *ALL_SERVICE_NAMES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.http_health is not None:
            port = await self.http_health.start()
            log.info("health check on http://%s:%d%s", self.http_health.host, port, HEALTH_PATH)
        if self.server_id:
            self._beat = asyncio.create_task(self._beat_forever(), name="server-liveness")
            if self.rebalance_s > 0:
                self._rebalance = asyncio.create_task(self._rebalance_forever(), name="rebalance")

    async def _beat_forever(self) -> None:
        """This server's liveness in Redis, and how many streams it holds, every
        :data:`SERVER_BEAT_S`; old entries of others pruned."""
        failing = False
        while True:
            try:
                async with self.relay.redis.pipeline(transaction=False) as pipe:
                    pipe.execute_command(*server_beat_command(self.server_id))
                    pipe.set(streams_key(self.server_id), len(self.rebalancer.held()), px=SERVER_TTL_MS)
                    pipe.zremrangebyscore(SERVERS_KEY, 1, now_ms() - 3_600_000)
                    await pipe.execute()
                try:
                    await check_contract_async(self.relay.redis, self.part)
                except ContractMismatch as exc:  # registered while this one was away: say so
                    log.error("%s", exc)
                redis_outage.ok()
                failing = False
            except Exception as exc:  # Redis away: the bots' streams end and reconnect; we wait
                if is_outage(exc):
                    redis_outage.failed("this game server's liveness beat", exc)
                elif not failing:
                    log.warning("cannot renew this server's liveness in Redis (%s); retrying", _said(exc))
                    failing = True
            await asyncio.sleep(SERVER_BEAT_S)

    async def _rebalance_forever(self) -> None:
        """A :class:`Rebalancer` round every ``rebalance_s`` (jittered, so that servers started
        together do not read the same counts at the same instant)."""
        while True:
            await asyncio.sleep(self.rebalance_s * random.uniform(0.8, 1.2))
            if self.gateway.closing:
                return
            try:
                await self.rebalancer.round(self.relay.redis)
            except Exception as exc:  # Redis away (the beat says so): no rebalancing meanwhile
                log.debug("rebalancing skipped: %s", _said(exc))

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
                if is_outage(exc):
                    redis_outage.failed("the control channel", exc)
                else:
                    log.warning("control channel: %r; subscribing again in 1 s", exc)
                await asyncio.sleep(1)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def stop(self, grace_s: float | None = None) -> None:
        grace = self.grace_s if grace_s is None else grace_s
        if self.http_health is not None:  # first: the balancer sends no new bot here
            self.http_health.draining = True
        for task in (self._control, self._rebalance):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self.health.enter_graceful_shutdown()
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.gather(self._beat, return_exceptions=True)
            try:  # gone at once: workers wait for its bots to reconnect elsewhere
                await asyncio.wait_for(self.relay.redis.execute_command(
                    *server_beat_command(self.server_id, ttl_ms=0)), STOP_MARK_TIMEOUT_S)
                await asyncio.wait_for(self.relay.redis.delete(streams_key(self.server_id)),
                                       STOP_MARK_TIMEOUT_S)
                await asyncio.wait_for(self.relay.redis.hdel(CONTRACT_KEY, self.part), STOP_MARK_TIMEOUT_S)
            except Exception as exc:  # the one line of a stop without Redis (its streams' follow)
                log.warning("stopping without Redis (%s): this server's liveness expires by itself "
                            "within %.0f s", _said(exc), SERVER_TTL_MS / 1000)
        self.gateway.close_all("shutting_down", "the game server is shutting down: reconnect")
        await self.server.stop(grace)
        await self.relay.close()
        if self.http_health is not None:
            await self.http_health.close()

    async def wait_for_termination(self) -> None:
        await self.server.wait_for_termination()


def _said(exc: BaseException) -> str:
    """An exception in a log line: its message, or its type when it has none (a TimeoutError)."""
    return str(exc) or type(exc).__name__



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
    workers); without it, the call is UNIMPLEMENTED. With ``settings.health_port``, its HTTP
    health check listens on that port of ``address``'s host once started. With
    ``settings.tls_cert`` and ``tls_key`` it serves TLS (:meth:`Settings.tls_pair`)."""
    url = redis_url or settings.redis_url
    if not url:
        raise ValueError("no Redis URL: set ATOUT_REDIS_URL or pass redis_url")
    redis_client = make_async_redis(url)
    relay = GatewayRelay(redis_client, presence_ttl_ms=settings.presence_ttl_ms, url=url)

    async def verify(token: str) -> BotInfo | None:
        return await asyncio.to_thread(registry.verify, token)

    server = grpc.aio.server(interceptors=[AuthInterceptor(verify)], options=list(SERVER_OPTIONS))
    gateway = BotGatewayServicer(
        relay,
        server_id=settings.server_id,
        keepalive_ms=settings.keepalive_ms,
        hello_timeout_ms=settings.hello_timeout_ms,
        outage_limit_ms=int(settings.outage_limit_s * 1000),
    )
    pb_grpc.add_BotGatewayServicer_to_server(gateway, server)
    pb_grpc.add_GamesServicer_to_server(GamesServicer(practice), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(ALL_SERVICE_NAMES, server)
    pair = settings.tls_pair()  # SettingsError (one line) for a file that cannot serve
    if pair is None:
        port = server.add_insecure_port(address)
    else:  # TLS with ALPN h2 (gRPC's own); the HTTP health check below stays plain
        port = server.add_secure_port(address, grpc.ssl_server_credentials([(pair[1], pair[0])]))
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    http_health = None
    if settings.health_port is not None:
        host = address.rsplit(":", 1)[0].strip("[]") or "0.0.0.0"
        http_health = HealthEndpoint(host, settings.health_port)
    game_server = GameServer(server, gateway, health_servicer, relay, settings.shutdown_grace_s,
                             server_id=settings.server_id, http_health=http_health,
                             rebalance_s=settings.rebalance_s)
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
