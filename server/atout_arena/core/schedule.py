"""Tournament schedules: who sits in which seat of which match, and with which seed.

Plain functions, no I/O (DESIGN.md, "Matches, faults, tournaments"):

- :func:`round_robin` for 2-player games: every pair of bots meets, in both seatings;
- :func:`tables` for games of 3 to 7 players: tables chosen so every pair of bots meets equally
  often, as near as the numbers allow, with seats rotated.

Both return a list of :class:`ScheduledMatch`. What they guarantee:

- ``games_per_pairing`` is how many games each pair of bots plays together, in total over every
  seating. Every pair plays **at least** that many; exactly that many when the numbers allow
  (always in a round robin without ``duplicate``). Where they do not, some pairs meet more
  often: the designs keep the schedule short and the pair counts within 1 of each other in
  most cases, within 2 in a few (14 bots at 7-player tables, for one).
- Every bot plays the same number of matches, so standings by points are fair.
- Seats rotate: each bot sits in each seat equally often, or within one game of it.
- With ``duplicate=True`` every seeded deal is played in every seat rotation of its table (a
  *deal group*: ``k`` matches for ``k`` players, bot in base seat ``i`` moving to seat
  ``(i + r) % k`` in rotation ``r``), so the luck of the cards cancels out. Games are then
  counted in whole deal groups: a pair meets a multiple of ``k`` times, and
  ``games_per_pairing`` is rounded up to it.
- Seeds derive from the tournament ``seed``, the deal group and, in the arena, the
  competition's secret deal ``key`` (:func:`deal_seed`): the same arguments give the same
  schedule, and every match of a deal group has the same ``seed``.

Bots are any hashable ids (a bot's database id or its name), in the order given; the schedule
depends on that order only through which bot gets which index.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

# A bot as the caller names it (an id, a name): the schedule seats the same kind.
BotId = TypeVar("BotId", bound=Hashable)

_COMPLETE_LIMIT = 5000  # above this many combinations of k bots, no complete design
_BLOCK_LIMIT = 5000  # above this many base blocks, the cyclic design tries a fixed sample
# Above this much work (chosen blocks cubed x (candidate blocks x distances + a scan's overhead))
# the cyclic design keeps its greedy blocks unpolished: the swaps and the "one round fewer" tries
# cost about that, and the schedule must be built within a second (the API builds it while
# answering the request that creates the tournament). Large designs are near their lower bound
# already.
_POLISH_LIMIT = 50_000_000


@dataclass(frozen=True)
class ScheduledMatch(Generic[BotId]):
    """One match of a schedule.

    ``seats[s]`` is the bot in seat ``s``. Matches of the same ``deal_group`` share ``seed``
    (with ``duplicate`` they are the rotations ``0..k-1`` of one table; without it every match
    is its own group, rotation 0).
    """

    index: int
    seats: tuple[BotId, ...]
    seed: int
    deal_group: int
    rotation: int


def deal_seed(tournament_seed: int, deal_group: int, key: str | None = None) -> int:
    """The seed of a deal group: 63 bits (it fits a signed 64-bit column), stable across runs.

    With ``key`` (a competition's secret deal key, hex: :mod:`atout_arena.core.deals`) it is an
    HMAC of the seed and the group, which nobody computes without the key; without, a plain
    hash of them (anyone who knows the seed can)."""
    digest = _keyed_digest(f"atout/schedule/{tournament_seed}/{deal_group}".encode(), key)
    return int.from_bytes(digest[:8], "big") >> 1


def _keyed_digest(message: bytes, key: str | None) -> bytes:
    """SHA-256 HMAC of ``message`` under the hex ``key``; a plain SHA-256 without a key."""
    if key is None:
        return hashlib.sha256(message).digest()
    return hmac.digest(bytes.fromhex(key), message, "sha256")  # one-shot: 3x hmac.new's speed


def deal_suits(competition_seed: int, deal_group: int, rotation: int, key: str | None = None) -> str:
    """The suit permutation that disguises ``rotation`` of a duplicate deal group, so a bot does not
    recognise a deal it already played: a text for ``new_state(suit_permutation=...)`` (``"hdsc"``:
    clubs become hearts...).

    The 24 permutations of ``cdhs`` are put in an order drawn from an HMAC of the group under
    the competition's secret ``key`` (a plain hash without one), and rotation ``r`` takes the
    ``r``-th: the rotations of a group (fewer than 24) never share a permutation, and nobody
    computes them without the key. Published with the key once the competition is over, like
    the seeds."""
    draws = int.from_bytes(_keyed_digest(f"atout/suits/{competition_seed}/{deal_group}".encode(), key), "big")
    order = ["".join(p) for p in itertools.permutations("cdhs")]
    for i in range(len(order) - 1, 0, -1):  # Fisher-Yates on the digest's digits
        draws, j = divmod(draws, i + 1)
        order[i], order[j] = order[j], order[i]
    return order[rotation % len(order)]


def round_robin(
    bots: Sequence[BotId], games_per_pairing: int, *, seed: int = 0, duplicate: bool = False,
    key: str | None = None,
) -> list[ScheduledMatch[BotId]]:
    """Every pair of bots plays ``games_per_pairing`` games, split over both seatings.

    ``games_per_pairing`` counts the games of a pair **in total**: 6 means 3 with each bot in
    seat 0. When it is odd, one seating gets the extra game; which one alternates around the
    circle so that every bot still sits in seat 0 for half its games (within one). With
    ``duplicate=True`` each deal is played in both seatings, so a pair plays
    ``games_per_pairing`` rounded up to an even number.

    With N bots that makes ``N (N-1) / 2 * games_per_pairing`` matches: for an even count,
    each of the N (N-1) seatings ``games_per_pairing / 2`` times. Matches come in passes over
    all pairs, each pass in rounds where no bot plays twice.
    """
    ids = _check_bots(bots, 2)
    _check_count("games_per_pairing", games_per_pairing)
    _check_seed(seed)
    pairs = [pair for rnd in _circle_rounds(len(ids)) for pair in rnd]
    if duplicate:
        passes = math.ceil(games_per_pairing / 2)
        return _expand(ids, [pair for _ in range(passes) for pair in pairs], seed, duplicate=True, key=key)
    # Pass g plays the base seating when g is even, the other one when g is odd: an odd count
    # gives the base seating the extra game, and the base seatings are balanced per bot.
    design = [pair if g % 2 == 0 else pair[::-1] for g in range(games_per_pairing) for pair in pairs]
    return _expand(ids, design, seed, duplicate=False, key=key)


def tables(
    bots: Sequence[BotId],
    players_per_table: int,
    games_per_pairing: int,
    *,
    seed: int = 0,
    duplicate: bool = False,
    key: str | None = None,
) -> list[ScheduledMatch[BotId]]:
    """Tables of ``players_per_table`` bots, so that every pair meets ``games_per_pairing`` times.

    Each pair of bots sits together in at least ``games_per_pairing`` games (see the module
    docstring). How the tables are chosen, for N bots and k players:

    - N == k: every table is everyone, seats rotating from one game to the next;
    - otherwise the fewest tables among these balanced designs (ties go to the more even one):

      * *cyclic*: number the bots 0..N-1 and pick base blocks of k numbers; each block gives the
        N tables "block + i (mod N)". In those N tables every bot plays k times, once in each
        seat, and how often a pair meets depends only on the distance between its numbers, so
        blocks are picked greedily to bring every distance up to the target, evenly;
      * *complete*: every combination of k bots, as many copies as needed (when C(N, k) is
        small): every pair meets exactly C(N-2, k-2) times per copy; the remainder may be made
        up with cyclic rounds. Listed along the same cycles, so seats are balanced (the few
        shorter cycles get theirs from an equitable edge colouring).

    ``players_per_table == 2`` is :func:`round_robin`.
    """
    k = players_per_table
    if not isinstance(k, int) or isinstance(k, bool) or k < 2:
        raise ValueError(f"players_per_table must be an integer >= 2, not {k!r}")
    ids = _check_bots(bots, k)
    _check_count("games_per_pairing", games_per_pairing)
    _check_seed(seed)
    if k == 2:
        return round_robin(ids, games_per_pairing, seed=seed, duplicate=duplicate, key=key)
    n = len(ids)
    # Design meetings per pair: a deal group is k games for every pair at its table.
    target = math.ceil(games_per_pairing / k) if duplicate else games_per_pairing
    if n == k:
        everyone = tuple(range(k))
        design = [everyone if duplicate else _rotate(everyone, g) for g in range(target)]
    else:
        design = _balanced_design(n, k, target)
    return _expand(ids, design, seed, duplicate=duplicate, key=key)


# -- checks ------------------------------------------------------------------------------------


def _check_bots(bots: Sequence[BotId], players: int) -> list[BotId]:
    ids = list(bots)
    if len(ids) < players:
        raise ValueError(f"need at least {players} bots for {players}-player tables, got {len(ids)}")
    seen: set[BotId] = set()
    twice: list[BotId] = []
    for bot in ids:
        if bot in seen and bot not in twice:
            twice.append(bot)
        seen.add(bot)
    if twice:
        listed = ", ".join(map(repr, twice))
        raise ValueError(f"each bot may be entered once; entered more than once: {listed}")
    return ids


def _check_count(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, not {value!r}")


def _check_seed(seed: int) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, not {seed!r}")


# -- output ------------------------------------------------------------------------------------


def _rotate(table: tuple[int, ...], r: int) -> tuple[int, ...]:
    """The bot in seat ``p`` of ``table`` moves to seat ``(p + r) % k``."""
    if r == 0:
        return table
    k = len(table)
    return tuple(table[(s - r) % k] for s in range(k))


def _expand(
    ids: list[BotId], design: Sequence[tuple[int, ...]], seed: int, *, duplicate: bool, key: str | None
) -> list[ScheduledMatch[BotId]]:
    """Matches from a design (bot indices in seat order): one deal group per design table."""
    matches: list[ScheduledMatch[BotId]] = []
    for group, table in enumerate(design):
        group_seed = deal_seed(seed, group, key)
        for rotation in range(len(table) if duplicate else 1):
            seats = tuple(ids[b] for b in _rotate(table, rotation))
            matches.append(ScheduledMatch(len(matches), seats, group_seed, group, rotation))
    return matches


# -- round robin -------------------------------------------------------------------------------


def _circle_rounds(n: int) -> list[list[tuple[int, int]]]:
    """All pairs of ``range(n)`` in rounds where nobody plays twice (the circle method).

    Each pair is oriented by distance around the circle: ``a`` takes seat 0 against ``b`` when
    ``b - a (mod n)`` is below ``n/2`` (at exactly ``n/2``, the lower half takes it), so every
    bot has seat 0 in ``(n-1)/2`` of its games, rounded up or down.
    """
    m = n + n % 2  # a bye for odd n
    ring = list(range(m))
    rounds: list[list[tuple[int, int]]] = []
    for _ in range(m - 1):
        rnd = []
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if a < n and b < n:
                d = (b - a) % n
                rnd.append((a, b) if 2 * d < n or (2 * d == n and a < n // 2) else (b, a))
        rounds.append(rnd)
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


# -- balanced designs for k >= 3 ---------------------------------------------------------------


def _pair_spread(n: int, design: list[tuple[int, ...]]) -> int:
    counts = dict.fromkeys(itertools.combinations(range(n), 2), 0)
    for table in design:
        for a, b in itertools.combinations(sorted(table), 2):
            counts[a, b] += 1
    return max(counts.values()) - min(counts.values())


def _balanced_design(n: int, k: int, target: int) -> list[tuple[int, ...]]:
    """The fewest tables (then the most even) among the designs of :func:`tables`."""
    options = [_cyclic_design(n, k, target)]
    if math.comb(n, k) <= _COMPLETE_LIMIT:
        per_copy = math.comb(n - 2, k - 2)  # meetings of each pair in one copy
        copies, rest = divmod(target, per_copy)
        if copies and rest:
            options.append(_complete_design(n, k, copies) + _cyclic_design(n, k, rest))
        options.append(_complete_design(n, k, math.ceil(target / per_copy)))
    return min(options, key=lambda design: (len(design), _pair_spread(n, design)))


def _complete_design(n: int, k: int, copies: int) -> list[tuple[int, ...]]:
    """Every k-subset of ``range(n)``, ``copies`` times, listed cycle by cycle (subset + i mod n).

    Along a full cycle of n tables each bot sits once in each seat. A few subsets are fixed by
    a smaller shift (n = 6: {0, 2, 4}); the tables of those short cycles get their seats by
    :func:`_balance_seats`.
    """
    seen: set[frozenset[int]] = set()
    full: list[tuple[int, ...]] = []
    short: list[tuple[int, ...]] = []
    for block in itertools.combinations(range(n), k):
        if frozenset(block) in seen:
            continue
        cycle = []
        for i in range(n):
            table = tuple((b + i) % n for b in block)
            if frozenset(table) in seen:
                break
            seen.add(frozenset(table))
            cycle.append(table)
        (full if len(cycle) == n else short).extend(cycle)
    short = _balance_seats(short * copies, k)
    per_copy = len(short) // copies
    return [t for c in range(copies) for t in full + short[c * per_copy : (c + 1) * per_copy]]


def _balance_seats(design: list[tuple[int, ...]], k: int) -> list[tuple[int, ...]]:
    """Seat the bots of each table so each bot uses every seat equally often, within one.

    An equitable edge colouring of the bipartite graph tables–bots, with seats as colours (de
    Werra): bot b's j-th table goes to the node (b, j // k), so every node has at most k edges;
    a proper k-colouring of that graph (König) gives every table each seat once and every bot
    each seat ``floor(r/k)`` or ``ceil(r/k)`` times in its ``r`` tables. Each edge is coloured
    in turn, after swapping the two colours along an alternating path if needed.
    """
    edges: list[tuple[int, tuple[int, int]]] = []
    appearances: Counter[int] = Counter()
    for t, table in enumerate(design):
        for b in table:
            edges.append((t, (b, appearances[b] // k)))
            appearances[b] += 1
    colour = [-1] * len(edges)
    at_table: list[list[int | None]] = [[None] * k for _ in design]
    at_bot: dict[tuple[int, int], list[int | None]] = {}

    def ends(e: int) -> tuple[list[int | None], list[int | None]]:
        t, node = edges[e]
        return at_table[t], at_bot[node]

    for e, (t, node) in enumerate(edges):
        slots = at_bot.setdefault(node, [None] * k)
        a = at_table[t].index(None)  # free at the table
        b = slots.index(None)  # free at the bot
        if slots[a] is not None:
            # The path from the bot along colours a, b, a, ... never reaches this table (a is
            # free there): swapping a and b on it frees a at the bot.
            path, here, c = [], slots, a
            while (f := here[c]) is not None:
                path.append(f)
                table_end, bot_end = ends(f)
                here = table_end if here is bot_end else bot_end
                c = b if c == a else a
            for f in path:
                for end in ends(f):
                    end[colour[f]] = None
            for f in path:
                colour[f] = b if colour[f] == a else a
                for end in ends(f):
                    end[colour[f]] = f
        colour[e] = a
        at_table[t][a] = slots[a] = e
    seated: list[list[int]] = [[0] * k for _ in design]
    for e, (t, (b, _)) in enumerate(edges):
        seated[t][colour[e]] = b
    return [tuple(table) for table in seated]


def _cyclic_design(n: int, k: int, target: int) -> list[tuple[int, ...]]:
    """Rounds of n tables ``block + i (mod n)``, until every pair has met ``target`` times.

    A pair at circular distance ``d`` meets once per pair of block elements at distance ``d``
    in a round (twice when ``d == n/2``: both orders land on the same pairs), so ``met[d]``,
    the meetings of each pair at distance ``d``, is all that matters. Blocks are picked
    greedily (the most missing meetings covered, then the most even counts), then improved by
    swapping one block at a time, and with one round fewer while that still covers every pair.
    """
    weight = np.array([n if 2 * d < n else n // 2 for d in range(1, n // 2 + 1)])  # pairs at d
    blocks = _candidate_blocks(n, k)
    gains = np.zeros((len(blocks), len(weight)), dtype=np.int64)
    for row, block in enumerate(blocks):
        for a, b in itertools.combinations(block, 2):
            d = min((a - b) % n, (b - a) % n)
            gains[row, d - 1] += 2 if 2 * d == n else 1

    def scores(met: np.ndarray) -> tuple[Any, Any, Any]:
        """Missing meetings, spread and sum of squares (lower is better), over the last axis."""
        missing = (weight * np.maximum(target - met, 0)).sum(axis=-1)
        return missing, met.max(axis=-1) - met.min(axis=-1), (weight * met**2).sum(axis=-1)

    def improve(chosen: list[int]) -> list[int]:
        """Swap one block at a time for the best other one while the score goes down."""
        chosen = list(chosen)
        met = gains[chosen].sum(axis=0)
        for _ in range(100):  # each swap lowers the score; the bound only caps the time
            changed = False
            for pos in range(len(chosen)):
                rest = met - gains[chosen[pos]]
                missing, spread, evenness = scores(rest + gains)
                best = int(np.lexsort((evenness, spread, missing))[0])  # stable: ties go first
                if (missing[best], spread[best], evenness[best]) < scores(met):
                    chosen[pos] = best
                    met, changed = rest + gains[best], True
            if not changed:
                break
        return chosen

    chosen = _greedy_blocks(gains, weight, target)
    if len(chosen) ** 3 * (gains.size + 3000) > _POLISH_LIMIT:
        return [tuple((b + i) % n for b in blocks[c]) for c in chosen for i in range(n)]
    chosen = improve(chosen)
    # Then try one round fewer: drop any one block, and repair by swaps.
    while len(chosen) > 1:
        tries = (improve(chosen[:drop] + chosen[drop + 1 :]) for drop in range(len(chosen)))
        fewer = next((t for t in tries if scores(gains[t].sum(axis=0))[0] == 0), None)
        if fewer is None:
            break
        chosen = fewer
    return [tuple((b + i) % n for b in blocks[c]) for c in chosen for i in range(n)]


def _greedy_blocks(gains: np.ndarray, weight: np.ndarray, target: int) -> list[int]:
    """Greedy: the block covering the most missing meetings, then the most even.

    Far from the target (every distance still misses at least a block's largest gain), every
    block covers the same number of missing meetings, and the evenness ranking does not change
    when every count moves by the same amount (each block adds the same total), so the choice
    depends only on ``met - met.min()``. When that state comes back, the blocks chosen since
    repeat: whole periods are added at once, as long as they stay far from the target. The
    result is exactly the step-by-step greedy's, in a few hundred steps at most.
    """
    met = np.zeros(len(weight), dtype=np.int64)
    chosen: list[int] = []
    seen: dict[bytes, int] = {}
    far = int(gains.max())
    flat = (weight * gains).sum(axis=1)
    squares = (weight * gains**2).sum(axis=1)
    while met.min() < target:
        if target - met.max() >= far:
            state = (met - met.min()).tobytes()
            if state in seen:
                start = seen[state]
                period = chosen[start:]
                shift = int(met.min() - (met - gains[period].sum(axis=0)).min())
                # After j more periods the counts are met + j * shift: stay far from the target.
                periods = max(0, (target - far - int(met.max())) // shift) if shift > 0 else 0
                chosen.extend(period * periods)
                met = met + shift * periods
                seen.clear()
                if periods:
                    continue
            else:
                seen[state] = len(chosen)
        if target - met.max() >= far:
            useful = flat  # every block covers its whole gain
        else:
            useful = (weight * np.minimum(gains, np.maximum(target - met, 0))).sum(axis=1)
        # sum(weight * (met + gains) ** 2) per block, less what is the same for every block.
        evenness = gains @ (2 * weight * met) + squares
        best = int(np.lexsort((evenness, -useful))[0])
        chosen.append(best)
        met = met + gains[best]
    return chosen


def _candidate_blocks(n: int, k: int) -> list[tuple[int, ...]]:
    """Base blocks ``(0, ...)``: all of them, or a fixed sample when there are too many."""
    if math.comb(n - 1, k - 1) <= _BLOCK_LIMIT:
        return [(0, *rest) for rest in itertools.combinations(range(1, n), k - 1)]
    rng = random.Random(f"atout/blocks/{n}/{k}")  # a fixed sample: the schedule stays deterministic
    sample = {tuple(sorted(rng.sample(range(1, n), k - 1))) for _ in range(_BLOCK_LIMIT)}
    return [(0, *rest) for rest in sorted(sample)]
