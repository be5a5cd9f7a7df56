"""Régicide: hand-worked scenarios for every rule of RULES.md, section "regicide"."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from atout.games import IllegalAction, new_game
from atout.games.regicide import DECK, Regicide, RegicideState, trick_winner

SUIT_OF_SEAT = "cdhs"  # in the "one suit each" deals, seat s holds every card of suit "cdhs"[s]


def build_deck(
    players: int, dealer: int, hands: Mapping[int, Sequence[str]], opener: int, aside: Sequence[str] = ()
) -> list[str]:
    """A deck that gives each seat the cards of ``hands[seat]`` in the order it receives them.

    The first 9 go in the first round of dealing; the opener's 10th card is the turned card;
    the rest come from the stock, clockwise from the dealer's left, skipping full hands. Cards
    named nowhere fill the gaps in deck order; ``aside`` are the cards left over, in order.
    """
    named = [c for h in hands.values() for c in h] + list(aside)
    assert len(named) == len(set(named)), "a card is named twice"
    pool = [c for c in DECK if c not in named]
    queues = {s: list(hands.get(s, ())) for s in range(players)}

    def next_card(seat: int) -> str:
        return queues[seat].pop(0) if queues[seat] else pool.pop(0)

    order = [(dealer + 1 + i) % players for i in range(players)]
    deck = [next_card(s) for _ in range(9) for s in order]
    deck.append(next_card(opener))
    held = {s: 9 + (s == opener) for s in range(players)}
    size = 42 // players
    while any(n < size for n in held.values()):
        for s in order:
            if held[s] < size:
                deck.append(next_card(s))
                held[s] += 1
    deck += list(aside) + pool
    assert sorted(deck) == sorted(DECK) and all(not q for q in queues.values())
    return deck


def suit(s: str) -> list[str]:
    return [r + s for r in "A23456789K"]


def one_suit_each(dealer: int, opener: int) -> list[str]:
    """4 players: seat s holds the whole suit "cdhs"[s], the jokers are set aside; the
    opener's suit is turned, so it is trump."""
    hands = {s: suit(SUIT_OF_SEAT[s]) for s in range(4)}
    return build_deck(4, dealer, hands, opener, aside=["RJ", "BJ"])


def state_of(
    decks: Sequence[Sequence[str]], dealer: int = 0, players: int = 4, **options: Any
) -> RegicideState:
    state = new_game("regicide", players=players, **options).new_state(decks=decks, dealer=dealer)
    assert isinstance(state, RegicideState)
    return state


def open_by(state: RegicideState, seat: int) -> None:
    """Everyone passes until ``seat`` opens."""
    while state.current_player != seat:
        state.apply("pass")
    state.apply("open")


def play_deal(state: RegicideState, opener: int, choose: Callable[[RegicideState], str]) -> None:
    """Play out the current deal: ``opener`` opens, plays are each seat's lowest legal card,
    and ``choose(state)`` makes the choices after tricks."""
    deal = state.deal
    open_by(state, opener)
    while state.deal == deal and not state.is_terminal:
        if state.phase == "choose":
            state.apply(choose(state))
        else:
            state.apply(state.legal_actions()[0])


def alternate_clubs_diamonds(state: RegicideState) -> str:
    """Seat 0 (clubs) and seat 1 (diamonds) hand the trump to each other after every trick."""
    return "trump d" if state.current_player == 0 else "trump c"


def snapshot(state: RegicideState) -> Any:
    return (
        state.current_player,
        list(state.history),
        state.legal_actions(),
        [state.observation(s) for s in range(state.players)],
        {k: sorted(v) for k, v in state._locations().items()},
        state.scores,
    )


def cards_shown(obs: dict[str, Any]) -> set[str]:
    return set(re.findall(r'"([A2-9K][cdhs]|RJ|BJ)"', json.dumps(obs)))


def hands_of(state: RegicideState) -> list[list[str]]:
    return [state.observation(s)["hand"] for s in range(state.players)]


# -- the game and its options -----------------------------------------------------------------


