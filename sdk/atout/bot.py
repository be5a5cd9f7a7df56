"""The bot developer's base class and the typed observation handed to it.

A bot is one instance per match: the runner creates it when a match starts, calls
:meth:`Bot.act` for every decision of its seat, and drops it when the match ends.

>>> from atout import Bot
>>> class FirstLegal(Bot):
...     def act(self, observation):
...         return observation.legal_actions[0]
"""

from __future__ import annotations

import logging
import random
import unicodedata
from dataclasses import dataclass, field
from typing import Any, ClassVar

#: The most bytes (UTF-8) of a note the arena keeps; a longer note is cut to it.
NOTE_LIMIT = 1024

_note_log = logging.getLogger("atout")
_notes_cut = 0


class Action(str):
    """An action string with a note attached: ``return Action("play Th", note="hold the ace")``.

    It *is* the action string (compares, hashes and prints as it), so code that expects a
    plain ``str`` keeps working. ``return "play Th", "hold the ace"`` from ``act()`` is the
    same; a plain ``return "play Th"`` has no note.
    """

    note: str | None

    def __new__(cls, action: str, note: str | None = None) -> Action:
        self = super().__new__(cls, action)
        self.note = note
        return self

    def __repr__(self) -> str:
        return f"Action({str(self)!r}, note={self.note!r})"


def clean_note(note: object) -> tuple[str | None, bool]:
    """A note as the arena stores it, and whether it was cut.

    ``None`` or empty: no note. Anything else is made text (``str()``), characters UTF-8
    cannot encode (lone surrogates) become U+FFFD, control characters other than newline and
    tab are dropped, and the text is cut to :data:`NOTE_LIMIT` bytes of UTF-8 (never inside
    a character).
    """
    if note is None:
        return None, False
    text = note if isinstance(note, str) else str(note)
    text = "".join(_clean_char(c) for c in text)
    raw = text.encode("utf-8")
    cut = len(raw) > NOTE_LIMIT
    if cut:
        text = raw[:NOTE_LIMIT].decode("utf-8", "ignore")
    return (text or None), cut


def _clean_char(c: str) -> str:
    if c in "\n\t":
        return c
    kind = unicodedata.category(c)
    return "\ufffd" if kind == "Cs" else "" if kind == "Cc" else c


def split_note(answer: object) -> tuple[Any, str | None]:
    """``act()``'s answer as ``(action, note)``: the note cleaned by :func:`clean_note`.

    ``"play Th"`` -> ``("play Th", None)``; ``("play Th", "why")`` and
    ``Action("play Th", note="why")`` -> ``("play Th", "why")``. Any other answer comes back
    as it is, with no note (the caller reports a bad answer). A note over 1 KB is cut, with a
    warning on the ``"atout"`` logger (the 1st, 10th, 100th... cut).
    """
    if isinstance(answer, Action):
        action: Any = str(answer)
        note: object = answer.note
    elif isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], str):
        action, note = answer
    else:
        return answer, None
    text, cut = clean_note(note)
    if cut:
        global _notes_cut
        _notes_cut += 1
        if _notes_cut in (1, 10, 100, 1000) or _notes_cut % 10000 == 0:
            _note_log.warning(
                "a note was cut to %d bytes (a note holds at most 1 KB of UTF-8); cut so far: %d",
                NOTE_LIMIT,
                _notes_cut,
            )
    return action, text


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
        """Return one of ``observation.legal_actions``.

        To attach a note to the decision (at most 1 KB of UTF-8, shown in the match's replay:
        to the bot's owner at once, to everyone once the competition is over), return
        ``Action(action, note=note)``: a ``str``, so this signature (and code that calls
        ``act()`` for a ``str``) holds. Untyped code may return ``(action, note)`` as well.
        """
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
