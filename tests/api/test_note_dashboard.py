"""The dashboard's replay move log shows a bot's note when the API gives it, as text: a note
holding HTML or a script is shown as typed, never run (Chromium, the organizer's token)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

NOTE = '<img src=x onerror="document.title=\'pwned\'"> & <b>hold</b> the ace'


def test_the_replay_move_log_shows_notes_as_text(browser: Any, lone_api: Any) -> None:
    from api_helpers import ADMIN_TOKEN

    from atout_arena.core.match import Answer, run_loop
    from atout_arena.services.tournaments import start_tournament
    from atout_workers import store

    for name in ("noter", "quiet"):
        assert lone_api.post("/v1/bots", json={"name": name}).status_code == 201
    created = lone_api.post("/v1/tournaments", json={"name": "notes", "game": "fool", "players": 2,
                                                     "bots": ["noter", "quiet"]})
    assert created.status_code == 201, created.text
    (match_id,) = start_tournament(lone_api.sessions, created.json()["id"])
    claimed = store.claim_match(lone_api.sessions, match_id, "tests", 60)
    assert claimed is not None
    noter = [s.name for s in claimed[0].seats].index("noter")

    def answer(ask: Any) -> Answer:
        return Answer(ask.legal_actions[0], 1.0, note=f"{NOTE} {ask.seat}" if ask.seat == noter else None)

    outcome = run_loop(claimed[0], answer)
    store.store_result(lone_api.sessions, match_id, "tests", outcome)
    noted = sum(1 for step in outcome.steps if step.seat == noter)

    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    page.goto(f"{str(lone_api.base_url).rstrip('/')}/#/matches/{match_id}")
    page.wait_for_selector(".log li")
    assert page.locator(".log .note").count() == 0  # anyone, while the tournament runs: no note
    page.fill("#token-input", ADMIN_TOKEN)
    page.click("#token-form button")
    page.wait_for_selector(".log .note")
    notes = page.locator(".log .note").all_inner_texts()
    assert notes == [f"{NOTE} {noter}"] * noted
    assert page.locator(".log img").count() == 0 and page.title() != "pwned"
