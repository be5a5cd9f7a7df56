"""A worker process plays its matches as coroutines on one event loop.

- hundreds of matches in flight in one worker process, with bots that think, and no fault;
- steps nobody watches build no event; a spectator who comes gets the current view at once;
- a warm shutdown (SIGTERM) lets the matches in flight finish; nothing is lost;
- the loop's own pieces: room (reserve / release / drain) and the pipelined Redis connection
  that survives a Redis restart.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import signal
import threading
import time
from typing import Any

import pytest
import redis
from e2e_helpers import wait_until
from sqlalchemy import select

from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.keys import last_event_key, public_channel
from atout_arena.core.metrics import DECISION_SECONDS, metrics_registry
from atout_arena.core.models import Match
from atout_arena.core.wire import Wire
from atout_workers.loop import MatchLoop

pytestmark = pytest.mark.timeout(180)


def matches_of(sessions, tid: int) -> list[Match]:
    with sessions() as session:
        return list(session.scalars(select(Match).where(Match.tournament_id == tid)).all())


def played(match: Match) -> list[Any]:
    """The actions of a match that was played."""
    assert match.actions is not None, (match.id, match.status)
    return match.actions


def peak_in_flight(matches: list[Match]) -> int:
    events = sorted([(m.started_at, 1) for m in matches] + [(m.finished_at, -1) for m in matches],
                    key=lambda e: (e[0], e[1]))
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


@pytest.mark.slow
def test_one_worker_process_keeps_hundreds_of_matches_in_flight_without_a_fault(
    arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    # 4 bots thinking 0.4 s a decision, 300 matches of 20 decisions: played one after the other
    # that is 40 minutes; on one event loop, all at once (the claims take a few seconds at most,
    # a match lasts 8 s or more).
    bots = arena_bots(["Sleepy"] * 4, "--max-workers", "200", prefix="loop", ATOUT_TEST_THINK_S="0.4")
    start_worker("loop", concurrency=400)
    started = time.monotonic()
    tid = run_tournament(bots, game="merde", players=4, options={"deals": 2}, games_per_pairing=300,
                         move_ms=10000)
    wait_finished(tid, timeout=160)
    elapsed = time.monotonic() - started
    matches = matches_of(sessions, tid)
    steps = [a for m in matches for a in played(m)]
    faults = sum(len(a[4]) for a in steps)
    peak = peak_in_flight(matches)
    print(f"\n300 matches, bots thinking 0.4 s: {elapsed:.1f} s, peak {peak} in flight in one process, "
          f"{faults} faults, slowest decision {max(a[3] for a in steps):.0f} ms")
    assert all(m.status == "finished" for m in matches)
    assert faults == 0
    runners = {m.lease_id for m in matches}
    assert None not in runners
    assert len({r.rsplit(":", 1)[0] for r in runners if r is not None}) == 1  # one worker process played them
    assert peak >= 200, f"only {peak} matches in flight at once"


def test_an_unwatched_match_builds_no_step_event_and_a_spectator_gets_the_current_view(
    arena_bots, start_worker, run_tournament, sessions, redis_client
) -> None:
    bots = arena_bots(["Sleepy"] * 3, prefix="quiet", ATOUT_TEST_THINK_S="0.2")
    start_worker("quiet")
    tid = run_tournament(bots, game="regicide", players=3, move_ms=5000)
    wait_until(lambda: any(m.status == "running" for m in matches_of(sessions, tid)), 30, "a running match")
    match = next(m for m in matches_of(sessions, tid) if m.status == "running")
    # the start event goes out through the worker's event sink just after the claim that made
    # the match running: on a slow machine the test can look in between
    wait_until(lambda: redis_client.get(last_event_key(match.id)) is not None, 10, "the match's first event")
    # nobody watching: the latest event is written about once a second, not at every step
    plies = set()
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        last = json.loads(redis_client.get(last_event_key(match.id)))
        if last["type"] == "end":
            break
        plies.add(last.get("ply", -1))
        time.sleep(0.02)
    assert len(plies) <= 5, f"the latest event changed {len(plies)} times in 3 s (a step every 0.2 s)"
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(public_channel(match.id))
    try:
        came = time.monotonic()
        message = pubsub.get_message(timeout=3.0)
        while message is None and time.monotonic() - came < 3.0:
            message = pubsub.get_message(timeout=0.5)
        assert message is not None, "no event within 3 s of subscribing"
        waited = time.monotonic() - came
        event = json.loads(message["data"])
        assert event["type"] in ("step", "end") and event.get("ply", 0) >= 1
        print(f"\nthe spectator got the current view (ply {event.get('ply')}) {waited * 1000:.0f} ms "
              "after subscribing")
    finally:
        pubsub.close()


@pytest.mark.slow
def test_a_warm_shutdown_lets_the_matches_in_flight_finish(
    arena_bots, start_worker, run_tournament, wait_finished, sessions, redis_client
) -> None:
    bots = arena_bots(["Sleepy"] * 3, prefix="warm", ATOUT_TEST_THINK_S="0.2")
    worker = start_worker("warm")
    # merde, 3 players, three deals: about 5 s a match, whatever the machine (the bots' think
    # time), all four started at once. What comes between a SIGTERM and Celery's worker_shutdown
    # (where the wait is, and its log line) grows with a slower machine: about 0.9 s here, so a
    # 1.3 s match (one deal) could be over before the wait began, and nothing would be logged.
    tid = run_tournament(bots, game="merde", players=3, options={"deals": 3}, games_per_pairing=4,
                         move_ms=5000)
    wait_until(lambda: sum(m.status == "running" for m in matches_of(sessions, tid)) >= 2, 30, "matches")
    running = {m.id for m in matches_of(sessions, tid) if m.status == "running"}
    worker.stop(signal.SIGTERM, timeout=60)  # waits for the process to end
    done = {m.id: m for m in matches_of(sessions, tid)}
    assert all(done[mid].status == "finished" for mid in running), {mid: done[mid].status for mid in running}
    assert worker.wait_for_log(r"waiting for \d+ matches in flight to finish", timeout=1)
    # every decision of the finished matches is in the metrics once the process has ended: the
    # decisions added up by its event sink are written before it exits
    registry = metrics_registry(redis_client)
    name = f"{DECISION_SECONDS.name}_count"
    counted = sum(registry.get_sample_value(name, {"game": "merde", "bot": b.name}) or 0 for b in bots)
    assert counted == sum(len(played(m)) for m in done.values() if m.status == "finished")
    start_worker("warm-2")  # the rest of the tournament, by another worker
    wait_finished(tid)
    assert all(m.status == "finished" for m in matches_of(sessions, tid))


def test_the_loop_has_room_for_its_capacity_and_drains() -> None:
    loop = MatchLoop(capacity=2)
    try:
        assert loop.reserve(0.1) and loop.reserve(0.1)
        assert not loop.reserve(0.05)  # full
        gate = threading.Event()

        async def match() -> str:
            while not gate.is_set():
                await asyncio.sleep(0.01)
            return "finished"

        futures = [loop.start(match()), loop.start(match())]
        assert loop.in_flight == 2 and not loop.drain(0.05)
        gate.set()
        assert [f.result(5) for f in futures] == ["finished", "finished"]
        assert loop.drain(5) and loop.in_flight == 0
        assert loop.reserve(0.1)  # room again
        loop.release()
    finally:
        loop.stop()


def test_the_pipelined_connection_fails_in_flight_calls_and_reconnects_after_a_redis_restart(tmp_path) -> None:  # noqa: E501
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        async def scenario() -> None:
            wire = Wire(server.url, timeout_s=3)
            replies = await asyncio.gather(*(wire.call("INCR", "n") for _ in range(100)))
            assert sorted(replies) == list(range(1, 101))  # one write, every reply in order
            assert await wire.call("GET", "nope") is None
            with pytest.raises(redis.ResponseError):
                await wire.call("INCR", "no", "such", "arity")
            server.stop()
            with pytest.raises(redis.ConnectionError):
                await wire.call("PING")
            server.start()
            for _ in range(50):  # the next call connects again
                try:
                    assert await wire.call("PING") == b"PONG"
                    break
                except redis.ConnectionError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError("no reconnection after the restart")
            await wire.close()

        asyncio.run(scenario())
    finally:
        server.stop()


def test_eval_soon_sends_the_script_by_hash_and_again_whole_when_redis_forgot_it(tmp_path) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    script = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
    try:
        async def scenario() -> None:
            wire = Wire(server.url, timeout_s=3)
            assert await wire.eval_soon(script, 1, "k", 5) == 5  # NOSCRIPT, then EVAL
            assert await wire.eval_soon(script, 1, "k", 2) == 7  # by its hash
            assert await wire.call("SCRIPT", "FLUSH") == b"OK"  # Redis forgets it (a restart)
            replies = await asyncio.gather(*(wire.eval_soon(script, 1, "k", 1) for _ in range(20)))
            assert sorted(replies) == list(range(8, 28))
            with pytest.raises(redis.ResponseError):
                await wire.eval_soon("return redis.call('NOSUCHCOMMAND')", 0)
            await wire.close()

        asyncio.run(scenario())
    finally:
        server.stop()


def test_call_then_runs_in_order_and_is_failed_with_the_connection(tmp_path) -> None:
    """call_then's callbacks see each reply (or the error) in order; a callback that raises
    costs nothing to the others; a connection that breaks fails the callbacks waiting too."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        async def scenario() -> None:
            wire = Wire(server.url, timeout_s=3)
            seen: list[object] = []

            def boom(reply: object, exc: BaseException | None) -> None:
                raise RuntimeError("a bug in a callback")

            assert wire.idle
            wire.call_then(lambda r, e: seen.append(r), "SET", "k", "v")
            wire.call_then(boom, "GET", "k")
            wire.call_then(lambda r, e: seen.append(type(e).__name__), "INCR", "k")  # not a number
            last = wire.call("GET", "k")
            assert not wire.idle
            assert await last == b"v"
            assert seen == [b"OK", "ResponseError"] and wire.idle
            server.stop()
            failed: list[object] = []
            wire.call_then(lambda r, e: failed.append(type(e).__name__), "BLPOP", "nothing", 5)
            await wait_until_async(lambda: failed == ["ConnectionError"])
            await wire.close()

        asyncio.run(scenario())
    finally:
        server.stop()


