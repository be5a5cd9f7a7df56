"""The relay's Redis contract, driven by raw gRPC bots: keys, resends, deadlines, presence."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
from gateway_helpers import RawBot, engine_request, wait_until

from atout.v1 import atout_pb2 as pb
from atout_arena.core.keys import conn_key, ended_key, matches_key, pending_key, reply_key, req_key
from atout_arena.core.vocabulary import Fault
from atout_workers.decisions import Decision

pytestmark = pytest.mark.timeout(60)

pool = ThreadPoolExecutor(4)


@pytest.fixture
def address(game_server) -> str:
    return game_server.info["address"]


def ask(decisions, bot_id: str, match_id: str, deadline_ms: int, **overrides) -> Future[Decision]:
    return pool.submit(
        decisions.request, bot_id, match_id, deadline_ms=deadline_ms, **{**engine_request(), **overrides}
    )


def connect(address: str, token: str, decisions, bot_id: str) -> RawBot:
    bot = RawBot(address, token)
    bot.connect()
    wait_until(lambda: decisions.is_connected(bot_id), what="presence")
    return bot


def test_a_legal_answer_leaves_no_keys_behind(address, make_bot, decisions, redis_client) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        before = time.time() * 1000
        future = ask(decisions, info.bot_id, "m-keys", 5000)
        request = bot.next().decision
        after = time.time() * 1000
        # pending until decided: the worker holds it (its time, the outage limit) for the edge
        assert redis_client.zscore(pending_key(info.bot_id), request.request_id) > request.deadline_unix_ms
        assert redis_client.exists(req_key(request.request_id))
        assert request.deadline_ms == 5000  # its whole time: the clock starts at the edge
        # the game server set the deadline when it sent it: a send time between the ask and
        # the receipt (one host, one clock; ms rounding aside)
        sent_at = request.deadline_unix_ms - request.deadline_ms
        assert before - 5 <= sent_at <= after + 5, (before, sent_at, after)
        bot.answer(request, request.legal_actions[0])
        assert future.result(5).ok
        assert redis_client.zcard(pending_key(info.bot_id)) == 0
        assert not redis_client.exists(req_key(request.request_id), reply_key(request.request_id))
    finally:
        bot.close()


def test_a_timeout_leaves_no_keys_behind_and_a_late_answer_is_refused(
    address, make_bot, decisions, redis_client
) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        # received first: the game server drops a request whose deadline passed before it read
        # it, and a loaded machine's game server may read its inbox later than a short deadline
        future = ask(decisions, info.bot_id, "m-late", 1_500)
        request = bot.next().decision
        decision = future.result(10)
        assert decision.fault == Fault.TIMEOUT
        assert redis_client.zcard(pending_key(info.bot_id)) == 0
        assert not redis_client.exists(req_key(request.request_id))
        bot.answer(request, request.legal_actions[0])
        rejection = bot.next().rejection
        assert rejection.request_id == request.request_id and rejection.reason.startswith("too late")
        assert not redis_client.exists(reply_key(request.request_id))
    finally:
        bot.close()


def test_an_illegal_answer_is_rejected_with_the_reason_and_can_be_corrected(
    address, make_bot, decisions, redis_client
) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        request_args = engine_request()
        future = ask(decisions, info.bot_id, "m-ill", 5000)
        request = bot.next().decision
        bot.answer(request, "bid 99")
        rejection = bot.next().rejection
        assert (rejection.request_id, rejection.match_id, rejection.action) == (
            request.request_id,
            "m-ill",
            "bid 99",
        )
        assert rejection.reason == request_args["check"]("bid 99")
        # still open, and still resent to a reconnecting bot
        assert redis_client.zscore(pending_key(info.bot_id), request.request_id) is not None
        bot.answer(request, request.legal_actions[-1])
        decision = future.result(5)
        assert decision.action == request.legal_actions[-1]
        assert decision.rejected == (("bid 99", rejection.reason),)
    finally:
        bot.close()


def test_a_reconnecting_bot_gets_running_matches_and_open_requests_again(
    address, make_bot, decisions
) -> None:
    info, token = make_bot()
    first = connect(address, token, decisions, info.bot_id)
    decisions.match_start(info.bot_id, "m-old", "merde", 0, 3, {}, ["a", "b", "c"])
    decisions.match_end(info.bot_id, "m-old", 0, [1, 2, 3], [3, 2, 1])
    decisions.match_start(info.bot_id, "m-re", "merde", 2, 3, {"deals": 3}, ["a", "b", info.name])
    assert first.next().match_start.match_id == "m-old"
    assert first.next().match_end.match_id == "m-old"
    assert first.next().match_start.match_id == "m-re"
    # 4 s: time for both requests to be sent and for the closed stream to be gone before the
    # first one's deadline (released, or at worst expired: the tests' presence TTL is 3 s)
    expired = ask(decisions, info.bot_id, "m-re", 4_000)
    future = ask(decisions, info.bot_id, "m-re", 30_000)
    sent = {first.next().decision.request_id, first.next().decision.request_id}
    first.close()
    wait_until(lambda: not decisions.is_connected(info.bot_id), timeout=10, what="release")
    assert not expired.done(), "the stream was gone only after the first request's deadline"
    assert expired.result(10).fault == Fault.DISCONNECTED  # its stream was gone at its deadline
    second = RawBot(address, token)
    try:
        second.connect()
        start = second.next().match_start
        assert (start.match_id, start.seat, start.seat_names[2]) == ("m-re", 2, info.name)
        again = second.next().decision
        assert again.request_id in sent and again.match_id == "m-re"
        assert again.deadline_ms == 30_000  # its clock starts afresh at the new stream
        second.answer(again, again.legal_actions[0])
        assert future.result(5).action == again.legal_actions[0]
    finally:
        second.close()


def test_a_broken_stream_is_released_at_once(address, make_bot, decisions, redis_client) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    bot.close()  # cancels the call: like a bot process that died
    # The presence outlives the test unless the game server releases it (the tests' TTL, 3 s,
    # is too close to a loaded machine's release to tell the two apart).
    redis_client.pexpire(conn_key(info.bot_id), 60_000)
    wait_until(lambda: not decisions.is_connected(info.bot_id), timeout=10, what="release")
    started = time.perf_counter()
    assert ask(decisions, info.bot_id, "m-gone", 5000).result(5).fault == Fault.DISCONNECTED
    assert time.perf_counter() - started < 1.0


def test_presence_lost_in_redis_is_taken_back_by_the_heartbeat(
    address, make_bot, decisions, redis_client
) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        redis_client.delete(conn_key(info.bot_id))  # e.g. a Redis restarted empty
        assert not decisions.is_connected(info.bot_id)
        wait_until(lambda: decisions.is_connected(info.bot_id), timeout=3, what="the heartbeat")
        message = bot.recv(timeout=5, skip=())  # a Ping, not an Error "replaced"
        assert message is not None and message.WhichOneof("kind") == "ping", message
    finally:
        bot.close()


def test_match_messages_reach_a_connected_bot_in_order(address, make_bot, decisions, redis_client) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        decisions.match_start(info.bot_id, "m-order", "fool", 1, 2, {"deck": 36}, ["x", info.name])
        future = ask(decisions, info.bot_id, "m-order", 5000)
        kinds = []
        start = bot.next()
        kinds.append(start.WhichOneof("kind"))
        request = bot.next().decision
        kinds.append("decision")
        bot.answer(request, request.legal_actions[0])
        assert future.result(5).ok
        decisions.match_end(info.bot_id, "m-order", 1, [0, 1], [2, 1], reason="finished")
        end = bot.next().match_end
        assert kinds == ["match_start", "decision"]
        assert (end.match_id, list(end.scores), list(end.ranking), end.reason) == (
            "m-order",
            [0, 1],
            [2, 1],
            "finished",
        )
        assert start.match_start.options_json == '{"deck": 36}'
        assert not redis_client.hexists(matches_key(info.bot_id), "m-order")
    finally:
        bot.close()


def test_many_requests_of_one_bot_in_flight(address, make_bot, decisions) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        futures = [ask(decisions, info.bot_id, f"m-par-{i}", 5000) for i in range(4)]
        requests = [bot.next().decision for _ in futures]
        for request in reversed(requests):  # answered in another order than asked
            bot.answer(request, request.legal_actions[-1])
        results = [f.result(5) for f in futures]
        assert all(r.ok for r in results)
        assert sorted(r.request_id for r in results) == sorted(r.request_id for r in requests)
    finally:
        bot.close()


def test_stream_ends_when_the_client_half_closes(address, make_bot, decisions) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    bot.outgoing.put(None)  # the bot says goodbye: end of its messages
    assert bot.recv() is None
    assert bot.error is None  # the server ends the call cleanly
    wait_until(lambda: not decisions.is_connected(info.bot_id), timeout=2, what="release")
    bot.close()


def test_unknown_message_kinds_do_not_reach_redis(address, make_bot, decisions, redis_client) -> None:
    info, token = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        bot.send(pb.BotMessage(action=pb.Action(request_id="x" * 5000, action="play Th")))
        assert "unknown request_id" in bot.next().rejection.reason
        assert not redis_client.exists(reply_key("x" * 5000))
        threading.Event().wait(0.05)
        assert decisions.is_connected(info.bot_id)
    finally:
        bot.close()


def test_a_match_end_sent_while_the_bot_was_away_is_sent_when_it_is_back_once(
    address, make_bot, decisions, redis_client
) -> None:
    info, token = make_bot()
    first = connect(address, token, decisions, info.bot_id)
    decisions.match_start(info.bot_id, "m-seen", "merde", 0, 3, {}, [])
    decisions.match_end(info.bot_id, "m-seen", 0, [1, 2, 3], [3, 2, 1])  # delivered: not kept
    decisions.match_start(info.bot_id, "m-away", "merde", 1, 3, {}, [])
    decisions.match_start(info.bot_id, "m-live", "merde", 2, 3, {}, [])
    kinds = [first.next().WhichOneof("kind") for _ in range(4)]
    assert kinds == ["match_start", "match_end", "match_start", "match_start"]
    first.close()
    wait_until(lambda: not decisions.is_connected(info.bot_id), what="release")
    decisions.match_end(info.bot_id, "m-away", 1, [3, 2, 1], [1, 2, 3], reason="finished")
    assert redis_client.hexists(ended_key(info.bot_id), "m-away")
    second = RawBot(address, token)
    try:
        second.connect()
        end = second.next().match_end  # the end it missed first, then what still runs
        assert (end.match_id, end.seat, list(end.scores), end.reason) == ("m-away", 1, [3, 2, 1], "finished")
        assert second.next().match_start.match_id == "m-live"
        assert not redis_client.exists(ended_key(info.bot_id))  # sent: forgotten
    finally:
        second.close()
    wait_until(lambda: not decisions.is_connected(info.bot_id), what="release")
    third = RawBot(address, token)
    try:
        third.connect()
        assert third.next().match_start.match_id == "m-live"  # no MatchEnd a second time
        with pytest.raises(AssertionError, match="no message"):
            third.recv(timeout=0.5)
    finally:
        third.close()


def test_a_stream_is_live_only_while_its_game_server_is(redis_client, decisions) -> None:
    from atout_arena.core.keys import CONNECTED_KEY, SERVERS_KEY, conn_key
    from atout_arena.core.relay import connected_streams, is_connected, now_ms

    bot = f"live-{now_ms()}"
    redis_client.set(conn_key(bot), "gs-live-test/abc123", px=30_000)
    redis_client.zadd(CONNECTED_KEY, {bot: now_ms() + 30_000})
    try:
        assert is_connected(redis_client, bot) and decisions.is_connected(bot)  # server unknown: trusted
        redis_client.zadd(SERVERS_KEY, {"gs-live-test": now_ms() + 3_000})
        assert is_connected(redis_client, bot) and bot in connected_streams(redis_client)
        redis_client.zadd(SERVERS_KEY, {"gs-live-test": now_ms() - 1})  # its server stopped renewing
        assert not is_connected(redis_client, bot) and not decisions.is_connected(bot)
        assert bot not in connected_streams(redis_client)
        decision = decisions.request(bot, "m-live", "fool", 0, {}, ["take"], 200, lambda a: None)
        assert decision.fault == "disconnected"  # pushed to a dead server's stream: not asked
    finally:
        redis_client.delete(conn_key(bot))
        redis_client.zrem(CONNECTED_KEY, bot)
        redis_client.zrem(SERVERS_KEY, "gs-live-test")


def test_the_seats_of_a_match_are_checked_for_a_live_stream_at_once(address, make_bot, decisions,
                                                                     redis_client) -> None:
    from atout_arena.core.relay import are_connected, is_connected

    info, token = make_bot()
    absent, _ = make_bot()
    bot = connect(address, token, decisions, info.bot_id)
    try:
        seats = [(absent.bot_id, ""), (info.bot_id, ""), (info.bot_id, "v9"), (absent.bot_id, "")]
        assert are_connected(redis_client, seats) == [False, True, False, False]  # in the seats' order
        assert are_connected(redis_client, seats) == [is_connected(redis_client, b, v) for b, v in seats]
        assert are_connected(redis_client, []) == []
    finally:
        bot.close()
    wait_until(lambda: are_connected(redis_client, seats[1:2]) == [False], timeout=10, what="release")


def test_a_heartbeat_that_comes_after_its_streams_release_brings_nothing_back(redis_url: str, redis_client) -> None:  # noqa: E501
    """A HEARTBEAT of a closed stream still in flight (sent, then cancelled) may reach Redis
    after its RELEASE: it must not bring the stream's presence back for a whole TTL."""
    import asyncio

    from atout_arena.core.relay import GatewayRelay

    async def scenario() -> None:
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(redis_url)
        relay = GatewayRelay(client, presence_ttl_ms=3000)
        address, conn_id = "hb-release-7", "gs-test/abc123"
        try:
            assert await relay.heartbeat(address, conn_id)  # live
            assert redis_client.get(conn_key(address)) == conn_id.encode()
            await relay.release(address, conn_id)
            assert redis_client.get(conn_key(address)) is None
            assert not await relay.heartbeat(address, conn_id)  # late: refused, nothing set
            assert redis_client.get(conn_key(address)) is None
            assert await relay.heartbeat(address, "gs-test/another")  # a new stream is not affected
        finally:
            redis_client.delete(conn_key(address))
            await client.aclose()

    asyncio.run(scenario())


def test_closing_the_blocking_client_ends_the_calls_still_waiting(redis_url: str) -> None:
    """DecisionClient runs its calls on an event loop of its own: closing it cancels a call still
    waiting on another thread (at once, not at its timeout), and the client's connections go."""
    from concurrent.futures import CancelledError

    from atout_workers.decisions import DecisionClient

    client = DecisionClient(redis_url)
    waiting = pool.submit(client.wait_connected, "nobody-ever", 60.0)

    def in_flight() -> bool:  # the call is on the loop, polling for a stream that never comes
        loop = client._loop
        if loop is None:
            return False

        async def others() -> int:
            return len(asyncio.all_tasks()) - 1

        return asyncio.run_coroutine_threadsafe(others(), loop).result(5) > 0

    wait_until(in_flight, 10, "the call on the client's event loop")
    started = time.monotonic()
    client.close()
    with pytest.raises(CancelledError):
        waiting.result(10)
    assert time.monotonic() - started < 5
