"""The Tierçon heuristic bot plays legal moves and clearly beats the random bot."""

from __future__ import annotations

from typing import Any

from atout import Bot
from atout.bot import Observation
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
        bots: list[Bot] = [RandomBot(), RandomBot()]
        bots[seat] = TierconHeuristicBot()
        result = play("tiercon", bots, seed=seed)  # raises if the bot plays an illegal action
        wins += result.ranking[seat] == 1 and result.ranking[1 - seat] == 2
        margin += result.scores[seat] - result.scores[1 - seat]
    # Measured (rules version 2): 106 of these 120 (88%), and 905 of 1000 other seeds. Even
    # odds would give 60 +- 5.5 wins: 84 is over 4 sigma away.
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


def following(hand: list[str], led: str, legal: list[str], stock: int) -> Any:
    """The observation of seat 1 answering ``led`` (trump spades), with the legal plays given."""
    raw = {"game": "tiercon", "seat": 1, "hand": hand, "trump": "s", "stock": stock, "trick": [[0, led]]}
    return Observation(raw, ["play " + c for c in legal])


def test_heuristic_takes_the_trump_ten_with_the_trump_ace() -> None:
    # trumps 7 8 Q K T A 9 J: the ace beats the ten (10 + 11 points); while the stock lasts any
    # trump may follow a trump lead
    obs = following(["8c", "Qs", "As"], "Ts", ["Qs", "As"], stock=10)
    assert TierconHeuristicBot().act(obs) == "play As"


def test_heuristic_keeps_the_trump_jack_for_a_trick_worth_it() -> None:
    bot = TierconHeuristicBot()
    # the jack is the only trump, so it is not forced to answer the trump lead: a led seven is
    # worth nothing, keep the jack and give the cheapest card
    assert bot.act(following(["8c", "9d", "Js"], "7s", ["8c", "9d", "Js"], stock=10)) == "play 8c"
    # a led ten is worth taking: the jack takes it
    assert bot.act(following(["8c", "9d", "Js"], "Ts", ["8c", "9d", "Js"], stock=10)) == "play Js"
    # stock empty, a trump queen led: only the jack beats it, but a lower trump may be played
    assert bot.act(following(["8c", "7s", "Js"], "Qs", ["7s", "Js"], stock=0)) == "play 7s"
    # stock empty, the trump ace led: the jack (or the nine) must not let 11 points go
    assert bot.act(following(["8c", "Qs", "Js"], "As", ["Qs", "Js"], stock=0)) == "play Js"
    # a hand of nothing but the jack plays it
    assert bot.act(following(["Js"], "7c", ["Js"], stock=0)) == "play Js"
