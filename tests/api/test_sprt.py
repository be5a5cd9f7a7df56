"""Tests in the arena (``POST /v1/tests``): two versions of one bot, each its own SDK process,
play duplicate sets through a real worker until the SPRT decides; the LLR is shown by the API,
the CLI and the dashboard (a real browser)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from e2e_helpers import wait_until
from test_dashboard import chromium, playwright

from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(240)


@pytest.mark.slow
def test_version_2_against_version_1_until_the_sprt_decides(
    api, new_bot, game_server, spawn_bot, redis_client, start_worker, clean_queues, database_url, redis_url,
    tmp_path,
) -> None:
    start_worker("tests", concurrency=8)
    name, bot_id, token = new_bot("sprt")
    address = game_server.info["address"]
    spawn_bot(address, token, "heuristic", ATOUT_BOT_VERSION="v2")  # the new version: the heuristic bot
    spawn_bot(address, token, "random", ATOUT_BOT_VERSION="v1")  # the old one: random moves
    for version in ("v1", "v2"):
        wait_until(lambda v=version: is_connected(redis_client, bot_id, v), 30, f"{version} to connect")

    me = api.as_bot(token)
    body = {"game": "tiercon", "a": f"{name}@v2", "b": f"{name}@v1", "sprt": {"elo0": 0, "elo1": 50},
            "max_games": 400, "sets_in_flight": 6, "move_ms": 3000}
    assert api.client.post("/v1/tests", json=body).status_code == 401
    other, _, _ = new_bot("other")
    refused = me.post("/v1/tests", json={**body, "b": other})  # a bot may test itself, not others
    assert refused.status_code == 403, refused.text
    bad = me.post("/v1/tests", json={**body, "b": f"{name}@v2"})
    assert bad.status_code == 422 and "both" in bad.json()["detail"]
    created = me.post("/v1/tests", json=body)  # its own versions: allowed with the bot's token
    assert created.status_code == 201, created.text
    test = created.json()
    assert test["status"] == "running" and test["seed"] is None
    assert (test["a"], test["b"]) == (f"{name}@v2", f"{name}@v1")

    def done() -> dict | None:
        shown = api.client.get(f"/v1/tests/{test['id']}").json()
        return shown if shown["status"] != "running" else None

    final = wait_until(done, 180, "the SPRT to decide", poll_s=0.5)
    print(f"arena test: {final['games']} games, {final['sets']} sets, LLR {final['llr']:.2f} "
          f"[{final['lower']:.2f}, {final['upper']:.2f}], Elo {final['elo']}, result {final['result']}")
    assert final["status"] == "finished" and final["result"] == "H1", final
    assert final["llr"] >= final["upper"] and final["games"] == 2 * final["sets"] <= 400
    # published once over and its last running match done (services.deals)
    wait_until(lambda: api.client.get(f"/v1/tests/{test['id']}").json()["seed"] is not None, 60, "the seed")
    assert final["elo"] is None or final["elo"] > 50

    # Every match of the test: the two versions seat by seat, unrated, with the version each played.
    page = api.client.get(f"/v1/matches?test={test['id']}&limit=500").json()
    finished = [m for m in page["items"] if m["status"] == "finished"]
    assert finished and all(m["test_id"] == test["id"] and not m["practice"] for m in finished)
    assert all(sorted(s["version"] for s in m["seats"]) == ["v1", "v2"] for m in finished)
    assert all(s["bot_think_ms"] is not None for m in finished for s in m["seats"])  # the SDK tells it
    detail = api.as_bot(token).get(f"/v1/bots/{name}").json()
    versions = {v["version"]: v for v in detail["versions"]}
    assert set(versions) >= {"v1", "v2"} and versions["v2"]["wins"] > versions["v1"]["wins"]
    assert detail["think_time"]["told"] > 0 and detail["think_time"]["network_p50_ms"] is not None
    ratings = api.client.get("/v1/ratings?game=tiercon").json()["rows"]
    assert name not in {r["bot"] for r in ratings}  # test matches are unrated

    # The CLI shows the same test.
    env = {**os.environ, "ATOUT_DATABASE_URL": database_url, "ATOUT_REDIS_URL": redis_url}
    shown = subprocess.run([sys.executable, "-m", "atout_arena.cli", "test", "show", str(test["id"]),
                            "--api", api.url],
                           capture_output=True, text=True, timeout=60, env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"{name}@v2 vs {name}@v1" in shown.stdout and "finished H1" in shown.stdout
    assert f"LLR {final['llr']:.2f} in [{final['lower']:.2f}, {final['upper']:.2f}]" in shown.stdout

    # The dashboard: the tests page and the test's page with its LLR bar.
    sync_playwright = playwright()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            view = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
            errors: list[str] = []
            view.on("pageerror", lambda exc: errors.append(str(exc)))
            view.goto(f"{api.url}/#/tests")
            view.wait_for_selector(f'.test-card[data-test="{test["id"]}"] .llr-bar', timeout=15_000)
            view.click(f'.test-card[data-test="{test["id"]}"]')
            view.wait_for_selector(".test-stats", timeout=15_000)
            llr = float(view.get_attribute(".page-head ~ section .llr-bar", "data-llr") or "nan")
            assert abs(llr - final["llr"]) < 1e-6
            assert "H1" in view.inner_text(".page-head")
            assert view.locator(".llr-mark.good").count() == 1
            view.screenshot(path=str(tmp_path / "test-page.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
