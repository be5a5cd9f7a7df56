"""The runner's per-match bookkeeping (atout._dispatch), without a network."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import pytest

from atout import Bot, Observation
from atout._dispatch import MatchDispatcher
from atout.bots import RandomBot
from atout.v1 import atout_pb2 as pb


class InlineExecutor(Executor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def _decision(request_id: str, match: str = "m1") -> pb.ArenaMessage:
    obs = json.dumps({"game": "fool", "seat": 0, "players": 2, "hand": ["6h"]})
    return pb.ArenaMessage(
        decision=pb.DecisionRequest(
            request_id=request_id,
            match_id=match,
            game="fool",
            seat=0,
            observation_json=obs,
            legal_actions=["attack 6h", "take"],
            deadline_ms=1000,
        )
    )


def _dispatcher(factory: Callable[[], Bot], **kwargs: Any) -> tuple[MatchDispatcher, list[pb.BotMessage]]:
    sent: list[pb.BotMessage] = []
    return MatchDispatcher(factory, sent.append, InlineExecutor(), **kwargs), sent


def test_a_failing_factory_leaves_the_match_unanswered(caplog: pytest.LogCaptureFixture) -> None:
    def factory() -> Bot:
        raise RuntimeError("no model file")

    dispatcher, sent = _dispatcher(factory)
    dispatcher.handle(
        pb.ArenaMessage(match_start=pb.MatchStart(match_id="m1", game="fool", seat=0, players=2))
    )
    dispatcher.handle(_decision("r1"))
    assert sent == []
    assert "match m1 seat 0: could not start the bot" in caplog.text and "no model file" in caplog.text
    assert "no bot for this match, not answering" in caplog.text


def test_rejections_ask_the_bot_again_a_limited_number_of_times() -> None:
    class Stubborn(Bot):
        def act(self, observation: Observation) -> str:
            return "attack Kh"

        def on_rejection(self, observation: Observation, action: str, reason: str) -> str | None:
            return "attack Kh"

    dispatcher, sent = _dispatcher(Stubborn, max_rejection_retries=2)
    dispatcher.handle(_decision("r1"))
    for _ in range(5):
        rejection = pb.Rejection(request_id="r1", match_id="m1", action="attack Kh", reason="not in hand")
        dispatcher.handle(pb.ArenaMessage(rejection=rejection))
    assert [m.action.action for m in sent] == ["attack Kh"] * 3


def test_idle_matches_are_forgotten(caplog: pytest.LogCaptureFixture) -> None:
    dispatcher, _ = _dispatcher(RandomBot, idle_timeout=0.0)
    dispatcher.handle(_decision("r1", "old"))
    assert dispatcher.active_matches() == ["old"]
    dispatcher.handle(
        pb.ArenaMessage(match_start=pb.MatchStart(match_id="new", game="fool", seat=0, players=2))
    )
    assert dispatcher.active_matches() == ["new"]
    assert "match old: forgetting it" in caplog.text


def test_idle_matches_are_looked_for_at_most_once_per_quarter_of_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("atout._dispatch.time.monotonic", lambda: clock[0])
    dispatcher, _ = _dispatcher(RandomBot, idle_timeout=40.0)

    def start(match_id: str) -> None:
        dispatcher.handle(pb.ArenaMessage(match_start=pb.MatchStart(match_id=match_id, game="fool", seat=0,
                                                                     players=2)))

    dispatcher.handle(_decision("r1", "old"))  # t = 1000
    start("a")  # the first start looks: nothing idle
    clock[0] = 1038.0
    start("b")  # looks: "old" and "a" silent for 38 s, under the 40 s
    clock[0] = 1045.0
    start("c")  # 7 s since the last look: no look, though "old" and "a" are idle now
    assert sorted(dispatcher.active_matches()) == ["a", "b", "c", "old"]
    clock[0] = 1048.0
    start("d")  # 10 s since the last look: looks, and forgets the two idle matches
    assert sorted(dispatcher.active_matches()) == ["b", "c", "d"]


def test_bot_rng_is_seeded_by_match_and_seat() -> None:
    def picks(match: str) -> list[str]:
        dispatcher, sent = _dispatcher(RandomBot)
        for i in range(30):
            dispatcher.handle(_decision(f"r{i}", match))
        return [m.action.action for m in sent]

    assert picks("a") == picks("a")  # the same match and seat replay the same choices
    assert picks("a") != picks("b")


def test_unreadable_observation_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="atout")
    dispatcher, sent = _dispatcher(RandomBot)
    msg = _decision("r1")
    msg.decision.observation_json = "{not json"
    dispatcher.handle(msg)
    assert sent == [] and "unreadable observation" in caplog.text


def test_closed_dispatcher_ignores_messages() -> None:
    dispatcher, sent = _dispatcher(RandomBot)
    dispatcher.close()
    dispatcher.handle(_decision("r1"))
    assert sent == [] and dispatcher.active_matches() == []
    with pytest.raises(ValueError, match="not a match message"):
        dispatcher.handle(pb.ArenaMessage(ping=pb.Ping(nonce=1)))


def test_an_inline_bot_is_called_on_the_readers_thread_and_others_on_the_pool() -> None:
    """Bot.inline: the dispatcher calls the bot on the thread that handles the message (the
    stream's reader); a bot that is not inline is handed to the executor's threads."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    threads: list[int] = []

    class Quick(RandomBot):
        def act(self, observation: Observation) -> str:
            threads.append(threading.get_ident())
            return super().act(observation)

    class Slow(Quick):
        inline = False

    assert RandomBot.inline and Quick.inline and not Bot.inline
    with ThreadPoolExecutor(2) as pool:
        for bot, inline in ((Quick, True), (Slow, False)):
            sent: list[pb.BotMessage] = []
            dispatcher = MatchDispatcher(bot, sent.append, pool, inline=inline)
            threads.clear()
            for i in range(3):
                dispatcher.handle(_decision(f"r{i}", f"m{i}"))
            pool.submit(lambda: None).result(5)
            deadline = time.monotonic() + 5
            while len(sent) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(sent) == 3
            assert (set(threads) == {threading.get_ident()}) is inline, (bot, threads)