def test_defaults_and_description() -> None:
    game = new_game("regicide")
    assert isinstance(game, Regicide)
    assert game.players == 2  # Decision (ours): the seed says two players is the best game
    assert dict(game.options) == {"players": 2, "teams": False, "tie": "carry"}
    described = Regicide.describe()
    assert described["players"] == [2, 3, 4]
    assert [o["name"] for o in described["options"]] == ["teams", "tie"]
    assert "50" in described["summary"] and "joker" in described["summary"]
    assert len(DECK) == 42 and len(set(DECK)) == 42


@pytest.mark.parametrize("players", [2, 3])
def test_teams_need_four_players(players: int) -> None:
    with pytest.raises(ValueError, match=r"option 'teams'.*4 players"):
        new_game("regicide", players=players, teams=True)
    assert new_game("regicide", players=players, teams=False).options["teams"] is False


def test_teams_alone_means_two_against_two() -> None:
    game = new_game("regicide", teams=True)
    assert game.players == 4 and game.options["teams"] is True
    assert new_game("regicide").players == 2


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"teams": 1}, "teams"),
        ({"teams": "yes"}, "teams"),
        ({"tie": "split"}, "tie"),
        ({"tie": None}, "tie"),
        ({"players": 5}, "players"),
        ({"players": 1}, "players"),
        ({"deals": 3}, "deals"),
    ],
)
def test_bad_options(options: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=repr(name)):
        new_game("regicide", **options)


# -- dealing and opening ----------------------------------------------------------------------


def test_deal_four_players_dealer_opens() -> None:
    state = state_of([list(DECK)], dealer=0)
    # 9 cards each, one at a time from the dealer's left: seat 1 gets deck[0], deck[4], ...
    assert hands_of(state) == [
        ["4c", "8c", "2d", "6d", "Kd", "4h", "8h", "2s", "6s"],
        ["Ac", "5c", "9c", "3d", "7d", "Ah", "5h", "9h", "3s"],
        ["2c", "6c", "Kc", "4d", "8d", "2h", "6h", "Kh", "4s"],
        ["3c", "7c", "Ad", "5d", "9d", "3h", "7h", "As", "5s"],
    ]
    assert state._locations()["hidden:stock"] == ["7s", "8s", "9s", "Ks", "RJ", "BJ"]
    assert state.phase == "open" and state.current_player == 0  # the dealer speaks first
    assert state.legal_actions() == ["open", "pass"]
    state.apply("open")
    # 7s turned: spades are trump and the dealer takes it; then 8s, 9s, Ks to seats 1, 2, 3
    # (the opener already holds 10), and the jokers are set aside.
    assert state.trump == "s" and state.turned == "7s" and state.opener == 0
    assert state._revealed == {"7s"}
    assert hands_of(state) == [
        ["4c", "8c", "2d", "6d", "Kd", "4h", "8h", "2s", "6s", "7s"],
        ["Ac", "5c", "9c", "3d", "7d", "Ah", "5h", "9h", "3s", "8s"],
        ["2c", "6c", "Kc", "4d", "8d", "2h", "6h", "Kh", "4s", "9s"],
        ["3c", "7c", "Ad", "5d", "9d", "3h", "7h", "As", "5s", "Ks"],
    ]
    places = state._locations()
    assert places["hidden:aside"] == ["RJ", "BJ"] and places["hidden:stock"] == []
    # the dealer leads the first trick
    assert state.phase == "play" and state.current_player == 0
    assert len(state.legal_actions()) == 10


def test_deal_three_players_skips_full_hands() -> None:
    state = state_of([list(DECK)], dealer=2, players=3)
    assert state.observation(0)["stock"] == 15
    state.apply("pass")  # dealer 2
    state.apply("pass")  # seat 0
    state.apply("open")  # seat 1 turns 8h
    assert state.trump == "h" and state.opener == 1
    # the rest goes 0, 1, 2, 0, 1, 2, ... from the dealer's left; seat 1 is full (14) after 4
    # rounds, so the last two cards go to seats 0 and 2.
    assert hands_of(state) == [
        ["Ac", "4c", "7c", "Kc", "3d", "6d", "9d", "2h", "5h", "9h", "2s", "5s", "8s", "RJ"],
        ["2c", "5c", "8c", "Ad", "4d", "7d", "Kd", "3h", "6h", "8h", "Kh", "3s", "6s", "9s"],
        ["3c", "6c", "9c", "2d", "5d", "8d", "Ah", "4h", "7h", "As", "4s", "7s", "Ks", "BJ"],
    ]
    assert state._locations()["hidden:aside"] == []
    assert state.current_player == 2  # the dealer leads


