"""The REST API's requests and answers, on the real server (uvicorn, the session's Redis and
database): games, bots and tokens, tournaments and leagues without playing them, errors.

Every bad request is a 4xx whose ``detail`` says what is wrong; unknown ids are 404s.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
from api_helpers import ADMIN_TOKEN

from atout.games import GAMES
from atout_arena.core.settings import admin_token_problem


def detail(response: httpx.Response) -> str:
    return str(response.json()["detail"])


# -- games ------------------------------------------------------------------------------------


def test_games_describe_every_ruleset(api) -> None:
    games = api.client.get("/v1/games").json()
    assert [g["id"] for g in games] == list(GAMES)
    merde = api.client.get("/v1/games/merde").json()
    assert merde["players"] == [3, 4, 5, 6, 7] and merde["default_players"] == 4
    assert {o["name"] for o in merde["options"]} == {"deals", "zero_bid"}
    assert "bid" in merde["summary"]
    versions = {g["id"]: g["rules_version"] for g in games}
    assert versions == {"merde": 1, "tiercon": 2, "regicide": 2, "fool": 3}
    missing = api.client.get("/v1/games/poker")
    assert missing.status_code == 404 and "poker" in detail(missing) and "merde" in detail(missing)


# -- tokens -----------------------------------------------------------------------------------


def test_mutating_endpoints_need_the_organizer_token(api, new_bot) -> None:
    body = {"name": "nobody-registers-me"}
    anonymous = api.client.post("/v1/bots", json=body)
    assert anonymous.status_code == 401 and "organizer token" in detail(anonymous)
    assert anonymous.headers["www-authenticate"] == "Bearer"
    wrong = api.as_bot("not-a-token").post("/v1/bots", json=body)
    assert wrong.status_code == 401 and "unknown token" in detail(wrong)
    malformed = api.client.post("/v1/bots", json=body, headers={"Authorization": "Basic abc"})
    assert malformed.status_code == 401 and "Bearer" in detail(malformed)
    _, _, token = new_bot()
    as_bot = api.as_bot(token).post("/v1/bots", json=body)
    assert as_bot.status_code == 403 and "organizer token" in detail(as_bot)
    for path in ("/v1/tournaments", "/v1/leagues"):
        assert api.client.post(path, json={}).status_code == 401
        assert api.as_bot(token).post(path, json={}).status_code == 403


def test_a_bot_is_registered_once_and_its_token_shown_once(api, new_bot) -> None:
    name, bot_id, token = new_bot("reg")
    assert token.startswith("atout_")
    listed = {b["name"]: b for b in api.organizer.get("/v1/bots").json()}
    assert listed[name]["id"] == bot_id and "token" not in listed[name]
    assert listed[name]["house"] is False and listed[name]["connected"] is False
    again = api.organizer.post("/v1/bots", json={"name": name})
    assert again.status_code == 409 and "already exists" in detail(again)
    for bad in ("has space", "-dash", "x" * 65, ""):
        response = api.organizer.post("/v1/bots", json={"name": bad})
        assert response.status_code == 422, (bad, response.text)
    house = api.organizer.post("/v1/bots", json={"name": "house-merde-9"})
    assert house.status_code == 422 and "house-" in detail(house)
    extra = api.organizer.post("/v1/bots", json={"name": "ok-name", "colour": "red"})
    assert extra.status_code == 422


def test_a_bot_token_sees_its_own_details_only(api, new_bot) -> None:
    name, bot_id, token = new_bot("own")
    other, other_id, _ = new_bot("other")
    mine = api.as_bot(token).get(f"/v1/bots/{name}")
    assert mine.status_code == 200
    body = mine.json()
    assert body["id"] == bot_id and body["ratings"] == [] and body["recent_matches"] == []
    assert body["faults"]["total"] == 0 and body["think_time"]["p50_ms"] is None
    assert api.as_bot(token).get(f"/v1/bots/{bot_id}").status_code == 200  # by id too
    assert api.as_bot(token).get(f"/v1/bots/{other}").status_code == 403
    assert api.client.get(f"/v1/bots/{other_id}").status_code == 401
    assert api.organizer.get(f"/v1/bots/{other}").status_code == 200
    assert api.as_bot(token).get("/v1/bots").status_code == 403


def test_rotating_a_token_retires_the_old_one(api, new_bot) -> None:
    name, _, old = new_bot("rot")
    assert api.as_bot(old).get(f"/v1/bots/{name}").status_code == 200
    rotated = api.organizer.post(f"/v1/bots/{name}/token")
    assert rotated.status_code == 200
    new = rotated.json()["token"]
    assert new != old
    assert api.as_bot(old).get(f"/v1/bots/{name}").status_code == 401
    assert api.as_bot(new).get(f"/v1/bots/{name}").status_code == 200


def test_a_disabled_bot_cannot_practise_and_can_be_enabled(api, new_bot) -> None:
    name, _, token = new_bot("dis")
    disabled = api.organizer.post(f"/v1/bots/{name}/disable")
    assert disabled.status_code == 200 and disabled.json()["disabled"] is True
    practice = api.as_bot(token).post("/v1/practice", json={"game": "merde"})
    assert practice.status_code == 403 and "disabled" in detail(practice)
    enabled = api.organizer.post(f"/v1/bots/{name}/enable")
    assert enabled.json()["disabled"] is False


def test_a_human_is_shown_as_one_everywhere(api, new_bot) -> None:
    """Before: only the registration said "human"; the list, the details, disable and enable
    said "bot" (BotPublic's default)."""
    bot = new_bot("kind")[0]
    name = f"person-{time.monotonic_ns()}"
    created = api.organizer.post("/v1/bots", json={"name": name, "kind": "human"})
    assert created.status_code == 201 and created.json()["kind"] == "human", created.text
    listed = {b["name"]: b for b in api.organizer.get("/v1/bots").json()}
    assert listed[name]["kind"] == "human"
    assert api.organizer.get(f"/v1/bots/{name}").json()["kind"] == "human"
    assert api.organizer.post(f"/v1/bots/{name}/disable").json()["kind"] == "human"
    assert api.organizer.post(f"/v1/bots/{name}/enable").json()["kind"] == "human"
    assert listed[bot]["kind"] == "bot" and api.organizer.get(f"/v1/bots/{bot}").json()["kind"] == "bot"


# -- tournaments ------------------------------------------------------------------------------


def test_bad_tournaments_are_422s_that_say_why(api, new_bot) -> None:
    names = [new_bot("t")[0] for _ in range(3)]
    base = {"name": "bad", "game": "merde", "bots": names, "players": 3}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"options": {"deals": 20}}, "option 'deals': 20"),  # the engine's ValueError text
        ({"options": {"trumps": 1}}, "unknown option 'trumps'"),
        ({"options": {"zero_bid": "seven"}}, "'ten' or 'five_plus_tricks'"),
        ({"game": "poker"}, "Input should be 'merde', 'tiercon', 'regicide' or 'fool'"),
        ({"players": 2}, "option 'players': 2 is not allowed for merde"),
        ({"bots": [*names, "house-merde-huge-1"]},
         "unknown house bot kind 'huge'; kinds: heuristic, pimc-small, pimc-large, ismcts"),
        ({"bots": [names[0], names[0], names[1]]}, "each bot may be entered once"),
        ({"players": 4}, "need at least 4 bots"),
        ({"options": {"players": 3}}, "'players' is a field of its own"),
    ]
    for change, message in cases:
        response = api.organizer.post("/v1/tournaments", json={**base, **change})
        assert response.status_code == 422, (change, response.text)
        assert message in detail(response), (change, detail(response))
    unknown = api.organizer.post("/v1/tournaments", json={**base, "bots": [*names, "nobody-at-all"]})
    assert unknown.status_code == 422 and "no bot named 'nobody-at-all'" in detail(unknown), unknown.text
    for change in ({"move_ms": 0}, {"games_per_pairing": 0}, {"max_faults": -1}, {"seed": -1}, {"name": ""}):
        assert api.organizer.post("/v1/tournaments", json={**base, **change}).status_code == 422, change


