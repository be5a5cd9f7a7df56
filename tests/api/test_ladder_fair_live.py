"""Issue 32, findings 3 and 5, on real parts: a ladder of five instant SDK bots at four-seat
merde tables (a real worker ticking it, the game server, the API, the CLI, Chromium) shares its
sets fairly; its standings mark provisional members; each member's rating history is served
(API, CLI, a chart on the dashboard that passes axe-core); ``/v1/matches?ladder=`` and
``?tournament=`` filter; an unknown query parameter of any list endpoint is a 422 naming it.
The matchmaker's rule over many seeds: tests/workers/test_matchmaker_shares.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest
from api_helpers import ADMIN_TOKEN
from axe_helpers import assert_accessible
from e2e_helpers import wait_until
from sqlalchemy import select, update
from test_dashboard import chromium, playwright

from atout_arena.core.models import Ladder, LadderSet
from atout_arena.core.vocabulary import LadderStatus

pytestmark = pytest.mark.timeout(300)

SETS = 10  # rated sets to wait for: 80 merde games


@pytest.fixture(autouse=True)
def no_ladder_left_running(sessions):
    yield
    with sessions() as session:
        session.execute(update(Ladder).where(Ladder.status == LadderStatus.RUNNING)
                        .values(status=LadderStatus.PAUSED))
        session.commit()


def test_every_list_endpoint_refuses_an_unknown_query_parameter(api) -> None:
    for path in ("/v1/matches", "/v1/tournaments", "/v1/ladders", "/v1/bots", "/v1/leagues", "/v1/tests",
                 "/v1/games", "/v1/ratings?game=merde", "/v1/ladders/1/history"):
        sep = "&" if "?" in path else "?"
        response = api.organizer.get(f"{path}{sep}colour=red")
        assert response.status_code == 422, (path, response.status_code, response.text)
        assert "unknown query parameter 'colour'" in response.json()["detail"], response.text
    assert api.client.get("/v1/matches?limit=1").status_code == 200  # a known one is fine
    assert api.client.get("/v1/matches?ladder=999999").json()["items"] == []  # a filter, not ignored
    assert api.client.get("/v1/matches?tournament=999999").json()["items"] == []
    assert api.client.get("/v1/ladders/999999/history").status_code == 404


@pytest.mark.slow
def test_a_four_seat_ladder_shares_its_sets_and_shows_its_history(
    api, connected_bots, start_worker, clean_queues, sessions, tmp_path,
) -> None:
    start_worker("ladder-fair", concurrency=8, ATOUT_LADDER_TICK_S="1")
    bots = connected_bots(5, "random", prefix="fair")
    names = [b[0] for b in bots]
    body = {"name": f"fair-{os.getpid()}-{time.monotonic_ns()}", "game": "merde", "players": 4,
            "options": {"deals": 1}, "bots": names, "target_in_flight": 16, "move_ms": 2000}
    created = api.organizer.post("/v1/ladders", json=body)
    assert created.status_code == 201, created.text
    lid = created.json()["id"]
    assert all(r["provisional"] for r in created.json()["standings"])  # nobody has played yet
    wait_until(lambda: api.client.get(f"/v1/ladders/{lid}").json()["sets"].get("rated", 0) >= SETS, 180,
               f"{SETS} sets rated")
    api.organizer.post(f"/v1/ladders/{lid}/pause")
    # A paused ladder lets its running sets finish: read the standings and the history once they have
    # (else a set rated between the two reads gives a bot one point more than its standings' sets).
    wait_until(lambda: api.client.get(f"/v1/ladders/{lid}").json()["sets"].get("running", 0) == 0, 120,
               "the paused ladder's running sets to end")

    # Fair shares: the sets made (rated, running or void) seat each bot within two sets of the
    # mean (the rule: half a set of slack plus the set in hand).
    with sessions() as session:
        tables = list(session.scalars(select(LadderSet.bots).where(LadderSet.ladder_id == lid)))
    seats = Counter(b for t in tables for b in t)
    mean = len(tables) * 4 / 5
    print(f"live: {len(tables)} sets, seats per bot {sorted(seats.values())}, mean {mean:.1f}")
    assert all(abs(seats[b[1]] - mean) <= 2 for b in bots), seats

    # The standings: provisional by the documented rule, established members first.
    standings = api.client.get(f"/v1/ladders/{lid}/standings").json()
    for row in standings:
        assert row["provisional"] == (row["sets"] < 5 or row["sigma"] > 4.0), row
    flags = [row["provisional"] for row in standings]
    assert flags == sorted(flags)

    # The history: one point per rated set of each bot, the last one its current rating.
    history = api.client.get(f"/v1/ladders/{lid}/history").json()
    assert {h["bot"] for h in history} == set(names)
    for line in history:
        row = next(r for r in standings if r["bot"] == line["bot"])
        assert len(line["points"]) == row["sets"]
        if line["points"]:
            assert line["points"][-1]["mu"] == pytest.approx(row["mu"], abs=1e-3)
    one = api.client.get(f"/v1/ladders/{lid}/history", params={"bot": names[0]}).json()
    assert [h["bot"] for h in one] == [names[0]]
    assert api.client.get(f"/v1/ladders/{lid}/history", params={"bot": "nobody-here"}).status_code == 404

    # A bot's ladder matches, through the API and the CLI.
    page = api.client.get("/v1/matches", params={"ladder": lid, "bot": names[0], "limit": 500}).json()
    assert page["total"] >= 1 and all(m["ladder_id"] == lid for m in page["items"])
    assert all(names[0] in [s["bot"] for s in m["seats"]] for m in page["items"])
    env = {**os.environ, "ATOUT_ADMIN_TOKEN": ADMIN_TOKEN, "COLUMNS": "200"}
    cli = [sys.executable, "-m", "atout_arena.cli"]
    listed = subprocess.run([*cli, "match", "list", "--ladder", str(lid), "--bot", names[0], "--limit", "500",
                             "--json", "--api", api.url], capture_output=True, text=True, timeout=60, env=env)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["total"] == page["total"]
    shown = subprocess.run([*cli, "ladder", "history", str(lid), "--bot", names[0], "--api", api.url],
                           capture_output=True, text=True, timeout=60, env=env)
    assert shown.returncode == 0 and names[0] in shown.stdout and "ordinal" in shown.stdout, shown.stderr

    # The dashboard: the chart of the history, one line per member, accessible.
    with playwright()() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            view = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            view.on("pageerror", lambda exc: errors.append(str(exc)))
            view.goto(f"{api.url}/#/ladders/{lid}")
            view.wait_for_selector(".ladder-history svg[role=img] path[data-series]", timeout=15_000)
            assert view.locator(".ladder-history svg path[data-series]").count() == len(
                [h for h in history if h["points"]])
            assert "ordinal" in (view.get_attribute(".ladder-history svg", "aria-label") or "")
            assert_accessible(view, "a ladder's rating history", context=".ladder-history")
            assert_accessible(view, "a ladder's standings", context=".ladder-standings")
            view.screenshot(path=str(tmp_path / "ladder-history.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
