"""The dashboard in a real browser (Debian's chromium, driven by Playwright's Python client)
during a running tournament: a live match changes as it is played, the leaderboard fills, and
the replay viewer steps through a finished match with a seat selector.

Chromium is not optional here: when it is missing the test FAILS and says how to install it
(CI installs it: ``apt-get install -y chromium``). Screenshots go to ``$ATOUT_SCREENSHOTS``
when set (to look at the layout), else to the test's temporary directory.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN
from e2e_helpers import wait_until

pytestmark = pytest.mark.timeout(150)

CHROMIUM = os.environ.get("ATOUT_CHROMIUM", "/usr/bin/chromium")
THINK_S = "0.12"  # a match lasts about 8 s: it outlasts the page getting to it, even on a busy machine


def chromium() -> str:
    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if not path:
        pytest.fail(
            f"no chromium at {CHROMIUM} nor on PATH: the dashboard test needs it. Install it with "
            "`apt-get install -y chromium` (Debian), or point ATOUT_CHROMIUM at a Chromium binary."
        )
    return path


def playwright() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "the dashboard test needs Playwright's Python client: pip install -e '.[dev]' "
            "(never `playwright install`: the test drives the system's chromium)"
        )
    return sync_playwright


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("ATOUT_SCREENSHOTS") or tmp_path / "screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.mark.slow
def test_the_dashboard_follows_a_running_tournament(
    api, start_worker, connected_bots, clean_queues, shots
) -> None:
    executable = chromium()
    sync_playwright = playwright()
    start_worker("dash", concurrency=2)
    bots = connected_bots(5, "Sleepy", prefix="dash", ATOUT_TEST_THINK_S=THINK_S)
    created = api.organizer.post(
        "/v1/tournaments",
        json={
            "name": "dashboard cup",
            "game": "merde",
            "players": 4,
            "options": {"deals": 4},
            "bots": [name for name, _, _ in bots],
            "move_ms": 3000,
            "start": True,
        },
    )
    assert created.status_code == 201, created.text
    tournament = created.json()
    assert tournament["status"] == "running"

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 960})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))

            # The overview: the tournament, a live match, then the leaderboard filling.
            page.goto(f"{api.url}/#/")
            page.wait_for_selector(f'.tcard[data-tournament="{tournament["id"]}"]', timeout=15_000)
            page.click('.leaderboards .tab[data-game="merde"]')
            # A live match of this tournament (the session's database may hold other tests'
            # matches still marked running, whose table never moves).
            listed = api.organizer.get(f"/v1/tournaments/{tournament['id']}/matches",
                                       params={"limit": 50}).json()["items"]
            ours = ", ".join(f'.live-row[data-match="{m["id"]}"]' for m in listed)
            page.wait_for_selector(ours, timeout=20_000)
            page.screenshot(path=str(shots / "overview-running.png"), full_page=True)

            # A live match: its table changes as actions come (server-sent events).
            page.click(ours)
            page.wait_for_selector(".felt .seat", timeout=15_000)
            first = page.get_attribute(".table-area", "data-ply")
            page.wait_for_function(
                "(first) => { const a = document.querySelector('.table-area');"
                " return a && a.dataset.ply && a.dataset.ply !== first; }",
                arg=first,
                timeout=15_000,
            )
            assert page.locator(".felt .seat").count() == 4
            page.wait_for_selector(".felt .card", timeout=10_000)  # cards on the table (or the turned one)
            assert page.locator(".log li").count() >= 1
            assert page.locator(".live-state.live").count() == 1
            labels = page.eval_on_selector_all(".felt .card[data-card]", "els => els.map(e => e.textContent)")
            assert any(s in "".join(labels) for s in "♠♥♦♣"), labels  # suit symbols, not raw codes
            page.screenshot(path=str(shots / "live-match.png"), full_page=True)

            # The leaderboard fills as matches finish.
            page.goto(f"{api.url}/#/")
            page.click('.leaderboards .tab[data-game="merde"]')
            page.wait_for_function(
                "() => { const t = document.querySelector('.leaderboards table.leaderboard');"
                " return t && Number(t.dataset.rows) >= 4; }",
                timeout=60_000,
            )
            page.screenshot(path=str(shots / "overview-leaderboard.png"), full_page=True)

            # The tournament page, then a finished match's replay with the seat selector.
            wait_until(
                lambda: api.client.get(f"/v1/tournaments/{tournament['id']}").json()["status"] == "finished",
                90,
                "the tournament to finish",
                poll_s=0.2,
            )
            page.goto(f"{api.url}/#/tournaments/{tournament['id']}")
            page.wait_for_selector("table.standings tbody tr", timeout=10_000)
            page.wait_for_selector(".panel table.data td", timeout=10_000)
            page.screenshot(path=str(shots / "tournament.png"), full_page=True)

            match_id = api.client.get(f"/v1/tournaments/{tournament['id']}/matches").json()["items"][0]["id"]
            page.goto(f"{api.url}/#/matches/{match_id}")
            page.wait_for_selector(".slider", timeout=10_000)
            assert page.locator(".felt .hand.own").count() == 0  # spectators see no hand
            for _ in range(6):
                page.click('.step-btn[title^="next"]')
            assert page.get_attribute(".table-area", "data-ply") == "6"
            page.screenshot(path=str(shots / "replay-public.png"), full_page=True)

            # A seat's view needs a token: the organizer's shows that seat's hand.
            page.fill("#token-input", ADMIN_TOKEN)
            before = page.query_selector(".viewer-select")  # the page is drawn again with the token:
            page.click("#token-form button")  # wait for the new selector, or a choice made on the
            page.wait_for_function("el => !el.isConnected", arg=before, timeout=10_000)  # old one is lost
            page.wait_for_selector(".viewer-select", timeout=10_000)
            page.select_option(".viewer-select", "1")
            page.wait_for_selector(".felt .seat.viewer .hand.own .card", timeout=10_000)
            page.fill(".slider", "20")
            page.screenshot(path=str(shots / "replay-seat.png"), full_page=True)
            page.select_option(".viewer-select", "full")
            page.wait_for_function(
                "() => document.querySelectorAll('.felt .hand.own, .felt .hand:not(.backs)').length >= 4",
                timeout=10_000,
            )
            page.click('.step-btn[title="last"]')
            page.wait_for_selector(".badge.winner", timeout=5_000)
            page.screenshot(path=str(shots / "replay-full-end.png"), full_page=True)
            assert not errors, errors
        finally:
            browser.close()
