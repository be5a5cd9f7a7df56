"""Ladders on real parts (``POST /v1/ladders``): SDK bots of known strength in their own
processes (``heuristic``, a half-heuristic half-random bot, ``random``), a real Celery worker
running the ladder's ticks (no beat: the tick re-arms itself), the real game server, the API,
the CLI and the dashboard in a real Chromium. The ladder's order by ordinal must become the
strength order within a bounded number of matches; a late bot gets its share and climbs to its
place; a bot that disconnects, or is disabled, is seated no more after one tick."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN
from e2e_helpers import WORKER_BOTS, wait_until
from sqlalchemy import select
from test_dashboard import chromium, playwright

from atout_arena.core.keys import ladder_armed_key
from atout_arena.core.models import LadderSet, as_utc
from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(420)

TICK_S = 1.0
HALF = f"{WORKER_BOTS}:HalfHeuristic"
MAX_MATCHES = 600  # the bound within which the three bots must be ordered


@pytest.fixture(autouse=True)
def no_ladder_left_running(sessions):
    """Even when a test fails: a running ladder would go on seating bots of later tests."""
    yield
    from sqlalchemy import update

    from atout_arena.core.models import Ladder
    from atout_arena.core.vocabulary import LadderStatus

    with sessions() as session:
        session.execute(update(Ladder).where(Ladder.status == LadderStatus.RUNNING)
                        .values(status=LadderStatus.PAUSED))
        session.commit()


def _order(ladder: dict) -> list[str]:
    return [r["bot"] for r in ladder["standings"]]


def _a_tick_ran_since_now(redis_client, ladder_id: int) -> None:
    """Wait until a tick of the ladder's chain ran wholly after this call: each tick of the
    chain arms the next with a new token once it is done, so the second new token is set by a
    tick that started after the first one (the first may have started before this call)."""
    key = ladder_armed_key(ladder_id)
    tokens = [redis_client.get(key)]

    def moved() -> bool:
        token = redis_client.get(key)
        if token is not None and token != tokens[-1]:
            tokens.append(token)
        return len(tokens) >= 3

    wait_until(moved, 30, "two ticks of the ladder's chain")


def _sets_after(sessions, ladder_id: int, since: datetime) -> list[list[int]]:
    with sessions() as session:
        rows = session.execute(select(LadderSet.bots, LadderSet.created_at)
                               .where(LadderSet.ladder_id == ladder_id)).all()
    return [bots for bots, at in rows if as_utc(at) > since]


@pytest.mark.slow
def test_the_ladder_orders_bots_of_known_strength_and_a_late_bot_climbs(
    api, new_bot, game_server, spawn_bot, redis_client, start_worker, clean_queues, database_url, redis_url,
    tmp_path, sessions,
) -> None:
    start_worker("ladder", concurrency=8, ATOUT_LADDER_TICK_S=str(TICK_S))
    address = game_server.info["address"]
    strong, half, weak, late = (new_bot(p) for p in ("lad-heuristic", "lad-half", "lad-random", "lad-late"))
    for (_, bot_id, token), spec in ((strong, "heuristic"), (half, HALF), (weak, "random")):
        spawn_bot(address, token, spec)
        wait_until(lambda b=bot_id: is_connected(redis_client, b), 30, f"bot {bot_id} to connect")

    body: dict[str, Any] = {"name": f"ladder-{os.getpid()}-{time.monotonic_ns()}", "game": "tiercon",
            "bots": [strong[0], half[0], weak[0], late[0]], "target_in_flight": 6, "move_ms": 3000}
    assert api.client.post("/v1/ladders", json=body).status_code == 401  # the organizer's
    bad = api.organizer.post("/v1/ladders", json={**body, "bots": [strong[0], "nobody-here"]})
    assert bad.status_code == 422 and "nobody-here" in bad.json()["detail"]
    created = api.organizer.post("/v1/ladders", json=body)
    assert created.status_code == 201, created.text
    ladder = created.json()
    lid = ladder["id"]
    assert ladder["status"] == "running" and {r["sigma"] for r in ladder["standings"]} == {round(25 / 3, 4)}
    assert api.organizer.post("/v1/ladders", json=body).status_code == 409  # the name is taken

    expected = [strong[0], half[0], weak[0]]
    started = time.monotonic()

    def ordered() -> dict | None:
        shown = api.client.get(f"/v1/ladders/{lid}").json()
        rated = [r for r in shown["standings"] if r["bot"] in expected]
        if [r["bot"] for r in rated] == expected and min(r["sets"] for r in rated) >= 3:
            return shown
        assert shown["matches"].get("finished", 0) <= MAX_MATCHES, shown["standings"]
        return None

    first = wait_until(ordered, 240, "the ladder's order to be the strength order", poll_s=0.5)
    needed = first["matches"]["finished"]
    print(f"ladder: 3 bots ordered after {needed} matches ({first['sets']['rated']} sets), "
          f"{time.monotonic() - started:.1f} s; "
          f"{[(r['bot'][:14], r['ordinal']) for r in first['standings']]}")
    games = {r["bot"]: r["games"] for r in first["standings"]}
    assert min(games[b] for b in expected) >= 0.4 * max(games[b] for b in expected)  # a bounded share
    assert games[late[0]] == 0  # never seated while away
    flying = first["in_flight"]
    assert all(late[0] not in m["bots"] for m in flying)

    # A late bot (the heuristic too) connects: it is seated at once, gets its share, and climbs
    # above the half and the random bot.
    joined_at = first["matches"]["finished"]
    spawn_bot(address, late[2], "heuristic")
    wait_until(lambda: is_connected(redis_client, late[1]), 30, "the late bot to connect")
    came = datetime.now().astimezone()

    def climbed() -> dict | None:
        shown = api.client.get(f"/v1/ladders/{lid}").json()
        order = _order(shown)
        row = next(r for r in shown["standings"] if r["bot"] == late[0])
        if row["sets"] >= 4 and order.index(late[0]) < order.index(half[0]) < order.index(weak[0]):
            return shown
        return None

    after = wait_until(climbed, 180, "the late bot to reach its place", poll_s=0.5)
    played_since = after["matches"]["finished"] - joined_at
    late_row = next(r for r in after["standings"] if r["bot"] == late[0])
    print(f"ladder: the late bot placed after {played_since} more matches, its games {late_row['games']}")
    # Its share of the sets made since it came: half the seats of 4 bots (it starts from the
    # others' mean load, owed nothing for the sets before), with slack.
    made = _sets_after(sessions, lid, came)
    assert sum(late[1] in s for s in made) >= 0.35 * len(made), made

    # Metrics: matches played, in flight, each member's mu and sigma.
    scrape = api.client.get("/metrics").text
    assert f'atout_ladder_matches_total{{ladder="{body["name"]}"}}' in scrape
    assert f'atout_ladder_mu{{bot="{strong[0]}",ladder="{body["name"]}"}}' in scrape
    assert "atout_ladder_sigma{" in scrape and "atout_ladder_matches_in_flight{" in scrape

    # The CLI, through the API: show, pause, resume (rich table, and --json).
    env = {**os.environ, "ATOUT_ADMIN_TOKEN": ADMIN_TOKEN, "COLUMNS": "160"}
    cli = [sys.executable, "-m", "atout_arena.cli", "ladder"]
    shown = subprocess.run([*cli, "show", str(lid), "--api", api.url], capture_output=True, text=True,
                           timeout=60, env=env)
    assert shown.returncode == 0, shown.stderr
    assert body["name"] in shown.stdout and strong[0] in shown.stdout and "ordinal" in shown.stdout
    paused = subprocess.run([*cli, "pause", str(lid), "--api", api.url, "--json"], capture_output=True,
                            text=True, timeout=60, env=env)
    assert paused.returncode == 0, paused.stderr
    assert json.loads(paused.stdout)["status"] == "paused"
    again = subprocess.run([*cli, "pause", str(lid), "--api", api.url], capture_output=True, text=True,
                           timeout=60, env=env)
    assert again.returncode == 2 and "paused already" in again.stderr
    resumed = subprocess.run([*cli, "resume", str(lid), "--api", api.url, "--json"], capture_output=True,
                             text=True, timeout=60, env=env)
    assert resumed.returncode == 0 and json.loads(resumed.stdout)["status"] == "running", resumed.stderr

    # The dashboard: the ladder's page, live (its games count changes without a reload).
    sync_playwright = playwright()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            view = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            view.on("pageerror", lambda exc: errors.append(str(exc)))
            view.goto(f"{api.url}/#/ladders")
            view.wait_for_selector(f'.ladder-card[data-ladder="{lid}"]', timeout=15_000)
            view.click(f'.ladder-card[data-ladder="{lid}"]')
            view.wait_for_selector(".ladder-standings tbody tr", timeout=15_000)
            view.wait_for_selector(".ladder-live.live", timeout=15_000)
            rows = view.locator(".ladder-standings tbody tr")
            assert rows.count() == 4
            strong_row = f'.ladder-standings tr[data-bot="{strong[0]}"]'
            first_games = int(view.get_attribute(strong_row, "data-games") or -1)
            view.wait_for_function(
                "([bot, n]) => Number(document.querySelector(`.ladder-standings tr[data-bot='${bot}']`)"
                "?.dataset.games) > n", arg=[strong[0], first_games], timeout=60_000)  # live, by SSE
            assert view.locator(".ladder-in-flight, .panel .empty").count() >= 1
            shown_order = [view.get_attribute(f".ladder-standings tbody tr:nth-child({i})", "data-bot")
                           for i in range(1, 5)]
            api_order = _order(api.client.get(f"/v1/ladders/{lid}").json())
            assert set(shown_order) == set(api_order)
            shots = Path(os.environ.get("ATOUT_SCREENSHOTS") or tmp_path)
            shots.mkdir(parents=True, exist_ok=True)
            view.screenshot(path=str(shots / "ladder.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
    api.organizer.post(f"/v1/ladders/{lid}/pause")


@pytest.mark.slow
def test_a_bot_that_disconnects_or_is_disabled_is_seated_no_more(
    api, new_bot, game_server, spawn_bot, redis_client, start_worker, clean_queues, sessions,
) -> None:
    start_worker("ladder-out", concurrency=8, ATOUT_LADDER_TICK_S=str(TICK_S))
    address = game_server.info["address"]
    bots = [new_bot(f"out-{i}") for i in range(4)]
    processes = {}
    for name, bot_id, token in bots:
        processes[name] = spawn_bot(address, token, "random")
        wait_until(lambda b=bot_id: is_connected(redis_client, b), 30, f"bot {name} to connect")
    body = {"name": f"out-{os.getpid()}-{time.monotonic_ns()}", "game": "tiercon",
            "bots": [b[0] for b in bots], "target_in_flight": 4, "move_ms": 3000}
    lid = api.organizer.post("/v1/ladders", json=body).json()["id"]
    wait_until(lambda: api.client.get(f"/v1/ladders/{lid}").json()["sets"].get("rated", 0) >= 6, 120,
               "a few sets rated")

    # One bot's process dies: once the arena sees it gone, no set made after one tick seats it.
    gone_name, gone_id, _ = bots[0]
    processes[gone_name].kill()
    wait_until(lambda: not is_connected(redis_client, gone_id), 30, "the arena to see it gone")
    _a_tick_ran_since_now(redis_client, lid)  # one that saw it gone
    cutoff = datetime.now().astimezone()
    wait_until(lambda: len(_sets_after(sessions, lid, cutoff)) >= 4, 120, "sets made after the tick")
    assert all(gone_id not in s for s in _sets_after(sessions, lid, cutoff))
    row = next(r for r in api.client.get(f"/v1/ladders/{lid}").json()["standings"] if r["bot"] == gone_name)
    assert row["connected"] is False

    # Another is disabled: out of the pool at the next tick, shown as disabled.
    off_name, off_id, _ = bots[1]
    assert api.organizer.post(f"/v1/bots/{off_name}/disable").status_code == 200
    _a_tick_ran_since_now(redis_client, lid)
    cutoff = datetime.now().astimezone()
    wait_until(lambda: len(_sets_after(sessions, lid, cutoff)) >= 3, 120, "sets made after the tick")
    later = _sets_after(sessions, lid, cutoff)
    assert all(off_id not in s and gone_id not in s for s in later)
    assert all(sorted(s) == sorted([bots[2][1], bots[3][1]]) for s in later)
    shown = api.client.get(f"/v1/ladders/{lid}").json()
    assert next(r for r in shown["standings"] if r["bot"] == off_name)["disabled"] is True
    api.organizer.post(f"/v1/ladders/{lid}/pause")


def test_bad_ladder_requests_get_clear_errors(api, new_bot) -> None:
    a, b = new_bot("bad-a"), new_bot("bad-b")
    for path in ("/v1/ladders/999999", "/v1/ladders/999999/standings", "/v1/ladders/999999/events",
                 f"/v1/ladders/{2**70}", "/v1/ladders/0"):
        response = api.client.get(path)
        assert response.status_code in (404, 422), (path, response.status_code)
    assert api.client.get("/v1/ladders/999999").json()["detail"] == "no ladder 999999"
    assert api.organizer.post("/v1/ladders/999999/pause").status_code == 404
    assert api.client.post("/v1/ladders/1/pause").status_code == 401
    body = {"name": f"bad-{time.monotonic_ns()}", "game": "tiercon", "bots": [a[0], b[0]]}
    for change, words in (({"game": "chess"}, "game"), ({"target_in_flight": 0}, "target_in_flight"),
                          ({"bots": [a[0], "house-merde-1"]}, "house-merde-1 plays merde, not tiercon"),
                          ({"bots": [a[0]]}, "at least 2"),
                          ({"options": {"players": 3}}, "players"), ({"name": ""}, "name")):
        response = api.organizer.post("/v1/ladders", json={**body, **change})
        assert response.status_code == 422 and words in response.text, (change, response.text)
    listed = api.client.get("/v1/ladders").json()
    assert body["name"] not in {ladder["name"] for ladder in listed}  # nothing was stored


def test_the_sweeper_restarts_a_ladder_whose_chain_of_ticks_was_lost(
    api, connected_bots, start_worker, clean_queues, sessions, redis_client,
) -> None:
    """No beat runs: the worker's own keeper sweeps (under its lock) and finds the ladder with
    no chain of ticks armed."""
    from atout_arena.services.competitions import CompetitionSpec
    from atout_arena.services.ladders import create_ladder

    start_worker("ladder-sweep", concurrency=4, ATOUT_LADDER_TICK_S=str(TICK_S), ATOUT_SWEEP_INTERVAL_S="1")
    bots = connected_bots(2, "random", prefix="sweep")
    # Stored without its first tick (as if the task was lost with its worker) ...
    lid = create_ladder(sessions, name=f"sweep-{time.monotonic_ns()}", spec=CompetitionSpec.of("tiercon"),
                        bots=[b[0] for b in bots], target_in_flight=2)
    assert not redis_client.exists(ladder_armed_key(lid))
    # ... the worker's sweep finds no chain armed and ticks it: the ladder runs.
    wait_until(lambda: api.client.get(f"/v1/ladders/{lid}").json()["sets"].get("rated", 0) >= 2, 60,
               "the ladder to run")
    assert redis_client.exists(ladder_armed_key(lid))  # its chain lives again
    api.organizer.post(f"/v1/ladders/{lid}/pause")


def test_the_cli_creates_a_ladder_through_the_api(api, new_bot, clean_queues) -> None:
    a, b = new_bot("cli-a"), new_bot("cli-b")
    env = {**os.environ, "ATOUT_ADMIN_TOKEN": ADMIN_TOKEN, "COLUMNS": "160"}
    name = f"cli-{time.monotonic_ns()}"
    base = [sys.executable, "-m", "atout_arena.cli", "ladder", "create", name, "--game", "tiercon",
            "--api", api.url]

    def create(*extra: str, **more_env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *extra], capture_output=True, text=True, timeout=60,
                              env={**env, **more_env})

    bad = create("--bot", a[0], "--bot", "nobody-x")
    assert bad.returncode == 2 and "nobody-x" in bad.stderr, bad.stderr
    refused = create(ATOUT_ADMIN_TOKEN="wrong")
    assert refused.returncode == 2 and "401" in refused.stderr
    option = create("--bot", a[0], "--bot", b[0], "--option", "x=1")
    assert option.returncode == 2 and "x" in option.stderr  # tiercon has no option x: the engine says so
    made = create("--bot", a[0], "--bot", b[0], "--target-in-flight", "2", "--json")
    assert made.returncode == 0, made.stderr
    shown = json.loads(made.stdout)
    assert shown["name"] == name and {r["bot"] for r in shown["standings"]} == {a[0], b[0]}
    assert shown["target_in_flight"] == 2 and not shown["open"]