def test_deal_two_players() -> None:
    state = state_of([list(DECK)], dealer=1, players=2)
    assert hands_of(state) == [
        ["Ac", "3c", "5c", "7c", "9c", "Ad", "3d", "5d", "7d"],
        ["2c", "4c", "6c", "8c", "Kc", "2d", "4d", "6d", "8d"],
    ]
    state.apply("open")  # the dealer turns 9d
    assert state.trump == "d"
    assert hands_of(state) == [
        ["Ac", "3c", "5c", "7c", "9c", "Ad", "3d", "5d", "7d", "Kd", "2h", "4h", "6h", "8h", "Kh",
         "2s", "4s", "6s", "8s", "Ks", "BJ"],
        ["2c", "4c", "6c", "8c", "Kc", "2d", "4d", "6d", "8d", "9d", "Ah", "3h", "5h", "7h", "9h",
         "As", "3s", "5s", "7s", "9s", "RJ"],
    ]  # fmt: skip


def test_all_pass_then_the_dealer_must_open() -> None:
    state = state_of([list(DECK)], dealer=3)
    for seat in (3, 0, 1, 2):
        assert state.current_player == seat and state.legal_actions() == ["open", "pass"]
        state.apply("pass")
    assert state.current_player == 3 and state.legal_actions() == ["open"]
    assert state.observation(1)["passes"] == 4
    before = snapshot(state)
    with pytest.raises(IllegalAction, match="everyone passed, so the dealer must open"):
        state.apply("pass")
    with pytest.raises(IllegalAction, match="the trump is not opened yet: open the top card"):
        state.apply("play As")
    assert snapshot(state) == before
    state.apply("open")
    assert state.opener == 3 and state.phase == "play" and state.current_player == 3


def test_a_turned_joker_lets_the_opener_name_trump() -> None:
    deck = build_deck(2, 0, {1: [*suit("c")[:9], "RJ"]}, opener=1)
    state = state_of([deck], dealer=0, players=2)
    state.apply("pass")
    state.apply("open")  # seat 1 turns the red joker
    assert state.phase == "name_trump" and state.current_player == 1 and state.trump is None
    assert state.legal_actions() == ["trump c", "trump d", "trump h", "trump s"]
    assert "RJ" in state.observation(1)["hand"] and state._revealed == {"RJ"}
    assert state.observation(0)["turned"] == "RJ"
    with pytest.raises(IllegalAction, match="you turned RJ: name the trump suit"):
        state.apply("play Ac")
    state.apply("trump H")  # a person's spelling is accepted
    assert state.history[-1] == (1, "trump h")
    assert state.trump == "h" and state.phase == "play" and state.current_player == 0
    assert "RJ" in state.observation(1)["hand"] and len(state.observation(1)["hand"]) == 21


# -- playing tricks ---------------------------------------------------------------------------


def test_trick_winner() -> None:
    # the first joker wins, even over the other joker and trumps
    assert trick_winner([(0, "Ks"), (1, "BJ"), (2, "RJ")], "s", False) == 1
    assert trick_winner([(2, "RJ"), (3, "Ks"), (0, "BJ")], "s", True) == 2
    # else the highest trump; a trump beats any card of the suit led
    assert trick_winner([(0, "Kc"), (1, "As"), (2, "2s")], "s", False) == 2
    assert trick_winner([(0, "Kc"), (1, "As"), (2, "2s")], "s", True) == 1
    # else the highest card of the suit led; other suits never win
    assert trick_winner([(1, "9c"), (0, "Kd"), (3, "Kc")], "s", False) == 3
    assert trick_winner([(1, "9c"), (0, "Ad"), (3, "Kc")], "s", True) == 1
    assert trick_winner([(1, "2c"), (0, "Ac"), (3, "Kd")], "h", True) == 0


