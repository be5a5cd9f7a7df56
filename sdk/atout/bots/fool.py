"""A simple heuristic bot for ``fool`` (Fool compris): cheap defence, low attacks.

What counts in this game is the face cards (10 J Q K A) you beat as defender, and a defender
who takes scores nothing for the whole bout. So the bot:

- attacks with its lowest plain (non-trump) card, keeping face cards, which would score for
  the defender;
- defends with the cheapest card that beats (plain cards before trumps), always trying when
  the attack holds face cards, but takes rather than spend a high trump on small cards while
  the stock is still thick;
- adds low plain cards (never face cards, never trumps): they make the defender spend cards,
  or take and lose the bout's points.
"""

from __future__ import annotations

from ..bot import Bot, Observation
from ..games.core import RANKS

RANK_VALUE = {r: i for i, r in enumerate(RANKS)}
FACE_RANKS = frozenset("TJQKA")
HIGH_TRUMP = RANK_VALUE["Q"]  # trumps from the queen up are worth keeping early on
EARLY_STOCK = 6  # "early": the stock still holds at least this many cards


class FoolHeuristicBot(Bot):
    """Attack low, defend cheaply, keep high trumps while the stock lasts, add low cards."""

    def act(self, observation: Observation) -> str:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        trump = observation.trump
        phase = observation.phase
        if phase == "attack":
            return min(legal, key=lambda a: self._keep_value(a[7:], trump))
        if phase == "defend":
            return self._defend(observation, legal, trump)
        return self._add(observation, legal, trump)

    @staticmethod
    def _keep_value(card: str, trump: str) -> tuple[bool, bool, int]:
        """How much we would rather keep ``card``: trumps, then face cards, then by rank."""
        return (card[1] == trump, card[0] in FACE_RANKS, RANK_VALUE[card[0]])

    def _defend(self, observation: Observation, legal: list[str], trump: str) -> str:
        beats = [a for a in legal if a.startswith("beat ")]
        if not beats:
            return "take"
        best = min(beats, key=lambda a: self._keep_value(a[8:10], trump))
        attack, cover = best[5:7], best[8:10]
        on_table = [pair[0] for pair in observation.table]
        scoring = any(card[0] in FACE_RANKS for card in on_table)
        costly = cover[1] == trump and RANK_VALUE[cover[0]] >= HIGH_TRUMP and attack[1] != trump
        if costly and not scoring and observation.stock >= EARLY_STOCK:
            return "take"
        return best

    def _add(self, observation: Observation, legal: list[str], trump: str) -> str:
        adds = [a[4:] for a in legal if a.startswith("add ")]
        cheap = [c for c in adds if c[1] != trump and c[0] not in FACE_RANKS]
        if not cheap:
            return "pass"
        return "add " + min(cheap, key=lambda c: RANK_VALUE[c[0]])
