"""The presence session both kinds of stream use (core.presence): the game server's bot
streams and the API's play streams. Real Redis; the session driven directly, cancelled at
every point of its life, replaced by a newer stream, its hooks in order."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from atout_arena.core.keys import conn_key
from atout_arena.core.presence import Presence
from atout_arena.core.relay import GatewayRelay, make_async_redis

pytestmark = pytest.mark.timeout(120)
numbers = itertools.count(1)


def _address() -> str:
    return f"presence-{next(numbers)}-{id(numbers)}"


async def _gone(relay: GatewayRelay, key: str) -> bool:
    for _ in range(300):  # the wind-up, in a task of its own, may still be on its way
        if not await relay.redis.exists(key):
            return True
        await asyncio.sleep(0.01)
    return False


def test_a_presence_cancelled_at_any_point_of_its_life_is_released(redis_url: str) -> None:
    """Cancelled k turns of the loop after it starts, for every k from before the TAKEOVER is
    sent to while it reads, and again at every turn after: never left behind."""

    async def scenario() -> list[int]:
        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=60_000)
        await relay._call("PING")  # a connection in the pool: the TAKEOVER is a few turns from Redis
        held_at: list[int] = []
        left: list[int] = []
        for k in range(40):
            address = _address()

            async def live(k: int = k, address: str = address) -> None:
                async with Presence(relay, address, f"conn-{k}", name=f"test {k}") as presence:
                    held_at.append(k)
                    await presence.read(1000)

            run = asyncio.ensure_future(live())
            for _ in range(k):
                await asyncio.sleep(0)
            while not run.done():
                run.cancel()
                await asyncio.sleep(0)
            if not await _gone(relay, conn_key(address)):
                left.append(k)
        await relay.close()
        assert held_at, "no run got as far as holding the presence: the check would prove nothing"
        return left

    assert asyncio.run(scenario()) == []


def test_a_newer_stream_takes_the_address_over(redis_url: str, redis_client) -> None:
    """The older stream reads what came before the newer one took over, then learns who did;
    its heartbeat fails; its end releases nothing of the newer stream's presence."""
    from atout_workers.decisions import DecisionClient

    address = _address()
    notifier = DecisionClient(redis_url)

    async def scenario() -> tuple[list[bytes], str | None, bool, bool, bool]:
        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=60_000)
        older = Presence(relay, address, "conn-old", name="older")
        await older.__aenter__()
        await asyncio.to_thread(notifier.match_start, address, "m1", "fool", 0, 2, {}, ["a", "b"])
        newer = Presence(relay, address, "conn-new", name="newer")
        await newer.__aenter__()
        payloads, replaced_by = await older.read(1000)
        renewed = await older.heartbeat()
        await older.__aexit__(None, None, None)
        still_held = bool(await relay.redis.exists(conn_key(address)))
        await newer.__aexit__(None, None, None)
        gone = await _gone(relay, conn_key(address))
        await relay.close()
        return payloads, replaced_by, renewed, still_held, gone

    try:
        payloads, replaced_by, renewed, still_held, gone = asyncio.run(scenario())
    finally:
        notifier.close()
    assert len(payloads) == 1 and b"m1" in payloads[0]  # the MatchStart sent before the takeover
    assert replaced_by == "conn-new" and renewed is False
    assert still_held and gone


def test_the_hooks_run_around_the_release_and_a_failing_one_stops_nothing(redis_url: str) -> None:
    address = _address()
    seen: list[tuple[str, bool]] = []

    async def scenario() -> bool:
        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=60_000)
        key = conn_key(address)

        async def before() -> None:
            seen.append(("before", bool(await relay.redis.exists(key))))
            raise RuntimeError("a broken hook")

        async def after() -> None:
            seen.append(("after", bool(await relay.redis.exists(key))))

        hooked = Presence(relay, address, "conn-h", name="hooks", before_release=before, after_release=after)
        async with hooked:
            pass
        gone = not await relay.redis.exists(key)
        await relay.close()
        return gone

    assert asyncio.run(scenario()) is True
    assert seen == [("before", True), ("after", False)]
