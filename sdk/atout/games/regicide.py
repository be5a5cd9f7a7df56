"""Placeholder: being written. See RULES.md."""

from __future__ import annotations

from .core import Game, State


class RegicideState(State):
    pass


class Regicide(Game):
    id = "regicide"
    name = "Regicide"
    min_players = 2
    max_players = 2
    default_players = 2
    state_class = RegicideState
