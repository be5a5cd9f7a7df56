"""Example bots: a random bot for every game, and a simple heuristic bot per game."""

from __future__ import annotations

from ..bot import Bot, Observation


class RandomBot(Bot):
    """Plays a uniformly random legal action. Works for every game."""

    def act(self, observation: Observation) -> str:
        return self.rng.choice(observation.legal_actions)


__all__ = ["Bot", "RandomBot"]
