"""A bot that holds its decisions on demand (``atout-bot run tests/api/pausing_bot.py:Pausing``),
for tests that must act while it is thinking: a random legal action at once, but while the file
``$ATOUT_TEST_PAUSE_FILE`` exists each decision waits (up to ``$ATOUT_TEST_PAUSE_S``, default 30 s)
for it to go away."""

from __future__ import annotations

import os
import time
from pathlib import Path

from atout import Bot, Observation


class Pausing(Bot):
    def act(self, observation: Observation) -> str:
        pause = Path(os.environ["ATOUT_TEST_PAUSE_FILE"])
        until = time.monotonic() + float(os.environ.get("ATOUT_TEST_PAUSE_S", "30"))
        while pause.exists() and time.monotonic() < until:
            time.sleep(0.02)
        return self.rng.choice(observation.legal_actions)
