"""The rulesets: options, player counts, rules summaries."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from atout.games import GAMES
from atout_arena.api.schemas import GamePublic

router = APIRouter(prefix="/v1/games", tags=["games"])


def describe(game: str) -> GamePublic:
    return GamePublic.model_validate(GAMES[game].describe())


@router.get("", response_model=list[GamePublic])
def list_games() -> list[GamePublic]:
    """Every ruleset the arena plays, with its options (default, allowed values, meaning), its
    player counts and a summary of its rules."""
    return [describe(game) for game in GAMES]


@router.get("/{game}", response_model=GamePublic, responses={404: {"description": "no such game"}})
def get_game(game: str) -> GamePublic:
    """One ruleset."""
    if game not in GAMES:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no game {game!r}; games: {', '.join(GAMES)}")
    return describe(game)