def test_a_tournament_is_created_shown_and_cancelled(api, new_bot) -> None:
    names = [new_bot("tc")[0] for _ in range(4)]
    created = api.organizer.post(
        "/v1/tournaments",
        json={
            "name": "never played",
            "game": "tiercon",
            "bots": names,
            "games_per_pairing": 2,
            "seed": 11,
        },
    )
    assert created.status_code == 201, created.text
    t = created.json()
    assert t["status"] == "created" and t["entrants"] == names and t["seed"] == 11
    assert t["progress"] == {"total": 12, "done": 0, "percent": 0.0, "by_status": {"pending": 12}}
    assert {row["bot"] for row in t["standings"]} == set(names)  # entrants listed before any match
    assert any(x["id"] == t["id"] for x in api.client.get("/v1/tournaments?status=created").json())
    matches = api.client.get(f"/v1/tournaments/{t['id']}/matches?limit=5").json()
    assert matches["total"] == 12 and len(matches["items"]) == 5
    first = matches["items"][0]
    assert first["status"] == "pending" and first["seed"] is None  # the seed deals the cards: hidden
    assert len(first["seats"]) == 2 and first["practice"] is False
    one_bot = api.client.get(f"/v1/tournaments/{t['id']}/matches", params={"bot": names[0]}).json()
    assert one_bot["total"] == 6
    standings = api.client.get(f"/v1/tournaments/{t['id']}/standings").json()
    assert standings["final"] is False and standings["ratings"] == []

    cancelled = api.organizer.post(f"/v1/tournaments/{t['id']}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["progress"]["by_status"] == {"cancelled": 12}
    assert api.organizer.post(f"/v1/tournaments/{t['id']}/cancel").status_code == 200  # harmless again
    start = api.organizer.post(f"/v1/tournaments/{t['id']}/start")
    assert start.status_code == 409 and "cancelled" in detail(start)


# -- leagues ----------------------------------------------------------------------------------


def test_a_league_has_members_and_needs_enough_of_them(api, new_bot) -> None:
    names = [new_bot("lg")[0] for _ in range(3)]
    league_name = f"league-{time.monotonic_ns()}"
    created = api.organizer.post(
        "/v1/leagues",
        json={
            "name": league_name,
            "game": "regicide",
            "players": 3,
            "bots": names[:2],
        },
    )
    assert created.status_code == 201, created.text
    league = created.json()
    assert league["members"] == names[:2] and league["seasons"] == []
    assert api.organizer.post("/v1/leagues", json={"name": league_name, "game": "merde"}).status_code == 409
    season = api.organizer.post(f"/v1/leagues/{league_name}/seasons")
    assert season.status_code == 409 and "a season needs at least 3" in detail(season)
    joined = api.organizer.post(f"/v1/leagues/{league['id']}/members", json={"join": [names[2]]})
    assert joined.json()["members"] == names
    left = api.organizer.post(f"/v1/leagues/{league_name}/members", json={"leave": [names[0]]})
    assert left.json()["members"] == names[1:]
    unknown = api.organizer.post(f"/v1/leagues/{league_name}/members", json={"join": ["nobody-at-all"]})
    assert unknown.status_code == 422 and "nobody-at-all" in detail(unknown)
    odd = api.organizer.post(f"/v1/leagues/{league_name}/members", json={"join": ["9" * 30]})
    assert odd.status_code == 422 and repr("9" * 30) in detail(odd)  # no id: a name, unknown
    odd = api.organizer.post(f"/v1/leagues/{league_name}/members", json={"join": ["²"]})
    assert odd.status_code == 422 and "body.join.0" in detail(odd)  # neither a name nor an id
    twice_id = api.organizer.get(f"/v1/bots/{names[0]}").json()["id"]
    twice = api.organizer.post(  # one bot by its name and by its id: it joins once
        f"/v1/leagues/{league_name}/members", json={"join": [names[0], str(twice_id)]}
    )
    assert twice.status_code == 200, twice.text
    assert twice.json()["members"] == [names[0], *names[1:]]
    both = api.organizer.post(  # one bot by its id (an integer) in both lists: a 422 that names it
        f"/v1/leagues/{league_name}/members",
        json={"join": [twice_id, names[1]], "leave": [names[1], twice_id]},
    )
    assert both.status_code == 422 and f"join and leave: {twice_id}, {names[1]}" in detail(both), both.text
    left = api.organizer.post(f"/v1/leagues/{league_name}/members", json={"leave": [names[0]]})
    assert left.json()["members"] == names[1:]
    standings = api.client.get(f"/v1/leagues/{league_name}/standings").json()
    assert {row["bot"] for row in standings["standings"]} == set(names[1:])
    bad = api.organizer.post("/v1/leagues", json={"name": "x-bad", "game": "fool", "options": {"deck": 40}})
    assert bad.status_code == 422 and "36 or 52" in detail(bad)


# -- unknown ids, ratings, system -------------------------------------------------------------

UNKNOWN = [
    "/v1/games/none",
    "/v1/tournaments/987654321",
    "/v1/tournaments/987654321/standings",
    "/v1/tournaments/987654321/matches",
    "/v1/tournaments/0",
    "/v1/tournaments/99999999999999999999999",
    "/v1/matches/987654321",
    "/v1/matches/987654321/replay",
    "/v1/matches/987654321/replay/full",
    "/v1/matches/987654321/events",
    "/v1/matches/-1",
    "/v1/matches/99999999999999999999999/replay",
    "/v1/bots/nobody-at-all",
    "/v1/bots/987654321",
    "/v1/bots/²³",
    "/v1/bots/99999999999999999999999999",
    "/v1/leagues/nobody-at-all",
    "/v1/leagues/987654321/standings",
    "/v1/leagues/²",
    "/v1/leagues/99999999999999999999999",
    "/v1/leagues/99999999999999999999999/standings",
]


@pytest.mark.parametrize("path", UNKNOWN)
def test_unknown_ids_are_404s(api, path: str) -> None:
    response = api.organizer.get(path)
    assert response.status_code == 404, response.text
    assert detail(response).startswith("no ")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/tournaments/987654321/start",
        "/v1/tournaments/987654321/cancel",
        "/v1/bots/nobody-at-all/token",
        "/v1/bots/nobody-at-all/disable",
        "/v1/leagues/nobody-at-all/seasons",
    ],
)
def test_unknown_ids_are_404s_for_the_organizer_too(api, path: str) -> None:
    response = api.organizer.post(path)
    assert response.status_code == 404, response.text


