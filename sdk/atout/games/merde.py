"""Placeholder: being written. See RULES.md."""

from __future__ import annotations

from .core import Game, State


class MerdeState(State):
    pass


class Merde(Game):
    id = "merde"
    name = "Merde"
    min_players = 2
    max_players = 2
    default_players = 2
    state_class = MerdeState
