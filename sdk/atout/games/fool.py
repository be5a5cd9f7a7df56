"""Placeholder: being written. See RULES.md."""

from __future__ import annotations

from .core import Game, State


class FoolState(State):
    pass


class Fool(Game):
    id = "fool"
    name = "Fool"
    min_players = 2
    max_players = 2
    default_players = 2
    state_class = FoolState
