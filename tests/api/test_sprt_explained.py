"""A test that waits says why, in the API and the CLI, and gives up (ATOUT_TEST_WAIT_TIMEOUT_S);
``test create --wait`` shows its progress as it goes; ``test list`` lists tests; a test's
matches are labelled as such, with the versions. Real parts: the API, a worker, a game server,
SDK bots in their own processes (as tests/api/test_sprt.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from api_helpers import ADMIN_TOKEN
from axe_helpers import assert_accessible
from e2e_helpers import wait_until
from test_dashboard import chromium, playwright

from atout_arena.cli_competitions import progress_line
from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(120)


def test_the_progress_line_has_games_llr_within_its_bounds_and_elo_plus_minus() -> None:
    t = {"id": 3, "status": "running", "games": 24, "sets": 12, "llr": 0.534, "lower": -2.944, "upper": 2.944,
         "elo": 35.21, "elo_ci95": [-24.9, 95.3], "waiting": None}
    assert progress_line(t) == "test 3 running: 24 games, 12 sets, LLR 0.53 in [-2.94, 2.94], Elo 35.2 ± 60.1"
    waiting = {**t, "games": 0, "sets": 0, "llr": 0.0, "elo": None, "elo_ci95": [None, None],
               "waiting": "waiting for alice@v9: not connected", "gives_up_at": "2026-12-05T06:10:00Z"}
    assert progress_line(waiting).endswith(
        "Elo -; waiting for alice@v9: not connected (gives up at 06:10:00 UTC)")


def test_match_show_says_a_test_match_is_one() -> None:
    from rich.console import Console

    from atout_arena.cli_competitions import _print_match

    console = Console(record=True, width=200)
    _print_match(console, {"id": 7, "game": "tiercon", "players": 2, "status": "finished",
                           "outcome": "finished", "label": "test #3: alice@v2 vs alice@v1", "error": None,
                           "seats": []})
    assert console.export_text().startswith(
        "match 7: tiercon, 2 players - finished (finished), test #3: alice@v2 vs alice@v1\n")


def _cli(api, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "ATOUT_ADMIN_TOKEN": ADMIN_TOKEN}
    return subprocess.run([sys.executable, "-m", "atout_arena.cli", "test", *args, "--api", api.url],
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.slow
def test_a_test_waiting_for_a_version_says_so_gives_up_and_a_played_one_shows_its_progress(
    api, new_bot, game_server, spawn_bot, redis_client, start_worker, clean_queues,
) -> None:
    start_worker("explained", concurrency=8, ATOUT_TEST_WAIT_TIMEOUT_S="4", ATOUT_SWEEP_INTERVAL_S="0.5")
    name, bot_id, token = new_bot("waits")
    address = game_server.info["address"]
    spawn_bot(address, token, "random", ATOUT_BOT_VERSION="v1")
    spawn_bot(address, token, "random", ATOUT_BOT_VERSION="v2")
    for version in ("v1", "v2"):
        wait_until(lambda v=version: is_connected(redis_client, bot_id, v), 30, f"{version} to connect")
    me = api.as_bot(token)
    body = {"game": "tiercon", "a": f"{name}@v1", "b": f"{name}@v9", "max_games": 4, "move_ms": 2000}

    created = me.post("/v1/tests", json=body)  # v9 never connected
    assert created.status_code == 201, created.text
    test = created.json()
    assert test["status"] == "running" and test["waiting"] == f"waiting for {name}@v9: not connected"
    assert test["gives_up_at"] is not None

    listed = _cli(api, "list", "--bot", name, "--status", "running")
    assert listed.returncode == 0, listed.stderr
    assert name in listed.stdout and f"test {test['id']}:" in listed.stdout
    assert f"test {test['id']}: waiting for {name}@v9: not connected (gives up at" in listed.stdout

    # --wait, off a terminal: a plain line at once saying what it waits for, then the end and why
    waited = _cli(api, "create", f"{name}@v2", f"{name}@v9", "--game", "tiercon", "--max-games", "4",
                  "--wait")
    assert waited.returncode == 0, waited.stderr
    assert f"waiting for {name}@v9: not connected" in waited.stderr, waited.stderr
    assert "- cancelled" in waited.stdout, waited.stdout
    assert f"\n  gave up after 4 s waiting for {name}@v9: not connected\n" in waited.stdout, waited.stdout

    over = wait_until(lambda: (t := api.client.get(f"/v1/tests/{test['id']}").json())["status"] != "running"
                      and t, 30, "the test to give up")
    assert over["status"] == "cancelled" and over["waiting"] is None
    assert over["reason"] == f"gave up after 4 s waiting for {name}@v9: not connected"
    assert api.client.get(f"/v1/tests?bot={name}&status=running").json() == []  # its slots are free

    # both versions there: it plays, --wait shows its games, LLR and Elo, and its matches say what they are
    played = _cli(api, "create", f"{name}@v2", f"{name}@v1", "--game", "tiercon", "--max-games", "4",
                  "--move-ms", "2000", "--wait", "--json")
    assert played.returncode == 0, played.stderr
    assert " games, " in played.stderr and " LLR " in played.stderr and "Elo" in played.stderr, played.stderr
    final = json.loads(played.stdout)
    assert final["status"] == "finished" and final["games"] == 4
    assert final["reason"].startswith("max_games reached")
    matches = api.client.get(f"/v1/matches?test={final['id']}&limit=50").json()["items"]
    assert matches and {m["label"] for m in matches} == {f"test #{final['id']}: {name}@v2 vs {name}@v1"}
    assert all(sorted(s["version"] for s in m["seats"]) == ["v1", "v2"]
               for m in matches if m["status"] == "finished")

    # The dashboard: the Tests page says why a test ended; a test's matches show their versions;
    # a test match is labelled as such, linking to its test.
    with playwright()() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            view = browser.new_page()
            view.goto(f"{api.url}/#/tests")
            card = f'.test-card[data-test="{test["id"]}"] .test-why'
            view.wait_for_selector(card, timeout=15_000)
            assert view.inner_text(card) == over["reason"]
            assert_accessible(view, "the Tests page's cards", context=".tcards")
            view.goto(f"{api.url}/#/tests/{final['id']}")
            view.wait_for_selector("table.matches", timeout=15_000)
            assert f"{name}@v2" in view.inner_text("table.matches")
            view.goto(f"{api.url}/#/matches/{matches[0]['id']}")
            label = view.wait_for_selector(f'.page-head a[href="#/tests/{final["id"]}"]', timeout=15_000)
            assert label.inner_text() == f"test #{final['id']}: {name}@v2 vs {name}@v1"
            assert "practice match" not in view.inner_text(".page-head")
        finally:
            browser.close()
