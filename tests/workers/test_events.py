"""The per-process event sink: batched writes in order, subscriber tracking, robustness."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
import redis

from atout_arena.core.metrics import DECISION_SECONDS, MetricsRecorder, metrics_registry
from atout_workers.events import LATEST_EVENTS_PER_S, LISTEN_CHECK_S, METRICS_FLUSH_S, EventSink


@pytest.fixture
def sink(redis_url: str):
    client = redis.Redis.from_url(redis_url)
    sink = EventSink(client)
    yield sink
    sink.stop()
    client.close()


def test_writes_keep_their_order_and_flush_waits_for_them(sink, redis_client) -> None:
    key = f"test:events:{uuid.uuid4().hex}"
    for i in range(500):
        sink.put(lambda pipe, i=i: pipe.rpush(key, i))
    assert sink.flush(10)
    assert [int(v) for v in redis_client.lrange(key, 0, -1)] == list(range(500))
    redis_client.delete(key)


def test_a_failing_writer_costs_only_itself(sink, redis_client) -> None:
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


def test_it_knows_which_channels_have_subscribers(sink, redis_client) -> None:
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


def test_the_latest_event_refreshes_of_a_process_keep_to_their_budget(sink) -> None:
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


class _CountingRecorder(MetricsRecorder):
    """The real recorder, counting its ``decisions`` calls (each is a few Redis commands)."""

    calls = 0

    def decisions(self, game, bot, seconds, pipe=None):
        self.calls += 1
        super().decisions(game, bot, seconds, pipe)


def test_the_decisions_of_every_match_are_added_up_and_written_once_per_bot(redis_url, redis_client) -> None:
    """200 matches of 3 bots hand over their decisions from 4 threads: nothing is lost, and the
    sink writes one tally per bot (a few commands), not one per match."""
    client = redis.Redis.from_url(redis_url)
    recorder = _CountingRecorder(client)
    sink = EventSink(client, recorder)
    bots = [f"tally-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    try:
        sink.flush(5)  # the sink's thread is up, and its first due write is done
        recorder.calls = 0

        def matches(first: int) -> None:
            for match in range(first, 200, 4):
                sink.add_decisions("merde", [(bots[(match + i) % 3], 0.001 * (i % 7)) for i in range(14)])

        threads = [threading.Thread(target=matches, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sink.flush(10)
        assert recorder.calls <= 2 * len(bots)  # one write per bot (two if a timed one came between)
        registry = metrics_registry(redis_client)
        count, seconds = f"{DECISION_SECONDS.name}_count", f"{DECISION_SECONDS.name}_sum"
        counts = [registry.get_sample_value(count, {"game": "merde", "bot": b}) or 0 for b in bots]
        assert sum(counts) == 200 * 14
        total = sum(registry.get_sample_value(seconds, {"game": "merde", "bot": b}) or 0 for b in bots)
        assert abs(total - 200 * sum(0.001 * (i % 7) for i in range(14))) < 1e-6

        # without a flush: written within METRICS_FLUSH_S and the sink's wait
        sink.add_decisions("merde", [(bots[0], 0.5)])
        deadline = time.monotonic() + METRICS_FLUSH_S + 2 * LISTEN_CHECK_S + 2.0
        labels = {"game": "merde", "bot": bots[0]}
        name = f"{DECISION_SECONDS.name}_count"
        while metrics_registry(redis_client).get_sample_value(name, labels) != counts[0] + 1:
            assert time.monotonic() < deadline, "the tally was not written without a flush"
            time.sleep(0.05)
    finally:
        sink.stop()
        client.close()
