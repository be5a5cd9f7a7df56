"""The rules engines of the four Atout games.

>>> from atout.games import new_game
>>> state = new_game("merde", players=4, deals=2).new_state(seed=7)
>>> state.current_player is not None
True

See DESIGN.md ("The engine API") and RULES.md for the rules each engine implements.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from .core import (
    JOKERS,
    RANKS,
    SUITS,
    Action,
    Game,
    IllegalAction,
    Option,
    State,
    card_text,
    cards_text,
    normalise_action,
    parse_card,
    ranking_from_scores,
    relabel_action,
    suit_map,
)
from .fool import Fool
from .merde import Merde
from .regicide import Regicide
from .tiercon import Tiercon

GAMES: dict[str, type[Game[Any]]] = {g.id: g for g in (Merde, Tiercon, Regicide, Fool)}


# A game named by a literal is typed as its own class (its states too).
@overload
def new_game(game_id: Literal["merde"], **options: Any) -> Merde: ...
@overload
def new_game(game_id: Literal["tiercon"], **options: Any) -> Tiercon: ...
@overload
def new_game(game_id: Literal["regicide"], **options: Any) -> Regicide: ...
@overload
def new_game(game_id: Literal["fool"], **options: Any) -> Fool: ...
@overload
def new_game(game_id: str, **options: Any) -> Game[State]: ...


def new_game(game_id: str, **options: Any) -> Game[State]:
    """A game with its options checked: ``new_game("merde", players=4, deals=5)``."""
    try:
        cls = GAMES[game_id]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {game_id!r}; games are: {', '.join(GAMES)}") from None
    return cls(**options)


__all__ = [
    "GAMES",
    "JOKERS",
    "RANKS",
    "SUITS",
    "Action",
    "Game",
    "IllegalAction",
    "Option",
    "State",
    "card_text",
    "cards_text",
    "new_game",
    "normalise_action",
    "parse_card",
    "ranking_from_scores",
    "relabel_action",
    "suit_map",
]
