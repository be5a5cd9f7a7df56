"""Elo ratings: an online update as each match ends, and a batch fit at the end of a tournament.

Plain functions, no I/O (DESIGN.md, "Ratings"). Both read a match as its seats (bot ids) and
its ranking (place per seat, 1 = best, ties share the better place: RULES.md, "Results"). An
n-player ranking counts as the pairwise results it implies: the better place scores 1, an equal
place 0.5 (:func:`pairwise_results`). A bot that forfeited is simply last in the ranking.

Who is rated is one rule, :func:`rated_result`: only played, present seats (not those of an
absent bot, nor of a bot disabled by the time the result was stored), among themselves.

Everything is on the Elo scale: ``P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400))``, a new
bot starts at 1500.

**Online** (:func:`elo_update`): every pairwise result of a match moves both bots by
``k / (n - 1) * (score - expected)``, all from the ratings before the match, so the sum of the
ratings is unchanged and a bot's total move in an n-player match is the size of one
2-player game's.

**Batch** (:func:`fit`, :func:`fit_ratings`): the maximum a posteriori Bradley–Terry fit of all
pairwise results, with these decisions:

- a draw (an equal place) is half a win for each side, as in the Elo score;
- the pairwise results of one n-player match are not independent (a bot that beats one
  opponent is likely high in the ranking and beats others too), so each counts with weight
  ``3 / (n + 1)`` (1 for 2 players, 0.6 for 4, 0.375 for 7): under equal strengths a bot's
  pairwise score in one match has variance ``(n^2 - 1) / 12`` instead of the ``(n - 1) / 4``
  of independent games, and the weight makes the Fisher information match it, so confidence
  intervals keep their 95% (it rescales the likelihood only: with one table size the fit is
  the same up to the prior);
- a weak prior, every rating normal around 1500 with ``prior_sd`` = 400 Elo (the information
  of about three quarters of one game between equals): a bot that never lost gets a finite
  rating (60 wins and no loss against a field put it about 800 above it, and its distance
  grows with the log of its number of wins), and a bot with many games hardly feels it. The
  likelihood depends only on rating differences, so the fit has mean 1500;
- 95% confidence intervals from the inverse of the observed Fisher information (the Hessian
  of the log posterior at the fit) under the constraint that the mean stays 1500: they say how
  sure each rating is relative to the field, not to an outside scale;
- the likelihood of superiority of ``a`` over ``b`` is ``Φ((R_a - R_b) / sd(R_a - R_b))``
  with the covariance of the fit (:meth:`RatingFit.likelihood_of_superiority`); each
  :class:`Rating` carries it against the next bot in the list.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np

# A bot as the caller names it (an id, a name): the results come back with the same kind.
BotId = TypeVar("BotId", bound=Hashable)
_Bot_co = TypeVar("_Bot_co", bound=Hashable, covariant=True)



class Ranked(Protocol[_Bot_co]):
    """A match's result as an object (:class:`atout_arena.core.standings.MatchResult`)."""

    @property
    def seats(self) -> Sequence[_Bot_co]: ...

    @property
    def ranking(self) -> Sequence[int]: ...


DEFAULT_RATING = 1500.0
ELO_K = 24.0
PRIOR_SD = 400.0
Z95 = 1.959963984540054  # two-sided 95% normal quantile
_SLOPE = math.log(10) / 400  # d/dR of the log-odds of a win


def expected_score(rating: float, opponent: float) -> float:
    """The Elo expectation of ``rating`` against ``opponent``: P(win) + P(draw) / 2."""
    odds: float = 10.0 ** ((opponent - rating) / 400.0)  # of the opponent
    return 1.0 / (1.0 + odds)


def pairwise_results(ranking: Sequence[int]) -> list[tuple[int, int, float]]:
    """``(i, j, score of seat i against seat j)`` for every pair of seats ``i < j``.

    The better (smaller) place scores 1, an equal place 0.5: ranking ``[1, 1, 3]`` gives
    ``[(0, 1, 0.5), (0, 2, 1.0), (1, 2, 1.0)]``.
    """
    _check_ranking(ranking)
    results = []
    for i in range(len(ranking)):
        for j in range(i + 1, len(ranking)):
            a, b = ranking[i], ranking[j]
            results.append((i, j, 1.0 if a < b else 0.5 if a == b else 0.0))
    return results


@dataclass(frozen=True)
class RatedSeat(Generic[BotId]):
    """One seat of a finished match, as the rating rule reads it (:func:`rated_result`).

    ``place`` is the seat's place in the stored ranking (None: none stored); ``absent``: its
    bot never connected (the seat forfeited from the start, every decision a fallback);
    ``disabled``: its bot was disabled by the time the result was stored (its decisions since
    the disable were fallbacks: the organizer's act, not the bot's play)."""

    bot: BotId
    place: int | None
    absent: bool = False
    disabled: bool = False


