"""Acceptance cases for ``fool``, written from RULES.md and DESIGN.md only.

Every expected value below was worked out by hand from the rules text (not read back from the
engine), with exact decks passed through ``new_state(decks=[...], dealer=...)``. The last test
plays random games against a small reference model written from RULES.md as well.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from atout.games import IllegalAction, new_game

RANKS36, RANKS52 = "6789TJQKA", "23456789TJQKA"


def full_deck(size: int = 36) -> list[str]:
    return [r + s for s in "cdhs" for r in (RANKS36 if size == 36 else RANKS52)]


def deck_for(players: int, dealer: int, hands: Mapping[int, Sequence[str]], rest: Sequence[str] = (),
             size: int = 36) -> list[str]:  # fmt: skip
    """The deck (top first) that deals ``hands`` (six cards each, in that order), one card at a
    time from the dealer's left; then ``rest`` (the turned card first), then the unnamed cards."""
    deck = []
    for i in range(6 * players):
        deck.append(hands[(dealer + 1 + i) % players][i // players])
    deck += list(rest)
    deck += [c for c in full_deck(size) if c not in deck]
    assert sorted(deck) == sorted(full_deck(size)), deck
    return deck


def new(players: int, cards: list[str], dealer: int, **kw: Any) -> Any:
    options = {k: kw.pop(k) for k in ("deck", "first_attack") if k in kw}
    return new_game("fool", players=players, **options).new_state(decks=[cards], dealer=dealer, **kw)


def hand(state: Any, seat: int) -> set[str]:
    return set(state.observation(seat)["hand"])


def run(state: Any, actions: Sequence[str]) -> None:
    for action in actions:
        state.apply(action)


def who(state: Any) -> tuple[Any, Any, Any]:
    obs = state.observation(0)
    return obs["attacker"], obs["defender"], state.current_player


# -- options --------------------------------------------------------------------------------------


def test_options_defaults_and_validation() -> None:
    game = new_game("fool", players=3)
    assert game.options["deck"] == 36 and game.options["first_attack"] == "right_of_fool"
    assert new_game("fool", players=3, deck=52, first_attack="left_of_fool").options["deck"] == 52
    cases: list[tuple[dict[str, Any], str]] = [
        ({"deck": 32}, "deck"), ({"deck": "52"}, "deck"), ({"first_attack": "right"}, "first_attack"),
        ({"players": 1}, "players"), ({"players": 7}, "players"), ({"trump": "h"}, "trump"),
    ]  # fmt: skip
    for kwargs, name in cases:
        with pytest.raises(ValueError, match=name):
            new_game("fool", **kwargs)


def test_deck_52_ranks_and_size() -> None:
    state = new_game("fool", players=2, deck=52).new_state(seed=1)
    seen = hand(state, 0) | hand(state, 1)
    assert len(seen) == 12 and state.observation(0)["stock"] == 40
    deck = full_deck(52)
    state = new(2, deck, 0, deck=52)
    assert hand(state, 1) == set(deck[0:12:2]) and hand(state, 0) == set(deck[1:12:2])
    assert state.observation(0)["trump"] == deck[12][1]  # 2c 3c 4c ... 6d is dealt; 7d turned
    with pytest.raises(ValueError):
        new(2, full_deck(36), 0, deck=52)


# -- the deal and the trump -----------------------------------------------------------------------


def test_deal_from_the_dealers_left_then_turned_card_under_the_stock() -> None:
    deck = full_deck(36)
    state = new(3, deck, 1)
    # seat 2 (the dealer's left) gets deck[0], seat 0 deck[1], seat 1 deck[2], ...
    assert hand(state, 2) == set(deck[0:18:3])
    assert hand(state, 0) == set(deck[1:18:3])
    assert hand(state, 1) == set(deck[2:18:3])
    obs = state.observation(0)
    assert obs["trump"] == deck[18][1] == "h" and obs["dealer"] == 1 and obs["stock"] == 18
    assert deck[18] in json.dumps(obs)  # the turned card is face up
    assert obs["table"] == [] and obs["scores"] == [0, 0, 0]


def test_six_players_36_cards_last_card_dealt_is_trump() -> None:
    hands = {s: full_deck(36)[6 * s : 6 * s + 6] for s in range(6)}
    # dealer 2: seat 2 receives the last card dealt (its sixth, Ad)
    deck = deck_for(6, 2, hands)
    state = new(6, deck, 2)
    assert deck[35] == hands[2][5] == "Ad"
    for seat in range(6):
        obs = state.observation(seat)
        assert obs["trump"] == "d" and obs["stock"] == 0
        assert "Ad" in json.dumps(obs)  # shown to all
    assert "Ad" in hand(state, 2)


def test_first_attacker_lowest_trump() -> None:
    hands = {
        0: ["7s", "Kc", "Ac", "Kd", "Ad", "Ah"],
        1: ["Qc", "Qd", "Qh", "Ks", "Js", "Kh"],
        2: ["6c", "6d", "6h", "Tc", "Td", "Th"],
    }
    state = new(3, deck_for(3, 0, hands, ["9s"]), 0)  # trump spades; 7s is the lowest trump
    assert who(state) == (0, 1, 0)
    assert state.observation(2)["trump"] == "s"


def test_first_attacker_without_trumps_lowest_card_then_suit_order() -> None:
    # 52 cards, 2 players, trump hearts: nobody holds a heart. Lowest rank 2: seat 0 holds 2s,
    # seat 1 2d; diamonds come before spades.
    hands = {0: ["2s", "3c", "9d", "Tc", "Qs", "Ks"], 1: ["2d", "5c", "7s", "8c", "Jd", "As"]}
    state = new(2, deck_for(2, 0, hands, ["Ah"], size=52), 0, deck=52)
    assert state.observation(0)["trump"] == "h"
    assert who(state) == (1, 0, 1)
    hands = {0: ["2c", "3c", "9d", "Tc", "Qs", "Ks"], 1: ["2d", "5c", "7s", "8c", "Jd", "As"]}
    state = new(2, deck_for(2, 1, hands, ["Ah"], size=52), 1, deck=52)
    assert who(state) == (0, 1, 0)  # 2c before 2d


@pytest.mark.parametrize(
    ("first_attack", "attacker", "defender"), [("right_of_fool", 1, 2), ("left_of_fool", 3, 0)]
)
def test_later_games_first_attack_around_the_previous_fool(first_attack: str, attacker: int,
                                                           defender: int) -> None:  # fmt: skip
    deck = full_deck(36)
    state = new_game("fool", players=4, first_attack=first_attack).new_state(decks=[deck], previous_fool=2)
    obs = state.observation(0)
    # the previous fool deals: seat 3 (its left) gets deck[0]
    assert obs["dealer"] == 2 and hand(state, 3) == set(deck[0:24:4])
    assert who(state) == (attacker, defender, attacker)


def test_previous_fool_default_is_right_of_fool() -> None:
    state = new_game("fool", players=3).new_state(seed=4, previous_fool=0)
    assert who(state) == (2, 0, 2)


# -- a four-player game with a stock ----------------------------------------------------------------

FOUR = {
    0: ["6s", "7c", "7d", "8h", "9h", "Kh"],
    1: ["Tc", "Jd", "8d", "Ac", "Ad", "Qh"],
    2: ["Td", "6h", "7h", "9c", "Jc", "Kc"],
    3: ["6d", "9d", "Kd", "8c", "Qc", "6c"],
}
FOUR_STOCK = ["9s", "7s", "8s", "Qd", "Th", "Jh", "Ah", "Ts", "Js", "Qs", "Ks", "As"]  # 9s turned


def four() -> Any:
    return new(4, deck_for(4, 3, FOUR, FOUR_STOCK), 3)


BOUT_A = [
    "attack 7c", "beat 7c Tc",
    "pass",  # seat 0 (may add 7d) passes
    "add Td",  # seat 2
    "beat Td Jd",
    "add 7d",  # the right to add went back to seat 0
    "beat 7d 8d",
    "pass", "pass", "pass",  # seats 0, 2, 3
]  # fmt: skip


def test_bout_add_order_and_face_cards_scored() -> None:
    s = four()
    obs = s.observation(0)
    assert obs["trump"] == "s" and obs["stock"] == 12
    assert who(s) == (0, 1, 0)  # 6s, the lowest trump
    assert set(s.legal_actions()) == {"attack " + c for c in FOUR[0]}
    s.apply("attack 7c")
    assert s.current_player == 1
    assert set(s.legal_actions()) == {"beat 7c Tc", "beat 7c Ac", "take"}
    assert s.observation(2)["table"] == [["7c", None]]
    s.apply("beat 7c Tc")
    assert s.current_player == 0 and set(s.legal_actions()) == {"add 7d", "pass"}
    s.apply("pass")
    assert s.current_player == 2 and set(s.legal_actions()) == {"add Td", "add 7h", "pass"}
    s.apply("add Td")
    assert s.current_player == 1 and set(s.legal_actions()) == {"beat Td Jd", "beat Td Ad", "take"}
    s.apply("beat Td Jd")
    assert s.current_player == 0  # the right to add starts again with the attacker
    s.apply("add 7d")
    assert s.current_player == 1 and set(s.legal_actions()) == {"beat 7d 8d", "beat 7d Ad", "take"}
    s.apply("beat 7d 8d")
    assert s.observation(3)["table"] == [["7c", "Tc"], ["Td", "Jd"], ["7d", "8d"]]
    assert s.current_player == 0 and set(s.legal_actions()) == {"add 8h", "pass"}
    s.apply("pass")
    assert s.current_player == 2 and set(s.legal_actions()) == {"add 7h", "add Jc", "pass"}
    s.apply("pass")
    assert s.current_player == 3 and set(s.legal_actions()) == {"add 8c", "pass"}
    s.apply("pass")
    # a full defence: only the attack card Td is a face card (the covers Tc, Jd do not count)
    assert s.scores == [0, 1, 0, 0] and s.observation(2)["scores"] == [0, 1, 0, 0]
    assert s.observation(0)["table"] == []
    # refill: the attacker (seat 0) 7s 8s, then seat 1 Qd Th Jh, seat 2 Ah, seat 3 none
    assert hand(s, 0) == {"6s", "8h", "9h", "Kh", "7s", "8s"}
    assert hand(s, 1) == {"Ac", "Ad", "Qh", "Qd", "Th", "Jh"}
    assert hand(s, 2) == {"6h", "7h", "9c", "Jc", "Kc", "Ah"}
    assert hand(s, 3) == set(FOUR[3])
    assert s.observation(0)["stock"] == 6
    # the defender attacks next, the next player defends
    assert who(s) == (1, 2, 1)


BOUT_B = [
    "attack Qh", "take",
    "add Qd",  # seat 1, the attacker, first
    "pass",  # seat 1 again: each added card gives the first right back to the attacker
    "add Qc",  # seat 3
    "pass", "pass", "pass",  # seats 1, 3, 0
]  # fmt: skip


def test_take_then_adds_then_the_defender_takes() -> None:
    s = four()
    run(s, BOUT_A)
    s.apply("attack Qh")
    assert set(s.legal_actions()) == {"beat Qh Ah", "take"}
    s.apply("take")
    assert s.current_player == 1 and set(s.legal_actions()) == {"add Qd", "pass"}
    s.apply("add Qd")
    assert s.current_player == 1 and s.legal_actions() == ["pass"]  # no answer from a taker
    s.apply("pass")
    assert s.current_player == 3 and set(s.legal_actions()) == {"add Qc", "pass"}
    s.apply("add Qc")
    assert s.current_player == 1
    s.apply("pass")
    assert s.current_player == 3
    s.apply("pass")
    assert s.current_player == 0 and s.legal_actions() == ["pass"]  # asked though nothing fits
    s.apply("pass")
    # the defender took everything and scores nothing
    assert hand(s, 2) == {"6h", "7h", "9c", "Jc", "Kc", "Ah", "Qh", "Qd", "Qc"}
    assert s.scores == [0, 1, 0, 0]
    # refill: the attacker (seat 1) Ts Js, seat 2 none (9 cards), seat 3 Qs, seat 0 none
    assert hand(s, 1) == {"Ac", "Ad", "Th", "Jh", "Ts", "Js"}
    assert hand(s, 3) == {"6d", "9d", "Kd", "8c", "6c", "Qs"}
    assert s.observation(0)["stock"] == 3
    # after a take, the player to the defender's left attacks
    assert who(s) == (3, 0, 3)


def test_refill_when_the_stock_runs_out_attacker_first() -> None:
    s = four()
    run(s, BOUT_A + BOUT_B)
    run(s, ["attack 6c", "beat 6c 6s", "add 6d", "beat 6d 7s"])
    assert s.current_player == 3 and s.legal_actions() == ["pass"]
    run(s, ["pass", "pass"])  # seats 3, 1
    assert s.current_player == 2 and set(s.legal_actions()) == {"add 6h", "add 7h", "pass"}
    s.apply("pass")
    assert s.scores == [0, 1, 0, 0]  # two sixes: no face card
    # seat 3 draws Ks As, seat 0 the last card, the turned 9s; the stock is empty
    assert hand(s, 3) == {"8c", "9d", "Kd", "Qs", "Ks", "As"}
    assert hand(s, 0) == {"8s", "8h", "9h", "Kh", "9s"}
    assert s.observation(1)["stock"] == 0
    assert who(s) == (0, 1, 0)


LIMIT = {
    0: ["6c", "6h", "9c", "9d", "Jc", "Qc"],
    1: ["7c", "7d", "8s", "8c", "8d", "Ac"],
    2: ["6d", "Ts", "6s", "7s", "Jd", "Qd"],
    3: ["Tc", "9h", "Kc", "Kd", "Ad", "Qh"],
    4: ["Td", "8h", "Kh", "Jh", "As", "7h"],
    5: ["Th", "9s", "Js", "Qs", "Ks", "Ah"],  # Ah dealt last: trump hearts, no stock
}


def test_the_limit_is_what_the_defender_held_at_the_start() -> None:
    s = new(6, deck_for(6, 5, LIMIT), 5)
    assert who(s) == (0, 1, 0)  # 6h
    s.apply("attack 6c")
    assert set(s.legal_actions()) == {"beat 6c 7c", "beat 6c 8c", "beat 6c Ac", "take"}
    run(s, ["beat 6c 7c", "pass", "add 6d", "beat 6d 7d", "pass", "pass", "pass", "pass", "pass"])
    # seat 2 added a card: it holds 5 when seat 1 (the defender who covered) attacks it
    assert who(s) == (1, 2, 1) and len(hand(s, 2)) == 5
    run(s, ["attack 8s", "beat 8s Ts", "add 8c"])
    assert s.legal_actions() == ["take"]
    run(s, ["take", "add 8d", "pass", "add Tc", "pass", "pass"])
    assert s.current_player == 4 and set(s.legal_actions()) == {"add Td", "add 8h", "pass"}
    s.apply("add Td")
    # five attack cards: the limit (what seat 2 held); seat 5 (holding Th) is not asked
    assert hand(s, 2) == {"6s", "7s", "Jd", "Qd", "8s", "Ts", "8c", "8d", "Tc", "Td"}
    assert s.scores == [0] * 6
    assert who(s) == (3, 4, 3)  # after a take: the player to the defender's left


# -- six players, no stock: players out, the limit, the end and the fool ---------------------------

SIX = {
    0: ["6c", "6d", "6s", "6h", "8c", "8d"],
    1: ["7c", "7d", "7s", "8h", "9c", "9d"],
    2: ["Tc", "Td", "Ts", "Jd", "Js", "Qc"],
    3: ["Jc", "Qd", "Qs", "Kd", "Ks", "Kc"],
    4: ["Ac", "Ad", "As", "8s", "9s", "Qh"],
    5: ["7h", "9h", "Th", "Jh", "Kh", "Ah"],  # Ah is the last card dealt: trump hearts
}
SIX_GAME = [
    # bout 1: seat 0 attacks seat 1 and adds five cards; six covered: the limit, bout over
    "attack 6c", "beat 6c 7c", "add 6d", "beat 6d 7d", "add 6s", "beat 6s 7s",
    "add 6h", "beat 6h 8h", "add 8c", "beat 8c 9c", "add 8d", "beat 8d 9d",
    # bout 2: seats 0 and 1 are out: seat 2 attacks seat 3; six face cards covered
    "attack Tc", "beat Tc Jc", "add Td", "beat Td Qd", "add Ts", "beat Ts Qs",
    "add Jd", "beat Jd Kd", "add Js", "beat Js Ks", "add Qc", "beat Qc Kc",
    # bout 3: seat 4 attacks seat 5
    "attack Ac", "beat Ac 7h", "add Ad", "beat Ad 9h", "add As", "beat As Th", "add 9s", "beat 9s Jh",
    "pass",  # seat 4; seats 0-3 hold nothing and are not asked
    # bout 4: seat 5 attacks seat 4 (2 cards: limit 2)
    "attack Kh", "take", "pass",
    # bout 5: seat 5 attacks again (left of the defender 4), with its last card
    "attack Ah", "take",
]  # fmt: skip


def six() -> Any:
    return new(6, deck_for(6, 5, SIX), 5)


def test_six_players_bout_at_the_limit_nobody_asked() -> None:
    s = six()
    assert s.observation(0)["trump"] == "h" and who(s) == (0, 1, 0)
    run(s, SIX_GAME[:11])
    assert s.current_player == 1  # the sixth attack card
    s.apply("beat 8d 9d")
    # six attack cards: nobody is asked, the bout ends; seats 0 and 1 hold nothing (out)
    assert hand(s, 0) == set() and hand(s, 1) == set()
    assert s.scores == [0, 0, 0, 0, 0, 0]
    # the defender (seat 1) would attack but is out: the next player with cards, seat 2
    assert who(s) == (2, 3, 2)


def test_six_players_face_cards_and_skipping_players_out() -> None:
    s = six()
    run(s, SIX_GAME[:24])
    assert s.scores == [0, 0, 0, 6, 0, 0]  # T T T J J Q attacked and covered
    assert who(s) == (4, 5, 4)
    run(s, SIX_GAME[24:32])
    assert s.current_player == 4 and s.legal_actions() == ["pass"]  # 8s Qh fit nothing
    s.apply("pass")
    assert s.scores == [0, 0, 0, 6, 0, 3]  # Ac Ad As (9s is no face card)
    # seat 5 attacks; to its left 0-3 are out: seat 4 defends, limit 2 (its 2 cards)
    assert who(s) == (5, 4, 5)
    s.apply("attack Kh")
    assert s.legal_actions() == ["take"]  # Qh does not beat Kh
    s.apply("take")
    assert s.current_player == 5 and s.legal_actions() == ["pass"]
    s.apply("pass")
    assert hand(s, 4) == {"8s", "Qh", "Kh"}
    assert who(s) == (5, 4, 5)


def test_six_players_game_end_the_fool_and_the_ranking() -> None:
    s = six()
    run(s, SIX_GAME)
    # seat 5 attacked with its last card; seat 4 took: only seat 4 holds cards, the fool
    assert s.is_terminal and s.current_player is None and s.legal_actions() == []
    assert hand(s, 4) == {"8s", "Qh", "Kh", "Ah"}
    assert s.scores == [0, 0, 0, 6, 0, 3]
    # RULES.md, Result (revised): seat 3 beat the most and wins; all the others are losers and
    # share place 2, seat 5's three face cards too; the fool (seat 4) keeps its place
    assert s.ranking == [2, 2, 2, 1, 2, 2]
    obs = s.observation(4)
    assert obs["current_player"] is None and obs["scores"] == [0, 0, 0, 6, 0, 3]
    with pytest.raises(IllegalAction):
        s.apply("pass")


def test_six_players_everybody_out_no_fool() -> None:
    s = six()
    run(s, SIX_GAME[:24])
    # bout 3 again, but seat 5 covers the ace of clubs with its ace of trumps and keeps 7h Kh
    run(s, ["attack Ac", "beat Ac Ah", "add Ad", "beat Ad 9h", "add As", "beat As Th", "add 9s",
            "beat 9s Jh", "pass"])  # fmt: skip
    assert who(s) == (5, 4, 5) and hand(s, 5) == {"7h", "Kh"}
    s.apply("attack 7h")
    assert set(s.legal_actions()) == {"beat 7h Qh", "take"}
    s.apply("beat 7h Qh")
    assert s.current_player == 5 and s.legal_actions() == ["pass"]  # Kh fits neither 7 nor Q
    s.apply("pass")
    assert who(s) == (4, 5, 4)  # the defender who covered attacks
    s.apply("attack 8s")
    assert set(s.legal_actions()) == {"beat 8s Kh", "take"}
    s.apply("beat 8s Kh")
    # nobody holds cards: the game is over and there is no fool
    assert s.is_terminal and s.current_player is None
    assert s.scores == [0, 0, 0, 6, 0, 3] and s.ranking == [2, 2, 2, 1, 2, 2]
    assert s.observation(0).get("fool") is None


# -- small checks --------------------------------------------------------------------------------


def test_trump_is_covered_only_by_a_higher_trump() -> None:
    hands = {0: ["6s", "Kc", "Ac", "Kd", "Ad", "Ah"], 1: ["7s", "9s", "Qc", "Qd", "Kh", "Ks"]}
    s = new(2, deck_for(2, 1, hands, ["8s"]), 1)  # trump spades; 6s lowest: seat 0 attacks
    assert who(s) == (0, 1, 0)
    s.apply("attack 6s")
    assert set(s.legal_actions()) == {"beat 6s 7s", "beat 6s 9s", "beat 6s Ks", "take"}
    s = new(2, deck_for(2, 1, hands, ["8s"]), 1)
    s.apply("attack Ah")
    # a plain card: a higher card of its suit (none) or any trump
    assert set(s.legal_actions()) == {"beat Ah 7s", "beat Ah 9s", "beat Ah Ks", "take"}
    s.apply("beat Ah 7s")
    assert set(s.legal_actions()) == {"add Ac", "add Ad", "pass"}  # ranks A and 7 on the table
    with pytest.raises(IllegalAction):
        s.apply("add Kc")


def test_observation_keys_and_hidden_cards() -> None:
    s = four()
    s.apply("attack 7c")
    for seat in range(4):
        obs = json.loads(json.dumps(s.observation(seat)))
        assert obs["game"] == "fool" and obs["seat"] == seat and obs["players"] == 4
        assert obs["current_player"] == 1 and obs["dealer"] == 3 and obs["trump"] == "s"
        assert obs["scores"] == [0, 0, 0, 0] and obs["stock"] == 12
        assert obs["table"] == [["7c", None]] and obs["attacker"] == 0 and obs["defender"] == 1
        text = json.dumps(obs)
        others = set().union(*(hand(s, o) for o in range(4) if o != seat)) - {"6s"}
        for card in others | set(FOUR_STOCK[1:]):
            assert card not in text, (seat, card)


def test_illegal_actions_change_nothing() -> None:
    s = four()
    s.apply("attack 7c")
    before = (s.legal_actions(), [s.observation(i) for i in range(4)], list(s.history))
    for bad in ("beat 7c 8d", "beat 7c Jc", "pass", "add 7d", "attack Tc", "take 7c", "beat 7d Tc"):
        with pytest.raises(IllegalAction):
            s.apply(bad)
    assert before == (s.legal_actions(), [s.observation(i) for i in range(4)], list(s.history))


# -- a reference model, from RULES.md, against random games -----------------------------------------


class Reference:
    def __init__(self, players: int, deck: list[str], dealer: int, ranks: str,
                 previous_fool: int | None, first_attack: str) -> None:  # fmt: skip
        self.n = n = players
        self.ranks = ranks
        self.hands: list[set[str]] = [set() for _ in range(n)]
        for i in range(6 * n):
            self.hands[(dealer + 1 + i) % n].add(deck[i])
        if 6 * n < len(deck):
            self.trump = deck[6 * n][1]
            self.stock = [*deck[6 * n + 1 :], deck[6 * n]]  # top first; the turned card last
        else:
            self.trump = deck[6 * n - 1][1]
            self.stock = []
        self.scores = [0] * n
        self.over = False
        self.fool: int | None = None
        if previous_fool is not None:
            first = (previous_fool + (-1 if first_attack == "right_of_fool" else 1)) % n
        else:
            trumps = [(ranks.index(c[0]), s) for s in range(n) for c in self.hands[s] if c[1] == self.trump]
            cards = [(ranks.index(c[0]), "cdhs".index(c[1]), s) for s in range(n) for c in self.hands[s]]
            first = min(trumps)[1] if trumps else min(cards)[2]
        self.start(first)

    def next_holder(self, seat: int) -> int:
        return next((seat + k) % self.n for k in range(self.n) if self.hands[(seat + k) % self.n])

    def start(self, attacker: int) -> None:
        self.attacker = self.next_holder(attacker)
        self.defender = self.next_holder(self.attacker + 1)
        self.limit = min(6, len(self.hands[self.defender]))
        self.table: list[list[str | None]] = []
        self.taking = False
        self.mode = "attack"
        self.to_act = self.attacker

    def askers(self) -> list[int]:
        seats = [(self.attacker + k) % self.n for k in range(self.n)]
        return [s for s in seats if s != self.defender]

    def ask(self, start: int) -> None:
        if sum(1 for _ in self.table) < self.limit:
            order = self.askers()
            for seat in order[start:]:
                if self.hands[seat]:
                    self.mode, self.to_act, self.asked = "add", seat, order.index(seat)
                    return
        self.end_bout()

    def beats(self, attack: str, cover: str) -> bool:
        if cover[1] == attack[1]:
            return self.ranks.index(cover[0]) > self.ranks.index(attack[0])
        return cover[1] == self.trump

    def legal(self) -> set[str]:
        hand = self.hands[self.to_act]
        if self.mode == "attack":
            return {"attack " + c for c in hand}
        if self.mode == "defend":
            x = next(a for a, c in self.table if c is None)
            assert x is not None
            return {f"beat {x} {c}" for c in hand if self.beats(x, c)} | {"take"}
        ranks = {c[0] for pair in self.table for c in pair if c is not None}
        return {"add " + c for c in hand if c[0] in ranks} | {"pass"}

    def apply(self, action: str) -> None:
        verb, *args = action.split()
        seat = self.to_act
        if verb in ("attack", "add"):
            self.hands[seat].remove(args[0])
            self.table.append([args[0], None])
            if self.taking:
                self.ask(0)
            else:
                self.mode, self.to_act = "defend", self.defender
        elif verb == "beat":
            self.hands[seat].remove(args[1])
            for pair in self.table:
                if pair[0] == args[0]:
                    pair[1] = args[1]
            self.ask(0)
        elif verb == "take":
            self.taking = True
            self.ask(0)
        else:
            self.ask(self.asked + 1)

    def end_bout(self) -> None:
        cards = [c for pair in self.table for c in pair if c is not None]
        if self.taking:
            self.hands[self.defender] |= set(cards)
        else:
            self.scores[self.defender] += sum(1 for a, _ in self.table if a is not None and a[0] in "TJQKA")
        for k in range(self.n):
            seat = (self.attacker + k) % self.n
            while len(self.hands[seat]) < 6 and self.stock:
                self.hands[seat].add(self.stock.pop(0))
        holders = [s for s in range(self.n) if self.hands[s]]
        if len(holders) <= 1:
            self.over = True
            self.fool = holders[0] if holders else None
            return
        self.start(self.defender + 1 if self.taking else self.defender)


@pytest.mark.parametrize(("players", "size"), [(2, 36), (3, 36), (4, 52), (5, 36), (6, 36), (6, 52)])
def test_random_games_agree_with_the_reference(players: int, size: int) -> None:
    rng = random.Random(players * 100 + size)
    ranks = RANKS36 if size == 36 else RANKS52
    for _ in range(GAMES_N):
        deck = full_deck(size)
        rng.shuffle(deck)
        dealer = rng.randrange(players)
        previous_fool = rng.choice([None, rng.randrange(players)])
        first_attack = rng.choice(["right_of_fool", "left_of_fool"])
        game = new_game("fool", players=players, deck=size, first_attack=first_attack)
        if previous_fool is None:
            state = game.new_state(decks=[deck], dealer=dealer)
        else:
            state = game.new_state(decks=[deck], previous_fool=previous_fool)
            dealer = previous_fool
        ref = Reference(players, deck, dealer, ranks, previous_fool, first_attack)
        while not ref.over:
            assert state.current_player == ref.to_act
            legal = state.legal_actions()
            assert set(legal) == ref.legal()
            obs = state.observation(ref.to_act)
            assert set(obs["hand"]) == ref.hands[ref.to_act]
            assert (obs["attacker"], obs["defender"]) == (ref.attacker, ref.defender)
            assert obs["table"] == ref.table and obs["stock"] == len(ref.stock)
            assert obs["scores"] == ref.scores and obs["trump"] == ref.trump and obs["dealer"] == dealer
            action = rng.choice(legal)
            state.apply(action)
            ref.apply(action)
        assert state.is_terminal and state.current_player is None
        assert state.scores == ref.scores
        # one winner (or winners tied on the most) at place 1, every other player at place 2
        assert state.ranking == [1 if s == max(ref.scores) else 2 for s in ref.scores]
        assert state.observation(0).get("fool", ref.fool) == ref.fool


GAMES_N = 25
