"""Is bot A stronger than bot B? Elo, LOS and a generalized SPRT over duplicate sets.

The data
--------
One game gives A's **pairwise score** against B from the game's ranking: 1 if A placed better
than B, ½ if they placed equal, 0 if worse (:func:`pairwise_score`). Games come in **duplicate
sets**: the same seeded deals played in every seat rotation of the table, so that the luck of the
cards cancels within a set. The sample of the statistics below is the **set score** ``x``, the
mean of A's scores over the games of one set (``0 <= x <= 1``). Sets are independent; the games
of one set are not, which is why they are never counted as separate samples. This is
fishtest's *pentanomial* model (a pair of games with reversed colours, one sample) for sets of
any size: a set of ``k`` games has ``2k + 1`` possible scores ``j / 2k``; a 2-player set (two
games, seats swapped) is exactly fishtest's game pair.

Elo, confidence interval, LOS
-----------------------------
``score`` is A's mean score per game. With ``n`` sets of scores ``x_1..x_n``, mean ``m`` and
sample variance ``v = sum (x_i - m)^2 / (n - 1)``, the standard error of the mean is
``se = sqrt(v / n)`` (the normal approximation of the mean of set scores, as fishtest's
``stat_util.get_elo`` on the pentanomial):

- ``elo = -400 log10(1 / score - 1)`` (logistic Elo; +inf at a score of 1, -inf at 0);
- ``elo_ci95 = (elo(m - z se), elo(m + z se))``, ``z = Phi^-1(0.975) = 1.95996...``, the score
  bounds clipped to [0, 1];
- ``los = Phi((m - ½) / se)``, the likelihood of superiority.

Two deliberate differences with fishtest's ``get_elo``: no pseudo-counts are mixed in (all wins
is an Elo of +inf, not a capped 1200), and the variance has ``n - 1`` in the denominator, so
one set alone gives no interval (``(-inf, inf)``, LOS ½) instead of a zero-width one. When every
set has the same score the variance is 0: the interval shrinks to that Elo and LOS is 0, ½ or 1.

Generalized SPRT (GSPRT)
------------------------
H0: ``elo = elo0`` against H1: ``elo = elo1`` in the logistic model, i.e. an expected set score
``s0 = L(elo0)`` against ``s1 = L(elo1)`` with ``L(e) = 1 / (1 + 10^(-e/400))``. The set scores
are a multinomial on their possible values ``a_i`` with unknown probabilities; fishtest's GSPRT
(``LLRcalc.LLR_logistic``, statistic "expectation") compares the maximum likelihood of the data
under each constraint "the mean is s" (Van den Bergh, *support_MLE_multinomial.pdf*, Prop. 1.1):

- the empirical distribution ``p_i = n_i / N``; a possible value never seen gets the count
  ``1e-3`` (fishtest's ``regularize``), so that every possible value from 0 to 1 is in the support
  and ``N`` is the sum of the counts with these pseudo-counts;
- the MLE of the distribution with mean ``s`` is ``p_i / (1 + x (a_i - s))`` where ``x`` solves the
  *secular equation* ``sum_i p_i (a_i - s) / (1 + x (a_i - s)) = 0`` on
  ``-1 / max(a_i - s) < x < -1 / min(a_i - s)`` (the left side decreases from +inf to -inf there:
  one root, found by bisection);
- ``LLR = N sum_i p_i (log p1_i - log p0_i)`` with ``p0``, ``p1`` the MLEs for ``s0`` and ``s1``.

Wald's bounds: ``lower = log(beta / (1 - alpha))``, ``upper = log((1 - beta) / alpha)``; the test
accepts H1 when ``LLR >= upper``, H0 when ``LLR <= lower``, and goes on in between. fishtest's
dynamic overshoot correction is left out: checking after every set, the overshoot is small.

References: fishtest ``server/fishtest/stats/LLRcalc.py`` (``secular``, ``MLE_expected``,
``LLR_logistic``, ``regularize``), ``stat_util.py`` (``get_elo``, ``SPRT``: the bounds) and
``sprt.py``; https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf and
https://www.cantate.be/Fishtest/GSPRT_approximation.pdf (M. Van den Bergh); A. Wald, *Sequential
Analysis* (1947).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

# Phi^-1(0.975): the 95% two-sided quantile of the standard normal law.
Z95 = 1.959963984540054
# fishtest's LLRcalc.regularize: the count given to a possible set score never observed.
PSEUDO_COUNT = 1e-3
# Set scores are means of halves: rounded to merge 0.1 + 0.2 with 0.3, far below 1 / 2k.
_DIGITS = 12


def pairwise_score(ranking: Sequence[int], seat_a: int, seat_b: int) -> float:
    """A's score against B from a game's ranking (place per seat, 1 = best): 1, ½ or 0.

    >>> pairwise_score([2, 1, 3], 0, 2)
    1.0
    """
    if seat_a == seat_b:
        raise ValueError(f"seat_a and seat_b are the same seat ({seat_a})")
    a, b = ranking[seat_a], ranking[seat_b]
    return 1.0 if a < b else 0.5 if a == b else 0.0


def score_to_elo(score: float) -> float:
    """Logistic Elo difference of an expected score: ``-400 log10(1/score - 1)``; ±inf at 1 and 0."""
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no -0.0 for an even score


def elo_to_score(elo: float) -> float:
    """Expected score of a logistic Elo difference: ``1 / (1 + 10^(-elo/400))``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def _phi(x: float) -> float:
    """The standard normal cumulative distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@dataclass(frozen=True)
class Sprt:
    """A sequential test of H0 ``elo = elo0`` against H1 ``elo = elo1`` (logistic Elo of A over B).

    ``alpha`` is the probability of accepting H1 when H0 holds, ``beta`` of accepting H0 when H1
    holds.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, not {value!r}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1 (got elo0={self.elo0}, elo1={self.elo1})")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be strictly between 0 and 1, not {getattr(self, name)}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds on the LLR: ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha)), math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: dict[float, float]) -> float:
        """The GSPRT log-likelihood ratio of a histogram ``{set score: count}`` (pseudo-counts
        for the possible scores never seen already in it, see :func:`regularized_counts`)."""
        histogram = sorted(counts.items())  # (one order: the same sums however it was built)
        total = sum(count for _, count in histogram)
        if total <= 0:
            return 0.0
        pdf = [(value, count / total) for value, count in histogram]
        p0 = mle_with_mean(pdf, elo_to_score(self.elo0))
        p1 = mle_with_mean(pdf, elo_to_score(self.elo1))
        return total * sum(
            p * (math.log(q1) - math.log(q0)) for (_, p), q0, q1 in zip(pdf, p0, p1, strict=True)
        )

    def decide(self, llr: float) -> str:
        """``"H1"`` when ``llr >= upper``, ``"H0"`` when ``llr <= lower``, else ``"inconclusive"``."""
        lower, upper = self.bounds
        return "H1" if llr >= upper else "H0" if llr <= lower else "inconclusive"


