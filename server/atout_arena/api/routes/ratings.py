"""Leaderboards: every rated match of a game, fitted, with 95% confidence intervals."""

from __future__ import annotations

import threading
import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, status
from sqlalchemy.orm import Session

from atout.games import GAMES
from atout_arena.api import queries
from atout_arena.api.context import Arena
from atout_arena.api.deps import ArenaDep, SessionDep
from atout_arena.api.schemas import GameId, Leaderboard

router = APIRouter(prefix="/v1/ratings", tags=["ratings"])


LEADERBOARD_REFRESH_S = 5.0  # a busy arena's leaderboard is fitted again at most this often


def cached_leaderboard(arena: Arena, session: Session, game: str) -> Leaderboard:
    """The leaderboard of ``game``: fitted again when a rated match was added, but at most
    every :data:`LEADERBOARD_REFRESH_S` (a fit over many matches takes a while; meanwhile the
    previous one is served, its ``rated_matches`` saying what it counts). One request at a
    time fits a game's board; the others wait for it."""
    key = queries.rated_matches_key(session, game)
    with arena.cache_lock:
        lock = arena.cache.setdefault(("leaderboard-lock", game), threading.Lock())
    with lock:
        with arena.cache_lock:
            cached = arena.cache.get(("leaderboard", game))
        if cached is not None:
            cached_key, board, at = cached
            if cached_key == key or time.monotonic() - at < LEADERBOARD_REFRESH_S:
                return board
        board = Leaderboard.model_validate(queries.leaderboard(session, game))
        with arena.cache_lock:
            arena.cache[("leaderboard", game)] = (key, board, time.monotonic())
        return board


@router.get("", response_model=Leaderboard, responses={422: {"description": "unknown game"}})
def get_ratings(
    arena: ArenaDep,
    session: SessionDep,
    game: Annotated[GameId, Query(description="the game id, e.g. merde")],
) -> Leaderboard:
    """The leaderboard of a game, best first.

    ``rating`` is the maximum a posteriori Bradley-Terry fit of every rated match of the game
    (an n-player result counts as its pairwise results; Elo scale, mean 1500) with its 95%
    confidence interval ``ci_low``..``ci_high`` and ``los_next``, the likelihood that the bot is
    stronger than the next one; ``online`` is the live Elo updated as each match ends.
    Practice matches are not rated, and only played, present seats are
    (:func:`atout_arena.core.ratings.rated_result`): never an absent bot's, nor those of a bot
    disabled by the time the result was stored; the other seats are rated among themselves.
    """
    if game not in GAMES:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, f"unknown game {game!r}; games: {', '.join(GAMES)}"
        )
    return cached_leaderboard(arena, session, game)
