"""Tierçon: hand-worked scenarios for every rule of RULES.md's tiercon section."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from atout.games import GAMES, IllegalAction, new_game
from atout.games.tiercon import (
    DECK,
    TierconState,
    beats,
    card_points,
    combination_points,
    count_cards,
    round_count,
)


def deal(
    hands: Mapping[int, Sequence[str]], turned: str, stock: Sequence[str] = (), dealer: int = 1
) -> list[str]:
    """A deck (top first) that gives each seat the cards named for it, turns ``turned`` and puts
    ``stock`` on top of the face-down stock. Cards not named fill the hands, then the stock, in
    deck order (7c 8c ... Ac 7d ...)."""
    named = [*hands.get(0, ()), *hands.get(1, ()), turned, *stock]
    assert len(set(named)) == len(named)
    rest = [c for c in DECK if c not in named]
    full = {}
    for seat in (0, 1):
        full[seat] = list(hands.get(seat, ()))
        while len(full[seat]) < 9:
            full[seat].append(rest.pop(0))
    opponent = 1 - dealer
    deck: list[str] = []
    for i in range(9):  # one card at a time, the dealer's opponent first
        deck += [full[opponent][i], full[dealer][i]]
    return [*deck, turned, *stock, *rest]


def start(deck: list[str], dealer: int = 1) -> TierconState:
    state = new_game("tiercon").new_state(decks=[deck], dealer=dealer)
    assert isinstance(state, TierconState)
    return state


def run(state: TierconState, actions: Sequence[str]) -> None:
    for action in actions:
        state.apply(action)


def plays(state: TierconState) -> list[str]:
    return [a for a in state.legal_actions() if a.startswith("play ")]


def illegal(state: TierconState, action: str) -> str:
    """The reason given for an illegal action; the state must be unchanged."""
    before = (state.history[:], state.legal_actions(), state.observation(0), state.observation(1))
    with pytest.raises(IllegalAction) as info:
        state.apply(action)
    assert (state.history, state.legal_actions(), state.observation(0), state.observation(1)) == before
    return str(info.value)


# -- The scripted deal ----------------------------------------------------------------------------
# Dealer seat 1; seat 0 leads. Trump spades (8s turned). Seat 0 holds all the clubs and Ad, seat 1
# hearts and diamonds. Before the cut the stock is Kh 7s Ah 9s Td Ts Jd Js Qd Qs Kd Ks As; seat 1
# cuts 1 (Kh goes beneath), so seat 0, who wins the first seven tricks, draws 7s 9s Ts Js Qs Ks Kh
# and seat 1 draws Ah Td Jd Qd Kd As and finally the face-up 8s.

SEAT0 = ["Ac", "Tc", "Kc", "Qc", "Jc", "9c", "8c", "7c", "Ad"]
SEAT1 = ["7h", "8h", "9h", "Th", "Jh", "Qh", "7d", "8d", "9d"]
STOCK = ["Kh", "7s", "Ah", "9s", "Td", "Ts", "Jd", "Js", "Qd", "Qs", "Kd", "Ks", "As"]
SCRIPTED_DECK = deal({0: SEAT0, 1: SEAT1}, "8s", STOCK, dealer=1)

SCRIPT = [
    # trick 1: both announce on their first turn; seat 0's eight clubs beat seat 1's six hearts
    "declare 7c 8c 9c Tc Jc Qc Kc Ac", "play Ac",
    "declare 7d 8d 9d", "declare 7h 8h 9h Th Jh Qh", "play 7h",
    "cut 1",
    "play Tc", "play 8h",  # trick 2 (seat 1 void in clubs, no trump: any card)
    "play Kc", "play 9h",  # trick 3
    "play Qc", "play 7d",  # trick 4
    "play Jc", "play 8d",  # trick 5: stock 4 after the draw
    "play 9c", "play 9d",  # trick 6: stock 2 after the draw; seat 0 now holds Qs Ks
    "marriage", "play Ad", "play Td",  # trick 7: seat 1 must follow diamonds; last draw
    "play Qs", "play As",  # trick 8: stock empty, seat 1 must overtrump -> seat 1 (Qs 2 + As 11)
    "play Ah", "play Kh",  # trick 9: seat 0 must follow hearts, cannot beat -> seat 1 (11 + 3)
    "play Kd", "play 7s",  # trick 10: seat 0 void in diamonds, any trump -> seat 0
    "play 7c", "play 8s",  # trick 11: seat 1 void in clubs must trump -> seat 1 (0)
    "play Qd", "play Ks",  # trick 12 -> seat 0
    "play 8c", "play Jd",  # trick 13 -> seat 0
    "play 9s", "play Th",  # trick 14 -> seat 0
    "play Ts", "play Jh",  # trick 15 -> seat 0
    "play Js", "play Qh",  # trick 16, the last -> seat 0
]  # fmt: skip

# Seat 1 took 3 tricks (8, 9, 11): 13 + 14 + 0 = 27 card points, no last trick: rounds up to 30.
# Seat 0 scores 150 - 30 = 120, plus 100 (eight clubs, the best combination) and 20 (marriage).
SCRIPTED_RESULT = {"total": [240, 30], "cards": [120, 30], "combinations": [100, 0], "marriage": [20, 0]}


def at(n: int) -> TierconState:
    """The scripted deal after its first ``n`` actions."""
    state = start(SCRIPTED_DECK)
    run(state, SCRIPT[:n])
    return state


def index_after(*actions: str) -> int:
    """How many script actions lead up to and include ``actions`` (a run of the script)."""
    for i in range(len(SCRIPT)):
        if SCRIPT[i : i + len(actions)] == list(actions):
            return i + len(actions)
    raise AssertionError(actions)


# -- the game and its options ----------------------------------------------------------------------


def test_game_description_and_options() -> None:
    game = new_game("tiercon")
    assert game.players == 2 and dict(game.options) == {"players": 2}
    described = GAMES["tiercon"].describe()
    assert described["players"] == [2] and described["options"] == []
    assert "501" in described["summary"]
    for players in (1, 3, 4):
        with pytest.raises(ValueError, match="option 'players'"):
            new_game("tiercon", players=players)
    with pytest.raises(ValueError, match="unknown option 'deals'"):
        new_game("tiercon", deals=3)
    with pytest.raises(ValueError, match="previous_fool"):
        game.new_state(seed=1, previous_fool=0)


# -- card order and points -------------------------------------------------------------------------


def test_plain_order_and_trump_order() -> None:
    # plain: 7 8 9 J Q K T A
    assert beats("Tc", "Kc", "h") and beats("Ac", "Tc", "h") and beats("Jc", "9c", "h")
    assert not beats("Tc", "Ac", "h") and not beats("9c", "Jc", "h")
    # trump: 7 8 Q K T A 9 J -- the ace ranks above the ten, as in plain suits (Decision
    # (revised) of RULES.md)
    assert beats("Ah", "Th", "h") and beats("9h", "Ah", "h") and beats("Jh", "9h", "h")
    assert beats("Th", "Kh", "h") and beats("Kh", "Qh", "h") and beats("Qh", "8h", "h")
    assert not beats("Th", "Ah", "h") and not beats("Ah", "9h", "h") and not beats("9h", "Jh", "h")
    assert not beats("Th", "9h", "h") and not beats("Qh", "Kh", "h")
    # any trump beats a plain lead; another plain suit never does
    assert beats("7h", "Ac", "h") and not beats("As", "7c", "h")


def test_card_points_total_140() -> None:
    assert [card_points(c, "s") for c in ("As", "Ts", "Ks", "Qs", "Js", "9s", "8s", "7s")] == [
        11, 10, 3, 2, 20, 13, 0, 0,
    ]  # fmt: skip
    assert [card_points(c, "s") for c in ("Ac", "Tc", "Kc", "Qc", "Jc", "9c", "8c", "7c")] == [
        11, 10, 3, 2, 1, 0, 0, 0,
    ]  # fmt: skip
    for trump in "cdhs":
        assert sum(card_points(c, trump) for c in DECK) == 140


def test_combination_points() -> None:
    assert combination_points(["7h", "8h", "9h"]) == 20
    assert combination_points(["7h", "8h", "9h", "Th"]) == 50
    assert combination_points(["7h", "8h", "9h", "Th", "Jh"]) == 100
    assert combination_points(list(DECK[:8])) == 100  # all eight clubs
    assert combination_points(["Jc", "Jd", "Jh", "Js"]) == 200
    for rank in "QKA":
        assert combination_points([rank + s for s in "cdhs"]) == 100


# -- dealing ---------------------------------------------------------------------------------------


def test_deal_one_at_a_time_opponent_first_then_turn_up() -> None:
    state = start(list(DECK), dealer=1)
    # seat 0, the dealer's opponent, gets deck[0], deck[2], ...; the dealer gets the last card
    assert state.observation(0)["hand"] == ["7c", "9c", "Jc", "Kc", "7d", "9d", "Jd", "Kd", "7h"]
    assert state.observation(1)["hand"] == ["8c", "Tc", "Qc", "Ac", "8d", "Td", "Qd", "Ad", "8h"]
    obs = state.observation(0)
    assert obs["turned"] == "9h" and obs["trump"] == "h" and obs["stock"] == 14
    assert obs["dealer"] == 1 and obs["deal"] == 1 and obs["phase"] == "play"
    assert state.current_player == 0  # the dealer's opponent leads
    assert state._locations()["hidden:stock"] == list(DECK[19:])
    state = start(list(DECK), dealer=0)
    assert state.current_player == 1
    assert state.observation(1)["hand"] == ["7c", "9c", "Jc", "Kc", "7d", "9d", "Jd", "Kd", "7h"]


def test_first_dealer_by_lot_is_seeded() -> None:
    game = new_game("tiercon")
    dealers = {game.new_state(seed=s).dealer for s in range(20)}
    assert dealers == {0, 1}
    assert game.new_state(seed=5).dealer == game.new_state(seed=5).dealer


# -- the scripted deal, step by step --------------------------------------------------------------


def test_scripted_deal_result_and_next_dealer() -> None:
    state = at(len(SCRIPT))
    obs = state.observation(0)
    assert obs["last_deal"] == SCRIPTED_RESULT
    assert state.scores == [240, 30] and obs["scores"] == [240, 30]
    # Decision (RULES.md): the taker of the last trick (seat 0) deals the next deal
    assert obs["deal"] == 2 and obs["dealer"] == 0 and state.current_player == 1
    assert obs["tricks_won"] == [0, 0] and obs["declared"] == [] and obs["marriage"] == []
    assert obs["stock"] == 14 and len(obs["hand"]) == 9 and not state.is_terminal


def test_announcements_on_first_turn_and_comparison() -> None:
    state = at(0)
    assert state.legal_actions()[0] == "declare 7c 8c 9c Tc Jc Qc Kc Ac"
    assert len(state.legal_actions()) == 10  # the announcement, then nine cards to play
    run(state, SCRIPT[:2])
    # the dealer's first turn: both its runs are offered, diamonds before hearts
    assert state.legal_actions()[:2] == ["declare 7d 8d 9d", "declare 7h 8h 9h Th Jh Qh"]
    obs = state.observation(1)
    assert obs["declared"] == [[0, "declare 7c 8c 9c Tc Jc Qc Kc Ac", 100]]
    assert obs["combination_winner"] is None  # compared only once both have played
    run(state, SCRIPT[2:4])
    assert state.legal_actions()[0] == "play 7d"  # announced: no longer offered
    assert illegal(state, "declare 7h 8h 9h Th Jh Qh") == (
        "illegal action 'declare 7h 8h 9h Th Jh Qh' for seat 1: you already announced 7h 8h 9h Th Jh"
        " Qh; legal: 'play 7d', 'play 8d', 'play 9d', 'play 7h', 'play 8h', 'play 9h', 'play Th',"
        " 'play Jh', 'play Qh'"
    )
    state.apply("play 7h")
    obs = state.observation(0)
    # both 100, but eight cards beat six: seat 0 scores its combination, seat 1 none of its own
    assert obs["combination_winner"] == 0 and obs["combination_points"] == [100, 0]
    assert [d[0] for d in obs["declared"]] == [0, 1, 1]
    assert obs["declared"][2] == [1, "declare 7h 8h 9h Th Jh Qh", 100]


def test_no_announcement_after_the_first_card() -> None:
    state = at(index_after("cut 1"))
    assert not any(a.startswith("declare") for a in state.legal_actions())
    reason = illegal(state, "declare 7c 8c 9c")
    assert reason.startswith(
        "illegal action 'declare 7c 8c 9c' for seat 0: combinations are announced only on your "
        "first turn of the deal, before playing a card; legal: 'exchange', 'play 7c', 'play 8c',"
    )


def test_cut_by_the_loser_of_the_first_trick() -> None:
    state = at(index_after("play 7h"))
    obs = state.observation(1)
    assert obs["phase"] == "cut" and state.current_player == 1  # seat 1 lost trick 1
    assert state.legal_actions() == [f"cut {k}" for k in range(1, 13)]  # 13 face down
    assert (
        obs["stock"] == 14
        and obs["tricks_won"] == [1, 0]
        and obs["hand"] == ["7d", "8d", "9d", "8h", "9h", "Th", "Jh", "Qh"]
    )
    assert "the stock has 13 face down" in illegal(state, "cut 13")
    assert "cut between 1 and 12" in illegal(state, "cut 0")
    assert "the loser of the first trick must cut the stock first" in illegal(state, "play 8h")
    state.apply("cut 1")
    # then the winner draws first (7s, the card that was second from the top), the loser next
    assert state.observation(0)["hand"] == ["7c", "8c", "9c", "Tc", "Jc", "Qc", "Kc", "Ad", "7s"]
    assert state.observation(1)["hand"] == ["7d", "8d", "9d", "8h", "9h", "Th", "Jh", "Qh", "Ah"]
    obs = state.observation(1)
    assert obs["cut"] == 1 and obs["stock"] == 12 and obs["phase"] == "play"
    assert state.current_player == 0  # the winner leads
    assert "only by the loser of the first trick" in illegal(state, "cut 3")


def test_a_later_trick_has_no_cut() -> None:
    state = at(index_after("play Tc", "play 8h"))
    assert state.current_player == 0 and state.observation(0)["phase"] == "play"
    assert state.observation(0)["stock"] == 10


def test_any_card_when_void_and_without_trump() -> None:
    state = at(index_after("play Ac"))
    assert plays(state) == [f"play {c}" for c in ["7d", "8d", "9d", "7h", "8h", "9h", "Th", "Jh", "Qh"]]


def test_tricks_visible_while_stock_holds_four() -> None:
    state = at(index_after("play Jc", "play 8d"))  # five tricks, stock 14 - 10 = 4
    obs = state.observation(1)
    assert obs["stock"] == 4 and len(obs["tricks"]) == 5
    assert obs["tricks"][0] == {"cards": [[0, "Ac"], [1, "7h"]], "winner": 0}
    state = at(index_after("play 9c", "play 9d"))  # six tricks, stock 2: only the last shown
    obs = state.observation(1)
    assert obs["stock"] == 2 and obs["tricks"] == [{"cards": [[0, "9c"], [1, "9d"]], "winner": 0}]
    assert obs["turned"] == "8s" and obs["tricks_won"] == [6, 0]


def test_marriage_and_exchange_at_the_last_turn_with_stock() -> None:
    state = at(index_after("play 9c", "play 9d"))
    # seat 0 drew Qs then Ks: the marriage is offered; the seven of trumps may still be
    # exchanged, the stock holding 2 cards
    assert state.legal_actions() == [
        "marriage", "exchange",
        "play 7c", "play 8c", "play Ad", "play 7s", "play 9s", "play Ts", "play Js", "play Qs", "play Ks",
    ]  # fmt: skip
    clone = state.clone()
    clone.apply("exchange")
    assert "8s" in clone.observation(0)["hand"] and "7s" not in clone.observation(0)["hand"]
    assert clone.observation(1)["turned"] == "7s" and clone.observation(1)["exchange_done"]
    assert "8s" in clone._revealed
    state.apply("marriage")
    assert state.observation(1)["marriage"] == [0]
    assert {"Ks", "Qs"} <= state._revealed
    assert "marriage" not in state.legal_actions() and "exchange" in state.legal_actions()
    assert "already announced this deal" in illegal(state, "marriage")
    state.apply("play Ad")


def test_follow_suit_while_stock_lasts() -> None:
    state = at(index_after("marriage", "play Ad"))
    assert plays(state) == ["play Td", "play Jd", "play Qd", "play Kd"]  # any diamond, no need to beat
    reason = illegal(state, "play As")
    assert reason.startswith(
        "illegal action 'play As' for seat 1: must follow diamonds (you hold Td, Jd, Qd, Kd); legal: "
    )
    assert "you do not hold 9s" in illegal(state, "play 9s")
    assert "like 'play Th'" in illegal(state, "play Xy")
    state.apply("play Td")
    # the loser draws the face-up card last
    obs = state.observation(1)
    assert obs["stock"] == 0 and obs["turned"] is None and "8s" in obs["hand"]
    assert "8s" in state._revealed
    assert state.observation(0)["hand"] == ["7c", "8c", "Kh", "7s", "9s", "Ts", "Js", "Qs", "Ks"]


def test_no_exchange_once_the_stock_is_empty() -> None:
    state = at(index_after("play Ad", "play Td"))
    assert "exchange" not in state.legal_actions()
    assert "the stock must hold at least 2 cards to exchange (it holds 0)" in illegal(state, "exchange")


def test_stock_empty_must_overtrump_a_trump_lead() -> None:
    state = at(index_after("play Ad", "play Td", "play Qs"))
    assert plays(state) == ["play As"]  # As beats Qs; 8s does not
    reason = illegal(state, "play 8s")
    assert reason == (
        "illegal action 'play 8s' for seat 1: the stock is empty: must follow spades and beat Qs "
        "(you hold As); legal: 'play As'"
    )


def test_stock_empty_follow_without_beating_when_unable() -> None:
    state = at(index_after("play Qs", "play As", "play Ah"))
    assert plays(state) == ["play Kh"]  # holds hearts, cannot beat the ace
    assert "must follow hearts (you hold Kh)" in illegal(state, "play 7s")


def test_stock_empty_void_must_trump_any_trump() -> None:
    state = at(index_after("play Ah", "play Kh", "play Kd"))
    # no overtrump obligation on a plain lead: every trump is allowed
    assert plays(state) == ["play 7s", "play 9s", "play Ts", "play Js", "play Ks"]
    assert "void in diamonds, must play a trump (you hold 7s, 9s, Ts, Js, Ks)" in illegal(state, "play 7c")
    state = at(index_after("play Kd", "play 7s", "play 7c"))
    assert plays(state) == ["play 8s"]


def test_stock_empty_void_without_trump_any_card() -> None:
    state = at(index_after("play Ks", "play 8c"))
    assert plays(state) == ["play Jd", "play Th", "play Jh", "play Qh"]


def test_stock_empty_trump_ace_beats_the_ten_and_the_jack_need_not_overtrump() -> None:
    # After trick 7 (stock empty) seat 0 holds 7c 8c Kh 7s 9s Ts Js Qs Ks and seat 1 Th Jh Qh
    # Ah Jd Qd Kd As 8s. Seat 0 leads 7c: seat 1, void in clubs, must trump (8s or As); it
    # trumps with 8s and leads As.
    state = at(index_after("play Ad", "play Td"))
    run(state, ["play 7c"])
    assert plays(state) == ["play 8s", "play As"]
    run(state, ["play 8s", "play As"])
    # Seat 0 must beat the trump ace: in trumps 7 8 Q K T A 9 J only the nine and the jack are
    # above it (the ten is below it now). Without the jack the obligation is "beat with 9s";
    # the jack is allowed too, since the ordinary obligation (beat) allows it.
    assert plays(state) == ["play 9s", "play Js"]
    assert "the stock is empty: must follow spades and beat As (you hold 9s, Js)" in illegal(state, "play Ts")


# -- the trump jack is never forced -----------------------------------------------------------------
# Decision (revised, RULES.md): the obligations are judged as if the trump jack were not in the
# hand; the jack itself may be played wherever the ordinary obligations allow it.

# Trump spades (7s turned, so nobody may exchange). Seat 0 leads; seat 1 holds the trump jack as
# its only trump, the hearts and three diamonds.
JACK_ALONE_0 = ["Qs", "Ac", "7c", "8c", "9c", "7d", "8d", "9d", "Td"]
JACK_ALONE_1 = ["Js", "7h", "8h", "9h", "Th", "Ah", "Jd", "Qd", "Kd"]


def test_jack_alone_need_not_answer_a_trump_lead_while_the_stock_lasts() -> None:
    state = start(deal({0: JACK_ALONE_0, 1: JACK_ALONE_1}, "7s"))
    state.apply("play Qs")
    # the ordinary obligation (follow trumps) is judged without the jack: seat 1 holds no other
    # trump, so any card; the jack is allowed as well
    assert plays(state) == [f"play {c}" for c in ["Jd", "Qd", "Kd", "7h", "8h", "9h", "Th", "Ah", "Js"]]
    state.apply("play 7h")  # Qs keeps the trick
    assert state.observation(0)["tricks_won"] == [1, 0]


def test_jack_alone_need_not_trump_a_plain_lead() -> None:
    state = start(deal({0: JACK_ALONE_0, 1: JACK_ALONE_1}, "7s"))
    state.apply("play Ac")  # seat 1 is void in clubs; its only trump is the jack: any card
    assert len(plays(state)) == 9 and "play Js" in plays(state)


def test_jack_is_not_allowed_when_following_a_plain_suit() -> None:
    state = start(deal({0: JACK_ALONE_0, 1: JACK_ALONE_1}, "7s"))
    state.apply("play 7d")  # seat 1 holds diamonds: it must follow, and the jack is no diamond
    assert plays(state) == ["play Jd", "play Qd", "play Kd"]
    assert "must follow diamonds (you hold Jd, Qd, Kd)" in illegal(state, "play Js")


def test_jack_with_other_trumps_a_trump_is_still_due() -> None:
    hand1 = ["Js", "8s", "8h", "9h", "Th", "Ah", "Jd", "Qd", "Kd"]
    state = start(deal({0: JACK_ALONE_0, 1: hand1}, "7s"))
    state.apply("play Ac")  # void in clubs, and 8s is a trump without the jack: a trump
    assert plays(state) == ["play 8s", "play Js"]
    assert "void in clubs, must play a trump (you hold 8s, Js)" in illegal(state, "play 8h")
    state = start(deal({0: JACK_ALONE_0, 1: hand1}, "7s"))
    state.apply("play Qs")  # a trump lead while the stock lasts: any trump
    assert plays(state) == ["play 8s", "play Js"]


# The deal J, worked by hand. Dealer seat 1, seat 0 leads, trump hearts (Qh turned). Seat 0 wins
# the seven tricks of the stock phase, every one by leading a plain card (or Kh) that seat 1
# follows lower: Kc/8c Qc/9c Jc/7c Td/9d Qd/Jd Ts/Js Kh/8h. Seat 1 cuts 1 (Kd goes beneath), so
# seat 0 draws 9h Th Ah Ac Tc Ad Kd and seat 1 draws Jh 7h 7d 8d 9s Qs and the face-up Qh.
# With the stock empty seat 0 holds Tc Ac Kd Ad 9h Th Ah Ks As; seat 1 7d 8d 7h Jh Qh 7s 8s 9s Qs.
J_SEAT0 = ["Kc", "Qc", "Jc", "Td", "Qd", "Ts", "Kh", "As", "Ks"]
J_SEAT1 = ["8c", "9c", "7c", "9d", "Jd", "Js", "8h", "7s", "8s"]
J_STOCK = ["Kd", "9h", "Jh", "Th", "7h", "Ah", "7d", "Ac", "8d", "Tc", "9s", "Ad", "Qs"]
J_DECK = deal({0: J_SEAT0, 1: J_SEAT1}, "Qh", J_STOCK)
J_STOCK_PHASE = [
    "play Kc", "play 8c", "cut 1",
    "play Qc", "play 9c", "play Jc", "play 7c", "play Td", "play 9d", "play Qd", "play Jd",
    "play Ts", "play Js",
]  # fmt: skip


def test_jack_in_the_stock_phase_deal_j() -> None:
    state = start(J_DECK)
    run(state, J_STOCK_PHASE)
    assert state.observation(0)["stock"] == 2
    state.apply("play Kh")  # a trump lead while the stock lasts: any trump, the jack included
    assert plays(state) == ["play 7h", "play 8h", "play Jh"]
    state.apply("play 8h")
    obs = state.observation(1)
    assert obs["stock"] == 0 and obs["tricks_won"] == [7, 0]
    assert obs["hand"] == ["7d", "8d", "7h", "Jh", "Qh", "7s", "8s", "9s", "Qs"]
    assert state.observation(0)["hand"] == ["Tc", "Ac", "Kd", "Ad", "9h", "Th", "Ah", "Ks", "As"]


def test_jack_once_the_stock_is_empty_deal_j() -> None:
    state = start(J_DECK)
    run(state, [*J_STOCK_PHASE, "play Kh", "play 8h"])
    expected = [
        # trick 8: only the jack beats 9h; seat 1 may instead play a lower trump (7h or Qh)
        ("play 9h", ["7h", "Jh", "Qh"], "play 7h"),
        # trick 9: only the jack beats Th; Qh may be played instead
        ("play Th", ["Jh", "Qh"], "play Qh"),
        # trick 10: a trump lead, and the jack is seat 1's only trump: any card
        ("play Ah", ["7d", "8d", "Jh", "7s", "8s", "9s", "Qs"], "play 7d"),
        # trick 11: void in clubs, the jack the only trump: any card
        ("play Ac", ["8d", "Jh", "7s", "8s", "9s", "Qs"], "play 8d"),
        # trick 12: spades are held: follow (none beats As, so any spade); the jack is no spade
        ("play As", ["7s", "8s", "9s", "Qs"], "play 7s"),
        ("play Ks", ["8s", "9s", "Qs"], "play 8s"),  # 13
        ("play Ad", ["Jh", "9s", "Qs"], "play 9s"),  # 14: void in diamonds: any card
        ("play Kd", ["Jh", "Qs"], "play Qs"),  # 15
        ("play Tc", ["Jh"], "play Jh"),  # 16: a hand holding nothing but the trump jack plays it
    ]
    for lead, allowed, answer in expected:
        assert state.current_player == 0
        state.apply(lead)
        assert plays(state) == [f"play {c}" for c in allowed], lead
        state.apply(answer)
    # seat 0 took tricks 1-15, seat 1 only the last: seat 1 (fewer tricks) counts Tc 10 + Jh 20
    # + the last trick 10 = 40; seat 0 scores 150 - 40 = 110
    obs = state.observation(0)
    assert obs["last_deal"] == {"total": [110, 40], "cards": [110, 40], "combinations": [0, 0],
                                "marriage": [0, 0]}  # fmt: skip
    assert obs["dealer"] == 1 and state.current_player == 0  # seat 1 took the last trick: deals


def test_observation_hides_the_opponent_hand_and_the_stock() -> None:
    state = at(index_after("cut 1"))
    obs = json.loads(json.dumps(state.observation(0)))
    text = json.dumps(obs)
    hidden = set(state._locations()["hidden:stock"])
    # seat 1 still holds 8h 9h Ah 7d 8d 9d..., seen by seat 0 only as announced
    for card in hidden | {"Ah"}:
        assert f'"{card}"' not in text
    assert obs["opponent_hand_size"] == 9 and obs["stock"] == 12 and obs["turned"] == "8s"
    assert obs["exchange_done"] is False and obs["last_deal"] is None and obs["marriage"] == []
    assert set(obs) >= {"game", "seat", "players", "hand", "current_player", "dealer", "trump",
                        "scores", "trick", "stock", "tricks", "tricks_won", "declared", "phase"}  # fmt: skip
    state.apply("play Tc")
    assert state.observation(1)["trick"] == [[0, "Tc"]]


def test_str_shows_the_position() -> None:
    state = at(index_after("play Tc"))
    text = str(state)
    assert "Tierçon (tiercon), deal 1: dealer seat 1, trump spades ♠" in text
    assert "Stock: 11 face down, then 8♠ face up" in text
    assert "Seat 0: 7♣ 8♣ 9♣ J♣ Q♣ K♣ A♦ 7♠   tricks 1, score 0" in text
    assert "Seat 1 (dealer): 7♦ 8♦ 9♦ 8♥ 9♥ 10♥ J♥ Q♥ A♥   tricks 0, score 0" in text
    assert "Announced by seat 0: 7♣ 8♣ 9♣ 10♣ J♣ Q♣ K♣ A♣ (100)" in text
    assert "Trick: seat 0 10♣" in text
    assert "seat 1 to play" in text
    assert "to cut the stock" in str(at(index_after("play 7h")))


# -- combinations: what may be announced, and the best one ----------------------------------------


def first_trick(state: TierconState, first: Sequence[str], second: Sequence[str]) -> dict[str, Any]:
    """Both players announce, then play the first legal card; the observation after trick 1."""
    run(state, first)
    state.apply(plays(state)[0])
    run(state, second)
    state.apply(plays(state)[0])
    return state.observation(0)


def test_legal_action_order_declare_marriage_exchange_play() -> None:
    hand = ["7c", "Ac", "Ad", "Ah", "7s", "Js", "Qs", "Ks", "As"]
    state = start(deal({0: hand}, "9s"))
    assert state.legal_actions() == [
        "declare Js Qs Ks As", "declare Ac Ad Ah As", "marriage", "exchange",
        "play 7c", "play Ac", "play Ad", "play Ah", "play 7s", "play Js", "play Qs", "play Ks", "play As",
    ]  # fmt: skip


def test_card_in_a_sequence_and_a_four_of_a_kind() -> None:
    hand = ["Jc", "Qc", "Kc", "Jd", "Jh", "Js", "7h", "8d", "9s"]
    state = start(deal({0: hand, 1: ["7c", "8c", "Tc", "7d", "9d", "Td", "8h", "9h", "7s"]}, "Ah"))
    assert state.legal_actions()[:2] == ["declare Jc Qc Kc", "declare Jc Jd Jh Js"]
    obs = first_trick(state, ["declare Jc Qc Kc", "declare Jc Jd Jh Js"], [])
    assert obs["combination_winner"] == 0 and obs["combination_points"] == [220, 0]


def test_only_full_length_sequences() -> None:
    state = start(deal({0: ["9d", "Td", "Jd", "Qd", "Kd", "7c", "8h", "Th", "7s"]}, "As"))
    assert state.legal_actions()[0] == "declare 9d Td Jd Qd Kd"
    reason = illegal(state, "declare 9d Td Jd")
    assert "not a combination you may announce (a sequence is written ascending at its full length" in reason
    assert "not a combination you may announce" in illegal(state, "declare Kd Qd Jd Td 9d")
    state = start(deal({0: ["7c", "9c", "Jc", "Kc", "7d", "9d", "Jd", "Kd", "7h"]}, "Ah", dealer=1))
    assert "you hold no combination to announce" in illegal(state, "declare 7c 8c 9c")


@pytest.mark.parametrize(
    ("hand0", "announced0", "hand1", "announced1", "winner", "points"),
    [
        # more points: a fifty beats a tierce
        ("8c 9c Tc", "8c 9c Tc", "8d 9d Td Jd", "8d 9d Td Jd", 1, [0, 50]),
        # equal points: more cards (a run of five beats four aces, both 100)
        ("Ac Ad Ah As", "Ac Ad Ah As", "7d 8d 9d Td Jd", "7d 8d 9d Td Jd", 1, [0, 100]),
        # four jacks (200) beat four aces (100)
        ("Jc Jd Jh Js", "Jc Jd Jh Js", "Ac Ad Ah As", "Ac Ad Ah As", 0, [200, 0]),
        # equal points and cards: the higher top card (four kings beat four queens; 9-T-J beats 8-9-T)
        ("Qc Qd Qh Qs", "Qc Qd Qh Qs", "Kc Kd Kh Ks", "Kc Kd Kh Ks", 1, [0, 100]),
        ("9c Tc Jc", "9c Tc Jc", "8d 9d Td", "8d 9d Td", 0, [20, 0]),
        # then the trump suit (hearts here): seat 1's tierce beats seat 0's equal one
        ("8c 9c Tc", "8c 9c Tc", "8h 9h Th", "8h 9h Th", 1, [0, 20]),
        # then the one announced first (the dealer's opponent announces first)
        ("8c 9c Tc", "8c 9c Tc", "8d 9d Td", "8d 9d Td", 0, [20, 0]),
        # the holder of the best scores all its combinations
        ("8c 9c Tc Jd Qd Kd", "8c 9c Tc, Jd Qd Kd", "7s 8s 9s", "7s 8s 9s", 0, [40, 0]),
        # only one player announced: that player holds the best, whatever the other holds
        ("8c 9c Tc", "8c 9c Tc", "7d 8d 9d Td Jd", "", 0, [20, 0]),
        ("8c 9c Tc", "", "7s 8s 9s", "7s 8s 9s", 1, [0, 20]),
        # nobody announced
        ("8c 9c Tc", "", "7s 8s 9s", "", None, [0, 0]),
    ],
)
def test_best_combination(
    hand0: str, announced0: str, hand1: str, announced1: str, winner: int | None, points: list[int]
) -> None:
    declare0 = ["declare " + c.strip() for c in announced0.split(",") if c]
    declare1 = ["declare " + c.strip() for c in announced1.split(",") if c]
    # Trump hearts; the hands are filled with cards that make no further combination (no
    # neighbour of a card of the same suit, no fourth card of a rank).
    used = set(hand0.split()) | set(hand1.split())
    turned = next(c for c in ("Ah", "Kh", "Qh", "7h") if c not in used)
    filled = [hand0.split(), hand1.split()]
    for hand in filled:
        for card in DECK:
            if len(hand) == 9:
                break
            i = "789TJQKA".index(card[0])
            neighbours = {r + card[1] for r in "789TJQKA"[max(i - 1, 0) : i + 2]}
            fourth = all(card[0] + s in hand for s in "cdhs" if s != card[1])
            taken = set(filled[0]) | set(filled[1]) | {turned}
            if card not in taken and not neighbours & set(hand) and not fourth:
                hand.append(card)
    state = start(deal({0: filled[0], 1: filled[1]}, turned))
    obs = first_trick(state, declare0, declare1)
    assert obs["combination_winner"] == winner
    assert obs["combination_points"] == points


def test_announced_cards_are_shown_to_the_opponent() -> None:
    state = start(deal({0: ["7d", "8d", "9d", "Td", "Ac", "Ah", "Kh", "Qh", "As"]}, "Ad"))
    state.apply("declare 7d 8d 9d Td")
    assert {"7d", "8d", "9d", "Td"} <= state._revealed
    assert state.observation(1)["declared"] == [[0, "declare 7d 8d 9d Td", 50]]
    assert "Ac" not in json.dumps(state.observation(1))


def test_an_announcement_stands_after_the_exchange() -> None:
    # trump spades, Ts turned; seat 0 announces 7s 8s 9s, exchanges the seven for the ten:
    # 8s 9s Ts is not a new sequence (Decision: no card in two sequences, full length only)
    hand = ["7s", "8s", "9s", "Ac", "Kc", "Ad", "Kd", "Ah", "Kh"]
    state = start(deal({0: hand, 1: ["7c", "8c", "9c", "Qc", "7d", "8d", "9d", "7h", "8h"]}, "Ts"))
    state.apply("declare 7s 8s 9s")
    state.apply("exchange")
    obs = state.observation(0)
    assert obs["hand"] == ["Kc", "Ac", "Kd", "Ad", "Kh", "Ah", "8s", "9s", "Ts"]
    assert obs["turned"] == "7s" and obs["exchange_done"] and obs["stock"] == 14
    assert "Ts" in state._revealed
    assert state.legal_actions()[0] == "play Kc"  # no new announcement, no second exchange
    assert "already exchanged" in illegal(state, "exchange")
    state.apply("play Kc")
    state.apply("declare 7c 8c 9c")
    state.apply("declare 7d 8d 9d")
    state.apply("play 7c")
    # seat 0's trump tierce (top 9) vs seat 1's tierces (top 9, plain): trump wins
    assert state.observation(0)["combination_winner"] == 0
    assert state.observation(0)["combination_points"] == [20, 0]


def test_exchange_before_announcing() -> None:
    # Decision (ours): announcements may be made at any point of the first turn, so the turned
    # card taken by the exchange can complete a sequence.
    hand = ["7s", "8s", "Ts", "Js", "Ac", "Kc", "Ad", "Kd", "Ah"]
    state = start(deal({0: hand}, "9s"))
    assert state.legal_actions()[:2] == ["exchange", "play Kc"]
    state.apply("exchange")
    assert state.legal_actions()[0] == "declare 8s 9s Ts Js"
    state.apply("declare 8s 9s Ts Js")
    assert state.observation(1)["declared"] == [[0, "declare 8s 9s Ts Js", 50]]


def test_reasons_for_marriage_and_exchange() -> None:
    state = start(deal({0: ["7c", "8c", "9c", "Jc", "Qd", "Kd", "7h", "9h", "Th"]}, "As"))
    assert "you do not hold the king and queen of trumps (spades)" in illegal(state, "marriage")
    assert "you do not hold the seven of trumps (7s)" in illegal(state, "exchange")
    assert "unknown action 'pass'" in illegal(state, "pass")


# -- scoring and game end -------------------------------------------------------------------------


def test_rounding_of_the_counted_points() -> None:
    assert round_count(135) == 130  # the seed's example
    assert [round_count(p) for p in (0, 5, 6, 14, 15, 16, 27, 150)] == [0, 0, 10, 10, 10, 20, 30, 150]


def test_count_cards_fewer_tricks_counts() -> None:
    # the player with fewer tricks counts: 135 -> 130, the other 150 - 130 = 20
    assert count_cards([5, 11], [135, 15], dealer=0) == [130, 20]
    assert count_cards([11, 5], [15, 135], dealer=0) == [20, 130]
    # equal tricks: the dealer's opponent counts (135 -> 130 for seat 0 when seat 1 deals)
    assert count_cards([8, 8], [135, 15], dealer=1) == [130, 20]
    # ... and seat 1 counts when seat 0 deals: 15 -> 10, seat 0 scores 140
    assert count_cards([8, 8], [135, 15], dealer=0) == [140, 10]


def scripted_game(totals: list[int]) -> TierconState:
    """The scripted deal played from running totals ``totals`` (set directly, as if earlier
    deals had been played)."""
    state = start(SCRIPTED_DECK)
    state._totals = list(totals)
    run(state, SCRIPT)
    return state


def test_game_ends_when_a_total_reaches_501() -> None:
    state = scripted_game([261, 0])
    assert state.is_terminal and state.current_player is None and state.legal_actions() == []
    assert state.scores == [501, 30] and state.ranking == [1, 2]
    obs = state.observation(1)
    assert obs["phase"] == "over" and obs["last_deal"] == SCRIPTED_RESULT and obs["hand"] == []
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply("play 7c")
    assert "Game over. Scores: 501 / 30" in str(state)


def test_game_goes_on_below_501() -> None:
    state = scripted_game([260, 0])
    assert not state.is_terminal and state.scores == [500, 30]


def test_both_past_501_the_higher_wins() -> None:
    state = scripted_game([300, 480])
    assert state.is_terminal and state.scores == [540, 510] and state.ranking == [1, 2]


def test_equal_totals_are_a_draw() -> None:
    state = scripted_game([300, 510])
    assert state.is_terminal and state.scores == [540, 540] and state.ranking == [1, 1]


def test_seeded_game_plays_to_the_end() -> None:
    state = new_game("tiercon").new_state(seed=11)
    while not state.is_terminal:
        state.apply(state.legal_actions()[-1])
    assert max(state.scores) >= 501
    last = state.observation(0)["last_deal"]
    assert last["total"] == [last["cards"][s] + last["combinations"][s] + last["marriage"][s] for s in (0, 1)]
    assert sum(last["cards"]) == 150 and all(c % 10 == 0 for c in last["cards"])