def secular_root(pdf: Sequence[tuple[float, float]]) -> float:
    """The root ``x`` of ``sum_i p_i a_i / (1 + x a_i) = 0`` for ``pdf = [(a_i, p_i)]``.

    The support must straddle 0 (some ``a_i < 0 < a_j`` with positive ``p``); the root lies in
    ``(-1 / max a, -1 / min a)``, where the left side decreases strictly (fishtest's ``secular``):
    Newton's method kept inside a shrinking bracket (bisection when a step would leave it).
    """
    support = [(a, p) for a, p in pdf if p > 0.0]
    low_a, high_a = min(a for a, _ in support), max(a for a, _ in support)
    if not low_a < 0.0 < high_a:
        raise ValueError("the secular equation needs values on both sides of the mean")
    lo, hi = -1.0 / high_a, -1.0 / low_a
    x = 0.0  # inside (lo, hi); Newton's steps, bisection where a step would leave the bracket
    for _ in range(200):
        fx = dfx = 0.0
        for a, p in support:
            q = a / (1.0 + x * a)
            fx += p * q
            dfx -= p * q * q
        if fx == 0.0:
            return x
        if fx > 0.0:  # the root is above x (the left side decreases)
            lo = x
        else:
            hi = x
        step = fx / dfx
        new = x - step
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if new == x or abs(new - x) <= 1e-15 * abs(new) or new in (lo, hi):
            return new
        x = new
    return x


def mle_with_mean(pdf: Sequence[tuple[float, float]], s: float) -> list[float]:
    """The probabilities, on the support of ``pdf = [(a_i, p_i)]``, of the distribution closest to
    ``pdf`` (maximum likelihood) whose mean is ``s``: ``p_i / (1 + x (a_i - s))`` (fishtest's
    ``MLE_expected``)."""
    shifted = [(a - s, p) for a, p in pdf]
    x = secular_root(shifted)
    return [p / (1.0 + x * a) for a, p in shifted]


def regularized_counts(counts: dict[float, int], set_sizes: Iterable[int]) -> dict[float, float]:
    """``counts`` plus fishtest's pseudo-count for every possible set score never seen: the scores
    ``j / 2k`` (``j = 0..2k``) of the sets of ``k`` games, for each size ``k`` in ``set_sizes``."""
    out: dict[float, float] = dict(counts)
    for k in set(set_sizes):
        for j in range(2 * k + 1):
            out.setdefault(round(j / (2 * k), _DIGITS), PSEUDO_COUNT)
    return out


