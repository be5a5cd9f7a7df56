"""Numbers for learning: a fixed action index space and information-state tensors per game.

>>> from atout.encoding import encoding_for
>>> enc = encoding_for("merde", players=4)
>>> enc.index("play Qh") == enc.actions.index("play Qh")
True

``encoding_for(game, players, **options)`` (or ``encoding_for(a_game)``) gives the game's
:class:`Encoding`: ``actions``, every action any seat can ever take at this seat count and
options, in a fixed documented order; ``index``/``action``/``mask`` between them and indices;
``tensor(observation)``, the information-state tensor of one seat's observation (what it holds,
every card seen and who played it, the trick, bids and announcements, trump, scores, whose turn,
the phase), relative to that seat (seat offset 0 is the observer); and
``observation_tensor(observation)``, the current view only. Both read the observation dict
alone: two states a seat cannot tell apart give it the same tensors. Pure Python, no I/O.
docs/learning.md lists each game's actions and sections.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..games import Game, new_game
from ._games import LAYOUTS
from ._parts import Part, View


class Encoding:
    """The action space and tensors of one game at one seat count and options."""

    def __init__(self, game: Game[Any]) -> None:
        self.game_id: str = game.id
        self.players: int = game.players
        self.options: dict[str, Any] = dict(game.options)
        layout = LAYOUTS[game.id](game)
        self.actions: tuple[str, ...] = layout.actions
        self.deck: tuple[str, ...] = layout.deck
        self._index = {action: i for i, action in enumerate(self.actions)}
        self._card_index = {card: i for i, card in enumerate(self.deck)}
        self._info: tuple[Part, ...] = tuple(part for part in layout.parts if part.info)
        self._obs: tuple[Part, ...] = tuple(part for part in layout.parts if part.obs)
        self.sections: tuple[tuple[str, int], ...] = tuple((s.name, s.size) for s in self._info)
        self.observation_sections: tuple[tuple[str, int], ...] = tuple((s.name, s.size) for s in self._obs)
        self.size: int = sum(size for _, size in self.sections)
        self.observation_size: int = sum(size for _, size in self.observation_sections)
        # The largest value each entry can take (every entry is at least 0); math.inf for the
        # few that have no bound (régicide's scores and carried points).
        self.high: tuple[float, ...] = tuple(h for s in self._info for h in [s.high] * s.size)
        self.observation_high: tuple[float, ...] = tuple(h for s in self._obs for h in [s.high] * s.size)

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items() if k != "players")
        return f"encoding_for({self.game_id!r}, players={self.players}{opts})"

    def index(self, action: str) -> int:
        """The index of ``action``; ``ValueError`` when it is not in this game's action space."""
        try:
            return self._index[action]
        except (KeyError, TypeError):
            raise ValueError(
                f"action {action!r} is not in {self.game_id}'s action space "
                f"({len(self.actions)} actions at {self.players} players)"
            ) from None

    def action(self, index: int) -> str:
        """The action of ``index``; ``ValueError`` outside 0..len(actions)-1."""
        if not isinstance(index, int) or not 0 <= index < len(self.actions):
            raise ValueError(f"action index {index!r} is not in 0..{len(self.actions) - 1}")
        return self.actions[index]

    def mask(self, legal: Iterable[str]) -> list[int]:
        """0/1 per index: 1 for the actions of ``legal`` (``ValueError`` for one outside the space)."""
        out = [0] * len(self.actions)
        for action in legal:
            out[self.index(action)] = 1
        return out

    def tensor(self, observation: dict[str, Any]) -> list[float]:
        """The information-state tensor of one seat's observation (``size`` floats, in the order
        of ``sections``)."""
        return self._fill(self._info, observation)

    def observation_tensor(self, observation: dict[str, Any]) -> list[float]:
        """The current view only (``observation_size`` floats, in the order of
        ``observation_sections``): no history of who played what."""
        return self._fill(self._obs, observation)

    def _fill(self, parts: tuple[Part, ...], observation: dict[str, Any]) -> list[float]:
        if not isinstance(observation, dict):
            raise ValueError(f"not an observation: a {type(observation).__name__}, not a dict")
        game, players = observation.get("game"), observation.get("players")
        if game != self.game_id or players != self.players:
            raise ValueError(
                f"not an observation of {self.game_id} at {self.players} players "
                f"(its game is {game!r}, its players {players!r})"
            )
        view = View(observation, self.players, self._card_index)
        out: list[float] = []
        for part in parts:
            out.extend(part.fill(view))
        return out


@lru_cache(maxsize=64)
def _cached(game_id: str, options: tuple[tuple[str, Any], ...]) -> Encoding:
    return Encoding(new_game(game_id, **dict(options)))  # options: players included


def encoding_for(game: str | Game[Any], players: int | None = None, **options: Any) -> Encoding:
    """The :class:`Encoding` of ``game`` (an id with its seat count and options, checked as
    ``new_game`` checks them, or a :class:`~atout.games.Game`)."""
    if isinstance(game, Game):
        if players is not None or options:
            raise ValueError("encoding_for(a_game) takes no players or options: the game has its own")
        return _cached(game.id, tuple(sorted(game.options.items())))
    values = new_game(game, players=players, **options)  # checks the options, fills defaults
    return _cached(values.id, tuple(sorted(values.options.items())))


def rank_rewards(ranking: list[int]) -> list[float]:
    """Each seat's reward from a final ranking (1 = best, ties share): the seats it beat minus
    the seats that beat it, over ``players - 1``. In [-1, 1], zero-sum, ties 0: the pairwise
    results the arena's ratings count (the rewards of atout.envs, the returns of atout.openspiel)."""
    n = len(ranking)
    return [sum((other > mine) - (other < mine) for other in ranking) / (n - 1) for mine in ranking]


__all__ = ["Encoding", "encoding_for", "rank_rewards"]
