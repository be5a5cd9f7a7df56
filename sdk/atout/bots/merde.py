"""A simple heuristic bot for merde: bid the tricks it can count, then make the bid exactly.

Bidding counts likely winners: high trumps, and aces (and a little for kings) in the other
suits. Playing: while it still needs tricks it tries to win the trick (with the lowest card
that wins when it plays last, else with its best card); once it has its tricks it ducks
(throwing its highest card that cannot win), and it leads low.
"""

from __future__ import annotations

from ..bot import Bot, Observation
from ..games.core import RANKS

RANK = {r: i for i, r in enumerate(RANKS)}  # 2 -> 0 .. A -> 12

# How likely a card is to take a trick, by rank: a trump, a card of another suit (with a trump
# in the deal), and any card of a no-trump deal.
TRUMP_ODDS = {"A": 1.0, "K": 0.9, "Q": 0.75, "J": 0.6, "T": 0.45}
SIDE_ODDS = {"A": 0.75, "K": 0.3}
NO_TRUMP_ODDS = {"A": 0.9, "K": 0.45, "Q": 0.15}


def beats(card: str, best: str, trump: str | None) -> bool:
    """Whether ``card`` takes the trick from ``best``, the card winning it so far."""
    if card[1] == best[1]:
        return RANK[card[0]] > RANK[best[0]]
    return card[1] == trump


def strength(card: str, trump: str | None) -> int:
    """A rough order of how well a card wins tricks: trumps above every other card."""
    return RANK[card[0]] + (13 if card[1] == trump else 0)


def estimate_tricks(hand: list[str], trump: str | None, players: int) -> int:
    """The number of tricks ``hand`` should take, from the cards likely to win one."""
    expected = 0.0
    for card in hand:
        if trump is None:
            expected += NO_TRUMP_ODDS.get(card[0], 0.0)
        elif card[1] == trump:
            expected += TRUMP_ODDS.get(card[0], 0.3)
        else:
            expected += SIDE_ODDS.get(card[0], 0.0)
    expected *= min(1.0, 4.5 / players)  # more players, more cards that can beat ours
    return max(0, min(len(hand), round(expected)))


class MerdeHeuristicBot(Bot):
    """Bids its likely winners and then plays to take exactly that many tricks."""

    def act(self, observation: Observation) -> str:
        if observation.phase == "bid":
            bid = estimate_tricks(observation.hand, observation.trump, observation.players)
            action = f"bid {bid}"
            return action if action in observation.legal_actions else observation.legal_actions[-1]
        return "play " + self._choose_card(observation)

    def _choose_card(self, obs: Observation) -> str:
        trump = obs.trump
        cards = [action.split()[1] for action in obs.legal_actions]
        by_strength = sorted(cards, key=lambda c: strength(c, trump))
        needs = obs.bids[obs.seat] - obs.tricks_won[obs.seat]
        trick = obs.trick
        if not trick:
            # Leading: the best card when tricks are still wanted, else the weakest.
            return by_strength[-1] if needs > 0 else by_strength[0]
        best = trick[0][1]
        for _, card in trick[1:]:
            if beats(card, best, trump):
                best = card
        winners = [c for c in by_strength if beats(c, best, trump)]
        losers = [c for c in by_strength if not beats(c, best, trump)]
        last_to_play = len(trick) == obs.players - 1
        if needs > 0:
            if winners:
                # Last to play: the cheapest card that wins is enough; otherwise play the
                # best one, since later players may still beat a small winner.
                return winners[0] if last_to_play else winners[-1]
            return by_strength[0]  # cannot win it: throw the weakest card
        if losers:
            return losers[-1]  # has enough tricks: get rid of the highest card that loses
        return winners[0]  # every card wins: take it as cheaply as possible
