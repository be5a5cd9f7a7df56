"""The bot of ``bench/practice.py``: a random legal action, after writing ``<match id> <unix
time>`` to ``$ATOUT_BENCH_STAMP_FILE`` (when the decision request reached it)."""

from __future__ import annotations

import os
import time

from atout import Bot, Observation


class Stamp(Bot):
    def act(self, observation: Observation) -> str:
        with open(os.environ["ATOUT_BENCH_STAMP_FILE"], "a") as stamps:
            stamps.write(f"{observation.match_id} {time.time():.6f}\n")
        return self.rng.choice(observation.legal_actions)
