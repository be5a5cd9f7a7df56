"""State.clone(): a copy by kind of attribute, as independent as a deepcopy and playing the same.

Search bots clone states and play them out thousands of times a decision, so clone() copies
each attribute by its kind instead of deepcopy's generic walk (bench/search.py). These tests
hold it to deepcopy's behaviour in every game and seat count.
"""

from __future__ import annotations

import copy
import pickle
import random
from enum import Enum
from typing import Any

import pytest

from atout.games import GAMES, new_game
from atout.games.core import Game, State, _LazyRandom

CASES = [(game_id, players) for game_id in sorted(GAMES) for players in GAMES[game_id].player_counts()]


def positions(game_id: str, players: int, count: int, seed: int) -> list[State]:
    """``count`` states of seeded games after random openings of random lengths (the first a
    new game, some finished ones too)."""
    game = new_game(game_id, players=players)
    rng = random.Random(seed)
    found: list[State] = []
    for k in range(count):
        state = game.new_state(seed=rng.randrange(10**9))
        for _ in range(0 if k == 0 else rng.randrange(1, 400)):
            if state.is_terminal:
                break
            state.apply(rng.choice(state.legal_actions()))
        found.append(state)
    return found


def view(state: State) -> tuple[Any, ...]:
    """Everything a caller can see of a state, copied."""
    return copy.deepcopy(
        (
            [state.observation(seat) for seat in range(state.players)],
            state.legal_actions(),
            list(state.history),
            state.scores,
            state.current_player,
            state.is_terminal,
        )
    )


def play_on(state: State, rng: random.Random, moves: int = 150) -> None:
    """Random moves until the end or ``moves`` moves (through later deals in most games, which
    draw from the state's generator)."""
    for _ in range(moves):
        if state.is_terminal:
            return
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_a_clone_played_on_never_changes_the_original(game_id: str, players: int) -> None:
    # every legal action, applied to a clone that then plays on, leaves the original as it was
    rng = random.Random(7)
    for state in positions(game_id, players, 6, seed=players):
        before = view(state)
        for action in state.legal_actions():
            twin = state.clone()
            assert type(twin) is type(state) and twin.game is state.game
            twin.apply(action)
            play_on(twin, rng)
            assert view(state) == before
        play_on(state.clone().clone(), rng)  # a clone of a clone
        assert view(state) == before


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_a_clone_plays_as_a_deepcopy_does(game_id: str, players: int) -> None:
    # a deepcopy, a clone, a clone of that clone, and the original after it was cloned (its
    # generator became a lazy copy of itself), continued with the same random choices, offer
    # the same actions and show the acting seat the same observation at every step, and every
    # seat the same at the end (their generators too, in the same state)
    for k, state in enumerate(positions(game_id, players, 6, seed=100 + players)):
        deep = copy.deepcopy(state, {id(state.game): state.game})
        twin = state.clone()
        copies = [deep, twin, twin.clone(), state]
        rngs = [random.Random(k) for _ in copies]
        for _ in range(300):
            if deep.is_terminal:
                break
            legal = deep.legal_actions()
            seen = deep.observation(deep.current_player)  # type: ignore[arg-type]
            for c, r in zip(copies, rngs, strict=True):
                assert c.legal_actions() == legal and c.observation(c.current_player) == seen  # type: ignore[arg-type]
                c.apply(r.choice(legal))
        assert all(view(c) == view(deep) for c in copies[1:])
        assert [c._rng.getstate() for c in copies[1:]] == [deep._rng.getstate()] * 3


class Colour(Enum):
    RED = "red"


class Opaque:
    """A kind clone() has no rule for: deep-copied."""

    def __init__(self) -> None:
        self.cards = ["Ah"]


class Toy(State):
    """A state holding every kind of value clone() knows, and some it does not."""

    def __init__(self, game: Game[Any]) -> None:
        super().__init__(game, 3, None, None)
        shared = ["Kd", "Qs"]
        self.hand = shared
        self.legal_cache = shared  # the same list under two names, as an engine's cache may be
        self.hands = [["Ah", "2c"], shared]
        self.by_suit = {"h": ["Ah"], "d": ["Kd"], "all": shared}
        self.tricks: list[Any] = [((0, "Ah"), (1, "Kd")), ([0, "2c"], 1)]  # pairs; a list in one
        self.seen = {"Ah", "Kd"}
        self.frozen = frozenset({("Ah", 1)})
        self.colour = Colour.RED
        self.table = {(0, ("Ah",)): 1}
        self.opaque = Opaque()
        self.nested: list[Any] = [[["Ah"]], {"x": [("Kd", ["Qs"])]}]


