"""What spectators and seats may see of a match, step by step.

A seat sees ``state.observation(seat)``: the engine guarantees it holds no card the seat may
not see. A spectator sees the **public view**: the part of the observation that is the same
for every seat (so everyone at the table knows it), without the seat's own keys. A card that
is in some hand can therefore never be in it, unless every seat saw it (a turned card taken
into hand, an announced combination): then it is public knowledge.

Actions are shown to everyone as they were played: every action of the four rulesets is
public (RULES.md: bids, cards played, announcements, the trump exchange, cuts, takes). A
ruleset with a secret action (a card discarded face down) would need its action masked here.

Redis channels (pub/sub, JSON messages): ``atout:match:<id>:public`` for spectators and
``atout:match:<id>:seat:<n>`` for what seat ``n`` may see (the worker publishes a seat's
events only while someone listens; see :class:`atout_workers.play.Publisher`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from atout.games import State

OWN_KEYS = frozenset({"seat", "hand"})  # per-seat by definition, never public


def _common(values: Sequence[Any]) -> tuple[bool, Any]:
    """(True, value) when every value is equal; dicts keep their common keys."""
    first = values[0]
    rest = values[1:]
    if all(v == first for v in rest):  # the usual case, compared in C
        return True, first
    if isinstance(first, dict) and all(isinstance(v, dict) for v in rest):
        out = {}
        for key, value in first.items():
            if all(key in v for v in rest):
                same, common = _common([value, *(v[key] for v in rest)])
                if same:
                    out[key] = common
        return True, out
    return False, None


def public_view(observations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What every seat's observation has in common, minus the seat's own keys."""
    trimmed = [{k: v for k, v in obs.items() if k not in OWN_KEYS} for obs in observations]
    view: dict[str, Any]  # dicts always have a common part, if only {}
    _, view = _common(trimmed)
    return view


def state_public_view(state: State) -> dict[str, Any]:
    return public_view([state.observation(seat) for seat in range(state.players)])


class StepViews:
    """The events of one step: the public one and one per seat (all JSON-serialisable)."""

    def __init__(self, state: State) -> None:
        self.state = state

    def events(self, base: dict[str, Any], action: str | None = None) -> tuple[
        dict[str, Any], list[dict[str, Any]]
    ]:
        """(public event, [event of seat 0, seat 1, ...]) after ``action`` (None: at the start)."""
        state = self.state
        observations = [state.observation(seat) for seat in range(state.players)]
        public = dict(base)
        if action is not None:
            public["action"] = action
        public["view"] = public_view(observations)
        seats = []
        for obs in observations:
            event = dict(base)
            if action is not None:
                event["action"] = action
            event["view"] = obs
            seats.append(event)
        return public, seats
