"""Standings of a tournament or a league, from its match results.

Plain functions, no I/O. A result is a match's seats and its ranking (place per seat, 1 =
best, ties share the better place: RULES.md, "Results"), with the faults and forfeits of each
seat (DESIGN.md, "Matches, faults, tournaments": a bot that forfeits is last in the ranking).

**Points** are pairwise: in each match a bot scores 1 for every opponent placed below it and
0.5 for every opponent sharing its place. Without ties that is ``n - place`` (the bots beaten);
with ties it is the same half-point a draw is worth in the ratings (:mod:`atout_arena.core.ratings`), and
every match hands out exactly ``n (n - 1) / 2`` points whatever its ties (places 1, 1, 3 score
1.5, 1.5, 0). Points are totals: the schedules give every bot the same number of matches.

**Order**: points, then the direct encounters (points scored against the bots level on points,
in the matches where they met), then wins, then fewer forfeits, then fewer faults. Bots equal
on all of these share the better rank and are listed by name (``str`` of the bot id).

**A win** is a first place shared with no opponent: alone, or with one's partners only (in a
team game, the option ``teams``: seats 0+2 against 1+3, partners always share their place). A
first place shared with an opponent (scores 9, 9, 5) is not a win; it is still counted in
``places[1]`` and worth its half points.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

BotId = Hashable


@dataclass(frozen=True)
class MatchResult:
    """One finished match. ``faults`` and ``forfeited`` are per seat; empty means none."""

    seats: tuple[BotId, ...]
    ranking: tuple[int, ...]
    faults: tuple[int, ...] = ()
    forfeited: tuple[bool, ...] = ()
    sides: tuple[int, ...] = ()  # each seat's side (team); empty: every seat on its own

    def __post_init__(self) -> None:
        for name in ("seats", "ranking", "faults", "forfeited", "sides"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        n = len(self.seats)
        if n < 2:
            raise ValueError(f"a match needs at least 2 seats, got {n}: {list(self.seats)!r}")
        if len(set(self.seats)) != n:
            raise ValueError(f"a bot sits in two seats of one match: {list(self.seats)!r}")
        for name in ("ranking", "faults", "forfeited", "sides"):
            value = getattr(self, name)
            if value and len(value) != n:
                raise ValueError(f"{n} seats but {len(value)} values in {name}: {list(value)!r}")
        if not self.ranking:
            raise ValueError("a match result needs a ranking")
        if any(not isinstance(p, int) or isinstance(p, bool) or p < 1 for p in self.ranking):
            raise ValueError(f"a ranking holds places 1, 2, ... (1 = best), not {list(self.ranking)!r}")
        if any(not isinstance(f, int) or isinstance(f, bool) or f < 0 for f in self.faults):
            raise ValueError(f"faults are counts >= 0, not {list(self.faults)!r}")

    def won(self, seat: int) -> bool:
        """Whether ``seat`` won: first, and no opponent (another side) first too."""
        return won(self.ranking, seat, self.sides)

    def points(self, seat: int, against: Iterable[int] | None = None) -> float:
        """The pairwise points of ``seat`` against the other seats (or those in ``against``)."""
        mine = self.ranking[seat]
        others = range(len(self.seats)) if against is None else against
        return sum(
            1.0 if mine < self.ranking[o] else 0.5 if mine == self.ranking[o] else 0.0
            for o in others
            if o != seat
        )


def won(ranking: Sequence[int], seat: int, sides: Sequence[int] = ()) -> bool:
    """Whether ``seat`` won a match ranked ``ranking``: placed first, and every other seat
    placed first is on its side (``sides``: each seat's team; empty: every seat alone)."""
    if ranking[seat] != 1:
        return False
    side = sides[seat] if sides else seat
    return all((sides[s] if sides else s) == side for s, place in enumerate(ranking) if place == 1)


def sides_of(options: dict[str, object], players: int) -> tuple[int, ...]:
    """The seats' sides of a match with these options: with ``teams`` (4 players), seats 0+2
    against 1+3; otherwise every seat on its own (``()``)."""
    return tuple(seat % 2 for seat in range(players)) if options.get("teams") is True and players == 4 else ()


@dataclass(frozen=True)
class Standing:
    """One bot's line. ``places`` maps place -> number of matches finished there; ``rank`` is
    its position in the table (shared when level on every criterion); ``direct`` its points
    in the direct-encounter tiebreak (0 when level on points with no one)."""

    bot: BotId
    matches: int
    points: float
    wins: int
    places: dict[int, int]
    mean_place: float | None  # None before its first match
    faults: int
    forfeits: int
    rank: int
    direct: float


def standings(results: Iterable[MatchResult], *, bots: Sequence[BotId] = ()) -> list[Standing]:
    """The table, best first (see the module docstring for points and order).

    ``bots`` lists bots to show even before their first match (a league's members).
    """
    results = list(results)
    played: dict[BotId, Counter[int]] = {bot: Counter() for bot in bots}
    points: dict[BotId, float] = dict.fromkeys(bots, 0.0)
    faults: Counter[BotId] = Counter()
    forfeits: Counter[BotId] = Counter()
    wins: Counter[BotId] = Counter()
    for result in results:
        for seat, bot in enumerate(result.seats):
            played.setdefault(bot, Counter())[result.ranking[seat]] += 1
            if result.won(seat):
                wins[bot] += 1
            points[bot] = points.get(bot, 0.0) + result.points(seat)
            if result.faults:
                faults[bot] += result.faults[seat]
            if result.forfeited and result.forfeited[seat]:
                forfeits[bot] += 1
    direct = _direct_encounters(results, points)

    def key(bot: BotId) -> tuple[float, float, int, int, int]:
        return (-points[bot], -direct[bot], -wins[bot], forfeits[bot], faults[bot])

    table: list[Standing] = []
    for position, bot in enumerate(sorted(played, key=lambda b: (key(b), str(b)))):
        rank = table[-1].rank if table and key(table[-1].bot) == key(bot) else position + 1
        places = played[bot]
        matches = sum(places.values())
        table.append(
            Standing(
                bot=bot,
                matches=matches,
                points=points[bot],
                wins=wins[bot],
                places=dict(sorted(places.items())),
                mean_place=sum(p * c for p, c in places.items()) / matches if matches else None,
                faults=faults[bot],
                forfeits=forfeits[bot],
                rank=rank,
                direct=direct[bot],
            )
        )
    return table


def _direct_encounters(results: list[MatchResult], points: dict[BotId, float]) -> dict[BotId, float]:
    """For each bot, its pairwise points against the other bots with the same points."""
    level: dict[float, set[BotId]] = {}
    for bot, total in points.items():
        level.setdefault(total, set()).add(bot)
    direct = dict.fromkeys(points, 0.0)
    for result in results:
        for seat, bot in enumerate(result.seats):
            rivals = [
                s for s, other in enumerate(result.seats) if other != bot and other in level[points[bot]]
            ]
            if rivals:
                direct[bot] += result.points(seat, rivals)
    return direct
