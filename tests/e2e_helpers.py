"""Helpers of the tests that run real parts (imported as ``e2e_helpers`` from any test
directory: ``tests/`` is on ``sys.path`` through ``tests/conftest.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atout_arena.core.replay import MatchRecord

TESTS = Path(__file__).resolve().parent
SAMPLE_BOTS = TESTS / "server" / "sample_bots.py"  # bots of the game-server tests
WORKER_BOTS = TESTS / "workers" / "worker_bots.py"  # bots of the workers' end-to-end tests
WORKER_BOT_CLASSES = ("Sleepy", "QuitAfter", "Stamp", "Spy")

# Short liveness settings for the parts that play matches in tests (workers) and sweep (beat),
# so that the sweeper tests take seconds. Both must share them: a match heartbeating every 5 s
# would look dead to a sweeper that waits 2 s.
FAST = {
    "ATOUT_HEARTBEAT_S": "0.3",
    "ATOUT_MATCH_STALE_S": "2",
    "ATOUT_SWEEP_INTERVAL_S": "0.5",
    "ATOUT_REQUEUE_AFTER_S": "3",
    "ATOUT_LEAGUE_TICK_S": "0.5",
    "ATOUT_RECONNECT_GRACE_S": "2",  # a vanished bot is faulted after 2 s (outage tests set more)
}


def wait_until(
    predicate: Callable[..., Any], timeout: float = 30.0, what: str = "condition", poll_s: float = 0.05
) -> Any:
    """Poll ``predicate()`` until it returns something true (returned), or fail after ``timeout``.
    (Callable[..., Any]: a lambda that binds a loop variable as a default, called with none, is
    typed so.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def stored_match(sessions: Any, match_id: int) -> MatchRecord:
    """The stored record of a match that must exist (:func:`atout_arena.core.replay.load_match`)."""
    from atout_arena.core.replay import load_match

    record = load_match(sessions, match_id)
    assert record is not None, f"no match {match_id}"
    return record
