"""The batched stream against the real game server, Redis, and bare gRPC clients:
DecisionBatch to a stream whose Hello listed "batch", single messages to one that did not,
ActionBatch from any stream, each of its Actions handled as if it came alone."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from gateway_helpers import RawBot, engine_request, wait_until

from atout.v1 import atout_pb2 as pb
from atout_arena.core.keys import pending_key, reply_key
from atout_arena.core.relay import MAX_REJECTIONS, notify_command, parse_reply, push_decision_command
from atout_arena.gateway.session import (
    MAX_ACTION_BATCH,
    MAX_DECISION_BATCH_BYTES,
    MESSAGE_BURST,
    MESSAGE_RATE,
    TokenBucket,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def address(game_server) -> str:
    return game_server.info["address"]


def connect(address: str, token: str, features: tuple[str, ...] = ()) -> tuple[RawBot, pb.Welcome]:
    bot = RawBot(address, token)
    bot.send(pb.BotMessage(hello=pb.Hello(protocol_version=1, client="raw-batch", features=features)))
    message = bot.recv()
    assert message is not None and message.WhichOneof("kind") == "welcome", (message, bot.error)
    return bot, message.welcome


def start_message(match_id: str) -> bytes:
    start = pb.MatchStart(match_id=match_id, game="merde", players=3)
    return pb.ArenaMessage(match_start=start).SerializeToString()


def request_message(request_id: str, match_id: str, deadline_ms: int = 20_000, size: int = 0) -> bytes:
    """A request as a worker writes it: its time (``deadline_ms``); the edge sets its deadline."""
    request = pb.DecisionRequest(
        request_id=request_id, match_id=match_id, game="merde", observation_json=f'"{"x" * size}"',
        legal_actions=["pass", f"say {request_id}"], deadline_ms=deadline_ms,
    )  # fmt: skip
    return pb.ArenaMessage(decision=request).SerializeToString()


def push_at_once(
    redis_client: Any, bot_id: str, plan: list[tuple[str, str]], deadline_ms: int = 20_000, size: int = 0
) -> None:
    """Write ``plan`` ((match id, request id or "" for its MatchStart), in order) to the bot's
    inbox in one transaction, so that the game server reads it all in one XREAD."""
    deadline = int(time.time() * 1000) + deadline_ms
    pipe = redis_client.pipeline(transaction=True)
    for match_id, request_id in plan:
        if request_id:
            message = request_message(request_id, match_id, deadline_ms, size)
            pipe.eval(*push_decision_command(bot_id, request_id, deadline, message, deadline_ms + 5_000))
        else:
            pipe.eval(*notify_command(bot_id, "start", match_id, start_message(match_id)))
    assert all(pipe.execute())


def replied(redis_client: Any, request_id: str) -> list[str]:
    """The actions the game server handed over for ``request_id`` (timed at the edge)."""
    return [parse_reply(entry).action for entry in redis_client.lrange(reply_key(request_id), 0, -1)]


def received(bot: RawBot, count: int) -> list[pb.ArenaMessage]:
    """The next messages until ``count`` decision requests came (batched or not)."""
    out: list[pb.ArenaMessage] = []
    requests = 0
    while requests < count:
        message = bot.recv()
        assert message is not None, bot.error
        out.append(message)
        kind = message.WhichOneof("kind")
        requests += len(message.decisions.requests) if kind == "decisions" else kind == "decision"
        if kind == "bundle":
            requests += sum(m.WhichOneof("kind") == "decision" for m in message.bundle.messages)
    return out


def shape(messages: list[pb.ArenaMessage]) -> list[Any]:
    """Each message as its kind, a DecisionBatch as the list of its request ids."""
    out: list[Any] = []
    for m in messages:
        kind = m.WhichOneof("kind")
        if kind == "decisions":
            out.append([r.request_id for r in m.decisions.requests])
        elif kind == "decision":
            out.append(m.decision.request_id)
        elif kind == "bundle":
            out.append(("bundle", shape(list(m.bundle.messages))))
        else:
            out.append(f"{kind} {getattr(m, kind).match_id}")
    return out


def actions(*answers: tuple[str, str, str]) -> pb.BotMessage:
    return pb.BotMessage(actions=pb.ActionBatch(actions=[
        pb.Action(request_id=rid, match_id=match_id, action=action) for rid, match_id, action in answers
    ]))


PLAN = [("bm1", ""), ("bm1", "q1"), ("bm1", "q2"), ("bm2", ""), ("bm2", "q3"), ("bm1", "q4"), ("bm2", "q5")]


def test_a_batch_stream_gets_the_decisions_of_one_read_as_one_batch_in_order(
    address: str, make_bot, decisions, redis_client
) -> None:
    """Welcome echoes the known features only; the decisions between two other messages go as
    one DecisionBatch, each with its own time left; one ActionBatch answers them all."""
    info, token = make_bot("batcher")
    bot, welcome = connect(address, token, ("batch", "telepathy"))
    try:
        assert list(welcome.features) == ["batch"]
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        plan = [(m, f"{info.bot_id}-{r}" if r else "") for m, r in PLAN]
        push_at_once(redis_client, info.bot_id, plan)
        messages = received(bot, 5)
        rid = {r: f"{info.bot_id}-{r}" for r in ("q1", "q2", "q3", "q4", "q5")}
        assert shape(messages) == [
            "match_start bm1", [rid["q1"], rid["q2"]], "match_start bm2", [rid["q3"], rid["q4"], rid["q5"]],
        ]
        for request in messages[3].decisions.requests:
            assert request.deadline_ms == 20_000  # its whole time: the clock starts as it is sent
            assert 0 <= request.deadline_unix_ms - time.time() * 1000 <= 20_000
        batch = [(r.request_id, r.match_id, r.legal_actions[1]) for m in messages
                 if m.WhichOneof("kind") == "decisions" for r in m.decisions.requests]
        bot.send(actions(*batch))
        for request_id, _, action in batch:
            wait_until(lambda r=request_id: redis_client.llen(reply_key(r)) == 1, what=f"answer {request_id}")
            assert replied(redis_client, request_id) == [action]
            assert redis_client.zscore(pending_key(info.bot_id), request_id) is None
    finally:
        bot.close()


def test_a_stream_without_batch_gets_single_messages_only(
    address: str, make_bot, decisions, redis_client
) -> None:
    """A bot that does not list "batch" (the Node bot, grpcurl) sees exactly the old stream; it
    may still answer with an ActionBatch."""
    info, token = make_bot("single")
    bot, welcome = connect(address, token)
    try:
        assert list(welcome.features) == []
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        plan = [(m, f"{info.bot_id}-{r}" if r else "") for m, r in PLAN]
        push_at_once(redis_client, info.bot_id, plan)
        messages = received(bot, 5)
        assert shape(messages) == [
            "match_start bm1", plan[1][1], plan[2][1], "match_start bm2", plan[4][1], plan[5][1], plan[6][1],
        ]
        bot.send(actions(*[(m.decision.request_id, m.decision.match_id, "pass")
                           for m in messages if m.WhichOneof("kind") == "decision"]))
        for _, request_id in plan[1:]:
            if request_id:
                wait_until(lambda r=request_id: replied(redis_client, r) == ["pass"],
                           what=f"answer {request_id}")
    finally:
        bot.close()


def test_a_bundle_stream_gets_everything_of_one_read_in_one_bundle_in_order(
    address: str, make_bot, decisions, redis_client
) -> None:
    """A stream that lists "bundle" gets the MatchStarts, requests and MatchEnds of one read in
    one ArenaBundle, in their order, each request with its own time left; a match's MatchEnd in a
    bundle closes that match's requests (an answer after it is refused), not the others'."""
    info, token = make_bot("bundler")
    bot, welcome = connect(address, token, ("bundle", "batch"))
    try:
        assert list(welcome.features) == ["batch", "bundle"]
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        plan = [(m, f"{info.bot_id}-{r}" if r else "") for m, r in PLAN]
        push_at_once(redis_client, info.bot_id, plan)
        messages = received(bot, 5)
        rid = {r: f"{info.bot_id}-{r}" for r in ("q1", "q2", "q3", "q4", "q5", "q6")}
        assert shape(messages) == [("bundle", [
            "match_start bm1", rid["q1"], rid["q2"], "match_start bm2", rid["q3"], rid["q4"], rid["q5"],
        ])]
        entries = list(messages[0].bundle.messages)
        for entry in entries:
            if entry.WhichOneof("kind") == "decision":
                assert entry.decision.deadline_ms == 20_000
        # bm1 ends, and a request of bm2 comes, in one read
        end = pb.ArenaMessage(match_end=pb.MatchEnd(match_id="bm1", reason="finished")).SerializeToString()
        deadline = int(time.time() * 1000) + 20_000
        pipe = redis_client.pipeline(transaction=True)
        pipe.eval(*notify_command(info.bot_id, "end", "bm1", end))
        message = request_message(rid["q6"], "bm2")
        pipe.eval(*push_decision_command(info.bot_id, rid["q6"], deadline, message, 25_000))
        pipe.execute()
        assert shape(received(bot, 1)) == [("bundle", ["match_end bm1", rid["q6"]])]
        bot.send(actions((rid["q1"], "bm1", "pass"), (rid["q3"], "bm2", "pass")))
        rejection = bot.next()
        assert rejection.WhichOneof("kind") == "rejection" and rejection.rejection.request_id == rid["q1"]
        assert rejection.rejection.code == "too_late"  # its match ended
        assert rejection.rejection.reason == "too late: match bm1 is over"
        wait_until(lambda: replied(redis_client, rid["q3"]) == ["pass"], what="q3 answered")
        assert redis_client.llen(reply_key(rid["q1"])) == 0
    finally:
        bot.close()


def test_a_bundle_stays_small_enough_for_any_grpc_client(
    address: str, make_bot, decisions, redis_client
) -> None:
    info, token = make_bot("big-bundle")
    bot, _ = connect(address, token, ("bundle",))
    try:
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        size = MAX_DECISION_BATCH_BYTES // 3 - 1000
        plan = [("big2", "")] + [("big2", f"{info.bot_id}-h{i}") for i in range(7)]
        push_at_once(redis_client, info.bot_id, plan, size=size)
        rids = [r for _, r in plan[1:]]
        assert shape(received(bot, 7)) == [
            ("bundle", ["match_start big2", *rids[0:3]]), ("bundle", rids[3:6]), rids[6],
        ]
    finally:
        bot.close()


def test_a_decision_batch_stays_small_enough_for_any_grpc_client(
    address: str, make_bot, decisions, redis_client
) -> None:
    """Big observations: the requests of one read are split into DecisionBatches of about
    MAX_DECISION_BATCH_BYTES, so a client with gRPC's default 4 MiB receive limit reads them."""
    info, token = make_bot("big-obs")
    bot, _ = connect(address, token, ("batch",))
    try:
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        size = MAX_DECISION_BATCH_BYTES // 3 - 1000  # with its other fields: three fit in a batch, not four
        plan = [("big1", f"{info.bot_id}-g{i}") for i in range(10)]
        push_at_once(redis_client, info.bot_id, plan, size=size)
        batches = shape(received(bot, 10))
        assert batches == [[r for _, r in plan[i:i + 3]] for i in (0, 3, 6)] + [plan[9][1]]
    finally:
        bot.close()


