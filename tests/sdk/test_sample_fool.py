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
from atout.games.sampling import HiddenDeal, Inconsistent, ObservationCache

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
def test_sampled_worlds_give_the_observation_back_and_play_on(
        config: tuple[int, int, int | None, str]) -> None:
    players, deck, previous_fool, first_attack = config
    game = new_game("fool", players=players, deck=deck, first_attack=first_attack)
    positions = differing = 0
    for seed in itertools.count():  # games until POSITIONS positions
        if positions >= POSITIONS:
            break
        rng = random.Random(seed * 100 + players)
        real = game.new_state(seed=seed, previous_fool=previous_fool)
        heuristic = seed % 2 == 1
        for stop in sorted(rng.sample(range(90 if deck == 36 else 150), 8)):
            play_to(real, stop, rng, heuristic)
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


# -- (b) uniformity --------------------------------------------------------------------------


def played_card(action: str) -> str | None:
    words = action.split()
    return words[2] if words[0] == "beat" else words[1] if len(words) > 1 else None


def dealt_hands(deck: list[str], dealer: int, n: int) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(deck[i] for i in range(6 * n) if (dealer + 1 + i) % n == s) for s in range(n))


def enumerate_six_player_deals(game: Any, obs: dict[str, Any]) -> list[tuple[frozenset[str], ...]]:
    """Every deal of 6 players with 36 cards (nobody draws) that gives ``obs``: each seat was
    dealt the cards it played first, the card the observation shows it was dealt (first-attack
    card, turned card) and some of the unseen ones; every split of those is tried, and kept when
    the engine replays the history from it to the same observation."""
    n, seat, dealer, history = 6, obs["seat"], obs["dealer"], obs["deal_history"]
    deck = game.new_state(seed=0).FULL_DECK
    own: list[set[str]] = [set() for _ in range(n)]
    own[dealer].add(obs["trump_card"])
    if obs["first_attack_card"] is not None:
        own[history[0][0]].add(obs["first_attack_card"])
    for s, card in [*((s, played_card(a)) for s, a in history), *((seat, c) for c in obs["hand"])]:
        if card is not None and not any(card in o for o in own):
            own[s].add(card)
    unseen = [c for c in deck if not any(c in o for o in own)]
    others = [s for s in range(n) if s != seat]
    room = [6 - len(own[s]) for s in others]
    kept = []

    def split(cards: list[str], i: int) -> Any:
        if i == len(others):
            yield []
            return
        for mine in itertools.combinations(cards, room[i]):
            rest = [c for c in cards if c not in mine]
            for tail in split(rest, i + 1):
                yield [set(mine), *tail]

    for parts in split(unseen, 0):
        hands = [set(o) for o in own]
        for s, part in zip(others, parts, strict=True):
            hands[s] |= part
        order = [sorted(hands[s] - {obs["trump_card"]}) for s in range(n)]
        cards = [order[(dealer + 1 + i) % n].pop() if i < 35 else obs["trump_card"] for i in range(36)]
        state = game.new_state(decks=[cards], dealer=dealer, previous_fool=obs["previous_fool"])
        try:
            for s, action in history:
                assert state.current_player == s
                state.apply(action)
        except ValueError:
            continue
        if state.observation(seat) == obs:
            kept.append(dealt_hands(cards, dealer, n))
    return kept


def chi_square_pvalue(game: Any, obs: dict[str, Any], expected: Counter[Any], key: Any, seed: int) -> float:
    """Draws 100 worlds per outcome; every drawn outcome must be expected."""
    rng = random.Random(seed)
    total = sum(expected.values())
    outcomes = sorted(expected, key=repr)
    draws = 100 * len(outcomes)
    seen: Counter[Any] = Counter(key(game.sample_state(obs, rng)) for _ in range(draws))
    assert set(seen) <= set(outcomes), set(seen) - set(outcomes)
    frequencies = [seen[o] for o in outcomes]
    return float(chisquare(frequencies, [draws * expected[o] / total for o in outcomes]).pvalue)


# (seed, plies, seat): 6 players, 36 cards, random play; late positions with 15 and 20 deals
SIX_PLAYER_POSITIONS = [(0, 91, 0), (1, 99, 0)]


