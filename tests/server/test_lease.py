"""The leader lease (atout_arena.core.lease) on the session's real Redis: one holder at a time,
renewed by its holder, taken over once it expired, given up by a clean stop, and trusted by
its holder a little less long than Redis keeps it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from atout_arena.core.lease import TRUST, Lease


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def key(redis_client) -> Iterator[str]:
    name = f"atout:test:lease:{uuid.uuid4().hex}"
    yield name
    redis_client.delete(name)


def test_one_holder_at_a_time_and_renewal_keeps_it(redis_client, key: str) -> None:
    a, b = Lease(redis_client, key, 300, holder="a"), Lease(redis_client, key, 300, holder="b")
    assert a.hold() and a.held() and a.holder == "a"
    assert not b.hold() and not b.held() and b.holder == "a"
    for _ in range(5):  # renewed every 100 ms, it outlives its 300 ms many times over
        time.sleep(0.1)
        assert a.hold()
        assert not b.hold()
    assert 0 < redis_client.pttl(key) <= 300


def test_a_holder_that_stops_renewing_is_taken_over_after_the_ttl(redis_client, key: str) -> None:
    a, b = Lease(redis_client, key, 200, holder="a"), Lease(redis_client, key, 200, holder="b")
    assert a.hold()
    assert not b.hold()
    time.sleep(0.25)  # a died
    assert b.hold() and b.holder == "b"
    assert not a.hold() and not a.held() and a.holder == "b"  # a, back, finds it taken


def test_release_frees_it_at_once_and_only_its_holder_releases(redis_client, key: str) -> None:
    a, b = Lease(redis_client, key, 60_000, holder="a"), Lease(redis_client, key, 60_000, holder="b")
    assert a.hold()
    assert not b.release()  # not b's
    assert redis_client.get(key) == b"a"
    assert a.release() and not a.held()
    assert b.hold()


def test_the_holder_trusts_its_lease_less_long_than_redis_keeps_it(redis_client, key: str) -> None:
    clock = Clock()
    a = Lease(redis_client, key, 10_000, holder="a", clock=clock)
    assert a.hold()
    clock.now += 10 * TRUST - 0.01
    assert a.held()
    clock.now += 0.02  # past the trust of its last renewal: Redis may soon give it to another
    assert not a.held()
    assert TRUST < 1


def test_a_redis_error_is_raised_and_leadership_fades(redis_client, key: str) -> None:
    clock = Clock()
    a = Lease(redis_client, key, 1000, holder="a", clock=clock)
    assert a.hold()

    class Broken:
        def eval(self, *args: object) -> object:
            raise ConnectionError("Redis away")

    a.redis = Broken()
    with pytest.raises(ConnectionError):
        a.hold()
    assert a.held()  # still within its last renewal's trust
    clock.now += 1.0
    assert not a.held()
