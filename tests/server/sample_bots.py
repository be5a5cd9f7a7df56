"""Bots for the game-server tests, run by ``atout-bot run tests/server/sample_bots.py:NAME``.

Each appends what happens to it, one JSON object a line, to the file ``$ATOUT_TEST_EVENTS``
(when set), so that a test can see what a bot in another process saw.
"""

from __future__ import annotations

import json
import os
import time

from atout import Bot, MatchInfo, MatchResult, Observation


def record(event: str, **data: object) -> None:
    path = os.environ.get("ATOUT_TEST_EVENTS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"event": event, "pid": os.getpid(), **data}) + "\n")


class FirstLegal(Bot):
    """Answers the first legal action."""

    def on_match_start(self, match: MatchInfo) -> None:
        record(
            "match_start", match_id=match.match_id, game=match.game, seat=match.seat, options=match.options
        )

    def act(self, observation: Observation) -> str:
        record("act", match_id=observation.match_id, hand=observation.get("hand"))
        return observation.legal_actions[0]

    def on_match_end(self, result: MatchResult) -> None:
        record("match_end", match_id=result.match_id, scores=result.scores, reason=result.reason)


class LastLegal(FirstLegal):
    """Answers the last legal action (to tell it apart from FirstLegal)."""

    def act(self, observation: Observation) -> str:
        record("act", match_id=observation.match_id)
        return observation.legal_actions[-1]


class IllegalFirst(FirstLegal):
    """Answers something illegal first; given the arena's reason, answers the first legal action."""

    def act(self, observation: Observation) -> str:
        record("act", match_id=observation.match_id)
        return "play 1x"

    def on_rejection(self, observation: Observation, action: str, reason: str) -> str | None:
        record("rejection", match_id=observation.match_id, action=action, reason=reason)
        return observation.legal_actions[0]


class Slow(FirstLegal):
    """Thinks ``$ATOUT_TEST_SLEEP_S`` seconds (default 30) before the first legal action."""

    def act(self, observation: Observation) -> str:
        record("act", match_id=observation.match_id)
        time.sleep(float(os.environ.get("ATOUT_TEST_SLEEP_S", "30")))
        return observation.legal_actions[0]
