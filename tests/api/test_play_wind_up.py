"""A person's play stream gives up its presence however it is cancelled: before, during or after
its TAKEOVER (the page closed as the stream opens), or while it reads. Real Redis; the route's
generator is driven directly (the session's own logic: an HTTP server cannot be made to cancel
at a chosen moment), as tests/server/test_session_wind_up.py does for bots' streams."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from atout_arena.api.routes.play import play_events
from atout_arena.core.keys import conn_key
from atout_arena.core.relay import GatewayRelay, make_async_redis
from atout_arena.services.humans import HUMAN

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("cancels_after", [0, 1, 2, 3, 4, 5, 6, 8, 13, 30])
def test_a_play_stream_cancelled_at_any_point_releases_its_presence(
    redis_url: str, redis_client, cancels_after: int,
) -> None:
    """The stream is cancelled ``cancels_after`` turns of the loop after it starts (0: before
    its TAKEOVER is sent; a few turns: while Redis runs it; more: after the ``hello``), and
    again at every turn after that. The presence must be gone at once, not at its TTL."""
    human_id = 950_000 + cancels_after
    key = conn_key(str(human_id))
    seen: list[str] = []

    async def scenario() -> None:
        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=60_000)
        await relay._call("PING")  # a connection in the pool: the TAKEOVER is a few turns from Redis
        request = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(play_relay=relay)))
        arena = SimpleNamespace(settings=SimpleNamespace(server_id="api-wind-up"))
        human = SimpleNamespace(bot_id=str(human_id), name=f"person-{cancels_after}", id=human_id,
                                move_ms=30_000)
        caller = SimpleNamespace(kind=HUMAN, name=human.name)
        events = play_events(request, arena, human, caller)  # type: ignore[arg-type]

        async def read() -> None:
            async for event in events:
                seen.append(event.event or "comment")

        run = asyncio.ensure_future(read())
        for _ in range(cancels_after):
            await asyncio.sleep(0)
        while not run.done():  # the page is gone, wherever the stream is
            run.cancel()
            await asyncio.sleep(0)
        for _ in range(300):  # the wind-up, in a task of its own, goes on
            if not await relay.redis.exists(key):
                break
            await asyncio.sleep(0.01)
        await relay.close()

    asyncio.run(scenario())
    assert not redis_client.exists(key), f"the presence outlived its stream (events seen: {seen})"


def test_an_open_play_stream_holds_the_presence_until_it_is_closed(
    redis_url: str, redis_client,
) -> None:
    """The check above can fail: a stream that says hello holds the presence, and gives it up
    when the page closes it (the generator's aclose)."""
    human_id = 950_100
    key = conn_key(str(human_id))

    async def scenario() -> tuple[str | None, bool, bool]:
        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=60_000)
        request = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(play_relay=relay)))
        arena = SimpleNamespace(settings=SimpleNamespace(server_id="api-wind-up"))
        human = SimpleNamespace(bot_id=str(human_id), name="person-open", id=human_id, move_ms=30_000)
        events = play_events(request, arena, human, SimpleNamespace(kind=HUMAN, name="person-open"))  # type: ignore[arg-type]
        first = await events.__anext__()
        held = bool(await relay.redis.exists(key))
        await events.aclose()
        for _ in range(300):
            if not await relay.redis.exists(key):
                break
            await asyncio.sleep(0.01)
        gone = not await relay.redis.exists(key)
        await relay.close()
        return first.event, held, gone

    event, held, gone = asyncio.run(scenario())
    assert (event, held, gone) == ("hello", True, True)
