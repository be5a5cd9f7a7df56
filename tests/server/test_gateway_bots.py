"""End to end: DecisionClient -> Redis -> game server (another process) -> SDK bot (another
process) and back. Real Redis, real gRPC, loopback only."""

from __future__ import annotations

import signal
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gateway_helpers import engine_request, read_events, wait_until

from atout_arena.core.vocabulary import Fault
from atout_workers.decisions import ArenaOutage, DecisionClient

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def address(game_server) -> str:
    return game_server.info["address"]


@pytest.fixture
def events(tmp_path: Path) -> Path:
    return tmp_path / "events.jsonl"


def connected(decisions, bot_id: str, timeout: float = 15.0) -> None:
    wait_until(lambda: decisions.is_connected(bot_id), timeout, what=f"bot {bot_id} to connect")


def test_round_trip(address, make_bot, spawn_bot, decisions, events) -> None:
    info, token = make_bot()
    spawn_bot(address, token, "FirstLegal", ATOUT_TEST_EVENTS=str(events))
    connected(decisions, info.bot_id)
    decisions.match_start(info.bot_id, "m-rt", "merde", 1, 3, {"deals": 2}, ["x", info.name, "y"])
    request = engine_request()
    decision = decisions.request(info.bot_id, "m-rt", deadline_ms=5000, **request)
    assert decision.ok, decision
    assert decision.action == request["legal_actions"][0]
    assert decision.fault is None and decision.rejected == ()
    assert 0 < decision.think_ms < 5000
    decisions.match_end(info.bot_id, "m-rt", 1, [3, 1, 0], [1, 2, 3])
    wait_until(lambda: any(e["event"] == "match_end" for e in read_events(events)), what="match end")
    seen = read_events(events)
    assert [e["event"] for e in seen] == ["match_start", "act", "match_end"]
    assert seen[0]["options"] == {"deals": 2} and seen[0]["seat"] == 1
    assert seen[1]["hand"] == request["observation"]["hand"]
    assert seen[2]["scores"] == [3, 1, 0]


def test_a_bot_that_is_not_connected_is_faulted_at_once(make_bot, decisions) -> None:
    info, _ = make_bot()
    started = time.perf_counter()
    decision = decisions.request(info.bot_id, "m-nc", deadline_ms=5000, **engine_request())
    assert decision.fault == Fault.DISCONNECTED and decision.action is None
    assert time.perf_counter() - started < 1.0


def test_illegal_then_legal_answer(address, make_bot, spawn_bot, decisions, events) -> None:
    info, token = make_bot()
    spawn_bot(address, token, "IllegalFirst", ATOUT_TEST_EVENTS=str(events))
    connected(decisions, info.bot_id)
    request = engine_request()
    decision = decisions.request(info.bot_id, "m-il", deadline_ms=5000, **request)
    assert decision.ok, decision
    assert decision.action == request["legal_actions"][0]
    engine_reason = request["check"]("play 1x")
    assert engine_reason and "illegal action 'play 1x'" in engine_reason
    assert decision.rejected == (("play 1x", engine_reason),)
    rejections = [e for e in read_events(events) if e["event"] == "rejection"]
    assert rejections == [
        {
            "event": "rejection",
            "pid": rejections[0]["pid"],
            "match_id": "m-il",
            "action": "play 1x",
            "reason": engine_reason,
        }
    ]


def test_timeout(address, make_bot, spawn_bot, decisions, events) -> None:
    info, token = make_bot()
    bot = spawn_bot(address, token, "Slow", ATOUT_TEST_EVENTS=str(events), ATOUT_TEST_SLEEP_S="10")
    connected(decisions, info.bot_id)
    started = time.perf_counter()
    # 1 s: a request whose deadline passed before the game server read it is never sent (a
    # loaded machine's game server may read later than a few hundred ms)
    decision = decisions.request(info.bot_id, "m-to", deadline_ms=1000, **engine_request())
    elapsed = time.perf_counter() - started
    assert decision.fault == Fault.TIMEOUT and decision.action is None
    assert 0.99 < elapsed < 3.0, elapsed  # the deadline, not the bot's 10 s
    # the bot writes its event in its own process when the request reaches it: maybe not yet
    wait_until(lambda: any(e["event"] == "act" for e in read_events(events)), what="the bot to be asked")
    assert [e["event"] for e in read_events(events) if e["event"] != "match_start"] == ["act"]
    bot.kill()  # still thinking: not worth a SIGTERM that waits for it


