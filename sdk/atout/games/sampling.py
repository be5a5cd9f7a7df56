"""Dealing hidden cards uniformly among the deals a seat cannot tell apart.

A seat sees its own hand and what was played; the other cards lie in *slots* it cannot see
into: another seat's hand, the stock, the cards set aside, the cards a seat drew at one point
of the game. Each slot holds a known number of cards, and what was played may rule out some
cards for some slots (a seat that did not follow suit held none of that suit then, and could
not have received one since: that suit is ruled out of the slots it held). A *consistent deal*
puts every hidden card in one slot, each slot getting exactly its count, each card in a slot it
is allowed in.

:class:`HiddenDeal` draws such deals **uniformly**: every consistent deal (as sets of cards per
slot) equally likely, the order within a slot a uniform shuffle. Cards allowed in the same slots
are interchangeable for counting, so the deals are counted group by group (one group per set of
allowed slots) with the slots' remaining room as the state, once per position; each draw then
walks the groups, choosing how many of a group's cards go to each slot with the probability of
the deals that choice leaves, and which cards by a shuffle. Exact, and fast for the few groups
that real positions have (a position with no constraint is one group: a plain shuffle).
"""

from __future__ import annotations

import copy
import random
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from math import comb
from typing import Any, Generic, TypeVar

from .core import shuffle

__all__ = ["HiddenDeal", "Inconsistent", "ObservationCache"]

T = TypeVar("T")


class Inconsistent(ValueError):  # noqa: N818 - says what it is, like IllegalAction
    """No deal of the hidden cards fits the slots' counts and the cards' allowed slots."""


def _splits(total: int, rooms: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to put ``total`` interchangeable cards into slots with at most ``rooms`` each."""
    if not rooms:
        if total == 0:
            yield ()
        return
    if len(rooms) == 1:
        if total <= rooms[0]:
            yield (total,)
        return
    rest_room = sum(rooms[1:])
    for first in range(max(0, total - rest_room), min(total, rooms[0]) + 1):
        for rest in _splits(total - first, rooms[1:]):
            yield (first, *rest)


def _ways(total: int, split: Sequence[int]) -> int:
    """The multinomial coefficient: distinct cards ``total`` dealt as ``split`` into slots."""
    out, left = 1, total
    for k in split:
        out *= comb(left, k)
        left -= k
    return out


class HiddenDeal:
    """The consistent deals of ``cards`` into slots of sizes ``counts``.

    ``allowed`` maps a card to the slots (indices into ``counts``) it may lie in; a card it does
    not name (or every card, when ``allowed`` is None) may lie in any slot. Raises
    :class:`Inconsistent` when no deal fits, naming the counts. Build one per position, then
    :meth:`sample` as many deals as wanted.

    >>> deal = HiddenDeal(["As", "Kh", "Qh"], [1, 2], allowed={"As": [1]})
    >>> deal.count  # As in slot 1; slot 0 holds Kh or Qh
    2
    >>> sorted(map(sorted, deal.sample(random.Random(1))))
    [['As', 'Qh'], ['Kh']]
    """

    def __init__(
        self,
        cards: Sequence[str],
        counts: Sequence[int],
        allowed: Mapping[str, Iterable[int]] | Callable[[str], Iterable[int]] | None = None,
    ) -> None:
        self.counts = tuple(counts)
        if any(c < 0 for c in self.counts):
            raise Inconsistent(f"a slot cannot hold a negative number of cards: {list(self.counts)}")
        if sum(self.counts) != len(cards):
            raise Inconsistent(f"{len(cards)} hidden cards for slots of {list(self.counts)} "
                               f"({sum(self.counts)} places)")
        every = tuple(range(len(self.counts)))
        groups: dict[tuple[int, ...], list[str]] = {}
        for card in cards:
            if allowed is None:
                slots: Iterable[int] = every
            elif callable(allowed):
                slots = allowed(card)
            else:
                slots = allowed.get(card, every)
            key = tuple(sorted(set(slots)))
            if any(s < 0 or s >= len(self.counts) for s in key):
                raise ValueError(f"card {card!r}: slot out of range in {list(key)}")
            groups.setdefault(key, []).append(card)
        # the most constrained groups first: fewer splits near the root of the walk
        self.groups = sorted(groups.items(), key=lambda item: (len(item[0]), item[0]))
        self._count = lru_cache(maxsize=None)(self._count_from)
        self.count = self._count(0, self.counts)
        if self.count == 0:
            raise Inconsistent(
                f"no deal of {len(cards)} hidden cards fits slots of {list(self.counts)} "
                "with the cards each slot may hold")

    def _options(self, index: int, room: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], int]]:
        """Each way group ``index`` can fill the slots it may use within ``room``: the room
        left, and the number of ways to pick the cards for it."""
        slots, members = self.groups[index]
        for split in _splits(len(members), [room[s] for s in slots]):
            left = list(room)
            for slot, k in zip(slots, split, strict=True):
                left[slot] -= k
            yield tuple(left), _ways(len(members), split)

    def _count_from(self, index: int, room: tuple[int, ...]) -> int:
        if index == len(self.groups):
            return 1 if not any(room) else 0
        return sum(ways * self._count(index + 1, left) for left, ways in self._options(index, room)
                   if ways)

    def sample(self, rng: random.Random) -> list[list[str]]:
        """One consistent deal, uniformly at random: the cards of each slot, in a random order."""
        out: list[list[str]] = [[] for _ in self.counts]
        room = self.counts
        for index, (slots, members) in enumerate(self.groups):
            choices = [(after, ways * self._count(index + 1, after))
                       for after, ways in self._options(index, room)]
            pick = rng.randrange(sum(weight for _, weight in choices))  # exact: big integers
            left = choices[-1][0]
            for after, weight in choices:
                if pick < weight:
                    left = after
                    break
                pick -= weight
            cards = list(members)
            shuffle(cards, rng)
            at = 0
            for slot in slots:
                k = room[slot] - left[slot]
                out[slot].extend(cards[at:at + k])
                at += k
            room = left
        for hand in out:
            shuffle(hand, rng)
        return out


class ObservationCache(Generic[T]):
    """A sampler's work kept per observation: at most ``size`` entries, the oldest dropped first,
    each found by a cheap ``key`` and reused only for an observation equal to the one it was
    built from (kept as a copy: the caller may change theirs afterwards). Safe on several
    threads (search bots sample on the arena's thread pool)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[Hashable, tuple[dict[str, Any], T]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable | None, observation: dict[str, Any],
            build: Callable[[dict[str, Any]], T]) -> T:
        """What ``build`` makes of ``observation``, built once per equal observation (a key of
        None: built every time, nothing kept)."""
        cached = self._entries.get(key) if key is not None else None
        if cached is not None and cached[0] == observation:
            return cached[1]
        mine = copy.deepcopy(observation)
        built = build(mine)
        if key is not None:
            with self._lock:
                while len(self._entries) >= self.size:
                    del self._entries[next(iter(self._entries))]  # the oldest
                self._entries[key] = (mine, built)
        return built
