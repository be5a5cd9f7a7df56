"""Hand-worked scenarios for ``merde`` (RULES.md, "merde — Merde (Zut, Eclipse)").

Decks are built so that each seat receives the hand we want (one card at a time from the
dealer's left), then the card to turn; the rest of the deck follows in a fixed order.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence

import pytest

from atout.games import GAMES, IllegalAction, new_game
from atout.games.merde import DECK, Merde, MerdeState


def deal_deck(
    players: int, dealer: int, hands: Mapping[int, Sequence[str]], turned: str | None = None
) -> list[str]:
    """The deck that deals ``hands`` (every seat given, same size) and then turns ``turned``."""
    size = len(hands[0])
    assert sorted(hands) == list(range(players)) and all(len(h) == size for h in hands.values())
    top = [""] * (players * size)
    for seat, cards in hands.items():
        for j, card in enumerate(cards):
            top[j * players + (seat - dealer - 1) % players] = card
    if turned:
        top.append(turned)
    return top + [c for c in DECK if c not in top]


def play(state: MerdeState, *actions: str) -> None:
    for action in actions:
        state.apply(action)


# Scenario A: 4 players, 2 deals, seat 3 deals first.
# Deal 1 (1 card each, spades turned): seat 2's 2s trumps the hearts lead and takes the trick.
# Deal 2 (2 cards each, the last deal: no trump), dealt by seat 0.
DEAL_A1 = deal_deck(4, 3, {0: ["5h"], 1: ["Kh"], 2: ["2s"], 3: ["Ad"]}, turned="9s")
DEAL_A2 = deal_deck(4, 0, {0: ["Ah", "4d"], 1: ["Qh", "3c"], 2: ["7h", "As"], 3: ["2h", "Kc"]})


def scenario_a(**options: object) -> MerdeState:
    state = Merde(players=4, deals=2, **options).new_state(decks=[DEAL_A1, DEAL_A2], dealer=3)
    assert isinstance(state, MerdeState)
    return state


def play_deal_a1(state: MerdeState) -> None:
    play(state, "bid 0", "bid 1", "bid 0", "bid 1")
    play(state, "play 5h", "play Kh", "play 2s", "play Ad")


# -- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "deals"), [(3, 15), (4, 13), (5, 10), (6, 8), (7, 7)])
def test_default_deals_depend_on_players(players: int, deals: int) -> None:
    game = new_game("merde", players=players)
    assert game.options["deals"] == deals
    assert game.options["zero_bid"] == "ten"


def test_defaults() -> None:
    game = new_game("merde")
    assert game.players == 4 and game.options["deals"] == 13
    assert GAMES["merde"].player_counts() == (3, 4, 5, 6, 7)


@pytest.mark.parametrize("players", [2, 8, 0])
def test_bad_player_counts(players: int) -> None:
    with pytest.raises(ValueError, match="option 'players'"):
        new_game("merde", players=players)


@pytest.mark.parametrize("deals", [0, -1, True, 2.0, "3", None])
def test_bad_deals(deals: object) -> None:
    with pytest.raises(ValueError, match="option 'deals'"):
        new_game("merde", deals=deals)


@pytest.mark.parametrize(("players", "most"), [(3, 17), (4, 13), (5, 10), (6, 8), (7, 7)])
def test_deals_times_players_at_most_52(players: int, most: int) -> None:
    assert new_game("merde", players=players, deals=most).options["deals"] == most
    with pytest.raises(ValueError, match=f"option 'deals'.*at most {most} deals"):
        new_game("merde", players=players, deals=most + 1)


@pytest.mark.parametrize("value", ["five", "TEN", 10, None])
def test_bad_zero_bid(value: object) -> None:
    with pytest.raises(ValueError, match=r"option 'zero_bid'.*'ten' or 'five_plus_tricks'"):
        new_game("merde", zero_bid=value)


def test_describe() -> None:
    described = GAMES["merde"].describe()
    assert described["players"] == [3, 4, 5, 6, 7] and described["default_players"] == 4
    assert [o["name"] for o in described["options"]] == ["deals", "zero_bid"]
    assert described["options"][1]["choices"] == ["ten", "five_plus_tricks"]
    assert "10 + bid" in described["summary"]


def test_unknown_keyword() -> None:
    with pytest.raises(ValueError, match="previous_fool"):
        new_game("merde").new_state(seed=1, previous_fool=0)


# -- dealing, trump, dealer -------------------------------------------------------------------


def test_first_deal_one_card_each_from_the_dealers_left() -> None:
    deck = list(DECK)  # 2c 3c 4c 5c 6c ...
    state = new_game("merde", players=4).new_state(decks=[deck], dealer=1)
    # the dealer's left is seat 2: 2c to seat 2, 3c to seat 3, 4c to seat 0, 5c to seat 1
    assert [state.observation(s)["hand"] for s in range(4)] == [["4c"], ["5c"], ["2c"], ["3c"]]
    obs = state.observation(0)
    assert obs["turned"] == "6c" and obs["trump"] == "c"
    assert obs["dealer"] == 1 and obs["deal"] == 1 and obs["cards_per_player"] == 1
    assert state.current_player == 2  # the dealer's left bids first
    places = state._locations()
    assert places["turned"] == ["6c"]
    assert places["hidden:stock"] == deck[5:]  # the rest takes no part, face down


def test_deal_i_gives_i_cards_and_the_dealer_moves_left() -> None:
    state = new_game("merde", players=5, deals=4).new_state(seed=11, dealer=4)
    dealers = []
    while not state.is_terminal:
        obs = state.observation(0)
        if obs["phase"] == "bid" and obs["bids"] == [None] * 5:
            dealers.append(obs["dealer"])
            assert obs["hand_sizes"] == [obs["deal"]] * 5 == [obs["cards_per_player"]] * 5
            assert state.current_player == (obs["dealer"] + 1) % 5
        state.apply(state.legal_actions()[0])
    assert dealers == [4, 0, 1, 2]


def test_first_dealer_is_drawn_by_lot() -> None:
    dealers = {new_game("merde").new_state(seed=s).observation(0)["dealer"] for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    same = [new_game("merde").new_state(seed=5).observation(0)["dealer"] for _ in range(3)]
    assert len(set(same)) == 1


def test_last_deal_has_no_trump_and_turns_no_card() -> None:
    state = scenario_a()
    play_deal_a1(state)
    obs = state.observation(1)
    assert obs["deal"] == 2 and obs["dealer"] == 0
    assert obs["trump"] is None and obs["turned"] is None
    places = state._locations()
    assert places["turned"] == [] and places["hidden:stock"] == DEAL_A2[8:]


def test_deal_using_the_whole_deck_has_no_trump() -> None:
    # Decision (RULES.md): a deal that leaves no card to turn is played without trump; with
    # 4 players the 13th deal deals all 52 cards (and is the last deal anyway).
    state = new_game("merde", players=4).new_state(seed=3)
    rng = random.Random(3)
    while state.observation(0)["deal"] < 13:
        obs = state.observation(0)
        assert obs["trump"] is not None and obs["turned"][1] == obs["trump"]
        state.apply(rng.choice(state.legal_actions()))
    obs = state.observation(0)
    assert obs["trump"] is None and obs["turned"] is None and obs["hand_sizes"] == [13] * 4
    assert state._locations()["hidden:stock"] == []


# -- bidding ----------------------------------------------------------------------------------


def test_bidding_from_the_dealers_left_to_the_dealer() -> None:
    state = scenario_a()
    play_deal_a1(state)
    # deal 2, dealt by seat 0: seat 1 bids first, the dealer last
    assert state.legal_actions() == ["bid 0", "bid 1", "bid 2"]
    order = []
    for bid in ("bid 2", "bid 2", "bid 2", "bid 2"):  # no restriction on the sum of bids
        order.append(state.current_player)
        state.apply(bid)
    assert order == [1, 2, 3, 0]
    obs = state.observation(0)
    assert obs["bids"] == [2, 2, 2, 2] and obs["bids_total_vs_tricks"] == "over"
    assert obs["phase"] == "play" and state.current_player == 1  # the dealer's left leads


def test_bids_are_public_as_they_come() -> None:
    state = scenario_a()
    state.apply("bid 1")
    obs = state.observation(2)
    assert obs["bids"] == [1, None, None, None] and obs["bids_total_vs_tricks"] is None
    play(state, "bid 0", "bid 0", "bid 0")
    assert state.observation(3)["bids_total_vs_tricks"] == "exact"
    state = scenario_a()
    play(state, "bid 0", "bid 0", "bid 0", "bid 0")
    assert state.observation(3)["bids_total_vs_tricks"] == "under"


@pytest.mark.parametrize(("players", "deals"), [(3, 15), (3, 17)])
def test_bids_go_up_to_a_hand_of_more_than_13_cards(players: int, deals: int) -> None:
    # 0 to the number of cards in hand, however many: 3 players hold up to 17 cards each
    state = new_game("merde", players=players, deals=deals).new_state(seed=1)
    while state.observation(0)["deal"] < deals:
        state.apply(state.legal_actions()[0])
    assert state.legal_actions() == [f"bid {n}" for n in range(deals + 1)]
    state.apply(f"bid {deals}")
    assert state.observation(0)["bids"][(state.observation(0)["dealer"] + 1) % players] == deals


@pytest.mark.parametrize(
    ("action", "why"),
    [
        ("bid 2", "a bid is from 0 to 1 (the number of cards in your hand)"),
        ("bid -1", "a bid is a whole number of tricks from 0 to 1"),
        ("bid one", "a bid is a whole number of tricks from 0 to 1"),
        ("pass", "nobody may pass: bid 0 to 1"),
        ("play 5h", "the bidding is not over: bid first"),
        ("bid", "bid with 'bid N'"),
        ("take", "bid with 'bid N'"),
    ],
)
def test_illegal_bids(action: str, why: str) -> None:
    state = scenario_a()
    before = (state.observation(0), list(state.history), state.legal_actions())
    with pytest.raises(IllegalAction) as err:
        state.apply(action)
    assert str(err.value) == f"illegal action {action!r} for seat 0: {why}; legal: 'bid 0', 'bid 1'"
    assert (state.observation(0), list(state.history), state.legal_actions()) == before


# -- play -------------------------------------------------------------------------------------


def test_a_trump_beats_the_suit_led_and_higher_cards_of_other_suits() -> None:
    state = scenario_a()
    play(state, "bid 0", "bid 1", "bid 0", "bid 1")
    assert state.current_player == 0  # the dealer's left leads
    play(state, "play 5h", "play Kh", "play 2s", "play Ad")
    obs = state.observation(0)
    assert obs["last_trick"] == [[0, "5h"], [1, "Kh"], [2, "2s"], [3, "Ad"]]
    assert obs["last_trick_winner"] == 2
    # Deal 1 is over: seat 0 made its zero bid (10), seats 1 and 3 took none of their one trick
    # and seat 2 took one trick on a zero bid: all three score 0.
    assert obs["last_deal"] == {"total": [10, 0, 0, 0], "bids": [0, 1, 0, 1], "tricks": [0, 0, 1, 0]}
    assert state.scores == [10, 0, 0, 0]
    assert obs["tricks_won"] == [0, 0, 0, 0]  # counted per deal: deal 2 has begun


def test_must_follow_suit_else_any_card_and_no_trump_last_deal() -> None:
    state = scenario_a()
    play_deal_a1(state)
    play(state, "bid 0", "bid 1", "bid 1", "bid 2")
    assert state.legal_actions() == ["play 3c", "play Qh"]  # leading: any card, by suit then rank
    state.apply("play Qh")
    assert state.legal_actions() == ["play 7h"]  # seat 2 holds 7h, As: must follow hearts
    with pytest.raises(IllegalAction, match=r"must follow hearts \(you hold 7h\)"):
        state.apply("play As")
    play(state, "play 7h", "play 2h")
    assert state.legal_actions() == ["play Ah"]
    state.apply("play Ah")
    obs = state.observation(0)
    assert obs["last_trick_winner"] == 0 and obs["tricks_won"] == [1, 0, 0, 0]
    assert state.current_player == 0  # the winner leads
    state.apply("play 4d")
    assert state.legal_actions() == ["play 3c"]  # void in diamonds: any card (one left)
    play(state, "play 3c", "play As")
    assert state.legal_actions() == ["play Kc"]
    state.apply("play Kc")
    # No trump in the last deal: the only diamond, 4d, beats 3c, As and Kc.
    final = state.observation(2)
    assert final["last_trick"] == [[0, "4d"], [1, "3c"], [2, "As"], [3, "Kc"]]
    assert final["last_trick_winner"] == 0
    # Deal 2: seat 0 bid 2 took 2 (12), seat 1 bid 0 took 0 (10), seats 2, 3 bid 1 took 0.
    assert final["last_deal"] == {"total": [12, 10, 0, 0], "bids": [2, 0, 1, 1], "tricks": [2, 0, 0, 0]}
    assert state.scores == [22, 10, 0, 0]
    assert state.ranking == [1, 2, 3, 3]  # a tie shares the better place
    assert state.is_terminal and state.current_player is None and state.legal_actions() == []
    assert final["phase"] == "over" and final["current_player"] is None
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply("play 4d")


def test_highest_trump_wins_and_the_winner_leads() -> None:
    # 3 players, 3 deals; deal 2 is dealt by seat 0 with hearts turned.
    deal2 = deal_deck(3, 0, {0: ["Th", "3s"], 1: ["Ad", "5s"], 2: ["4h", "9c"]}, turned="8h")
    state = new_game("merde", players=3, deals=3).new_state(decks=[list(DECK), deal2], dealer=2)
    # deal 1 (dealer 2): 2c to seat 0, 3c to seat 1, 4c to seat 2, 5c turned: clubs
    play(state, "bid 0", "bid 0", "bid 1", "play 2c", "play 3c", "play 4c")
    assert state.scores == [10, 10, 11]
    assert state.observation(0)["trump"] == "h" and state.current_player == 1
    play(state, "bid 1", "bid 0", "bid 1")
    assert state.observation(0)["bids_total_vs_tricks"] == "exact"
    play(state, "play Ad", "play 4h")
    assert state.legal_actions() == ["play Th", "play 3s"]  # void in diamonds
    state.apply("play 10h")  # over-trumps seat 2's 4h (a person's spelling of Th)
    assert state.observation(1)["last_trick_winner"] == 0 and state.current_player == 0
    state.apply("play 3s")
    assert state.legal_actions() == ["play 5s"]
    play(state, "play 5s", "play 9c")
    # spades led, no trump played: 5s beats 3s; 9c of another suit does not count
    obs = state.observation(0)
    assert obs["last_trick_winner"] == 1
    assert obs["last_deal"] == {"total": [11, 11, 10], "bids": [1, 1, 0], "tricks": [1, 1, 0]}
    assert state.scores == [21, 21, 21] and state.ranking == [1, 1, 1]
    assert obs["deal"] == 3 and obs["dealer"] == 1 and obs["trump"] is None


@pytest.mark.parametrize(
    ("action", "why"),
    [
        ("play Kd", "you do not hold Kd"),
        ("play XX", "not a card: 'XX'"),
        ("play", "play a card with 'play C'"),
        ("bid 1", "the bidding is over: play a card"),
        ("discard 3c", "play a card with 'play C'"),
    ],
)
def test_illegal_plays(action: str, why: str) -> None:
    state = scenario_a()
    play_deal_a1(state)
    play(state, "bid 0", "bid 1", "bid 1", "bid 2")
    before = (state.observation(1), list(state.history), state.legal_actions())
    with pytest.raises(IllegalAction) as err:
        state.apply(action)
    assert str(err.value).startswith(f"illegal action {action!r} for seat 1: {why}")
    assert str(err.value).endswith("; legal: 'play 3c', 'play Qh'")
    assert (state.observation(1), list(state.history), state.legal_actions()) == before


def test_actions_as_a_person_types_them() -> None:
    state = scenario_a()
    play(state, "BID 0", " bid  1 ", "Bid 0", "bid 1")
    state.apply("Play 5H")
    state.apply("play kh")
    state.apply("PLAY 2S")
    state.apply("play AD")
    assert [a for _, a in state.history][-4:] == ["play 5h", "play Kh", "play 2s", "play Ad"]
    assert state.history[:4] == [(0, "bid 0"), (1, "bid 1"), (2, "bid 0"), (3, "bid 1")]


# -- scoring ----------------------------------------------------------------------------------


def test_zero_bid_five_plus_tricks() -> None:
    state = scenario_a(zero_bid="five_plus_tricks")
    play_deal_a1(state)
    assert state.scores == [6, 0, 0, 0]  # a made zero bid in deal 1 (1 card each): 5 + 1
    play(state, "bid 0", "bid 1", "bid 1", "bid 2")
    play(state, "play Qh", "play 7h", "play 2h", "play Ah", "play 4d", "play 3c", "play As", "play Kc")
    assert state.observation(0)["last_deal"]["total"] == [12, 7, 0, 0]  # seat 1: 5 + 2
    assert state.scores == [18, 7, 0, 0] and state.ranking == [1, 2, 3, 3]


def test_one_deal_game() -> None:
    state = new_game("merde", players=3, deals=1).new_state(seed=2)
    obs = state.observation(0)
    assert obs["trump"] is None and obs["turned"] is None  # the first deal is also the last
    play(state, "bid 0", "bid 0", "bid 0")
    state.apply(state.legal_actions()[0])
    state.apply(state.legal_actions()[0])
    state.apply(state.legal_actions()[0])
    assert state.is_terminal
    assert sorted(state.scores) == [0, 10, 10]  # one player took the trick on a zero bid


# -- what players see -------------------------------------------------------------------------


def test_observation_shows_only_the_seats_own_cards() -> None:
    state = scenario_a()
    play_deal_a1(state)
    play(state, "bid 0", "bid 1", "bid 1", "bid 2", "play Qh")
    obs = state.observation(2)
    assert obs == {
        "game": "merde",
        "seat": 2,
        "players": 4,
        "hand": ["7h", "As"],
        "current_player": 2,
        "phase": "play",
        "deal": 2,
        "deals": 2,
        "cards_per_player": 2,
        "dealer": 0,
        "turned": None,
        "trump": None,
        "bids": [2, 0, 1, 1],
        "bids_total_vs_tricks": "over",
        "tricks_won": [0, 0, 0, 0],
        "hand_sizes": [2, 1, 2, 2],
        "trick": [[1, "Qh"]],
        "last_trick": [[0, "5h"], [1, "Kh"], [2, "2s"], [3, "Ad"]],
        "last_trick_winner": 2,
        "scores": [10, 0, 0, 0],
        "last_deal": {"total": [10, 0, 0, 0], "bids": [0, 1, 0, 1], "tricks": [0, 0, 1, 0]},
        "deal_history": [[1, "bid 0"], [2, "bid 1"], [3, "bid 1"], [0, "bid 2"], [1, "play Qh"]],
    }
    text = json.dumps(obs)
    for card in ("Ah", "4d", "3c", "2h", "Kc"):  # other hands stay hidden
        assert card not in text
    assert state.observation(0)["hand"] == ["4d", "Ah"]


def test_first_deal_has_no_last_deal_nor_last_trick() -> None:
    obs = scenario_a().observation(3)
    assert obs["last_deal"] is None and obs["last_trick"] is None and obs["last_trick_winner"] is None
    assert obs["hand"] == ["Ad"] and obs["trick"] == [] and obs["phase"] == "bid"


def test_observation_is_a_copy() -> None:
    state = scenario_a()
    play(state, "bid 0", "bid 1", "bid 0", "bid 1", "play 5h")
    obs = state.observation(1)
    obs["hand"].clear()
    obs["bids"][0] = 9
    obs["trick"][0][1] = "Kd"
    assert state.observation(1)["hand"] == ["Kh"] and state.legal_actions() == ["play Kh"]
    assert state.observation(1)["bids"][0] == 0 and state.observation(1)["trick"] == [[0, "5h"]]


def test_observation_of_a_bad_seat() -> None:
    with pytest.raises(ValueError, match="seat 4"):
        scenario_a().observation(4)


def test_str_shows_the_position() -> None:
    state = scenario_a()
    play(state, "bid 0", "bid 1", "bid 0", "bid 1", "play 5h")
    assert str(state) == "\n".join(
        [
            "Merde, 4 players: deal 1 of 2 (1 card each), dealer seat 3, trump ♠ (turned 9♠)",
            "Seat 0: -                                        bid 0, tricks 0, score 0",
            "Seat 1: K♥                                       bid 1, tricks 0, score 0",
            "Seat 2: 2♠                                       bid 0, tricks 0, score 0",
            "Seat 3: A♦                                       bid 1, tricks 0, score 0",
            "Trick: seat 0 5♥",
            "Seat 1 to play",
        ]
    )


def test_clone_and_seeded_replay() -> None:
    state = new_game("merde", players=5).new_state(seed=42)
    rng = random.Random(0)
    for _ in range(60):
        state.apply(rng.choice(state.legal_actions()))
    copy = state.clone()
    assert str(copy) == str(state) and copy.history == state.history
    copy.apply(copy.legal_actions()[0])
    assert len(copy.history) == len(state.history) + 1
    again = new_game("merde", players=5).new_state(seed=42)
    for _, action in state.history:
        again.apply(action)
    assert [again.observation(s) for s in range(5)] == [state.observation(s) for s in range(5)]


def test_the_legal_actions_filled_in_by_a_move_are_the_rules_ones() -> None:
    # _do fills the legal-actions cache for the next player; it must agree with the rules.
    rng = random.Random(7)
    for players in (3, 4, 7):
        state = new_game("merde", players=players).new_state(seed=players)
        while not state.is_terminal:
            if state._legal is not None:
                assert state._legal == state._legal_actions()
            state.apply(rng.choice(state.legal_actions()))
