"""Merde.sample_state: worlds a seat cannot tell from the real one (docs/rules/merde.md,
"Sampling worlds").

Properties over many random positions (every seat count, several option sets, random and
heuristic play, stopped anywhere, the game's end included); on small positions, every
consistent deal enumerated by brute force through the engine's public API and the sampler's
draws chi-square tested against the uniform; malformed observations refused in one line.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
from collections import Counter
from typing import Any

import pytest
from scipy.stats import chisquare

from atout.bot import Observation
from atout.bots import MerdeHeuristicBot
from atout.games import IllegalAction, merde, new_game
from atout.games.merde import DECK, Merde, MerdeState


def as_sent(state: MerdeState, seat: int) -> dict[str, Any]:
    """The observation as a bot receives it: through JSON."""
    return json.loads(json.dumps(state.observation(seat)))


def check_obligations(world: MerdeState, observation: dict[str, Any]) -> None:
    """Independently of the sampler: each seat's hand at the deal's start in ``world`` (its
    hand now and what it played since) held none of the suit led at every trick it did not
    follow, and the deck is whole."""
    n = world.players
    history = observation["deal_history"]
    hands = [set(world.hand(seat)) for seat in range(n)]
    for seat, action in history:
        if action.startswith("play "):
            hands[seat].add(action[5:])
    plays: list[tuple[int, str]] = []
    for seat, action in history:
        if not action.startswith("play "):
            continue
        card = action[5:]
        if len(plays) % n:
            led = plays[len(plays) - len(plays) % n][1][1]
            if card[1] != led:
                assert not any(c[1] == led for c in hands[seat]), (seat, led, hands[seat])
        assert card in hands[seat]
        hands[seat].discard(card)
        plays.append((seat, card))
    places = world._locations()
    assert sorted(c for cards in places.values() for c in cards) == sorted(DECK)


def bot_action(bot: MerdeHeuristicBot | None, state: MerdeState, rng: random.Random) -> str:
    legal = state.legal_actions()
    if bot is None:
        return rng.choice(legal)
    seat = state.current_player
    assert seat is not None
    return str(bot.act(Observation(state.observation(seat), legal)))


CONFIGS: list[tuple[int, dict[str, Any], int]] = [
    # (players, options, positions): two observations each, three worlds of each
    (3, {}, 150),
    (3, {"deals": 17}, 100),
    (4, {}, 150),
    (4, {"deals": 6, "zero_bid": "five_plus_tricks"}, 150),
    (5, {"zero_bid": "five_plus_tricks"}, 150),
    (6, {}, 150),
    (7, {}, 150),
    (7, {"deals": 3}, 100),
]


@pytest.mark.parametrize(("players", "options", "positions"), CONFIGS)
def test_sampled_worlds_show_the_observation_and_replay_legally(
    players: int, options: dict[str, Any], positions: int
) -> None:
    game = Merde(players=players, **options)
    length = sum(players * (1 + deal) for deal in range(1, game.options["deals"] + 1))
    rng = random.Random(players * 100 + len(options))
    checked = differ = could_differ = 0
    for seed in range(positions):
        state = game.new_state(seed=seed)
        bot = MerdeHeuristicBot() if seed % 2 else None
        stop = length if seed % 15 == 0 else rng.randrange(length)  # now and then the end
        while len(state.history) < stop and not state.is_terminal:
            state.apply(bot_action(bot, state, rng))
        acting = state.current_player if state.current_player is not None else 0
        for seat in {acting, (acting + 1 + rng.randrange(players - 1)) % players}:
            observation = as_sent(state, seat)
            others = [s for s in range(players) if s != seat]
            real = [sorted(state.hand(s)) for s in others]
            samples = [game.sample_state(as_sent(state, seat), rng) for _ in range(3)]
            if sum(len(hand) for hand in real) >= 2:
                could_differ += 1
                differ += any([sorted(w.hand(s)) for s in others] != real for w in samples)
            for world in samples:
                assert world.observation(seat) == observation
                check_obligations(world, observation)
                checked += 1
            copy = samples[0].clone()
            assert isinstance(copy, MerdeState) and copy.observation(seat) == observation
            while not copy.is_terminal:  # random play goes on legally to the game's end
                copy.apply(rng.choice(copy.legal_actions()))
            assert copy.deal == game.options["deals"]
    assert checked >= positions * 3
    # the hidden cards are not the real ones, most of the time (they are when a deal is forced)
    assert differ >= 0.6 * could_differ, (differ, could_differ)


def test_the_worlds_of_a_position_vary_and_follow_the_generator() -> None:
    state = new_game("merde", players=4).new_state(seed=3)
    for action in ["bid 1", "bid 0", "bid 0", "bid 1"]:
        state.apply(action)
    observation = as_sent(state, 0)
    game = state.game
    assert isinstance(game, Merde)
    first = [game.sample_state(observation, random.Random(5)) for _ in range(2)]
    assert first[0].history == first[1].history and first[0].hand(1) == first[1].hand(1)
    hands = {tuple(game.sample_state(observation, random.Random(s)).hand(2)) for s in range(30)}
    assert len(hands) >= 15  # one of 47 unseen cards each time: few repeats
    # the later deals come from the generator too
    worlds = [game.sample_state(observation, random.Random(s)) for s in (1, 2)]
    for world in worlds:
        while world.deal == 1:
            world.apply(world.legal_actions()[0])
    assert worlds[0].hand(0) != worlds[1].hand(0)


def test_a_seat_that_showed_out_holds_none_of_that_suit_in_any_world() -> None:
    game = Merde(players=3)
    state = game.new_state(seed=11)
    rng = random.Random(11)
    while not [v for v in _voids(state.observation(0)["deal_history"], 3) if v[0] != 0]:
        state.apply(rng.choice(state.legal_actions()))
    observation = as_sent(state, 0)
    voids = [v for v in _voids(observation["deal_history"], 3) if v[0] != 0]
    for _ in range(200):
        world = game.sample_state(observation, rng)
        for seat, suit in voids:
            assert not any(card[1] == suit for card in world.hand(seat)), (seat, suit)


def _voids(history: list[list[Any]], n: int) -> list[tuple[int, str]]:
    plays = [(s, a[5:]) for s, a in history if a.startswith("play ")]
    out = []
    for i, (seat, card) in enumerate(plays):
        led = plays[i - i % n][1][1]
        if card[1] != led:
            out.append((seat, led))
    return out


def test_deal_history_is_the_current_deals_actions() -> None:
    state = new_game("merde", players=3, deals=2).new_state(seed=4)
    rng = random.Random(4)
    assert state.observation(1)["deal_history"] == []
    actions: list[list[Any]] = []
    while state.deal == 1:
        seat = state.current_player
        action = rng.choice(state.legal_actions())
        state.apply(action)
        actions.append([seat, action])
        if state.deal == 1:
            assert state.observation(2)["deal_history"] == actions
    assert len(actions) == 3 + 3 and state.observation(0)["deal_history"] == []
    actions = []
    while not state.is_terminal:
        seat = state.current_player
        action = rng.choice(state.legal_actions())
        state.apply(action)
        actions.append([seat, action])
    assert state.observation(0)["deal_history"] == actions  # over: the final deal's


def test_an_observation_equal_in_its_cheap_key_but_not_in_full_gets_its_own_worlds() -> None:
    game = Merde(players=4)
    state = game.new_state(seed=9)
    observation = as_sent(state, 1)
    rng = random.Random(0)
    assert game.sample_state(observation, rng).observation(1) == observation
    other = {**observation, "scores": [3, 1, 4, 1]}  # same seat, deal, hand and history
    assert game.sample_state(other, rng).observation(1)["scores"] == [3, 1, 4, 1]
    observation["scores"][0] = 7  # the caller's dict, changed after a call
    assert game.sample_state(observation, rng).observation(1)["scores"] == [7, 0, 0, 0]


def test_the_work_kept_per_observation_is_bounded_and_shared_by_threads() -> None:
    game = Merde(players=3)
    observations = []
    for seed in range(80):  # 80 first-deal observations, all different
        observations.append(as_sent(game.new_state(seed=seed), seed % 3))

    wrong: list[Any] = []

    def draw(part: list[dict[str, Any]]) -> None:
        rng = random.Random(len(part))
        try:
            for observation in part:
                if game.sample_state(observation, rng).observation(observation["seat"]) != observation:
                    wrong.append(observation)
        except Exception as exc:  # reported below, on the test's thread
            wrong.append(exc)

    threads = [threading.Thread(target=draw, args=(observations[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    assert 0 < len(merde._WORLDS) <= merde._WORLDS_KEPT == 64


# -- uniformity ---------------------------------------------------------------------------------


def consistent_deals(
    game: Merde, decks: list[list[str]], dealer: int, history: list[tuple[int, str]], seat: int
) -> list[tuple[frozenset[str], ...]]:
    """Every deal of the current deal's unseen cards consistent with ``seat``'s observation,
    by brute force through the public API: each way to put the unseen cards in the other
    seats' hands (beside the cards they played) and the stock, kept when the whole game's
    history replays legally from it and the observation is the same."""
    real = game.new_state(decks=decks, dealer=dealer)
    for _, action in history:
        real.apply(action)
    observation = real.observation(seat)
    n, size = game.players, real.cards_per_player
    played = {s: [a[5:] for who, a in observation["deal_history"] if who == s and a.startswith("play ")]
              for s in range(n)}
    turned = [real.turned] if real.turned else []
    seen = set(observation["hand"]) | {c for cards in played.values() for c in cards} | set(turned)
    unseen = [c for c in DECK if c not in seen]
    others = [s for s in range(n) if s != seat]
    sizes = [observation["hand_sizes"][s] for s in others]
    out = []
    for order in itertools.permutations(unseen):
        # each set of cards per place once: ascending within each place
        at, parts = 0, []
        for k in [*sizes, len(unseen) - sum(sizes)]:
            parts.append(order[at:at + k])
            at += k
        if any(list(p) != sorted(p) for p in parts):
            continue
        hands = {s: played[s] + list(parts[i]) for i, s in enumerate(others)}
        hands[seat] = played[seat] + observation["hand"]
        top = [""] * (n * size)
        for s, cards in hands.items():
            top[(s - real.dealer - 1) % n :: n] = cards
        deck = top + turned + list(parts[-1])
        state = game.new_state(decks=[*decks[:-1], deck], dealer=dealer)
        try:
            for _, action in history:
                state.apply(action)
        except IllegalAction:
            continue
        if state.observation(seat) == observation:
            out.append(tuple(frozenset(p) for p in parts))
    return out


def small_position(
    players: int, deals: int, deal: int, seed: int, hidden_at_most: int, seat_offset: int
) -> tuple[Merde, list[list[str]], int, list[tuple[int, str]], int]:
    """A late position of deal ``deal`` (of a game whose deck is then nearly all dealt) where
    another seat than the observer's showed out, as (game, decks, dealer, history, seat)."""
    game = Merde(players=players, deals=deals)
    rng = random.Random(seed)
    decks = []
    for _ in range(deal):
        cards = list(DECK)
        rng.shuffle(cards)
        decks.append(cards)
    state = game.new_state(decks=decks, dealer=seed % players)
    while True:
        if state.deal == deal and state.phase == "play" and state.current_player is not None:
            seat = (state.current_player + seat_offset) % players
            obs = state.observation(seat)
            others_voids = [s for s, _ in _voids(obs["deal_history"], players) if s != seat]
            stock = len(DECK) - players * deal - (1 if obs["turned"] else 0)
            hidden = sum(obs["hand_sizes"]) - len(obs["hand"]) + stock
            if others_voids and hidden <= hidden_at_most:
                return game, decks, seed % players, list(state.history), seat
        if state.deal > deal or state.is_terminal:
            raise AssertionError("no such position: try another seed")
        state.apply(rng.choice(state.legal_actions()))


