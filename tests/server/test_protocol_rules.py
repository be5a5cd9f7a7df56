"""The protocol's rules that a bot written from docs/protocol.md alone had to guess (issue 35):
each one as the game server really behaves, on a real game server with bare gRPC streams
(gateway_helpers.RawBot) and a worker's DecisionClient. Real Redis, real gRPC, loopback only."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from gateway_helpers import RawBot, engine_request, wait_until

from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc
from atout_arena.core.relay import MAX_REJECTIONS
from atout_arena.core.vocabulary import Fault
from atout_workers.decisions import Decision

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def address(game_server) -> str:
    return game_server.info["address"]


def asked(
    decisions, bot_id: str, match_id: str, deadline_ms: int, **request: Any
) -> tuple[threading.Thread, dict]:
    """A worker asks ``bot_id`` a decision (in a thread): the thread and {"decision": ...} once done."""
    out: dict[str, Decision] = {}

    def run() -> None:
        out["decision"] = decisions.request(bot_id, match_id, deadline_ms=deadline_ms,
                                            **(request or engine_request()))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def action(request: pb.DecisionRequest, text: str, match_id: str | None = None,
           request_id: str | None = None) -> pb.BotMessage:
    return pb.BotMessage(action=pb.Action(
        request_id=request.request_id if request_id is None else request_id,
        match_id=request.match_id if match_id is None else match_id, action=text,
    ))


def connected_bot(address: str, token: str, decisions, bot_id: str) -> RawBot:
    bot = RawBot(address, token)
    bot.connect()
    wait_until(lambda: decisions.is_connected(bot_id), what="presence")
    return bot


def test_rejected_answers_are_free_and_a_legal_one_after_them_is_played(address, make_bot, decisions) -> None:
    """Points 1 and 4: engine Rejections while the deadline lasts, and the game server's own
    (wrong match_id, unknown request id, too long), then a legal answer: the decision is the
    bot's, with no fault (the match loop charges none for rejected answers:
    tests/workers/test_match.py)."""
    info, token = make_bot()
    bot = connected_bot(address, token, decisions, info.bot_id)
    try:
        thread, out = asked(decisions, info.bot_id, "m-free", 10_000)
        request = bot.next().decision
        for text in ("play 1x", "bid 99", "nonsense"):
            bot.send(action(request, text))
            rejection = bot.next().rejection
            assert (rejection.code, rejection.final, rejection.action) == ("illegal", False, text)
        server_side = [
            (action(request, request.legal_actions[0], match_id="m-other"), "wrong_match"),
            (action(request, request.legal_actions[0], request_id="no-such-id"), "unknown_request"),
            (action(request, "x" * 300), "too_long"),
        ]
        for message, code in server_side:
            bot.send(message)
            rejection = bot.next().rejection
            assert (rejection.code, rejection.final) == (code, False), rejection
        bot.send(action(request, request.legal_actions[-1]))
        thread.join(10)
        decision = out["decision"]
        assert decision.ok and decision.fault is None and decision.action == request.legal_actions[-1]
        # the engine's three are recorded (free); the game server's never reached the worker
        assert [a for a, _ in decision.rejected] == ["play 1x", "bid 99", "nonsense"]
    finally:
        bot.close()


def test_the_eighth_rejected_answer_gets_a_final_rejection_and_later_answers_a_decided_one(
    address, make_bot, decisions
) -> None:
    """Point 2: every rejected answer gets its Rejection, the 8th included, which says that the
    decision is over (``final``: the fallback played, one ``illegal`` fault); a legal answer
    after it is not ignored silently: it gets a Rejection ``decided``."""
    info, token = make_bot()
    bot = connected_bot(address, token, decisions, info.bot_id)
    try:
        started = time.perf_counter()
        thread, out = asked(decisions, info.bot_id, "m-eight", 20_000)
        request = bot.next().decision
        finals = []
        for i in range(MAX_REJECTIONS):
            bot.send(action(request, f"junk {i}"))
            rejection = bot.next().rejection
            assert rejection.code == "illegal" and rejection.action == f"junk {i}"
            finals.append(rejection.final)
        assert finals == [False] * (MAX_REJECTIONS - 1) + [True]
        thread.join(10)
        decision = out["decision"]
        assert decision.fault == Fault.ILLEGAL and len(decision.rejected) == MAX_REJECTIONS
        assert time.perf_counter() - started < 10  # at once, not at the 20 s deadline
        bot.send(action(request, request.legal_actions[0]))
        late = bot.next().rejection
        assert (late.code, late.final, late.request_id) == ("decided", False, request.request_id)
    finally:
        bot.close()


def test_a_request_whose_deadline_passes_while_the_bot_is_away_is_sent_again(
    address, make_bot, decisions
) -> None:
    """Point 6: the bot drops its stream with a request open and comes back (within the
    reconnect grace) after the request's deadline: the request is sent again on the new stream
    with its whole time, and a legal answer then is the bot's decision, no fault."""
    info, token = make_bot()
    bot = connected_bot(address, token, decisions, info.bot_id)
    thread, out = asked(decisions, info.bot_id, "m-away", 1000)
    first = bot.next().decision
    bot.close()
    time.sleep(2.0)  # the request's 1 s passes while the bot is away
    bot = RawBot(address, token)
    try:
        bot.connect()
        again = bot.next(skip=("ping", "match_start")).decision
        assert again.deadline_ms == 1000 and again.legal_actions == first.legal_actions
        bot.answer(again, again.legal_actions[-1])
        thread.join(10)
        decision = out["decision"]
        assert decision.ok and decision.fault is None and decision.action == again.legal_actions[-1]
        assert again.request_id == first.request_id  # the same request, not a new one
    finally:
        bot.close()


