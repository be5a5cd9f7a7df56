"""atout-bot test (A against B locally until an SPRT decides): duplicate sets, the SPRT's
verdicts, faults, --jobs, Ctrl-C and bad arguments.

The command runs as a real process (``python -m atout.cli test ...``); the false positive rate
of the SPRT is measured in-process over many seeds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from atout.sprt import TestConfig, progress_line, run_test, set_tables
from atout.stats import Sprt

pytestmark = pytest.mark.timeout(120)

SAMPLE_BOTS = Path(__file__).resolve().parent / "sample_bots.py"

# small options: games of a few decisions, so that a whole SPRT takes a fraction of a second. The
# heuristic bot's Elo over random (1600 games): merde deals=2 +123 (deals=1 only +34, not clear
# of 50), 3-player fool +242, tiercon +379, regicide: it wins every game.
FAST = {
    "merde": ["--option", "deals=2"],
    "tiercon": [],
    "regicide": [],
    "fool": ["--players", "3"],
}


def _run_test(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atout.cli", "test", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _json(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout  # one JSON object, nothing else on stdout
    return json.loads(lines[0])


@pytest.mark.parametrize("game", list(FAST))
def test_heuristic_against_random_accepts_h1(game: str) -> None:
    proc = _run_test("heuristic", "random", "--game", game, *FAST[game], "--sprt", "0,50", "--json")
    result = _json(proc)
    assert result["result"] == "H1", result
    assert result["llr"] >= result["upper"]
    assert result["games"] == result["sets"] * result["set_size"] < 20000  # stopped when decided
    for key in ("games", "sets", "score", "elo", "elo_ci95", "los", "llr", "lower", "upper", "result"):
        assert key in result
    assert result["score"] > 0.5 and result["los"] > 0.95
    assert "LLR" in proc.stderr  # the progress line


def test_plain_output_and_progress_lines() -> None:
    proc = _run_test("heuristic", "random", "--game", "tiercon", "--sprt", "0,50", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert "heuristic (A) vs random (B): tiercon, 2 players, seed 3, 2 games per duplicate set" in proc.stdout
    assert "SPRT [0, 50], alpha 0.05, beta 0.05: H1 accepted" in proc.stdout
    # not a terminal: plain lines, no carriage return, the last one the final state
    lines = proc.stderr.strip().splitlines()
    assert "\r" not in proc.stderr and lines[-1].startswith("games ") and "LLR" in lines[-1]


def test_the_games_run_out_before_the_sprt_decides() -> None:
    proc = _run_test("random", "random", "--game", "tiercon", "--sprt", "0,5", "--games", "20", "--json")
    result = _json(proc)
    assert (result["games"], result["sets"], result["result"]) == (20, 10, "inconclusive")
    assert result["lower"] < result["llr"] < result["upper"]


def test_without_sprt_plays_every_game() -> None:
    proc = _run_test("random", "heuristic", "--game", "fool", "--players", "2", "--games", "13", "--json")
    result = _json(proc)
    assert (result["games"], result["sets"]) == (12, 6)  # whole sets only
    assert result["llr"] is None and result["result"] is None


def test_jobs_2_gives_the_same_result_as_jobs_1() -> None:
    args = ("heuristic", "random", "--game", "merde", "--option", "deals=2", "--sprt", "0,30", "--seed", "11")
    one = _json(_run_test(*args, "--json"))
    two = _json(_run_test(*args, "--json", "--jobs", "2"))
    one.pop("seconds"), two.pop("seconds")
    assert one == two
    assert one["result"] in ("H0", "H1") and one["sets"] > 4
    # and without an SPRT, over a fixed number of games
    fixed = ("random", "random", "--game", "regicide", "--players", "3", "--games", "60", "--seed", "2",
             "--json")
    one, two = _json(_run_test(*fixed)), _json(_run_test(*fixed, "--jobs", "2"))
    one.pop("seconds"), two.pop("seconds")
    assert one == two and one["games"] == 60


M = ["random", "random", "--game", "merde"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["random", "random", "--game", "nope"], "argument --game: invalid choice: 'nope'"),
        (["random", "random"], "the following arguments are required: --game"),
        (["random", "--game", "merde"], "the following arguments are required: BOT_B"),
        ([*M, "--option", "deals=0"], "option 'deals': 0 is not allowed"),
        ([*M, "--option", "depth=3"], "unknown option 'depth' for merde"),
        ([*M, "--option", "deals"], "expected KEY=VALUE"),
        ([*M, "--players", "9"], "option 'players': 9 is not allowed"),
        ([*M, "--sprt", "50,0"], "elo0 must be below elo1"),
        ([*M, "--sprt", "0"], "expected ELO0,ELO1"),
        ([*M, "--sprt", "0,5", "--alpha", "1.5"], "alpha must be strictly"),
        ([*M, "--games", "5"], "less than one duplicate set (8 games)"),
        ([*M, "--games", "0"], "argument --games: must be at least 1"),
        ([*M, "--jobs", "x"], "argument --jobs: expected a positive integer"),
        (["no_such_module_xyz:Bot", "random", "--game", "merde"], "cannot import module 'no_such_module_x"),
        ([*M, "--field", "nobot"], "bot 'nobot' is not module:Class"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    proc = _run_test(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("atout-bot test: error: ") and message in lines[0], lines[0]


def test_faults_are_told_counted_and_the_game_goes_on() -> None:
    proc = _run_test(f"{SAMPLE_BOTS}:Raising", "random", "--game", "tiercon", "--games", "10", "--json")
    result = _json(proc)
    assert result["games"] == 10
    assert result["faults"]["A"] == {"exception": 10, "illegal": 0}  # one per game: its third decision
    assert result["faults"]["B"] == {"exception": 0, "illegal": 0}
    assert "bot A (" in proc.stderr and "Raising) raised an exception: set 1, game 1, seat 0" in proc.stderr
    assert "RuntimeError: the third decision always fails" in proc.stderr and "Traceback" in proc.stderr
    assert proc.stderr.count("Traceback") == 1  # the first one only; the others are counted
    assert "faults A 10" in proc.stderr

    proc = _run_test("random", f"{SAMPLE_BOTS}:Illegal", "--game", "merde", "--option", "deals=2",
                     "--games=8")
    assert proc.returncode == 0
    assert "bot B (" in proc.stderr and "played an illegal action" in proc.stderr
    assert "illegal action 'fly away'" in proc.stderr and "faults B 8" in proc.stderr


def test_ctrl_c_prints_the_result_so_far() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "atout.cli", "test", "random", "random", "--game", "merde", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # the first progress line: sets are being played
        assert first.startswith("games "), first
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["interrupted"] is True and 0 < result["games"] < 20000
    assert result["games"] == result["sets"] * 8  # whole sets only
    assert "Traceback" not in err


# ---------------------------------------------------------------- the API, in-process


def test_a_set_seats_a_and_b_everywhere_and_in_both_orders() -> None:
    assert set_tables(2) == [["A", "B"]]
    assert set_tables(4) == [["A", "B", "field", "field"], ["B", "A", "field", "field"]]
    assert TestConfig("merde", "random", "random", players=4).checked().set_size == 8
    assert TestConfig("tiercon", "random", "random").checked().set_size == 2
    # each table in its every rotation: A and B each hold every seat, B left of A and A left of B
    n = 4
    seatings = [[table[(i + r) % n] for i in range(n)] for table in set_tables(n) for r in range(n)]
    every_seat_twice = [0, 0, 1, 1, 2, 2, 3, 3]
    assert sorted(s.index("A") for s in seatings) == every_seat_twice
    assert sorted(s.index("B") for s in seatings) == every_seat_twice
    left_of_a = Counter(s[(s.index("A") + 1) % n] for s in seatings)
    assert left_of_a["B"] == 4 and Counter(s[(s.index("B") + 1) % n] for s in seatings)["A"] == 4


def test_equal_bots_are_even_where_the_seat_order_matters() -> None:
    # 4-player fool: the attacker leads to the seat on their left, and with seat rotations alone
    # (B always on A's left) random scored +61 Elo [55, 67] against random over 8000 games. With
    # the mirror table in every set the two are even.
    config = TestConfig("fool", "random", "random", players=4, field="random", seed=5)
    outcome = run_test(config, max_games=8 * 60)
    low, high = outcome.analysis.elo_ci95
    assert outcome.analysis.sets == 60 and low < 0 < high, progress_line(outcome)
    assert abs(outcome.analysis.elo) < 30


def test_run_match_reports_each_set_and_stops_on_the_verdict() -> None:
    seen: list[int] = []
    outcome = run_test(
        TestConfig("merde", "heuristic", "random", options={"deals": 2}, seed=4),
        Sprt(0, 50),
        on_set=lambda o, r: seen.append(r.index),
    )
    assert outcome.analysis.result == "H1" and not outcome.interrupted
    assert seen == list(range(outcome.analysis.sets))
    assert outcome.to_dict()["result"] == "H1"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_false_positive_rate_of_random_against_random_is_near_alpha() -> None:
    """Random against random is an Elo of exactly 0 (the duplicate set is symmetric in A and B):
    an SPRT [0, 50] accepts H1 with probability at most about alpha = 5% (Wald's bound; the
    overshoot of the bounds makes it smaller). Over 400 fixed seeds the number of H1 is
    Binomial(400, p <= 0.05): mean <= 20, standard deviation 4.4, so the bound 2 alpha = 40 is
    4.6 standard deviations away: the check is not flaky, and a biased set (say rotations without
    the mirror, or the games of a set counted as independent samples) breaks it. It takes about
    25 s on one core (merde, one deal, 4 players: about 35 sets to a verdict)."""
    seeds = 400
    verdicts: Counter[str] = Counter()
    for seed in range(seeds):
        config = TestConfig("merde", "random", "random", players=4, options={"deals": 1}, seed=seed)
        verdicts[run_test(config, Sprt(0, 50), max_games=4000).analysis.result or ""] += 1
    rate = verdicts["H1"] / seeds
    print(f"false positives: {verdicts['H1']} of {seeds} ({rate:.1%}); {dict(verdicts)}")
    assert rate <= 2 * 0.05, verdicts
    assert verdicts["H0"] + verdicts["inconclusive"] >= 0.9 * seeds


def test_a_first_ctrl_c_asks_the_match_to_stop_and_a_second_stops_it_at_once() -> None:
    from atout.sprt import _Stop

    stop = _Stop()
    previous = stop.install()
    try:
        assert signal.getsignal(signal.SIGINT) == stop._handler
        os.kill(os.getpid(), signal.SIGINT)  # the first: a flag, the set being played finishes
        time.sleep(0.05)
        assert stop.asked
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # the second: at once
            time.sleep(0.5)
    finally:
        stop.uninstall(previous)
    assert signal.getsignal(signal.SIGINT) == previous


def test_its_old_names_still_work() -> None:
    """``atout-bot match`` (the command's name before) runs the same test; ``atout.match``'s
    names are the new ones, with a DeprecationWarning."""
    args = ("random", "heuristic", "--game", "tiercon", "--games", "8", "--seed", "2", "--json")
    old = subprocess.run([sys.executable, "-m", "atout.cli", "match", *args], capture_output=True, text=True,
                         timeout=60, check=False)
    assert _json(old) == _json(_run_test(*args)) | {"seconds": _json(old)["seconds"]}
    import importlib
    import sys as system

    system.modules.pop("atout.match", None)
    with pytest.warns(DeprecationWarning, match="atout.match is now atout.sprt"):
        old_module = importlib.import_module("atout.match")
    assert (old_module.MatchConfig, old_module.run_match) == (TestConfig, run_test)
