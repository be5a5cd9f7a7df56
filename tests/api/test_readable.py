"""What people read: a win is a first place shared with no opponent (standings and a bot's
versions), the games page shows options as JSON values with readable defaults, and a
cancelled tournament's progress bar is not full (the dashboard in Chromium).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update
from test_dashboard import chromium, playwright

pytestmark = pytest.mark.timeout(120)


def play(sessions: Any, match_ids: list[int]) -> None:
    """Play these matches in-process (first legal action for every seat) and store them."""
    from atout_arena.core.match import Answer, run_loop
    from atout_workers import store

    for match_id in match_ids:
        claimed = store.claim_match(sessions, match_id, "tests", 60)
        assert claimed is not None
        outcome = run_loop(claimed[0], lambda ask: Answer(ask.legal_actions[0], 1.0))
        store.store_result(sessions, match_id, "tests", outcome)


def test_a_first_place_shared_with_an_opponent_is_no_win(lone_api: Any) -> None:
    from atout_arena.core.models import MatchSeat
    from atout_arena.services.tournaments import start_tournament

    for name in ("ann", "ben"):
        assert lone_api.post("/v1/bots", json={"name": name}).status_code == 201
    body = {"name": "ties", "game": "tiercon", "bots": ["ann", "ben"], "games_per_pairing": 2}
    created = lone_api.post("/v1/tournaments", json=body)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    match_ids = start_tournament(lone_api.sessions, tid)
    assert len(match_ids) == 2
    play(lone_api.sessions, match_ids)
    with lone_api.sessions() as session:  # the first match: a tie for first
        session.execute(update(MatchSeat).where(MatchSeat.match_id == match_ids[0]).values(place=1))
        session.execute(update(MatchSeat).where(MatchSeat.match_id == match_ids[1], MatchSeat.seat == 0)
                        .values(place=1))
        session.execute(update(MatchSeat).where(MatchSeat.match_id == match_ids[1], MatchSeat.seat == 1)
                        .values(place=2))
        session.commit()
    rows = {r["bot"]: r for r in lone_api.get(f"/v1/tournaments/{tid}/standings").json()["standings"]}
    first_seat_of_second = lone_api.get(f"/v1/matches/{match_ids[1]}").json()["seats"][0]["bot"]
    other = "ben" if first_seat_of_second == "ann" else "ann"
    assert rows[first_seat_of_second]["wins"] == 1 and rows[first_seat_of_second]["places"] == {"1": 2}
    assert rows[other]["wins"] == 0 and rows[other]["places"] == {"1": 1, "2": 1}
    for name, wins in ((first_seat_of_second, 1), (other, 0)):
        versions = lone_api.get(f"/v1/bots/{name}").json()["versions"]
        assert [(v["matches"], v["wins"]) for v in versions] == [(2, wins)], (name, versions)


def test_the_games_page_and_a_cancelled_tournament_read_well(lone_api: Any) -> None:
    from atout_arena.services.tournaments import start_tournament

    for name in ("cat", "dan", "eve"):
        assert lone_api.post("/v1/bots", json={"name": name}).status_code == 201
    created = lone_api.post("/v1/tournaments", json={"name": "stopped", "game": "tiercon",
                                                     "bots": ["cat", "dan", "eve"], "games_per_pairing": 2})
    tid = created.json()["id"]
    match_ids = start_tournament(lone_api.sessions, tid)
    play(lone_api.sessions, match_ids[:2])
    cancelled = lone_api.post(f"/v1/tournaments/{tid}/cancel").json()
    assert cancelled["status"] == "cancelled" and cancelled["progress"]["by_status"]["cancelled"] == 4

    base = str(lone_api.base_url).rstrip("/")
    with playwright()() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            page = browser.new_page()
            page.goto(f"{base}/#/games")
            page.wait_for_selector("table.data td")
            text = page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
            assert "False or True" not in text and "null" not in text, text
            assert "false or true" in text and "by player count" in text and "36 or 52" in text
            assert "ten or five_plus_tricks" in text

            page.goto(f"{base}/#/tournaments/{tid}")
            page.wait_for_selector(".progress .label")
            label = page.inner_text(".progress .label")
            assert label == "2 / 6 · 4 cancelled", label
            widths = page.evaluate(
                """() => { const bar = document.querySelector('.progress');
                           const whole = bar.getBoundingClientRect().width;
                           const w = (s) => bar.querySelector(s).getBoundingClientRect().width / whole;
                           return [w('.fill'), w('.cancelled')]; }"""
            )
            assert widths[0] == pytest.approx(2 / 6, abs=0.03), widths  # played, not full
            assert widths[1] == pytest.approx(4 / 6, abs=0.03), widths  # the cancelled segment
        finally:
            browser.close()