@dataclass(frozen=True)
class Analysis:
    """What the sets say about A against B (see the module's docstring for the formulas)."""

    games: int
    sets: int
    score: float  # A's mean score per game, 0..1
    elo: float
    elo_ci95: tuple[float, float]
    los: float
    llr: float | None = None
    lower: float | None = None
    upper: float | None = None
    result: str | None = None  # "H1", "H0", "inconclusive"; None without an SPRT

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the field names as keys, ``elo_ci95`` as a list, infinities as ``None``."""

        def finite(value: Any) -> Any:
            return value if not isinstance(value, float) or math.isfinite(value) else None

        out = asdict(self)
        out["elo_ci95"] = [finite(v) for v in self.elo_ci95]
        return {k: (v if k == "elo_ci95" else finite(v)) for k, v in out.items()}


class Tally:
    """Set scores gathered one set at a time; :meth:`analysis` at any moment.

    What :func:`analyse` does at once, for a match runner that wants the analysis after every
    set: each set costs O(its games), each analysis O(distinct set scores).
    """

    def __init__(self) -> None:
        self.counts: Counter[float] = Counter()  # set score -> number of sets
        self.sizes: Counter[int] = Counter()  # games per set -> number of sets
        self.games = 0
        self.sets = 0
        self.total = 0.0  # sum of A's scores over every game

    def add(self, scores: Sequence[float]) -> None:
        """One duplicate set: A's pairwise score in each of its games."""
        if len(scores) == 0:
            raise ValueError("a duplicate set has at least one game")
        for score in scores:
            if isinstance(score, bool) or not isinstance(score, int | float) or not 0.0 <= score <= 1.0:
                raise ValueError(f"a pairwise score is between 0 and 1, not {score!r}")
        total = float(sum(scores))
        x = total / len(scores)
        self.counts[round(x, _DIGITS)] += 1
        self.sizes[len(scores)] += 1
        self.games += len(scores)
        self.sets += 1
        self.total += total

    def to_dict(self) -> dict[str, Any]:
        """The tally as JSON-ready data, read back by :meth:`from_dict` (the arena keeps a
        test's counted sets so, not to read them again at every tick)."""
        return {"counts": sorted([x, c] for x, c in self.counts.items()),
                "sizes": sorted([k, c] for k, c in self.sizes.items()),
                "games": self.games, "sets": self.sets, "total": self.total}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tally:
        tally = cls()
        tally.counts = Counter({round(float(x), _DIGITS): int(c) for x, c in data["counts"]})
        tally.sizes = Counter({int(k): int(c) for k, c in data["sizes"]})
        tally.games, tally.sets, tally.total = int(data["games"]), int(data["sets"]), float(data["total"])
        return tally

    def analysis(self, sprt: Sprt | None = None) -> Analysis:
        n = self.sets
        if n == 0:
            return _with_sprt(Analysis(0, 0, 0.5, 0.0, (-math.inf, math.inf), 0.5), sprt, 0.0)
        score = self.total / self.games
        histogram = sorted(self.counts.items())  # (in one order: the same sums however it was built)
        mean = sum(x * c for x, c in histogram) / n
        if n == 1:
            se = math.inf
        else:  # the sample variance of the set scores, from their histogram
            variance = sum(c * (x - mean) ** 2 for x, c in histogram) / (n - 1)
            se = math.sqrt(variance / n) if len(self.counts) > 1 else 0.0
        los = _los(mean, se)
        ci = (
            score_to_elo(max(0.0, mean - Z95 * se)) if math.isfinite(se) else -math.inf,
            score_to_elo(min(1.0, mean + Z95 * se)) if math.isfinite(se) else math.inf,
        )
        analysis = Analysis(self.games, n, score, score_to_elo(score), ci, los)
        if sprt is None:
            return analysis
        return _with_sprt(analysis, sprt, sprt.llr(regularized_counts(self.counts, self.sizes)))


def _los(mean: float, se: float) -> float:
    """Likelihood of superiority: ``Phi((mean - 1/2) / se)``; ½ for one set (``se`` infinite)."""
    if se == 0.0:  # every set scored the same
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return _phi((mean - 0.5) / se)


def _with_sprt(analysis: Analysis, sprt: Sprt | None, llr: float) -> Analysis:
    if sprt is None:
        return analysis
    lower, upper = sprt.bounds
    return Analysis(
        analysis.games, analysis.sets, analysis.score, analysis.elo, analysis.elo_ci95, analysis.los,
        llr, lower, upper, sprt.decide(llr),
    )  # fmt: skip


def analyse(sets: Sequence[Sequence[float]], sprt: Sprt | None = None) -> Analysis:
    """Elo, its 95% interval, LOS and (with ``sprt``) the GSPRT verdict of A against B.

    ``sets`` holds one list per duplicate set: A's pairwise score in each game of that set.

    >>> a = analyse([[1.0, 0.5], [0.5, 0.5], [1.0, 1.0]], Sprt(0, 50))
    >>> a.games, a.sets, round(a.score, 4), a.result
    (6, 3, 0.75, 'inconclusive')
    """
    tally = Tally()
    for scores in sets:
        tally.add(scores)
    return tally.analysis(sprt)
