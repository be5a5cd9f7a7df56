"""Spectator and seat views: the public view never holds a card from a hand."""

from __future__ import annotations

import json
import random

import pytest

from atout.games import new_game
from atout_arena.core.views import StepViews, public_view

GAMES = [("merde", {"deals": 3}, 4), ("tiercon", {}, 2), ("regicide", {}, 4), ("fool", {}, 3)]


def _cards_in(value: object, deck: frozenset[str]) -> set[str]:
    """Every card code anywhere in a JSON value (also inside action strings)."""
    text = json.dumps(value)
    for ch in '",[]{}:':
        text = text.replace(ch, " ")
    return {token for token in text.split() if token in deck}


@pytest.mark.parametrize(("game", "options", "players"), GAMES)
def test_the_public_view_never_holds_a_card_from_a_hand(game: str, options: dict, players: int) -> None:
    """A card in a hand (or face down) is in the spectators' view only when every seat that
    does not hold it sees it too: a card played in an earlier deal, a bout's cards the defender
    took, an announced combination. Never a card only its holder knows."""
    rng = random.Random(3)
    for seed in range(3):
        state = new_game(game, players=players, **options).new_state(seed=seed)
        deck = frozenset(state.FULL_DECK)
        views = StepViews(state)
        action = None
        start = True
        while True:
            public, seats = views.events({"type": "step"}, action)
            assert "hand" not in public["view"] and "seat" not in public["view"]
            assert public["view"]["current_player"] == state.current_player
            assert public["view"]["scores"] == state.scores
            seen_by = [_cards_in(event, deck) for event in seats]
            holders = {c: int(p[5:]) if p.startswith("hand:") else None
                       for p, cards in state._locations().items() if p.startswith(("hand:", "hidden:"))
                       for c in cards}
            shown = _cards_in(public, deck)
            for card in shown & holders.keys():
                others = [s for s in range(players) if s != holders[card]]
                assert all(card in seen_by[s] for s in others), (
                    f"{game} seed {seed}: the public view shows {card} ({holders[card]}'s), "
                    "which not every seat sees")
            if start:  # before anything was played, not a single card of a hand or the stock
                assert not shown & (holders.keys() - state._revealed)
                start = False
            for seat, event in enumerate(seats):
                assert event["view"] == state.observation(seat)
                assert event.get("action") == action
            if state.is_terminal:
                break
            action = rng.choice(state.legal_actions())
            state.apply(action)


def test_public_view_keeps_what_every_seat_shares() -> None:
    observations = [
        {"seat": s, "hand": [h], "trump": "s", "bids": [1, None], "last_deal": {"total": [1, 2], "mine": s}}
        for s, h in enumerate(["Ah", "Kh"])
    ]
    assert public_view(observations) == {"trump": "s", "bids": [1, None], "last_deal": {"total": [1, 2]}}