def test_following_suit_and_jokers() -> None:
    hands = {
        0: ["RJ", "Ad", "2d", "3d", "4d", "5d", "6d", "7d", "8d", "Ks"],  # Ks is turned
        1: ["BJ", "9d", "Ac", "2c", "3c", "4c", "5c", "6c", "7c", "8c"],
        2: suit("h"),
        3: ["Kd", "9c", "Kc", "As", "2s", "3s", "4s", "5s", "6s", "7s"],
    }
    state = state_of([build_deck(4, 0, hands, opener=0, aside=["8s", "9s"])])
    state.apply("open")
    assert state.trump == "s"
    state.apply("play RJ")
    # a joker was led: any card may be played
    assert len(state.legal_actions()) == 10
    state.apply("play 2c")
    state.apply("play 2h")
    state.apply("play Kd")
    # the dealer led the first trick and won it: no choice, it leads the next one at once
    assert state.last_trick_winner == 0 and state.phase == "play" and state.current_player == 0
    state.apply("play Ad")
    # able to follow diamonds, but a joker may always be played
    assert state.legal_actions() == ["play 9d", "play BJ"]
    before = snapshot(state)
    with pytest.raises(
        IllegalAction, match=r"illegal action 'play 3c' for seat 1: must follow diamonds \(you hold 9d\)"
    ):
        state.apply("play 3c")
    with pytest.raises(IllegalAction, match="you do not hold Kh"):
        state.apply("play Kh")
    with pytest.raises(IllegalAction, match="'Th' is not a card of régicide"):
        state.apply("play 10h")
    with pytest.raises(IllegalAction, match="only the winner of a trick who did not lead it may change"):
        state.apply("invert")
    with pytest.raises(IllegalAction, match="the trump is already opened"):
        state.apply("pass")
    assert snapshot(state) == before
    state.apply("play BJ")
    state.apply("play 3h")  # void in diamonds: any card
    assert state.legal_actions() == [
        f"play {c}" for c in ["9c", "Kc", "As", "2s", "3s", "4s", "5s", "6s", "7s"]
    ]
    state.apply("play As")  # a trump, but the joker wins
    assert state.last_trick == [(0, "Ad"), (1, "BJ"), (2, "3h"), (3, "As")]
    assert state.last_trick_winner == 1 and state.tricks_won == [1, 1, 0, 0]
    assert state._locations()["tricks:1"] == ["Ad", "BJ", "3h", "As"]


