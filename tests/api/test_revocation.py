"""Revocation that bites: disabling a bot or rotating its token closes its live streams within
1 s on the game server, faults its waiting decision ``disconnected``, and a disabled bot cannot
be entered into anything. Real processes: the API, a game server, a Celery worker, SDK bots.

Before: the open stream answered 485 more requests in 8 s after the disable (171 after a token
rotation), stored as the bot's own, and a disabled bot was accepted into new tournaments."""

from __future__ import annotations

import time

from e2e_helpers import wait_until

from atout_arena.core.keys import pending_key
from atout_arena.core.match import Step
from atout_arena.core.models import Match
from atout_arena.core.relay import is_connected


def _closed_within(redis_client, bot_id: int, started: float) -> float:
    wait_until(lambda: not is_connected(redis_client, bot_id), 5, f"bot {bot_id}'s stream to close",
               poll_s=0.01)
    return time.monotonic() - started


def test_disable_closes_the_stream_at_once_and_faults_its_decision(
    api, start_worker, connected_bots, clean_queues, redis_client, sessions
) -> None:
    start_worker("revoke", concurrency=2)
    (target, target_id, _), = connected_bots(1, "Sleepy", prefix="doomed", ATOUT_TEST_THINK_S="4")
    (other, _, _), = connected_bots(1, "Sleepy", prefix="fine", ATOUT_TEST_THINK_S="0.01")
    created = api.organizer.post("/v1/tournaments", json={
        "name": "revoked", "game": "tiercon", "bots": [target, other], "games_per_pairing": 1,
        "move_ms": 20_000, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    # The target is thinking over a decision (4 s, of a 20 s deadline).
    wait_until(lambda: redis_client.zcard(pending_key(str(target_id))) > 0, 30, "a decision for the target")
    started = time.monotonic()
    disabled = api.organizer.post(f"/v1/bots/{target}/disable")
    assert disabled.status_code == 200 and disabled.json()["disabled"] is True
    closed_s = _closed_within(redis_client, target_id, started)
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 30,
               "the tournament to finish")
    finished_s = time.monotonic() - started
    (match,) = api.organizer.get(f"/v1/tournaments/{tid}/matches").json()["items"]
    full = api.organizer.get(f"/v1/matches/{match['id']}").json()
    seat = next(s["seat"] for s in full["seats"] if s["bot"] == target)
    with sessions() as session:
        actions = session.get(Match, match["id"]).actions
    steps = [Step.from_json(i, row) for i, row in enumerate(actions)]
    mine = [s for s in steps if s.seat == seat]
    first_fault = next(i for i, s in enumerate(mine) if s.faults)
    after = mine[first_fault:]
    print(f"disable: stream closed {closed_s * 1000:.0f} ms after the request; the waiting decision faulted "
          f"{mine[first_fault].faults} after {mine[first_fault].think_ms:.0f} ms of its 20,000; "
          f"tournament over {finished_s:.1f} s after; {sum(s.by == 'bot' for s in after)} answers of the "
          f"bot stored after its revocation")
    assert closed_s < 1.0
    assert mine[first_fault].faults == ("disconnected",)
    assert mine[first_fault].think_ms < 8_000  # faulted at the revocation, not at the 20 s deadline
    assert all(s.by != "bot" for s in after)

    # A disabled bot cannot be entered into anything.
    body = {"name": "no", "game": "tiercon", "bots": [target, other]}
    refused = api.organizer.post("/v1/tournaments", json=body)
    assert refused.status_code == 422, refused.text
    assert target in refused.json()["detail"] and "disabled" in refused.json()["detail"]
    league = api.organizer.post("/v1/leagues", json={"name": f"no-{target}", "game": "tiercon",
                                                     "bots": [target, other]})
    assert league.status_code == 422 and target in league.json()["detail"]
    test = api.organizer.post("/v1/tests", json={"game": "tiercon", "a": target, "b": "house"})
    assert test.status_code == 422 and "disabled" in test.json()["detail"]


REFUSED = "refused /atout.v1.BotGateway/Connect"  # the game server's line for a refused token


def test_a_rotated_token_closes_the_streams_opened_with_the_old_one(
    api, connected_bots, redis_client, game_server
) -> None:
    (name, bot_id, old_token), = connected_bots(1, "Sleepy", prefix="rotated")
    refusals = game_server.log().count(REFUSED)
    started = time.monotonic()
    rotated = api.organizer.post(f"/v1/bots/{name}/token")
    assert rotated.status_code == 200 and rotated.json()["token"] != old_token
    closed_s = _closed_within(redis_client, bot_id, started)
    print(f"token rotation: stream closed {closed_s * 1000:.0f} ms after the request")
    assert closed_s < 1.0
    # the SDK bot tries again with the old token: refused, and not connected after that
    wait_until(lambda: game_server.log().count(REFUSED) > refusals, 10, "the old token's retry refused")
    assert not is_connected(redis_client, bot_id)
