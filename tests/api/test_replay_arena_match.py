"""``atout-bot replay MATCH_ID``: an arena match (real API, workers, game server, SDK bots in
their own processes), fetched from ``GET /v1/matches/{id}/record`` and asked again of the same
bot (no difference) and of a changed one (the first differing decision, exactly)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from api_helpers import Api
from e2e_helpers import wait_until
from replay_bots import CHANGED_FROM

from atout.record import GameRecord

CHANGED = f"{Path(__file__).resolve().parent.parent / 'replay_bots.py'}:Changed"


def replay(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "atout.cli", "replay", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


@pytest.mark.slow
def test_an_arena_match_replayed_against_a_changed_bot_differs_first_where_it_was_changed(
    api: Api, start_worker: Any, connected_bots: Any, clean_queues: None
) -> None:
    start_worker("replay", concurrency=2)
    bots = connected_bots(2, "heuristic", prefix="replay")
    created = api.organizer.post("/v1/tournaments", json={
        "name": f"replayed {bots[0][0]}", "game": "tiercon", "players": 2, "bots": [b[0] for b in bots],
        "games_per_pairing": 1, "move_ms": 5000, "seed": 433, "start": True,
    })  # fmt: skip
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 90, "the end")
    match_id = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"][0]["id"]
    fetched = api.organizer.get(f"/v1/matches/{match_id}/record")
    assert fetched.status_code == 200, fetched.text
    record = GameRecord.from_dict(fetched.json())
    name, _, token = bots[0]
    seat = next(s.seat for s in record.seats if s.bot == name)

    # what Changed must answer differently, from the record alone
    expected, asked = [], 0
    for k, state, step in record.positions():
        if step.seat == seat:
            asked += 1
            if asked >= CHANGED_FROM and len(state.legal_actions()) > 1:
                expected.append(k + 1)
    assert expected

    # the bot's developer: its own token and the API from the environment
    env = {"ATOUT_API_URL": api.url, "ATOUT_TOKEN": token}
    same = replay(str(match_id), "--bot", "heuristic", "--seat", str(seat), **env)
    assert same.returncode == 0 and same.stderr == "", same.stderr
    assert f"replay of arena match {match_id} (2 players), seat {seat} asked of heuristic" in same.stdout
    if all(s.by == "bot" for s in record.steps):  # (a timeout's fallback would differ, rightly)
        assert f"{asked} decisions asked, 0 answered differently; first difference: none" in same.stdout

    changed = replay(str(match_id), "--bot", CHANGED, "--seat", str(seat), "--api", api.url, "--token", token)
    assert changed.returncode == 0 and changed.stderr == "", changed.stderr
    assert changed.stdout.rstrip().endswith(
        f"seat {seat}: {asked} decisions asked, {len(expected)} answered differently; "
        f"first difference: decision {expected[0]}"
    ), changed.stdout
    assert f"\ndecision {expected[0]} (seat {seat}'s decision " in changed.stdout
    assert "(you)" in changed.stdout  # the position, as the seat saw it

    # --from K: plays on from the first difference; the arena's bot names do not load: heuristic
    cont = replay(str(match_id), "--bot", CHANGED, "--seat", str(seat), "--from", str(expected[0]), **env)
    assert cont.returncode == 0, cont.stderr
    assert f"recorded: scores {record.scores}, ranking {record.ranking}" in cont.stdout
    assert f"from decision {expected[0]} on, seat {seat} played by your bot, the others by " in cont.stdout
    assert "heuristic" in cont.stdout and "now:      scores [" in cont.stdout

    missing = replay("999999", "--bot", "heuristic", "--seat", "0", **env)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr
    assert missing.stderr.startswith(f"atout-bot replay: GET {api.url}/v1/matches/999999/record: 404")
