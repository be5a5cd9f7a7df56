"""Human seats over the API: a person plays a whole practice match against their own bot and
house bots through the play stream and answers (the Redis contract of the game servers, real
workers), an illegal answer comes back with the engine's reason, and an organizer's human in a
tournament who lets the clock run gets the fallback and a ``timeout`` fault."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import Api
from e2e_helpers import wait_until
from play_helpers import HumanClient

from atout_arena.core.keys import conn_key

pytestmark = pytest.mark.timeout(150)


def play_until_end(human: HumanClient, *, illegal_first: bool = False, skip: int = -1) -> dict[str, Any]:
    """Answer every decision with its first legal action until match_end. ``illegal_first``:
    the first answer is illegal (its rejection is returned); ``skip``: leave decision #skip
    unanswered."""
    seen: dict[str, Any] = {"decisions": 0, "rejections": [], "start": None}
    while True:
        kind, event = human.next(60)
        if kind == "match_start":
            seen["start"] = event
        elif kind == "decision":
            n = seen["decisions"]
            seen["decisions"] += 1
            assert event["legal_actions"] and "hand" in event["observation"]
            assert event["observation"]["seat"] == event["seat"]
            if n == skip:
                continue
            if illegal_first and n == 0:
                taken = human.answer(event["request_id"], "play 1z")
                assert taken.status_code == 202, taken.text
                kind, rejection = human.next(15)
                assert kind == "rejection", (kind, rejection)
                seen["rejections"].append(rejection)
            taken = human.answer(event["request_id"], event["legal_actions"][0])
            assert taken.status_code == 202, taken.text
            again = human.answer(event["request_id"], event["legal_actions"][0])
            assert again.status_code == 409  # answered already: nothing goes to the match twice
        elif kind == "match_end":
            seen["end"] = event
            return seen
        elif kind == "closed":
            raise AssertionError(f"the play stream closed: {event}")


def test_a_person_plays_a_practice_match_against_their_bot(
    api: Api, start_worker, connected_bots, clean_queues
) -> None:
    start_worker("play", concurrency=2, practice=True)
    ((name, _, token),) = connected_bots(1, "random", prefix="play")
    refused = api.as_bot(token).post("/v1/play/practice", json={"game": "merde", "players": 3})
    assert refused.status_code == 409 and "play stream" in refused.json()["detail"]  # open the stream first

    human = HumanClient(api.url, token).open()
    try:
        assert human.hello["human"] == f"{name}~you" and human.hello["move_ms"] == 60_000
        started = api.as_bot(token).post(
            "/v1/play/practice", json={"game": "merde", "players": 3, "options": {"deals": 2}, "seat": 1}
        )
        assert started.status_code == 202, started.text
        body = started.json()
        assert body["seat"] == 1 and body["seats"][1] == f"{name}~you" and name in body["seats"]
        seen = play_until_end(human, illegal_first=True)
        assert seen["start"]["seat"] == 1 and seen["decisions"] >= 4
        (rejection,) = seen["rejections"]
        assert rejection["action"] == "play 1z" and rejection["reason"]  # the engine's reason
        assert rejection["code"] == "illegal" and rejection["final"] is False
        match = api.client.get(f"/v1/matches/{body['match_id']}").json()
        assert match["status"] == "finished" and match["tournament_id"] is None
        mine = next(s for s in match["seats"] if s["seat"] == 1)
        assert mine["faults"] == 0  # a rejected answer, then a legal one in time: free, as for any bot
        replay = api.client.get(f"/v1/matches/{body['match_id']}/replay").json()
        played = [e for e in replay["events"] if e["type"] == "step" and e["seat"] == 1]
        assert played and all(e["by"] == "bot" for e in played)
    finally:
        human.close()
    # a bad answer never reaches a match
    stray = HumanClient(api.url, token)
    assert stray.answer("nope", "pass").status_code == 409
    assert stray.answer("x" * 65, "pass").status_code == 422
    stray.close()


def test_an_organizers_human_in_a_tournament_who_lets_the_clock_run_is_faulted(
    api: Api, start_worker, connected_bots, clean_queues
) -> None:
    start_worker("playt", concurrency=2)
    ((bot_name, _, _),) = connected_bots(1, "random", prefix="playt")
    registration = {"name": f"person-{bot_name}", "kind": "human", "move_ms": 1500}
    created = api.organizer.post("/v1/bots", json=registration)
    assert created.status_code == 201, created.text
    person = created.json()
    assert person["kind"] == "human"
    human = HumanClient(api.url, person["token"]).open()
    try:
        assert human.hello["move_ms"] == 1500
        tournament = api.organizer.post("/v1/tournaments", json={
            "name": f"people {bot_name}", "game": "tiercon", "players": 2, "bots": [bot_name, person["name"]],
            "move_ms": 200, "games_per_pairing": 1, "max_faults": 0, "start": True,
        })  # fmt: skip
        assert tournament.status_code == 201, tournament.text
        seen = play_until_end(human, skip=1)
        assert seen["decisions"] >= 3
    finally:
        human.close()
    tid = tournament.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 60, "the end")
    match_id = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"][0]["id"]
    replay = api.client.get(f"/v1/matches/{match_id}/replay").json()
    seat = next(s["seat"] for s in replay["match"]["seats"] if s["bot"] == person["name"])
    mine = [e for e in replay["events"] if e["type"] == "step" and e["seat"] == seat]
    assert mine[1]["by"] == "fallback" and mine[1]["faults"] == ["timeout"]
    assert all(e["by"] == "bot" for e in mine if e is not mine[1])
    assert 1400 <= mine[1]["think_ms"] < 5000  # the human's own move time, not the match's 200 ms


def test_a_closed_play_stream_gives_up_the_presence_within_seconds(
    api: Api, connected_bots, redis_client
) -> None:
    """A person who closes the page is no longer connected within about READ_BLOCK_MS (2 s),
    not at the presence TTL: decisions then find no stream and come back ``disconnected`` at
    once. (An idle stream used to notice the closed page only at FastAPI's 15 s ping.)"""
    ((_, _, token),) = connected_bots(1, "random", prefix="gone")
    for _ in range(3):
        human = HumanClient(api.url, token).open()
        key = conn_key(str(human.hello["human_id"]))
        assert redis_client.exists(key)
        redis_client.pexpire(key, 60_000)  # the TTL cannot be what removes it
        human.close()
        wait_until(lambda: not redis_client.exists(key), timeout=8)  # noqa: B023
