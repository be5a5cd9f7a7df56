"""The ladder's two rules, as plain functions without I/O: how a finished duplicate set moves
the ratings (OpenSkill's Plackett-Luce model), and which tables the matchmaker seats next.

**Ratings.** Every member has an OpenSkill rating ``(mu, sigma)``; a new one starts at the
model's prior (mu 25, sigma 25/3: wide, so its first sets move it far). What is shown and
sorted on is the *ordinal* ``mu - 3 sigma``, a rating the bot is very likely above. A duplicate
set (one deal in every seat rotation, see :func:`atout_arena.services.sprt.set_tables`) is rated
once, as one multiplayer game: a bot's set score is the number of opponents it beat over the
set's games (a tie is half), and the set's ranking (:func:`set_ranks`) is what Plackett-Luce is
given, so the luck of the cards cancels out before the model sees the outcome. A member with
fewer than :data:`PROVISIONAL_SETS` rated sets, or a sigma above :data:`PROVISIONAL_SIGMA`, is
*provisional* (:func:`provisional`): the standings mark it and list it after the established
members.

**Matchmaking** (:func:`plan`, one call per tick; :func:`choose_table` per table). A member's
*load* is the games of its rated and scheduled sets plus its *baseline*. Among the members that
may play now (connected, not disabled, seated in fewer than ``max_busy`` open sets):

1. *Fair shares, a hard rule*: a table may seat a bot only if no free bot left out has a load
   more than ``slack`` (half a set) below it. The least loaded always sit first; two connected
   members' loads never drift more than ``slack`` plus one set apart, so over any 50 sets each
   one's share of sets stays at the mean, within a set or two.
2. *A connected comparison graph*: among the tables rule 1 allows (every table of the tied
   least-loaded bots), the one of the highest score, a sum over its pairs of bots: OpenSkill's
   two-player match quality times their mean sigma (close and uncertain pairs teach most), plus,
   for two *neighbours in the standings* (consecutive by ordinal), the sets since they last met
   over the pool's size, a bonus that grows until they meet again. So every pair of neighbours
   meets regularly and the standings' order rests on direct comparisons, not on groups that
   never play each other.
3. *Late members start at the mean*: a member whose load is more than ``slack`` plus one set
   below the mean of the others in the pool (it joined late, or was away) has its baseline
   raised so that its load is that mean (:func:`catch_up`): it is owed nothing for the time it
   was not there.

Ties are broken by a seeded random generator, so a ladder's choices replay.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from openskill.models import PlackettLuce

SLACK_SETS = 0.5  # a seated bot's load is at most this many sets' games above a free bot left out
MAX_TABLES = 64  # tables scored per choice at most (built greedily beyond)
GREEDY_STARTS = 6  # beyond MAX_TABLES: tables built greedily, each from one of this many bots
NEAR = (2.0, 1.0, 0.5)  # the weight of the time since they met, by the pair's distance in the standings
WAIT = 0.5  # the score of a bot that waited a whole period (pool / players sets) since its last set
PROVISIONAL_SETS = 5  # a member with fewer rated sets is provisional
PROVISIONAL_SIGMA = 4.0  # ... and so is one whose sigma is above this (the prior's is 25/3)


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


def provisional(sets: int, sigma: float) -> bool:
    """Whether a member's rating is provisional: too few rated sets, or too uncertain."""
    return sets < PROVISIONAL_SETS or sigma > PROVISIONAL_SIGMA


@dataclass(frozen=True)
class Candidate:
    """A member that may be seated: its rating, and its load: the games it played or has
    scheduled, plus its ``baseline`` (see :func:`catch_up`)."""

    bot_id: int
    mu: float
    sigma: float
    load: float = 0.0
    busy: int = 0  # sets it is seated in that are not over
    last: int = -1  # the number of the last set it was seated in (-1: none)


def quality(table: Sequence[Candidate]) -> float:
    """OpenSkill's match quality of a table (its draw probability): 1 for equals, near 0 for a
    foregone result."""
    m = model()
    return float(m.predict_draw([[m.rating(mu=c.mu, sigma=c.sigma)] for c in table]))


def information(table: Sequence[Candidate]) -> float:
    """What a table is expected to teach: its quality times the seated bots' total sigma."""
    return quality(table) * sum(c.sigma for c in table)


def pair_quality(a: Candidate, b: Candidate) -> float:
    """The two-player match quality of ``a`` and ``b`` (TrueSkill's, with the model's beta):
    near 1 for two certain equals, near 0 when the result is foregone."""
    beta2 = model().beta ** 2
    c2 = 2 * beta2 + a.sigma ** 2 + b.sigma ** 2
    return math.sqrt(2 * beta2 / c2) * math.exp(-((a.mu - b.mu) ** 2) / (2 * c2))


