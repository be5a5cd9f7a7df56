"""The dashboard's match page has a "Download record" link (Chromium): with the organizer's
token it saves the finished match as a record file (docs/record.md) that ``read_records``
reads and rebuilds to the stored result; without it, while the seeds are secret, it says why
in one line and saves nothing; axe finds no violation on the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from axe_helpers import assert_accessible
from test_readable import play

from atout.record import read_records

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def test_the_match_page_downloads_its_record(browser: Any, lone_api: Any, tmp_path: Path) -> None:
    from api_helpers import ADMIN_TOKEN

    from atout_arena.services.tournaments import start_tournament

    for name in ("rec-ann", "rec-ben"):
        assert lone_api.post("/v1/bots", json={"name": name}).status_code == 201
    created = lone_api.post("/v1/tournaments", json={"name": "records", "game": "tiercon",
                                                     "bots": ["rec-ann", "rec-ben"], "games_per_pairing": 2})
    assert created.status_code == 201, created.text
    first, _ = start_tournament(lone_api.sessions, created.json()["id"])
    play(lone_api.sessions, [first])
    stored = lone_api.get(f"/v1/matches/{first}").json()

    page = browser.new_context(viewport={"width": 1366, "height": 900}, accept_downloads=True).new_page()
    page.goto(f"{str(lone_api.base_url).rstrip('/')}/#/matches/{first}")
    link = page.get_by_role("link", name="Download record")
    link.wait_for()
    assert link.get_attribute("href") == f"/v1/matches/{first}/record"
    assert_accessible(page, f"match {first}'s replay page")
    link.click()  # a stranger, while the tournament runs: refused, said in the Replay section
    page.wait_for_function("document.querySelector('.side .hint').textContent.includes('organizer token')")
    assert "not published yet" in page.locator(".side .hint").inner_text()

    page.fill("#token-input", ADMIN_TOKEN)
    page.click("#token-form button")
    link.wait_for()
    with page.expect_download() as info:
        page.get_by_role("link", name="Download record").click()
    download = info.value
    assert download.suggested_filename == f"match-{first}.jsonl"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    (record,) = read_records(saved)
    assert record.source == {**record.source, "kind": "arena", "match": first}
    final = record.final_state()
    assert final.scores == record.scores == stored["scores"] and final.ranking == record.ranking