def test_a_command_that_cannot_be_packed_queues_nothing_and_silence_is_counted_per_command(tmp_path) -> None:
    """An argument hiredis cannot pack raises at once and leaves no waiter behind (every later
    reply would go to the wrong caller); the watchdog counts a reply's silence from when the
    command was sent, not from the connection's last reply (an idle connection's next command
    is not failed as timed out)."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        async def scenario() -> None:
            wire = Wire(server.url, timeout_s=2)
            assert await wire.call("SET", "a", "1") == b"OK"
            with pytest.raises(TypeError):
                wire.call("SET", "b", None)
            assert wire.idle
            assert await wire.call("GET", "a") == b"1"
            await asyncio.sleep(4)  # silent for twice the timeout
            assert await wire.call("BLPOP", "nothing", 1.5) is None  # not a TimeoutError
            await wire.close()

        asyncio.run(scenario())
    finally:
        server.stop()


async def wait_until_async(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_the_batched_scripts_do_what_one_call_each_does(redis_url) -> None:
    """PUSH_DECISIONS is PUSH_DECISION of each push (each stored for its edge; a bot without a
    live stream gets no inbox entry, and its state comes back: A, away), ANSWER takes any number of answers,
    and a worker's requests of one turn go in one PUSH_DECISIONS call."""
    from atout_arena.core.keys import conn_key, inbox_key, pending_key, reply_key, req_key
    from atout_arena.core.relay import (
        Answer,
        GatewayRelay,
        make_async_redis,
        now_ms,
        push_decision_command,
        push_decisions_command,
    )
    from atout_workers.decisions import AsyncDecisionClient

    live, gone = "batch-live-1", "batch-gone-1"
    plain = redis.Redis.from_url(redis_url)
    plain.delete(*(k(b) for b in (live, gone) for k in (conn_key, inbox_key, pending_key)))
    plain.set(conn_key(live), "nowhere/abc", px=60_000)  # a stream on a server not in the list

    async def scenario() -> None:
        wire = Wire(redis_url)
        deadline = now_ms() + 5000
        pushes = [push_decision_command(bot, f"batch-r{i}", deadline, f"m{i}".encode(), 10_000)
                  for i, bot in enumerate([live, gone, live])]
        assert await wire.eval_soon(*push_decisions_command(pushes)) == [b"nowhere/abc", b"A", b"nowhere/abc"]
        entries: Any = plain.xrange(inbox_key(live))  # (redis-py types its replies loosely)
        assert [e[1][b"m"] for e in entries] == [b"m0", b"m2"]
        assert plain.zrange(pending_key(live), 0, -1) == [b"batch-r0", b"batch-r2"]
        assert plain.get(req_key("batch-r2")) == b"m2"
        assert plain.zrange(pending_key(gone), 0, -1) == [b"batch-r1"]  # sent if it connects
        assert not plain.exists(reply_key("batch-r1")) and not plain.exists(inbox_key(gone))

        relay = GatewayRelay(make_async_redis(redis_url), presence_ttl_ms=3000)
        answers = [Answer(live, "batch-r0", "a0", 10_000), Answer(live, "batch-r2", "a2", 10_000, 1.5)]
        assert await relay.post_answers(answers) == 2
        assert plain.lrange(reply_key("batch-r0"), 0, -1) == [b"Aa0"]
        assert plain.lrange(reply_key("batch-r2"), 0, -1) == [b"T1.500 a2"]
        assert plain.zcard(pending_key(live)) == 0 and plain.get(req_key("batch-r0")) is None
        await relay.close()

        # a worker's requests made in one turn: one call for all (here: all to the bot that
        # is gone, so each comes back disconnected at once)
        client = AsyncDecisionClient(redis_url)
        calls: list[int] = []
        send = client.wire.call_then

        def counting(then, *args):
            if args[0] == "EVALSHA":
                calls.append(args[2])  # the number of keys: 6 per push
            return send(then, *args)

        client.wire.call_then = counting  # type: ignore[method-assign]
        decisions = await asyncio.gather(*(
            client.request(gone, f"batch-m{i}", "merde", 0, {}, ["a"], deadline_ms=2000, check=lambda a: None)
            for i in range(10)))
        assert [d.fault for d in decisions] == ["disconnected"] * 10
        pushes_sent = [n for n in calls if n % 6 == 0]
        assert pushes_sent == [6, 54]  # the first at once (nothing in flight), the 9 others together
        await client.close()
        await wire.close()

    try:
        asyncio.run(scenario())
    finally:
        plain.close()


