"""The nemesis rehearsal's bots: random play, with a think time (``ATOUT_REHEARSAL_THINK_MS``).

The arena got fast enough that an unpaced tournament ended before the nemesis's last steps
(a rehearsal needs matches in flight at every step); bots that think a few milliseconds, as
real ones do, pace it without making the arena slower. Run as ``atout-bot run
deploy/paced_bot.py:PacedRandom``.
"""

from __future__ import annotations

import os
import time

from atout import Bot, Observation


class PacedRandom(Bot):
    """A uniformly random legal action, after ``ATOUT_REHEARSAL_THINK_MS`` milliseconds."""

    def __init__(self) -> None:
        super().__init__()
        self.think_s = float(os.environ.get("ATOUT_REHEARSAL_THINK_MS", "0")) / 1000

    def act(self, observation: Observation) -> str:
        if self.think_s > 0:
            time.sleep(self.think_s)
        return self.rng.choice(observation.legal_actions)
