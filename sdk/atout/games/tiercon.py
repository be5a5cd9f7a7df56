"""Placeholder: being written. See RULES.md."""

from __future__ import annotations

from .core import Game, State


class TierconState(State):
    pass


class Tiercon(Game):
    id = "tiercon"
    name = "Tiercon"
    min_players = 2
    max_players = 2
    default_players = 2
    state_class = TierconState