Met = Mapping[tuple[int, int], int]  # (lower id, higher id) -> the number of the last set they shared


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _weights(pool: Sequence[Candidate], met: Met, now: int, players: int) -> dict[tuple[int, int], float]:
    """The score of each pair that may share a table (rule 2 of the module)."""
    prior_sigma = model().sigma
    period = len(pool) / players  # the sets between two of a bot's sets, on average
    wait = {c.bot_id: WAIT * min(2.0, (now - c.last) / period) / (players - 1) for c in pool}
    ranked = sorted(pool, key=lambda c: (-ordinal(c.mu, c.sigma), c.bot_id))
    near = {_pair(a.bot_id, b.bot_id): NEAR[d - 1] for d in range(len(NEAR), 0, -1)
            for a, b in zip(ranked, ranked[d:], strict=False)}
    weights: dict[tuple[int, int], float] = {}
    for a, b in itertools.combinations(pool, 2):
        key = _pair(a.bot_id, b.bot_id)
        w = pair_quality(a, b) * (a.sigma + b.sigma) / (2 * prior_sigma)
        if key in near:  # neighbours in the standings, or nearly
            w += near[key] * (now - met.get(key, -1)) / (2 * period)
        weights[key] = w + wait[a.bot_id] + wait[b.bot_id]
    return weights


def _score(table: Sequence[Candidate], weights: Mapping[tuple[int, int], float]) -> float:
    return sum(weights[_pair(a.bot_id, b.bot_id)] for a, b in itertools.combinations(table, 2))


def choose_table(pool: Sequence[Candidate], players: int, *, max_busy: int, slack: float,
                 rng: random.Random, met: Met | None = None, now: int = 0) -> tuple[int, ...] | None:
    """The bot ids of the next table (in the order they sit before rotation), or None when
    fewer than ``players`` members may play now. See the module's rules; ``met`` and ``now``
    (the number of the set being chosen) give the sets since two bots last met."""
    free = sorted((c for c in pool if c.busy < max_busy), key=lambda c: (c.load, c.bot_id))
    if len(free) < players:
        return None
    # Rule 1: a table's highest load is at least the players-th lowest: every bot more than
    # slack below that must sit; the others may if within slack of the lowest left out.
    kth = free[players - 1].load
    must = [c for c in free if c.load < kth - slack]
    maybe = [c for c in free if c not in must and c.load <= kth + slack]

    def fair(table: Sequence[Candidate]) -> bool:
        seated = {c.bot_id for c in table}
        out = next((c.load for c in free if c.bot_id not in seated), math.inf)
        return max(c.load for c in table) <= out + slack

    weights = _weights(pool, met or {}, now, players)
    need = players - len(must)
    if math.comb(len(maybe), need) <= MAX_TABLES:
        tables = [t for t in ((*must, *rest) for rest in itertools.combinations(maybe, need)) if fair(t)]
    else:  # greedy from each bot: add the one that raises the score most, while the table stays fair
        tables = []
        for start in rng.sample(maybe, min(len(maybe), GREEDY_STARTS)):
            table = [*must, start]
            while len(table) < players:
                table.append(max((c for c in maybe if c not in table),
                                 key=lambda c, t=table: sum(weights[_pair(c.bot_id, x.bot_id)]  # type: ignore[misc]
                                                            for x in t)))
            if fair(table):
                tables.append(tuple(table))
    tables = tables or [tuple(free[:players])]
    rng.shuffle(tables)  # ties go to a seeded random table
    best = max(tables, key=lambda t: _score(t, weights))
    order = list(best)
    rng.shuffle(order)  # the seating order: rotations and the mirror cover every seat anyway
    return tuple(c.bot_id for c in order)


def catch_up(loads: Mapping[int, float], size: int, slack: float) -> dict[int, float]:
    """Rule 3: what to add to the baseline of each member of the pool (``loads``: bot id ->
    load) more than ``slack`` plus one set (``size`` games) below the mean of the others, so that
    its load is that mean. Members within that reach (every member that was there all along)
    get nothing."""
    raised: dict[int, float] = {}
    if len(loads) < 2:
        return raised
    total = sum(loads.values())
    for bot, load in loads.items():
        mean = (total - load) / (len(loads) - 1)
        if load < mean - slack - size:
            raised[bot] = mean - load
    return raised


@dataclass
class Plan:
    """What one tick schedules: the tables in order, and the baselines raised (bot -> games)."""

    tables: list[tuple[int, ...]]
    raised: dict[int, float]


def plan(pool: Sequence[Candidate], players: int, size: int, *, room: int, max_busy: int,
         first: int, met: Met, rng: random.Random, slack_sets: float = SLACK_SETS) -> Plan:
    """Up to ``room`` tables for the sets numbered from ``first``, among ``pool`` (the
    connected members, each with its load and busy count), by the module's rules."""
    slack = slack_sets * size
    raised = catch_up({c.bot_id: c.load for c in pool}, size, slack)
    now = {c.bot_id: replace(c, load=c.load + raised.get(c.bot_id, 0.0)) for c in pool}
    seen = dict(met)
    tables: list[tuple[int, ...]] = []
    for number in range(first, first + room):
        table = choose_table(list(now.values()), players, max_busy=max_busy, slack=slack, rng=rng,
                             met=seen, now=number)
        if table is None:
            break
        tables.append(table)
        for bot in table:
            c = now[bot]
            now[bot] = replace(c, load=c.load + size, busy=c.busy + 1, last=number)
        for a, b in itertools.combinations(table, 2):
            seen[_pair(a, b)] = number
    return Plan(tables, raised)
