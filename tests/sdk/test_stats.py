"""atout.stats: pairwise scores, Elo with its interval, LOS and the GSPRT, against values worked by
hand (in the comments) and values of fishtest's own code."""

from __future__ import annotations

import json
import math
from dataclasses import fields

import pytest

from atout.stats import (
    Analysis,
    Sprt,
    Tally,
    analyse,
    elo_to_score,
    mle_with_mean,
    pairwise_score,
    regularized_counts,
    score_to_elo,
    secular_root,
)

# pentanomial frequencies (fishtest's order: LL, LD+DL, LW+DD+WL, DW+WD, WW) as 2-game sets
PAIRS = ([0.0, 0.0], [0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [1.0, 1.0])


def _sets(pentanomial: list[int]) -> list[list[float]]:
    return [list(PAIRS[i]) for i, count in enumerate(pentanomial) for _ in range(count)]


# ---------------------------------------------------------------- pairwise scores


def test_pairwise_score_from_a_ranking() -> None:
    assert pairwise_score([2, 1, 3], 0, 2) == 1.0  # 2nd beats 3rd
    assert pairwise_score([2, 1, 3], 0, 1) == 0.0
    assert pairwise_score([1, 3, 1, 3], 0, 2) == 0.5  # shared place (teams, ties)
    assert pairwise_score([1, 3, 1, 3], 1, 3) == 0.5
    with pytest.raises(ValueError, match="same seat"):
        pairwise_score([1, 2], 1, 1)


def test_elo_and_score_conversions() -> None:
    assert elo_to_score(0) == 0.5
    assert score_to_elo(0.5) == 0.0 and math.copysign(1, score_to_elo(0.5)) == 1  # not -0.0
    # L(400) = 1 / (1 + 10^-1) = 10/11
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert score_to_elo(10 / 11) == pytest.approx(400)
    assert score_to_elo(1.0) == math.inf and score_to_elo(0.0) == -math.inf


# ---------------------------------------------------------------- Elo, interval, LOS


def test_elo_interval_and_los_worked_by_hand() -> None:
    # Four 2-game sets: set scores 0.75, 1, 0.25, 0.75.
    # score = (1.5 + 2 + 0.5 + 1.5) / 8 = 0.6875; the mean of set scores is the same.
    # elo = -400 log10(1/0.6875 - 1) = -400 log10(0.454545...) = 136.969
    # deviations 0.0625, 0.3125, -0.4375, 0.0625; squares sum to 0.296875; / (n-1) = 0.0989583
    # se = sqrt(0.0989583 / 4) = 0.157288; z se = 1.959964 x 0.157288 = 0.308279
    # interval of the score: 0.379221 .. 0.995779 -> Elo -400 log10(1/0.379221 - 1) = -85.618
    #   and -400 log10(1/0.995779 - 1) = 949.109
    # LOS = Phi(0.1875 / 0.157288) = Phi(1.192082) = 0.88338
    a = analyse([[1, 0.5], [1, 1], [0, 0.5], [1, 0.5]])
    assert (a.games, a.sets, a.score) == (8, 4, 0.6875)
    assert a.elo == pytest.approx(136.969, abs=1e-3)
    assert a.elo_ci95 == pytest.approx((-85.618, 949.109), abs=1e-3)
    assert a.los == pytest.approx(0.88338, abs=1e-5)
    assert (a.llr, a.lower, a.upper, a.result) == (None, None, None, None)


def test_the_elo_of_fishtest_on_a_large_pentanomial() -> None:
    # fishtest stat_util.get_elo([10789, 19328, 33806, 19402, 10543]) gives elo -0.77358 and
    # los 0.117659 (its 1e-3 pseudo-counts and 1/N variance are negligible here); its +-1.27758
    # half-width matches our interval's.
    a = analyse(_sets([10789, 19328, 33806, 19402, 10543]))
    assert a.elo == pytest.approx(-0.7735773359165423, abs=1e-9)
    assert a.los == pytest.approx(0.1176588580327751, abs=1e-5)
    low, high = a.elo_ci95
    assert (high - low) / 2 == pytest.approx(1.2775798957280218, abs=1e-3)


def test_all_wins() -> None:
    a = analyse([[1.0, 1.0]] * 5, Sprt(0, 50))
    assert (a.score, a.elo, a.elo_ci95, a.los) == (1.0, math.inf, (math.inf, math.inf), 1.0)
    assert a.llr is not None and a.llr > 0
    d = a.to_dict()
    assert d["elo"] is None and d["elo_ci95"] == [None, None] and d["score"] == 1.0
    json.dumps(d, allow_nan=False)


def test_all_losses_mirror_all_wins() -> None:
    a = analyse([[0.0, 0.0]] * 5)
    assert (a.score, a.elo, a.elo_ci95, a.los) == (0.0, -math.inf, (-math.inf, -math.inf), 0.0)


def test_all_draws() -> None:
    # Every set scores 0.5: no variance, an Elo of exactly 0, a zero-width interval, LOS 1/2.
    a = analyse([[0.5, 0.5]] * 6, Sprt(0, 50))
    assert (a.score, a.elo, a.elo_ci95, a.los) == (0.5, 0.0, (0.0, 0.0), 0.5)
    # fishtest LLRcalc.LLR_logistic(0, 50, [0, 0, 6, 0, 0]) = -0.918501395689911
    assert a.llr == pytest.approx(-0.918501395689911, abs=1e-9)


def test_a_single_set_has_no_interval() -> None:
    # One sample has no sample variance: the interval is everything, LOS 1/2.
    a = analyse([[1.0, 0.5]], Sprt(0, 50))
    assert (a.games, a.sets, a.score) == (2, 1, 0.75)
    assert a.elo == pytest.approx(190.849, abs=1e-3)  # -400 log10(1/3)
    assert a.elo_ci95 == (-math.inf, math.inf) and a.los == 0.5
    assert a.to_dict()["elo_ci95"] == [None, None]
    assert a.result == "inconclusive"


def test_no_set_yet() -> None:
    a = analyse([], Sprt(0, 50))
    assert (a.games, a.sets, a.score, a.elo, a.los) == (0, 0, 0.5, 0.0, 0.5)
    assert (a.llr, a.result) == (0.0, "inconclusive")


@pytest.mark.parametrize("bad", [[[]], [[1.5]], [[-0.5, 0.5]], [[True]], [["1"]]])
def test_bad_sets(bad: list[list[object]]) -> None:
    with pytest.raises(ValueError):
        analyse(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the SPRT


def test_sprt_bounds_and_checks() -> None:
    # log(0.05 / 0.95) = -2.944439, log(0.95 / 0.05) = +2.944439
    assert Sprt(0, 5).bounds == pytest.approx((-2.944439, 2.944439), abs=1e-6)
    # alpha 0.1, beta 0.2: log(0.2 / 0.9) = -1.504077, log(0.8 / 0.1) = 2.079442
    assert Sprt(0, 5, alpha=0.1, beta=0.2).bounds == pytest.approx((-1.504077, 2.079442), abs=1e-6)
    for args, message in [
        ((5, 5), "elo0 must be below elo1"),
        ((5, 0), "elo0 must be below elo1"),
        ((0, 5, 0.0), "alpha must be strictly between 0 and 1"),
        ((0, 5, 0.05, 1.0), "beta must be strictly between 0 and 1"),
        ((0, math.inf), "finite"),
    ]:
        with pytest.raises(ValueError, match=message):
            Sprt(*args)
    with pytest.raises(AttributeError):
        Sprt(0, 5).elo0 = 1  # type: ignore[misc]  # frozen


def test_llr_is_wald_sprt_on_two_outcomes() -> None:
    # With wins and losses only, the MLE of mean s on the support {0, 1} is (1 - s, s), so the
    # GSPRT is Wald's SPRT on Bernoulli trials:
    # s0 = L(0) = 0.5, s1 = L(50) = 1 / (1 + 10^-0.125) = 0.5714631
    # 7 wins, 3 losses: 7 log(s1 / s0) + 3 log((1 - s1) / (1 - s0))
    #                 = 7 x 0.1336001 + 3 x (-0.1542328) = 0.9352009 - 0.4626983 = 0.4724905... - the
    # exact figure below.
    sprt = Sprt(0, 50)
    assert elo_to_score(50) == pytest.approx(0.5714631, abs=1e-7)
    assert sprt.llr({0.0: 3, 1.0: 7}) == pytest.approx(0.4724490527455544, abs=1e-12)
    # From single-game sets the possible scores 0, 1/2, 1 are all in the support: the draw that
    # was never seen gets fishtest's pseudo-count 1e-3, which moves the LLR very little.
    # fishtest LLRcalc.LLR_logistic(0, 50, [3, 0, 7]) = 0.4724872821484643
    a = analyse([[1.0]] * 7 + [[0.0]] * 3, sprt)
    assert a.llr == pytest.approx(0.4724872821484643, abs=1e-9)
    assert a.llr == pytest.approx(0.4724490527455544, abs=1e-4)


@pytest.mark.parametrize(
    ("pentanomial", "elo0", "elo1", "llr"),
    [
        # LLRcalc.LLR_logistic(elo0, elo1, pentanomial), fishtest at b8eecff2
        ([10789, 19328, 33806, 19402, 10543], -3, 1, 2.1310678117940807),
        ([39, 2226, 31451, 2412, 40], 0.2, 0.9, 2.1625425800483593),
        ([1, 3, 5, 8, 4], 0, 50, 1.5712872661978636),
        ([0, 0, 0, 0, 7], 0, 50, 0.9353892616352858),
        ([0, 2, 0, 3, 0], 0, 50, 0.08071487037944043),
    ],
)
def test_llr_matches_fishtest_on_pentanomials(
    pentanomial: list[int], elo0: float, elo1: float, llr: float
) -> None:
    a = analyse(_sets(pentanomial), Sprt(elo0, elo1))
    assert a.llr == pytest.approx(llr, rel=1e-9)


def test_results_against_the_bounds() -> None:
    sprt = Sprt(0, 50)
    lower, upper = sprt.bounds
    assert sprt.decide(upper) == "H1" and sprt.decide(lower) == "H0"
    assert sprt.decide(0.0) == "inconclusive"
    assert analyse(_sets([0, 0, 0, 5, 40]), sprt).result == "H1"
    assert analyse(_sets([0, 0, 40, 0, 0]), sprt).result == "H0"
    a = analyse(_sets([0, 0, 40, 0, 0]), sprt)
    assert (a.lower, a.upper) == (lower, upper)


def test_secular_equation_and_mle() -> None:
    # pdf of set scores 0, 1/2, 1 with p = 1/4, 1/4, 1/2 (mean 5/8). For mean s = 1/2 the
    # shifted values are -1/2, 0, 1/2; the equation -1/8 / (1 - x/2) + 1/4 / (1 + x/2) = 0 gives
    # 1 + x/2 = 2 (1 - x/2), x = 2/3, and the MLE 1/4 / (2/3), 1/4, 1/2 / (4/3) = 3/8, 1/4, 3/8.
    pdf = [(0.0, 0.25), (0.5, 0.25), (1.0, 0.5)]
    assert secular_root([(a - 0.5, p) for a, p in pdf]) == pytest.approx(2 / 3, abs=1e-12)
    assert mle_with_mean(pdf, 0.5) == pytest.approx([3 / 8, 1 / 4, 3 / 8], abs=1e-12)
    # The empirical mean is its own MLE (x = 0).
    assert mle_with_mean(pdf, 0.625) == pytest.approx([0.25, 0.25, 0.5], abs=1e-12)
    with pytest.raises(ValueError, match="both sides"):
        secular_root([(0.1, 0.5), (0.2, 0.5)])


def test_regularized_counts_cover_every_possible_set_score() -> None:
    counts = regularized_counts({0.75: 3}, [2])
    assert counts == {0.0: 1e-3, 0.25: 1e-3, 0.5: 1e-3, 0.75: 3, 1.0: 1e-3}
    # 3-game sets: scores j/6
    assert sorted(regularized_counts({}, [3])) == pytest.approx([j / 6 for j in range(7)])


# ---------------------------------------------------------------- Analysis and Tally


def test_to_dict_has_exactly_the_field_names() -> None:
    a = analyse(_sets([1, 3, 5, 8, 4]), Sprt(0, 50))
    d = a.to_dict()
    assert list(d) == [f.name for f in fields(Analysis)]
    assert list(d) == [
        "games", "sets", "score", "elo", "elo_ci95", "los", "llr", "lower", "upper", "result"
    ]  # fmt: skip
    assert isinstance(d["elo_ci95"], list) and len(d["elo_ci95"]) == 2
    assert d["result"] == "inconclusive" and d["games"] == 42
    json.dumps(d, allow_nan=False)
    with pytest.raises(AttributeError):
        a.elo = 0.0  # type: ignore[misc]  # frozen


def test_tally_is_analyse_one_set_at_a_time() -> None:
    sets = _sets([2, 5, 9, 7, 3])
    tally = Tally()
    for s in sets:
        tally.add(s)
    assert tally.analysis(Sprt(-10, 10)) == analyse(sets, Sprt(-10, 10))


def test_sets_of_several_games() -> None:
    # 4-game sets (a 4-seat table in its 4 rotations): set scores are j/8.
    a = analyse([[1, 0.5, 0, 1], [0.5, 0.5, 1, 1]], Sprt(0, 50))
    assert (a.games, a.sets, a.score) == (8, 2, 0.6875)
    assert a.llr is not None and math.isfinite(a.llr)


def test_a_tally_read_back_from_json_goes_on_as_the_one_never_written() -> None:
    import json
    import random

    from atout.stats import Tally, analyse

    rng = random.Random(4)
    sets = [[rng.choice([0.0, 0.5, 1.0]) for _ in range(rng.choice([2, 6]))] for _ in range(60)]
    kept = Tally()
    for scores in sets:  # written after each set, as an arena test keeps its counted sets
        kept = Tally.from_dict(json.loads(json.dumps(kept.to_dict())))
        kept.add(scores)
    sprt = Sprt(0, 50)
    assert kept.analysis(sprt) == analyse(sets, sprt)
