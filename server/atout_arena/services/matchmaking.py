"""The ladder's two rules, as plain functions without I/O: how a finished duplicate set moves
the ratings (OpenSkill's Plackett-Luce model), and which table the matchmaker seats next.

**Ratings.** Every member has an OpenSkill rating ``(mu, sigma)``; a new one starts at the
model's prior (mu 25, sigma 25/3: wide, so its first sets move it far). What is shown and
sorted on is the *ordinal* ``mu - 3 sigma``, a rating the bot is very likely above. A duplicate
set (one deal in every seat rotation, see :func:`atout_arena.services.sprt.set_tables`) is rated
once, as one multiplayer game: a bot's set score is the number of opponents it beat over the
set's games (a tie is half), and the set's ranking (:func:`set_ranks`) is what Plackett-Luce is
given, so the luck of the cards cancels out before the model sees the outcome.

**Matchmaking.** :func:`choose_table` picks the next table among the members that may play now
(connected, not disabled, not seated in ``max_busy`` sets already):

1. *no bot starves*: a member whose games (scheduled ones included, counted from when it
   joined) are more than ``slack`` games below the mean is seated first: the table is built
   around the most starved one;
2. *no bot hogs the tables*: members more than ``slack`` games above the mean are left out
   while enough others can play (so every share stays within ``slack`` of the mean);
3. among the tables left, the one of the most *information*: OpenSkill's match quality (its
   draw probability, high when the seated bots are close) times the seated bots' total sigma
   (high when they are uncertain). A new bot, uncertain, is seated often until it converges,
   within the cap; two settled bots far apart rarely meet.

Ties are broken by a seeded random generator, so a ladder's choices replay.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from openskill.models import PlackettLuce

SLACK_SETS = 4  # a member's games stay within this many sets' games of the mean
MAX_TABLES = 2000  # tables scored per choice at most (sampled beyond)


@cache
def model() -> PlackettLuce:
    """The ladder's rating model: OpenSkill's Plackett-Luce with its default prior."""
    return PlackettLuce()


def prior() -> tuple[float, float]:
    """The ``(mu, sigma)`` of a new member."""
    m = model()
    return float(m.mu), float(m.sigma)


def ordinal(mu: float, sigma: float) -> float:
    """The displayed rating: ``mu - 3 sigma`` (what the standings are sorted on)."""
    return mu - 3.0 * sigma


def set_ranks(rankings: Sequence[Sequence[int]], seats_of: Sequence[Sequence[int]]) -> list[int]:
    """The ranking of a set's bots (1 = best, ties share a rank) from its games.

    ``rankings[g]``: game g's place per seat (1 = best); ``seats_of[g][i]``: the seat bot ``i``
    held in game g. A bot scores one point per opponent it placed above in a game, half per tie.
    """
    n = len(seats_of[0]) if seats_of else 0
    points = [0.0] * n
    for ranking, seats in zip(rankings, seats_of, strict=True):
        for i in range(n):
            for j in range(n):
                if i != j:
                    a, b = ranking[seats[i]], ranking[seats[j]]
                    points[i] += 1.0 if a < b else 0.5 if a == b else 0.0
    return [1 + sum(1 for q in points if q > p) for p in points]


def rate(ratings: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
    """The ``(mu, sigma)`` of each bot after one set whose ranking is ``ranks`` (1 = best)."""
    m = model()
    teams = [[m.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    rated = m.rate(teams, ranks=list(ranks))
    return [(float(team[0].mu), float(team[0].sigma)) for team in rated]


@dataclass(frozen=True)
class Candidate:
    """A member that may be seated: its rating, and its load: the games it played or has
    scheduled, plus its ``baseline`` (the games it is counted as having played when it joined)."""

    bot_id: int
    mu: float
    sigma: float
    load: float = 0.0
    busy: int = 0  # sets it is seated in that are not over


def quality(table: Sequence[Candidate]) -> float:
    """OpenSkill's match quality of a table (its draw probability): 1 for equals, near 0 for a
    foregone result."""
    m = model()
    return float(m.predict_draw([[m.rating(mu=c.mu, sigma=c.sigma)] for c in table]))


def information(table: Sequence[Candidate]) -> float:
    """What a table is expected to teach: its quality times the seated bots' total sigma."""
    return quality(table) * sum(c.sigma for c in table)


def _tables(pool: Sequence[Candidate], players: int, anchor: Candidate | None,
            rng: random.Random) -> list[tuple[Candidate, ...]]:
    others = [c for c in pool if anchor is None or c.bot_id != anchor.bot_id]
    size = players - (1 if anchor else 0)
    count = math.comb(len(others), size)
    if count <= MAX_TABLES:
        combos = list(itertools.combinations(others, size))
    else:
        combos = [tuple(rng.sample(others, size)) for _ in range(MAX_TABLES)]
    return [((anchor, *combo) if anchor else combo) for combo in combos]


def choose_table(pool: Sequence[Candidate], players: int, *, max_busy: int, slack: float,
                 rng: random.Random) -> tuple[int, ...] | None:
    """The bot ids of the next table (in the order they sit before rotation), or None when
    fewer than ``players`` members may play now. See the module's rules."""
    free = [c for c in pool if c.busy < max_busy]
    if len(free) < players:
        return None
    mean = sum(c.load for c in free) / len(free)
    anchor = None
    starved = [c for c in free if c.load < mean - slack]
    if starved:
        anchor = min(starved, key=lambda c: (c.load, -c.sigma, c.bot_id))
    capped = [c for c in free if c.load <= mean + slack or c is anchor]
    if len(capped) >= players:
        free = capped
    tables = _tables(free, players, anchor, rng)
    rng.shuffle(tables)  # ties go to a seeded random table
    best = max(tables, key=information)
    order = list(best)
    rng.shuffle(order)  # the seating order: rotations and the mirror cover every seat anyway
    return tuple(c.bot_id for c in order)