def rated_result(
    seats: Sequence[RatedSeat[BotId]],
) -> tuple[tuple[BotId, ...], tuple[int, ...]] | None:
    """The rule of who a match rates, the one place it is written (live Elo, batch fits, the
    leaderboard, ladders): ``(bots, places)`` of its rated seats, in seat order, or None when
    it rates nobody.

    Only played, present seats are rated: a seat whose bot was absent, or disabled by the time
    the result was stored, is left out, and the others are rated among themselves by their own
    places (the pairwise results between them); a seat with no place is never rated. A match
    left with fewer than two such seats, or with one bot in two of them, rates nobody.
    """
    kept = [s for s in seats if not (s.absent or s.disabled)
            and isinstance(s.place, int | np.integer) and not isinstance(s.place, bool) and s.place >= 1]
    bots = tuple(s.bot for s in kept)
    if len(kept) < 2 or len(set(bots)) != len(bots):
        return None
    return bots, tuple(int(s.place) for s in kept if s.place is not None)


def elo_update(
    ratings: Mapping[BotId, float], seats: Sequence[BotId], ranking: Sequence[int], k: float = ELO_K
) -> dict[BotId, float]:
    """The ratings after one match: a new dict, ``ratings`` is not changed.

    Bots not in ``ratings`` start at :data:`DEFAULT_RATING`. All pairwise results are applied
    at once from the ratings before the match, with ``k / (n - 1)`` each.
    """
    _check_match(seats, ranking)
    if not k > 0:
        raise ValueError(f"k must be > 0, not {k!r}")
    before = [float(ratings.get(bot, DEFAULT_RATING)) for bot in seats]
    step = k / (len(seats) - 1)
    moves = [0.0] * len(seats)
    for i, j, score in pairwise_results(ranking):
        move = step * (score - expected_score(before[i], before[j]))
        moves[i] += move
        moves[j] -= move
    after = dict(ratings)
    for bot, rating, move in zip(seats, before, moves, strict=True):
        after[bot] = rating + move
    return after


@dataclass(frozen=True)
class Rating(Generic[BotId]):
    """One bot's line in a fitted table.

    ``games`` counts its matches, ``score`` its share of pairwise points (0..1: 1 per opponent
    placed below it, 0.5 per opponent sharing its place), ``los`` the likelihood of
    superiority over the next bot in the list (None for the last one).
    """

    bot: BotId
    elo: float
    ci_low: float
    ci_high: float
    games: int
    score: float
    los: float | None = None


@dataclass(frozen=True, eq=False)
class RatingFit(Generic[BotId]):
    """A batch fit: the ratings, best first, and the covariance of the fitted values."""

    ratings: tuple[Rating[BotId], ...]
    bots: tuple[BotId, ...]  # the order of the covariance's rows
    covariance: np.ndarray  # Elo^2, under the mean-1500 constraint

    def rating(self, bot: BotId) -> Rating[BotId]:
        for line in self.ratings:
            if line.bot == bot:
                return line
        raise KeyError(bot)

    def likelihood_of_superiority(self, a: BotId, b: BotId) -> float:
        """P(a is stronger than b) given the results: ``Φ(diff / sd(diff))``."""
        diff = self.rating(a).elo - self.rating(b).elo  # KeyError for a bot not in the fit
        return _los(diff, self.covariance, self.bots.index(a), self.bots.index(b))


def fit(
    matches: Iterable[tuple[Sequence[BotId], Sequence[int]] | Ranked[BotId]], *, prior_sd: float = PRIOR_SD
) -> RatingFit[BotId]:
    """Fit Elo ratings to a tournament's matches (see the module docstring for the model).

    ``matches`` holds ``(seats, ranking)`` pairs, or objects with ``seats`` and ``ranking``
    attributes. Bots are listed best first; equal ratings keep the order of first appearance.
    """
    if not (isinstance(prior_sd, int | float) and 0 < prior_sd < math.inf):
        raise ValueError(f"prior_sd must be a positive, finite number of Elo points, not {prior_sd!r}")
    index: dict[BotId, int] = {}
    rows: list[tuple[list[int], list[tuple[int, int, float]]]] = []
    for match in matches:
        seats: Sequence[BotId]
        ranking: Sequence[int]
        if isinstance(match, tuple):
            seats, ranking = match
        else:
            seats, ranking = match.seats, match.ranking
        _check_match(seats, ranking)
        rows.append(([index.setdefault(bot, len(index)) for bot in seats], pairwise_results(ranking)))
    n = len(index)
    if n == 0:
        return RatingFit((), (), np.zeros((0, 0)))
    points = np.zeros((n, n))  # weighted points of i against j
    games = np.zeros((n, n))  # weighted pairwise games of i and j (symmetric)
    raw_points, raw_pairs, matches_played = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
    for seat_bots, results in rows:
        weight = 3.0 / (len(seat_bots) + 1)
        matches_played[seat_bots] += 1
        for i, j, score in results:
            a, b = seat_bots[i], seat_bots[j]
            points[a, b] += weight * score
            points[b, a] += weight * (1.0 - score)
            games[a, b] += weight
            games[b, a] += weight
            raw_points[a] += score
            raw_points[b] += 1.0 - score
            raw_pairs[[a, b]] += 1
    elo, covariance = _fit_map(points, games, 1.0 / prior_sd**2)
    sd = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    bots = tuple(index)
    order = sorted(range(n), key=lambda i: -elo[i])  # stable: ties keep first appearance
    lines = []
    for rank, i in enumerate(order):
        below = order[rank + 1] if rank + 1 < n else None
        los = None if below is None else _los(float(elo[i] - elo[below]), covariance, i, below)
        lines.append(
            Rating(
                bot=bots[i],
                elo=float(elo[i]),
                ci_low=float(elo[i] - Z95 * sd[i]),
                ci_high=float(elo[i] + Z95 * sd[i]),
                games=int(matches_played[i]),
                score=float(raw_points[i] / raw_pairs[i]) if raw_pairs[i] else 0.5,
                los=los,
            )
        )
    return RatingFit(tuple(lines), bots, covariance)