def test_choices_and_inversion() -> None:
    hands = {
        0: ["5c", "6c", "7c", "8c", "9c", "Ad", "2d", "3d", "4d", "Kh"],  # Kh is turned
        1: ["Ac", "Kc", "5d", "6d", "7d", "8d", "9d", "Kd", "As", "2s"],
        2: ["2c", "3c", "Ah", "2h", "3h", "4h", "5h", "6h", "7h", "8h"],
        3: ["4c", "9h", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "Ks"],
    }
    state = state_of([build_deck(4, 0, hands, opener=0, aside=["RJ", "BJ"])])
    state.apply("open")
    assert state.trump == "h" and not state.inverted
    for action in ("play 9c", "play Kc", "play 2c", "play 4c"):
        state.apply(action)
    # normal ranking: Kc wins; seat 1 did not lead the trick (the dealer did), so it chooses
    assert state.last_trick_winner == 1
    assert state.phase == "choose" and state.current_player == 1
    assert state.legal_actions() == [
        "keep", "trump c", "trump d", "trump s", "invert",
        "trump c invert", "trump d invert", "trump s invert",
    ]  # fmt: skip
    assert state.observation(3)["choice"] is True
    before = snapshot(state)
    with pytest.raises(IllegalAction, match="hearts is already trump"):
        state.apply("trump h")
    with pytest.raises(IllegalAction, match="hearts is already trump"):
        state.apply("trump h invert")
    with pytest.raises(IllegalAction, match="say 'trump S invert'"):
        state.apply("invert trump c")
    with pytest.raises(IllegalAction, match="first choose keep, trump"):
        state.apply("play Ac")
    assert snapshot(state) == before
    state.apply("invert")
    assert state.inverted and state.observation(0)["inverted"] is True
    assert state.phase == "play" and state.current_player == 1  # the chooser leads
    for action in ("play Ac", "play 3c", "play Ks", "play 5c"):
        state.apply(action)
    # inverted: the ace is the highest club (normally 5c would win)
    assert state.last_trick_winner == 1
    # seat 1 led this trick and won it: no choice, it simply leads
    assert state.phase == "play" and state.current_player == 1
    assert state.observation(0)["choice"] is False
    with pytest.raises(IllegalAction, match="you led the last trick and won it"):
        state.apply("trump c")
    for action in ("play 5d", "play Ah", "play 9h", "play 2d"):
        state.apply(action)
    # inverted trumps: Ah beats 9h
    assert state.last_trick_winner == 2 and state.phase == "choose"
    state.apply("invert")  # a second inversion restores the normal order
    assert not state.inverted
    # hearts led: seat 0 must follow with its only heart, Kh, the highest again; seat 0, the
    # dealer, did not lead this trick, so it chooses
    for action in ("play 2h", "play 3s", "play Kh", "play 6d"):
        state.apply(action)
    assert state.last_trick_winner == 0 and state.phase == "choose"
    assert state.tricks_won == [1, 2, 1, 0]
    # the trump and the ranking change at once: spades, inverted
    state.apply("trump s invert")
    assert state.trump == "s" and state.inverted and state.phase == "play"
    obs = state.observation(2)
    assert obs["trump"] == "s" and obs["inverted"] is True and obs["choice"] is False
    assert state.history[-1] == (0, "trump s invert")
    # seat 0 leads 6c; seats 1, 2, 3 are void in clubs. Spades trump, inverted: As (seat 1) beats
    # 9s (seat 3). With "trump s" alone 9s would win; with "invert" alone 3h, the one trump.
    for action in ("play 6c", "play As", "play 3h", "play 9s"):
        state.apply(action)
    assert state.last_trick_winner == 1 and state.phase == "choose"
    assert state.legal_actions() == [
        "keep", "trump c", "trump d", "trump h", "invert",
        "trump c invert", "trump d invert", "trump h invert",
    ]  # fmt: skip
    state.apply("trump D Invert")  # a person's spelling is accepted
    assert state.history[-1] == (1, "trump d invert") and state.trump == "d" and not state.inverted


def test_the_dealer_who_wins_the_first_trick_has_no_choice() -> None:
    # Decision (revised, RULES.md): only a winner who did not lead the trick may change the
    # rules. Dealer 0 opens clubs, leads Ac and wins: it leads again without a choice.
    state = state_of([one_suit_each(0, 0)])
    state.apply("open")
    assert state.trump == "c" and state.current_player == 0
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # Ac, Ad, Ah, As
    assert state.last_trick_winner == 0 and state.phase == "play" and state.current_player == 0
    assert state.observation(1)["choice"] is False
    assert state.legal_actions() == [f"play {r}c" for r in "23456789K"]
    before = snapshot(state)
    for action in ("keep", "invert", "trump d", "trump d invert"):
        with pytest.raises(IllegalAction, match="you led the last trick and won it, so you lead without"):
            state.apply(action)
    assert snapshot(state) == before
    # before the first trick nobody may change the rules either
    state = state_of([one_suit_each(0, 0)])
    state.apply("open")
    with pytest.raises(IllegalAction, match="only the winner of a trick who did not lead it may change"):
        state.apply("keep")


