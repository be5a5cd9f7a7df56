"""Play whole games in-process, with no server: for bot developers' own tests.

>>> from atout.local import play
>>> from atout.bots import RandomBot
>>> result = play("merde", [RandomBot(), RandomBot(), RandomBot()], seed=1, deals=2)
>>> len(result.scores)
3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .bot import Bot, MatchInfo, MatchResult, Observation
from .games import IllegalAction, new_game


@dataclass
class LocalResult:
    scores: list[int]
    ranking: list[int]
    history: list[tuple[int, str]] = field(default_factory=list)


def play(
    game_id: str,
    bots: Sequence[Bot],
    seed: int | None = None,
    match_id: str = "local",
    **options: Any,
) -> LocalResult:
    """Play one game of ``game_id`` between ``bots`` (seat i is ``bots[i]``).

    The number of players is ``len(bots)``. A bot that returns an illegal action raises
    :class:`~atout.games.IllegalAction` with the engine's reason: locally, mistakes are loud.
    """
    game = new_game(game_id, players=len(bots), **options)
    state = game.new_state(seed=seed)
    for seat, bot in enumerate(bots):
        bot.match = MatchInfo(match_id, game_id, seat, len(bots), dict(game.options))
        if seed is not None:
            bot.rng.seed(f"{seed}/{seat}")
        bot.on_match_start(bot.match)
    while not state.is_terminal:
        seat = state.current_player
        assert seat is not None
        legal = state.legal_actions()
        action = bots[seat].act(Observation(state.observation(seat), legal, None, match_id))
        if action not in legal:
            try:
                state.apply(action)  # normalises a person's spelling, or explains the error
                continue
            except IllegalAction as exc:
                raise IllegalAction(f"bot {type(bots[seat]).__name__} in seat {seat}: {exc}") from None
        state.apply(action)
    for seat, bot in enumerate(bots):
        bot.on_match_end(MatchResult(match_id, state.scores, state.ranking, seat))
    return LocalResult(state.scores, state.ranking, list(state.history))