def test_error_closes_says_whether_the_stream_ends(address, make_bot) -> None:
    """Point 8: Error.closes, so that no client reads Error.message."""
    _, token = make_bot()
    bot = RawBot(address, token)
    try:
        bot.connect()
        bot.send(pb.BotMessage())  # empty: bad_message, the stream goes on
        error = bot.next().error
        assert (error.code, error.closes) == ("bad_message", False)
        bot.send(pb.BotMessage(hello=pb.Hello(protocol_version=1)))  # a second Hello: goes on
        error = bot.next().error
        assert (error.code, error.closes) == ("bad_message", False)
        bot.send(pb.BotMessage(actions=pb.ActionBatch()))  # an empty ActionBatch: goes on
        error = bot.next().error
        assert (error.code, error.closes) == ("bad_message", False)
        bot.send(pb.BotMessage(ping=pb.Ping(nonce=5)))
        assert bot.next().pong.nonce == 5
    finally:
        bot.close()
    for first, code in [(pb.BotMessage(ping=pb.Ping(nonce=1)), "bad_message"),
                        (pb.BotMessage(hello=pb.Hello(protocol_version=2)), "unsupported_version")]:
        bot = RawBot(address, token)
        try:
            bot.send(first)
            error = bot.next().error
            assert (error.code, error.closes) == (code, True)
            assert bot.recv() is None  # the call ended
        finally:
            bot.close()


@pytest.mark.parametrize(("version", "ok"), [
    ("v1.2 beta", True),  # a space inside
    ("é" * 64, True),  # 64 code points (128 bytes of UTF-8)
    ("版本 ✓ α-β", True),  # any script, symbols
    ("  padded  ", True),  # leading and trailing spaces are dropped
    ("é" * 65, False),  # 65 code points
    ("v1\t2", False),  # a tab
    ("v1\t", False),  # a trailing tab too
    ("v1\n", False),
    ("v1\u00a0x", False),  # a space other than the ASCII space
    ("v1\u200bx", False),  # a format character
])
def test_hello_version_is_64_printable_code_points(address, make_bot, version: str, ok: bool) -> None:
    """Point 7: at most 64 code points (not bytes), each printable: Unicode and the space are
    allowed; tab, newline, other control or format characters and other spaces are refused."""
    _, token = make_bot()
    bot = RawBot(address, token)
    try:
        bot.send(pb.BotMessage(hello=pb.Hello(protocol_version=1, version=version)))
        message = bot.next()
        if ok:
            assert message.WhichOneof("kind") == "welcome", message
        else:
            assert message.error.code == "bad_message" and message.error.closes, message
    finally:
        bot.close()


def test_the_lowercase_bearer_scheme_is_accepted(address, make_bot) -> None:
    """Point 9: the scheme is case-insensitive (``bearer``, ``BEARER``)."""
    _, token = make_bot()
    for scheme in ("bearer", "BEARER"):
        bot = RawBot(address, token, md=(("authorization", f"{scheme} {token}"),))
        try:
            bot.connect()
        finally:
            bot.close()


def test_list_games_spells_choices_in_json(address) -> None:
    """Point 9: a boolean option's choices read ``false or true`` (JSON), as ``choices_json``."""
    with grpc.insecure_channel(address) as channel:
        games = pb_grpc.GamesStub(channel).ListGames(pb.ListGamesRequest(), timeout=5).games
    options = {(g.id, o.name): o for g in games for o in g.options}
    booleans = [o for o in options.values() if list(o.choices_json) == ["false", "true"]]
    assert booleans and all(o.allowed == "false or true" for o in booleans)
    for option in options.values():
        assert "True" not in option.allowed and "False" not in option.allowed and "'" not in option.allowed
        if option.choices_json:
            assert option.allowed == " or ".join(option.choices_json)


def test_protocol_md_lists_the_language_options_the_proto_sets() -> None:
    """Point 9: exactly the file options of atout.proto, named in docs/protocol.md's sentence."""
    proto = (ROOT / "proto/atout/v1/atout.proto").read_text()
    doc = (ROOT / "docs/protocol.md").read_text()
    options = set(re.findall(r"^option (\w+) =", proto, re.M))
    sentence = re.search(r"the file sets ([^)]*)\)", doc)
    assert sentence is not None
    assert set(re.findall(r"`(\w+)`", sentence.group(1))) == options


def test_beat_names_the_attack_card_then_the_covering_card() -> None:
    """Point 3: in fool's ``beat C C`` the first card is an uncovered attack card on the table,
    the second the defender's card covering it."""
    import random

    from atout.games import new_game

    game = new_game("fool", players=2)
    seen = 0
    for seed in range(20):
        state = game.new_state(seed=seed)
        rng = random.Random(seed)
        while not state.is_terminal and seen < 50:
            legal = state.legal_actions()
            beats = [a for a in legal if a.startswith("beat ")]
            if beats:
                assert state.current_player is not None
                obs = state.observation(state.current_player)
                uncovered = {pair[0] for pair in obs["table"] if len(pair) == 1 or pair[1] is None}
                for beat in beats:
                    _, attack, cover = beat.split()
                    assert attack in uncovered and cover in obs["hand"], (beat, obs["table"], obs["hand"])
                seen += 1
            state.apply(rng.choice(legal))
    assert seen