def test_the_requests_resent_on_takeover_come_as_one_batch(
    address: str, make_bot, decisions, redis_client
) -> None:
    info, token = make_bot("taker")
    first, _ = connect(address, token, ("batch",))
    second: RawBot | None = None
    try:
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        plan = [("tm1", ""), *[("tm1", f"{info.bot_id}-t{i}") for i in range(3)]]
        push_at_once(redis_client, info.bot_id, plan)
        assert len(received(first, 3)) == 2  # the start, then one batch; left unanswered
        second, _ = connect(address, token, ("batch",))
        assert first.next().error.code == "replaced"
        assert shape(received(second, 3)) == ["match_start tm1", [r for _, r in plan[1:]]]
    finally:
        first.close()
        if second is not None:
            second.close()


def test_each_action_of_a_batch_is_handled_as_if_alone(
    address: str, make_bot, decisions, redis_client
) -> None:
    """Real decisions with the worker's legality check: in one ActionBatch an illegal action
    is rejected by the worker, an unknown request id and another bot's one by the game server,
    a duplicate is harmless; an empty or oversized batch gets a bad_message and nothing of it is
    read; the stream, the server and the decisions go on."""
    alice_info, alice_token = make_bot("alice-b")
    _, mallory_token = make_bot("mallory-b")
    alice, _ = connect(address, alice_token, ("batch",))
    mallory, _ = connect(address, mallory_token, ("batch",))
    results: dict[int, Any] = {}
    try:
        wait_until(lambda: decisions.is_connected(alice_info.bot_id), what="presence")
        engine = [engine_request(seed=i) for i in range(3)]

        def ask(i: int) -> None:
            results[i] = decisions.request(alice_info.bot_id, f"bx-{i}", deadline_ms=15_000, **engine[i])

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        by_match = {}
        for message in received(alice, 3):
            for request in (message.decisions.requests if message.WhichOneof("kind") == "decisions"
                            else [message.decision]):
                by_match[request.match_id] = request
        r0, r1, r2 = (by_match[f"bx-{i}"] for i in range(3))

        # another bot's request id, in a batch: refused as it is alone
        mallory.send(actions((r1.request_id, r1.match_id, r1.legal_actions[0])))
        stolen = mallory.next().rejection
        assert stolen.request_id == r1.request_id and "unknown request_id" in stolen.reason

        alice.send(actions(
            (r0.request_id, r0.match_id, "play 1x"),  # illegal: the worker rejects it
            (r1.request_id, r1.match_id, r1.legal_actions[-1]),
            (r1.request_id, r1.match_id, r1.legal_actions[0]),  # a duplicate: ignored by the worker
            ("no-such-request", "", "pass"),
            (r2.request_id, "another-match", r2.legal_actions[0]),  # a wrong match id
        ))
        rejections: dict[str, pb.Rejection] = {}
        while len(rejections) < 3:
            message = alice.next()
            assert message.WhichOneof("kind") == "rejection", message
            rejections[message.rejection.request_id] = message.rejection
        assert "unknown request_id" in rejections["no-such-request"].reason
        assert "belongs to match 'bx-2'" in rejections[r2.request_id].reason
        assert rejections[r0.request_id].action == "play 1x" and rejections[r0.request_id].reason
        wait_until(lambda: 1 in results, what="the decision answered in the batch")
        assert results[1].ok and results[1].action == r1.legal_actions[-1]

        alice.send(pb.BotMessage(actions=pb.ActionBatch()))
        error = alice.next().error
        assert (error.code, error.message) == ("bad_message", "empty ActionBatch: send at least one Action")
        huge = [(r2.request_id, r2.match_id, r2.legal_actions[0])] * (MAX_ACTION_BATCH + 1)
        alice.send(actions(*huge))
        error = alice.next().error
        assert error.code == "bad_message" and f"at most {MAX_ACTION_BATCH} in one message" in error.message
        # a Ping after it is answered once the stream has read everything before it: an answer of
        # that batch would have been handed to Redis by then
        alice.send(pb.BotMessage(ping=pb.Ping(nonce=7)))
        assert alice.next().pong.nonce == 7
        assert 2 not in results and redis_client.zscore(pending_key(alice_info.bot_id), r2.request_id)

        alice.send(actions((r0.request_id, r0.match_id, r0.legal_actions[0]),
                           (r2.request_id, r2.match_id, r2.legal_actions[0])))
        for thread in threads:
            thread.join(10)
        assert results[0].ok and results[0].action == r0.legal_actions[0]
        assert [illegal for illegal, _ in results[0].rejected] == ["play 1x"]
        assert results[2].ok and results[2].action == r2.legal_actions[0]
        alice.send(pb.BotMessage(ping=pb.Ping(nonce=5)))
        assert alice.next().pong.nonce == 5
    finally:
        alice.close()
        mallory.close()