SMALL = [  # (players, deals, the deal, seed, hidden cards at most, observer from the one to act)
    (3, 17, 17, 1, 6, 0),  # the last deal: no trump, one card undealt
    (3, 17, 16, 9, 6, 1),  # a trump deal: three cards undealt
    (4, 13, 13, 2, 6, 1),  # the whole deck dealt
    (4, 13, 12, 4, 5, 2),
    (5, 10, 10, 3, 5, 0),
    (6, 8, 8, 8, 6, 2),
    (7, 7, 7, 5, 6, 3),
]


@pytest.mark.parametrize(("players", "deals", "deal", "seed", "hidden", "offset"), SMALL)
def test_worlds_are_drawn_uniformly_among_the_consistent_deals(
    players: int, deals: int, deal: int, seed: int, hidden: int, offset: int
) -> None:
    game, decks, dealer, history, seat = small_position(players, deals, deal, seed, hidden, offset)
    every = consistent_deals(game, decks, dealer, history, seat)
    assert len(every) >= 3
    real = game.new_state(decks=decks, dealer=dealer)
    for _, action in history:
        real.apply(action)
    observation = as_sent(real, seat)
    others = [s for s in range(players) if s != seat]
    rng = random.Random(seed)
    seen: Counter[tuple[frozenset[str], ...]] = Counter()
    for _ in range(100 * len(every)):
        world = game.sample_state(observation, rng)
        stock = world._locations()["hidden:stock"]
        seen[(*(frozenset(world.hand(s)) for s in others), frozenset(stock))] += 1
    assert set(seen) <= set(every)
    observed = [seen[deal] for deal in every]
    assert chisquare(observed).pvalue > 0.01, observed


