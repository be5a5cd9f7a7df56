"""A bot stream's session winds up (its presence released) however its end and gRPC's
cancellation of the call interleave. Real Redis; the stream is scripted (the session's own
logic: a gRPC server cannot be made to cancel at a chosen moment)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from gateway_helpers import hello

from atout.v1 import atout_pb2 as pb
from atout_arena.core.keys import conn_key
from atout_arena.core.relay import GatewayRelay, make_async_redis
from atout_arena.gateway.session import BotSession
from atout_arena.services.bots import BotInfo

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("cancels_after", [0, 1, 2, 3, 5, 8])
def test_a_stream_that_ends_then_is_cancelled_releases_its_presence(
    redis_url: str, redis_client, cancels_after: int,
) -> None:
    """The bot half-closes (EOF), then its call is cancelled (the process exits): gRPC cancels
    the handler while the session winds up, ``cancels_after`` turns of the loop after the EOF,
    and again at every turn after that. The presence must be gone at once, not at its TTL (a
    cancellation that hit the wind-up used to skip the release: 1 stream in a few hundred)."""
    bot = BotInfo(id=900_000 + cancels_after, name=f"wind-up-{cancels_after}", owner="t",
                  created_at=datetime.now(UTC), disabled=False)
    key = conn_key(bot.bot_id)

    async def scenario() -> None:
        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=60_000)
        said_eof = asyncio.Event()
        sent: list[pb.ArenaMessage] = []
        arriving = [hello()]

        async def recv() -> pb.BotMessage | None:  # the Hello, then EOF
            if arriving:
                return arriving.pop()
            await asyncio.sleep(0.05)  # the takeover has happened, the tasks run
            said_eof.set()
            return None

        async def send(message: pb.ArenaMessage) -> None:
            sent.append(message)

        session = BotSession(relay, bot, recv, send, server_id="gs-wind-up", keepalive_ms=1000,
                             hello_timeout_ms=5000)
        run = asyncio.ensure_future(session.run())
        await said_eof.wait()
        for _ in range(cancels_after):
            await asyncio.sleep(0)
        while not run.done():  # gRPC's cancellation, wherever the wind-up is
            run.cancel()
            await asyncio.sleep(0)
        for _ in range(200):  # the wind-up, in a task of its own, goes on
            if not await relay.redis.exists(key):
                break
            await asyncio.sleep(0.01)
        await relay.close()
        assert sent and sent[0].WhichOneof("kind") == "welcome"

    asyncio.run(scenario())
    assert not redis_client.exists(key), "the presence outlived its stream"
