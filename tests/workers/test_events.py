"""The per-process event sink: batched writes in order, subscriber tracking, robustness."""

from __future__ import annotations

import time
import uuid

import pytest
import redis

from atout_workers.events import LATEST_EVENTS_PER_S, LISTEN_CHECK_S, EventSink


@pytest.fixture
def sink(redis_url: str):  # type: ignore[no-untyped-def]
    client = redis.Redis.from_url(redis_url)
    sink = EventSink(client)
    yield sink
    sink.stop()
    client.close()


def test_writes_keep_their_order_and_flush_waits_for_them(sink, redis_client) -> None:  # type: ignore[no-untyped-def]
    key = f"test:events:{uuid.uuid4().hex}"
    for i in range(500):
        sink.put(lambda pipe, i=i: pipe.rpush(key, i))
    assert sink.flush(10)
    assert [int(v) for v in redis_client.lrange(key, 0, -1)] == list(range(500))
    redis_client.delete(key)


def test_a_failing_writer_costs_only_itself(sink, redis_client) -> None:  # type: ignore[no-untyped-def]
    key = f"test:events:{uuid.uuid4().hex}"

    def broken(pipe: object) -> None:
        raise ValueError("a bug")

    sink.put(lambda pipe: pipe.rpush(key, "before"))
    sink.put(broken)
    sink.put(lambda pipe: pipe.rpush(key, "after"))
    assert sink.flush(10)
    sink.put(lambda pipe: pipe.rpush(key, "later"))  # the sink is still alive
    assert sink.flush(10)
    assert redis_client.lrange(key, 0, -1) == [b"before", b"after", b"later"]
    redis_client.delete(key)


def test_it_knows_which_channels_have_subscribers(sink, redis_client) -> None:  # type: ignore[no-untyped-def]
    heard, silent = f"test:ch:{uuid.uuid4().hex}", f"test:ch:{uuid.uuid4().hex}"
    pubsub = redis_client.pubsub()
    pubsub.subscribe(heard)
    pubsub.get_message(timeout=1)
    sink.watch([heard, silent])
    assert sink.listening(heard) and not sink.listening(silent)  # asked at once
    pubsub.unsubscribe(heard)
    pubsub.get_message(timeout=1)
    deadline = time.monotonic() + 10 * LISTEN_CHECK_S
    while sink.listening(heard) and time.monotonic() < deadline:
        sink.flush(1)
        time.sleep(0.05)
    assert not sink.listening(heard)  # noticed within a few checks
    sink.unwatch([heard, silent])
    pubsub.close()


def test_the_latest_event_refreshes_of_a_process_keep_to_their_budget(sink) -> None:  # type: ignore[no-untyped-def]
    """However many unwatched matches ask, at most LATEST_EVENTS_PER_S refreshes a second (a
    burst of that many after a quiet while), and every asker gets its turn as tokens come."""
    start = time.monotonic()
    granted = sum(sink.take_refresh(start) for _ in range(1000))  # a thousand matches at once
    assert granted == int(LATEST_EVENTS_PER_S)
    assert not sink.take_refresh(start)
    per_tick = []
    for tick in range(1, 11):  # ten steps of 0.1 s: 20 tokens each
        now = start + tick * 0.1
        per_tick.append(sum(sink.take_refresh(now) for _ in range(1000)))
    assert all(abs(n - LATEST_EVENTS_PER_S * 0.1) <= 1 for n in per_tick), per_tick
    assert sink.take_refresh(start + 100.0)  # full again after a quiet while
    assert sum(sink.take_refresh(start + 100.0) for _ in range(1000)) == int(LATEST_EVENTS_PER_S) - 1