def test_answers_in_a_batch_count_towards_the_rejection_limit(
    address: str, make_bot, decisions, redis_client
) -> None:
    """At most MAX_REJECTIONS answers to one request are forwarded, batched or not; the
    game server refuses the others itself (Rejection ``decided``)."""
    info, token = make_bot("many-b")
    bot, _ = connect(address, token, ("batch",))
    try:
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        rid = f"{info.bot_id}-lim"
        push_at_once(redis_client, info.bot_id, [("lim1", rid)])
        (message,) = received(bot, 1)
        assert message.decision.request_id == rid
        bot.send(actions(*[(rid, "lim1", f"try {i}") for i in range(MAX_REJECTIONS + 3)]))
        bot.send(pb.BotMessage(ping=pb.Ping(nonce=9)))
        refused = [bot.next().rejection for _ in range(3)]
        beyond = range(MAX_REJECTIONS, MAX_REJECTIONS + 3)
        assert [(r.action, r.code) for r in refused] == [(f"try {i}", "decided") for i in beyond]
        assert bot.next().pong.nonce == 9  # the batch was read before the ping
        # the answers of one ActionBatch go to Redis in one ANSWER call: all of them at once
        wait_until(lambda: redis_client.llen(reply_key(rid)) >= MAX_REJECTIONS, what="the answers")
        assert replied(redis_client, rid) == [f"try {i}" for i in range(MAX_REJECTIONS)]
    finally:
        bot.close()


