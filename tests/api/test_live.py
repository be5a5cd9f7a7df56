"""A tournament run through the API with every real part: the API (uvicorn), a Celery worker
process, SDK bots in their own processes connected to the game server, Redis and the database.
Its live events, replays, standings, leaderboard, bot details and metrics."""

from __future__ import annotations

import json
import threading

import httpx
import pytest
from e2e_helpers import wait_until

from atout.games import GAMES

pytestmark = pytest.mark.timeout(120)


def read_events(url: str, path: str, token: str | None = None, limit_s: float = 60) -> list[tuple[str, dict]]:
    """Every (event, data) of a server-sent events stream, until it ends."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    events: list[tuple[str, dict]] = []
    with (
        httpx.Client(base_url=url, timeout=limit_s) as client,
        client.stream("GET", path, headers=headers) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        kind, data = "message", []
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                events.append((kind, json.loads("\n".join(data))))
                kind, data = "message", []
    return events


@pytest.mark.slow
def test_a_tournament_through_the_api(api, start_worker, connected_bots, clean_queues, sessions) -> None:
    start_worker("live", concurrency=1)  # one match at a time: the last one is still queued below
    bots = connected_bots(4, "Sleepy", prefix="live", ATOUT_TEST_THINK_S="0.03")
    names = [name for name, _, _ in bots]
    tokens = {bot_id: token for _, bot_id, token in bots}
    created = api.organizer.post(
        "/v1/tournaments",
        json={
            "name": "live cup",
            "game": "merde",
            "players": 3,
            "options": {"deals": 2},
            "bots": names,
            "move_ms": 2000,
            "start": True,
        },
    )
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    assert created.json()["status"] == "running"

    # Follow the last match live from before it starts: the spectators' stream and its seat 0's.
    match = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"][-1]
    assert match["status"] == "queued", match
    seat0_bot = match["seats"][0]["bot_id"]
    seat0_token = tokens[seat0_bot]
    other_token = next(t for b, t in tokens.items() if b != seat0_bot)
    assert api.client.get(f"/v1/matches/{match['id']}/events?seat=0").status_code == 401
    assert api.as_bot(other_token).get(f"/v1/matches/{match['id']}/events?seat=0").status_code == 403
    assert api.client.get(f"/v1/matches/{match['id']}/events?seat=5").status_code == 404  # no such seat
    streams: dict[str, list] = {}
    threads = [
        threading.Thread(
            target=lambda: streams.__setitem__(
                "public", read_events(api.url, f"/v1/matches/{match['id']}/events")
            )
        ),
        threading.Thread(
            target=lambda: streams.__setitem__(
                "seat", read_events(api.url, f"/v1/matches/{match['id']}/events?seat=0", seat0_token)
            )
        ),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    public, seat = streams["public"], streams["seat"]
    assert public[-1][0] == "end" and seat[-1][0] == "end"
    assert public[0][0] == "start" and public[0][1]["seats"] == [s["bot"] for s in match["seats"]]
    steps = [data for kind, data in public if kind == "step"]
    assert [s["ply"] for s in steps] == list(range(len(steps)))  # every action, in order, once
    assert all("hand" not in data["view"] for kind, data in public if kind in ("start", "step"))
    seat_steps = [data for kind, data in seat if kind == "step"]
    assert len(seat_steps) == len(steps)
    assert all(d["view"]["seat"] == 0 and "hand" in d["view"] for d in seat_steps)

    wait_until(
        lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished",
        60,
        "the tournament to finish",
        poll_s=0.1,
    )
    t = api.client.get(f"/v1/tournaments/{tid}").json()
    assert t["progress"]["done"] == t["progress"]["total"] and t["progress"]["percent"] == 100.0
    standings = api.client.get(f"/v1/tournaments/{tid}/standings").json()
    assert standings["final"] is True and len(standings["standings"]) == 4
    assert [r["rank"] for r in standings["ratings"]] == [1, 2, 3, 4]
    assert all(r["ci_low"] < r["rating"] < r["ci_high"] for r in standings["ratings"])

    # The stored result matches what the stream said at the end.
    stored = api.client.get(f"/v1/matches/{match['id']}").json()
    assert stored["status"] == "finished" and stored["scores"] == public[-1][1]["scores"]
    assert stored["seed"] is not None and all(s["think_ms"] > 0 for s in stored["seats"])
    late = read_events(api.url, f"/v1/matches/{match['id']}/events")  # a finished match: its end at once
    assert [kind for kind, _ in late] == ["end"] and late[0][1]["ranking"] == stored["ranking"]

    # Replays: the spectators', a seat's (its own bot or the organizer), the organizer's full one.
    replay = api.client.get(f"/v1/matches/{match['id']}/replay").json()
    assert replay["viewer"] == "public" and replay["events"][0]["type"] == "start"
    assert len(replay["events"]) == 1 + len(steps)
    assert [e["action"] for e in replay["events"][1:]] == [s["action"] for s in steps]
    assert replay["events"][-1]["view"] == steps[-1]["view"]  # the replay shows what spectators saw
    assert all("hand" not in e["view"] for e in replay["events"])
    own = api.as_bot(seat0_token).get(f"/v1/matches/{match['id']}/replay?seat=0")
    assert own.status_code == 200 and all("hand" in e["view"] for e in own.json()["events"])
    assert api.as_bot(seat0_token).get(f"/v1/matches/{match['id']}/replay?seat=1").status_code == 403
    assert api.client.get(f"/v1/matches/{match['id']}/replay?seat=1").status_code == 401
    assert api.organizer.get(f"/v1/matches/{match['id']}/replay?seat=1").status_code == 200
    full = api.organizer.get(f"/v1/matches/{match['id']}/replay/full").json()
    assert full["viewer"] == "full" and full["events"][0]["seed"] == stored["seed"]
    first_step = full["events"][1]
    assert len(first_step["hands"]) == 3 and first_step["action"] in first_step["legal"]
    assert api.as_bot(seat0_token).get(f"/v1/matches/{match['id']}/replay/full").status_code == 403
    assert stored["rules_version"] == GAMES["merde"].RULES_VERSION
    # A match stored under other rules is refused with the reason, never replayed falsely.
    from atout_arena.core.models import Match

    with sessions() as session:
        session.get(Match, match["id"]).rules_version = 0
        session.commit()
    for path in ("replay", "replay?seat=0", "replay/full"):
        refused = api.organizer.get(f"/v1/matches/{match['id']}/{path}")
        assert refused.status_code == 409, refused.text
        assert "played under version 0 of the merde rules" in refused.json()["detail"]
    with sessions() as session:
        session.get(Match, match["id"]).rules_version = GAMES["merde"].RULES_VERSION
        session.commit()

    # The leaderboard, a bot's details (its own token), the metrics.
    def board_with_us() -> dict | None:  # a leaderboard is fitted again at most every few seconds
        rows = api.client.get("/v1/ratings?game=merde").json()["rows"]
        mine = {row["bot"]: row for row in rows if row["bot"] in names}
        return mine if set(mine) == set(names) else None

    mine = wait_until(board_with_us, 15, "the leaderboard to hold the tournament's bots", poll_s=0.5)
    assert all(r["ci_low"] < r["rating"] < r["ci_high"] and r["online"] is not None for r in mine.values())
    detail = api.as_bot(seat0_token).get(f"/v1/bots/{seat0_bot}").json()
    merde = next(r for r in detail["ratings"] if r["game"] == "merde")
    assert merde["rank"] is not None and merde["matches"] >= 1
    assert detail["recent_matches"] and all(m["game"] == "merde" for m in detail["recent_matches"])
    think = detail["think_time"]
    assert think["decisions"] > 0 and 25 <= think["p50_ms"] <= think["p99_ms"]  # the bot sleeps 30 ms
    assert detail["faults"] == {
        "total": 0,
        "forfeits": 0,
        "timeout": 0,
        "illegal": 0,
        "disconnected": 0,
        "absent": 0,
        "matches_counted": len(detail["recent_matches"]),
    }
    metrics = api.client.get("/metrics").text
    assert 'atout_matches_total{game="merde",outcome="finished"}' in metrics


def running_match(sessions, bot_id: int) -> int:
    """A merde match marked running in the database (no worker plays it): its id."""
    from atout_arena.core.models import Match, MatchSeat

    with sessions() as session:
        match = Match(game="merde", options={}, seed=1, status="running")
        match.seats = [MatchSeat(seat=s, bot_id=bot_id) for s in range(4)]
        session.add(match)
        session.commit()
        return match.id


def test_a_stale_end_event_does_not_end_a_running_matchs_stream(api, sessions, new_bot, redis_client) -> None:
    """The latest-event key may hold an ``end`` that is not this run's: a run stopped by an
    outage (played again from its seed), or another database's match of that id (CI's flaky
    dashboard test). A spectator of the running match must get its live steps, not that end."""
    from atout_arena.core.keys import last_event_key, public_channel

    _, bot_id, _ = new_bot("stale")
    match_id = running_match(sessions, bot_id)
    stale = {"type": "end", "match_id": str(match_id), "reason": "replayed"}
    redis_client.set(last_event_key(match_id), json.dumps(stale), ex=60)
    got: list[list[tuple[str, dict]]] = []
    reader = threading.Thread(target=lambda: got.append(read_events(api.url, f"/v1/matches/{match_id}/events",
                                                                    limit_s=30)))
    reader.start()
    channel = public_channel(match_id)
    wait_until(lambda: redis_client.pubsub_numsub(channel)[0][1] >= 1, timeout=10)
    step = {"type": "step", "match_id": str(match_id), "ply": 0, "action": "BID 1"}
    end = {"type": "end", "match_id": str(match_id), "reason": "finished"}
    redis_client.publish(channel, json.dumps(step))
    redis_client.publish(channel, json.dumps(end))
    reader.join(30)
    assert got and [kind for kind, _ in got[0]] == ["step", "end"], got
    assert got[0][1][1]["reason"] == "finished"


def test_an_end_published_just_before_the_subscription_is_sent_at_once(api, sessions, new_bot, redis_client,
                                                                       monkeypatch) -> None:
    """The match ends between the stream's first look at the database and its subscription:
    the end was published before anyone listened, and only the latest-event key holds it. The
    stream looks at the database again and sends the end at once (not at its next idle check)."""
    import time

    from atout_arena.api.routes import matches as routes
    from atout_arena.core.keys import last_event_key
    from atout_arena.core.models import Match

    _, bot_id, _ = new_bot("race")
    match_id = running_match(sessions, bot_id)
    first_look = routes._end_event
    looks = []

    def end_event(arena, mid):
        looks.append(mid)
        if len(looks) == 1:  # the first look says "running"; then the result is stored
            answer = first_look(arena, mid)
            with sessions() as session:
                stored = session.get(Match, mid)
                stored.status, stored.outcome = "finished", "finished"
                stored.scores, stored.ranking = [1] * 4, [1] * 4
                session.commit()
            end = {"type": "end", "match_id": str(mid), "reason": "finished"}
            redis_client.set(last_event_key(mid), json.dumps(end), ex=60)
            return answer
        return first_look(arena, mid)

    monkeypatch.setattr(routes, "_end_event", end_event)
    started = time.monotonic()
    events = read_events(api.url, f"/v1/matches/{match_id}/events", limit_s=30)
    assert [kind for kind, _ in events] == ["end"] and events[0][1]["scores"] == [1] * 4
    assert time.monotonic() - started < routes.IDLE_CHECK_S / 2