@pytest.mark.slow
@pytest.mark.parametrize("position", SIX_PLAYER_POSITIONS)
def test_six_player_worlds_are_uniform_over_every_deal(position: tuple[int, int, int]) -> None:
    seed, plies, seat = position
    game = new_game("fool", players=6, deck=36)
    real = game.new_state(seed=seed)
    rng = random.Random(seed)
    while len(real.history) < plies:
        real.apply(rng.choice(real.legal_actions()))
    obs = json.loads(json.dumps(real.observation(seat)))
    deals = enumerate_six_player_deals(game, obs)
    assert dealt_hands(game.sample_state(obs, rng)._decks[0], real.dealer, 6) in deals
    assert len(deals) == len(set(deals)) >= 15
    pvalue = chi_square_pvalue(game, obs, Counter(deals),
                               lambda w: dealt_hands(w._decks[0], real.dealer, 6), seed)
    assert pvalue > 0.01


def reference_counts(game: Any, seed: int, obs: dict[str, Any]) -> Counter[tuple[frozenset[str], ...]]:
    """The consistent deals of a position, counted by HiddenDeal over every slot, split by which
    unseen cards each other seat holds now (the rest are in the stock). The slots and their
    sizes come from replaying the real game and watching the hands: each dealt hand, each batch
    a seat drew (after action t); the turned card and the first-attack card are fixed. The
    rules' constraints, written out: a card a seat played first at action t was dealt to it or
    drawn by it before t; a card lower than the first-attack card (a lower trump; with no trump
    dealt, any trump or lower card) was dealt to nobody."""
    n, seat, history = game.players, obs["seat"], obs["deal_history"]
    state = game.new_state(seed=seed, previous_fool=obs["previous_fool"])
    trump_card, fac = obs["trump_card"], obs["first_attack_card"]
    owner = [s for s in range(n) for _ in range(6)]  # slot -> seat; slots 0..n-1: dealt hands
    slots: list[set[str]] = [set(h) for h in state.hands]
    when = [-1] * n  # the action after which each slot was filled
    for t, (_, action) in enumerate(history):
        before = [set(h) for h in state.hands]
        table = {c for pair in state.table for c in pair if c} | {played_card(action)}
        state.apply(action)
        for s in range(n):
            drawn = set(state.hands[s]) - before[s] - table
            if drawn:
                slots.append(drawn)
                owner.append(s)
                when.append(t)
    owner = owner[::6][:n] + owner[n * 6:]
    stock = set(state.stock) - {trump_card}
    slots.append(stock)
    trump = trump_card[1]
    if fac is None:
        low: set[str] = set()
    elif fac[1] == trump:
        low = {c for c in state.FULL_DECK if c[1] == trump and RANK_VALUE[c[0]] < RANK_VALUE[fac[0]]}
    else:
        low = {c for c in state.FULL_DECK if c[1] == trump or LOWEST_CARD_KEY[c] < LOWEST_CARD_KEY[fac]}
    first: dict[str, tuple[int, int]] = {}
    for t, (s, action) in enumerate(history):
        card = played_card(action)
        if card is not None:
            first.setdefault(card, (s, t))

    def of(s: int, before: int, is_low: bool) -> list[int]:
        return [i for i in range(len(slots) - 1)
                if owner[i] == s and when[i] < before and not (is_low and i < n)]

    shown = {*first, *obs["hand"], trump_card, fac}
    unseen = [c for c in state.FULL_DECK if c not in shown]
    allowed: dict[str, list[int]] = {}
    for c in state.FULL_DECK:
        if c == fac:
            allowed[c] = [history[0][0]]
        elif c in first:
            allowed[c] = of(first[c][0], first[c][1], c in low)
        elif c in obs["hand"]:
            allowed[c] = of(seat, len(history), c in low)
    cards = [c for c in state.FULL_DECK if c != trump_card]
    counts = [len(slot - {trump_card}) for slot in slots]
    others = [s for s in range(n) if s != seat]
    found: Counter[tuple[frozenset[str], ...]] = Counter()
    for holders in itertools.product([*others, -1], repeat=len(unseen)):
        for c, h in zip(unseen, holders, strict=True):
            allowed[c] = [len(slots) - 1] if h == -1 else of(h, len(history), c in low)
        try:
            count = HiddenDeal(cards, counts, allowed).count
        except Inconsistent:
            continue
        split = tuple(frozenset(c for c, h in zip(unseen, holders, strict=True) if h == s) for s in others)
        found[split] = count
    return found


# (players, seed, plies, seat): 36 cards, random play; late positions where seats have drawn
# and an unseen card is lower than the first-attack card (so in no dealt hand): 5, 6 and 20
# splits of the unseen cards among the other hands (and, with 2 players, the stock)
DRAWN_POSITIONS = [(2, 1, 45, 0), (4, 2, 84, 1), (3, 10, 70, 0)]