def test_ratings_need_a_known_game(api) -> None:
    assert api.client.get("/v1/ratings").status_code == 422
    unknown = api.client.get("/v1/ratings?game=poker")
    assert unknown.status_code == 422 and "query.game: Input should be 'merde'" in detail(unknown)
    assert "(got 'poker')" in detail(unknown)
    board = api.client.get("/v1/ratings?game=fool").json()
    assert board["game"] == "fool" and isinstance(board["rows"], list)


def test_match_filters_say_what_is_wrong(api) -> None:
    assert "query.status: Input should be 'pending'" in detail(api.client.get("/v1/matches?status=done"))
    assert api.client.get("/v1/matches?bot=nobody-at-all").status_code == 404
    assert api.client.get("/v1/matches?limit=0").status_code == 422


def test_health_metrics_docs_and_dashboard(api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok", "database": "ok", "redis": "ok"}
    metrics = api.client.get("/metrics")
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    for name in (
        "atout_decision_seconds",
        "atout_matches_total",
        "atout_queue_depth",
        "atout_bots_connected",
    ):
        assert f"# TYPE {name}" in metrics.text
    openapi = api.client.get("/openapi.json").json()
    assert "/v1/tournaments" in openapi["paths"] and "/v1/practice" in openapi["paths"]
    assert (
        "organizer" in openapi["paths"]["/v1/bots"]["post"]["description"].lower()
        or "token" in openapi["paths"]["/v1/bots"]["post"]["description"]
    )
    assert api.client.get("/docs").status_code == 200
    page = api.client.get("/")
    assert page.status_code == 200 and '<main id="view"' in page.text
    for asset in ("/dashboard/style.css", "/dashboard/js/app.js", "/dashboard/js/table.js"):
        assert api.client.get(asset).status_code == 200, asset


def test_the_organizer_token_comes_from_the_settings(redis_url: str, database_url: str) -> None:
    """``ATOUT_ADMIN_TOKEN`` is read once, into ``Settings.admin_token``, which the API uses."""
    from api_helpers import serve_in_thread

    from atout_arena.api import create_app
    from atout_arena.core.settings import Settings

    env = {"ATOUT_DATABASE_URL": database_url, "ATOUT_REDIS_URL": redis_url}
    from_env = "atout_admin_from-the-environment-0123"
    for settings, token, expected in [
        (Settings.from_env({**env, "ATOUT_ADMIN_TOKEN": f" {from_env} "}), from_env, 200),
        (Settings.from_env({**env, "ATOUT_ADMIN_TOKEN": f" {from_env} "}), ADMIN_TOKEN, 401),
        (Settings.from_env(env), None, 403),  # no organizer token: organizer endpoints are off
    ]:
        app = create_app(settings, dispatch=lambda ids: 0)
        url, server, thread = serve_in_thread(app)
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            response = httpx.get(f"{url}/v1/bots", headers=headers, timeout=30)
            assert response.status_code == expected, response.text
        finally:
            server.should_exit = True
            thread.join(10)
            app.state.arena.close()


def test_serve_api_runs_the_api_on_a_free_port(redis_url: str, database_url: str, tmp_path) -> None:
    """``serve_api(host, 0)`` (what ``atout-arena api`` runs): says where it listens, makes up an
    organizer token when none is set, answers, and stops on SIGTERM."""
    env = {
        "ATOUT_REDIS_URL": redis_url,
        "ATOUT_DATABASE_URL": database_url,
        "ATOUT_DATA_DIR": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "PYTHONUNBUFFERED": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-c", "from atout_arena.api import serve_api; serve_api('127.0.0.1', 0)"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        lines = []
        url = token = None
        deadline = time.monotonic() + 20
        while (url is None or token is None) and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "API listening on " in line:
                url = line.split("API listening on ", 1)[1].split()[0]
            if "organizer token of this run is " in line:
                token = line.rsplit(" ", 1)[1].strip()
        assert url and token, "".join(lines)
        assert admin_token_problem(token) is None  # the one it makes up is as strong as required
        with httpx.Client(base_url=url, timeout=10) as client:
            deadline = time.monotonic() + 10
            while True:
                try:
                    health = client.get("/healthz")
                    break
                except httpx.ConnectError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            assert health.json()["status"] == "ok"
            assert client.get("/v1/bots", headers={"Authorization": f"Bearer {token}"}).status_code == 200
            assert (
                client.get("/v1/bots", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).status_code == 401
            )
    finally:
        process.terminate()
        code = process.wait(15)
    rest = process.stdout.read()
    # uvicorn shuts down gracefully (the lifespan closes the arena), then re-raises SIGTERM
    assert code in (0, -15), rest
    assert "Application shutdown complete" in rest, rest
