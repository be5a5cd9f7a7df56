"""The runner against a hung or closing arena (fake arena on 127.0.0.1): a silent stream is given
up within seconds whatever keep-alive the arena announced, a missing Welcome is bounded alike,
and a stream the arena ends itself (``shutting_down``, ``moved``) is reconnected at once."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from fake_arena import FakeArena, RunnerThread

from atout import Bot, Observation
from atout.runner import CONNECT_TIMEOUT_S, SILENCE_LIMIT_S
from atout.v1 import atout_pb2 as pb

pytestmark = pytest.mark.timeout(60)


RUNNER_BACKOFF = (0.2, 10.0)  # the runner's own default (RunnerThread's is shorter)


class Quiet(Bot):
    def act(self, observation: Observation) -> str:
        return observation.legal_actions[0]


def test_a_silent_arena_is_given_up_within_seconds_whatever_its_keepalive(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture
) -> None:
    """A hung game server says nothing and answers no ping. With the arena's default keep-alive
    (10 s) the runner waited 3 intervals + 1 s = 31 s, past the arena's 15 s reconnect grace:
    now it pings after a second and gives up after SILENCE_LIMIT_S, in one line."""
    caplog.set_level(logging.INFO, logger="atout")
    servicer, port = arena
    servicer.welcome.keepalive_ms = 10_000
    running = RunnerThread(Quiet, port, backoff=RUNNER_BACKOFF)
    try:
        first = servicer.next_connection()
        began = time.monotonic()
        first.expect("ping", timeout=2.5)  # pinged after about a second of silence
        servicer.next_connection(timeout=SILENCE_LIMIT_S + 3)
        took = time.monotonic() - began
        assert SILENCE_LIMIT_S - 0.5 < took < SILENCE_LIMIT_S + 2, took
        lines = [r.getMessage() for r in caplog.records if "silent" in r.getMessage()]
        assert len(lines) == 1, lines
        assert "game server gs1" in lines[0] and "reconnecting in" in lines[0], lines
        print(f"\nsilent arena (keep-alive 10 s) given up and reconnected after {took:.1f} s")
    finally:
        running.stop()


def test_a_missing_welcome_is_bounded_by_default(arena: tuple[FakeArena, int]) -> None:
    """A game server that accepts the connection but never welcomes (hung after the handshake):
    the default wait is CONNECT_TIMEOUT_S (it was 10 s)."""
    assert CONNECT_TIMEOUT_S <= SILENCE_LIMIT_S
    servicer, port = arena
    servicer.on_hello = lambda conn: None  # never a Welcome
    running = RunnerThread(Quiet, port, backoff=RUNNER_BACKOFF)
    try:
        servicer.next_connection()
        began = time.monotonic()
        servicer.next_connection(timeout=CONNECT_TIMEOUT_S + 3)
        took = time.monotonic() - began
        assert took < CONNECT_TIMEOUT_S + 2, took
    finally:
        running.stop()


@pytest.mark.parametrize("code", ["shutting_down", "moved"])
def test_a_stream_the_arena_ends_itself_is_reconnected_at_once(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture, code: str
) -> None:
    """Error ``shutting_down`` (the game server stops) and ``moved`` (it hands the bot over) are
    nobody's failure: the runner comes back at once, again and again, its backoff (here 3 s and
    more) never used."""
    caplog.set_level(logging.INFO, logger="atout")
    servicer, port = arena
    running = RunnerThread(Quiet, port, backoff=(3.0, 10.0))
    try:
        conn = servicer.next_connection()
        for _ in range(3):
            time.sleep(1.1)  # a stream the arena ends at once after its Welcome is backed off
            conn.send(error=pb.Error(code=code, message="reconnect now"))
            conn.close()
            began = time.monotonic()
            conn = servicer.next_connection(timeout=2)
            assert time.monotonic() - began < 1.0
        assert "reconnecting in" not in caplog.text  # no backoff, no warning
        assert caplog.text.count("the arena closed the stream") == 3
    finally:
        running.stop()


def test_a_stream_the_arena_ends_right_after_its_welcome_is_backed_off(
    arena: tuple[FakeArena, int],
) -> None:
    """An arena that ends every stream as soon as it is made is not asked again in a tight loop."""
    servicer, port = arena

    def welcome_then_moved(conn: Any) -> pb.ArenaMessage:
        conn.send(error=pb.Error(code="moved", message="go"))
        conn.close()
        return pb.ArenaMessage(welcome=servicer.welcome)

    servicer.on_hello = welcome_then_moved
    running = RunnerThread(Quiet, port, backoff=(0.5, 1.0))
    try:
        time.sleep(2.5)
        assert servicer.attempts <= 6, servicer.attempts
    finally:
        running.stop()