# -- malformed observations ---------------------------------------------------------------------


def test_a_malformed_observation_is_refused_in_one_line() -> None:
    game = Merde(players=4)
    state = game.new_state(seed=2)
    good = as_sent(state, 0)
    rng = random.Random(0)
    tiercon = new_game("tiercon").new_state(seed=1).observation(0)
    five = new_game("merde", players=5).new_state(seed=1).observation(0)
    cases: list[tuple[Any, str]] = [
        (tiercon, "not a merde observation: its game is 'tiercon'"),
        (five, "an observation of 5 players and 10 deals, for a game of 4 players and 13 deals"),
        ({k: v for k, v in good.items() if k not in ("hand", "deal_history")},
         "not a merde observation: it lacks deal_history, hand"),
        ([1, 2], "a merde observation is a dict, not list"),
        ({**good, "deal_history": [[0]]}, r"malformed merde observation: deal_history has \[0\]"),
        ({**good, "hand": [good["turned"]]}, "a card is unknown or seen twice"),
        ({**good, "seat": 4}, "malformed merde observation: seat 4"),
        ({**good, "bids": [1, None, None, None]}, "an observation no merde game reaches: its bids"),
    ]
    for observation, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            game.sample_state(observation, rng)
        assert "\n" not in str(info.value)
