"""The multi-host rehearsal with a nemesis (``deploy/nemesis.py``; ``deploy/rehearse.sh --nemesis``
runs the full schedule): the arena on four hosts made of Linux network namespaces (edge,
compute, data, bots), set up as docs/deployment.md's three-machine guide does (bots and API calls
over TLS through HAProxy with a CA made by openssl, Redis behind a password with a replica and
three sentinels, two APIs, two beats), one tournament, and during it a hung then killed game
server, a partition between compute and data, 5% packet loss between bots and edge, a killed
worker, the Redis primary killed (a sentinel promotes the replica), an API killed, a restart of
PostgreSQL and a rolling restart of both game servers; then a backup of the database restored
into a fresh PostgreSQL and every match verified there by replay.

CI runs the short schedule (:data:`nemesis.SHORT`, under 5 minutes). It needs root (namespaces)
and ``install.sh``'s system packages (nftables, haproxy, prometheus, postgresql): where the
hosts cannot be made the test fails saying why, it is never skipped. The report it prints (with
``-s`` or on a failure) gives each step's faults, forfeits, matches, decisions/s, time to
rebalance and scrape availability; the test asserts the issue's goals through ``problems()``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))  # deploy/ is not a package: its scripts import each other

import nemesis  # noqa: E402
import netns  # noqa: E402

pytestmark = pytest.mark.slow  # minutes: not in the fast lane (README, "Tests")


def _need_hosts() -> None:
    missing = [t for t in ("haproxy", "prometheus") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"not installed: {missing}; ./install.sh installs them", pytrace=False)
    try:
        netns.check_can_create()
    except netns.NamespaceError as error:
        pytest.fail(f"the rehearsal's hosts cannot be made here: {error}", pytrace=False)


@pytest.mark.timeout(420)
def test_the_arena_through_the_nemesis_on_four_hosts(tmp_path: Path) -> None:
    _need_hosts()
    lines: list[str] = []
    report = nemesis.rehearse(tmp_path, nemesis.SHORT, log=lines.append)
    summary = "\n".join(lines) + "\n" + report.summary()
    print(summary)
    # the nemesis did its work while matches were in flight, and every part came back
    assert [s.name for s in report.steps] == ["before", *nemesis.STEPS], summary
    assert all(s.in_flight > 0 for s in report.steps[1:]), summary
    assert report.base.bots_before == {"gameserver-1": 4, "gameserver-2": 4}, summary
    # the Redis primary died and the replica took over; the backup's restore holds every match
    assert report.failover["old"] == "redis" and report.failover["new"] == "redis-replica", summary
    assert report.backup["verified_ok"] is True, summary
    assert report.backup["restored"] == report.backup["matches"], summary
    # nothing left behind: no namespace of this run, no rule
    assert not [n for n in netns.namespaces() if n.startswith(f"{netns.PREFIX}{os.getpid()}-")]
    # the goals: one verified result per match, 0 faults and forfeits in every step, balanced
    # bots, every target up on 95% of the scrapes
    assert nemesis.problems(report) == [], summary


def test_hosts_partition_and_heal(tmp_path: Path) -> None:
    """The switch drops what a partition says, both ways, and heals; everything is deleted."""
    _need_hosts()
    hosts = netns.Hosts.create(["a", "b"])
    try:
        server = subprocess.Popen([*hosts.run_prefix("b"), sys.executable, "-c", (
            "import socket\n"
            f"s = socket.create_server(('{hosts.address('b')}', 7000))\n"
            "while True:\n    c, _ = s.accept(); c.sendall(b'hi'); c.close()\n")])

        def reach() -> str:
            probe = (f"import socket\ntry:\n    s = socket.create_connection(('{hosts.address('b')}', 7000), "
                     "timeout=1); print(s.recv(2).decode())\nexcept OSError:\n    print('no')")
            return subprocess.run([*hosts.run_prefix("a"), sys.executable, "-c", probe], capture_output=True,
                                  text=True, timeout=30).stdout.strip()

        deadline = time.monotonic() + 10
        while reach() != "hi" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert reach() == "hi"
        hosts.partition("a", "b")
        assert reach() == "no"
        hosts.heal()
        assert reach() == "hi"
        server.kill()
    finally:
        hosts.close()
    assert not [n for n in netns.namespaces() if n.startswith(hosts.tag)]
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    assert hosts.operator_link not in links


def test_problems_names_each_goal_missed() -> None:
    import rehearsal as rh

    base = rh.Report(matches=200, results=200, statuses={"finished": 200})
    steps = [nemesis.StepReport("before", "", 0.0, in_flight=0),
             nemesis.StepReport("sigstop", "", 1.0, in_flight=5, faults=3, forfeits=1)]
    report = nemesis.NemesisReport(base, "short", steps, replays=200, bots_end={"gameserver-1": 8},
                                   availability={"atout-api": 0.9, "prometheus": 1.0})
    base.faults = 3
    found = "\n".join(nemesis.problems(report))
    assert "sigstop: 3 faults, 1 forfeits" in found
    assert "not balanced" in found and "atout-api" in found
    assert nemesis.balanced({"gameserver-1": 3, "gameserver-2": 5})
    assert not nemesis.balanced({"gameserver-1": 2, "gameserver-2": 6})
    assert not nemesis.balanced({"gameserver-1": 4, "gameserver-2": 3, "none": 1})
