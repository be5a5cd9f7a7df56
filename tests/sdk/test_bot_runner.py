"""The runner (atout.run) against a fake in-process arena on 127.0.0.1."""

from __future__ import annotations

import itertools
import json
import logging
import socket
import threading
import time
from typing import Any, ClassVar

import pytest
from fake_arena import TOKEN, FakeArena, RunnerThread, start_server

import atout
from atout import Bot, MatchInfo, MatchResult, Observation
from atout.runner import (
    HELLO_DELAY_CAP_S,
    HELLO_DELAY_S,
    LOST_STATUS_DETAILS,
    MAX_LOST_STATUSES,
    AuthenticationError,
    ConnectionLostError,
    ConnectionReplacedError,
    NothingListensError,
    ProtocolError,
    Runner,
    _Connection,
)
from atout.v1 import atout_pb2 as pb

pytestmark = pytest.mark.timeout(30)

LEGAL = ["play Th", "play 9s"]


def decision(
    request_id: str, match: str = "m1", seat: int = 1, legal: list[str] | None = None, deadline_ms: int = 5000
) -> pb.DecisionRequest:
    obs = {"game": "merde", "seat": seat, "players": 3, "hand": ["Th", "9s"], "trump": "h"}
    return pb.DecisionRequest(
        request_id=request_id,
        match_id=match,
        game="merde",
        seat=seat,
        observation_json=json.dumps(obs),
        legal_actions=legal or LEGAL,
        deadline_ms=deadline_ms,
    )


def start(match: str = "m1", seat: int = 1) -> pb.MatchStart:
    return pb.MatchStart(
        match_id=match,
        game="merde",
        seat=seat,
        players=3,
        options_json=json.dumps({"deals": 2}),
        seat_names=["a", "b", "c"],
    )


def end(match: str = "m1", seat: int = 1) -> pb.MatchEnd:
    return pb.MatchEnd(match_id=match, seat=seat, scores=[3, 10, 1], ranking=[2, 1, 3], reason="finished")


class Recorder(Bot):
    """Records every call on every instance; answers the last legal action."""

    instances: ClassVar[list[Recorder]] = []

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []
        Recorder.instances.append(self)

    def on_match_start(self, match: MatchInfo) -> None:
        self.calls.append(("start", match))

    def act(self, observation: Observation) -> str:
        self.calls.append(("act", observation))
        return observation.legal_actions[-1]

    def on_match_end(self, result: MatchResult) -> None:
        self.calls.append(("end", result))

    @property
    def match_id(self) -> str:
        assert self.match is not None, "no match started"
        return self.match.match_id


def taken(conn: _Connection) -> pb.BotMessage:
    """The next message the connection writes; there must be one."""
    message = conn.take()
    assert message is not None, "nothing queued"
    return message


@pytest.fixture(autouse=True)
def _fresh_recorder() -> None:
    Recorder.instances = []


def test_hello_and_welcome(arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="atout")
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    assert conn.metadata["authorization"] == f"Bearer {TOKEN}"
    assert conn.hello is not None and conn.hello.protocol_version == 1
    assert conn.hello.client.startswith(f"atout-sdk/{atout.__version__} python/3.")
    deadline = time.monotonic() + 5
    while f"connected as testbot to 127.0.0.1:{port}" not in caplog.text:
        assert time.monotonic() < deadline, caplog.text
        time.sleep(0.02)
    rt.stop()


