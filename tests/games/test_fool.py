"""Hand-worked scenarios for ``fool`` (RULES.md, "fool — Fool compris").

Decks are built so that each seat receives the hand we want (dealing one card at a time from
the dealer's left), then the turned card, then the top of the stock we want.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from atout.games import IllegalAction, new_game
from atout.games.fool import CARD_ORDER, RANK_VALUE, Fool, FoolState


def deal_deck(
    players: int,
    dealer: int,
    hands: Mapping[int, Sequence[str]],
    turned: str | None = None,
    stock: Sequence[str] = (),
    deck: int = 36,
) -> list[str]:
    """The deck that deals ``hands`` (seats not given, or short, get filler), turns ``turned``
    and puts ``stock`` on top of the stock. Filler is taken high cards first, so that it never
    holds a low trump by accident."""
    full = list(new_game("fool", players=players, deck=deck).new_state(seed=0).FULL_DECK)
    used = {c for h in hands.values() for c in h} | set(stock) | ({turned} if turned else set())
    filler = sorted((c for c in full if c not in used), key=lambda c: (-RANK_VALUE[c[0]], c[1]))
    full_hands = {s: list(hands.get(s, ())) for s in range(players)}
    for s in range(players):
        while len(full_hands[s]) < 6:
            full_hands[s].append(filler.pop(0))
    out: list[str] = [""] * (6 * players)
    for s, hand in full_hands.items():
        for j, card in enumerate(hand):
            out[j * players + (s - dealer - 1) % players] = card
    rest = ([turned] if turned else []) + list(stock) + filler
    return out + rest


def play(state: FoolState, *actions: str) -> None:
    for action in actions:
        state.apply(action)


def position(
    players: int,
    hands: Mapping[int, Sequence[str]],
    attacker: int,
    trump_card: str = "Ah",
    scores: Sequence[int] | None = None,
) -> FoolState:
    """An end-game position: the stock is empty, every card not in a hand is discarded."""
    state = new_game("fool", players=players).new_state(seed=0)
    assert isinstance(state, FoolState)
    used = {c for h in hands.values() for c in h}
    state.hands = [sorted(hands.get(s, ()), key=CARD_ORDER.__getitem__) for s in range(players)]
    state.stock = []
    state._trump_in_stock = False
    state.trump_card, state.trump = trump_card, trump_card[1]
    state.discard = [c for c in state.FULL_DECK if c not in used]
    state.beaten = list(scores) if scores else [0] * players
    state._start_bout(attacker)
    state._legal = None
    return state


def illegal(state: FoolState, action: str, reason: str) -> None:
    before = (state.current_player, list(state.history), state.legal_actions(), state.observation(0))
    with pytest.raises(IllegalAction, match=reason):
        state.apply(action)
    assert (state.current_player, list(state.history), state.legal_actions(), state.observation(0)) == before


# -- the game and its options ---------------------------------------------------------------


def test_describe_and_defaults() -> None:
    described = Fool.describe()
    assert described["players"] == [2, 3, 4, 5, 6]
    assert described["default_players"] == 4
    game = new_game("fool")
    assert dict(game.options) == {"players": 4, "deck": 36, "first_attack": "right_of_fool"}
    state = game.new_state(seed=1)
    assert len(state.FULL_DECK) == 36 and {c[0] for c in state.FULL_DECK} == set("6789TJQKA")


def test_deck_52() -> None:
    state = new_game("fool", players=2, deck=52).new_state(seed=1)
    assert len(state.FULL_DECK) == 52 and {c[0] for c in state.FULL_DECK} == set("23456789TJQKA")
    assert state.observation(0)["stock"] == 52 - 12


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"deck": 40}, "deck"),
        ({"deck": "36"}, "deck"),
        ({"first_attack": "middle"}, "first_attack"),
        ({"players": 1}, "players"),
        ({"players": 7}, "players"),
        ({"trumps": 1}, "trumps"),
    ],
)
def test_bad_options(options: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        new_game("fool", **options)


# -- the deal and the trump -----------------------------------------------------------------


def test_deal_one_card_at_a_time_from_the_dealers_left_then_the_turned_card() -> None:
    deck = list(new_game("fool", players=2).new_state(seed=0).FULL_DECK)  # 6c 7c 8c ... As
    state = new_game("fool", players=2).new_state(decks=[deck], dealer=0)
    # seat 1 (the dealer's left) gets cards 0, 2, 4...; the 13th card (9d) is turned: trump diamonds
    assert state.hands[1] == ["6c", "8c", "Tc", "Qc", "Ac", "7d"]
    assert state.hands[0] == ["7c", "9c", "Jc", "Kc", "6d", "8d"]
    assert state.trump == "d" and state.trump_card == "9d"
    places = state._locations()
    assert places["trump_card"] == ["9d"]  # face up under the stock
    assert len(places["hidden:stock"]) == 23 and "9d" not in places["hidden:stock"]
    obs = state.observation(1)
    assert (obs["trump"], obs["trump_card"], obs["stock"], obs["dealer"]) == ("d", "9d", 24, 0)
    # lowest trump: seat 0's 6d beats seat 1's 7d to the first attack, and is shown
    assert (state.attacker, state.defender, state.current_player) == (0, 1, 0)
    assert obs["first_attack_card"] == "6d" and "6d" in state._revealed


def test_first_attacker_lowest_trump_among_four_52_cards() -> None:
    deck = deal_deck(4, 0, {2: ["3c", "5h"], 3: ["2c", "4d"], 1: ["2d", "2h"]}, turned="Tc", deck=52)
    state = new_game("fool", players=4, deck=52).new_state(decks=[deck], dealer=0)
    assert state.trump == "c"
    assert (state.attacker, state.defender, state.first_attack_card) == (3, 0, "2c")
    assert state.observation(0)["bout_limit"] == 6


def test_first_attacker_without_trumps_is_the_lowest_card_ties_by_suit() -> None:
    hands = {0: ["6s", "7c", "8c", "9c", "Tc", "Jc"], 1: ["6d", "7d", "8d", "9d", "Td", "Jd"]}
    state = new_game("fool", players=2).new_state(decks=[deal_deck(2, 0, hands, turned="Ah")], dealer=0)
    assert state.trump == "h"
    # both lowest cards are sixes: diamonds come before spades
    assert (state.attacker, state.first_attack_card) == (1, "6d")


def test_six_players_36_cards_no_card_left_last_card_dealt_sets_trump() -> None:
    state = six_player_state()
    assert state.trump_card == "Ah" and state.trump == "h" and "Ah" in state.hands[5]
    assert "Ah" in state._revealed  # shown to all
    assert "trump_card" not in state._locations() and state._locations()["hidden:stock"] == []
    for seat in range(6):
        obs = state.observation(seat)
        assert (obs["trump_card"], obs["stock"], obs["out"]) == ("Ah", 0, [])


# -- a bout ------------------------------------------------------------------------------------


def three_player_state() -> FoolState:
    hands = {
        0: ["6s", "Qc", "Qh", "7d", "8d", "9h"],
        1: ["Kc", "Kd", "Ah", "7c", "7s", "As"],
        2: ["Qd", "Kh", "6c", "6d", "6h", "8c"],
    }
    deck = deal_deck(3, 2, hands, turned="9s", stock=["Tc", "Td", "Jc", "Jd", "Th", "Js", "Ts"])
    state = new_game("fool", players=3).new_state(decks=[deck], dealer=2)
    assert isinstance(state, FoolState)
    return state


def test_attack_defend_add_and_score() -> None:
    s = three_player_state()
    assert s.trump == "s" and s.observation(0)["stock"] == 18
    assert (s.attacker, s.defender, s.phase, s.bout_limit) == (0, 1, "attack", 6)
    assert s.legal_actions() == [
        "attack Qc", "attack 7d", "attack 8d", "attack 9h", "attack Qh", "attack 6s",
    ]  # fmt: skip
    s.apply("attack Qc")
    # a higher club, or any trump
    assert (s.current_player, s.phase) == (1, "defend")
    assert s.legal_actions() == ["beat Qc Kc", "beat Qc 7s", "beat Qc As", "take"]
    s.apply("beat Qc Kc")
    # every attack card is covered: the attacker has the first right to add (a Q or a K)
    assert (s.current_player, s.phase) == (0, "add")
    assert s.legal_actions() == ["add Qh", "pass"]
    s.apply("pass")
    # then the others clockwise, never the defender
    assert s.current_player == 2
    assert s.legal_actions() == ["add Qd", "add Kh", "pass"]
    s.apply("add Kh")
    # the defender must answer the added card
    assert (s.current_player, s.phase) == (1, "defend")
    assert s.legal_actions() == ["beat Kh Ah", "beat Kh 7s", "beat Kh As", "take"]
    s.apply("beat Kh Ah")
    # the right to add starts again with the attacker
    assert s.current_player == 0 and s.legal_actions() == ["add Qh", "pass"]
    s.apply("add Qh")
    # a plain queen of hearts: only trumps beat it now
    assert s.legal_actions() == ["beat Qh 7s", "beat Qh As", "take"]
    s.apply("beat Qh 7s")
    assert s.observation(2)["table"] == [["Qc", "Kc"], ["Kh", "Ah"], ["Qh", "7s"]]
    # the covering 7s put sevens on the table too
    assert s.current_player == 0 and s.legal_actions() == ["add 7d", "pass"]
    s.apply("pass")
    assert s.current_player == 2 and s.legal_actions() == ["add Qd", "pass"]
    s.apply("pass")
    # all who may add passed in a row: the defender scores the face cards attacked (Qc Kh Qh)
    assert s.scores == [0, 3, 0]
    assert s.discard == ["Qc", "Kc", "Kh", "Ah", "Qh", "7s"]
    assert s.last_bout == {
        "attacker": 0,
        "defender": 1,
        "table": [["Qc", "Kc"], ["Kh", "Ah"], ["Qh", "7s"]],
        "taken": False,
        "face_cards": 3,
    }
    # refilling: the attacker first (Tc Td), then clockwise from the attacker's left
    assert s.hands[0] == ["Tc", "7d", "8d", "Td", "9h", "6s"]
    assert s.hands[1] == ["7c", "Jc", "Jd", "Kd", "Th", "As"]
    assert s.hands[2] == ["6c", "8c", "6d", "Qd", "6h", "Js"]
    assert s.observation(0)["stock"] == 12
    # after a full defence the defender attacks next
    assert (s.attacker, s.defender, s.current_player, s.phase) == (1, 2, 1, "attack")


def test_take_others_still_add_then_defender_takes() -> None:
    s = three_player_state()
    play(s, "attack Qc", "beat Qc Kc", "pass", "add Kh", "beat Kh Ah", "add Qh", "beat Qh 7s", "pass", "pass")
    s.apply("attack Jd")
    assert s.legal_actions() == ["beat Jd Qd", "beat Jd Js", "take"]
    s.apply("take")
    # the others may still add, the attacker first
    assert (s.current_player, s.phase, s.taking) == (1, "add", True)
    assert s.legal_actions() == ["add Jc", "pass"]
    obs = s.observation(0)
    assert (obs["taking"], obs["phase"], obs["table"]) == (True, "add", [["Jd", None]])
    s.apply("add Jc")
    # no answer from a taking defender; the first right to add goes back to the attacker
    assert s.current_player == 1 and s.legal_actions() == ["pass"]
    s.apply("pass")
    # asked even with no fitting card: a seat that could not add says pass
    assert s.current_player == 0 and s.legal_actions() == ["pass"]
    s.apply("pass")
    assert s.hands[2] == ["6c", "8c", "Jc", "6d", "Jd", "Qd", "6h", "Js"]
    assert s.scores == [0, 3, 0]  # a take scores nothing
    assert s.last_bout is not None and s.last_bout["taken"] and s.last_bout["face_cards"] == 0
    assert "Ts" in s.hands[1] and len(s.hands[1]) == 6  # the attacker refilled
    assert s.observation(0)["stock"] == 10
    assert s.observation(0)["discard_count"] == 6
    # after a take the player to the defender's left attacks; the limit is 6 even for 8 cards
    assert (s.attacker, s.defender, s.current_player) == (0, 1, 0)
    assert s.bout_limit == 6


def test_illegal_actions_give_reasons_and_change_nothing() -> None:
    s = three_player_state()
    illegal(s, "pass", "the attacker may not pass")
    illegal(s, "attack As", r"you do not hold As \(you hold Qc 7d 8d 9h Qh 6s\)")
    illegal(s, "attack Zz", "'zz' is not a card")
    illegal(s, "take", "seat 0 attacks seat 1: lead a card with 'attack C'")
    s.apply("attack Qc")
    illegal(s, "beat Qc 7c", "7c does not beat Qc: cover with a higher club or any trump")
    illegal(s, "beat Qd Kd", "Qd is not an uncovered attack card")
    illegal(s, "beat Qc Ks", "you do not hold Ks")
    illegal(s, "pass", "seat 1 defends: answer Qc with 'beat Qc C' or 'take'")
    s.apply("beat Qc Kc")
    illegal(s, "add 7d", "7d does not fit: the ranks on the table are Q, K")
    illegal(s, "take", r"only the defender \(seat 1\) may take")
    illegal(s, "attack Qh", "you may 'add C'")
    # a trump attack card needs a higher trump
    t = position(2, {0: ["7h"], 1: ["8h", "6h", "Kc"]}, attacker=0)
    t.apply("attack 7h")
    illegal(t, "beat 7h 6h", "6h does not beat 7h: a trump is beaten only by a higher trump")
    illegal(t, "beat 7h Kc", "a trump is beaten only by a higher trump")


def test_spelling_is_normalised() -> None:
    s = three_player_state()
    s.apply("Attack qc")
    s.apply("BEAT Qc KC")
    assert s.history == [(0, "attack Qc"), (1, "beat Qc Kc")]


# -- the limit, running out, skipping ------------------------------------------------------------


def six_player_state() -> FoolState:
    hands = {
        0: ["6h", "Tc", "Td", "7c", "7d", "7s"],
        1: ["Jc", "Jd", "Js", "Qh", "Kc", "Ad"],
        2: ["Ts", "6c", "8c", "9c", "6d", "8d"],
        3: ["Jh", "9d", "7h", "8h", "9h", "6s"],
        4: ["Qc", "Qs", "Ac", "8s", "9s", "As"],
        5: ["Kd", "Qd", "Th", "Kh", "Ks", "Ah"],  # Ah is the last card dealt
    }
    state = new_game("fool", players=6).new_state(decks=[deal_deck(6, 5, hands)], dealer=5)
    assert isinstance(state, FoolState)
    return state


def test_six_attack_cards_at_most_then_out_and_skipped() -> None:
    s = six_player_state()
    assert (s.attacker, s.defender, s.bout_limit) == (0, 1, 6)
    play(s, "attack Tc", "beat Tc Jc")
    assert s.legal_actions() == ["add Td", "pass"]
    play(s, "add Td", "beat Td Jd")
    # every player who may add is asked, in order, even with nothing that fits
    assert (s.current_player, s.legal_actions()) == (0, ["pass"])
    s.apply("pass")
    assert (s.current_player, s.legal_actions()) == (2, ["add Ts", "pass"])
    play(s, "add Ts", "beat Ts Js", "pass")
    assert (s.current_player, s.legal_actions()) == (2, ["pass"])
    s.apply("pass")
    assert (s.current_player, s.legal_actions()) == (3, ["add Jh", "pass"])
    s.apply("add Jh")
    assert s.legal_actions() == ["beat Jh Qh", "take"]
    play(s, "beat Jh Qh", "pass", "pass", "pass")
    assert (s.current_player, s.legal_actions()) == (4, ["add Qc", "add Qs", "pass"])
    play(s, "add Qc", "beat Qc Kc", "pass", "pass", "pass", "pass")
    assert s.current_player == 5
    assert s.legal_actions() == ["add Qd", "add Kd", "add Th", "add Kh", "add Ks", "pass"]
    s.apply("add Kd")
    assert s.legal_actions() == ["beat Kd Ad", "take"]
    s.apply("beat Kd Ad")
    # the sixth attack card is covered: nobody is asked, the bout ends; six face cards beaten
    assert s.scores == [0, 6, 0, 0, 0, 0]
    assert s.observation(0)["discard_count"] == 12
    # seat 1 has no cards and the stock is empty: out. The defender would attack next, so the
    # next player to the left with cards does; the limit is what seat 3 holds (5 cards).
    assert s.observation(0)["out"] == [1]
    assert (s.attacker, s.defender, s.current_player, s.bout_limit) == (2, 3, 2, 5)
    assert s.observation(4)["hand_sizes"] == [4, 0, 5, 5, 5, 5]
    assert "(out)" in str(s)


def test_limit_is_what_the_defender_held_a_take_at_the_limit_is_immediate() -> None:
    s = position(2, {0: ["6c", "6d"], 1: ["7s"]}, attacker=0)
    assert s.bout_limit == 1
    s.apply("attack 6c")
    assert s.legal_actions() == ["take"]
    s.apply("take")
    # the limit is reached: nobody is asked, the defender takes at once
    assert s.hands[1] == ["6c", "7s"] and s.hands[0] == ["6d"]
    assert (s.attacker, s.defender, s.current_player, s.bout_limit) == (0, 1, 0, 2)


def test_attacker_out_of_cards_is_not_asked_and_nobody_is_the_fool() -> None:
    s = position(3, {0: ["7c"], 1: ["8c", "9d"], 2: ["7d"]}, attacker=0, scores=[3, 1, 3])
    play(s, "attack 7c", "beat 7c 8c")
    # seat 0 has no card left: not asked; seat 2 is
    assert (s.current_player, s.legal_actions()) == (2, ["add 7d", "pass"])
    play(s, "add 7d", "beat 7d 9d")
    # nobody holds cards: the game ends with no fool
    assert s.is_terminal and s.fool is None and s.phase == "over"
    # RULES.md, Result (revised): the two tied on the most share place 1, the other is a loser
    assert s.scores == [3, 1, 3] and s.ranking == [1, 2, 1]
    assert s.observation(1)["fool"] is None


def test_game_ends_when_one_player_holds_cards_the_fool() -> None:
    s = position(2, {0: ["7c"], 1: ["8c", "9d"]}, attacker=0, scores=[2, 2])
    s.apply("attack 7c")
    assert s.legal_actions() == ["beat 7c 8c", "take"]
    s.apply("beat 7c 8c")
    assert s.is_terminal and s.current_player is None and s.legal_actions() == []
    assert s.fool == 1
    # the fool keeps the place their face cards give
    assert s.scores == [2, 2] and s.ranking == [1, 1]
    obs = s.observation(0)
    assert (obs["fool"], obs["phase"], obs["attacker"], obs["defender"]) == (1, "over", None, None)
    assert "the fool is seat 1" in str(s)
    with pytest.raises(IllegalAction, match="the game is over"):
        s.apply("attack 9d")


def test_last_cards_beaten_scores_and_ranks() -> None:
    s = position(2, {0: ["Kc", "6d"], 1: ["Ac"]}, attacker=0, scores=[2, 2])
    play(s, "attack Kc", "beat Kc Ac")
    # the limit (1 card) is reached; seat 1 is out, seat 0 is the fool and the loser
    assert s.scores == [2, 3] and s.ranking == [2, 1] and s.fool == 0


def test_the_most_face_cards_win_and_every_other_player_shares_second_place() -> None:
    """RULES.md, Result (revised): face counts 5, 3, 0, 0 place 1, 2, 2, 2 (not 1, 2, 3, 3)."""
    s = position(4, {0: ["7c"], 1: ["8c"]}, attacker=0, scores=[5, 3, 0, 0])
    play(s, "attack 7c", "beat 7c 8c")  # a six and under: seat 1 scores nothing
    assert s.is_terminal and s.fool is None
    assert s.scores == [5, 3, 0, 0] and s.ranking == [1, 2, 2, 2]
    # 2, 1, 0 place 1, 2, 2; the fool keeps its place
    s = position(3, {0: ["7c"], 1: ["8c", "9d"]}, attacker=0, scores=[2, 1, 0])
    play(s, "attack 7c", "beat 7c 8c")
    assert s.is_terminal and s.fool == 1
    assert s.scores == [2, 1, 0] and s.ranking == [1, 2, 2]
    # the most, tied, share place 1; everyone else shares place 2
    s = position(5, {0: ["7c"], 1: ["8c"]}, attacker=0, scores=[4, 1, 4, 2, 0])
    play(s, "attack 7c", "beat 7c 8c")
    assert s.scores == [4, 1, 4, 2, 0] and s.ranking == [1, 2, 1, 2, 2]
    # everyone beat as many: everyone shares place 1
    s = position(3, {0: ["7c"], 1: ["8c"]}, attacker=0, scores=[1, 1, 1])
    play(s, "attack 7c", "beat 7c 8c")
    assert s.ranking == [1, 1, 1]


def test_random_games_of_2_to_6_players_have_one_winner_and_losers_sharing_place_2() -> None:
    """Random play, every player count and both decks: places are exactly 1 for the top count
    of face cards beaten and 2 for everyone else; the scores stay the counts."""
    import random

    counts_seen = 0  # games whose losers beat different counts: where the old ranking differed
    for players in range(2, 7):
        for seed in range(40):
            rng = random.Random(seed)
            state = new_game("fool", players=players, deck=52 if seed % 2 else 36).new_state(seed=seed)
            assert isinstance(state, FoolState)
            while not state.is_terminal:
                state.apply(rng.choice(state.legal_actions()))
            scores, top = state.scores, max(state.scores)
            assert scores == state.beaten
            assert state.ranking == [1 if count == top else 2 for count in scores], (players, seed)
            assert state.ranking.count(1) >= 1 and set(state.ranking) <= {1, 2}
            counts_seen += len({c for c in scores if c != top}) >= 2
    assert counts_seen >= 50, counts_seen


def test_after_a_take_the_next_attacker_skips_players_out() -> None:
    s = position(3, {1: ["9d", "Ts"], 2: ["7c", "8c"]}, attacker=1)
    assert (s.attacker, s.defender) == (1, 2)
    s.apply("attack 9d")
    assert s.legal_actions() == ["take"]
    s.apply("take")
    assert (s.current_player, s.legal_actions()) == (1, ["pass"])
    s.apply("pass")  # seat 0 holds nothing: not asked
    assert s.hands[2] == ["7c", "8c", "9d"]
    # seat 0, left of the defender, is out: seat 1 attacks again
    assert (s.attacker, s.defender, s.current_player, s.bout_limit) == (1, 2, 1, 3)
    assert s.observation(2)["out"] == [0]
    # and a defender is the next player to the left who holds cards
    t = position(3, {1: ["9d"], 2: ["7c"]}, attacker=2)
    assert (t.attacker, t.defender) == (2, 1)


def test_turned_card_is_drawn_last_and_stays_shown() -> None:
    hands = {2: ["7c", "9d", "9h", "9s", "6d", "6h"], 3: ["Td", "Jh", "Qs"]}
    deck = deal_deck(5, 4, hands, turned="6c", stock=["7d", "7h", "7s", "8d", "8h"])
    s = new_game("fool", players=5).new_state(decks=[deck], dealer=4)
    assert (s.trump, s.attacker, s.defender) == ("c", 2, 3)
    assert s._locations()["trump_card"] == ["6c"] and s.observation(0)["stock"] == 6
    play(s, "attack 9d", "beat 9d Td", "add 9h", "beat 9h Jh", "add 9s", "beat 9s Qs")
    assert s.current_player == 2 and s.legal_actions() == ["pass"]
    play(s, "pass", "pass", "pass", "pass")  # seats 2, 4, 0, 1
    # the attacker draws first, then the defender, who gets the turned card last
    assert s.hands[2] == ["7c", "6d", "7d", "6h", "7h", "7s"]
    assert "8d" in s.hands[3] and "8h" in s.hands[3] and "6c" in s.hands[3]
    assert "6c" in s._revealed and "trump_card" not in s._locations()
    assert s.observation(0)["trump_card"] == "6c" and s.observation(0)["stock"] == 0
    assert (s.attacker, s.defender) == (3, 4)


# -- later games of a series ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first_attack", "attacker", "defender"), [("right_of_fool", 1, 2), ("left_of_fool", 3, 0)]
)
def test_previous_fool_deals_and_first_attacker(first_attack: str, attacker: int, defender: int) -> None:
    s = new_game("fool", players=4, first_attack=first_attack).new_state(seed=3, previous_fool=2)
    assert (s.dealer, s.attacker, s.defender, s.current_player) == (2, attacker, defender, attacker)
    obs = s.observation(0)
    assert obs["previous_fool"] == 2 and obs["first_attack_card"] is None and obs["dealer"] == 2
    assert new_game("fool", players=4).new_state(dealer=2, previous_fool=2).dealer == 2


@pytest.mark.parametrize("bad", [4, -1, True, "1", 1.0])
def test_previous_fool_must_be_a_seat(bad: object) -> None:
    with pytest.raises(ValueError, match="previous_fool"):
        new_game("fool", players=4).new_state(previous_fool=bad)


def test_previous_fool_and_another_dealer_contradict() -> None:
    with pytest.raises(ValueError, match="previous_fool"):
        new_game("fool", players=4).new_state(dealer=1, previous_fool=2)


# -- what a seat sees ----------------------------------------------------------------------------


def test_observation_hides_other_hands_and_the_stock() -> None:
    s = three_player_state()
    obs = s.observation(1)
    text = json.dumps(obs)
    assert obs["hand"] == ["7c", "Kc", "Kd", "Ah", "7s", "As"]
    hidden = (set(s.hands[0]) | set(s.hands[2]) | set(s.stock[1:])) - {"6s"}
    assert not [c for c in hidden if c in text]
    # the first attacker's lowest trump was shown; the turned card is face up
    assert obs["first_attack_card"] == "6s" and obs["trump_card"] == "9s"
    assert obs["hand_sizes"] == [6, 6, 6]
    assert {
        "game", "seat", "players", "hand", "current_player", "dealer", "trump", "scores", "stock",
        "table", "defender", "attacker", "trump_card", "phase", "taking", "hand_sizes", "out",
        "discard_count", "bout_limit", "fool", "face_cards_beaten",
    } <= obs.keys()  # fmt: skip
    assert (obs["phase"], obs["attacker"], obs["defender"], obs["fool"]) == ("attack", 0, 1, None)
    with pytest.raises(ValueError, match="seat"):
        s.observation(3)


def test_str_shows_the_position() -> None:
    s = three_player_state()
    play(s, "attack Qc", "beat Qc Kc", "pass", "add Kh")
    text = str(s)
    assert "Fool compris (3 players, 36 cards)" in text
    assert "trump: spades (turned 9♠)" in text
    assert "Bout: seat 0 attacks seat 1 (limit 6); phase: defend; to act: seat 1" in text
    assert "Table: Q♣/K♣  K♥/-" in text
    assert "Seat 1: 7♣ K♦ A♥ 7♠ A♠  — face cards beaten: 0" in text


# -- a position repeated three times ends the game (decision, ours: docs/rules/fool.md) ------


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("deck", [36, 52])
def test_first_legal_play_always_ends(players: int, deck: int) -> None:
    """First-legal play (the arena's fallback for a faulted seat) used to go round in circles
    for ever in about one deal in twenty: every game of 600 seeds now ends."""
    game = new_game("fool", players=players, deck=deck)
    for seed in range(600):
        state = game.new_state(seed=seed)
        for _ in range(5000):
            if state.is_terminal:
                break
            state.apply(state.legal_actions()[0])
        assert state.is_terminal, (players, deck, seed)


def test_a_position_seen_a_third_time_at_a_bouts_start_ends_the_game_with_no_fool() -> None:
    game = new_game("fool", players=3)
    state = game.new_state(seed=335)  # first-legal play goes round with 10 cards in the stock
    starts = []  # (attacker, stock, hands) at each bout's start
    while not state.is_terminal:
        if state.phase == "attack" and not state.table:
            starts.append((state.attacker, len(state.stock), [list(h) for h in state.hands]))
        state.apply(state.legal_actions()[0])
    assert state.fool is None and state.phase == "over" and sum(1 for h in state.hands if h) >= 2
    assert len(state.stock) == 10  # nobody had to draw while it went round
    final = (len(state.stock), [list(h) for h in state.hands])
    earlier = [attacker for attacker, *position in starts if position == list(final)]
    assert len(earlier) == 2 and earlier[0] == earlier[1]  # seen twice: the third time, it ends
    assert all(starts.count(s) <= 2 for s in starts)
    scores = list(state.scores)
    assert scores == state.beaten  # the result goes by face cards beaten, as always
    assert state.ranking == [1 if mine == max(scores) else 2 for mine in scores]
    observation = state.observation(0)
    assert observation["fool"] is None and observation["phase"] == "over"
    assert game.describe()["rules_version"] == 3


def test_random_play_never_meets_a_repetition_in_a_thousand_games() -> None:
    """The rule only ends games that go round in circles: random play is unchanged."""
    import random

    rng = random.Random(7)
    game = new_game("fool", players=4)
    for seed in range(1000):
        state = game.new_state(seed=seed)
        while not state.is_terminal:
            state.apply(rng.choice(state.legal_actions()))
        assert state.fool is not None or not any(state.hands), seed


def test_observation_carries_the_whole_game_as_deal_history() -> None:
    """fool is one deal: every seat's ``deal_history`` is the game's history, [seat, action]."""
    import random

    state = new_game("fool", players=3).new_state(seed=11)
    rng = random.Random(11)
    assert state.observation(0)["deal_history"] == []
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))
        if len(state.history) % 17 == 0:
            for seat in range(3):
                assert state.observation(seat)["deal_history"] == [[s, a] for s, a in state.history]
    assert state.observation(2)["deal_history"] == [[s, a] for s, a in state.history]