def test_illegal_answer_then_nothing_is_an_illegal_fault(address, make_bot, spawn_bot, decisions) -> None:
    info, token = make_bot()
    spawn_bot(address, token, "random")  # RandomBot gives no second answer after a rejection
    connected(decisions, info.bot_id)
    request = engine_request()
    decision = decisions.request(
        info.bot_id, "m-if", deadline_ms=400, **{**request, "check": lambda action: "nothing is legal today"}
    )
    assert decision.fault == Fault.ILLEGAL
    assert len(decision.rejected) == 1 and decision.rejected[0][1] == "nothing is legal today"


def test_a_bot_killed_mid_request_gets_the_request_again(
    address, make_bot, spawn_bot, decisions, events
) -> None:
    info, token = make_bot()
    first = spawn_bot(address, token, "Slow", ATOUT_TEST_EVENTS=str(events), ATOUT_TEST_SLEEP_S="60")
    connected(decisions, info.bot_id)
    decisions.match_start(info.bot_id, "m-kill", "merde", 1, 3, {}, [])
    request = engine_request()

    def kill_and_restart() -> None:
        wait_until(
            lambda: any(e["event"] == "act" for e in read_events(events)), what="the first bot to think"
        )
        first.kill()  # SIGKILL: no goodbye
        spawn_bot(address, token, "FirstLegal", ATOUT_TEST_EVENTS=str(events))

    import threading

    thread = threading.Thread(target=kill_and_restart)
    thread.start()
    decision = decisions.request(info.bot_id, "m-kill", deadline_ms=15_000, **request)
    thread.join(10)
    assert decision.ok, decision
    assert decision.action == request["legal_actions"][0]
    seen = read_events(events)
    pids = {e["pid"] for e in seen}
    assert len(pids) == 2
    second = [e["event"] for e in seen if e["pid"] != first.popen.pid]
    assert second == ["match_start", "act"]  # the running match and the request, sent again


def test_a_second_connection_replaces_the_first(address, make_bot, spawn_bot, decisions) -> None:
    info, token = make_bot()
    first = spawn_bot(address, token, "FirstLegal")
    connected(decisions, info.bot_id)
    first.wait_for_log("connected as")
    second = spawn_bot(address, token, "LastLegal")
    second.wait_for_log("connected as")
    assert first.popen.wait(10) == 3  # atout-bot's exit code for "replaced"
    assert "another connection took over this bot" in first.log()
    request = engine_request()
    for _ in range(3):
        decision = decisions.request(info.bot_id, "m-rep", deadline_ms=5000, **request)
        assert decision.action == request["legal_actions"][-1]
    assert second.alive()


def test_two_game_servers_share_one_redis(
    make_bot, spawn_bot, start_game_server, decisions, game_server, redis_client
):
    other = start_game_server("gs-other")
    bots = []
    for server, kind in ((game_server, "FirstLegal"), (other, "LastLegal")):
        info, token = make_bot()
        spawn_bot(server.info["address"], token, kind)
        bots.append(info)
    for info in bots:
        connected(decisions, info.bot_id)
    owners = [redis_client.get(f"atout:bot:{info.bot_id}:conn").decode() for info in bots]
    assert owners[0].startswith("gs-main/") and owners[1].startswith("gs-other/")
    request = engine_request()
    for _ in range(3):
        first = decisions.request(bots[0].bot_id, "m-two", deadline_ms=5000, **request)
        last = decisions.request(bots[1].bot_id, "m-two", deadline_ms=5000, **request)
        assert (first.action, last.action) == (request["legal_actions"][0], request["legal_actions"][-1])


