"""The Régicide heuristic bot plays legal moves and clearly beats the random bot."""

from __future__ import annotations

from typing import Any

import pytest

from atout import Bot
from atout.bot import Observation
from atout.bots import RandomBot
from atout.bots.regicide import RegicideHeuristicBot
from atout.local import play


@pytest.mark.parametrize(
    ("players", "options"),
    [(2, {}), (3, {}), (4, {}), (4, {"teams": True})],
    ids=["2p", "3p", "4p", "teams"],
)
def test_heuristic_beats_random(players: int, options: dict[str, Any]) -> None:
    games = 60
    wins = 0
    for seed in range(games):
        seat = seed % players  # the heuristic bot sits in every seat in turn
        bots: list[Bot] = [RandomBot() for _ in range(players)]
        bots[seat] = RegicideHeuristicBot()
        if options.get("teams"):
            bots[(seat + 2) % 4] = RegicideHeuristicBot()  # a partnership of heuristic bots
        result = play("regicide", bots, seed=seed, **options)  # raises on an illegal action
        wins += result.ranking[seat] == 1 and result.ranking.count(1) == (2 if options.get("teams") else 1)
    # Measured: it wins every game. Even odds would give 60/players wins (30 +- 3.9 with two
    # players or teams, 20 +- 3.7 with three, 15 +- 3.4 with four): 50 is over 5 sigma away.
    assert wins >= 50, f"heuristic won only {wins} of {games} games"


def observation(**keys: Any) -> Observation:
    legal = keys.pop("legal")
    raw = {"deal": 1, "last_trick": [], "trick": [], "teams": None, "seat": 0, "inverted": False}
    raw.update(keys)
    return Observation(raw, legal)


def test_choices_follow_the_hand() -> None:
    bot = RegicideHeuristicBot()
    others = ["trump c", "trump d", "trump s"]
    choose = ["keep", *others, "invert", *(f"{t} invert" for t in others)]
    # many spades: make spades trump
    hand = ["Ac", "2s", "3s", "5s", "8s", "9s", "Ks", "4d"]
    assert bot.act(observation(phase="choose", hand=hand, trump="h", legal=choose)) == "trump s"
    # low cards of the trump suit: invert so that they rank high
    hand = ["Ah", "2h", "3h", "4h", "Ac", "2d", "As"]
    assert bot.act(observation(phase="choose", hand=hand, trump="h", legal=choose)) == "invert"
    # many low spades: make spades trump and invert, at once
    hand = ["As", "2s", "3s", "4s", "5s", "Ac", "2d"]
    assert bot.act(observation(phase="choose", hand=hand, trump="h", legal=choose)) == "trump s invert"
    # with the ranking already inverted, low hearts want the normal order back: invert (a toggle)
    hand = ["Kh", "9h", "8h", "7h", "Kc", "2d"]
    obs = observation(phase="choose", hand=hand, trump="h", inverted=True, legal=choose)
    assert bot.act(obs) == "invert"
    # already strong: keep
    hand = ["Kh", "9h", "8h", "Kc", "Kd", "RJ"]
    assert bot.act(observation(phase="choose", hand=hand, trump="h", legal=choose)) == "keep"
    # a turned joker: name the longest suit
    hand = ["Ac", "2d", "3d", "4d", "Kh", "RJ"]
    names = ["trump c", "trump d", "trump h", "trump s"]
    assert bot.act(observation(phase="name_trump", hand=hand, trump=None, legal=names)) == "trump d"


def test_plays_cheaply() -> None:
    bot = RegicideHeuristicBot()
    # last to play, able to win: the cheapest winning card
    obs = observation(
        phase="play", hand=["3c", "7c", "Kc"], trump="s", seat=2,
        trick=[[0, "5c"], [1, "6c"]], legal=["play 3c", "play 7c", "play Kc"],
    )  # fmt: skip
    assert bot.act(obs) == "play 7c"
    # only the joker wins over the trump: it is the cheapest winning card
    obs = observation(
        phase="play", hand=["2d", "9h", "RJ"], trump="s", seat=2, players=3,
        trick=[[0, "5c"], [1, "As"]], legal=["play 2d", "play 9h", "play RJ"],
    )  # fmt: skip
    assert bot.act(obs) == "play RJ"
    # unable to win: the weakest card
    obs = observation(
        phase="play", hand=["2d", "9h"], trump="s", seat=2,
        trick=[[0, "5c"], [1, "As"]], legal=["play 2d", "play 9h"],
    )  # fmt: skip
    assert bot.act(obs) == "play 2d"
    # partner already wins (teams): the weakest card
    obs = observation(
        phase="play", hand=["Kc", "3c"], trump="s", seat=2, teams=[[0, 2], [1, 3]],
        trick=[[0, "9c"], [1, "2c"]], legal=["play 3c", "play Kc"],
    )  # fmt: skip
    assert bot.act(obs) == "play 3c"


def test_its_memory_of_played_cards_is_the_deal_history_s_whatever_it_was_shown_before() -> None:
    """The bot reads only the new entries of deal_history when it has read the rest before (a
    search playout asks it at every step); whatever it was shown before (another deal, another
    world's history of the same deal, a history that is no continuation), its memory is the
    cards of the history it is shown now, as reading it whole gives."""
    import random

    from atout.games import new_game

    game = new_game("regicide", players=3)
    rng = random.Random(5)
    bot = RegicideHeuristicBot()
    checked = 0
    for seed in range(0, 8, 2):  # two games at once, the bot shown one or the other at random
        states = [game.new_state(seed=seed), game.new_state(seed=seed + 1)]
        while not all(s.is_terminal for s in states):
            state = rng.choice([s for s in states if not s.is_terminal])
            seat = state.current_player
            assert seat is not None
            observation = state.observation(seat)
            bot.act(Observation(observation, state.legal_actions()))
            whole = {a[5:] for _, a in observation["deal_history"] if a.startswith("play ")}
            assert bot._played == whole
            checked += 1
            state.apply(rng.choice(state.legal_actions()))
    assert checked > 200
