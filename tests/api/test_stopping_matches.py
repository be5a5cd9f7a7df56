"""Matches stopped from outside end within seconds (issue 32, findings 6 and 11). Real parts:
the API, a game server, a Celery worker, SDK bots in their own processes.

Before: a cancelled tournament's running match played on (168 s with a bot that never
answered), holding the worker's slot and delaying the next tournament; a disabled bot's running
games took 22-26 s to end (its next decision waited out the reconnect grace); a bot leaving a
ladder left its running games to play on, void whatever they did.

The worker's heartbeat is set to 5 s (its default) so that what stops the matches within 2 s is
the stop message, not the heartbeat finding the lease lost (the fallback)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from e2e_helpers import WORKER_BOTS, wait_until

from atout_arena.core.keys import pending_key
from atout_arena.core.match import Step
from atout_arena.core.models import Match, RatingChange
from atout_arena.core.relay import is_connected

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SLOW_HEARTBEAT = {"ATOUT_HEARTBEAT_S": "5", "ATOUT_MATCH_STALE_S": "30", "ATOUT_RECONNECT_GRACE_S": "15"}


def _running_match(api: Any, path: str) -> int:
    def found() -> int | None:
        items = api.organizer.get(path).json()["items"]
        return next((m["id"] for m in items if m["status"] == "running"), None)

    return int(wait_until(found, 30, f"a running match in {path}"))


def _status(sessions: Any, match_id: int) -> tuple[str, str | None]:
    with sessions() as session:
        match = session.get(Match, match_id)
        return match.status, match.error


def test_cancelling_a_tournament_stops_its_running_match_and_frees_the_slot(
    api, start_worker, connected_bots, new_bot, spawn_bot, game_server, clean_queues, redis_client, sessions
) -> None:
    worker = start_worker("cancel", concurrency=1, **SLOW_HEARTBEAT)
    stuck, stuck_id, token = new_bot("stuck")
    stuck_process = spawn_bot(game_server.info["address"], token, f"{WORKER_BOTS}:Sleepy",
                              ATOUT_TEST_THINK_S="100")
    wait_until(lambda: is_connected(redis_client, str(stuck_id)), 30, "the stuck bot to connect")
    (quick, _, _), (other, _, _) = connected_bots(2, "Sleepy", prefix="quick", ATOUT_TEST_THINK_S="0.01")
    body = {"game": "tiercon", "games_per_pairing": 1, "move_ms": 120_000, "start": True}
    tid = api.organizer.post("/v1/tournaments", json={"name": f"stuck-{stuck}", "bots": [stuck, quick],
                                                      **body}).json()["id"]
    match_id = _running_match(api, f"/v1/tournaments/{tid}/matches")
    wait_until(lambda: redis_client.zcard(pending_key(str(stuck_id))) > 0, 30, "a decision for the stuck bot")
    started = time.monotonic()
    cancelled = api.organizer.post(f"/v1/tournaments/{tid}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.text
    worker.wait_for_log(rf"match {match_id}: stopped \(tournament {tid} cancelled\)", timeout=2)
    wait_until(lambda: redis_client.zcard(pending_key(str(stuck_id))) == 0, 2, "its request withdrawn")
    stopped_s = time.monotonic() - started
    assert _status(sessions, match_id) == ("cancelled", f"tournament {tid} cancelled")
    # the worker's one slot is free: the next tournament plays at once
    next_tid = api.organizer.post("/v1/tournaments", json={"name": f"next-{quick}", "bots": [quick, other],
                                                           **body}).json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{next_tid}").json()["status"] == "finished", 20,
               "the next tournament")
    next_s = time.monotonic() - started
    with sessions() as session:
        assert session.query(RatingChange).filter(RatingChange.match_id == match_id).count() == 0
    print(f"cancel: running match stopped {stopped_s:.2f} s after the request; the next tournament "
          f"finished {next_s:.1f} s after it")
    assert stopped_s < 2.0
    stuck_process.kill()  # (it would think on for 100 s)


def test_a_disabled_bot_ends_its_running_games_within_2_s(
    api, start_worker, connected_bots, clean_queues, sessions
) -> None:
    worker = start_worker("disable", concurrency=4, **SLOW_HEARTBEAT)
    (doomed, _, _), = connected_bots(1, "Sleepy", prefix="doomed", ATOUT_TEST_THINK_S="0.3")
    (mate, _, _), (rival, _, _) = connected_bots(2, "Sleepy", prefix="mate", ATOUT_TEST_THINK_S="0.01")
    ladder = api.organizer.post("/v1/ladders", json={
        "name": f"ladder-{doomed}", "game": "tiercon", "bots": [doomed, mate], "target_in_flight": 2,
        "move_ms": 20_000})
    assert ladder.status_code == 201, ladder.text
    tid = api.organizer.post("/v1/tournaments", json={
        "name": f"t-{doomed}", "game": "tiercon", "bots": [doomed, rival], "games_per_pairing": 1,
        "move_ms": 20_000, "start": True}).json()["id"]
    ladder_match = _running_match(api, f"/v1/matches?bot={doomed}&status=running")
    tournament_match = _running_match(api, f"/v1/tournaments/{tid}/matches")
    if ladder_match == tournament_match:  # the bot's other running game: its ladder's
        ladder_match = _running_match(api, f"/v1/matches?bot={mate}&status=running")
    time.sleep(0.5)  # a few moves played
    started = time.monotonic()
    disabled = api.organizer.post(f"/v1/bots/{doomed}/disable")
    assert disabled.status_code == 200, disabled.text
    worker.wait_for_log(rf"match {ladder_match}: stopped \(a player was disabled\)", timeout=2)
    stopped_s = time.monotonic() - started
    assert _status(sessions, ladder_match)[0] == "cancelled"
    # its tournament game plays on for its rival, never waiting for the disabled bot
    wait_until(lambda: _status(sessions, tournament_match)[0] == "finished", 30, "its tournament game")
    with sessions() as session:
        match = session.get(Match, tournament_match)
        seat = next(s.seat for s in match.seats if s.bot.name == doomed)
        steps = [Step.from_json(i, row) for i, row in enumerate(match.actions)]
    mine = [s for s in steps if s.seat == seat]
    after = mine[next(i for i, s in enumerate(mine) if s.faults):]
    waited_ms = sum(s.think_ms for s in after)
    print(f"disable: its ladder game stopped {stopped_s:.2f} s after; its tournament game waited "
          f"{waited_ms:.0f} ms in all for it after ({len(after)} decisions, none its own)")
    assert all(s.by == "fallback" for s in after)
    assert waited_ms < 2000  # it was the reconnect grace at its next decision: 15 s


def test_a_bot_leaving_its_ladder_ends_its_running_game(
    api, start_worker, new_bot, spawn_bot, game_server, clean_queues, redis_client, sessions
) -> None:
    worker = start_worker("leave", concurrency=4, **SLOW_HEARTBEAT)
    bots = [new_bot("leaver"), new_bot("stayer")]
    processes = [spawn_bot(game_server.info["address"], token, f"{WORKER_BOTS}:Sleepy",
                           ATOUT_TEST_THINK_S="0.3") for _, _, token in bots]
    for _, bot_id, _ in bots:
        wait_until(lambda b=bot_id: is_connected(redis_client, str(b)), 30, "the bots to connect")
    (leaver, leaver_id, _), (stayer, _, _) = bots
    ladder = api.organizer.post("/v1/ladders", json={
        "name": f"ladder-{leaver}", "game": "tiercon", "bots": [leaver, stayer], "target_in_flight": 2,
        "move_ms": 20_000})
    assert ladder.status_code == 201, ladder.text
    match_id = _running_match(api, f"/v1/matches?bot={leaver}&status=running")
    started = time.monotonic()
    processes[0].kill()
    wait_until(lambda: not is_connected(redis_client, str(leaver_id)), 5, "the leaver gone")
    worker.wait_for_log(rf"match {match_id}: stopped \(a player left the ladder\)", timeout=4)
    stopped_s = time.monotonic() - started
    assert _status(sessions, match_id) == ("cancelled", "a player left the ladder")
    print(f"leave: its running ladder game stopped {stopped_s:.2f} s after its process died "
          f"(the ladder's tick: every 2 s)")
    assert stopped_s < 2.0 + 2.0
