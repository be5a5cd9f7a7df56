"""Practice matches: house bots answered in-process by the match loop, and ``POST /v1/practice``
for a connected bot, played at once by a worker of the practice queue, unrated, with its replay
after."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from e2e_helpers import wait_until
from sqlalchemy import func, select

from atout_arena.core.match import (
    Answer,
    DecisionAsk,
    FaultPolicy,
    MatchOutcome,
    MatchSetup,
    SeatBot,
    run_loop_async,
)
from atout_arena.core.models import Bot, RatingChange
from atout_arena.services.practice import PracticeError, house_bot_name, start_practice
from atout_workers.house import HouseAsker

pytestmark = pytest.mark.timeout(120)


def play_with(house: HouseAsker, network: Callable[[DecisionAsk], Answer]) -> MatchOutcome:
    """The match on an event loop, as a worker plays it: house seats in-process, the visiting
    ones through ``network`` (in-process too, here)."""

    async def visiting(a: DecisionAsk) -> Answer:
        return network(a)

    return asyncio.run(run_loop_async(house.setup, house.asking(visiting)))


class VisitorAsker:
    """A visiting bot that plays at random (seeded); ``asked``: the seats it was asked for."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.asked: list[int] = []

    def __call__(self, a: DecisionAsk) -> Answer:
        self.asked.append(a.seat)
        return Answer(self.rng.choice(a.legal_actions), 1.0)


@pytest.mark.parametrize(
    ("game", "options", "players"),
    [
        ("merde", {"deals": 3}, 4),
        ("tiercon", {}, 2),
        ("regicide", {"teams": True}, 4),
        ("fool", {}, 3),
    ],
)
def test_house_seats_are_played_in_process_and_the_others_over_the_network(
    game: str, options: dict, players: int
) -> None:
    seats = tuple(
        SeatBot(1, "visitor") if s == 1 else SeatBot(100 + s, house_bot_name(game, s)) for s in range(players)
    )
    setup = MatchSetup("p1", game, options, 5, seats, FaultPolicy(move_ms=1000, max_faults=0))
    network = VisitorAsker()
    house = HouseAsker(setup)
    outcome = play_with(house, network)
    assert all(step.by == "bot" and not step.faults for step in outcome.steps)
    assert set(network.asked) == {1}  # only the visiting seat went over the network
    assert {s.seat for s in outcome.steps} == set(range(players))
    assert set(house.players) == set(range(players)) - {1}
    again = play_with(HouseAsker(setup), VisitorAsker())  # seeded: the same match again
    assert [s.action for s in again.steps] == [s.action for s in outcome.steps]


def test_a_house_bot_that_breaks_is_faulted_never_crashes_the_match() -> None:
    seats = (SeatBot(1, "visitor"), SeatBot(2, house_bot_name("tiercon", 1)))
    setup = MatchSetup("p2", "tiercon", {}, 3, seats, FaultPolicy(move_ms=1000, max_faults=0))
    house = HouseAsker(setup)

    class Broken:
        def act(self, observation):
            raise RuntimeError("boom")

    house.players[1] = Broken()  # type: ignore[assignment]
    outcome = play_with(house, VisitorAsker())
    broken = [s for s in outcome.steps if s.seat == 1]
    assert broken and all(s.by == "fallback" and s.faults == ("illegal",) for s in broken)
    assert "house bot error: RuntimeError: boom" in broken[0].detail


def test_start_practice_checks_what_it_is_given(sessions, make_bot) -> None:
    bot, _ = make_bot("prac")
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"game": "poker"}, "invalid", "unknown game"),
        ({"game": "merde", "options": {"deals": 99}}, "invalid", "option 'deals'"),
        ({"game": "merde", "move_ms": 0}, "invalid", "move_ms=0"),
        ({"game": "tiercon", "seat": 2}, "invalid", "seat 2 is not a seat"),
    ]
    for kwargs, kind, message in cases:
        with pytest.raises(PracticeError) as raised:
            start_practice(sessions, bot.id, **kwargs)
        assert raised.value.kind == kind and message in str(raised.value)
    with pytest.raises(PracticeError) as raised:
        start_practice(sessions, "nobody-at-all", "merde")
    assert raised.value.kind == "not_found"
    match_id = start_practice(sessions, bot.id, "fool", players=3, seat=2, seed=9)
    with sessions() as session:
        from atout_arena.core.models import Match

        match = session.get(Match, match_id)
        assert match.tournament_id is None and match.status == "queued" and match.max_faults == 0
        names = [session.get(Bot, s.bot_id).name for s in sorted(match.seats, key=lambda s: s.seat)]
    assert names == ["house-fool-1", "house-fool-2", bot.name]
    with pytest.raises(PracticeError) as raised:
        start_practice(sessions, "house-fool-1", "fool")
    assert raised.value.kind == "forbidden"


