"""Bots of the protocol tests (``atout-bot run tests/protocol/protocol_bots.py:NAME``)."""

from __future__ import annotations

import json
import os
import secrets
import time
from typing import Any

from atout import Bot, MatchResult, Observation


class Journal(Bot):
    """A random legal action after ``$ATOUT_TEST_THINK_S`` seconds; every hook it is called
    writes one JSON line to ``$ATOUT_TEST_JOURNAL``: start, act and end, with the match and seat."""

    def _write(self, **event: Any) -> None:
        if not hasattr(self, "tag"):
            self.tag = secrets.token_hex(6)  # this instance (a new run gets a new bot)
        line = json.dumps({"pid": os.getpid(), "bot": self.tag, "at": time.time(), **event})
        with open(os.environ["ATOUT_TEST_JOURNAL"], "a") as journal:
            journal.write(line + "\n")

    def on_match_start(self, match: Any) -> None:
        self._write(event="start", match=match.match_id, seat=match.seat)

    def act(self, observation: Observation) -> str:
        self._write(event="act", match=observation.match_id, seat=observation.raw["seat"])
        time.sleep(float(os.environ.get("ATOUT_TEST_THINK_S", "0.05")))
        return self.rng.choice(observation.legal_actions)

    def on_match_end(self, result: MatchResult) -> None:
        self._write(event="end", match=result.match_id, seat=result.seat, reason=result.reason)
