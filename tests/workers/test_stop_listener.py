"""The worker's stop listener (issue 32, findings 6 and 11) on a real Redis: a stop message
cancels the named match's game at once, whatever it waits for; a disabled bot is remembered
(its decisions then never wait for it); a match whose lease the heartbeat found lost stops too
(the fallback when a message was missed)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from e2e_helpers import wait_until

from atout_arena.core.relay import publish_revocation, publish_stop
from atout_workers.play import LEASE_LOST, Running, StopListener
from atout_workers.world import Lease


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def _waiting(loop: asyncio.AbstractEventLoop, match_id: int) -> Running:
    """A match whose game waits for ever (a bot that never answers)."""
    running = Running(loop, Lease(match_id, f"lease-{match_id}"))

    async def start() -> None:
        running.task = asyncio.ensure_future(asyncio.sleep(3600))

    asyncio.run_coroutine_threadsafe(start(), loop).result(5)
    return running


def test_a_stop_message_cancels_the_named_game_and_no_other(redis_client, loop) -> None:
    listener = StopListener(redis_client)
    stopped, other = _waiting(loop, 9_000_001), _waiting(loop, 9_000_002)
    listener.add(9_000_001, stopped)
    listener.add(9_000_002, other)
    assert publish_stop(redis_client, [9_000_001, 5], "tournament 1 cancelled") >= 1
    wait_until(lambda: stopped.task is not None and stopped.task.cancelled(), 2, "the game cancelled")
    assert stopped.reason == "tournament 1 cancelled"
    assert other.reason is None and other.task is not None and not other.task.done()
    listener.remove(9_000_002, other)


def test_a_disabled_bot_is_remembered_a_rotated_token_is_not(redis_client) -> None:
    listener = StopListener(redis_client)
    publish_revocation(redis_client, 9_000_003, "token_rotated")
    publish_revocation(redis_client, 9_000_004, "disabled")
    wait_until(lambda: "9000004" in listener.revoked, 2, "the disabled bot remembered")
    assert "9000003" not in listener.revoked


def test_a_lost_lease_stops_its_game_without_a_message(redis_client, loop) -> None:
    listener = StopListener(redis_client)
    running = _waiting(loop, 9_000_005)
    listener.add(9_000_005, running)
    running.lease.lost.set()  # what the heartbeat does when the match is no longer ours
    wait_until(lambda: running.task is not None and running.task.cancelled(), 2, "the game cancelled")
    assert running.reason == LEASE_LOST
