"""The speed-ups of the core's hot paths change nothing a caller can see."""

from __future__ import annotations

import random

import pytest

from atout.games import GAMES, new_game
from atout.games.core import shuffle


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
