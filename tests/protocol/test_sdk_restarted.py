"""The Python SDK's side of a match restarted from its seed: a MatchStart after the MatchEnd
("restarted") of the same match id is a new run, played by a fresh bot."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from atout import Bot, MatchResult, Observation
from atout._dispatch import MatchDispatcher
from atout.v1 import atout_pb2 as pb


class InlineExecutor(Executor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def decision(request_id: str) -> pb.ArenaMessage:
    obs = json.dumps({"game": "fool", "seat": 0, "players": 2, "hand": ["6h"]})
    return pb.ArenaMessage(decision=pb.DecisionRequest(
        request_id=request_id, match_id="m1", game="fool", seat=0, observation_json=obs,
        legal_actions=["attack 6h"], deadline_ms=1000))


def test_a_match_started_again_after_its_restarted_end_is_played_by_a_fresh_bot() -> None:
    events: list[str] = []

    made = iter(range(1, 100))

    class Recorder(Bot):  # numbered as made (an id() may be reused once the old bot is gone)
        def __init__(self) -> None:
            super().__init__()
            self.number = next(made)

        def on_match_start(self, match: Any) -> None:
            events.append(f"start {self.number}")

        def act(self, observation: Observation) -> str:
            events.append(f"act {self.number}")
            return observation.legal_actions[0]

        def on_match_end(self, result: MatchResult) -> None:
            events.append(f"end {result.reason}")

    sent: list[pb.BotMessage] = []
    dispatcher = MatchDispatcher(Recorder, sent.append, InlineExecutor())
    start = pb.ArenaMessage(match_start=pb.MatchStart(match_id="m1", game="fool", seat=0, players=2))
    dispatcher.handle(start)
    dispatcher.handle(decision("r1"))
    dispatcher.handle(pb.ArenaMessage(match_end=pb.MatchEnd(match_id="m1", seat=0, scores=[0, 0],
                                                            ranking=[0, 0], reason="restarted")))
    dispatcher.handle(decision("r-stale"))  # a request of the ended run: ignored
    dispatcher.handle(start)
    dispatcher.handle(decision("r2"))
    assert [e.split()[0] for e in events] == ["start", "act", "end", "start", "act"]
    assert events[2] == "end restarted"
    assert events[0] != events[3], "the new run got the old run's bot"
    assert [m.action.request_id for m in sent] == ["r1", "r2"]
    assert dispatcher.active_matches() == ["m1"]
