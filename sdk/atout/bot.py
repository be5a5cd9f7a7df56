"""The bot developer's base class and the typed observation handed to it.

A bot is one instance per match: the runner creates it when a match starts, calls
:meth:`Bot.act` for every decision of its seat, and drops it when the match ends.

>>> from atout import Bot
>>> class FirstLegal(Bot):
...     def act(self, observation):
...         return observation.legal_actions[0]
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, ClassVar


class Observation:
    """What a seat may know, with the engine's observation keys as attributes.

    ``obs.hand``, ``obs.trick``, ``obs.trump``... are exactly the keys of
    ``State.observation(seat)`` (see DESIGN.md); ``obs.legal_actions`` lists the actions the
    seat may take now, and ``obs.deadline_ms`` the time it has (``None`` when local).
    ``obs.raw`` is the underlying dict; ``obs["hand"]`` and ``obs.get("hand")`` work too.
    """

    __slots__ = ("deadline_ms", "legal_actions", "match_id", "raw")

    def __init__(
        self,
        raw: dict[str, Any],
        legal_actions: list[str],
        deadline_ms: int | None = None,
        match_id: str = "",
    ) -> None:
        self.raw = raw
        self.legal_actions = legal_actions
        self.deadline_ms = deadline_ms
        self.match_id = match_id

    def __getattr__(self, name: str) -> Any:
        try:
            return self.raw[name]
        except KeyError:
            raise AttributeError(
                f"observation of {self.raw.get('game')!r} has no {name!r}; keys: {sorted(self.raw)}"
            ) from None

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def __repr__(self) -> str:
        return f"Observation({self.raw!r}, legal_actions={self.legal_actions!r})"


@dataclass
class MatchInfo:
    """What a bot is told when a match starts."""

    match_id: str
    game: str
    seat: int
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    seat_names: list[str] = field(default_factory=list)  # bot name in each seat, when known


@dataclass
class MatchResult:
    """What a bot is told when a match ends."""

    match_id: str
    scores: list[int]
    ranking: list[int]
    seat: int
    reason: str = ""


class Bot:
    """Subclass and implement :meth:`act`. One instance plays one match.

    ``self.match`` is the :class:`MatchInfo` (set before the first decision) and
    ``self.rng`` a random generator seeded per match where the runner can.
    """

    #: True when the bot's methods are quick and never wait (no I/O, no sleep, no lock held
    #: elsewhere): the runner then calls them on the thread that reads the stream, saving a
    #: hand-over to a pool thread per decision (the largest part of an instant bot's cost).
    #: Leave it False (the default) for a bot that may think long: an inline ``act()`` holds
    #: up the stream's other matches while it runs, and it runs on the runner's event loop, so
    #: it must not start one of its own (``asyncio.run``). Read from the class itself: a
    #: subclass of an inline bot is not inline unless it sets it too.
    inline: ClassVar[bool] = False

    def __init__(self) -> None:
        self.match: MatchInfo | None = None
        self.rng = random.Random()

    def on_match_start(self, match: MatchInfo) -> None:
        """Called once before the first decision. Override to set things up."""

    def act(self, observation: Observation) -> str:
        """Return one of ``observation.legal_actions``."""
        raise NotImplementedError

    def on_rejection(self, observation: Observation, action: str, reason: str) -> str | None:
        """The arena did not accept ``action`` for ``observation``; ``reason`` says why.

        Return another action to try again before the deadline, or ``None`` (the default) to
        leave it: the arena then plays its fallback for this decision and counts a fault.
        Only called by the runner (locally, :func:`atout.local.play` raises instead, or with
        ``fallback=True`` records a fault and plays the first legal action, as ``atout-bot test``
        and ``validate`` do).
        """
        return None

    def on_match_end(self, result: MatchResult) -> None:
        """Called once when the match is over."""