def test_a_connection_on_another_server_replaces_the_first(
    make_bot, spawn_bot, start_game_server, decisions, game_server, redis_client
):
    other = start_game_server("gs-other2")
    info, token = make_bot()
    first = spawn_bot(game_server.info["address"], token, "FirstLegal")
    first.wait_for_log("connected as")
    second = spawn_bot(other.info["address"], token, "LastLegal")
    second.wait_for_log("connected as")
    assert first.popen.wait(10) == 3
    assert redis_client.get(f"atout:bot:{info.bot_id}:conn").decode().startswith("gs-other2/")
    request = engine_request()
    assert (
        decisions.request(info.bot_id, "m-x", deadline_ms=5000, **request).action
        == request["legal_actions"][-1]
    )


def test_graceful_shutdown_tells_the_bots_and_releases_them(
    make_bot, spawn_bot, start_game_server, decisions, redis_url
):
    """Its bots are released as cut off by the arena (it shut down), not as bots that left:
    their decisions wait, clocks stopped, up to the outage limit; never a fault."""
    server = start_game_server()
    info, token = make_bot()
    bot = spawn_bot(server.info["address"], token, "FirstLegal")
    connected(decisions, info.bot_id)
    started = time.perf_counter()
    assert server.stop(signal.SIGTERM) == 0
    assert time.perf_counter() - started < 5
    bot.wait_for_log("shutting down")
    assert not decisions.is_connected(info.bot_id)
    client = DecisionClient(redis_url, outage_limit_s=2)
    try:
        with pytest.raises(ArenaOutage):
            client.request(info.bot_id, "m-down", deadline_ms=5000, **engine_request())
    finally:
        client.close()


def test_one_worker_keeps_many_matches_in_flight(address, make_bot, spawn_bot, redis_url) -> None:
    """One thread per match, as a worker runs them: 24 requests wait on the bot at once."""
    info, token = make_bot()
    spawn_bot(address, token, "Slow", "--max-workers", "32", ATOUT_TEST_SLEEP_S="0.3")
    client = DecisionClient(redis_url)
    try:
        wait_until(lambda: client.is_connected(info.bot_id), 15.0)
        request = engine_request()
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=24) as pool:
            decisions = list(pool.map(
                lambda i: client.request(info.bot_id, f"m-par-{i}", deadline_ms=5000, **request), range(24)
            ))
        elapsed = time.perf_counter() - started
    finally:
        client.close()
    assert all(d.ok for d in decisions), decisions
    assert elapsed < 3.0, elapsed  # 24 matches x 0.3 s of thinking each: 7.2 s one after the other


def test_a_bot_given_by_a_path_spec_runs(address, make_bot, spawn_bot, decisions) -> None:
    """``spawn_bot`` takes any spec ``atout-bot run`` takes, paths included (its log file is
    named after the spec, made a file name)."""
    from e2e_helpers import SAMPLE_BOTS

    info, token = make_bot()
    bot = spawn_bot(address, token, f"{SAMPLE_BOTS}:FirstLegal")
    connected(decisions, info.bot_id)
    assert bot.log_path.name.startswith("bot-sample_bots.py-FirstLegal")


