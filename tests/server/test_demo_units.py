"""The demo's plain parts, without processes: the plan, the progress lines, the final table,
the signal counting and the stopping of process groups. (The demo itself, end to end:
tests/e2e/test_demo.py.)"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from atout_arena.demo import PRESETS, plan_demo
from atout_arena.demo.processes import Parts, StopSignals
from atout_arena.demo.report import BotLine, Progress, Rate, Report, format_report, percentile


def test_the_default_plan_is_merde_with_heuristic_and_random_bots() -> None:
    plan = plan_demo()
    assert plan.game == "merde" and plan.players == 4
    assert [b.name for b in plan.bots] == ["heuristic-1", "random-2", "heuristic-3", "random-4"]
    assert [b.kind for b in plan.bots] == ["heuristic", "random"] * 2
    assert plan.matches == PRESETS["merde"].games_per_pairing  # 4 bots at one 4-seat table


def test_a_plan_fits_the_seats_to_the_bots_and_counts_the_matches() -> None:
    plan = plan_demo("merde", bots=3, games_per_pairing=2)
    assert plan.players == 3 and plan.matches == 2
    plan = plan_demo("fool", bots=3, games_per_pairing=1)
    assert plan.players == 2 and plan.matches == 3  # every pair once


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"bots": 1}, "at least 2 bots"),
        ({"game": "merde", "bots": 2}, "merde needs at least 3 players"),
        ({"games_per_pairing": 0}, "at least 1"),
        ({"game": "merde", "bots": 3, "players": 4}, "needs at least 4 bots"),
        ({"game": "tiercon", "bots": 4, "players": 3}, "players"),
    ],
)
def test_a_bad_plan_says_why(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan_demo(**kwargs)


def test_progress_without_a_terminal_prints_plain_lines_when_the_count_moves() -> None:
    out = io.StringIO()
    progress = Progress(out, total=10, tty=False, every_s=0, quiet_s=3600)
    progress.update(0, 0, 0)
    progress.update(0, 10, 1)  # nothing moved: no line
    progress.update(4, 1234.4, 65)
    progress.update(10, 900, 70, final=True)
    assert out.getvalue().splitlines() == [
        "progress: 0/10 matches  0 decisions/s  0:00",
        "progress: 4/10 matches  1,234 decisions/s  1:05",
        "progress: 10/10 matches  900 decisions/s  1:10",
    ]


def test_progress_on_a_terminal_redraws_one_bar() -> None:
    out = io.StringIO()
    progress = Progress(out, total=4, tty=True)
    progress.width = 8
    progress.update(2, 10, 3)
    progress.interrupt()
    assert out.getvalue() == "\r  [####....] 2/4 matches  10 decisions/s  0:03\x1b[K\n"


def test_rate_is_over_a_sliding_window() -> None:
    rate = Rate(window_s=2)
    assert rate.add(0.0, 0) == 0
    assert rate.add(1.0, 100) == 100
    assert rate.add(2.0, 300) == 150
    assert rate.add(3.0, 300) == pytest.approx(100)  # (300 - 100) / 2: the first sample left


def test_percentile_is_the_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile([5.0], 99) == 5.0


def test_the_final_table_shows_elo_with_its_interval_faults_and_think_times() -> None:
    lines = [
        BotLine(1, "heuristic-1", 5.0, 3, 4, 0, 0, rating=1620.4, ci_low=1520.4, ci_high=1720.4,
                think_ms=[1.0, 2.0, 3.0]),
        BotLine(2, "random-2", 1.0, 0, 4, 3, 1, rating=1379.6, ci_low=1279.6, ci_high=1479.6,
                fault_kinds=Counter(timeout=3), think_ms=[150.0, 250.0]),
    ]
    text = format_report(Report(1, "finished", {"finished": 4}, lines, 100))
    assert "   1  heuristic-1     1620   ±100     5.0     3       4      0     2.0 ms    3.0 ms" in text
    assert "random-2        1380   ±100     1.0     0       4 3 (1 forfeit)     150 ms    250 ms" in text
    assert "faults by kind: random-2: 3 timeout" in text
    assert "+/-100" in format_report(Report(1, "finished", {"finished": 4}, lines, 100), plus_minus="+/-")


def test_stop_signals_count_and_restore_the_handlers() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with StopSignals() as signals:
        assert not signals.requested
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        assert signals.requested and not signals.forced
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        assert signals.forced
    assert signal.getsignal(signal.SIGTERM) is before


def test_parts_are_stopped_by_process_group_children_included(tmp_path: Path) -> None:
    parts = Parts(tmp_path, dict(os.environ))
    # a part that ignores SIGTERM and has a child of its own: both must go
    script = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
              "print(c.pid, flush=True); time.sleep(60)")
    part = parts.start("stubborn", "a stubborn part", [sys.executable, "-c", script], tier=1)
    deadline = time.monotonic() + 10
    while not part.log().strip() and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(part.log().split()[0])
    killed = parts.stop_all(lambda: False, timeout=0.5)
    assert killed == [part] and not part.alive()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":  # killed, waiting for init to reap it
            break
        time.sleep(0.05)
    else:
        subprocess.run(["kill", "-9", str(child)], check=False)
        pytest.fail("the part's child outlived its process group")


def test_the_demo_says_match_for_one_and_matches_for_more() -> None:
    from atout_arena.demo.report import summary_line, tournament_line

    assert tournament_line(1, 1, "merde") == "tournament 1: 1 match of merde"
    assert tournament_line(2, 6, "fool") == "tournament 2: 6 matches of fool"
    assert summary_line(1, 1, 2.0) == "1 match, 1 decision in 2.0 s (0 decisions/s)"
    assert summary_line(3, 1234, 2.0) == "3 matches, 1,234 decisions in 2.0 s (617 decisions/s)"
    out = io.StringIO()
    Progress(out, total=1, tty=False, every_s=0).update(1, 5, 1, final=True)
    assert out.getvalue() == "progress: 1/1 match  5 decisions/s  0:01\n"