@pytest.mark.slow
@pytest.mark.parametrize("position", DRAWN_POSITIONS)
def test_worlds_after_draws_are_uniform_over_every_deal(position: tuple[int, int, int, int]) -> None:
    players, seed, plies, seat = position
    game = new_game("fool", players=players, deck=36)
    real = game.new_state(seed=seed)
    rng = random.Random(seed)
    while len(real.history) < plies:
        real.apply(rng.choice(real.legal_actions()))
    obs = json.loads(json.dumps(real.observation(seat)))
    expected = reference_counts(game, seed, obs)
    worlds = _Worlds(game, obs)
    assert worlds.hidden_low  # a low card is unseen: the weighting by arrangements matters
    assert sum(expected.values()) == worlds.count  # the sampler counts the deals HiddenDeal does
    assert len(expected) >= 5
    unseen = set(worlds.hidden_low + worlds.hidden_plain)
    others = [s for s in range(players) if s != seat]
    pvalue = chi_square_pvalue(game, obs, expected,
                               lambda w: tuple(frozenset(set(w.hands[s]) & unseen) for s in others), seed)
    assert pvalue > 0.01


# -- (c) malformed observations ----------------------------------------------------------------


def test_a_malformed_observation_is_refused_in_one_line() -> None:
    game = new_game("fool", players=3)
    real = game.new_state(seed=4)
    rng = random.Random(4)
    for _ in range(20):
        real.apply(rng.choice(real.legal_actions()))
    good = json.loads(json.dumps(real.observation(1)))
    game.sample_state(good, rng)
    other = new_game("merde", players=3).new_state(seed=1).observation(0)
    bad_cases = {
        "another game": other,
        "another seat count": {**good, "players": 4},
        "missing keys": {k: v for k, v in good.items() if k not in ("deal_history", "hand")},
        "a card of the other deck": {**good, "hand": [*good["hand"][:-1], "2c"]},
        "a history that does not replay": {**good, "deal_history": good["deal_history"][1:]},
        "a hand the history cannot give": {**good, "hand": good["hand"][:-1]},
        "not a dict": ["fool"],
    }
    messages = {}
    for name, obs in bad_cases.items():
        with pytest.raises(ValueError) as caught:
            game.sample_state(obs, rng)  # type: ignore[arg-type]
        messages[name] = str(caught.value)
        assert "\n" not in messages[name] and len(messages[name]) < 200, messages[name]
    assert "'merde', not of fool" in messages["another game"]
    assert "4-player game; this fool game has 3 players" in messages["another seat count"]
    assert "lacks hand, deal_history" in messages["missing keys"]
    assert "'2c' is not in this game's 36-card deck" in messages["a card of the other deck"]
    with pytest.raises(ValueError, match="3-player game; this fool game has 4 players"):
        new_game("fool", players=4).sample_state(good, rng)


def test_the_work_per_observation_is_done_once_and_the_cache_stays_small(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import atout.games.fool as fool

    built = []

    class Counting(fool._Worlds):
        def __init__(self, game: Any, obs: dict[str, Any]) -> None:
            built.append(obs["seat"])
            super().__init__(game, obs)

    monkeypatch.setattr(fool, "_Worlds", Counting)
    monkeypatch.setattr(fool, "_WORLDS", ObservationCache(fool._WORLDS_KEPT))
    game = new_game("fool", players=4)
    real = game.new_state(seed=2)
    rng = random.Random(2)
    for _ in range(25):
        real.apply(rng.choice(real.legal_actions()))
    obs = json.loads(json.dumps(real.observation(1)))
    for _ in range(5):
        game.sample_state(json.loads(json.dumps(obs)), rng)
    assert built == [1]  # one count for five worlds of an equal observation
    mine = json.loads(json.dumps(obs))
    game.sample_state(mine, rng)
    mine["deal_history"].pop()  # the caller changes its dict: the kept copy does not change
    mine["deal_history"].append([0, "pass"])
    assert game.sample_state(obs, rng).observation(1) == obs and built == [1]
    with pytest.raises(ValueError):
        game.sample_state(mine, rng)  # same key, another observation: counted afresh, refused
    assert built == [1, 1]
    for _ in range(20):
        real.apply(rng.choice(real.legal_actions()))
        if real.current_player is None:
            break
        game.sample_state(real.observation(real.current_player), rng)
    assert len(fool._WORLDS) <= fool._WORLDS_KEPT
