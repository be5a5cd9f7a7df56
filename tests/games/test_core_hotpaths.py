"""The speed-ups of the core's hot paths change nothing a caller can see."""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations

import pytest

from atout.games import GAMES, new_game
from atout.games.core import shuffle, shuffle_top


@pytest.mark.parametrize("size", [0, 1, 2, 3, 32, 36, 42, 52, 100])
def test_shuffle_is_random_shuffle(size: int) -> None:
    # the same seed deals the same cards as Random.shuffle, and leaves the generator in the
    # same state (so whatever is drawn next is the same too)
    for seed in range(200):
        ours, theirs = random.Random(seed), random.Random(seed)
        a, b = list(range(size)), list(range(size))
        shuffle(a, ours)
        theirs.shuffle(b)
        assert a == b
        assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_states_take_attributes_and_clone(game_id: str) -> None:
    # State has __slots__ for its hot attributes; subclasses still take any attribute, and a
    # clone (a deep copy) keeps the slots
    state = new_game(game_id).new_state(seed=1)
    state.note = "anything"  # type: ignore[attr-defined]
    twin = state.clone()
    assert twin.note == "anything"  # type: ignore[attr-defined]
    assert twin.history == state.history and twin.current_player == state.current_player
    assert twin.legal_actions() == state.legal_actions() and twin._rng is not state._rng


@pytest.mark.parametrize(
    ("size", "needed"), [(0, 0), (1, 1), (5, 0), (5, 2), (5, 4), (5, 9), (52, 5), (52, 53)]
)
def test_shuffle_top_keeps_every_card_and_follows_the_seed(size: int, needed: int) -> None:
    for seed in range(50):
        a, b = list(range(size)), list(range(size))
        shuffle_top(a, random.Random(seed), needed)
        shuffle_top(b, random.Random(seed), needed)
        assert a == b  # our own determinism: same seed, same cards
        assert sorted(a) == list(range(size))  # still a permutation: card conservation


@pytest.mark.parametrize("needed", [1, 2, 3])
def test_shuffle_top_draws_the_top_cards_uniformly(needed: int) -> None:
    # every ordered choice of `needed` cards of 5 comes up equally often (a loose chi-square:
    # the 1e-4 quantile is far above what a fair draw gives)
    rng = random.Random(12345)
    draws = 30_000
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(draws):
        cards = list(range(5))
        shuffle_top(cards, rng, needed)
        counts[tuple(cards[:needed])] += 1
    outcomes = list(permutations(range(5), needed))
    assert set(counts) == set(outcomes)
    expected = draws / len(outcomes)
    chi2 = sum((counts[o] - expected) ** 2 / expected for o in outcomes)
    assert chi2 < {1: 23.5, 2: 50.8, 3: 108.2}[needed]  # the 1e-4 tails for 4, 19 and 59 dof


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_is_terminal_follows_current_player(game_id: str) -> None:
    # is_terminal is a plain attribute (read at every decision of a playout); it must say
    # exactly what current_player says, all game long and in clones
    rng = random.Random(3)
    for seed in range(3):
        state = new_game(game_id).new_state(seed=seed)
        while True:
            assert state.is_terminal is (state.current_player is None)
            assert state.clone().is_terminal is state.is_terminal
            if state.is_terminal:
                break
            state.apply(rng.choice(state.legal_actions()))
        assert state.legal_actions() == []


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_legal_actions_is_a_fresh_list(game_id: str) -> None:
    # the cache may be a list the state keeps (a hand): what a caller gets is its own copy
    rng = random.Random(4)
    state = new_game(game_id).new_state(seed=4)
    for _ in range(60):
        if state.is_terminal:
            break
        legal = state.legal_actions()
        again = state.legal_actions()
        assert legal == again and legal is not again
        action = rng.choice(legal)
        legal.clear()
        again.append("nonsense")
        assert state.legal_actions() == [a for a in again if a != "nonsense"]
        state.apply(action)
