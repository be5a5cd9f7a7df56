"""The shared core: cards, actions, options, rankings."""

from __future__ import annotations

import json

import pytest

from atout.games import (
    GAMES,
    Action,
    Game,
    card_text,
    new_game,
    normalise_action,
    parse_card,
    ranking_from_scores,
)
from atout.games.core import Option, make_deck


@pytest.mark.parametrize(
    ("text", "card"),
    [("Th", "Th"), ("10h", "Th"), ("th", "Th"), (" qS ", "Qs"), ("rj", "RJ"), ("BJ", "BJ"), ("2c", "2c")],
)
def test_parse_card(text: str, card: str) -> None:
    assert parse_card(text) == card
    assert parse_card(card) == card  # canonical codes round-trip


@pytest.mark.parametrize("text", ["", "h", "1h", "Tx", "TTh", "joker", "11s"])
def test_parse_card_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="not a card"):
        parse_card(text)


def test_card_text() -> None:
    assert card_text("Th") == "10♥"
    assert card_text("As") == "A♠"
    assert card_text("RJ") == "Joker(R)"


@pytest.mark.parametrize("text", ["play Qh", "beat Kd 9s", "bid 0", "declare 7h 8h 9h", "take", "cut 3"])
def test_action_round_trip(text: str) -> None:
    action = Action.parse(text)
    assert str(action) == text
    assert eval(repr(action), {"Action": Action}) == action  # the repr pastes back as code


def test_action_parts() -> None:
    assert Action.parse("beat Kd 9s") == Action("beat", ("Kd", "9s"))
    with pytest.raises(ValueError):
        Action.parse("   ")


def test_normalise_action() -> None:
    assert normalise_action("  Beat kd 10S ") == "beat Kd Ts"
    assert normalise_action("BID 3") == "bid 3"
    assert normalise_action("trump H") == "trump h"
    assert normalise_action("") == ""


def test_ranking_ties_share_the_better_place() -> None:
    assert ranking_from_scores([9, 9, 5]) == [1, 1, 3]
    assert ranking_from_scores([10, 30, 10, 30]) == [3, 1, 3, 1]
    assert ranking_from_scores([0, 0]) == [1, 1]


def test_option_checks() -> None:
    choice = Option("tie", "carry", "how ties are scored", choices=("carry", "share"))
    choice.check("share")
    with pytest.raises(ValueError, match="option 'tie': 'split' is not allowed; allowed: 'carry' or 'share'"):
        choice.check("split")
    number = Option("deals", None, "number of deals", minimum=1)
    number.check(3)
    for bad in (0, True, 2.0, "3"):
        with pytest.raises(ValueError, match="option 'deals'"):
            number.check(bad)
    flag = Option("teams", False, "partnerships", choices=(False, True))
    with pytest.raises(ValueError, match="teams"):
        flag.check(1)


def test_make_deck() -> None:
    deck = make_deck("23456789TJQKA")
    assert len(deck) == 52 and len(set(deck)) == 52
    assert make_deck("A", "cd", ["RJ"]) == ["Ac", "Ad", "RJ"]


def test_rules_versions_in_the_ruleset_as_data() -> None:
    # Each game states its own rules version (bumped when a rule change makes old action logs
    # replay differently): tiercon and regicide are at 2 since a revision of their rules, fool at 3
    # since its ranking was revised (2: a position repeated three times ends its game).
    versions = {g: cls.RULES_VERSION for g, cls in GAMES.items()}
    assert versions == {"merde": 1, "tiercon": 2, "regicide": 2, "fool": 3}
    for game_id, cls in GAMES.items():
        assert "RULES_VERSION" in vars(cls), f"{game_id} inherits its rules version"
        described = cls.describe()
        assert described["rules_version"] == cls.RULES_VERSION
        assert type(described["rules_version"]) is int
        assert new_game(game_id).describe()["rules_version"] == cls.RULES_VERSION
        assert json.loads(json.dumps(described)) == described
    assert Game.RULES_VERSION == 1


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_decks_given_after_the_start_deal_the_next_deals(game_id: str) -> None:
    """State.give_decks: the deck of the next deal, given once the game has started (as
    atout.openspiel's chance nodes draw it), is the deck that deal is dealt from."""
    import random

    game = new_game(game_id)
    full = list(game.new_state(seed=0).FULL_DECK)
    first = random.Random(1).sample(full, len(full))
    state = game.new_state(seed=5, decks=[first])
    assert (state.deals_started, state.decks_given) == (1, 1)
    second = list(reversed(first))
    state.give_decks([second])
    assert state.decks_given == 2
    rng = random.Random(2)
    while not state.is_terminal and state.deals_started == 1:
        state.apply(rng.choice(state.legal_actions()))
    if state.is_terminal:  # a one-deal game (fool): nothing more to deal
        assert game_id == "fool"
        return
    assert state.deals_started == 2
    replay = game.new_state(seed=5, decks=[first, second])
    for _, action in state.history:
        replay.apply(action)
    # the second deal was dealt from the deck given (the seed's shuffle would differ)
    seat = state.current_player
    assert seat is not None
    assert replay.observation(seat) == state.observation(seat)
    assert replay.observation(seat) != _dealt_by_seed(game, first, state.history)


def _dealt_by_seed(game: Game, first: list[str], history: list[tuple[int, str]]) -> object:
    state = game.new_state(seed=5, decks=[first])
    for _, action in history:
        if state.is_terminal or action not in state.legal_actions():
            return None
        state.apply(action)
    return None if state.current_player is None else state.observation(state.current_player)


def test_a_bad_deck_given_is_one_line() -> None:
    state = new_game("tiercon").new_state(seed=0)
    with pytest.raises(ValueError, match=r"deck 0 is not a full tiercon deck of 32 cards \(missing"):
        state.give_decks([["As", "Ks"]])
    assert state.decks_given == 0