def test_one_bot_per_match_with_hooks_in_order(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(match_start=start("m1", seat=1))
    conn.send(match_start=start("m2", seat=2))
    conn.send(decision=decision("r1", "m1", seat=1))
    first = conn.expect("action")
    conn.send(decision=decision("r2", "m2", seat=2, legal=["bid 0", "bid 1"]))
    second = conn.expect("action")
    assert (first.request_id, first.match_id, first.action) == ("r1", "m1", "play 9s")
    assert (second.request_id, second.match_id, second.action) == ("r2", "m2", "bid 1")
    conn.send(decision=decision("r3", "m1", seat=1))
    assert conn.expect("action").request_id == "r3"
    conn.send(match_end=end("m1", seat=1))
    conn.send(match_end=end("m2", seat=2))
    deadline = time.monotonic() + 5
    while sum(1 for b in Recorder.instances for kind, _ in b.calls if kind == "end") < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    rt.stop()

    assert len(Recorder.instances) == 2
    by_match = {b.match_id: b for b in Recorder.instances if b.match}
    m1 = by_match["m1"]
    assert [kind for kind, _ in m1.calls] == ["start", "act", "act", "end"]
    info = m1.calls[0][1]
    assert (info.game, info.seat, info.players, info.options, info.seat_names) == (
        "merde",
        1,
        3,
        {"deals": 2},
        ["a", "b", "c"],
    )
    obs = m1.calls[1][1]
    assert obs.hand == ["Th", "9s"] and obs.trump == "h" and obs.legal_actions == LEGAL
    assert obs.match_id == "m1" and obs.deadline_ms == 5000
    result = m1.calls[-1][1]
    assert (result.scores, result.ranking, result.seat, result.reason) == (
        [3, 10, 1],
        [2, 1, 3],
        1,
        "finished",
    )
    assert [kind for kind, _ in by_match["m2"].calls] == ["start", "act", "end"]
    assert rt.runner.active_matches() == []


def test_matches_run_concurrently_but_one_match_in_order(arena: tuple[FakeArena, int]) -> None:
    release = threading.Event()
    lock = threading.Lock()
    running: dict[str, int] = {}
    overlap: list[str] = []

    class Slow(Bot):
        def act(self, observation: Observation) -> str:
            with lock:
                running[observation.match_id] = running.get(observation.match_id, 0) + 1
                if running[observation.match_id] > 1:
                    overlap.append(observation.match_id)
            try:
                if observation.match_id == "slow":
                    assert release.wait(10)
                return observation.legal_actions[0]
            finally:
                with lock:
                    running[observation.match_id] -= 1

    servicer, port = arena
    rt = RunnerThread(Slow, port)
    conn = servicer.next_connection()
    conn.send(decision=decision("s1", "slow"))
    conn.send(decision=decision("s2", "slow"))
    conn.send(decision=decision("f1", "fast"))
    # The fast match is answered while the slow one is still thinking.
    assert conn.expect("action").request_id == "f1"
    release.set()
    answers = [conn.expect("action").request_id, conn.expect("action").request_id]
    assert answers == ["s1", "s2"]
    assert overlap == []
    rt.stop()


def test_unknown_match_gets_a_bot_lazily(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(decision=decision("r1", "late", seat=2))
    assert conn.expect("action").match_id == "late"
    rt.stop()
    (bot,) = Recorder.instances
    assert bot.match is not None and (bot.match.game, bot.match.seat, bot.match.players) == ("merde", 2, 3)
    assert [kind for kind, _ in bot.calls] == ["start", "act"]


def test_answers_ping_and_pings_a_quiet_arena(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    servicer.welcome.keepalive_ms = 200
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(ping=pb.Ping(nonce=42))
    assert conn.expect("pong").nonce == 42
    # The arena stays silent for longer than its keep-alive interval: the runner pings it.
    conn.expect("ping", timeout=2)
    rt.stop()


def test_silent_arena_is_reconnected(arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture) -> None:
    servicer, port = arena
    servicer.welcome.keepalive_ms = 100
    rt = RunnerThread(Recorder, port)
    servicer.next_connection()
    servicer.next_connection(timeout=5)  # silent for 3 intervals + 1 s: a new stream
    assert "the arena was silent" in caplog.text
    rt.stop()


def test_rejection_is_logged_and_the_bot_may_answer_again(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture
) -> None:
    rejections: list[tuple[str, str]] = []

    class Sloppy(Bot):
        def act(self, observation: Observation) -> str:
            return "play Qs"  # not legal

        def on_rejection(self, observation: Observation, action: str, reason: str) -> str | None:
            rejections.append((action, reason))
            return observation.legal_actions[0]

    servicer, port = arena
    rt = RunnerThread(Sloppy, port)
    conn = servicer.next_connection()
    conn.send(decision=decision("r1"))
    # Sent anyway: the arena's engine decides.
    assert conn.expect("action").action == "play Qs"
    assert "not one of the legal actions ['play Th', 'play 9s']; sending it anyway" in caplog.text
    conn.send(
        rejection=pb.Rejection(request_id="r1", match_id="m1", action="play Qs", reason="you hold no Qs")
    )
    again = conn.expect("action")
    assert (again.request_id, again.action) == ("r1", "play Th")
    assert rejections == [("play Qs", "you hold no Qs")]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "rejected" in r.getMessage()]
    assert warnings and "you hold no Qs" in warnings[0].getMessage() and "m1" in warnings[0].getMessage()
    rt.stop()


def test_default_bot_does_not_answer_a_rejection_again(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(decision=decision("r1"))
    conn.expect("action")
    conn.send(rejection=pb.Rejection(request_id="r1", match_id="m1", action="play 9s", reason="too late"))
    conn.nothing("action")
    rt.stop()


def test_act_exception_is_logged_and_not_answered(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture
) -> None:
    class Buggy(Bot):
        def act(self, observation: Observation) -> str:
            if observation.legal_actions == ["boom"]:
                raise ZeroDivisionError("oops")
            if observation.legal_actions == ["none"]:
                return None  # type: ignore[return-value]
            return observation.legal_actions[0]

    servicer, port = arena
    rt = RunnerThread(Buggy, port)
    conn = servicer.next_connection()
    conn.send(decision=decision("r1", legal=["boom"]))
    conn.nothing("action")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert errors and "match m1 seat 1: act() raised on request r1" in errors[0].getMessage()
    assert errors[0].exc_info and errors[0].exc_info[0] is ZeroDivisionError
    conn.send(decision=decision("r2", legal=["none"]))
    conn.nothing("action")
    assert "the bot returned None (NoneType), not an action string" in caplog.text
    # The runner goes on with the next decision.
    conn.send(decision=decision("r3"))
    assert conn.expect("action").request_id == "r3"
    rt.stop()


def test_request_sent_again_is_answered_from_memory(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(decision=decision("r1"))
    first = conn.expect("action")
    conn.send(decision=decision("r1"))
    assert conn.expect("action") == first
    rt.stop()
    (bot,) = Recorder.instances
    assert [kind for kind, _ in bot.calls] == ["start", "act"]


def test_messages_of_a_finished_match_are_ignored(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(match_start=start())
    conn.send(match_end=end())
    conn.send(decision=decision("r9"))
    conn.nothing("action")
    rt.stop()
    assert len(Recorder.instances) == 1


def test_reconnects_after_the_server_comes_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="atout")
    servicer = FakeArena()
    server, port = start_server(servicer)
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(match_start=start())
    conn.send(decision=decision("r1"))
    conn.expect("action")
    server.stop(grace=None)
    time.sleep(0.3)  # a few failed attempts while the server is away
    server, _ = start_server(servicer, port)
    try:
        conn2 = servicer.next_connection(timeout=10)
        assert conn2.hello is not None and conn2.hello.protocol_version == 1
        conn2.send(decision=decision("r2"))
        assert conn2.expect("action").request_id == "r2"
        rt.stop()
    finally:
        server.stop(grace=None)
    # The same bot instance played on across the reconnection.
    (bot,) = Recorder.instances
    assert [kind for kind, _ in bot.calls] == ["start", "act", "act"]
    assert "reconnecting in" in caplog.text


def test_wrong_token_stops_without_retrying(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture
) -> None:
    servicer, port = arena
    started = time.monotonic()
    with pytest.raises(AuthenticationError, match=r"the arena rejected the token for 127\.0\.0\.1"):
        atout.run(Recorder, f"127.0.0.1:{port}", token="wrong", backoff=(0.01, 0.01))
    assert time.monotonic() - started < 3
    # one attempt, or a few more when grpc.aio lost the arena's status (grpc/grpc#36066): never a
    # reconnection with backoff
    assert 1 <= servicer.attempts <= 1 + MAX_LOST_STATUSES
    assert "reconnecting in" not in caplog.text
    assert "the arena rejected the token for" in caplog.text and "unknown bot token" in caplog.text


def test_a_wrong_token_is_told_every_time(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture
) -> None:
    """The arena refuses the token at once, while the runner's Hello may still be on its way:
    grpc.aio then replaces the arena's UNAUTHENTICATED with INTERNAL "Internal error from
    Core" (1 connection in 30 to 1 in 2, by machine and gRPC engine, in runs of up to 20 in a
    row when asked again at once). The runner asks again instead of taking it for a broken
    connection, its Hello a little later (the refusal then comes first): every run stops with
    the token's error, none backs off."""
    servicer, port = arena
    for _ in range(100):
        with pytest.raises(AuthenticationError, match="the arena rejected the token"):
            atout.run(Recorder, f"127.0.0.1:{port}", token="wrong", backoff=(0.01, 0.01),
                      handle_signals=False)
    assert "reconnecting in" not in caplog.text
    assert 100 <= servicer.attempts <= 100 * (1 + MAX_LOST_STATUSES)


def serve_connect(connect: Any) -> tuple[Any, int]:
    """A bare arena on 127.0.0.1: ``connect(requests, context)`` is its BotGateway.Connect,
    reading BotMessages and yielding serialized ArenaMessages (bytes)."""
    from concurrent.futures import ThreadPoolExecutor

    import grpc

    handler = grpc.method_handlers_generic_handler("atout.v1.BotGateway", {
        "Connect": grpc.stream_stream_rpc_method_handler(
            connect, request_deserializer=pb.BotMessage.FromString)})
    server = grpc.server(ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


def test_after_each_lost_status_the_hello_waits_longer(caplog: pytest.LogCaptureFixture) -> None:
    """An arena that answers ``LOST_STATUS_DETAILS`` (what grpc.aio says when it lost the real
    status) five times, then welcomes: each Hello after a loss waits twice as long as the one
    before (from ``HELLO_DELAY_S``, up to ``HELLO_DELAY_CAP_S``), and none of it is a
    reconnection with backoff. Measured by the arena from one Hello to the next: the runner
    learns of the loss after the Hello before, then waits, then connects and sends."""

    import grpc

    losses = 5
    hellos: list[float] = []  # when each Hello arrived

    def connect(requests: Any, context: grpc.ServicerContext) -> Any:
        next(requests)
        hellos.append(time.monotonic())
        if len(hellos) <= losses:
            context.abort(grpc.StatusCode.INTERNAL, LOST_STATUS_DETAILS)
        welcome = pb.Welcome(protocol_version=1, bot_id="b1", bot_name="t")
        yield pb.ArenaMessage(welcome=welcome).SerializeToString()
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "that is all")

    server, port = serve_connect(connect)
    try:
        with pytest.raises(AuthenticationError, match="that is all"):
            atout.run(Recorder, f"127.0.0.1:{port}", token=TOKEN, backoff=(5, 5), handle_signals=False)
    finally:
        server.stop(grace=None)
    assert len(hellos) == losses + 1
    assert "reconnecting in" not in caplog.text  # (a backoff would have been 2.5-5 s)
    gaps = [b - a for a, b in itertools.pairwise(hellos)]
    timer_s = 0.0015  # an event loop's timer may fire up to a millisecond early
    for lost, gap in enumerate(gaps, start=1):
        expected = min(HELLO_DELAY_CAP_S, HELLO_DELAY_S * 2 ** (lost - 1))
        assert gap >= expected - timer_s, (lost, gaps)
    assert gaps[-1] >= 0.015, gaps  # the waits are there at all (16 ms and more by the 5th)


def test_an_undecodable_message_reconnects(caplog: pytest.LogCaptureFixture) -> None:
    """Bytes from the arena that are no ArenaMessage: grpc.aio logs them and hands over None.
    The runner reconnects (the old sync runner got an RpcError); it does not crash."""

    import grpc

    attempts = [0]

    def connect(requests: Any, context: grpc.ServicerContext) -> Any:
        attempts[0] += 1
        next(requests)  # the Hello
        welcome = pb.Welcome(protocol_version=1, bot_id="b1", bot_name="t")
        yield pb.ArenaMessage(welcome=welcome).SerializeToString()
        yield b"\xff\xff\xff"  # not a protobuf message
        time.sleep(0.5)

    server, port = serve_connect(connect)
    try:
        runner = Runner(Recorder, f"127.0.0.1:{port}", token=TOKEN, backoff=(0.01, 0.01))
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while attempts[0] < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert attempts[0] >= 2 and thread.is_alive()
        runner.stop()
        thread.join(5)
        assert not thread.is_alive()
    finally:
        server.stop(grace=None)
    assert "could not be decoded" in caplog.text


def test_run_from_a_running_event_loop(arena: tuple[FakeArena, int]) -> None:
    """run() called where an event loop runs (a notebook, async code) plays on a thread of its
    own and returns when stopped, instead of failing as asyncio.run() would."""
    import asyncio

    servicer, port = arena
    runner = Runner(Recorder, f"127.0.0.1:{port}", token=TOKEN)

    async def main() -> None:
        runner.run()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    servicer.next_connection()  # it connected, from a thread whose loop is running
    runner.stop()
    thread.join(5)
    assert not thread.is_alive()


def test_answers_handed_over_before_a_half_close_still_go() -> None:
    """A pool thread's answer handed to the loop just before the stream is closed is sent
    before the end of the bot's side (the sync runner sent what was queued)."""
    import asyncio

    from atout.runner import _END, _Connection

    loop = asyncio.new_event_loop()
    try:
        conn = _Connection(batch=False)
        conn.loop = loop
        conn.put_threadsafe(_action("late"))  # from "another thread": the loop has not run it yet
        conn.half_close()
        assert taken(conn).action.request_id == "late"
        assert conn.take() is _END
    finally:
        loop.close()


def test_missing_token_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ATOUT_TOKEN", raising=False)
    with pytest.raises(AuthenticationError, match="ATOUT_TOKEN"):
        Runner(Recorder, "127.0.0.1:1")


def test_token_from_environment(arena: tuple[FakeArena, int], monkeypatch: pytest.MonkeyPatch) -> None:
    servicer, port = arena
    monkeypatch.setenv("ATOUT_TOKEN", TOKEN)
    runner = Runner(Recorder, f"127.0.0.1:{port}")
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    assert servicer.next_connection().metadata["authorization"] == f"Bearer {TOKEN}"
    runner.stop()
    thread.join(5)
    assert not thread.is_alive()


def test_replaced_connection_stops(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(error=pb.Error(code="replaced", message="a new connection of testbot"))
    error = rt.join()
    assert isinstance(error, ConnectionReplacedError)
    assert servicer.attempts == 1


def test_unsupported_version_stops(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    servicer.on_hello = lambda conn: pb.ArenaMessage(
        error=pb.Error(code="unsupported_version", message="this arena speaks version 2")
    )
    rt = RunnerThread(Recorder, port)
    assert isinstance(rt.join(), ProtocolError)
    assert servicer.attempts == 1


def test_missing_welcome_times_out_and_retries(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    servicer.on_hello = lambda conn: None
    rt = RunnerThread(Recorder, port, connect_timeout=0.2, max_reconnects=1)
    error = rt.join()
    assert isinstance(error, ConnectionLostError) and "no Welcome within" in str(error)
    assert servicer.attempts == 2


def test_gives_up_after_max_reconnects() -> None:
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rt = RunnerThread(Recorder, port, max_reconnects=3, backoff=(0.01, 0.05))
    error = rt.join()
    assert isinstance(error, ConnectionLostError) and "after 3 reconnection attempts" in str(error)
    assert rt.runner.connections == 4


def test_no_reconnect_option(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port, reconnect=False)
    servicer.next_connection().close()  # the arena ends the stream
    assert isinstance(rt.join(), ConnectionLostError)
    assert servicer.attempts == 1


def test_stop_event_ends_the_runner(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    stop = threading.Event()
    thread = threading.Thread(
        target=atout.run, args=(Recorder, f"127.0.0.1:{port}", TOKEN), kwargs={"stop": stop}, daemon=True
    )
    thread.start()
    conn = servicer.next_connection()
    time.sleep(0.1)
    stopped = time.monotonic()
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert conn.ended.is_set()  # the bot closed its side of the stream...
    assert time.monotonic() - stopped < 0.5  # ...and did not need to wait for the cancel grace


def test_rejects_an_instance_or_a_bad_server() -> None:
    with pytest.raises(TypeError, match="not an instance"):
        Runner(Recorder(), "127.0.0.1:1", TOKEN)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="HOST:PORT"):
        Runner(Recorder, "localhost", TOKEN)


def _unused_port() -> int:
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_first_connection_to_nothing_fails_within_seconds_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bot started against an address where nothing listens used to retry for
    about 15 minutes; now it stops after ``first_connect_timeout`` (5 s) with one clear line.
    Its retries meanwhile say when it gives up, not "attempt 1 of 100"."""
    port = _unused_port()
    began = time.monotonic()
    rt = RunnerThread(Recorder, port, backoff=(0.2, 10.0), max_reconnects=100)  # atout-bot run's defaults
    error = rt.join(timeout=15)
    elapsed = time.monotonic() - began
    assert isinstance(error, NothingListensError) and isinstance(error, ConnectionLostError)
    assert str(error).startswith(f"nothing answers at 127.0.0.1:{port}: is the arena running?")
    assert 4.5 <= elapsed < 10, elapsed
    assert NothingListensError.exit_code == 2
    retries = [r.getMessage() for r in caplog.records if "reconnecting in" in r.getMessage()]
    assert retries and all("giving up 5 s after the first try" in m for m in retries), retries
    assert "attempt" not in caplog.text


def test_atout_bot_run_against_nothing_exits_2_with_one_line() -> None:
    import os
    import subprocess
    import sys

    def bot_run(server: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "atout.cli", "run", "random", "--server", server],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "ATOUT_TOKEN": "t"})

    port = _unused_port()
    began = time.monotonic()
    done = bot_run(f"127.0.0.1:{port}")
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - began < 15
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"atout-bot: nothing answers at 127.0.0.1:{port}: is the arena running?")
    assert "Traceback" not in done.stderr
    bad = bot_run("127.0.0.1:99999")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "atout-bot: error: --server '127.0.0.1:99999': the port must be from 1 to 65535 (see --help)"]


def test_after_a_connection_the_bot_keeps_reconnecting_past_the_first_timeout() -> None:
    """Only the first connection fails fast: an arena that goes away after a Welcome is
    waited for with the usual backoff."""
    servicer = FakeArena()
    server, port = start_server(servicer)
    rt = RunnerThread(Recorder, port, first_connect_timeout=0.2)
    conn = servicer.next_connection()
    conn.send(match_start=start())
    conn.send(decision=decision("r1"))
    conn.expect("action")  # welcomed and playing
    server.stop(grace=None)
    time.sleep(1.0)  # well past first_connect_timeout, attempts failing
    assert rt.thread.is_alive() and rt.error is None
    server, _ = start_server(servicer, port)
    try:
        conn2 = servicer.next_connection(timeout=10)
        conn2.send(decision=decision("r2"))
        assert conn2.expect("action").request_id == "r2"
        rt.stop()
    finally:
        server.stop(grace=None)


def test_a_bot_whose_act_always_raises_logs_one_traceback_then_a_line_per_decision(
    arena: tuple[FakeArena, int], caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Bot):
        def act(self, observation: Observation) -> str:
            raise KeyError("no such card")

    servicer, port = arena
    rt = RunnerThread(Broken, port)
    conn = servicer.next_connection()
    for n in range(1, 5):
        conn.send(decision=decision(f"r{n}"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        errors = [r for r in caplog.records
                  if r.levelno == logging.ERROR and "act() raised" in r.getMessage()]
        if len(errors) == 4:
            break
        time.sleep(0.05)
    assert len(errors) == 4
    first, *later = errors
    assert first.exc_info is not None and first.exc_info[0] is KeyError
    assert all(r.exc_info is None for r in later)  # no traceback again
    assert [r.getMessage().split("(")[-1].split(")")[0] for r in later] == [
        f"{n} decisions failed so far" for n in (2, 3, 4)]
    assert "act() raised again: KeyError: 'no such card'" in later[0].getMessage()
    assert caplog.text.count("Traceback") <= 1
    rt.stop()


# ------------------------------------------------------------------ batching


def test_hello_lists_batch_unless_turned_off(arena: tuple[FakeArena, int]) -> None:
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    assert list(servicer.next_connection().hello.features) == ["batch", "bundle"]
    rt.stop()
    rt = RunnerThread(Recorder, port, batch=False)
    assert list(servicer.next_connection().hello.features) == []
    rt.stop()


def test_an_arena_bundle_is_played_as_its_messages_in_order(arena: tuple[FakeArena, int]) -> None:
    """Each message of an ArenaBundle is handled as if it had come alone, in its order: a match
    starts, is asked, and ends within one bundle; another match's request beside it is answered;
    a nested bundle is ignored."""
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    messages = [
        pb.ArenaMessage(match_start=start("b1", seat=0)),
        pb.ArenaMessage(decision=decision("q1", "b1", seat=0)),
        pb.ArenaMessage(match_start=start("b2", seat=1)),
        pb.ArenaMessage(decision=decision("q2", "b2", seat=1)),
        pb.ArenaMessage(bundle=pb.ArenaBundle(messages=[pb.ArenaMessage(decision=decision("nested", "b2"))])),
    ]
    conn.send(bundle=pb.ArenaBundle(messages=messages))
    assert {conn.expect("action").request_id for _ in range(2)} == {"q1", "q2"}
    conn.send(bundle=pb.ArenaBundle(messages=[pb.ArenaMessage(match_end=end("b1", seat=0)),
                                              pb.ArenaMessage(decision=decision("q3", "b2", seat=1))]))
    assert conn.expect("action").request_id == "q3"
    conn.nothing("action")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and rt.runner.active_matches() != ["b2"]:
        time.sleep(0.02)
    assert rt.runner.active_matches() == ["b2"]
    rt.stop()
    calls = {b.match_id: [kind for kind, _ in b.calls] for b in Recorder.instances}
    assert calls == {"b1": ["start", "act", "end"], "b2": ["start", "act", "act"]}
    assert rt.runner.stats["bundles"] == 2 and rt.runner.stats["bundled"] == 7


def test_inline_is_read_from_the_bots_own_class(arena: tuple[FakeArena, int]) -> None:
    """A subclass of the (inline) random bot may think long: it runs on the pool unless it
    says inline = True itself."""
    from atout.bots import RandomBot

    class Mine(RandomBot):
        pass

    class MineQuick(RandomBot):
        inline = True

    servicer, port = arena
    for bot, inline in ((RandomBot, True), (Mine, False), (MineQuick, True), (Recorder, False)):
        rt = RunnerThread(bot, port)
        servicer.next_connection()
        assert rt.runner._dispatcher is not None and rt.runner._dispatcher._inline is inline, bot
        rt.stop()


def test_an_inline_bots_answers_to_a_bundle_go_as_one_action_batch(arena: tuple[FakeArena, int]) -> None:
    """An inline bot answers a bundle's requests on the reader thread: the answers are held
    until the bundle is handled, then sent as one ActionBatch (a lone answer as an Action)."""
    from atout.bots import RandomBot

    servicer, port = arena
    rt = RunnerThread(RandomBot, port)
    conn = servicer.next_connection()
    entries = [pb.ArenaMessage(decision=decision(f"i{i}", f"im{i % 3}", seat=i % 3)) for i in range(7)]
    conn.send(bundle=pb.ArenaBundle(messages=entries))
    assert {conn.expect("action").request_id for _ in range(7)} == {f"i{i}" for i in range(7)}
    conn.send(bundle=pb.ArenaBundle(messages=[pb.ArenaMessage(decision=decision("lone", "im0", seat=0)),
                                              pb.ArenaMessage(match_end=end("im1", seat=1))]))
    assert conn.expect("action").request_id == "lone"
    rt.stop()
    assert conn.action_batches == [[f"i{i}" for i in range(7)]]  # one batch; "lone" went alone


def test_a_decision_batch_is_played_as_its_requests(arena: tuple[FakeArena, int]) -> None:
    """Each request of a DecisionBatch goes to its own match's bot with its own deadline, once;
    a request sent again (alone or batched) is answered from memory."""
    servicer, port = arena
    rt = RunnerThread(Recorder, port)
    conn = servicer.next_connection()
    conn.send(match_start=start("m0", seat=0))
    requests = [decision(f"r{i}", f"m{i % 3}", seat=i % 3, deadline_ms=1000 + i) for i in range(6)]
    conn.send(decisions=pb.DecisionBatch(requests=requests))
    answered = {conn.expect("action").request_id for _ in requests}
    assert answered == {f"r{i}" for i in range(6)}
    conn.send(decisions=pb.DecisionBatch(requests=requests[:2]))  # re-sent after a reconnect
    assert {conn.expect("action").request_id for _ in range(2)} == {"r0", "r1"}
    conn.nothing("action")
    rt.stop()
    acts = {b.match_id: [obs for kind, obs in b.calls if kind == "act"] for b in Recorder.instances}
    assert sorted(acts) == ["m0", "m1", "m2"] and len(Recorder.instances) == 3
    for match_id, observations in acts.items():
        i = int(match_id[1:])
        assert [o.deadline_ms for o in observations] == [1000 + i, 1003 + i]  # in order, one bot a match
    assert rt.runner.stats["decision_batches"] == 2 and rt.runner.stats["batched_requests"] == 8


def _action(request_id: str) -> pb.BotMessage:
    return pb.BotMessage(action=pb.Action(request_id=request_id, match_id="m", action="pass"))


def test_answers_queued_together_go_in_one_action_batch() -> None:
    """The stream's writer takes what is queued when it is ready to write: several Actions make
    one ActionBatch (at most MAX_ACTION_BATCH), a lone one goes alone, other messages keep their
    place; without batch every message goes alone."""
    from atout.runner import _END, MAX_ACTION_BATCH, _Connection

    conn = _Connection(batch=True)
    assert conn.take() is None  # nothing queued
    conn.put(_action("a"))
    assert taken(conn).WhichOneof("kind") == "action"  # alone: written at once, as a plain Action
    for rid in ("b", "c", "d"):
        conn.put(_action(rid))
    conn.put(pb.BotMessage(pong=pb.Pong(nonce=7)))
    conn.put(_action("e"))
    batch = taken(conn)
    assert [a.request_id for a in batch.actions.actions] == ["b", "c", "d"]
    assert taken(conn).pong.nonce == 7
    assert taken(conn).action.request_id == "e"
    for i in range(MAX_ACTION_BATCH + 2):
        conn.put(_action(str(i)))
    conn.half_close()
    conn.put(_action("late"))  # after the half-close: dropped
    assert len(taken(conn).actions.actions) == MAX_ACTION_BATCH
    rest = [a.request_id for a in taken(conn).actions.actions]
    assert rest == [str(MAX_ACTION_BATCH), str(MAX_ACTION_BATCH + 1)]
    assert conn.take() is _END  # the end of the queue ends the stream
    assert conn.take() is None
    assert (conn.action_batches, conn.batched_actions) == (3, MAX_ACTION_BATCH + 5)

    plain = _Connection(batch=False)
    for rid in ("x", "y"):
        plain.put(_action(rid))
    plain.half_close()
    assert [taken(plain).action.request_id for _ in range(2)] == ["x", "y"]
    assert plain.take() is _END


def test_answers_from_pool_threads_reach_the_loop_in_order_with_few_wake_ups() -> None:
    """A bot that thinks on the pool hands its answers to the stream's event loop: every answer
    arrives, each thread's in its order, and answers that arrive together share one wake-up of
    the loop (one call_soon_threadsafe each was a third of a batched bot's CPU). Once the loop
    is closed, an answer is dropped, not raised into the bot's thread."""
    import asyncio
    import threading

    from atout.runner import _Connection

    threads, each = 4, 500
    wake_ups = [0]

    async def scenario() -> _Connection:
        conn = _Connection(batch=False)
        loop = asyncio.get_running_loop()
        conn.loop, conn.thread = loop, threading.get_ident()
        original = loop.call_soon_threadsafe

        def counting(*args: object) -> object:
            wake_ups[0] += 1
            return original(*args)  # type: ignore[arg-type]

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign, assignment]

        def answer(t: int) -> None:
            for i in range(each):
                conn.put_threadsafe(_action(f"{t}/{i}"))

        workers = [threading.Thread(target=answer, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        while any(w.is_alive() for w in workers) or len(conn.outgoing) < threads * each:
            await asyncio.sleep(0.001)
        return conn

    conn = asyncio.run(scenario())
    got = [m.action.request_id for m in conn.outgoing]
    assert len(got) == threads * each
    for t in range(threads):
        assert [r for r in got if r.startswith(f"{t}/")] == [f"{t}/{i}" for i in range(each)]
    assert 1 <= wake_ups[0] < threads * each
    conn.put_threadsafe(_action("late"))  # the loop is closed: dropped quietly
