"""Tiercon.sample_state: worlds a seat cannot tell from the real one.

Properties over many random positions (random and heuristic play, every phase, later deals and
the game's end), each world checked against the rules independently of the sampler; on small
positions every consistent deal is enumerated through the engine alone and the sampler's
frequencies pass a chi-square test; malformed observations are one clear ValueError.
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
from atout.bots.tiercon import TierconHeuristicBot
from atout.games import IllegalAction, new_game
from atout.games.tiercon import DECK, TierconState

GAME = new_game("tiercon")
NATURAL = "789TJQKA"
PLAIN, TRUMP = "789JQKTA", "78QKTA9J"


def replay(deck: list[str], dealer: int, history: list[Any]) -> TierconState:
    state = GAME.new_state(decks=[deck], dealer=dealer)
    for _, action in history:
        state.apply(action)
    return state


def may_answer(hand: list[str], led: str, card: str, stock: int, trump: str) -> bool:
    """RULES.md's obligations of the second player, written out here: follow suit (once the stock
    is empty, beat if able), else trump if able, else any card; the trump jack is never forced
    (judged without it; played whenever the obligations with it would allow it)."""
    jack = "J" + trump

    def higher(c: str) -> bool:
        order = TRUMP if c[1] == trump else PLAIN
        return c[1] == led[1] and order.index(c[0]) > order.index(led[0])

    def ordinary(h: list[str]) -> list[str]:
        same = [c for c in h if c[1] == led[1]]
        if same:
            return [c for c in same if higher(c)] or same if stock == 0 else same
        return [c for c in h if c[1] == trump] or h

    if jack not in hand or len(hand) == 1:
        return card in ordinary(hand)
    return card in ordinary([c for c in hand if c != jack]) or (card == jack and jack in ordinary(hand))


def check_obligations(world: TierconState, observation: dict[str, Any]) -> None:
    """Every seat's holdings in the sampled deal respect every obligation the deal history
    shows: replayed from the world's own deck, each answer to a trick was allowed by the hand
    then held (may_answer), each announced card was held (a sequence without its neighbours),
    the marriage's king and queen and the exchanged seven were held."""
    trump = observation["trump_card"][1]
    state = GAME.new_state(decks=[world._decks[0]], dealer=observation["dealer"])
    for seat, action in observation["deal_history"]:
        hand = list(state._hands[seat])
        verb, *cards = action.split()
        if verb == "play" and state._trick:
            led = state._trick[0][1]
            assert may_answer(hand, led, cards[0], state._stock_count(), trump), (hand, led, action)
        elif verb == "declare":
            assert set(cards) <= set(hand), (hand, action)
            if cards[0][0] != cards[-1][0]:
                low, high = NATURAL.index(cards[0][0]) - 1, NATURAL.index(cards[-1][0]) + 1
                assert not any(0 <= i < 8 and NATURAL[i] + cards[0][1] in hand for i in (low, high))
        elif verb == "marriage":
            assert {"K" + trump, "Q" + trump} <= set(hand)
        elif verb == "exchange":
            assert "7" + trump in hand
        state.apply(action)


def heuristic_player(seed: int) -> Any:
    bot = TierconHeuristicBot()
    bot.rng = random.Random(seed)

    def choose(state: TierconState, rng: random.Random) -> str:
        assert state.current_player is not None
        raw = state.observation(state.current_player)
        return bot.act(Observation(raw, state.legal_actions()))

    return choose


def random_player(state: TierconState, rng: random.Random) -> str:
    return rng.choice(state.legal_actions())


def positions(seeds: range, heuristic: bool) -> list[tuple[TierconState, random.Random]]:
    """Games played by two random bots or two heuristic ones, each kept at five random plies
    (one game in four also at its end)."""
    out: list[tuple[TierconState, random.Random]] = []
    for seed in seeds:
        rng = random.Random(seed)
        players = [heuristic_player(seed), heuristic_player(seed + 1)] if heuristic else [random_player] * 2
        state = GAME.new_state(seed=seed)
        stops = {rng.randrange(180) for _ in range(5)} | ({10_000} if seed % 4 == 0 else set())
        while True:
            if len(state.history) in stops or state.is_terminal:
                kept = state.clone()
                assert isinstance(kept, TierconState)
                out.append((kept, random.Random(len(out))))
            if state.is_terminal or len(state.history) > max(stops):
                break
            assert state.current_player is not None
            state.apply(players[state.current_player](state, rng))
    return out