def test_clone_copies_each_kind_and_keeps_what_attributes_share() -> None:
    toy = Toy(new_game("merde"))
    twin = toy.clone()
    assert isinstance(twin, Toy) and vars(twin) == vars(toy) | {"opaque": twin.opaque}
    assert twin.game is toy.game and twin.history == toy.history and twin._rng is not toy._rng
    # what two attributes shared, the clone's two attributes share: its own copy
    assert twin.hand is twin.legal_cache is twin.hands[1] is twin.by_suit["all"]
    assert twin.hand is not toy.hand
    # every mutable thing is the clone's own; immutable ones may be shared
    for name in ("hands", "by_suit", "tricks", "seen", "table", "nested"):
        assert getattr(twin, name) is not getattr(toy, name)
    assert twin.hands[0] is not toy.hands[0] and twin.by_suit["h"] is not toy.by_suit["h"]
    assert twin.tricks[0] is toy.tricks[0] and twin.tricks[1][0] is not toy.tricks[1][0]
    assert twin.nested[0][0] is not toy.nested[0][0]
    assert twin.nested[1]["x"][0][1] is not toy.nested[1]["x"][0][1]
    assert twin.colour is Colour.RED and twin.frozen is toy.frozen
    assert twin.opaque is not toy.opaque and twin.opaque.cards == ["Ah"]
    assert twin.opaque.cards is not toy.opaque.cards
    twin.hand.append("Jc")
    twin.tricks[1][0].append("x")
    twin.nested[1]["x"][0][1].append("Jc")
    twin.opaque.cards.clear()
    assert toy.hand == ["Kd", "Qs"] and toy.tricks[1][0] == [0, "2c"]
    assert toy.nested[1]["x"][0][1] == ["Qs"] and toy.opaque.cards == ["Ah"]


def test_a_cloned_generator_draws_what_the_original_would() -> None:
    original = random.Random(11)
    original.random()
    reference = copy.deepcopy(original)
    lazy = _LazyRandom.of(original.getstate())
    assert lazy.getstate() == reference.getstate()  # before its first draw
    assert pickle.loads(pickle.dumps(lazy)).random() == copy.deepcopy(reference).random()
    bound = lazy.getrandbits  # bound before the first draw, as core.shuffle binds it
    assert [bound(7), bound(30), lazy.random(), lazy.randrange(52)] == [
        reference.getrandbits(7),
        reference.getrandbits(30),
        reference.random(),
        reference.randrange(52),
    ]
    assert type(lazy) is random.Random and lazy.getstate() == reference.getstate()
    # gauss() keeps a spare draw: a lazy copy keeps the original's, and its own once drawn
    original.gauss()
    lazy, reference = _LazyRandom.of(original.getstate()), copy.deepcopy(original)
    assert [lazy.gauss(), lazy.gauss(), lazy.random()] == [
        reference.gauss(),
        reference.gauss(),
        reference.random(),
    ]
    lazy = _LazyRandom.of(original.getstate())
    lazy.seed(5)
    assert lazy.random() == random.Random(5).random()


def test_a_state_whose_class_copies_itself_is_deep_copied() -> None:
    class Custom(Toy):
        def __deepcopy__(self, memo: dict[int, Any]) -> Custom:
            twin = Custom(self.game)
            twin.hand = ["copied by __deepcopy__"]
            return twin

    twin = Custom(new_game("merde")).clone()
    assert isinstance(twin, Custom) and twin.hand == ["copied by __deepcopy__"]


@pytest.mark.parametrize(
    ("game_id", "tables"), [("merde", ("_strengths", "_strength")), ("tiercon", ("_strength", "_points"))]
)
def test_read_only_tables_are_shared_not_copied(game_id: str, tables: tuple[str, ...]) -> None:
    # the module's precomputed tables a state points into (State._shared_tables) are the same
    # objects in a clone; tiercon's finished tricks are tuples, shared too
    for state in positions(game_id, GAMES[game_id].default_players, 4, seed=9)[1:]:
        twin = state.clone()
        for name in tables:
            assert getattr(twin, name) is getattr(state, name)
        if game_id == "tiercon":
            assert all(a is b for a, b in zip(twin._tricks, state._tricks, strict=True))  # type: ignore[attr-defined]


def test_the_original_generator_turns_lazy_only_when_nothing_else_holds_it() -> None:
    # once cloned, a state's own generator is a lazy copy of itself, so that its next clones
    # share one snapshot; a generator someone else holds too stays the very same object
    state = new_game("merde").new_state(seed=4)
    first = state.clone()
    assert type(state._rng) is _LazyRandom and type(first._rng) is _LazyRandom
    assert state.clone()._rng._snapshot is state._rng._snapshot  # type: ignore[attr-defined]
    held = random.Random(8)
    state._rng = held
    state.clone()
    assert state._rng is held