def test_changing_trump_and_no_choice_after_the_last_trick() -> None:
    state = state_of([one_suit_each(3, 0)], dealer=3)
    open_by(state, 0)
    assert state.trump == "c" and state.current_player == 3  # the dealer leads
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # As, Ac, Ad, Ah: clubs are trump
    assert state.last_trick_winner == 0 and state.phase == "choose"
    state.apply("trump d")
    assert state.trump == "d" and state.observation(2)["trump"] == "d"
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # 2c, 2d, 2h, 2s: now diamonds win
    assert state.last_trick_winner == 1 and state.phase == "choose"
    state.apply("keep")
    assert state.trump == "d"
    # seat 1 leads diamonds and wins every trick left, each one it led: no choice
    for i in range(8):
        for _ in range(4):
            assert state.phase == "play"
            state.apply(state.legal_actions()[0])
        # the winner leads; after the last trick, the next dealer (seat 0) opens
        assert state.current_player == (1 if i < 7 else 0)
    assert state.deal == 2 and state.phase == "open" and state.dealer == 0
    # deal 1: seat 1 took 9 tricks and scores 9
    assert state.scores == [0, 9, 0, 0]
    assert state.last_deal == {"total": [0, 9, 0, 0], "tricks": [1, 9, 0, 0], "carried": 0}
    # changes end with the deal
    assert state.trump is None and not state.inverted and state.turned is None


def test_teams_choice_is_by_seat() -> None:
    # Dealer 3, seat 0 opens clubs. Seat 0 wins the dealer's trick and makes hearts trump; then
    # seat 0 leads and its partner seat 2 wins: seat 2 did not lead the trick, so it chooses
    # (the same team, not the same seat). Seat 2 then wins the trick it led: no choice.
    state = state_of([one_suit_each(3, 0)], dealer=3, teams=True)
    open_by(state, 0)
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # As, Ac, Ad, Ah
    assert state.phase == "choose" and state.current_player == 0
    state.apply("trump h")
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # 2c, 2d, 2h, 2s: seat 2 trumps its partner's lead
    assert state.last_trick == [(0, "2c"), (1, "2d"), (2, "2h"), (3, "2s")]
    assert state.last_trick_winner == 2
    assert state.phase == "choose" and state.current_player == 2
    obs = state.observation(1)
    assert obs["teams"] == [[0, 2], [1, 3]]
    assert obs["tricks_won"] == [1, 0, 1, 0] and obs["team_tricks_won"] == [2, 0]
    state.apply("keep")
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # 3h, 3s, 3c, 3d
    assert state.last_trick_winner == 2 and state.phase == "play" and state.current_player == 2
    assert state.observation(0)["team_tricks_won"] == [3, 0]


# -- scoring and the end of the game ----------------------------------------------------------


def test_most_tricks_scores_the_tricks() -> None:
    state = state_of([one_suit_each(0, 0)])
    play_deal(state, 0, lambda s: "keep")
    # seat 0 holds every trump and wins all 10 tricks
    assert state.scores == [10, 0, 0, 0]
    assert state.last_deal == {"total": [10, 0, 0, 0], "tricks": [10, 0, 0, 0], "carried": 0}
    assert state.deal == 2 and state.dealer == 1 and state.current_player == 1


def test_tie_goes_to_the_higher_total() -> None:
    state = state_of([one_suit_each(0, 0), one_suit_each(1, 0)])
    play_deal(state, 0, lambda s: "keep")
    assert state.scores == [10, 0, 0, 0]
    # deal 2: seats 0 and 1 hand the trump to each other and take 5 tricks each
    play_deal(state, 0, alternate_clubs_diamonds)
    assert state.last_deal == {"total": [5, 0, 0, 0], "tricks": [5, 5, 0, 0], "carried": 0}
    assert state.scores == [15, 0, 0, 0]


def test_tie_on_totals_carries_the_points() -> None:
    # Dealers 1, 2, 3 (never seat 0, who would win its own first lead with no choice): the
    # dealer leads, seat 0 trumps and hands the trump to seat 1, and so on.
    decks = [one_suit_each(1, 0), one_suit_each(2, 0), one_suit_each(3, 0)]
    state = state_of(decks, dealer=1)
    play_deal(state, 0, alternate_clubs_diamonds)
    # 5 tricks each for seats 0 and 1, both on 0 points: the 5 points are carried
    assert state.scores == [0, 0, 0, 0] and state.carry == 5
    assert state.last_deal == {"total": [0, 0, 0, 0], "tricks": [5, 5, 0, 0], "carried": 5}
    assert state.observation(3)["carry"] == 5
    play_deal(state, 0, alternate_clubs_diamonds)
    # the same again: carried points pile up
    assert state.scores == [0, 0, 0, 0] and state.carry == 10
    play_deal(state, 0, lambda s: "keep")
    # seat 0 takes all 10 tricks: 10 + 10 carried
    assert state.scores == [20, 0, 0, 0] and state.carry == 0
    assert state.last_deal == {"total": [20, 0, 0, 0], "tricks": [10, 0, 0, 0], "carried": 0}