@pytest.mark.parametrize("heuristic", [False, True], ids=["random", "heuristic"])
def test_sampled_worlds_are_consistent_legal_and_varied(heuristic: bool) -> None:
    checked = varied = hidden = 0
    phases: Counter[str] = Counter()
    for state, rng in positions(range(0 if heuristic else 10_000, 100 if heuristic else 10_100), heuristic):
        acting = state.current_player if state.current_player is not None else 0
        for seat in (acting, 1 - acting):
            observation = json.loads(json.dumps(state.observation(seat)))
            phases[observation["phase"]] += 1
            real = (sorted(state._hands[1 - seat]), list(state._stock))
            differs = False
            for k in range(2):
                world = GAME.sample_state(json.loads(json.dumps(observation)), rng)
                assert world.observation(seat) == observation
                check_obligations(world, observation)
                differs |= (sorted(world._hands[1 - seat]), list(world._stock)) != real
                if k == 0 and seat == acting:
                    while not world.is_terminal:  # play on, legally, to the game's end
                        world.apply(rng.choice(world.legal_actions()))
                checked += 1
            # the other hand holds a card not seen, and the stock a face-down card: it may vary
            if state._stock and set(real[0]) - set(state._revealed):
                hidden += 1
                varied += differs
    assert checked >= 1800 and min(phases.values()) >= 10, (checked, phases)
    # two samples of a position give the real deal twice only where nearly everything is known
    assert varied >= 0.95 * hidden, (varied, hidden)


def test_deal_history_and_the_turned_card_stay_in_the_observation() -> None:
    state = GAME.new_state(seed=5)
    rng = random.Random(5)
    deals = set()
    while not state.is_terminal:
        observation = state.observation(0)
        assert observation["trump_card"][1] == observation["trump"]
        if observation["deal"] not in deals:  # a new deal starts with no action
            deals.add(observation["deal"])
            assert observation["deal_history"] == []
        if observation["turned"] is not None and not observation["exchange_done"]:
            assert observation["turned"] == observation["trump_card"]
        seat = state.current_player
        action = rng.choice(state.legal_actions())
        state.apply(action)
        assert state.observation(1)["deal_history"][-1:] in ([[seat, action]], [])
    last = state.observation(1)["deal_history"]  # at the end: the last deal's actions
    assert len(last) >= 32 and last[-1] == [*state.history[-1]] and len(deals) >= 2


# -- uniformity: small positions enumerated through the engine alone ----------------------------


def crafted(hands: dict[int, str], turned: str, stock: str, dealer: int) -> list[str]:
    """A deck dealing ``hands`` (nine cards a seat), turning ``turned``, then ``stock`` on top of
    the face-down cards; the remaining cards below, in deck order."""
    named = [*hands[0].split(), *hands[1].split(), turned, *stock.split()]
    assert len(set(named)) == len(named) == 19 + len(stock.split())
    deck: list[str] = []
    for i in range(9):  # one card at a time, the dealer's opponent first
        deck += [hands[1 - dealer].split()[i], hands[dealer].split()[i]]
    return [*deck, turned, *stock.split(), *(c for c in DECK if c not in named)]


# Seat 0 leads and announces all nine cards (a run of six and four jacks sharing Jc), trump
# hearts: seat 1 cannot see only what seat 0 draws. Seat 0 leads Js, seat 1 wins with As and
# leads Ks; seat 0, void in spades and holding no trump but the (never forced) jack, plays 7c.
SCENE_A = crafted({0: "7c 8c 9c Tc Jc Qc Jd Jh Js", 1: "9d Td Qd Kd Ad 7s Qs Ks As"}, "8h",
                  "9s 8s Kc Ac 7d 8d 7h 9h Th Qh Kh Ah Ts", dealer=1)  # fmt: skip
HISTORY_A = [[0, "declare 7c 8c 9c Tc Jc Qc"], [0, "declare Jc Jd Jh Js"], [0, "play Js"],
             [1, "play As"], [1, "cut 1"], [1, "play Ks"], [0, "play 7c"]]  # fmt: skip
# Seat 1 (the dealer) announces a run of eight diamonds and answers seat 0's As with 7d: its
# ninth card is neither a spade nor a trump other than the jack (trump hearts).
SCENE_B = crafted({0: "7c 8c Tc Jc 8h 9h Qs Ks As", 1: "9c 7d 8d 9d Td Jd Qd Kd Ad"}, "7h", "", dealer=1)
HISTORY_B = [[0, "play As"], [1, "declare 7d 8d 9d Td Jd Qd Kd Ad"], [1, "play 7d"]]

SMALL = [
    (SCENE_A, HISTORY_A[:6], 1),  # seat 0's first draw is any of 12 cards
    (SCENE_A, HISTORY_A, 1),  # ... not a spade nor a trump but Jh (4), then its second draw: 30
    (SCENE_B, HISTORY_B[:2], 0),  # seat 1's ninth card: 14
    (SCENE_B, HISTORY_B, 0),  # ... not a spade nor a trump other than Jh
]


