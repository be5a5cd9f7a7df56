"""Example bots: a random bot for every game, and a simple heuristic bot per game.

``BOTS`` names the ones ``atout-bot run NAME`` accepts: ``random`` and ``heuristic`` (which
plays each game with that game's heuristic bot).
"""

from __future__ import annotations

from ..bot import Bot, MatchInfo, MatchResult, Observation
from .fool import FoolHeuristicBot
from .merde import MerdeHeuristicBot
from .regicide import RegicideHeuristicBot
from .tiercon import TierconHeuristicBot


class RandomBot(Bot):
    """Plays a uniformly random legal action. Works for every game."""

    inline = True  # a random choice: run on the stream's thread

    def act(self, observation: Observation) -> str:
        return self.rng.choice(observation.legal_actions)


# game id -> that game's heuristic bot
HEURISTICS: dict[str, type[Bot]] = {
    "merde": MerdeHeuristicBot,
    "tiercon": TierconHeuristicBot,
    "regicide": RegicideHeuristicBot,
    "fool": FoolHeuristicBot,
}


def heuristic_bot_class(game: str) -> type[Bot]:
    """The heuristic bot class of ``game``."""
    try:
        return HEURISTICS[game]
    except KeyError:
        raise ValueError(f"no heuristic bot for game {game!r}; games: {', '.join(HEURISTICS)}") from None


class HeuristicBot(Bot):
    """Plays every game: hands each match to that game's heuristic bot (``MerdeHeuristicBot``...)."""

    def __init__(self) -> None:
        super().__init__()
        self._delegate: Bot | None = None

    def _for(self, game: str) -> Bot:
        if self._delegate is None:
            delegate = heuristic_bot_class(game)()
            delegate.rng = self.rng
            delegate.match = self.match
            if self.match is not None:
                delegate.on_match_start(self.match)
            self._delegate = delegate
        return self._delegate

    def on_match_start(self, match: MatchInfo) -> None:
        self._for(match.game)

    def act(self, observation: Observation) -> str:
        game = self.match.game if self.match is not None else observation.game
        return self._for(game).act(observation)

    def on_rejection(self, observation: Observation, action: str, reason: str) -> str | None:
        return self._delegate.on_rejection(observation, action, reason) if self._delegate else None

    def on_match_end(self, result: MatchResult) -> None:
        if self._delegate is not None:
            self._delegate.on_match_end(result)


BOTS: dict[str, type[Bot]] = {"random": RandomBot, "heuristic": HeuristicBot}


__all__ = [
    "BOTS",
    "HEURISTICS",
    "Bot",
    "FoolHeuristicBot",
    "HeuristicBot",
    "MerdeHeuristicBot",
    "RandomBot",
    "RegicideHeuristicBot",
    "TierconHeuristicBot",
    "heuristic_bot_class",
]