def test_a_connected_bot_practises_at_once_and_gets_its_replay(
    api, connected_bots, sessions, new_bot, start_worker, clean_queues
) -> None:
    start_worker("practice", concurrency=4, practice=True)  # only workers play matches
    ((name, _bot_id, token),) = connected_bots(1, "random", prefix="practice")
    me = api.as_bot(token)
    assert api.client.post("/v1/practice", json={"game": "merde"}).status_code == 401
    assert api.organizer.post("/v1/practice", json={"game": "merde"}).status_code == 403
    bad = me.post("/v1/practice", json={"game": "merde", "options": {"deals": 99}})
    assert bad.status_code == 422 and "option 'deals'" in bad.json()["detail"]
    _, _, absent = new_bot("absent")
    offline = api.as_bot(absent).post("/v1/practice", json={"game": "merde"})
    assert offline.status_code == 409 and "not connected" in offline.json()["detail"]

    started = me.post(
        "/v1/practice", json={"game": "merde", "players": 3, "options": {"deals": 2}, "move_ms": 3000}
    )
    assert started.status_code == 202, started.text
    body = started.json()
    seat, match_id = body["seat"], body["match_id"]
    assert body["seats"][seat] == name
    assert sorted(n for s, n in enumerate(body["seats"]) if s != seat) == ["house-merde-1", "house-merde-2"]
    assert body["replay_url"] == f"/v1/matches/{match_id}/replay?seat={seat}"

    match = wait_until(
        lambda: (m := api.client.get(f"/v1/matches/{match_id}").json())["status"] == "finished" and m,
        30,
        "the practice match to finish",
        poll_s=0.05,
    )
    assert match["practice"] is True and match["tournament_id"] is None
    assert all(s["faults"] == 0 for s in match["seats"]), match["seats"]  # the house and the bot answered
    replay = me.get(body["replay_url"])
    assert replay.status_code == 200
    assert all(e["view"]["seat"] == seat and "hand" in e["view"] for e in replay.json()["events"])
    other = (seat + 1) % 3
    assert me.get(f"/v1/matches/{match_id}/replay?seat={other}").status_code == 403
    with sessions() as session:  # unrated
        assert (
            session.scalar(
                select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
            )
            == 0
        )
    houses = [b for b in api.organizer.get("/v1/bots").json() if b["house"]]
    assert {"house-merde-1", "house-merde-2"} <= {b["name"] for b in houses}
    assert api.organizer.post("/v1/bots/house-merde-1/token").status_code == 409
    listed = api.client.get(f"/v1/matches?practice=true&bot={name}").json()
    assert [m["id"] for m in listed["items"]] == [match_id]


def test_the_first_decision_of_a_practice_match_reaches_the_bot_at_once(
    api, connected_bots, start_worker, clean_queues, tmp_path
) -> None:
    """On an idle arena, from the POST to the first decision request seen by the bot: the
    practice queue's worker takes the match at once (target 250 ms; the bound here is generous
    for a loaded test machine, ``bench/practice.py`` measures the real figure)."""
    start_worker("practice-latency", concurrency=4, practice=True)
    stamps = tmp_path / "stamps.txt"
    ((_name, _bot_id, token),) = connected_bots(1, "Stamp", prefix="latency",
                                                 ATOUT_TEST_STAMP_FILE=str(stamps))
    me = api.as_bot(token)
    latencies = []
    for _ in range(3):
        began = time.time()
        started = me.post("/v1/practice", json={"game": "tiercon", "move_ms": 2000})
        assert started.status_code == 202, started.text
        match_id = str(started.json()["match_id"])

        def first_stamp(match_id: str = match_id) -> float | None:
            lines = stamps.read_text().splitlines() if stamps.exists() else []
            seen = [float(t) for m, t in (line.split() for line in lines) if m == match_id]
            return seen[0] if seen else None

        reached = wait_until(first_stamp, 20, "the bot's first decision of the practice match", poll_s=0.01)
        latencies.append(reached - began)
        wait_until(lambda mid=match_id: api.client.get(f"/v1/matches/{mid}").json()["status"] == "finished",
                   30, "the practice match to finish")
    print(f"practice: POST to the bot's first decision: {', '.join(f'{x * 1000:.0f} ms' for x in latencies)}")
    assert min(latencies) < 1.0, latencies
