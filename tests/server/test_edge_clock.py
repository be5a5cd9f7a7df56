"""The decision clock runs at the edge (issue 30, finding 3): what the arena itself delays
before a request reaches the bot's stream is never charged, on real processes.

A game server stalled for 1.5 s (SIGSTOP, then SIGCONT: shorter than its 2 s liveness, so it
is never taken for dead) holds the requests a worker pushed meanwhile; when it runs again it
sends them with their whole time. Before the clock moved to the edge, the worker's deadline
(1 s from its push) passed during the stall: every one of them was a timeout of a bot that
answers in a millisecond.
"""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from e2e_helpers import wait_until
from gateway_helpers import engine_request

from atout_arena.core.vocabulary import Fault
from atout_workers.decisions import DecisionClient

pytestmark = pytest.mark.timeout(120)


def test_a_stalled_game_server_delays_requests_but_charges_nothing(
    make_bot, spawn_bot, start_game_server, redis_url
) -> None:
    server = start_game_server()
    info, token = make_bot()
    spawn_bot(server.info["address"], token, "FirstLegal")
    client = DecisionClient(redis_url)
    try:
        wait_until(lambda: client.is_connected(info.bot_id), 30, "presence")
        assert client.request(info.bot_id, "m-warm", deadline_ms=1000, **engine_request()).ok
        os.kill(server.popen.pid, signal.SIGSTOP)
        try:
            with ThreadPoolExecutor(8) as pool:
                futures = [pool.submit(client.request, info.bot_id, f"m-stall-{i}", deadline_ms=1000,
                                       **engine_request()) for i in range(8)]
                time.sleep(1.5)
                os.kill(server.popen.pid, signal.SIGCONT)
                decisions = [f.result(30) for f in futures]
        finally:
            os.kill(server.popen.pid, signal.SIGCONT)
        assert [d.fault for d in decisions] == [None] * 8, decisions
        # the time charged is the edge's (from the request written to the stream), not the stall
        assert all(d.think_ms < 900 for d in decisions), [d.think_ms for d in decisions]
    finally:
        client.close()


def test_a_bot_that_does_not_answer_is_timed_out_by_its_edge(
    make_bot, spawn_bot, start_game_server, redis_url
) -> None:
    """The edge's verdict: no answer within the time (and the lag compensation) is a timeout,
    told by the game server, with the time it gave."""
    server = start_game_server()
    info, token = make_bot()
    spawn_bot(server.info["address"], token, "Slow", ATOUT_TEST_SLEEP_S="3")
    client = DecisionClient(redis_url)
    try:
        wait_until(lambda: client.is_connected(info.bot_id), 30, "presence")
        started = time.monotonic()
        decision = client.request(info.bot_id, "m-slow", deadline_ms=500, **engine_request())
        elapsed = time.monotonic() - started
        assert decision.fault == Fault.TIMEOUT
        assert 500 <= decision.think_ms < 1600, decision.think_ms  # the edge's time: 500 ms + lag
        assert elapsed < 4, elapsed
    finally:
        client.close()
