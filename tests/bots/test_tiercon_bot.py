"""The Tierçon heuristic bot plays legal moves and clearly beats the random bot."""

from __future__ import annotations

from atout.bots import RandomBot
from atout.bots.tiercon import TierconHeuristicBot
from atout.games import new_game
from atout.local import play


def test_heuristic_beats_random() -> None:
    games = 120
    wins = 0
    margin = 0
    for seed in range(games):
        seat = seed % 2  # the heuristic bot sits in each seat half of the time
        bots = [RandomBot(), RandomBot()]
        bots[seat] = TierconHeuristicBot()
        result = play("tiercon", bots, seed=seed)  # raises if the bot plays an illegal action
        wins += result.ranking[seat] == 1 and result.ranking[1 - seat] == 2
        margin += result.scores[seat] - result.scores[1 - seat]
    # Measured: about 88% wins. Even odds would give 60 +- 5.5 wins: 84 is over 4 sigma away.
    assert wins >= 84, f"heuristic won only {wins} of {games} games"
    assert margin / games > 50


def test_heuristic_announces_and_exchanges_whenever_it_may() -> None:
    result = play("tiercon", [TierconHeuristicBot(), RandomBot()], seed=3)
    # replay the game: whenever an announcement or the exchange was offered, the bot took it
    state = new_game("tiercon").new_state(seed=3)
    taken = 0
    for seat, action in result.history:
        legal = state.legal_actions()
        if seat == 0 and legal[0].startswith(("declare", "marriage", "exchange")):
            assert action == legal[0]
            taken += 1
        state.apply(action)
    assert taken >= 3
