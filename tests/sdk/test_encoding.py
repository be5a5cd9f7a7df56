"""atout.encoding: every legal action of every decision has an index, the tensors have their
documented sizes, and they read the observation alone (docs/learning.md)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from atout.bot import MatchInfo, Observation
from atout.bots import HEURISTICS
from atout.encoding import Encoding, encoding_for
from atout.games import Game, State, new_game

# Every game at every seat count, and every option that changes the actions or the tensors
# (merde's zero_bid, regicide's tie and fool's first_attack change neither).
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    *(("merde", {"players": n}) for n in range(3, 8)),
    ("merde", {"players": 4, "deals": 2, "zero_bid": "five_plus_tricks"}),
    ("tiercon", {}),
    *(("regicide", {"players": n}) for n in (2, 3, 4)),
    ("regicide", {"players": 4, "teams": True, "tie": "share"}),
    *(("fool", {"players": n, "deck": deck}) for n in range(2, 7) for deck in (36, 52)),
    ("fool", {"players": 3, "first_attack": "left_of_fool"}),
]
IDS = [g + "".join(f"-{k}={v}" for k, v in kw.items()) for g, kw in CONFIGS]


def section(enc: Encoding, tensor: list[float], name: str, sections: Any = None) -> list[float]:
    """The slice of ``tensor`` that is section ``name``."""
    offset = 0
    for key, size in sections or enc.sections:
        if key == name:
            return tensor[offset : offset + size]
        offset += size
    raise KeyError(name)


def heuristic_players(game: Game[Any], seed: int) -> list[Any]:
    bots = []
    for seat in range(game.players):
        bot = HEURISTICS[game.id]()
        bot.rng = random.Random(seed * 100 + seat)
        bot.match = MatchInfo("m", game.id, seat, game.players, dict(game.options))
        bot.on_match_start(bot.match)
        bots.append(bot)
    return bots


def played_decisions(game: Game[Any], seed: int, heuristic: bool) -> set[str]:
    """Plays a whole game, random or heuristic, checking at each decision that every legal
    action has an index, the mask, and the acting seat's tensors (every seat's at the end).
    Returns the legal actions met."""
    enc = encoding_for(game)
    state, rng = game.new_state(seed=seed), random.Random(seed)
    bots = heuristic_players(game, seed) if heuristic else None
    seen: set[str] = set()
    while not state.is_terminal:
        seat, legal = state.current_player, state.legal_actions()
        assert seat is not None
        seen.update(legal)
        mask = enc.mask(legal)
        assert [enc.action(i) for i, bit in enumerate(mask) if bit] == sorted(legal, key=enc.index)
        assert sum(mask) == len(legal)
        obs = state.observation(seat)
        tensor = enc.tensor(obs)
        assert len(tensor) == enc.size and len(enc.observation_tensor(obs)) == enc.observation_size
        assert all(math.isfinite(x) and 0.0 <= x <= high for x, high in zip(tensor, enc.high, strict=True))
        view = enc.observation_tensor(obs)
        assert all(0.0 <= x <= high for x, high in zip(view, enc.observation_high, strict=True))
        state.apply(bots[seat].act(Observation(obs, legal)) if bots else rng.choice(legal))
    for seat in range(game.players):
        tensor = enc.tensor(state.observation(seat))
        assert all(0.0 <= x <= high for x, high in zip(tensor, enc.high, strict=True))
    return seen


@pytest.mark.parametrize(("game_id", "options"), CONFIGS, ids=IDS)
def test_every_legal_action_has_an_index(game_id: str, options: dict[str, Any]) -> None:
    game = new_game(game_id, **options)
    enc = encoding_for(game)
    seen: set[str] = set()
    for seed in range(4):
        seen |= played_decisions(game, seed, heuristic=seed % 2 == 1)
    assert seen <= set(enc.actions)
    # every kind of action shows up in these games (bids, plays, announcements, cuts...)
    rare = {"declare", "marriage", "exchange"}  # see test_every_announcement_of_many_tiercon_deals...
    assert {a.split()[0] for a in seen} >= {a.split()[0] for a in enc.actions} - rare


@pytest.mark.parametrize(("game_id", "options"), CONFIGS, ids=IDS)
def test_round_trip_and_sections_sum_to_size(game_id: str, options: dict[str, Any]) -> None:
    enc = encoding_for(game_id, **options)
    assert len(set(enc.actions)) == len(enc.actions)
    assert all(enc.index(enc.action(i)) == i for i in range(len(enc.actions)))
    assert sum(size for _, size in enc.sections) == enc.size
    assert sum(size for _, size in enc.observation_sections) == enc.observation_size
    assert len({name for name, _ in enc.sections}) == len(enc.sections)
    assert enc.mask([]) == [0] * len(enc.actions)


def test_action_spaces_of_the_documented_shape() -> None:
    """The sizes docs/learning.md gives."""
    assert len(encoding_for("merde", players=4).actions) == 14 + 52  # bid 0..13, play 52 cards
    assert len(encoding_for("merde", players=4, deals=2).actions) == 3 + 52
    tiercon = encoding_for("tiercon")
    assert len(tiercon.actions) == 84 + 4 + 2 + 12 + 32
    assert "declare 7h 8h 9h Th Jh Qh Kh Ah" in tiercon.actions
    assert "declare Jc Jd Jh Js" in tiercon.actions
    assert len(encoding_for("regicide", players=3).actions) == 12 + 42
    fool36 = encoding_for("fool", players=2)
    assert len(fool36.actions) == 36 + 4 * 36 + 36 * 27 + 1 + 36 + 1
    assert "beat 6c 7c" in fool36.actions and "beat 7c 6c" not in fool36.actions
    assert "beat Ac 6h" in fool36.actions  # hearts may be trump
    assert len(encoding_for("fool", players=2, deck=52).actions) == 52 + 4 * 78 + 52 * 39 + 1 + 52 + 1


def test_every_announcement_of_many_tiercon_deals_has_an_index() -> None:
    """Announcements are rare in a playout: the first turns of 300 deals (sequences, fours of
    a kind, marriages, exchanges) all have indices."""
    game = new_game("tiercon")
    enc = encoding_for(game)
    kinds: set[str] = set()
    for seed in range(300):
        legal = game.new_state(seed=seed).legal_actions()
        enc.mask(legal)
        kinds.update(a.split()[0] for a in legal)
    assert kinds >= {"declare", "marriage", "exchange"}


def test_unknown_action_or_index_is_one_clear_line() -> None:
    enc = encoding_for("merde", players=3, deals=3)
    message = r"^action 'bid 4' is not in merde's action space \(56 actions"
    with pytest.raises(ValueError, match=message) as err:
        enc.index("bid 4")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="'play 1x' is not in merde's action space"):
        enc.mask(["bid 0", "play 1x"])
    with pytest.raises(ValueError, match=r"action index 56 is not in 0\.\.55"):
        enc.action(56)
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        encoding_for("chess")
    with pytest.raises(ValueError, match="option 'deals'"):
        encoding_for("merde", players=7, deals=8)
    other = new_game("tiercon").new_state(seed=1).observation(0)
    with pytest.raises(ValueError, match=r"not an observation of merde at 3 players \(its game is 'tiercon'"):
        enc.tensor(other)


def test_a_game_or_its_id_give_the_same_encoding() -> None:
    game = new_game("fool", players=3, deck=52)
    assert encoding_for(game) is encoding_for("fool", players=3, deck=52)
    assert encoding_for("regicide", teams=True).players == 4
    with pytest.raises(ValueError, match="takes no players or options"):
        encoding_for(game, players=3)


def play_until(state: State, rng: random.Random, done: Any) -> None:
    while not done(state):
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(
    ("game_id", "options"),
    [("merde", {"players": 4}), ("tiercon", {}), ("regicide", {"players": 3}), ("fool", {"players": 3})],
)
def test_a_different_card_seen_gives_a_different_tensor(game_id: str, options: dict[str, Any]) -> None:
    """Two states alike but for the card one seat played: every seat's tensors tell them apart,
    and the player's own block of "played" holds the card it played."""
    game = new_game(game_id, **options)
    enc = encoding_for(game)
    rng = random.Random(5)
    state = game.new_state(seed=5)
    verbs = ("play", "attack")
    play_until(state, rng, lambda s: sum(a.split()[0] in verbs for a in s.legal_actions()) >= 2)
    player = state.current_player
    assert player is not None
    first, second = [a for a in state.legal_actions() if a.split()[0] in verbs][:2]
    a, b = state.clone(), state.clone()
    a.apply(first)
    b.apply(second)
    for seat in range(game.players):
        obs_a, obs_b = a.observation(seat), b.observation(seat)
        assert enc.tensor(obs_a) != enc.tensor(obs_b)
        assert enc.observation_tensor(obs_a) != enc.observation_tensor(obs_b)
        block = section(enc, enc.tensor(obs_a), "played")
        size = len(enc.deck)
        mine = block[(player - seat) % game.players * size :][:size]
        assert mine[enc.deck.index(first.split()[-1])] == 1.0


