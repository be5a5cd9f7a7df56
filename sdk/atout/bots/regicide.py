"""A simple heuristic bot for régicide.

- Opening: opens the trump when it holds a long suit (the turned card is unseen, but the rules
  can be changed later anyway) or a joker, else passes; names its longest suit after a joker.
- Choosing after a trick it did not lead: keeps, changes the trump, inverts, or does both,
  whichever makes its hand the strongest under the new rules (trumps and high cards count,
  jokers always do).
- Leading: a card nobody can beat (a joker, or the highest unseen card of its suit, trumps
  first), else a low card of its longest plain suit.
- Following: the cheapest card that wins the trick so far, unless its partner already wins it;
  else its weakest card.

It remembers the cards played in the current deal from the tricks it sees.
"""

from __future__ import annotations

from typing import Any

from ..bot import Bot, Observation
from ..games.core import JOKERS, SUITS
from ..games.regicide import card_strength, trick_winner

_TOP = 9  # strength of the highest suit card


class RegicideHeuristicBot(Bot):
    """Plays régicide with a few rules of thumb; clearly better than random."""

    def __init__(self) -> None:
        super().__init__()
        self._deal = 0
        self._played: set[str] = set()
        self._seen: list[Any] = []  # the deal's deal_history as read so far

    def act(self, observation: Observation) -> str:
        legal = observation.legal_actions
        self._remember(observation)
        phase = observation.phase
        if phase == "open":
            return "open" if "pass" not in legal or self._wants_to_open(observation.hand) else "pass"
        if phase == "name_trump":
            return "trump " + _longest_suit(observation.hand)
        if phase == "choose":
            return self._choose(observation, legal)
        return self._play(observation, legal)

    # -- memory ----------------------------------------------------------------------------

    def _remember(self, obs: Observation) -> None:
        history = obs.get("deal_history")
        if history is not None:  # every card played this deal, even by a bot that just sat down
            # Only the entries not read yet, when this history is the one read last time grown
            # by them (the same deal, the same first entries): search playouts ask at every
            # step, and reading it whole each time, in Python, cost a playout the square of its
            # length (the comparison of the prefix runs in C).
            seen = self._seen
            n = len(seen)
            if obs.deal != self._deal or len(history) < n or history[:n] != seen:
                self._deal, self._played, n = obs.deal, set(), 0
            for _, action in history[n:]:
                if action.startswith("play "):
                    self._played.add(action[5:])
            self._seen = list(history)
            return
        if obs.deal != self._deal:
            self._deal, self._played = obs.deal, set()
        # Every completed trick is the last trick at this seat's next decision of the deal.
        for _, card in obs.last_trick:
            self._played.add(card)
        for _, card in obs.trick:
            self._played.add(card)

    # -- decisions -------------------------------------------------------------------------

    @staticmethod
    def _wants_to_open(hand: list[str]) -> bool:
        counts = _suit_counts(hand)
        return any(c in JOKERS for c in hand) or max(counts.values()) >= 4

    def _choose(self, obs: Observation, legal: list[str]) -> str:
        hand = obs.hand
        best, best_value = "keep", _hand_value(hand, obs.trump, obs.inverted) + 0.5  # a bias to keep
        for action in legal:
            words = action.split()  # keep | invert | trump S | trump S invert
            if words == ["keep"]:
                continue
            trump = words[1] if words[0] == "trump" else obs.trump
            inverted = obs.inverted != (words[-1] == "invert")
            value = _hand_value(hand, trump, inverted)
            if value > best_value:
                best, best_value = action, value
        return best

    def _play(self, obs: Observation, legal: list[str]) -> str:
        cards = [a[5:] for a in legal]
        trump, inverted = obs.trump, obs.inverted
        trick = [(s, c) for s, c in obs.trick]
        if not trick:
            return "play " + self._lead(cards, trump, inverted)
        winner = trick_winner(trick, trump, inverted)
        partner_wins = obs.teams is not None and winner % 2 == obs.seat % 2
        seat = obs.seat
        winning = [c for c in cards if trick_winner([*trick, (seat, c)], trump, inverted) == seat]
        if winning and not partner_wins:
            return "play " + min(winning, key=lambda c: _cost(c, trump, inverted))
        return "play " + min(cards, key=lambda c: _cost(c, trump, inverted))

    def _lead(self, cards: list[str], trump: str | None, inverted: bool) -> str:
        jokers = [c for c in cards if c in JOKERS]
        if jokers:
            return jokers[0]
        masters = [c for c in cards if self._is_master(c, inverted)]
        if masters:
            # trumps first, to draw the others' trumps
            return max(masters, key=lambda c: (c[1] == trump, card_strength(c, inverted)))
        plain = [c for c in cards if c[1] != trump] or cards
        counts = _suit_counts(plain)
        return min(plain, key=lambda c: (-counts[c[1]], card_strength(c, inverted)))

    def _is_master(self, card: str, inverted: bool) -> bool:
        """No unseen card of the suit ranks above ``card``."""
        played = self._played
        return all(other in played for other in _ABOVE[inverted][card])


_SUIT_CARDS = {s: [r + s for r in "A23456789K"] for s in SUITS}
# The cards of a suit card's suit that rank above it, under each ranking (inverted or not).
_ABOVE = {
    inverted: {
        card: tuple(o for o in cards if card_strength(o, inverted) > card_strength(card, inverted))
        for cards in _SUIT_CARDS.values() for card in cards
    }
    for inverted in (False, True)
}


def _suit_counts(hand: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(SUITS, 0)
    for c in hand:
        if c not in JOKERS:
            counts[c[1]] += 1
    return counts


def _longest_suit(hand: list[str]) -> str:
    counts = _suit_counts(hand)
    return max(SUITS, key=lambda s: (counts[s], sum(card_strength(c, False) for c in hand if c[1] == s)))


def _hand_value(hand: list[str], trump: str | None, inverted: bool) -> float:
    """Roughly the tricks a hand should take under these rules."""
    value = 0.0
    for c in hand:
        if c in JOKERS:
            value += 1.0
            continue
        strength = card_strength(c, inverted)
        if c[1] == trump:
            value += 0.5 + strength / 12
        elif strength >= _TOP - 1:
            value += 0.6 if strength == _TOP else 0.3
    return value


def _cost(card: str, trump: str | None, inverted: bool) -> float:
    """How much giving ``card`` away hurts: jokers most, then trumps, then high cards."""
    if card in JOKERS:
        return 100.0
    return card_strength(card, inverted) + (20 if card[1] == trump else 0)