@pytest.mark.slow
def test_a_warm_shutdown_gives_back_the_matches_that_do_not_finish_in_time(
    arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    # matches of about 20 s (36 decisions, 0.5 s each); the worker may take 1 s to stop
    bots = arena_bots(["Sleepy"] * 4, prefix="giveback", ATOUT_TEST_THINK_S="0.5")
    worker = start_worker("giveback", ATOUT_WORKER_SHUTDOWN_S="1")
    tid = run_tournament(bots, game="merde", players=4, options={"deals": 3}, games_per_pairing=3,
                         move_ms=5000)
    wait_until(lambda: sum(m.status == "running" for m in matches_of(sessions, tid)) == 3, 30, "matches")
    time.sleep(1.0)  # a few steps played
    stopped_at = time.monotonic()
    worker.stop(signal.SIGTERM, timeout=60)
    took = time.monotonic() - stopped_at
    # (3 or more: the keeper may have handed this worker a match of an earlier test too)
    assert worker.wait_for_log(r"\d+ matches still in flight: they stop and go back to the queue", timeout=1)
    assert took < 30, f"the worker took {took:.1f} s to stop"
    back = matches_of(sessions, tid)
    assert all(m.status == "queued" and m.actions is None for m in back), [(m.id, m.status) for m in back]
    start_worker("giveback-2")  # the matches were sent again: another worker plays them from their seed
    wait_finished(tid, timeout=120)
    done = matches_of(sessions, tid)
    assert all(m.status == "finished" for m in done)
    assert sum(len(a[4]) for m in done for a in played(m)) == 0  # no fault charged for the give-back


def test_the_worker_packs_commands_as_redis_py_does() -> None:
    from redis.connection import Connection

    from atout_arena.core.relay import push_decision_command
    from atout_arena.core.wire import pack

    conn = Connection()
    push = push_decision_command("7", "m1.a", 1_700_000_000_000, b"\x00\xff" * 300, 6000)
    commands = [("BLPOP", "k", 0.001), ("LPOP", "k", 1024), ("SET", "k", "é", "EX", 60),
                ("EVALSHA", "a" * 40, *push[1:])]
    for args in commands:
        assert pack(args) == b"".join(conn.pack_command(*args)), args
    with pytest.raises(TypeError):
        pack(("SET", "k", None))


def test_the_deadlines_of_waits_in_flight_wake_each_at_its_time_and_only_the_waiting() -> None:
    from atout_workers.decisions import _Deadlines

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        deadlines = _Deadlines()
        start = loop.time()
        after = {"c": 0.15, "a": 0.05, "answered": 0.02, "b": 0.10, "late": 0.3}
        waiting = ["a", "b", "c", "late"]
        # No fixed sleeps: a test process stalled past a deadline sees several waiters woken at
        # once (rightly). What is checked: the order, that none is woken early, and that after
        # each firing the one timer is set for the earliest deadline left (so none is woken
        # late, but for the loop's own lag).
        woken: list[tuple[str, float]] = []
        timers: list[tuple[float, float]] = []  # after each firing: (the timer's time, the earliest left)
        fire = deadlines._fire

        def fire_and_look(loop: asyncio.AbstractEventLoop) -> None:
            fire(loop)
            timers.append((deadlines._timer_at, deadlines._heap[0][0] if deadlines._heap else math.inf))

        deadlines._fire = fire_and_look  # type: ignore[method-assign]
        def woke(name: str, waiter: asyncio.Future[Any]) -> None:
            if waiter.result() is None:
                woken.append((name, loop.time()))

        waiters = {}
        for name, when in after.items():
            waiter: asyncio.Future[Any] = loop.create_future()
            waiter.add_done_callback(functools.partial(woke, name))
            deadlines.add(loop, start + when, waiter)
            waiters[name] = waiter
        assert deadlines._timer_at == start + after["answered"]  # one timer, for the earliest
        waiters["answered"].set_result("a reply")  # answered in time: its deadline wakes nothing
        await asyncio.wait_for(asyncio.gather(*(waiters[n] for n in waiting)), 5)
        assert [n for n, _ in woken] == waiting  # each in its turn; the answered one never
        for name, at in woken:
            assert at >= start + after[name] - 0.001, (name, at - start)  # not before its time
        assert timers and all(timer == earliest for timer, earliest in timers), timers
        assert deadlines._timer is None and not deadlines._heap  # nothing left, no timer

    asyncio.run(scenario())


def test_the_deadlines_of_answered_waits_do_not_pile_up() -> None:
    """Deadlines include the time bank (minutes): the entries of answered requests are dropped
    once they are half the heap, not kept until their time."""
    from atout_workers.decisions import _Deadlines

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        deadlines = _Deadlines()
        for _ in range(5000):  # one request in flight at a time, each answered at once
            waiter = loop.create_future()
            deadlines.add(loop, loop.time() + 300.0, waiter)
            waiter.set_result(None)
            deadlines.answered()
        assert len(deadlines) < 2 * _Deadlines.COMPACT_FROM
        live = loop.create_future()
        deadlines.add(loop, loop.time() + 0.05, live)
        await asyncio.sleep(0.1)
        assert live.done()  # the one still waiting is woken at its time

    asyncio.run(scenario())
