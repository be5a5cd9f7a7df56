"""Bot notes and the bot's log, with real parts: an SDK bot in its own process writes notes
on its decisions; the replay API shows them to the bot's own token and the organizer at once,
to everyone else once the competition is over. The bot's log names its version, each match's
seats and versions, and the faults it was charged, one line per kind with the count."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import wait_until

from atout_arena.core.relay import is_connected

NOTE_BOTS = '''
import os
import threading
import time
from pathlib import Path

from atout import Action, Bot


class NoteBot(Bot):
    """The first legal action with a note; in its second match it waits while $HOLD_FILE exists."""

    first = None
    lock = threading.Lock()

    def act(self, observation):
        with NoteBot.lock:
            NoteBot.first = NoteBot.first or observation.match_id
            held = observation.match_id != NoteBot.first
        hold = Path(os.environ["HOLD_FILE"])
        until = time.monotonic() + 30
        while held and hold.exists() and time.monotonic() < until:
            time.sleep(0.02)
        action = observation.legal_actions[0]
        if len(observation.legal_actions) % 2:
            return action, f"<b>{len(observation.legal_actions)} options</b>\\x07"
        return Action(action, note="x" * 2000)


class LateBot(Bot):
    """Leaves its first $LATE decisions unanswered (act() raises: the arena times them out)."""

    asked = 0

    def act(self, observation):
        LateBot.asked += 1
        if LateBot.asked <= int(os.environ["LATE"]):
            raise TimeoutError("thinking too long")
        return observation.legal_actions[0]
'''


@pytest.fixture
def note_bots(tmp_path: Path, api: Any, game_server: Any, spawn_bot: Any, new_bot: Any,
              redis_client: Any) -> Any:
    """``note_bots(cls, version, **env) -> (name, id, token, process)``: a bot of NOTE_BOTS run by
    ``atout-bot run`` in its own process, connected."""
    path = tmp_path / "note_bots.py"
    path.write_text(textwrap.dedent(NOTE_BOTS))

    def start(cls: str, version: str, **env: str) -> tuple[str, int, str, Any]:
        name, bot_id, token = new_bot(cls.lower())
        process = spawn_bot(game_server.info["address"], token, f"{path}:{cls}", ATOUT_BOT_VERSION=version,
                            **env)
        wait_until(lambda: is_connected(redis_client, str(bot_id)), 30, f"bot {name} to connect")
        return name, bot_id, token, process

    return start


def notes_of(replay: Any, seat: int) -> list[str]:
    assert replay.status_code == 200, replay.text
    return [e["note"] for e in replay.json()["events"] if e["type"] == "step" and e["seat"] == seat
            and "note" in e]


@pytest.mark.slow
def test_a_note_shows_to_its_owner_at_once_and_to_everyone_once_the_competition_ends(
    api, note_bots, connected_bots, new_bot, start_worker, clean_queues, tmp_path
) -> None:
    start_worker("notes", concurrency=2)
    hold = tmp_path / "hold"
    hold.touch()
    name, _, token, process = note_bots("NoteBot", "v2", HOLD_FILE=str(hold))
    ((other, _, _),) = connected_bots(1, "random", prefix="plain")
    _, _, stranger_token = new_bot("stranger")
    owner, stranger = api.as_bot(token), api.as_bot(stranger_token)
    created = api.organizer.post("/v1/tournaments", json={
        "name": "notes", "game": "tiercon", "players": 2, "bots": [name, other], "games_per_pairing": 2,
        "move_ms": 20000, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]

    def one_finished() -> dict[str, Any] | None:
        matches = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"]
        done = [m for m in matches if m["status"] == "finished"]
        return done[0] if done else None

    match = wait_until(one_finished, 60, "the first match to finish")
    seat = next(s["seat"] for s in match["seats"] if s["bot"] == name)
    url = f"/v1/matches/{match['id']}/replay"
    assert api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "running"  # the other match is held
    mine = notes_of(owner.get(url, params={"seat": seat}), seat)
    assert mine and set(mine) <= {"x" * 1024} | {f"<b>{n} options</b>" for n in range(1, 40)}
    assert "x" * 1024 in mine and any(n.startswith("<b>") for n in mine)  # cut to 1 KB; bell dropped
    assert notes_of(owner.get(url), seat) == mine  # the owner's token, public view
    assert notes_of(api.organizer.get(url), seat) == mine
    assert notes_of(api.organizer.get(f"{url}/full"), seat) == mine
    assert notes_of(api.client.get(url), seat) == []  # anyone, before the end
    assert notes_of(stranger.get(url), seat) == []  # another bot's token
    assert api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "running"

    hold.unlink()
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 60,
               "the tournament to finish")
    assert notes_of(api.client.get(url), seat) == mine  # everyone's, after
    assert notes_of(stranger.get(url), seat) == mine

    log = process.log()
    assert "connected as " + name + "@v2" in log
    started = rf"match {match['id']} started: tiercon, seat {seat} of 2 \(seat 0 \S+, seat 1 \S+\)"
    assert re.search(started, log), log
    assert f"{name}@v2" in log.split(f"match {match['id']} started")[1].splitlines()[0]
    assert "a note was cut to 1024 bytes" in log


@pytest.mark.slow
def test_a_bot_that_times_out_n_times_reads_n_in_its_log(
    api, note_bots, connected_bots, start_worker, clean_queues
) -> None:
    start_worker("faults", concurrency=2)
    late = 4
    name, _, _, process = note_bots("LateBot", "slow1", LATE=str(late))
    ((other, _, _),) = connected_bots(1, "random", prefix="plain")
    created = api.organizer.post("/v1/tournaments", json={
        "name": "late", "game": "tiercon", "players": 2, "bots": [name, other], "move_ms": 700,
        "max_faults": 0, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 60,
               "the tournament to finish")
    (match,) = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"]
    seat = next(s for s in match["seats"] if s["bot"] == name)
    found = process.wait_for_log(rf"match {match['id']} seat \d+: the arena charged (\d+) timeout faults", 15)
    assert int(found.group(1)) == seat["faults"] == late
    assert len(re.findall(r"the arena charged \d+ timeout", process.log())) == 1