def test_tie_share_gives_each_the_points() -> None:
    state = state_of([one_suit_each(1, 0)], dealer=1, tie="share")
    play_deal(state, 0, alternate_clubs_diamonds)
    assert state.scores == [5, 5, 0, 0] and state.carry == 0
    assert state.last_deal == {"total": [5, 5, 0, 0], "tricks": [5, 5, 0, 0], "carried": 0}


def test_teams_count_together() -> None:
    # one team per partnership: seats 0 and 1 alternate, so each team takes 5 tricks
    state = state_of([one_suit_each(1, 0), one_suit_each(2, 0)], dealer=1, teams=True)
    play_deal(state, 0, alternate_clubs_diamonds)
    assert state.scores == [0, 0, 0, 0] and state.carry == 5
    play_deal(state, 0, lambda s: "keep")
    assert state.scores == [15, 0, 15, 0]
    assert state.last_deal == {"total": [15, 0, 15, 0], "tricks": [10, 0, 0, 0], "carried": 0}
    state_share = state_of([one_suit_each(1, 0)], dealer=1, teams=True, tie="share")
    play_deal(state_share, 0, alternate_clubs_diamonds)
    assert state_share.scores == [5, 5, 5, 5]


def test_ties_by_hand_three_players() -> None:
    state = state_of([list(DECK)], dealer=0, players=3)
    # a deal's end set up by hand: 5, 5 and 4 tricks
    state.totals = [12, 12, 20]
    state.tricks_won = [5, 5, 4]
    state._end_deal()
    assert state.scores == [12, 12, 20] and state.carry == 5  # 12 = 12: carried
    state.tricks_won = [6, 6, 2]
    state._end_deal()
    assert state.scores == [12, 12, 20] and state.carry == 11  # 5 + 6 piles up
    state.tricks_won = [4, 5, 5]
    state._end_deal()
    assert state.scores == [12, 12, 36] and state.carry == 0  # seat 2 has the higher total: 5 + 11
    assert state.last_deal == {"total": [0, 0, 16], "tricks": [4, 5, 5], "carried": 0}
    state.tricks_won = [14, 0, 0]
    state._end_deal()
    assert state.scores == [26, 12, 36] and not state.is_terminal
    state.tricks_won = [7, 7, 0]
    state._end_deal()
    assert state.scores == [33, 12, 36]
    # share: tied players with equal totals each score
    shared = state_of([list(DECK)], dealer=0, players=3, tie="share")
    shared.totals = [7, 7, 3]
    shared.tricks_won = [5, 5, 4]
    shared._end_deal()
    assert shared.scores == [12, 12, 3]
    shared.totals = [7, 7, 9]
    shared.tricks_won = [5, 5, 4]  # 7 < 9, but seat 2 is not tied for most tricks
    shared._end_deal()
    assert shared.scores == [12, 12, 9]


def test_game_ends_at_fifty() -> None:
    decks = [one_suit_each(d % 4, 0) for d in range(5)]
    state = state_of(decks)
    for deal in range(1, 5):
        play_deal(state, 0, lambda s: "keep")
        assert state.scores == [10 * deal, 0, 0, 0] and not state.is_terminal
    assert state.dealer == 0  # 0, 1, 2, 3, 0
    play_deal(state, 0, lambda s: "keep")
    assert state.is_terminal and state.current_player is None and state.phase == "over"
    assert state.scores == [50, 0, 0, 0]
    assert state.ranking == [1, 2, 2, 2]
    assert state.legal_actions() == []
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply("play Ac")
    obs = state.observation(1)
    assert obs["last_deal"] == {"total": [10, 0, 0, 0], "tricks": [10, 0, 0, 0], "carried": 0}
    assert obs["current_player"] is None and obs["phase"] == "over"
    assert "Game over" in str(state)


