"""The building blocks of the tensors: named sections that each read one thing of an
observation and write a fixed number of floats, relative to the observing seat.

A section is :class:`Part`: a name, a size, a function from a :class:`View` to that many
floats, and where it belongs (the information-state tensor, the observation tensor, or both).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Fill = Callable[["View"], list[float]]


@dataclass(frozen=True)
class Part:
    """One named section of a tensor."""

    name: str
    size: int
    fill: Fill
    info: bool = True  # in the information-state tensor
    obs: bool = True  # in the observation tensor (the current view only)
    high: float = 1.0  # no value of the section is above it (and none below 0)


class View:
    """An observation seen from its seat: seats relative to it (0 = the observer, 1 = the next
    seat in play order...), cards as indices into the game's deck."""

    def __init__(self, observation: dict[str, Any], players: int, card_index: dict[str, int]) -> None:
        self.obs = observation
        self.me: int = observation["seat"]
        self.players = players
        self.card_index = card_index
        self.cards = len(card_index)

    def rel(self, seat: int) -> int:
        return (seat - self.me) % self.players

    def by_seat(self, values: Sequence[Any]) -> list[Any]:
        """``values`` (a list by seat) reordered from the observer on."""
        n = self.players
        return [values[(self.me + i) % n] for i in range(n)]

    def history(self) -> list[tuple[int, list[str]]]:
        """``deal_history`` as (seat, words of the action)."""
        return [(seat, action.split()) for seat, action in self.obs.get("deal_history") or ()]


def cards(name: str, n: int, get: Callable[[View], Iterable[str]], **where: bool) -> Part:
    """A 0/1 per card of the deck: the cards ``get`` gives."""

    def fill(view: View) -> list[float]:
        out = [0.0] * n
        for card in get(view):
            out[view.card_index[card]] = 1.0
        return out

    return Part(name, n, fill, **where)


def card(name: str, n: int, key: str, **where: bool) -> Part:
    """One card (or none: all zeros) of the observation's ``key``."""
    return cards(name, n, lambda v: [] if v.obs.get(key) is None else [v.obs[key]], **where)


def seat_cards(
    name: str, players: int, n: int, get: Callable[[View], Iterable[tuple[int, str]]], **where: bool
) -> Part:
    """``players`` blocks of a 0/1 per card: the cards ``get`` gives for each (absolute) seat,
    the observer's block first."""

    def fill(view: View) -> list[float]:
        out = [0.0] * (players * n)
        for seat, c in get(view):
            out[view.rel(seat) * n + view.card_index[c]] = 1.0
        return out

    return Part(name, players * n, fill, **where)


def seat(name: str, players: int, get: Callable[[View], int | None], **where: bool) -> Part:
    """A seat, one-hot relative to the observer, with a last slot for none."""

    def fill(view: View) -> list[float]:
        out = [0.0] * (players + 1)
        value = get(view)
        out[players if value is None else view.rel(value)] = 1.0
        return out

    return Part(name, players + 1, fill, **where)


def seat_key(name: str, players: int, key: str, **where: bool) -> Part:
    """The seat (or null) of the observation's ``key``."""
    return seat(name, players, lambda v: v.obs.get(key), **where)


def per_seat(name: str, players: int, key: str, scale: float, high: float = 1.0, **where: bool) -> Part:
    """A number per seat (the observation's list ``key``, by seat) divided by ``scale``."""

    def fill(view: View) -> list[float]:
        return [x / scale for x in view.by_seat(view.obs[key])]

    return Part(name, players, fill, high=high, **where)


def seats_in(name: str, players: int, key: str, **where: bool) -> Part:
    """A 0/1 per seat: the seats listed in the observation's ``key``."""

    def fill(view: View) -> list[float]:
        out = [0.0] * players
        for s in view.obs.get(key) or ():
            out[view.rel(s)] = 1.0
        return out

    return Part(name, players, fill, **where)


def number(
    name: str, get: Callable[[View], float | None], scale: float, high: float = 1.0, **where: bool
) -> Part:
    """One number divided by ``scale`` (null: 0)."""

    def fill(view: View) -> list[float]:
        value = get(view)
        return [0.0 if value is None else float(value) / scale]

    return Part(name, 1, fill, high=high, **where)


def key_number(name: str, key: str, scale: float, high: float = 1.0, **where: bool) -> Part:
    return number(name, lambda v: v.obs.get(key), scale, high=high, **where)


def flag(name: str, key: str, **where: bool) -> Part:
    """1 when the observation's ``key`` is true."""
    return Part(name, 1, lambda v: [1.0 if v.obs.get(key) else 0.0], **where)


def choice(name: str, values: Sequence[Any], key: str, **where: bool) -> Part:
    """One-hot over ``values`` of the observation's ``key``."""
    slots = {value: i for i, value in enumerate(values)}

    def fill(view: View) -> list[float]:
        out = [0.0] * len(values)
        out[slots[view.obs.get(key)]] = 1.0
        return out

    return Part(name, len(values), fill, **where)


def seat_one_hot_of_seats(name: str, players: int, key: str, **where: bool) -> Part:
    """A one-hot per relative seat (``players`` slots), all zero for null: the dealer."""

    def fill(view: View) -> list[float]:
        out = [0.0] * players
        value = view.obs.get(key)
        if value is not None:
            out[view.rel(value)] = 1.0
        return out

    return Part(name, players, fill, **where)


def trick(name: str, players: int, n: int, key: str, **where: bool) -> Part:
    """A trick (list of ``[seat, card]``) as cards by relative seat."""
    return seat_cards(name, players, n, lambda v: [(s, c) for s, c in v.obs.get(key) or ()], **where)


def played(name: str, players: int, n: int, verbs: Sequence[str], **where: bool) -> Part:
    """Every card played in ``deal_history`` by each seat (the last word of each action whose
    verb is in ``verbs``): the cards seen and who played them. In the information state only."""
    wanted = frozenset(verbs)
    where = {"obs": False, **where}
    return seat_cards(
        name, players, n, lambda v: [(s, w[-1]) for s, w in v.history() if w[0] in wanted], **where
    )