@pytest.mark.parametrize(
    ("game_id", "options"),
    [("merde", {"players": 4}), ("tiercon", {}), ("regicide", {"players": 3}), ("fool", {"players": 4})],
)
def test_other_seats_hidden_cards_do_not_change_a_seats_tensor(game_id: str, options: dict[str, Any]) -> None:
    """Two full states with the same observation for seat 0 (drawn by game.sample_state) but
    other hidden cards: seat 0's tensors are equal, another seat's differ."""
    game = new_game(game_id, **options)
    enc = encoding_for(game)
    state = game.new_state(seed=11)
    play_until(state, random.Random(11), lambda s: len(s.history) >= 6 and len(s.observation(1)["hand"]) >= 2)
    obs = state.observation(0)
    worlds = [game.sample_state(obs, random.Random(k)) for k in range(12)]
    assert all(w.observation(0) == obs for w in worlds)
    assert len({tuple(enc.tensor(w.observation(0))) for w in worlds}) == 1
    assert len({tuple(enc.observation_tensor(w.observation(0))) for w in worlds}) == 1
    assert enc.tensor(worlds[0].observation(0)) == enc.tensor(obs)
    assert len({tuple(enc.tensor(w.observation(1))) for w in worlds}) > 1  # seat 1's hand differs


def test_tensors_are_relative_to_the_observing_seat() -> None:
    """Seat offset 0 is the observer: its hand, its score, its turn."""
    game = new_game("merde", players=3, deals=2)
    enc = encoding_for(game)
    state = game.new_state(seed=3, dealer=2)  # seat 0 bids first
    state.apply("bid 1")
    for seat in range(3):
        obs = state.observation(seat)
        tensor = enc.tensor(obs)
        hand = section(enc, tensor, "hand")
        assert [enc.deck[i] for i, x in enumerate(hand) if x] == obs["hand"]
        bids = section(enc, tensor, "bids")  # 3 blocks of [none, 0, 1, 2]
        assert bids[(0 - seat) % 3 * 4 + 2] == 1.0  # seat 0's bid 1, in its relative block
        turn = section(enc, tensor, "current_player")
        assert turn.index(1.0) == (1 - seat) % 3


def test_fool_remembers_the_cards_a_seat_took() -> None:
    """A defender who took the table is known to hold those cards until it plays them."""
    game = new_game("fool", players=3)
    enc = encoding_for(game)
    rng = random.Random(2)
    state = game.new_state(seed=2)
    taken: list[str] = []
    taker = -1
    while not taken:
        seat = state.current_player
        legal = state.legal_actions()
        if "take" in legal:
            taken = [c for pair in state.observation(0)["table"] for c in pair if c]
            taker = seat if seat is not None else -1
            state.apply("take")
        else:
            state.apply(rng.choice([a for a in legal if a != "take"]))
    play_until(state, rng, lambda s: not s.observation(0)["table"] or s.is_terminal)
    for seat in range(3):
        obs = state.observation(seat)
        block = section(enc, enc.tensor(obs), "known_held")
        size = len(enc.deck)
        known = block[(taker - seat) % 3 * size :][:size]
        assert {enc.deck[i] for i, x in enumerate(known) if x} >= set(taken)
