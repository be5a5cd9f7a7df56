"""atout.games.sampling.HiddenDeal: exact counts and uniform draws of the consistent deals, on
positions small enough to enumerate every deal (a chi-square test of the draws' frequencies),
and clear errors for counts or constraints that no deal fits."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from scipy.stats import chisquare

from atout.games.sampling import HiddenDeal, Inconsistent


def _every_deal(cards, counts, allowed) -> list[tuple[frozenset[str], ...]]:
    out = []
    for order in itertools.permutations(cards):
        at, deal = 0, []
        for n in counts:
            deal.append(frozenset(order[at:at + n]))
            at += n
        anywhere = range(len(counts))
        if all(slot in allowed.get(card, anywhere) for slot, hand in enumerate(deal) for card in hand):
            out.append(tuple(deal))
    return sorted(set(out), key=repr)


SIX = ["As", "Ks", "Qs", "Jh", "Th", "9d"]
CASES = [
    (SIX, [2, 2, 2], {}),  # no constraint: one group
    (SIX, [2, 3, 1], {"As": [1, 2], "Ks": [1, 2], "Qs": [1, 2]}),  # slot 0 void in spades
    ([*SIX, "8d"], [3, 2, 2], {"Jh": [0], "Th": [0, 1], "9d": [1, 2], "8d": [2]}),
]


@pytest.mark.parametrize(("cards", "counts", "allowed"), CASES)
def test_the_deals_are_counted_exactly_and_drawn_uniformly(cards, counts, allowed) -> None:
    every = _every_deal(cards, counts, allowed)
    deal = HiddenDeal(cards, counts, allowed)
    assert deal.count == len(every)
    rng = random.Random(7)
    draws = 150 * len(every)
    seen: Counter[tuple[frozenset[str], ...]] = Counter()
    for _ in range(draws):
        hands = deal.sample(rng)
        assert [len(h) for h in hands] == counts
        assert sorted(c for h in hands for c in h) == sorted(cards)
        seen[tuple(frozenset(h) for h in hands)] += 1
    assert set(seen) <= set(every)  # every draw consistent
    observed = [seen[d] for d in every]
    assert chisquare(observed).pvalue > 0.01, observed


def test_no_consistent_deal_is_one_clear_error() -> None:
    with pytest.raises(Inconsistent, match=r"3 hidden cards for slots of \[1, 1\]"):
        HiddenDeal(["As", "Ks", "Qs"], [1, 1])
    with pytest.raises(Inconsistent, match=r"no deal of 2 hidden cards fits slots of \[1, 1\]"):
        HiddenDeal(["As", "Ks"], [1, 1], {"As": [0], "Ks": [0]})


def test_a_large_position_is_quick_to_count() -> None:
    """Merde at 5 players, first trick of 10 cards: four hidden hands and the undealt cards,
    two seats void in two suits (the sort of position a search bot samples every decision)."""
    deck = [r + s for s in "cdhs" for r in "23456789TJQKA"]
    rng = random.Random(3)
    rng.shuffle(deck)
    hidden = deck[:49]
    counts = [10, 10, 10, 10, 9]
    allowed = {c: [s for s in range(5) if not (s in (0, 1) and c[1] in "hs")] for c in hidden}
    deal = HiddenDeal(hidden, counts, allowed)
    assert deal.count > 0
    hands = deal.sample(rng)
    assert not any(c[1] in "hs" for c in hands[0] + hands[1])