def test_every_action_of_a_batch_takes_a_token(address: str, make_bot) -> None:
    """A stream flooding with batches is read at the bucket's pace, as it is flooding alone."""
    _, token = make_bot("flood-b")
    bot, _ = connect(address, token, ("batch",))
    try:
        count = int(MESSAGE_BURST) + 100  # 100 past the burst: 2 s at 50 a second
        began = time.monotonic()
        bot.send(actions(*[(f"nope-{i}", "", "pass") for i in range(count)]))
        for _ in range(count):
            assert bot.next().WhichOneof("kind") == "rejection"
        assert time.monotonic() - began >= 0.75 * 100 / MESSAGE_RATE
    finally:
        bot.close()


def test_the_token_bucket_takes_several_tokens_at_once() -> None:
    bucket = TokenBucket(rate=10.0, burst=5.0)
    assert bucket.take(5) == 0.0
    assert bucket.take(3) == pytest.approx(0.3, abs=0.01)  # three tokens short
    bucket.credit(MAX_REJECTIONS + 1)
    assert bucket.take(1) == 0.0


def test_an_sdk_bot_in_many_matches_gets_and_sends_batches(
    address: str, make_bot, spawn_bot, decisions
) -> None:
    """A real SDK bot (another process) in 24 matches at once, asked in bursts like a worker's
    coroutines would: ArenaBundles of several messages come (the runner lists "bundle"),
    ActionBatches go back (counted by the runner, which logs them when it stops), and every
    decision is answered legally."""
    info, token = make_bot("sdk-batch")
    bot = spawn_bot(address, token, "FirstLegal")
    wait_until(lambda: decisions.is_connected(info.bot_id), timeout=20, what="the SDK bot to connect")
    matches, rounds = 24, 8
    barrier = threading.Barrier(matches)
    outcomes: list[Any] = []
    engine = [engine_request(seed=i) for i in range(matches)]

    def play(i: int) -> None:
        decisions.match_start(info.bot_id, f"sb-{i}", "merde", engine[i]["seat"], 3, {})
        for _ in range(rounds):
            barrier.wait(20)
            outcomes.append(decisions.request(info.bot_id, f"sb-{i}", deadline_ms=10_000, **engine[i]))

    threads = [threading.Thread(target=play, args=(i,)) for i in range(matches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(40)
    assert len(outcomes) == matches * rounds
    assert all(o.ok for o in outcomes), [o.fault for o in outcomes if not o.ok][:5]
    assert bot.stop() == 0
    found = bot.wait_for_log(
        r"batching: (\d+) requests came in (\d+) DecisionBatches, (\d+) messages in (\d+) ArenaBundles, "
        r"(\d+) answers went in (\d+) ActionBatches"
    )
    requests, batches, bundled, bundles, answers, action_batches = map(int, found.groups())
    print(f"{bundled} messages in {bundles} ArenaBundles, {requests} requests in {batches} DecisionBatches,",
          f"{answers} answers in {action_batches} ActionBatches",
          f"({matches * rounds} decisions)")
    assert batches == 0  # a bundle stream gets no DecisionBatch
    assert bundles >= 1 and bundled >= 2 * bundles  # an ArenaBundle holds 2 messages or more
    assert action_batches >= 1 and answers >= 2 * action_batches


def test_commands_are_packed_as_redis_py_packs_them() -> None:
    """The game server's hot path packs with hiredis: the very bytes redis-py would send."""
    import redis.asyncio as aioredis

    from atout_arena.core.relay import ANSWER, pack_async

    conn = aioredis.Connection()
    commands = [
        ("EVAL", ANSWER, 3, "atout:reply:r1", "atout:bot:7:pending", "atout:req:r1", "r1", b"A\xc3", 70),
        ("EVALSHA", "ab" * 20, 6, "k1", "k2", "k3", "k4", "k5", "k6", "r1", b"m", 1.5, "r2", b"", 0),
        ("XREAD", "COUNT", 512, "BLOCK", 1000, "STREAMS", b"atout:bot:7:inbox", b"0-0"),
        ("HINCRBY", "atout:metrics:x", "bot é", -3),
    ]
    assert pack_async(conn, commands) == b"".join(conn.pack_commands(commands))
