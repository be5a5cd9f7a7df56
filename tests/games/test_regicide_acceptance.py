"""Acceptance tests for ``regicide``, worked by hand from RULES.md ("regicide") and DESIGN.md
("The engine API"), through the public API only.

``deck_for`` lays out an exact deck as RULES.md deals it: 9 cards each, one at a time from the
top, clockwise from the dealer's left; the opener's 10th card is the top of the stock (the
turned card); the rest of the stock goes clockwise from the dealer's left, skipping full hands,
up to 42 // n cards each; the cards left over are set aside.

Many scoring tests use the "one suit each" deal (4 players, seat s holds the ten cards of suit
"cdhs"[s], the jokers are set aside): nobody can ever follow suit, so every trick goes to the
holder of the current trump, and the choices after the tricks decide who wins what.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from atout.games import GAMES, IllegalAction, new_game

RANKS = "A23456789K"
FULL = [r + s for s in "cdhs" for r in RANKS] + ["RJ", "BJ"]
SUIT_OF_SEAT = "cdhs"


def deck_for(
    players: int, dealer: int, hands: Mapping[int, Sequence[str]], opener: int, aside: Sequence[str] = ()
) -> list[str]:
    size = 42 // players
    assert all(len(hands[s]) == size for s in range(players))
    order = [(dealer + 1 + k) % players for k in range(players)]
    queues = {s: list(hands[s]) for s in range(players)}
    deck = [queues[s].pop(0) for _ in range(9) for s in order]
    deck.append(queues[opener].pop(0))  # the turned card
    held = {s: 9 + (s == opener) for s in range(players)}
    while any(held[s] < size for s in order):
        for s in order:
            if held[s] < size:
                deck.append(queues[s].pop(0))
                held[s] += 1
    deck += list(aside)
    assert sorted(deck) == sorted(FULL)
    return deck


def suit(s: str) -> list[str]:
    return [r + s for r in RANKS]


def one_suit_each(dealer: int, opener: int) -> list[str]:
    hands = {s: suit(SUIT_OF_SEAT[s]) for s in range(4)}
    return deck_for(4, dealer, hands, opener, aside=["RJ", "BJ"])


def run(state: Any, *actions: str) -> None:
    for action in actions:
        state.apply(action)


def hand(state: Any, seat: int) -> list[str]:
    return sorted(state.observation(seat)["hand"])


def snapshot(state: Any) -> Any:
    return (
        state.current_player,
        list(state.history),
        state.legal_actions(),
        [json.dumps(state.observation(s), sort_keys=True) for s in range(state.players)],
        state.scores,
        state.is_terminal,
    )


def choice_actions(trump: str) -> list[str]:
    others = [s for s in "cdhs" if s != trump]
    return sorted(["keep", "invert", *(f"trump {s}" for s in others), *(f"trump {s} invert" for s in others)])


def play_winners(state: Any, winners: Sequence[int]) -> None:
    """Play a "one suit each" deal so that trick k goes to ``winners[k]``: the first winner
    opens (their suit is trump), and each choice hands the trump to the next winner. A winner
    who led the trick (the dealer for the first one) has no choice, so then the next trick must
    go to the same seat."""
    n = state.players
    dealer = state.observation(0)["dealer"]
    assert len(winners) == 10
    opener = winners[0]
    seat = dealer
    while seat != opener:  # from the dealer, clockwise, everyone passes until the opener
        assert state.current_player == seat and sorted(state.legal_actions()) == ["open", "pass"]
        state.apply("pass")
        seat = (seat + 1) % n
    assert state.current_player == opener
    state.apply("open")
    assert state.observation(1)["trump"] == SUIT_OF_SEAT[opener]
    assert state.current_player == dealer  # the dealer leads the first trick
    leader = dealer  # the dealer leads the first trick
    for k, winner in enumerate(winners):
        for _ in range(n):
            state.apply(state.legal_actions()[0])
        if k == len(winners) - 1:
            break  # no choice follows the last trick
        assert state.current_player == winner
        legal = sorted(state.legal_actions())
        following = winners[k + 1]
        if winner != leader:  # the winner did not lead the trick: a choice
            assert legal == choice_actions(SUIT_OF_SEAT[winner])
            state.apply("keep" if following == winner else f"trump {SUIT_OF_SEAT[following]}")
        else:  # the winner led the trick: no choice
            assert all(a.startswith("play ") for a in legal)
            assert following == winner, "a plan the rules cannot give"
        leader = winner


ALL_TO = {s: [s] * 10 for s in range(4)}  # one seat takes every trick


def alternate(a: int, b: int) -> list[int]:
    return [a, b] * 5


# -- players, options, deck -------------------------------------------------------------------


def test_players_and_options() -> None:
    assert "regicide" in GAMES
    for n in (2, 3, 4):
        assert new_game("regicide", players=n).new_state(seed=1).players == n
    for n in (0, 1, 5, 6):
        with pytest.raises(ValueError, match="players"):
            new_game("regicide", players=n)
    game = new_game("regicide", players=4)
    assert game.options["teams"] is False and game.options["tie"] == "carry"
    assert new_game("regicide", players=4, teams=True).options["teams"] is True
    assert new_game("regicide", players=3, tie="share").options["tie"] == "share"
    for n in (2, 3):
        with pytest.raises(ValueError, match="teams"):
            new_game("regicide", players=n, teams=True)
    for bad in (1, "yes", None):
        with pytest.raises(ValueError, match="teams"):
            new_game("regicide", players=4, teams=bad)
    for bad in ("Carry", "split", None, 1):
        with pytest.raises(ValueError, match="tie"):
            new_game("regicide", players=2, tie=bad)
    with pytest.raises(ValueError, match="deals"):
        new_game("regicide", players=2, deals=3)


def test_deck_is_42_cards_ace_to_nine_king_and_two_jokers() -> None:
    game = new_game("regicide", players=2)
    with pytest.raises(ValueError):
        game.new_state(decks=[[*FULL[:-1], "Tc"]], dealer=0)
    with pytest.raises(ValueError):
        game.new_state(decks=[FULL[:-1]], dealer=0)
    with pytest.raises(ValueError):
        game.new_state(decks=[[*FULL, "Qc"]], dealer=0)
    for dealer in (-1, 2):
        with pytest.raises(ValueError):
            game.new_state(decks=[FULL], dealer=dealer)
    for seed in range(5):
        state = game.new_state(seed=seed)
        state.apply("open")
        if state.legal_actions()[0].startswith("trump"):
            state.apply("trump c")
        cards = hand(state, 0) + hand(state, 1)
        assert sorted(cards) == sorted(FULL)  # 2 players: 21 + 21 = all 42 cards


# -- the deal ---------------------------------------------------------------------------------


def test_deal_two_players_dealer_opens() -> None:
    deck = list(FULL)  # Ac 2c ... Kc Ad ... Ks RJ BJ
    state = new_game("regicide", players=2).new_state(decks=[deck], dealer=0)
    # 9 each, one at a time from the dealer's left: seat 1 gets deck[0], deck[2], ...
    assert hand(state, 1) == sorted(deck[0:18:2]) and hand(state, 0) == sorted(deck[1:18:2])
    obs = state.observation(0)
    assert obs["stock"] == 24 and obs["dealer"] == 0 and obs["trump"] is None
    assert obs["inverted"] is False and obs["trick"] == []
    assert state.current_player == 0  # the opening starts with the dealer
    assert sorted(state.legal_actions()) == ["open", "pass"]
    state.apply("open")  # deck[18] = 9d: diamonds are trump, the dealer takes it
    assert state.observation(1)["trump"] == "d"
    # the rest: seat 1, seat 0, seat 1, ... skipping full hands; seat 0 is full first
    assert hand(state, 0) == sorted([*deck[1:18:2], deck[18], *deck[20:41:2]])
    assert hand(state, 1) == sorted(deck[0:18:2] + deck[19:41:2] + [deck[41]])
    assert [len(hand(state, s)) for s in (0, 1)] == [21, 21]
    obs = state.observation(1)
    assert obs["stock"] == 0
    assert state.current_player == 0  # the dealer leads


def test_deal_two_players_second_player_opens() -> None:
    deck = list(FULL)
    state = new_game("regicide", players=2).new_state(decks=[deck], dealer=0)
    run(state, "pass", "open")
    assert hand(state, 1) == sorted([*deck[0:18:2], deck[18], *deck[19:40:2]])
    assert hand(state, 0) == sorted(deck[1:18:2] + deck[20:41:2] + [deck[41]])
    assert state.current_player == 0  # the dealer leads, whoever opened


def test_deal_three_players_fourteen_each() -> None:
    deck = list(FULL)
    state = new_game("regicide", players=3).new_state(decks=[deck], dealer=2)
    assert [hand(state, s) for s in range(3)] == [sorted(deck[k:27:3]) for k in range(3)]
    assert state.observation(0)["stock"] == 15
    assert state.current_player == 2
    run(state, "pass", "pass")  # the dealer, then seat 0
    assert state.current_player == 1
    state.apply("open")  # deck[27] = 8h
    assert state.observation(0)["trump"] == "h"
    # seats 0, 1, 2, 0, 1, 2, ... from deck[28]; seat 1 (10 cards) is full after 4 rounds
    assert hand(state, 0) == sorted([*deck[0:27:3], deck[28], deck[31], deck[34], deck[37], deck[40]])
    assert hand(state, 1) == sorted([*deck[1:27:3], deck[27], deck[29], deck[32], deck[35], deck[38]])
    assert hand(state, 2) == sorted([*deck[2:27:3], deck[30], deck[33], deck[36], deck[39], deck[41]])
    assert state.current_player == 2


def test_deal_four_players_all_pass_dealer_must_open_two_set_aside() -> None:
    deck = list(FULL)
    state = new_game("regicide", players=4).new_state(decks=[deck], dealer=3)
    assert [hand(state, s) for s in range(4)] == [sorted(deck[k:36:4]) for k in range(4)]
    assert state.observation(0)["stock"] == 6
    order = []
    for _ in range(4):
        order.append(state.current_player)
        assert sorted(state.legal_actions()) == ["open", "pass"]
        state.apply("pass")
    assert order == [3, 0, 1, 2]
    assert state.current_player == 3 and state.legal_actions() == ["open"]  # all passed
    before = snapshot(state)
    with pytest.raises(IllegalAction):
        state.apply("pass")
    assert snapshot(state) == before
    state.apply("open")  # deck[36] = 7s
    assert state.observation(0)["trump"] == "s"
    assert hand(state, 3) == sorted([*deck[3:36:4], deck[36]])
    assert hand(state, 0) == sorted([*deck[0:36:4], deck[37]])
    assert hand(state, 1) == sorted([*deck[1:36:4], deck[38]])
    assert hand(state, 2) == sorted([*deck[2:36:4], deck[39]])
    # RJ and BJ are set aside unseen
    for seat in range(4):
        obs = state.observation(seat)
        assert "RJ" not in json.dumps(obs) and "BJ" not in json.dumps(obs)
        assert obs["stock"] == 0
    assert state.current_player == 3


def test_turned_joker_the_opener_names_trump_and_keeps_it() -> None:
    hands = {0: suit("c"), 1: suit("d"), 2: [*suit("h")[:9], "RJ"], 3: suit("s")}
    deck = deck_for(4, 1, hands, opener=2, aside=["Kh", "BJ"])
    state = new_game("regicide", players=4).new_state(decks=[deck], dealer=1)
    assert state.current_player == 1
    run(state, "pass", "open")
    assert state.current_player == 2
    assert sorted(state.legal_actions()) == ["trump c", "trump d", "trump h", "trump s"]
    for bad in ("play RJ", "keep", "pass", "trump x"):
        before = snapshot(state)
        with pytest.raises(IllegalAction):
            state.apply(bad)
        assert snapshot(state) == before
    state.apply("trump s")
    obs = state.observation(2)
    assert obs["trump"] == "s" and "RJ" in obs["hand"] and len(obs["hand"]) == 10
    assert state.current_player == 1  # the dealer leads


# -- play -------------------------------------------------------------------------------------

# Scenario F: 4 players, dealer 0 opens 8h (hearts trump), 7h and 8s set aside.
F_HANDS = {
    0: ["Ac", "5c", "Kd", "2d", "3s", "4s", "5s", "6s", "7s", "8h"],
    1: ["2c", "3c", "4c", "RJ", "9s", "Ks", "9h", "Kh", "Ah", "2h"],
    2: ["6c", "7c", "8c", "3d", "4d", "5d", "6d", "BJ", "As", "2s"],
    3: ["9c", "Kc", "7d", "8d", "9d", "Ad", "3h", "4h", "5h", "6h"],
}
F_DECK = deck_for(4, 0, F_HANDS, opener=0, aside=["7h", "8s"])


def play_legal(state: Any, seat: int, card: str, legal: Sequence[str] | None = None) -> None:
    assert state.current_player == seat
    if legal is not None:
        assert sorted(state.legal_actions()) == sorted("play " + c for c in legal)
    state.apply("play " + card)


def scenario_f(**options: Any) -> Any:
    state = new_game("regicide", players=4, **options).new_state(
        decks=[F_DECK, one_suit_each(1, 1)], dealer=0
    )
    state.apply("open")
    assert state.observation(0)["trump"] == "h" and hand(state, 0) == sorted(F_HANDS[0])
    return state


def play_scenario_f(state: Any) -> None:
    # Trick 1 (normal, hearts): the dealer leads; 9c is the highest club (the ace is low).
    play_legal(state, 0, "5c")
    play_legal(state, 1, "4c", ["2c", "3c", "4c", "RJ"])  # a joker may be played at any time
    play_legal(state, 2, "8c", ["6c", "7c", "8c", "BJ"])
    play_legal(state, 3, "9c", ["9c", "Kc"])
    assert state.current_player == 3
    assert sorted(state.legal_actions()) == choice_actions("h")  # seat 3 did not lead: it chooses
    before = snapshot(state)
    for bad in ("trump h", "play Kc", "pass"):
        with pytest.raises(IllegalAction):
            state.apply(bad)
        assert snapshot(state) == before
    state.apply("invert")
    assert state.observation(0)["inverted"] is True
    # Trick 2 (inverted): the ace of clubs is now the highest club.
    play_legal(state, 3, "Kc")  # leading: any card
    play_legal(state, 0, "Ac", ["Ac"])
    play_legal(state, 1, "2c", ["2c", "3c", "RJ"])
    assert state.observation(2)["trick"] == [[3, "Kc"], [0, "Ac"], [1, "2c"]]
    play_legal(state, 2, "7c", ["6c", "7c", "BJ"])
    assert state.observation(2)["trick"] == []
    assert state.current_player == 0
    assert sorted(state.legal_actions()) == choice_actions("h")
    state.apply("trump s")
    assert state.observation(1)["trump"] == "s"
    # Trick 3 (inverted, spades): the joker played by seat 2 beats the trump 9s.
    play_legal(state, 0, "Kd", ["Kd", "2d", "3s", "4s", "5s", "6s", "7s", "8h"])
    play_legal(state, 1, "9s", ["3c", "RJ", "9s", "Ks", "9h", "Kh", "Ah", "2h"])  # void in diamonds
    play_legal(state, 2, "BJ", ["3d", "4d", "5d", "6d", "BJ"])
    play_legal(state, 3, "Ad", ["7d", "8d", "9d", "Ad"])
    assert state.current_player == 2
    assert sorted(state.legal_actions()) == choice_actions("s")
    state.apply("invert")  # a second inversion restores the normal order
    assert state.observation(3)["inverted"] is False
    # Trick 4 (normal, spades): Ks trumps the diamonds.
    play_legal(state, 2, "3d")
    play_legal(state, 3, "7d", ["7d", "8d", "9d"])
    play_legal(state, 0, "2d", ["2d"])
    play_legal(state, 1, "Ks", ["3c", "RJ", "Ks", "9h", "Kh", "Ah", "2h"])
    assert state.current_player == 1
    state.apply("invert")
    # Trick 5 (inverted, spades): a joker is led, everyone may play any card; the joker wins.
    play_legal(state, 1, "RJ")
    play_legal(state, 2, "6c", ["6c", "4d", "5d", "6d", "As", "2s"])
    play_legal(state, 3, "3h", ["8d", "9d", "3h", "4h", "5h", "6h"])
    play_legal(state, 0, "7s", ["3s", "4s", "5s", "6s", "7s", "8h"])
    # seat 1 led this trick and won it: no choice, it leads at once
    assert state.current_player == 1
    assert sorted(state.legal_actions()) == ["play 2h", "play 3c", "play 9h", "play Ah", "play Kh"]
    before = snapshot(state)
    for bad in ("keep", "invert", "trump c"):
        with pytest.raises(IllegalAction):
            state.apply(bad)
        assert snapshot(state) == before
    # Trick 6 (inverted, spades): 2s is a higher trump than 3s when the order is reversed.
    play_legal(state, 1, "3c")
    play_legal(state, 2, "2s", ["4d", "5d", "6d", "As", "2s"])
    play_legal(state, 3, "4h", ["8d", "9d", "4h", "5h", "6h"])
    play_legal(state, 0, "3s", ["3s", "4s", "5s", "6s", "8h"])
    assert state.current_player == 2
    assert sorted(state.legal_actions()) == choice_actions("s")
    state.apply("trump h")
    # Trick 7 (inverted, hearts): 2h beats 8h.
    play_legal(state, 2, "4d")
    play_legal(state, 3, "8d", ["8d", "9d"])
    play_legal(state, 0, "8h")
    play_legal(state, 1, "2h")
    assert state.current_player == 1
    state.apply("keep")
    # Trick 8: Ah, the highest trump inverted; seat 1 led and won it again: no choice.
    play_legal(state, 1, "Ah")
    play_legal(state, 2, "As", ["5d", "6d", "As"])
    play_legal(state, 3, "5h", ["5h", "6h"])
    play_legal(state, 0, "4s", ["4s", "5s", "6s"])
    assert state.current_player == 1
    assert all(a.startswith("play ") for a in state.legal_actions())
    # Trick 9: 6h beats 9h inverted; seat 3 chooses and inverts back.
    play_legal(state, 1, "9h")
    play_legal(state, 2, "5d")
    play_legal(state, 3, "6h", ["6h"])
    play_legal(state, 0, "5s")
    assert state.current_player == 3
    state.apply("invert")
    assert state.observation(0)["inverted"] is False
    # Trick 10, the last: Kh trumps; no choice follows.
    play_legal(state, 3, "9d", ["9d"])
    play_legal(state, 0, "6s")
    play_legal(state, 1, "Kh")
    play_legal(state, 2, "6d", ["6d"])
    # tricks: seat 0 1, seat 1 5 (4, 5, 7, 8, 10), seat 2 2, seat 3 2


def test_scenario_f_play_and_scoring() -> None:
    state = scenario_f()
    play_scenario_f(state)
    assert state.scores == [0, 5, 0, 0]
    obs = state.observation(2)
    assert obs["last_deal"]["total"] == [0, 5, 0, 0]
    # deal 2: dealt by seat 1; the trump and the ranking are reset; the opening starts
    assert obs["dealer"] == 1 and obs["trump"] is None and obs["inverted"] is False
    assert obs["trick"] == [] and obs["stock"] == 6
    assert state.current_player == 1 and sorted(state.legal_actions()) == ["open", "pass"]
    state.apply("open")
    assert state.observation(0)["trump"] == "d" and state.observation(0)["inverted"] is False


def test_scenario_f_teams() -> None:
    state = scenario_f(teams=True)
    play_scenario_f(state)
    # seats 0+2 took 3 tricks, seats 1+3 took 7: the team scores 7, shown on each member
    assert state.scores == [0, 7, 0, 7]
    assert state.observation(0)["last_deal"]["total"] == [0, 7, 0, 7]
    assert state.ranking == [3, 1, 3, 1]


def test_observations_hide_other_hands_stock_and_aside() -> None:
    state = new_game("regicide", players=4).new_state(decks=[F_DECK], dealer=0)
    for seat in range(4):
        obs = state.observation(seat)
        assert json.loads(json.dumps(obs)) == obs
        for key in ("game", "seat", "players", "hand", "current_player", "dealer", "trump", "scores"):
            assert key in obs, key
        assert obs["game"] == "regicide" and obs["seat"] == seat and obs["players"] == 4
        assert obs["stock"] == 6 and obs["inverted"] is False and obs["trick"] == []
        assert obs["scores"] == [0, 0, 0, 0] and not obs.get("last_deal")
        shown = set(re.findall(r'"([A2-9K][cdhs]|RJ|BJ)"', json.dumps(obs)))
        assert shown <= set(obs["hand"]), shown - set(obs["hand"])
    state.apply("open")
    for seat in range(4):
        obs = state.observation(seat)
        shown = set(re.findall(r'"([A2-9K][cdhs]|RJ|BJ)"', json.dumps(obs)))
        assert shown <= set(obs["hand"]) | {"8h"}, shown - set(obs["hand"])  # 8h was turned up
        assert "7h" not in json.dumps(obs) and "8s" not in json.dumps(obs)  # set aside unseen
    with pytest.raises(ValueError):
        state.observation(4)


def test_observation_is_not_the_state() -> None:
    state = scenario_f()
    play_scenario_f(state)
    obs = state.observation(0)
    obs["last_deal"]["total"][1] = 99
    obs["scores"][1] = 99
    obs["hand"].clear()
    assert state.observation(0)["last_deal"]["total"] == [0, 5, 0, 0]
    assert state.scores == [0, 5, 0, 0] and state.observation(0)["hand"]


def test_clone_and_history() -> None:
    state = scenario_f()
    assert state.history == [(0, "open")]
    copy = state.clone()
    play_scenario_f(copy)
    assert state.history == [(0, "open")] and state.current_player == 0
    play_scenario_f(state)
    assert state.history == copy.history and state.scores == copy.scores


# -- the choice after a trick -----------------------------------------------------------------


def test_choice_belongs_to_the_seat_also_in_teams() -> None:
    # partners 0 and 2 win alternately, each a trick its partner led (the first one led by the
    # dealer, seat 3): the winner never led the trick, so each time a choice
    state = new_game("regicide", players=4, teams=True).new_state(decks=[one_suit_each(3, 0)], dealer=3)
    play_winners(state, alternate(0, 2))
    assert state.scores == [10, 0, 10, 0]


def test_partner_of_the_leader_wins_in_teams() -> None:
    # Dealer 1, seat 2 opens hearts. Trick 1: the dealer (seat 1) leads Ad, seat 2 trumps with
    # Ah: seat 2 did not lead it, so it chooses, and makes clubs trump. Trick 2: seat 2 leads 2h,
    # seat 0 (its partner) trumps with 2c: the trick was led by seat 2, not by seat 0, so seat 0
    # chooses; it changes the trump to spades and inverts at once.
    state = new_game("regicide", players=4, teams=True).new_state(decks=[one_suit_each(1, 2)], dealer=1)
    run(state, "pass", "open")
    assert state.current_player == 1 and state.observation(0)["trump"] == "h"
    run(state, "play Ad", "play Ah", "play As", "play Ac")
    assert state.current_player == 2 and sorted(state.legal_actions()) == choice_actions("h")
    state.apply("trump c")
    run(state, "play 2h", "play 2s", "play 2c", "play 2d")
    assert state.observation(3)["last_trick_winner"] == 0
    assert state.current_player == 0 and sorted(state.legal_actions()) == choice_actions("c")
    state.apply("trump s invert")
    obs = state.observation(1)
    assert obs["trump"] == "s" and obs["inverted"] is True and obs["team_tricks_won"] == [2, 0]
    # Trick 3: seat 0 leads 3c; only seat 3 holds spades: 3s wins. Seat 3 did not lead: it chooses.
    run(state, "play 3c", "play 3d", "play 3h", "play 3s")
    assert state.current_player == 3 and sorted(state.legal_actions()) == choice_actions("s")
    state.apply("keep")
    # Trick 4: seat 3 leads and wins its own trick: no choice.
    run(state, "play 4s", "play 4c", "play 4d", "play 4h")
    assert state.current_player == 3 and all(a.startswith("play ") for a in state.legal_actions())
    assert state.observation(0)["team_tricks_won"] == [2, 2]


# -- scoring and the end of the game ----------------------------------------------------------


def decks_for(first_dealer: int, openers: Sequence[int]) -> list[list[str]]:
    return [one_suit_each((first_dealer + k) % 4, o) for k, o in enumerate(openers)]


def test_most_tricks_tie_to_higher_total_and_carry_piles_up() -> None:
    plan = [ALL_TO[0], alternate(0, 1), alternate(1, 2), alternate(2, 1), ALL_TO[3]]
    decks = decks_for(2, [w[0] for w in plan])
    state = new_game("regicide", players=4).new_state(decks=decks, dealer=2)
    totals = []
    lasts = []
    for k, winners in enumerate(plan):
        assert state.observation(0)["dealer"] == (2 + k) % 4
        play_winners(state, winners)
        totals.append(state.scores)
        lasts.append(state.observation(0)["last_deal"]["total"])
    assert totals == [
        [10, 0, 0, 0],  # seat 0 takes all 10 tricks
        [15, 0, 0, 0],  # 5-5: seat 0 has the higher total
        [15, 0, 0, 0],  # 5-5 between seats 1 and 2, both on 0: carried
        [15, 0, 0, 0],  # again: 5 more carried
        [15, 0, 0, 20],  # 10 tricks + 10 carried
    ]
    assert lasts[-1] == [0, 0, 0, 20] and lasts[2] == [0, 0, 0, 0]
    assert not state.is_terminal


def test_tie_share_gives_each_tied_player_the_points() -> None:
    plan = [ALL_TO[0], alternate(0, 1), alternate(1, 2), alternate(2, 1), ALL_TO[3]]
    decks = decks_for(2, [w[0] for w in plan])
    state = new_game("regicide", players=4, tie="share").new_state(decks=decks, dealer=2)
    totals = []
    for winners in plan:
        play_winners(state, winners)
        totals.append(state.scores)
    assert totals == [[10, 0, 0, 0], [15, 0, 0, 0], [15, 5, 5, 0], [15, 10, 10, 0], [15, 10, 10, 10]]


def test_three_way_tie_on_tricks() -> None:
    three = [0, 1, 2, 0, 1, 2, 0, 1, 2, 3]  # 3, 3, 3, 1
    plan = [ALL_TO[1], three, three]
    state = new_game("regicide", players=4).new_state(decks=decks_for(0, [w[0] for w in plan]), dealer=0)
    play_winners(state, plan[0])
    play_winners(state, plan[1])
    assert state.scores == [0, 13, 0, 0]  # seat 1 has the higher total among the tied
    play_winners(state, plan[2])
    assert state.scores == [0, 16, 0, 0]


def test_carry_between_ties_of_the_remaining_players() -> None:
    # seats 0 and 2 tie on totals (0), seat 1 (higher total) is not among the tied: carried
    plan = [ALL_TO[1], alternate(0, 2), ALL_TO[0]]
    state = new_game("regicide", players=4).new_state(decks=decks_for(1, [w[0] for w in plan]), dealer=1)
    for winners in plan:
        play_winners(state, winners)
    assert state.scores == [15, 10, 0, 0]


def test_game_ends_after_the_deal_reaching_fifty() -> None:
    nine_to_0 = [1] + [0] * 9  # seat 1 takes the first trick and hands the trump to seat 0
    plan = [ALL_TO[0]] * 4 + [nine_to_0, ALL_TO[2]]
    state = new_game("regicide", players=4).new_state(decks=decks_for(0, [w[0] for w in plan]), dealer=0)
    for k, winners in enumerate(plan):
        assert not state.is_terminal
        play_winners(state, winners)
        if k == 4:
            assert state.scores == [49, 0, 0, 0]  # 49: not yet
    assert state.scores == [49, 0, 10, 0]
    assert not state.is_terminal
    decks = decks_for(0, [w[0] for w in plan] + [0])
    state = new_game("regicide", players=4).new_state(decks=decks, dealer=0)
    for winners in [*plan, ALL_TO[0]]:
        play_winners(state, winners)
    assert state.scores == [59, 0, 10, 0]
    assert state.is_terminal and state.current_player is None and state.legal_actions() == []
    assert state.ranking == [1, 3, 2, 3]
    assert state.observation(1)["last_deal"]["total"] == [10, 0, 0, 0]
    assert state.observation(1)["current_player"] is None
    with pytest.raises(IllegalAction):
        state.apply("open")


def test_teams_reach_fifty_rank_one_three_one_three() -> None:
    # dealers 3, 0, 1, 2, 3; when seat 0 deals it leads the first trick, so seat 2 must win it
    plan = [alternate(0, 2), alternate(2, 0), alternate(0, 2), alternate(0, 2), alternate(0, 2)]
    decks = decks_for(3, [w[0] for w in plan])
    state = new_game("regicide", players=4, teams=True).new_state(decks=decks, dealer=3)
    for k, winners in enumerate(plan):
        assert not state.is_terminal
        play_winners(state, winners)
        assert state.scores == [10 * (k + 1), 0, 10 * (k + 1), 0]
    assert state.is_terminal
    assert state.ranking == [1, 3, 1, 3]


def test_teams_tie_on_tricks() -> None:
    # team 0+2: 5 tricks (seat 0), team 1+3: 5 tricks (seat 1); both on 0: carried. Dealers 1
    # and 2: the dealer leads the first trick and loses it.
    plan = [alternate(0, 1), ALL_TO[3]]
    state = new_game("regicide", players=4, teams=True).new_state(decks=decks_for(1, [0, 3]), dealer=1)
    play_winners(state, plan[0])
    assert state.scores == [0, 0, 0, 0]
    play_winners(state, plan[1])
    assert state.scores == [0, 15, 0, 15]


def test_share_to_fifty_ties_share_the_place() -> None:
    # dealers 0, 1, 2, 3, 0, ...; when seat 0 deals (and leads), seat 1 wins the first trick
    plan = [alternate(1, 0) if k % 4 == 0 else alternate(0, 1) for k in range(10)]
    state = new_game("regicide", players=4, tie="share").new_state(
        decks=decks_for(0, [w[0] for w in plan]), dealer=0
    )
    for winners in plan:
        assert not state.is_terminal
        play_winners(state, winners)
    assert state.scores == [50, 50, 0, 0]
    assert state.is_terminal and state.ranking == [1, 1, 3, 3]


def test_seeded_deals_beyond_the_decks_list() -> None:
    game = new_game("regicide", players=4)
    a = game.new_state(seed=4, decks=[one_suit_each(0, 0)], dealer=0)
    b = game.new_state(seed=4, decks=[one_suit_each(0, 0)], dealer=0)
    for state in (a, b):
        play_winners(state, ALL_TO[0])
    assert [hand(a, s) for s in range(4)] == [hand(b, s) for s in range(4)]
    cards = [c for s in range(4) for c in hand(a, s)]
    assert len(cards) == 36 == len(set(cards)) and set(cards) <= set(FULL)
    assert a.observation(0)["dealer"] == 1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seeded_random_games_end_with_fifty(players: int) -> None:
    rng = random.Random(players)
    state = new_game("regicide", players=players).new_state(seed=players)
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))
    assert max(state.scores) >= 50
    assert state.ranking == [1 + sum(o > s for o in state.scores) for s in state.scores]


def test_unknown_new_state_argument_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="previous_fool"):
        new_game("regicide", players=2).new_state(seed=1, previous_fool=0)


# -- an independent reading of the rules, checked against random games --------------------------

JOKERS = ("RJ", "BJ")


def reference_winner(trick: list[tuple[int, str]], trump: str, inverted: bool) -> int:
    """The first joker; else the highest trump; else the highest card of the suit led."""
    for seat, card in trick:
        if card in JOKERS:
            return seat
    led = trick[0][1][1]

    def key(card: str) -> tuple[int, int]:
        rank = RANKS.index(card[0])
        return (2 if card[1] == trump else 1 if card[1] == led else 0, -rank if inverted else rank)

    return max(trick, key=lambda sc: key(sc[1]))[0]


@pytest.mark.parametrize(
    ("players", "teams", "tie", "seed"),
    [
        (2, False, "carry", 1),
        (2, False, "share", 2),
        (3, False, "carry", 3),
        (3, False, "share", 4),
        (4, False, "carry", 5),
        (4, True, "carry", 6),
        (4, True, "share", 7),
    ],
)
def test_random_games_follow_the_rules(players: int, teams: bool, tie: str, seed: int) -> None:
    n, size = players, 42 // players
    state = new_game("regicide", players=n, teams=teams, tie=tie).new_state(seed=seed)
    rng = random.Random(seed)
    units = 2 if teams else n

    def unit(seat: int) -> int:
        return seat % 2 if teams else seat

    dealer = state.observation(0)["dealer"]
    totals, carry = [0] * units, 0
    while True:
        obs = state.observation(0)
        assert obs["dealer"] == dealer and obs["trump"] is None and obs["inverted"] is False
        assert obs["stock"] == 42 - 9 * n
        assert [len(state.observation(s)["hand"]) for s in range(n)] == [9] * n
        # opening: from the dealer, clockwise; the dealer must open when all passed
        seat, passes = dealer, 0
        while True:
            assert state.current_player == seat
            if passes == n:
                assert state.legal_actions() == ["open"]
            else:
                assert sorted(state.legal_actions()) == ["open", "pass"]
            if passes == n or rng.random() < 0.4:
                break
            state.apply("pass")
            passes, seat = passes + 1, (seat + 1) % n
        before = state.observation(seat)["hand"]
        state.apply("open")
        if state.legal_actions()[0].startswith("trump"):  # a joker was turned: the opener names it
            assert state.current_player == seat
            assert sorted(state.legal_actions()) == ["trump c", "trump d", "trump h", "trump s"]
            trump = rng.choice("cdhs")
            state.apply("trump " + trump)
            assert state.observation(seat)["trump"] == trump
        trump = state.observation(0)["trump"]
        assert trump in ("c", "d", "h", "s")
        assert set(before) < set(state.observation(seat)["hand"])
        assert [len(state.observation(s)["hand"]) for s in range(n)] == [size] * n
        assert state.observation(0)["stock"] == 0
        inverted, leader = False, dealer
        tricks = [0] * n
        for t in range(size):
            trick: list[tuple[int, str]] = []
            for k in range(n):
                seat = (leader + k) % n
                assert state.current_player == seat
                cards = state.observation(seat)["hand"]
                legal = cards
                if trick and trick[0][1] not in JOKERS:
                    follow = [c for c in cards if c[1] == trick[0][1][1]]
                    if follow:
                        legal = follow + [c for c in cards if c in JOKERS]
                assert sorted(state.legal_actions()) == sorted("play " + c for c in legal)
                card = rng.choice(legal)
                state.apply("play " + card)
                trick.append((seat, card))
            winner = reference_winner(trick, trump, inverted)
            tricks[winner] += 1
            if t == size - 1:
                break  # no choice after the last trick
            assert state.current_player == winner
            # the winner may change the rules only if that seat did not lead the trick
            if winner != leader:
                assert sorted(state.legal_actions()) == choice_actions(trump)
                other = rng.choice([s for s in "cdhs" if s != trump])
                choice = rng.choice(["keep", "invert", f"trump {other}", f"trump {other} invert"])
                state.apply(choice)
                if choice.startswith("trump"):
                    trump = other
                if choice.endswith("invert"):
                    inverted = not inverted
                obs = state.observation((winner + 1) % n)
                assert obs["trump"] == trump and obs["inverted"] is inverted
            else:
                assert all(a.startswith("play ") for a in state.legal_actions())
            leader = winner
        unit_tricks = [sum(tricks[s] for s in range(n) if unit(s) == u) for u in range(units)]
        most = max(unit_tricks)
        tied = [u for u in range(units) if unit_tricks[u] == most]
        best = max(totals[u] for u in tied)
        tied = [u for u in tied if totals[u] == best]
        points = [0] * units
        if len(tied) == 1 or tie == "share":
            for u in tied:
                points[u] = most + carry
            carry = 0
        else:
            carry += most
        totals = [a + p for a, p in zip(totals, points, strict=True)]
        assert state.scores == [totals[unit(s)] for s in range(n)]
        assert state.observation(0)["last_deal"]["total"] == [points[unit(s)] for s in range(n)]
        if max(totals) >= 50:
            break
        assert not state.is_terminal
        dealer = (dealer + 1) % n
    assert state.is_terminal and state.current_player is None
    scores = state.scores
    assert state.ranking == [1 + sum(o > s for o in scores) for s in scores]