def test_a_match_that_ends_while_the_bot_is_away_ends_for_it_when_it_is_back(
    make_bot, spawn_bot, start_game_server, decisions, events
) -> None:
    """The SDK bot's game server goes away (the bot keeps trying to reconnect); a match ends
    meanwhile; when the bot is back (a new game server at the same address), on_match_end is
    called for that match, once."""
    from atout_arena.core.embedded_redis import free_tcp_port

    address = f"127.0.0.1:{free_tcp_port()}"
    first = start_game_server(address=address)
    info, token = make_bot()
    bot = spawn_bot(address, token, "FirstLegal", ATOUT_TEST_EVENTS=str(events))
    connected(decisions, info.bot_id)
    decisions.match_start(info.bot_id, "m-away", "merde", 0, 3, {"deals": 1}, [info.name, "b", "c"])
    wait_until(lambda: any(e["event"] == "match_start" for e in read_events(events)), what="MatchStart")
    first.stop()  # SIGTERM: streams end with shutting_down, the bot reconnects (and fails) meanwhile
    wait_until(lambda: not decisions.is_connected(info.bot_id), what="the bot to be away")
    decisions.match_end(info.bot_id, "m-away", 0, [5, 3, 1], [1, 2, 3], reason="finished")
    start_game_server(address=address)
    connected(decisions, info.bot_id, timeout=30)
    wait_until(lambda: any(e["event"] == "match_end" for e in read_events(events)), 15, what="MatchEnd")
    seen = [(e["event"], e.get("match_id")) for e in read_events(events)]
    assert seen == [("match_start", "m-away"), ("match_end", "m-away")]
    assert [e["pid"] for e in read_events(events)] == [bot.popen.pid] * 2  # the same bot process
    assert read_events(events)[-1]["scores"] == [5, 3, 1]


def test_the_bot_reports_its_own_think_time_beside_the_latency_the_arena_sees(
    address, make_bot, spawn_bot, decisions
) -> None:
    """The SDK times ``act()`` and sends it with the action; the worker gets both figures: the
    difference is network and queueing time."""
    info, token = make_bot()
    spawn_bot(address, token, "Slow", ATOUT_TEST_SLEEP_S="0.2")
    connected(decisions, info.bot_id)
    decision = decisions.request(info.bot_id, "m-think", deadline_ms=5000, **engine_request())
    assert decision.ok, decision
    assert decision.bot_think_ms is not None and 195 <= decision.bot_think_ms < 1000, decision
    assert decision.think_ms >= decision.bot_think_ms  # observed = the bot's own + the way there and back


def test_two_versions_of_one_bot_are_connected_at_once(address, make_bot, spawn_bot, decisions,
                                                       redis_client, tmp_path) -> None:
    """One stream per version; a seat asking for a version is played by that stream, a seat
    asking for none by the most recently connected one; the same version replaces its stream."""
    from atout_arena.core.keys import stream_address
    from atout_arena.core.relay import is_connected, seat_address

    info, token = make_bot()
    events = {v: tmp_path / f"{v}.jsonl" for v in ("v1", "v2")}
    first = spawn_bot(address, token, "FirstLegal", "--version", "v1", ATOUT_TEST_EVENTS=str(events["v1"]))
    wait_until(lambda: is_connected(redis_client, info.bot_id, "v1"), 15, "v1 to connect")
    second = spawn_bot(address, token, "FirstLegal", ATOUT_BOT_VERSION="v2",
                       ATOUT_TEST_EVENTS=str(events["v2"]))
    wait_until(lambda: is_connected(redis_client, info.bot_id, "v2"), 15, "v2 to connect")
    assert is_connected(redis_client, info.bot_id, "v1")  # both at once: v2 did not replace v1
    assert seat_address(redis_client, info.bot_id) == stream_address(info.bot_id, "v2")  # the latest
    assert not is_connected(redis_client, info.bot_id, "v3")
    for version in ("v1", "v2"):
        decision = decisions.request(stream_address(info.bot_id, version), f"m-{version}", deadline_ms=5000,
                                     **engine_request())
        assert decision.ok, (version, decision)
    asked = {v: [e["match_id"] for e in read_events(path) if e["event"] == "act"]
             for v, path in events.items()}
    assert asked == {"v1": ["m-v1"], "v2": ["m-v2"]}
    again = spawn_bot(address, token, "FirstLegal", ATOUT_BOT_VERSION="v1")  # the same version again
    assert first.popen.wait(15) == 3  # replaced, as a second stream of an unversioned bot is
    assert again.popen.poll() is None and is_connected(redis_client, info.bot_id, "v1")
    assert is_connected(redis_client, info.bot_id, "v2")
    second.stop()  # the latest stream leaves: unversioned seats go to the one still live
    wait_until(lambda: not is_connected(redis_client, info.bot_id, "v2"), 15, "v2 to leave")
    assert seat_address(redis_client, info.bot_id) == stream_address(info.bot_id, "v1")


