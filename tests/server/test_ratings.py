"""Ratings: pairwise results, online Elo, and the batch fit with confidence intervals."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping

import pytest

from atout_arena.core.ratings import (
    DEFAULT_RATING,
    elo_update,
    expected_score,
    fit,
    fit_ratings,
    pairwise_results,
)


def plackett_luce(rng: random.Random, ratings: list[float]) -> list[int]:
    """A ranking drawn place by place, each remaining seat with weight 10^(R/400).

    Its pairwise marginals are the Elo curve, so the fit's model is the true one.
    """
    remaining, ranking = list(range(len(ratings))), [0] * len(ratings)
    for place in range(1, len(ratings) + 1):
        seat = rng.choices(remaining, weights=[10 ** (ratings[s] / 400) for s in remaining])[0]
        ranking[seat] = place
        remaining.remove(seat)
    return ranking


def tournament(rng: random.Random, truth: Mapping[str, float], players: int, games: int) -> list:
    """Every table of ``players`` bots, ``games`` times, seats shuffled."""
    matches = []
    for table in itertools.combinations(truth, players):
        for _ in range(games):
            seats = list(table)
            rng.shuffle(seats)
            matches.append((seats, plackett_luce(rng, [truth[b] for b in seats])))
    return matches


def centred(truth: Mapping[str, float]) -> dict[str, float]:
    mean = sum(truth.values()) / len(truth)
    return {b: r - mean + DEFAULT_RATING for b, r in truth.items()}


# -- pairwise results --------------------------------------------------------------------------


def test_pairwise_results_without_ties() -> None:
    assert pairwise_results([2, 1, 3]) == [(0, 1, 0.0), (0, 2, 1.0), (1, 2, 1.0)]


def test_pairwise_results_with_ties() -> None:
    assert pairwise_results([1, 1, 3]) == [(0, 1, 0.5), (0, 2, 1.0), (1, 2, 1.0)]
    # Two teams of two (RULES.md, "Results"): teammates draw, each beats both opponents.
    assert pairwise_results([1, 3, 1, 3]) == [
        (0, 1, 1.0),
        (0, 2, 0.5),
        (0, 3, 1.0),
        (1, 2, 0.0),
        (1, 3, 0.5),
        (2, 3, 1.0),
    ]


def test_pairwise_results_of_n_players_hand_out_n_choose_2_points() -> None:
    for ranking in ([1, 2, 3, 4, 5], [1, 1, 1, 4, 5], [3, 1, 3, 1, 5]):
        results = pairwise_results(ranking)
        assert len(results) == 10
        assert sum(s for _, _, s in results) + sum(1 - s for _, _, s in results) == 10


@pytest.mark.parametrize("ranking", [[0, 1], [1, -2], [1.5, 1], [True, 2]])
def test_pairwise_results_reject_bad_places(ranking: list) -> None:
    with pytest.raises(ValueError, match="a ranking holds places 1, 2"):
        pairwise_results(ranking)


# -- online Elo --------------------------------------------------------------------------------


def test_expected_score() -> None:
    assert expected_score(1500, 1500) == 0.5
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)
    assert expected_score(1500, 1900) == pytest.approx(1 / 11)


def test_two_player_elo_is_the_classic_update() -> None:
    after = elo_update({"a": 1500.0, "b": 1500.0}, ["a", "b"], [1, 2])
    assert after == {"a": 1512.0, "b": 1488.0}
    upset = elo_update({"a": 1300.0, "b": 1700.0}, ["a", "b"], [1, 2], k=32)
    assert upset["a"] == pytest.approx(1300 + 32 * 10 / 11)


def test_elo_moves_the_right_way_and_keeps_the_sum() -> None:
    before = {"a": 1620.0, "b": 1480.0, "c": 1530.0, "d": 1400.0}
    after = elo_update(before, ["a", "b", "c", "d"], [4, 1, 2, 3])
    assert after["a"] < before["a"]  # favourite came last
    assert after["b"] > before["b"]  # winner
    assert sum(after.values()) == pytest.approx(sum(before.values()))
    assert before == {"a": 1620.0, "b": 1480.0, "c": 1530.0, "d": 1400.0}  # not changed in place


def test_new_bots_start_at_1500_and_others_are_kept() -> None:
    after = elo_update({"old": 1600.0, "idle": 1234.0}, ["old", "new"], [2, 1])
    assert after["idle"] == 1234.0
    assert after["new"] == pytest.approx(DEFAULT_RATING + 24 * (1 - expected_score(1500, 1600)))


def test_k_is_scaled_by_one_over_n_minus_one() -> None:
    # Among equals, the winner of an n-player match gains k/(n-1) * (n-1) * 1/2 = k/2,
    # like the winner of a 2-player game; each of its pairwise results moves it k/(n-1) / 2.
    for n in range(2, 8):
        bots = [f"b{i}" for i in range(n)]
        after = elo_update({}, bots, list(range(1, n + 1)), k=30)
        assert after["b0"] == pytest.approx(1500 + 15)
        assert after[bots[-1]] == pytest.approx(1500 - 15)
        for place, bot in enumerate(bots, start=1):  # wins (n - place), losses (place - 1)
            assert after[bot] == pytest.approx(1500 + 30 / (n - 1) * ((n - place) - (place - 1)) / 2)


def test_ties_move_nothing_among_equals() -> None:
    assert elo_update({}, ["a", "b", "c"], [1, 1, 1]) == {"a": 1500.0, "b": 1500.0, "c": 1500.0}


def test_elo_update_rejects_bad_matches() -> None:
    with pytest.raises(ValueError, match="2 seats but a ranking of 3"):
        elo_update({}, ["a", "b"], [1, 2, 3])
    with pytest.raises(ValueError, match="two seats"):
        elo_update({}, ["a", "a"], [1, 2])
    with pytest.raises(ValueError, match="at least 2 seats"):
        elo_update({}, ["a"], [1])
    with pytest.raises(ValueError, match="k must be > 0"):
        elo_update({}, ["a", "b"], [1, 2], k=0)


# -- batch fit ---------------------------------------------------------------------------------


def test_fit_of_nothing_is_empty() -> None:
    assert fit_ratings([]) == []


def test_fit_has_mean_1500_and_sorted_lines() -> None:
    rng = random.Random(3)
    truth = {"a": 1800.0, "b": 1600.0, "c": 1500.0, "d": 1300.0}
    ratings = fit_ratings(tournament(rng, truth, 2, 30))
    assert [r.bot for r in ratings] == ["a", "b", "c", "d"]
    assert sum(r.elo for r in ratings) / 4 == pytest.approx(1500)
    assert all(r.ci_low < r.elo < r.ci_high for r in ratings)
    assert all(r.games == 90 for r in ratings)  # 3 opponents x 30 games
    assert ratings[0].score > 0.5 > ratings[-1].score
    assert sum(r.score for r in ratings) == pytest.approx(2.0)  # equal numbers of games
    assert ratings[-1].los is None


def test_symmetric_results_give_equal_ratings_and_even_los() -> None:
    matches = [(["a", "b"], [1, 2]), (["b", "a"], [1, 2]), (["a", "b"], [1, 1])] * 10
    result = fit(matches)
    a, b = result.rating("a"), result.rating("b")
    assert a.elo == pytest.approx(1500) and b.elo == pytest.approx(1500)
    assert a.score == b.score == 0.5
    assert result.likelihood_of_superiority("a", "b") == pytest.approx(0.5)


@pytest.mark.parametrize("players", [2, 4])
def test_fit_recovers_the_order_of_known_strengths(players: int) -> None:
    rng = random.Random(players)
    truth = {f"bot{i}": 1500 + 120 * (3 - i) for i in range(7)}  # 360 .. -360, 120 apart
    ratings = fit_ratings(tournament(rng, truth, players, 40 if players == 2 else 8))
    assert [r.bot for r in ratings] == list(truth)
    for r in ratings:
        assert abs(r.elo - centred(truth)[r.bot]) < 80


@pytest.mark.parametrize(("players", "games"), [(2, 30), (3, 6), (4, 4)])
def test_confidence_intervals_cover_the_truth(players: int, games: int) -> None:
    """About 95% of the intervals hold the true rating (n-player results weighted 3/(n+1))."""
    inside = total = 0
    for trial in range(12):
        rng = random.Random(1000 * players + trial)
        truth = centred({f"b{i}": rng.uniform(-300, 300) for i in range(6)})
        for r in fit_ratings(tournament(rng, truth, players, games)):
            inside += r.ci_low <= truth[r.bot] <= r.ci_high
            total += 1
    assert inside / total >= 0.85


def test_more_games_give_narrower_intervals() -> None:
    truth = {"a": 1600.0, "b": 1500.0, "c": 1400.0}
    widths = []
    for games in (5, 20, 80):
        ratings = fit_ratings(tournament(random.Random(games), truth, 2, games))
        widths.append(max(r.ci_high - r.ci_low for r in ratings))
    assert widths[0] > widths[1] > widths[2]
    assert widths[1] / widths[2] == pytest.approx(2, rel=0.25)  # four times the games: half the width


def test_an_unbeaten_bot_gets_a_finite_rating() -> None:
    matches = [(["champ", other], [1, 2]) for other in ("x", "y", "z") for _ in range(20)]
    matches += [(["x", "y"], [1, 2]), (["y", "z"], [1, 2]), (["z", "x"], [1, 2])] * 5
    ratings = fit_ratings(matches)
    champ = ratings[0]
    assert champ.bot == "champ" and champ.score == 1.0
    assert all(math.isfinite(v) for r in ratings for v in (r.elo, r.ci_low, r.ci_high))
    assert 400 < champ.elo - ratings[1].elo < 1500
    # More wins push it further, but only by about the log of their number.
    more = fit_ratings(matches + [(["champ", "x"], [1, 2])] * 200)
    assert champ.elo < more[0].elo < champ.elo + 500


def test_a_weaker_prior_lets_ratings_spread() -> None:
    matches = [(["a", "b"], [1, 2])] * 3 + [(["a", "b"], [2, 1])]
    strong = fit_ratings(matches, prior_sd=50)
    weak = fit_ratings(matches, prior_sd=2000)
    assert 0 < strong[0].elo - strong[1].elo < weak[0].elo - weak[1].elo
    # With a weak prior the fit is the plain maximum likelihood: 3 wins in 4 is 400 log10(3).
    assert weak[0].elo - weak[1].elo == pytest.approx(400 * math.log10(3), abs=3)


def test_likelihood_of_superiority() -> None:
    rng = random.Random(11)
    truth = {"strong": 1800.0, "twin1": 1500.0, "twin2": 1500.0}
    result = fit(tournament(rng, truth, 2, 60))
    assert result.likelihood_of_superiority("strong", "twin1") > 0.95
    assert result.likelihood_of_superiority("twin1", "strong") < 0.05
    assert 0.1 < result.likelihood_of_superiority("twin1", "twin2") < 0.9
    assert result.likelihood_of_superiority("twin1", "twin2") + result.likelihood_of_superiority(
        "twin2", "twin1"
    ) == pytest.approx(1)
    first, second, _ = result.ratings
    assert first.los == pytest.approx(result.likelihood_of_superiority(first.bot, second.bot))


def test_los_of_equal_bots_is_a_half_on_average_and_rarely_confident() -> None:
    """Between equal bots the LOS is about uniform: mean 0.5, above 0.95 about 5% of the time."""
    values = []
    for trial in range(400):
        rng = random.Random(trial)
        values.append(
            fit(tournament(rng, {"a": 1500.0, "b": 1500.0}, 2, 20)).likelihood_of_superiority("a", "b")
        )
    assert 0.45 < sum(values) / len(values) < 0.55
    assert sum(v > 0.95 for v in values) / len(values) < 0.1


def test_fit_accepts_result_objects() -> None:
    class Result:
        def __init__(self, seats: list[str], ranking: list[int]) -> None:
            self.seats, self.ranking = seats, ranking

    objects = fit_ratings([Result(["a", "b", "c"], [1, 2, 3])] * 5)
    tuples = fit_ratings([(["a", "b", "c"], [1, 2, 3])] * 5)
    assert objects == tuples


def test_fit_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="prior_sd must be a positive"):
        fit_ratings([], prior_sd=0)
    with pytest.raises(ValueError, match="two seats"):
        fit_ratings([(["a", "a"], [1, 2])])
    with pytest.raises(KeyError):
        fit([(["a", "b"], [1, 2])]).likelihood_of_superiority("a", "nobody")
