"""A simple heuristic bot for Tierçon.

It announces every combination and the marriage, exchanges the seven of trumps whenever it
may, and plays tricks with two ideas: take a trick when it brings points cheaply, and
otherwise give away the cheapest card. The trump jack beats everything and is never forced
(RULES.md), so it keeps it for a trick worth taking rather than spend it on a cheap one.
"""

from __future__ import annotations

from ..bot import Bot, Observation
from ..games.tiercon import STRENGTH, beats, card_points

JACK_WORTH = 10  # the trump jack is spent only on a led card of at least this many points

class TierconHeuristicBot(Bot):
    """Announces everything, exchanges the trump seven, wins points cheaply, dumps low cards."""

    def act(self, observation: Observation) -> str:
        legal = observation.legal_actions
        first = legal[0]
        # Announcements and the exchange only ever gain: do them before playing.
        if first.startswith("declare ") or first in ("marriage", "exchange"):
            return first
        if first.startswith("cut "):
            return self.rng.choice(legal)
        cards = [a[5:] for a in legal]
        trump = observation.trump
        trick = observation.trick
        if trick:
            card = self._follow(cards, trick[0][1], trump)
        else:
            card = self._lead(cards, trump, observation.stock)
        return "play " + card

    def _cost(self, card: str, trump: str) -> tuple[int, bool, int]:
        """How much giving ``card`` away hurts: its points, whether it is a trump, its rank."""
        return (card_points(card, trump), card[1] == trump, STRENGTH[trump][card])

    def _lead(self, cards: list[str], trump: str, stock: int) -> str:
        if not stock:
            # The follower must now beat if able: lead from strength, the best plain ace or ten
            # first, else the strongest trump, so that it is the follower who pays.
            plain_tops = [c for c in cards if c[1] != trump and c[0] in "AT"]
            if plain_tops:
                return max(plain_tops, key=lambda c: STRENGTH[trump][c])
        # While the stock lasts, lead something cheap: a low plain card.
        return min(cards, key=lambda c: self._cost(c, trump))

    def _follow(self, cards: list[str], led: str, trump: str) -> str:
        jack = "J" + trump
        if jack in cards and len(cards) > 1 and card_points(led, trump) < JACK_WORTH:
            # The jack need not be played (it is never forced), and it wins whenever it is
            # played: keep it for a led card worth taking, or for the last trick.
            cards = [c for c in cards if c != jack]
        winners = [c for c in cards if beats(c, led, trump)]
        if winners:
            same = [c for c in winners if c[1] == led[1] and led[1] != trump]
            if same:
                # Winning in the suit led: bank the biggest card that wins.
                return max(same, key=lambda c: card_points(c, trump))
            cheapest = min(winners, key=lambda c: self._cost(c, trump))
            if card_points(led, trump) + card_points(cheapest, trump) >= 10 or (
                card_points(cheapest, trump) == 0
            ):
                return cheapest
        losers = [c for c in cards if c not in winners] or cards
        return min(losers, key=lambda c: self._cost(c, trump))