def test_a_bad_version_label_is_one_line_and_exit_2(address, make_bot) -> None:
    import subprocess
    import sys

    _, token = make_bot()
    command = [sys.executable, "-m", "atout.cli", "run", "random", "--server", address, "--token", token,
               "--version", "x" * 65]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "at most 64 printable characters" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bot_has_at_most_four_versions_connected(address, make_bot, spawn_bot, redis_client) -> None:
    """Each version is a stream of its own: a fifth is refused, so one token cannot open streams
    without end."""
    from atout_arena.core.relay import is_connected

    info, token = make_bot()
    for n in range(1, 5):
        spawn_bot(address, token, "FirstLegal", "--version", f"v{n}")
        wait_until(lambda n=n: is_connected(redis_client, info.bot_id, f"v{n}"), 15, f"v{n} to connect")
    fifth = spawn_bot(address, token, "FirstLegal", "--version", "v5")
    assert fifth.popen.wait(15) == 2
    fifth.wait_for_log("at most 4 streams of one bot at once")
    assert not is_connected(redis_client, info.bot_id, "v5")
    assert all(is_connected(redis_client, info.bot_id, f"v{n}") for n in range(1, 5))


def test_a_decision_takes_a_bounded_number_of_rejected_answers(
    address, make_bot, decisions, redis_client
) -> None:
    """A bot flooding its stream with illegal answers: after MAX_REJECTIONS of them the
    decision is faulted ``illegal`` at once (not at its deadline), the last Rejection says so
    (``final``), and the game server refuses the stream's further answers to it itself
    (Rejection ``decided``), counting them (``atout_stream_limited_total``)."""
    from gateway_helpers import RawBot

    from atout.v1 import atout_pb2 as pb
    from atout_arena.core.metrics import STREAM_LIMITED, limited_field
    from atout_arena.core.relay import MAX_REJECTIONS

    info, token = make_bot()
    bot = RawBot(address, token)
    try:
        bot.connect()
        connected(decisions, info.bot_id)
        request = {**engine_request(), "check": lambda action: "never legal"}
        with ThreadPoolExecutor(1) as pool:
            started = time.perf_counter()
            future = pool.submit(decisions.request, info.bot_id, "m-flood", deadline_ms=10_000, **request)
            asked = bot.recv(skip=("ping", "match_start"))
            assert asked is not None and asked.WhichOneof("kind") == "decision"
            for i in range(40):
                bot.send(pb.BotMessage(action=pb.Action(request_id=asked.decision.request_id,
                                                        match_id="m-flood", action=f"junk {i}")))
            decision = future.result(15)
            elapsed = time.perf_counter() - started
        assert decision.fault == Fault.ILLEGAL and len(decision.rejected) == MAX_REJECTIONS
        assert elapsed < 3.0, elapsed  # not the 10 s deadline
        # every answer gets its Rejection: the 8 the worker refused (the last one final), and the
        # 32 beyond them at once from the game server ("decided"), counted as held back
        got = [bot.next(5.0).rejection for _ in range(40)]
        assert Counter(r.code for r in got) == {"illegal": MAX_REJECTIONS, "decided": 40 - MAX_REJECTIONS}
        illegal = [r for r in got if r.code == "illegal"]
        assert [r.final for r in illegal] == [False] * (MAX_REJECTIONS - 1) + [True]
        assert [r.action for r in illegal] == [f"junk {i}" for i in range(MAX_REJECTIONS)]
        field = limited_field(info.name, "answers")
        wait_until(lambda: int(redis_client.hget(STREAM_LIMITED.key, field) or 0) >= 40 - MAX_REJECTIONS,
                   10, what="the dropped answers to be counted")
    finally:
        bot.close()