def test_teams_game_end_ranks_partners_together() -> None:
    decks = [one_suit_each(d % 4, 0) for d in range(5)]
    state = state_of(decks, teams=True)
    for _ in range(5):
        play_deal(state, 0, lambda s: "keep")
    assert state.is_terminal
    assert state.scores == [50, 0, 50, 0]
    assert state.ranking == [1, 3, 1, 3]


# -- what each seat sees ----------------------------------------------------------------------


def test_observation_hides_what_a_seat_may_not_see() -> None:
    state = state_of([list(DECK)], dealer=0)
    obs = state.observation(1)
    assert obs["hand"] == ["Ac", "5c", "9c", "3d", "7d", "Ah", "5h", "9h", "3s"]
    assert cards_shown(obs) == set(obs["hand"])  # no stock card, no other hand
    assert obs["stock"] == 6 and obs["turned"] is None and obs["trump"] is None
    assert obs["phase"] == "open" and obs["last_deal"] is None and obs["teams"] is None
    state.apply("open")
    obs = state.observation(1)
    assert obs["turned"] == "7s" and obs["opener"] == 0 and obs["trump"] == "s"
    assert cards_shown(obs) == set(obs["hand"]) | {"7s"}  # the turned card was shown to all
    assert "RJ" not in cards_shown(obs) and obs["aside"] == 2 and obs["stock"] == 0
    assert obs["hand_sizes"] == [10, 10, 10, 10] and obs["hand_size"] == 10
    state.apply("play 4c")
    state.apply("play Ac")
    obs = state.observation(3)
    assert obs["trick"] == [[0, "4c"], [1, "Ac"]]
    assert obs["hand_sizes"] == [9, 9, 10, 10]
    assert obs["current_player"] == 2 and obs["dealer"] == 0 and obs["inverted"] is False
    assert obs["scores"] == [0, 0, 0, 0] and obs["carry"] == 0
    assert obs["tricks_won"] == [0, 0, 0, 0] and obs["team_tricks_won"] is None
    json.dumps(obs)
    with pytest.raises(ValueError, match="seat 4"):
        state.observation(4)


def test_observation_after_a_trick_and_a_deal() -> None:
    state = state_of([one_suit_each(3, 0)], dealer=3)
    open_by(state, 0)
    for _ in range(4):
        state.apply(state.legal_actions()[0])
    obs = state.observation(2)
    assert obs["trick"] == [] and obs["last_trick"] == [[3, "As"], [0, "Ac"], [1, "Ad"], [2, "Ah"]]
    assert obs["last_trick_winner"] == 0 and obs["choice"] is True
    assert obs["deal_history"] == [[3, "pass"], [0, "open"], [3, "play As"], [0, "play Ac"],
                                   [1, "play Ad"], [2, "play Ah"]]
    state.apply("keep")
    while state.deal == 1:
        state.apply(state.legal_actions()[0])
    obs = state.observation(2)
    assert obs["deal"] == 2 and obs["last_deal"]["total"] == [10, 0, 0, 0]
    assert obs["last_trick"] == [] and obs["tricks_won"] == [0, 0, 0, 0]
    assert obs["deal_history"] == []  # the new deal's actions only
    state.apply("pass")
    assert state.observation(2)["deal_history"] == [[0, "pass"]]
    assert cards_shown(obs) == set(obs["hand"])


def test_str_shows_the_position() -> None:
    state = state_of([one_suit_each(0, 0)])
    state.apply("open")
    state.apply("play Ac")
    text = str(state)
    assert text.splitlines()[:3] == [
        "Régicide (regicide), 4 players: deal 1, dealer seat 0, phase play",
        "Trump: ♣ clubs; ranking normal (A low, K high)",
        "Opened by seat 0, who turned K♣",
    ]
    assert "Seat 0: 2♣ 3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 9♣ K♣  (0 tricks)" in text
    assert "Seat 1: A♦ 2♦ 3♦ 4♦ 5♦ 6♦ 7♦ 8♦ 9♦ K♦  (0 tricks)  <- to act" in text
    assert "Trick: seat 0 A♣" in text
    assert text.endswith("Scores: 0 0 0 0")