def fit_ratings(
    matches: Iterable[tuple[Sequence[BotId], Sequence[int]] | Ranked[BotId]], *, prior_sd: float = PRIOR_SD
) -> list[Rating[BotId]]:
    """The ratings of :func:`fit`, best first."""
    return list(fit(matches, prior_sd=prior_sd).ratings)


# -- internals ---------------------------------------------------------------------------------


def _los(diff: float, covariance: np.ndarray, i: int, j: int) -> float:
    """``Φ(diff / sd(diff))`` for the ratings of rows ``i`` and ``j``."""
    var = covariance[i, i] + covariance[j, j] - 2.0 * covariance[i, j]
    if var <= 0.0:
        return 0.5 if diff == 0 else float(diff > 0)
    return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def _fit_map(points: np.ndarray, games: np.ndarray, precision: float) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method on the log posterior; returns ratings and their constrained covariance.

    ``x`` is rating - 1500. The log posterior is concave (strictly, thanks to the prior), so
    Newton with step halving converges from 0.
    """
    n = len(points)

    def log_posterior(x: np.ndarray) -> float:
        # log P(i beats j) = -log(1 + exp(-slope (x_i - x_j)))
        log_p = -np.logaddexp(0.0, -_SLOPE * (x[:, None] - x[None, :]))
        return float((points * log_p).sum() - 0.5 * precision * (x @ x))

    def win(x: np.ndarray) -> np.ndarray:  # P(i beats j), without overflow
        p: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * _SLOPE * (x[:, None] - x[None, :])))
        return p

    def hessian(x: np.ndarray) -> np.ndarray:  # minus the Hessian: the observed information
        p = win(x)
        info = _SLOPE**2 * games * p * (1.0 - p)
        minus: np.ndarray = np.diag(info.sum(axis=1) + precision) - info
        return minus

    x = np.zeros(n)
    value = log_posterior(x)
    for _ in range(200):
        gradient = _SLOPE * (points - games * win(x)).sum(axis=1) - precision * x
        step = np.linalg.solve(hessian(x), gradient)
        scale = 1.0
        while scale > 1e-9:
            trial = x + scale * step
            trial_value = log_posterior(trial)
            if trial_value >= value - 1e-12:
                break
            scale /= 2
        x, value = trial, trial_value
        if np.max(np.abs(scale * step)) < 1e-7:
            break
    x -= x.mean()  # exact at the optimum already: the likelihood only sees differences
    # Covariance under sum(x) = 0: the top-left block of the inverse bordered matrix.
    bordered = np.zeros((n + 1, n + 1))
    bordered[:n, :n] = hessian(x)
    bordered[:n, n] = bordered[n, :n] = 1.0
    covariance = np.linalg.inv(bordered)[:n, :n]
    return DEFAULT_RATING + x, (covariance + covariance.T) / 2


def _check_ranking(ranking: Sequence[int]) -> None:
    for place in ranking:
        if not isinstance(place, int | np.integer) or isinstance(place, bool) or place < 1:
            raise ValueError(f"a ranking holds places 1, 2, ... (1 = best), not {list(ranking)!r}")


def _check_match(seats: Sequence[BotId], ranking: Sequence[int]) -> None:
    if len(seats) < 2:
        raise ValueError(f"a match needs at least 2 seats, got {len(seats)}: {list(seats)!r}")
    if len(ranking) != len(seats):
        raise ValueError(f"{len(seats)} seats but a ranking of {len(ranking)}: {list(ranking)!r}")
    if len(set(seats)) != len(seats):
        raise ValueError(f"a bot sits in two seats of one match: {list(seats)!r}")
    _check_ranking(ranking)
