"""Example bots: a random bot for every game, a simple heuristic bot per game, and search bots.

``BOTS`` names the ones ``atout-bot run NAME`` accepts: ``random``, ``heuristic`` (which plays
each game with that game's heuristic bot), ``pimc`` and ``ismcts`` (:mod:`atout.search`). A
name may take parameters after a colon, ``pimc:worlds=64,rollout=heuristic``:
:func:`bot_factory` reads such a spec.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..bot import Bot, MatchInfo, MatchResult, Observation
from ..loading import BotLoadError
from ..search import IsmctsBot, PimcBot, SearchBot
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


BOTS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "pimc": PimcBot,
    "ismcts": IsmctsBot,
}


def bot_factory(spec: str) -> Callable[[], Bot]:
    """A built-in bot's spec -> a zero-argument factory of such bots.

    ``spec`` is a name of :data:`BOTS`, alone (``"pimc"``) or with parameters after a colon,
    comma-separated ``key=value`` pairs (``"pimc:worlds=64,rollout=heuristic"``,
    ``"ismcts:iterations=2000"``); the keys are the class's ``PARAMS``. One bot is created at
    once, so a bad spec fails here. Raises :class:`atout.loading.BotLoadError` with one line that
    lists the allowed keys (a bot of one's own, ``module:Class``, is :func:`atout.loading.load_bot`'s).
    """
    name, _, text = spec.partition(":")
    cls = BOTS.get(name)
    if cls is None:
        raise BotLoadError(f"bot {spec!r}: {name!r} is not a built-in bot ({', '.join(BOTS)})")
    params, takes = {}, f"{name} takes no parameters"
    if issubclass(cls, SearchBot):
        params, takes = {p.name: p for p in cls.PARAMS}, cls.params_text()
    values: dict[str, object] = {}
    for item in text.split(",") if text.strip() else ():
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key:
            raise BotLoadError(f"bot {spec!r}: {item.strip()!r} is not key=value; {takes}")
        if key not in params:
            raise BotLoadError(f"bot {spec!r}: unknown key {key!r}; {takes}")
        if key in values:
            raise BotLoadError(f"bot {spec!r}: {key!r} is given twice; {takes}")
        try:
            values[key] = params[key].parse(value)
        except ValueError as exc:
            raise BotLoadError(f"bot {spec!r}: {exc}; {takes}") from None
    factory: Callable[[], Bot] = functools.partial(cls, **values) if values else cls
    try:
        factory()
    except ValueError as exc:
        raise BotLoadError(f"bot {spec!r}: {exc}") from None
    return factory


__all__ = [
    "BOTS",
    "HEURISTICS",
    "Bot",
    "FoolHeuristicBot",
    "HeuristicBot",
    "IsmctsBot",
    "MerdeHeuristicBot",
    "PimcBot",
    "RandomBot",
    "RegicideHeuristicBot",
    "TierconHeuristicBot",
    "bot_factory",
    "heuristic_bot_class",
]
