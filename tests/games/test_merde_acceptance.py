"""Acceptance tests for ``merde``, worked by hand from RULES.md ("merde") and DESIGN.md
("The engine API"), through the public API only (``new_game``, ``new_state``, ``apply``,
``legal_actions``, ``observation``, ``scores``, ``ranking``, ``history``).

Every deck is exact: ``deck_for`` lays the hands out as RULES.md says a deal is made (one card
at a time from the top, clockwise, starting with the player to the dealer's left), then the
card to turn, then the rest of the 52 cards in a fixed order.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from atout.games import GAMES, IllegalAction, new_game

RANKS = "23456789TJQKA"
FULL = [r + s for s in "cdhs" for r in RANKS]


def deck_for(
    players: int, dealer: int, hands: Mapping[int, Sequence[str]], turned: str | None = None
) -> list[str]:
    """The deck that deals ``hands`` (seat -> cards in the order received), then ``turned``."""
    size = len(hands[0])
    order = [(dealer + 1 + k) % players for k in range(players)]  # the dealer's left first
    top = [hands[seat][j] for j in range(size) for seat in order]
    if turned is not None:
        top.append(turned)
    assert len(set(top)) == len(top)
    return top + [c for c in FULL if c not in top]


def run(state: Any, *actions: str) -> None:
    for action in actions:
        state.apply(action)


def hands(state: Any) -> list[list[str]]:
    return [sorted(state.observation(s)["hand"]) for s in range(state.players)]


def snapshot(state: Any) -> Any:
    return (
        state.current_player,
        list(state.history),
        state.legal_actions(),
        [json.dumps(state.observation(s), sort_keys=True) for s in range(state.players)],
        state.scores,
        state.ranking,
        state.is_terminal,
    )


def random_game(state: Any, rng: random.Random) -> None:
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))


# -- players and options ----------------------------------------------------------------------


def test_registered_and_players_three_to_seven() -> None:
    assert "merde" in GAMES
    for n in range(3, 8):
        assert new_game("merde", players=n).new_state(seed=1).players == n
    for n in (0, 1, 2, 8, 9):
        with pytest.raises(ValueError, match="players"):
            new_game("merde", players=n)


@pytest.mark.parametrize(("players", "deals"), [(3, 15), (4, 13), (5, 10), (6, 8), (7, 7)])
def test_default_number_of_deals_is_played(players: int, deals: int) -> None:
    game = new_game("merde", players=players)
    assert game.options["deals"] == deals
    state = game.new_state(seed=players)
    random_game(state, random.Random(players))
    bids = [a for _, a in state.history if a.startswith("bid ")]
    plays = [a for _, a in state.history if a.startswith("play ")]
    assert len(bids) == players * deals  # each player bids once per deal
    assert len(plays) == players * sum(range(1, deals + 1))  # deal i: i cards each


@pytest.mark.parametrize(("players", "most"), [(3, 17), (4, 13), (5, 10), (6, 8), (7, 7)])
def test_deals_option_bounds(players: int, most: int) -> None:
    # 1 <= deals, and deals x players <= 52
    for deals in (1, most):
        assert new_game("merde", players=players, deals=deals).options["deals"] == deals
    for deals in (0, -1, most + 1, 100):
        with pytest.raises(ValueError, match="deals"):
            new_game("merde", players=players, deals=deals)


@pytest.mark.parametrize("bad", ["3", 2.0, True, None, [3]])
def test_deals_option_must_be_an_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="deals"):
        new_game("merde", players=4, deals=bad)


def test_zero_bid_option() -> None:
    assert new_game("merde", players=4).options["zero_bid"] == "ten"
    assert new_game("merde", players=4, zero_bid="five_plus_tricks").options["zero_bid"] == "five_plus_tricks"
    for bad in ("five", "Ten", 10, None):
        with pytest.raises(ValueError, match="zero_bid"):
            new_game("merde", players=4, zero_bid=bad)


def test_unknown_option_and_bad_dealer_and_bad_deck() -> None:
    with pytest.raises(ValueError, match="teams"):
        new_game("merde", players=4, teams=True)
    game = new_game("merde", players=4, deals=2)
    for dealer in (-1, 4, "0"):
        with pytest.raises(ValueError):
            game.new_state(decks=[FULL], dealer=dealer)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        game.new_state(decks=[FULL[:-1]], dealer=0)  # a card short
    with pytest.raises(ValueError):
        game.new_state(decks=[[*FULL[:-1], "2c"]], dealer=0)  # a card twice
    with pytest.raises(ValueError):
        game.new_state(decks=[[*FULL[:-1], "RJ"]], dealer=0)  # not a merde card


# -- dealing, dealer, trump -------------------------------------------------------------------


def test_deal_one_card_at_a_time_from_the_dealers_left() -> None:
    # 4 players, dealer 1: the deck's cards go to seats 2, 3, 0, 1, 2, 3, 0, 1, ...
    deck = list(FULL)  # 2c 3c 4c 5c 6c 7c 8c 9c Tc ...
    state = new_game("merde", players=4, deals=3).new_state(decks=[deck, deck, deck], dealer=1)
    assert hands(state) == [["4c"], ["5c"], ["2c"], ["3c"]]
    obs = state.observation(2)
    assert obs["dealer"] == 1 and obs["trump"] == "c"  # the 5th card, 6c, is turned
    assert state.current_player == 2
    run(state, "bid 0", "bid 0", "bid 0", "bid 0", "play 2c", "play 3c", "play 4c", "play 5c")
    # deal 2, dealt by seat 2: seats 3, 0, 1, 2, 3, 0, 1, 2; the 9th card (Tc) is turned
    assert state.observation(0)["dealer"] == 2
    assert hands(state) == [["3c", "7c"], ["4c", "8c"], ["5c", "9c"], ["2c", "6c"]]
    assert state.current_player == 3


def at_deal_start(state: Any, cards: int) -> bool:
    """Whether the bidding of the deal giving ``cards`` cards each has not started yet."""
    obs = state.observation(0)
    return obs["bids"] == [None] * state.players and len(obs["hand"]) == cards


def play_to_deal(state: Any, cards: int, rng: random.Random) -> None:
    while not at_deal_start(state, cards):
        state.apply(rng.choice(state.legal_actions()))


def test_seven_players_first_and_last_deal() -> None:
    state = new_game("merde", players=7).new_state(seed=5, decks=[FULL], dealer=0)
    # seat 1 (the dealer's left) gets the top card, the dealer the 7th
    assert hands(state) == [["8c"], ["2c"], ["3c"], ["4c"], ["5c"], ["6c"], ["7c"]]
    assert state.observation(0)["trump"] == "c"  # the 8th card, 9c, is turned
    play_to_deal(state, 7, random.Random(2))  # the 7th and last deal of a 7-player game
    obs = state.observation(0)
    assert [len(h) for h in hands(state)] == [7] * 7
    assert obs["trump"] is None and obs["dealer"] == 6
    assert state.current_player == 0


def test_dealer_moves_left_each_deal_and_deal_i_gives_i_cards() -> None:
    state = new_game("merde", players=5, deals=6).new_state(seed=3, dealer=3)
    rng = random.Random(9)
    dealers, first_bidders = [], []
    for cards in range(1, 7):
        play_to_deal(state, cards, rng)
        assert [len(h) for h in hands(state)] == [cards] * 5
        dealers.append(state.observation(2)["dealer"])
        first_bidders.append(state.current_player)
    assert dealers == [3, 4, 0, 1, 2, 3]
    assert first_bidders == [(d + 1) % 5 for d in dealers]
    random_game(state, rng)
    assert state.is_terminal


def test_first_dealer_by_lot_is_seeded() -> None:
    firsts = {new_game("merde", players=5).new_state(seed=s).observation(0)["dealer"] for s in range(60)}
    assert firsts == {0, 1, 2, 3, 4}
    again = {new_game("merde", players=5).new_state(seed=42).observation(3)["dealer"] for _ in range(3)}
    assert len(again) == 1


def test_turned_card_suit_is_trump_and_last_deal_has_none() -> None:
    d1 = deck_for(3, 2, {0: ["Ac"], 1: ["Kc"], 2: ["Qc"]}, turned="4d")
    d2 = deck_for(3, 0, {0: ["Ah", "2h"], 1: ["Kh", "3h"], 2: ["Qh", "4h"]}, turned="7s")
    d3 = deck_for(3, 1, {0: ["Ad", "2d", "3d"], 1: ["Kd", "4d", "5d"], 2: ["Qd", "6d", "7d"]}, turned="9h")
    state = new_game("merde", players=3, deals=3).new_state(decks=[d1, d2, d3], dealer=2)
    rng = random.Random(0)
    trumps = []
    for cards in (1, 2, 3):
        play_to_deal(state, cards, rng)
        trumps.append(state.observation(1)["trump"])
    # deal 3 is the last deal of the game: no card turned, no trump (9h would make hearts trump)
    assert trumps == ["d", "s", None]


def test_a_one_deal_game_has_no_trump() -> None:
    deck = deck_for(4, 0, {1: ["2s"], 2: ["As"], 3: ["3h"], 0: ["4d"]}, turned="5h")
    state = new_game("merde", players=4, deals=1).new_state(decks=[deck], dealer=0)
    assert state.observation(0)["trump"] is None
    run(state, "bid 0", "bid 1", "bid 0", "bid 0")
    # seat 1 leads 2s; seat 2 must follow with As; 3h would win if hearts (the 5th card) were trump
    run(state, "play 2s", "play As", "play 3h", "play 4d")
    assert state.is_terminal and state.current_player is None
    assert state.scores == [10, 10, 11, 10]
    assert state.ranking == [2, 2, 1, 2]
    assert state.legal_actions() == []
    assert state.observation(0)["last_deal"]["total"] == [10, 10, 11, 10]  # after the game ends
    assert state.observation(0)["current_player"] is None


def test_seeded_deals_beyond_the_decks_list() -> None:
    d1 = deck_for(4, 0, {1: ["2s"], 2: ["As"], 3: ["3h"], 0: ["4d"]}, turned="5h")
    game = new_game("merde", players=4, deals=3)
    a = game.new_state(seed=11, decks=[d1], dealer=0)
    b = game.new_state(seed=11, decks=[d1], dealer=0)
    assert hands(a) == [["4d"], ["2s"], ["As"], ["3h"]] and a.observation(0)["trump"] == "h"
    for s in (a, b):
        run(s, "bid 0", "bid 0", "bid 0", "bid 0", "play 2s", "play As", "play 3h", "play 4d")
    assert hands(a) == hands(b)  # deal 2 comes from the seed, reproducibly
    cards = [c for h in hands(a) for c in h]
    assert len(cards) == 8 == len(set(cards)) and set(cards) <= set(FULL)
    assert a.observation(0)["dealer"] == 1


# -- bidding ----------------------------------------------------------------------------------


def test_bidding_order_range_and_no_pass() -> None:
    d1 = deck_for(4, 2, {0: ["2c"], 1: ["3c"], 2: ["4c"], 3: ["5c"]}, turned="6c")
    d2 = deck_for(4, 3, {0: ["2d", "3d"], 1: ["4d", "5d"], 2: ["6d", "7d"], 3: ["8d", "9d"]}, turned="Td")
    state = new_game("merde", players=4, deals=3).new_state(decks=[d1, d2], dealer=2)
    assert state.current_player == 3  # the dealer's left bids first
    assert sorted(state.legal_actions()) == ["bid 0", "bid 1"]
    for bad in ("pass", "bid 2", "bid -1", "play 5c", "bid", "bid 1 1"):
        before = snapshot(state)
        with pytest.raises(IllegalAction):
            state.apply(bad)
        assert snapshot(state) == before  # an illegal action never changes the state
    order = []
    for _ in range(4):
        order.append(state.current_player)
        state.apply("bid 1")  # the sum is free: 4 bids of 1 on a one-card deal
    assert order == [3, 0, 1, 2]  # ... ending with the dealer
    assert state.observation(0)["bids"] == [1, 1, 1, 1]
    assert state.current_player == 3  # the dealer's left leads
    assert state.legal_actions() == ["play 5c"]
    run(state, "play 5c", "play 2c", "play 3c", "play 4c")
    # deal 2, dealer 3: bids from seat 0, 0..2
    assert state.current_player == 0 and sorted(state.legal_actions()) == ["bid 0", "bid 1", "bid 2"]
    order = []
    for bid in ("bid 2", "bid 0", "bid 0"):
        order.append(state.current_player)
        state.apply(bid)
    # the dealer, last, may make the total exactly the number of tricks
    assert state.current_player == 3 and sorted(state.legal_actions()) == ["bid 0", "bid 1", "bid 2"]
    state.apply("bid 0")
    assert order == [0, 1, 2]


def test_bids_are_public() -> None:
    d1 = deck_for(3, 0, {0: ["2c"], 1: ["3c"], 2: ["4c"]}, turned="6c")
    state = new_game("merde", players=3, deals=2).new_state(decks=[d1], dealer=0)
    state.apply("bid 1")  # seat 1
    for seat in range(3):
        assert state.observation(seat)["bids"][1] == 1


# -- play -------------------------------------------------------------------------------------

# Scenario P: 4 players, 3 deals, seat 2 deals first.
# Deal 1 (dealer 2, hearts turned): seat 3 leads As; the two hearts trump it, the higher wins.
P1 = deck_for(4, 2, {3: ["As"], 0: ["2h"], 1: ["Ks"], 2: ["3h"]}, turned="Th")
# Deal 2 (dealer 3, diamonds turned).
P2 = deck_for(4, 3, {0: ["Ac", "2h"], 1: ["Kc", "3h"], 2: ["5d", "9s"], 3: ["Qc", "4c"]}, turned="Jd")
# Deal 3 (dealer 0, the last deal: no trump, though 2s lies where a card would be turned).
P3 = deck_for(
    4,
    0,
    {1: ["2c", "3c", "4c"], 2: ["Ac", "5d", "6d"], 3: ["As", "Ks", "Qs"], 0: ["Ad", "Kd", "Qd"]},
    turned="2s",
)


def scenario_p(**options: Any) -> Any:
    return new_game("merde", players=4, deals=3, **options).new_state(decks=[P1, P2, P3], dealer=2)


def test_trick_play_and_scoring_scenario_p() -> None:
    state = scenario_p()
    obs = state.observation(0)
    assert obs["trump"] == "h" and obs["dealer"] == 2
    assert state.current_player == 3
    run(state, "bid 1", "bid 0", "bid 1", "bid 1")  # seats 3, 0, 1, 2
    assert state.current_player == 3  # the dealer's left leads
    run(state, "play As", "play 2h", "play Ks")
    assert state.observation(1)["trick"] == [[3, "As"], [0, "2h"], [1, "Ks"]]
    state.apply("play 3h")
    # 3h is the highest trump: seat 2 takes it; seat 3 (bid 1) and seat 1 (bid 1) are bankrupt
    obs = state.observation(0)
    assert obs["trick"] == []
    assert obs["last_deal"]["total"] == [10, 0, 11, 0]
    assert state.scores == [10, 0, 11, 0]
    # deal 2: dealer 3, diamonds trump; seat 0 bids first and leads
    assert obs["dealer"] == 3 and obs["trump"] == "d"
    assert state.current_player == 0
    run(state, "bid 0", "bid 0", "bid 2", "bid 1")
    state.apply("play Ac")
    assert state.legal_actions() == ["play Kc"]  # must follow clubs
    state.apply("play Kc")
    assert sorted(state.legal_actions()) == ["play 5d", "play 9s"]  # void in clubs: any card
    with pytest.raises(IllegalAction):
        state.apply("play Ac")  # not in hand
    state.apply("play 5d")  # a low trump
    assert sorted(state.legal_actions()) == ["play 4c", "play Qc"]
    with pytest.raises(IllegalAction):
        state.apply("play 2h")  # seat 3 does not hold it
    state.apply("play Qc")
    # 5d trumps the ace led: seat 2 won and leads
    assert state.current_player == 2 and state.legal_actions() == ["play 9s"]
    run(state, "play 9s", "play 4c", "play 2h", "play 3h")
    # 9s is the only spade and no trump was played: seat 2 again
    assert state.observation(0)["last_deal"]["total"] == [10, 10, 12, 0]
    assert state.scores == [20, 10, 23, 0]
    # deal 3: dealer 0, no trump; seat 1 bids first and leads
    obs = state.observation(3)
    assert obs["dealer"] == 0 and obs["trump"] is None
    assert sorted(obs["hand"]) == ["As", "Ks", "Qs"]
    assert state.current_player == 1
    assert sorted(state.legal_actions()) == ["bid 0", "bid 1", "bid 2", "bid 3"]
    run(state, "bid 0", "bid 1", "bid 3", "bid 1")  # seats 1, 2, 3, 0
    run(state, "play 2c", "play Ac", "play As", "play Ad")
    # no trump: Ac, the highest club, wins; As and Ad are of other suits
    assert state.current_player == 2
    run(state, "play 5d", "play Ks")
    assert sorted(state.legal_actions()) == ["play Kd", "play Qd"]
    run(state, "play Qd", "play 3c")
    assert state.current_player == 0  # Qd is the highest diamond
    run(state, "play Kd", "play 4c", "play 6d", "play Qs")
    # seat 0 took 2 tricks on a bid of 1: bankrupt; seat 3 took none on 3; seat 1 made 0; seat 2 made 1
    assert state.is_terminal and state.current_player is None
    assert state.legal_actions() == []
    obs = state.observation(2)
    assert obs["last_deal"]["total"] == [0, 10, 11, 0]
    assert state.scores == obs["scores"] == [20, 20, 34, 0]
    assert state.ranking == [2, 2, 1, 4]  # equal totals share the better place
    with pytest.raises(IllegalAction):
        state.apply("bid 0")


def test_zero_bid_five_plus_tricks_scenario_p() -> None:
    state = scenario_p(zero_bid="five_plus_tricks")
    run(state, "bid 1", "bid 0", "bid 1", "bid 1", "play As", "play 2h", "play Ks", "play 3h")
    assert state.scores == [6, 0, 11, 0]  # a made zero bid in deal 1: 5 + 1
    run(state, "bid 0", "bid 0", "bid 2", "bid 1")
    run(state, "play Ac", "play Kc", "play 5d", "play Qc", "play 9s", "play 4c", "play 2h", "play 3h")
    assert state.observation(0)["last_deal"]["total"] == [7, 7, 12, 0]  # deal 2: 5 + 2
    run(state, "bid 0", "bid 1", "bid 3", "bid 1")
    run(state, "play 2c", "play Ac", "play As", "play Ad", "play 5d", "play Ks", "play Qd", "play 3c")
    run(state, "play Kd", "play 4c", "play 6d", "play Qs")
    assert state.observation(0)["last_deal"]["total"] == [0, 8, 11, 0]  # deal 3: 5 + 3
    assert state.scores == [13, 15, 34, 0]
    assert state.ranking == [3, 2, 1, 4]


def test_ranking_ties_nine_nine_five_style() -> None:
    # 3 players, 2 deals, dealer 0. Deal 1: spades turned; seat 2 trumps the ace led.
    d1 = deck_for(3, 0, {1: ["Ah"], 2: ["2s"], 0: ["Kh"]}, turned="5s")
    # Deal 2 (dealer 1, last: no trump; 5s lies where a card would be turned).
    d2 = deck_for(3, 1, {2: ["3c", "As"], 0: ["Kc", "4d"], 1: ["Ac", "2d"]}, turned="5s")
    state = new_game("merde", players=3, deals=2).new_state(decks=[d1, d2], dealer=0)
    run(state, "bid 0", "bid 1", "bid 0", "play Ah", "play 2s", "play Kh")
    assert state.scores == [10, 10, 11]
    assert state.current_player == 2
    run(state, "bid 1", "bid 1", "bid 1")  # seats 2, 0, 1
    state.apply("play 3c")
    assert state.legal_actions() == ["play Kc"]
    state.apply("play Kc")
    assert state.legal_actions() == ["play Ac"]
    state.apply("play Ac")
    assert state.current_player == 1
    run(state, "play 2d", "play As", "play 4d")  # As does not win: no trump, not the suit led
    assert state.is_terminal
    assert state.scores == [21, 21, 11]
    assert state.ranking == [1, 1, 3]
    assert state.observation(1)["last_deal"]["total"] == [11, 11, 0]


# -- observations -----------------------------------------------------------------------------


def test_observation_keys_and_secrecy() -> None:
    state = scenario_p()
    run(state, "bid 1", "bid 0", "bid 1", "bid 1", "play As")
    for seat in range(4):
        obs = state.observation(seat)
        assert json.loads(json.dumps(obs)) == obs
        for key in ("game", "seat", "players", "hand", "current_player", "dealer", "trump", "scores"):
            assert key in obs, key
        assert "trick" in obs
        assert obs["game"] == "merde" and obs["seat"] == seat and obs["players"] == 4
        assert obs["current_player"] == 0 and obs["dealer"] == 2 and obs["trump"] == "h"
        assert obs["trick"] == [[3, "As"]]
        assert obs["scores"] == [0, 0, 0, 0]
        assert not obs.get("last_deal")  # only from the second deal on
        shown = set(re.findall(r'"([2-9TJQKA][cdhs])"', json.dumps(obs)))
        mine = set(obs["hand"])
        # nothing but the seat's own hand, the trick and the turned card
        assert shown <= mine | {"As", "Th"}, shown - mine
    with pytest.raises(ValueError):
        state.observation(4)


def test_state_scores_ranking_history_clone() -> None:
    state = scenario_p()
    run(state, "bid 1", "bid 0")
    assert state.history == [(3, "bid 1"), (0, "bid 0")]
    copy = state.clone()
    run(copy, "bid 1", "bid 1", "play As")
    assert len(state.history) == 2 and state.current_player == 1
    assert state.scores == [0, 0, 0, 0] and state.ranking == [1, 1, 1, 1]


def test_unknown_new_state_argument_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="previous_fool"):
        new_game("merde", players=4).new_state(seed=1, previous_fool=0)


def test_mutating_what_the_api_returns_does_not_change_the_state() -> None:
    state = scenario_p()
    run(state, "bid 1", "bid 0", "bid 1", "bid 1", "play As", "play 2h", "play Ks", "play 3h")
    before = snapshot(state)
    legal = state.legal_actions()
    legal.clear()
    obs = state.observation(0)
    for value in obs.values():
        if isinstance(value, list):
            value.clear()
        elif isinstance(value, dict):
            for v in value.values():
                if isinstance(v, list):
                    v.clear()
    state.scores.clear()
    state.ranking.clear()
    assert snapshot(state) == before


# -- an independent reading of the rules, checked against random games --------------------------


def trick_winner(trick: list[tuple[int, str]], trump: str | None) -> int:
    """The highest trump, else the highest card of the suit led (RULES.md, "Play")."""
    led = trick[0][1][1]

    def key(card: str) -> tuple[int, int]:
        return (2 if card[1] == trump else 1 if card[1] == led else 0, RANKS.index(card[0]))

    return max(trick, key=lambda sc: key(sc[1]))[0]


@pytest.mark.parametrize(
    ("players", "deals", "zero_bid", "seed"),
    [(3, 17, "ten", 1), (4, 13, "five_plus_tricks", 2), (5, 6, "ten", 3), (7, 7, "five_plus_tricks", 4)],
)
def test_random_games_follow_the_rules(players: int, deals: int, zero_bid: str, seed: int) -> None:
    n = players
    state = new_game("merde", players=n, deals=deals, zero_bid=zero_bid).new_state(seed=seed)
    rng = random.Random(seed)
    dealer = state.observation(0)["dealer"]
    totals = [0] * n
    for size in range(1, deals + 1):
        obs = state.observation(0)
        assert obs["dealer"] == dealer and obs["scores"] == totals == state.scores
        assert [len(state.observation(s)["hand"]) for s in range(n)] == [size] * n
        trump = obs["trump"]
        if size == deals:
            assert trump is None  # the last deal: no trump
        else:
            assert trump in ("c", "d", "h", "s")
        # bidding: from the dealer's left to the dealer, 0..size, no pass
        bids = [0] * n
        for k in range(n):
            seat = (dealer + 1 + k) % n
            assert state.current_player == seat
            assert sorted(state.legal_actions(), key=lambda a: int(a.split()[1])) == [
                f"bid {b}" for b in range(size + 1)
            ]
            bids[seat] = rng.randint(0, size)
            state.apply(f"bid {bids[seat]}")
        leader = (dealer + 1) % n
        won = [0] * n
        for t in range(size):
            trick: list[tuple[int, str]] = []
            for k in range(n):
                seat = (leader + k) % n
                assert state.current_player == seat
                cards = state.observation(seat)["hand"]
                assert state.observation((seat + 1) % n)["trick"] == [[s, c] for s, c in trick]
                follow = [c for c in cards if trick and c[1] == trick[0][1][1]]
                assert sorted(state.legal_actions()) == sorted("play " + c for c in (follow or cards))
                card = rng.choice(follow or cards)
                state.apply("play " + card)
                trick.append((seat, card))
            leader = trick_winner(trick, trump)
            won[leader] += 1
            if t < size - 1:
                assert state.current_player == leader  # the winner leads the next trick
                assert state.observation(0)["trick"] == []
        points = []
        for b, w in zip(bids, won, strict=True):
            if b != w:
                points.append(0)
            elif b == 0 and zero_bid == "five_plus_tricks":
                points.append(5 + size)
            else:
                points.append(10 + b)
        totals = [a + p for a, p in zip(totals, points, strict=True)]
        assert state.scores == totals
        assert state.observation(n - 1)["last_deal"]["total"] == points
        dealer = (dealer + 1) % n
    assert state.is_terminal and state.current_player is None
    assert state.ranking == [1 + sum(o > s for o in totals) for s in totals]


@pytest.mark.parametrize(
    ("bids", "verdict"), [((0, 0, 0, 0), "under"), ((0, 1, 0, 0), "exact"), ((1, 1, 0, 0), "over")]
)
def test_bids_total_against_tricks_is_public(bids: tuple[int, ...], verdict: str) -> None:
    # docs/rules/merde.md: "bids_total_vs_tricks" is null until everyone has bid
    d1 = deck_for(4, 3, {0: ["2c"], 1: ["3c"], 2: ["4c"], 3: ["5c"]}, turned="6c")
    state = new_game("merde", players=4, deals=2).new_state(decks=[d1], dealer=3)
    for bid in bids[:3]:
        state.apply(f"bid {bid}")
        assert state.observation(0)["bids_total_vs_tricks"] is None
    state.apply(f"bid {bids[3]}")
    for seat in range(4):
        assert state.observation(seat)["bids_total_vs_tricks"] == verdict


def test_legal_actions_in_canonical_order() -> None:
    # docs/rules/merde.md: hands and legal plays by suit (c, d, h, s), then by rank
    hands_ = {
        0: ["As", "2c", "Th", "9d", "3c"],
        1: ["Kd", "Qd", "Jd", "Td", "9s"],
        2: ["2d", "3d", "4d", "5d", "6d"],
        3: ["7d", "8d", "Ad", "2h", "3h"],
    }
    decks = [list(FULL)] * 4 + [deck_for(4, 3, hands_, turned="4h")]
    state = new_game("merde", players=4, deals=6).new_state(decks=decks, dealer=3)
    play_to_deal(state, 5, random.Random(1))
    assert state.legal_actions() == [f"bid {b}" for b in range(6)]
    assert state.observation(0)["hand"] == ["2c", "3c", "9d", "Th", "As"]
    run(state, "bid 0", "bid 0", "bid 0", "bid 0")
    assert state.legal_actions() == ["play 2c", "play 3c", "play 9d", "play Th", "play As"]
