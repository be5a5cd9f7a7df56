"""Behaviour docs/protocol.md promises a bot author, on the real game server (with Redis and
a worker-side DecisionClient): keep-alives (a silent bot is closed with ``keepalive_timeout``; a
Pong's nonce is not checked), ``Action.match_id`` optional, answers matched loosely by the
engine, a wrong match id rejected."""

from __future__ import annotations

import threading
import time

import pytest
from gateway_helpers import RawBot, engine_request, wait_until

from atout.v1 import atout_pb2 as pb

pytestmark = pytest.mark.timeout(60)
KEEPALIVE_S = 1.0  # tests/conftest.py TEST_KEEPALIVE_MS


def test_a_silent_bot_is_closed_with_keepalive_timeout_and_a_wrong_pong_nonce_is_fine(
    game_server, make_bot
) -> None:
    address = game_server.info["address"]
    _, silent_token = make_bot("silent")
    _, sloppy_token = make_bot("sloppy")
    silent, sloppy = RawBot(address, silent_token), RawBot(address, sloppy_token)
    try:
        silent.connect()
        sloppy.connect()
        began = time.monotonic()
        seen: list[str] = []
        done = threading.Event()

        def pong_wrongly() -> None:  # every Ping answered with a nonce that is not its own
            while not done.is_set():
                try:
                    message = sloppy.recv(timeout=0.5, skip=())
                except AssertionError:
                    continue
                if message is None:
                    seen.append("end")
                    return
                kind = message.WhichOneof("kind")
                seen.append(kind if kind != "error" else f"error {message.error.code}")
                if kind == "ping":
                    sloppy.send(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce + 1000)))

        thread = threading.Thread(target=pong_wrongly, daemon=True)
        thread.start()
        error = silent.recv(timeout=10 * KEEPALIVE_S)  # pings skipped
        closed_after = time.monotonic() - began
        assert error is not None and error.error.code == "keepalive_timeout", error
        assert "no message from the bot" in error.error.message
        assert silent.recv() is None  # the stream ended after the Error
        assert 2.5 * KEEPALIVE_S <= closed_after <= 6 * KEEPALIVE_S, closed_after  # 3 intervals, checked each
        time.sleep(KEEPALIVE_S)
        done.set()
        thread.join(2)
        print(f"\nsilent bot closed after {closed_after:.1f} s (keep-alive {KEEPALIVE_S} s); "
              f"the sloppy one got {seen.count('ping')} pings and stayed")
        assert seen.count("ping") >= 3 and not any(s.startswith("error") or s == "end" for s in seen), seen
    finally:
        silent.close()
        sloppy.close()


def test_an_answer_without_match_id_and_spelled_loosely_is_accepted(
    game_server, make_bot, decisions
) -> None:
    info, token = make_bot("loose")
    bot = RawBot(game_server.info["address"], token)
    try:
        bot.connect()
        wait_until(lambda: decisions.is_connected(info.bot_id), what="presence")
        rejections: list[pb.Rejection] = []

        def answer() -> None:
            request = bot.next().decision
            assert "bid 1" in request.legal_actions
            # a wrong match id: rejected, and the request stays open
            bot.send(pb.BotMessage(action=pb.Action(request_id=request.request_id, match_id="other",
                                                    action="bid 1")))
            rejections.append(bot.next().rejection)
            # no match id, odd spacing and case: the engine takes it as "bid 1"
            bot.send(pb.BotMessage(action=pb.Action(request_id=request.request_id, action="  BID 1 ")))

        thread = threading.Thread(target=answer)
        thread.start()
        decision = decisions.request(info.bot_id, "m-loose", deadline_ms=5000,
                                     **engine_request(game="merde", players=3))
        thread.join(5)
        assert decision.ok and decision.action == "  BID 1 " and decision.rejected == ()
        assert rejections and "belongs to match 'm-loose', not 'other'" in rejections[0].reason
    finally:
        bot.close()
