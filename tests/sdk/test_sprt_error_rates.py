"""The SPRT's error rates, measured as scripts/sprt_error_rates.py measures them but over fewer
runs (issue 32, finding 9): real duplicate sets of random against random, mirrored to an Elo of
exactly 0 or tilted to the upper bound, fed into the real stopping code of ``atout-bot test``
and of arena tests. Also: the arena's statistics are the SDK's, and negative bounds work.

The draws are seeded, so each check is deterministic; its tolerance is still the binomial one:
an error rate passes when the lower end of its 95% Wilson interval is within the nominal rate
plus one point (the full run of the script, 2,000 runs a case, holds the point estimates to it).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

from atout.cli import main as cli_main
from atout.sprt import TestConfig, sequential, set_scores
from atout.stats import Sprt, Tally, elo_to_score

ROOT = Path(__file__).resolve().parents[2]
# scripts/ is not a package: load the script from its file
_spec = importlib.util.spec_from_file_location("sprt_error_rates", ROOT / "scripts" / "sprt_error_rates.py")
assert _spec is not None and _spec.loader is not None
rates = importlib.util.module_from_spec(_spec)
sys.modules["sprt_error_rates"] = rates  # (dataclasses look their module up)
_spec.loader.exec_module(rates)


def test_sequential_stops_at_the_verdict_and_set_scores_are_the_tests_sets() -> None:
    wins = [[1.0, 1.0]] * 50
    seen = list(sequential(iter(wins), Sprt(0, 50), lambda s: s))
    assert seen[-1][1].result == "H1" and len(seen) < 50  # stopped at the decision
    assert all(a.result == "inconclusive" for _, a in seen[:-1])
    scores = set_scores(TestConfig("tiercon", "random", "random", seed=3), 4)
    assert len(scores) == 4 and all(len(s) == 2 for s in scores)
    assert scores == set_scores(TestConfig("tiercon", "random", "random", seed=3), 4)  # seeded


def test_the_simulated_distributions_have_the_true_elo() -> None:
    pool = [[0.0, 0.5], [1.0, 1.0], [0.5, 0.5], [0.0, 0.0], [1.0, 0.5]]
    assert rates.SetDistribution.at_elo(pool, 0).mean == pytest.approx(0.5, abs=1e-12)  # mirrored
    for elo in (-3, 50, 120):
        assert rates.SetDistribution.at_elo(pool, elo).mean == pytest.approx(elo_to_score(elo), abs=1e-9)


def test_the_arena_uses_the_sdks_statistics_and_stops_as_the_sdk_does() -> None:
    from atout_arena.services import sprt as arena

    assert arena.Tally is Tally  # the error rates measured are the arena's too
    assert arena.set_size_of(2) == TestConfig("tiercon", "a", "b").checked().set_size
    assert arena.set_size_of(4) == TestConfig("merde", "a", "b").checked().set_size
    pool = rates.game_pool("tiercon", 40, seed=5)
    distribution = rates.SetDistribution.at_elo(pool, 100)
    max_games, alpha, beta = rates.arena_defaults()
    sprt = Sprt(0, 100, alpha, beta)
    for run in range(10):  # the same draws, the same verdict after the same sets
        sdk = rates.run_sdk(distribution.draw(random.Random(run)), sprt, 2, max_games)
        assert sdk == rates.run_arena(distribution.draw(random.Random(run)), sprt, 2, max_games)


@pytest.mark.slow
@pytest.mark.parametrize(("game", "pool_sets", "runs"), [("tiercon", 200, 300), ("fool", 100, 300)])
def test_error_rates_of_equal_bots_and_bots_at_the_upper_bound(game: str, pool_sets: int, runs: int) -> None:
    pool = rates.game_pool(game, pool_sets, seed=1)
    rows = rates.measure(game, pool, 0, 50, "sdk", runs, seed=1)
    for row in rows:
        low, high = rates.wilson(row.errors, row.runs)
        print(f"{game} true Elo {row.elo:g}: {row.errors} errors of {row.runs} ({row.rate:.1%}, "
              f"{low:.1%}-{high:.1%}), {row.sets / row.runs:.0f} sets a run")
        assert row.verdicts["inconclusive"] == 0, row
        assert low <= row.nominal + rates.TOLERANCE, row


@pytest.mark.parametrize("bounds", ["-3,1", "-3.5,-1"])
def test_negative_bounds_on_the_command_line(bounds: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["test", "random", "random", "--game", "tiercon", "--sprt", bounds, "--games", "6", "--json"]
    code = cli_main(args)
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [out["elo0"], out["elo1"]] == [float(x) for x in bounds.split(",")]
    assert out["games"] == 6 and out["result"] == "inconclusive"
