"""A match's follow-ups (its ladder's tick, a duplicate's next rotation) never raise out of the
match's task, and an outage while they run is the process's one outage line, not a traceback per
match: the CI once caught "match 12: its follow-ups failed" with a traceback while PostgreSQL
shut down (test_worker_database_outage.py). The sweeper's net does them later."""

from __future__ import annotations

import logging

import pytest
import redis
from sqlalchemy.exc import OperationalError

from atout_arena.core.vocabulary import RunResult
from atout_arena.core.wire import database_outage, redis_outage
from atout_workers.play import follow_up


@pytest.fixture(autouse=True)
def _fresh_outages():
    for outage in (database_outage, redis_outage):
        outage.ok()
    yield
    for outage in (database_outage, redis_outage):
        outage.ok()


def _raising(exc: BaseException):
    def then(result: RunResult) -> None:
        raise exc
    return then


def test_a_database_outage_in_follow_ups_is_the_outage_line_once(caplog) -> None:
    exc = OperationalError("SELECT 1", {}, Exception("terminating connection due to administrator command"))
    with caplog.at_level(logging.INFO):
        for match_id in (12, 13, 14):
            follow_up(_raising(exc), match_id, RunResult.FINISHED)
    assert database_outage.down and not redis_outage.down
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "the database unreachable" in lines[0].getMessage()
    assert "match 12" in lines[0].getMessage() and lines[0].exc_info is None


def test_a_redis_outage_in_follow_ups_is_the_redis_line(caplog) -> None:
    with caplog.at_level(logging.INFO):
        follow_up(_raising(redis.ConnectionError("Connection refused")), 3, RunResult.FINISHED)
    assert redis_outage.down and not database_outage.down
    assert [r.exc_info for r in caplog.records if r.levelno >= logging.WARNING] == [None]


def test_any_other_error_is_logged_with_its_traceback_and_not_raised(caplog) -> None:
    follow_up(_raising(KeyError("ladder")), 7, RunResult.FINISHED)
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "match 7: its follow-ups failed" in record.getMessage() and record.exc_info is not None
    assert not database_outage.down and not redis_outage.down


def test_follow_ups_get_the_result() -> None:
    seen: list[RunResult] = []
    follow_up(seen.append, 1, RunResult.RELEASED)
    assert seen == [RunResult.RELEASED]
