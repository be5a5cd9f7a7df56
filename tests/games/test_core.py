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
