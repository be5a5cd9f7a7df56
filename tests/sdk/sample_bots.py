"""Bots that misbehave, for the validate and match tests (loaded as path/to/sample_bots.py:Class)."""

from __future__ import annotations

import random
import time

from atout import Bot, Observation


class FirstLegal(Bot):
    def act(self, observation: Observation) -> str:
        return observation.legal_actions[0]


class Raising(Bot):
    """Raises on its third decision of every game."""

    def on_match_start(self, match: object) -> None:
        self.decisions = 0

    def act(self, observation: Observation) -> str:
        self.decisions += 1
        if self.decisions == 3:
            raise RuntimeError("the third decision always fails")
        return observation.legal_actions[0]


class Illegal(Bot):
    """Answers an action that is never legal on its second decision."""

    def on_match_start(self, match: object) -> None:
        self.decisions = 0

    def act(self, observation: Observation) -> str:
        self.decisions += 1
        return "fly away" if self.decisions == 2 else observation.legal_actions[-1]


class Slow(Bot):
    """Thinks 30 ms on every decision."""

    def act(self, observation: Observation) -> str:
        time.sleep(0.03)
        return observation.legal_actions[0]


class Unseeded(Bot):
    """Draws from the module's random generator instead of self.rng: not reproducible."""

    def act(self, observation: Observation) -> str:
        return random.choice(observation.legal_actions)