def places(deck: list[str], history: list[Any], seat: int) -> tuple[list[int], list[int], list[int]]:
    """The deck positions of the other seat's nine dealt cards, of each card it drew (in drawing
    order) and of the cards still in the stock, found by replaying the real deck (dealer 1)."""
    other = 1 - seat
    state, drawn_at = GAME.new_state(decks=[deck], dealer=1), []
    for _, action in history:
        before = set(state._hands[other])
        state.apply(action)
        drawn_at += [deck.index(c) for c in set(state._hands[other]) - before]
    first = list(range(0 if other == 0 else 1, 18, 2))  # dealer 1: seat 0 gets the even cards
    return first, drawn_at, sorted(deck.index(c) for c in state._stock)


def every_deal(deck: list[str], history: list[Any], seat: int) -> list[tuple[Any, ...]]:
    """Every deal of the cards the other seat's places can hold (its nine dealt cards, each card
    it drew, the cards still in the stock) that replays ``history`` legally and shows ``seat``
    the same observation, found through the engine only. The cards the other seat played or
    announced lie in its places (seen there); ``seat``'s own cards stay where they are (the
    sampler draws that part independently of this one)."""
    observation = replay(deck, 1, history).observation(seat)
    first, drawn_at, stock_at = places(deck, history, seat)
    pool = [deck[p] for p in first + drawn_at + stock_at]
    seen = {c for s, a in history if s == 1 - seat for c in a.split()[1:] if c in DECK}
    found = []
    for drawn in itertools.permutations(pool, len(drawn_at)):
        rest = [c for c in pool if c not in drawn]
        must = [c for c in rest if c in seen]
        free = [c for c in rest if c not in seen]
        for extra in itertools.combinations(free, 9 - len(must)):
            dealt = must + list(extra)
            stocked = [c for c in rest if c not in dealt]
            candidate = list(deck)
            for where, cards in ((first, dealt), (drawn_at, drawn), (stock_at, stocked)):
                for p, c in zip(where, cards, strict=True):
                    candidate[p] = c
            try:
                if replay(candidate, 1, history).observation(seat) != observation:
                    continue
            except IllegalAction:
                continue
            found.append((frozenset(dealt), tuple(drawn), frozenset(stocked)))
    return found


@pytest.mark.parametrize(("deck", "history", "seat"), SMALL)
def test_every_consistent_deal_is_drawn_equally_often(deck: list[str], history: list[Any], seat: int) -> None:
    every = every_deal(deck, history, seat)
    assert 4 <= len(every) <= 40 and len(set(every)) == len(every)
    observation = json.loads(json.dumps(replay(deck, 1, history).observation(seat)))
    first, drawn_at, stock_at = places(deck, history, seat)
    rng = random.Random(len(every))
    seen: Counter[tuple[Any, ...]] = Counter()
    for _ in range(100 * len(every)):
        d = GAME.sample_state(observation, rng)._decks[0]
        seen[
            frozenset(d[p] for p in first), tuple(d[p] for p in drawn_at), frozenset(d[p] for p in stock_at)
        ] += 1
    assert set(seen) <= set(every)
    observed = [seen[deal] for deal in every]
    assert chisquare(observed).pvalue > 0.01, observed


def test_a_malformed_observation_is_one_clear_error() -> None:
    state = GAME.new_state(seed=2)
    for _ in range(12):
        state.apply(state.legal_actions()[-1])
    good = json.loads(json.dumps(state.observation(0)))
    rng = random.Random(0)
    merde = json.loads(json.dumps(new_game("merde", players=3).new_state(seed=1).observation(0)))
    mine = good["hand"][0]
    cases = [
        (merde, "not a tiercon observation: its game is 'merde'"),
        ({**good, "players": 3}, "not an observation of this game: 3 players, not 2"),
        ({k: v for k, v in good.items() if k != "deal_history"}, "missing key.s. deal_history"),
        ({**good, "seat": 4}, "seat, dealer or trump_card is not valid"),
        ({**good, "deal_history": [[0, "fly away"]]}, "unknown action 'fly away'"),
        ({**good, "deal_history": [[0, ["play", "7c"]]]}, "deal_history is not valid"),
        ({**good, "hand": 7}, "hand, trump_card or deal_history is not valid"),
        ({**good, "deal_history": [*good["deal_history"], [0, f"play {mine}"]]}, "no deal"),  # then held
        ({**good, "tricks_won": [9, 9]}, "differs from the replay of its deal_history"),
    ]
    for observation, message in cases:
        with pytest.raises(ValueError, match=message) as caught:
            GAME.sample_state(observation, rng)
        assert "\n" not in str(caught.value), str(caught.value)
