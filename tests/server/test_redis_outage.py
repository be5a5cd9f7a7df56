"""RedisOutage: an outage is two lines per process whatever its loops retry, and is_outage
tells Redis being away (also wrapped by Celery's transport) from other errors."""

from __future__ import annotations

import logging
import threading

import pytest
import redis
from kombu.exceptions import OperationalError

from atout_arena.core.wire import RedisOutage, is_outage


def test_many_loops_failing_at_once_say_the_outage_once_and_its_end_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [100.0]
    outage = RedisOutage(logging.getLogger("test.outage"), clock=lambda: now[0])
    caplog.set_level(logging.INFO, "test.outage")
    error = redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    began: list[bool] = []
    threads = [threading.Thread(target=lambda: began.extend(
        outage.failed("loop", error) for _ in range(200))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert began.count(True) == 1 and outage.down
    now[0] = 105.25
    assert [outage.ok() for _ in range(5)] == [True, False, False, False, False]
    assert [r.getMessage() for r in caplog.records] == [
        "Redis unreachable (loop, ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection "
        "refused.); retrying quietly until it is back",
        "Redis is back after 5.2 s",
    ]
    assert {r.levelname for r in caplog.records} == {"WARNING"}
    assert outage.failed("again", "broken pipe") and outage.outages == 2  # the next outage is said


def wrapped(inner: BaseException, outer: type[BaseException]) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer(str(exc)) from exc
    except BaseException as exc:
        return exc


def test_is_outage_follows_explicit_causes_only() -> None:
    assert is_outage(redis.ConnectionError("x")) and is_outage(redis.TimeoutError("x"))
    assert is_outage(redis.BusyLoadingError("loading"))  # a restarted Redis reading its snapshot
    assert is_outage(ConnectionRefusedError(111, "refused"))
    assert is_outage(wrapped(redis.ConnectionError("x"), OperationalError))  # kombu's, raised from it
    assert not is_outage(redis.ResponseError("WRONGTYPE"))
    assert not is_outage(ValueError("x"))
    try:  # a database error raised while a Redis error was handled: not a Redis outage
        try:
            raise redis.ConnectionError("x")
        except redis.ConnectionError:
            raise ValueError("the database") from None
    except ValueError as exc:
        assert not is_outage(exc)
