"""The OpenAPI tells the truth: one error model for every 4xx, strict types, names that are not
ids, NaN refused, OPTIONS and 405 with the path's methods, examples the API accepts, and
``/docs`` served from local files (checked in Chromium with every other host cut off).

The API here is a real uvicorn server on its own database and the session's Redis; it sends
no task anywhere (nothing here needs a worker).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_dashboard import chromium, playwright

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def api(lone_api: httpx.Client) -> httpx.Client:
    return lone_api


def is_api_error(response: httpx.Response) -> bool:
    body = response.json()
    return (
        set(body) == {"detail", "errors"}
        and isinstance(body["detail"], str)
        and bool(body["detail"])
        and isinstance(body["errors"], list)
    )


def bots(api: httpx.Client, *names: str) -> list[int]:
    ids = []
    for name in names:
        response = api.post("/v1/bots", json={"name": name})
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    return ids


def test_every_4xx_is_one_model_and_the_schema_says_so(api: httpx.Client) -> None:
    bots(api, "alice", "bob")
    bot_token = api.post("/v1/bots/alice/token").json()["token"]
    answers = {
        "404 path": api.get("/v1/tournaments/999"),
        "404 filter": api.get("/v1/matches?bot=nobody"),
        "401": api.anonymous.post("/v1/bots", json={"name": "carol"}),  # type: ignore[attr-defined]
        "403": api.anonymous.get(  # type: ignore[attr-defined]
            "/v1/bots", headers={"Authorization": f"Bearer {bot_token}"}
        ),
        "405": api.put("/v1/bots"),
        "409": api.post("/v1/bots", json={"name": "alice"}),
        "422 schema": api.post("/v1/tournaments", json={"name": "x", "game": "merde", "bots": ["alice"]}),
        "422 rules": api.post(
            "/v1/tournaments",
            json={"name": "x", "game": "merde", "bots": ["alice", "bob"], "options": {"no": 1}},
        ),
        "400": api.post(
            "/v1/bots", content=b'{"name": "\xff\xfe"}', headers={"Content-Type": "application/json"}
        ),
    }
    expected = {"404 path": 404, "404 filter": 404, "401": 401, "403": 403, "405": 405, "409": 409,
                "422 schema": 422, "422 rules": 422, "400": 400}
    for what, response in answers.items():
        assert response.status_code == expected[what], (what, response.status_code, response.text)
        assert is_api_error(response), (what, response.text)
    assert answers["422 schema"].json()["errors"][0]["loc"] == ["body", "bots"]
    assert answers["422 rules"].json()["errors"] == []
    assert "unknown option 'no'" in answers["422 rules"].json()["detail"]

    schema = api.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    assert "HTTPValidationError" not in components
    assert components["ApiError"]["properties"]["detail"]["type"] == "string"
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            codes = operation["responses"]
            for code, response in codes.items():
                if code.startswith("4"):
                    assert response["content"]["application/json"]["schema"] == {
                        "$ref": "#/components/schemas/ApiError"
                    }, (method, path, code)
            if "requestBody" in operation:
                assert {"400", "422"} <= set(codes), (method, path)
            if any(p["in"] == "path" for p in operation.get("parameters", [])):
                assert "404" in codes, (method, path)
            if operation.get("security"):
                assert {"401", "403"} <= set(codes), (method, path)
    assert "404" in schema["paths"]["/v1/matches"]["get"]["responses"]  # ?bot=nobody


def test_the_schema_has_enums_patterns_and_examples_the_api_accepts(api: httpx.Client) -> None:
    import re

    from atout_arena.api.schemas import LeagueCreate, TournamentCreate

    schema = api.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    statuses = {"pending", "queued", "running", "finished", "failed", "cancelled"}
    assert set(components["MatchPublic"]["properties"]["status"]["enum"]) == statuses
    assert set(components["TournamentPublic"]["properties"]["status"]["enum"]) == {
        "created", "running", "finished", "cancelled"
    }
    test_statuses = components["TestPublic"]["properties"]["status"]["enum"]
    assert set(test_statuses) == {"running", "finished", "cancelled"}
    query = {p["name"]: p for p in schema["paths"]["/v1/matches"]["get"]["parameters"]}
    assert set(query["status"]["schema"]["anyOf"][0]["enum"]) == statuses
    pattern = re.compile(components["BotCreate"]["properties"]["name"]["pattern"])
    assert pattern.search("alice") and pattern.search("bot2") and pattern.search("2x")
    assert not any(pattern.search(bad) for bad in ("2", "007", "house-x", "-a", "a b", "é"))
    assert schema["paths"]["/v1/ratings"]["get"]["parameters"][0]["schema"]["enum"] == [
        "merde", "tiercon", "regicide", "fool"
    ]
    assert json.dumps(schema).count("4.611686018427388e+18") == 0  # integer bounds stay integers

    bots(api, "alice", "bob", "carol", "dave", "erin")
    for model, path, key in ((TournamentCreate, "/v1/tournaments", "TournamentCreate"),
                             (LeagueCreate, "/v1/leagues", "LeagueCreate")):
        (example,) = components[key]["examples"]
        model.model_validate(example)
        created = api.post(path, json=example)
        assert created.status_code == 201, (path, created.text)


def test_the_enums_are_the_vocabulary_and_the_games() -> None:
    """The Literals of the schemas are spelled out (for the type checker): the vocabulary's
    statuses and outcomes and the rulesets' ids, in their order."""
    from typing import get_args

    from atout.games import GAMES
    from atout_arena.api import schemas
    from atout_arena.core import vocabulary

    assert get_args(schemas.MatchStatusName) == vocabulary.MATCH_STATUSES
    assert get_args(schemas.TournamentStatusName) == vocabulary.TOURNAMENT_STATUSES
    assert get_args(schemas.TestStatusName) == vocabulary.SPRT_STATUSES
    assert get_args(schemas.OutcomeName) == vocabulary.OUTCOMES
    assert get_args(schemas.GameId) == tuple(GAMES)


def test_types_are_strict_and_names_are_not_ids(api: httpx.Client) -> None:
    alice, bob = bots(api, "alice", "bob")
    base = {"name": "t", "game": "tiercon", "bots": ["alice", "bob"]}
    for bad in ({"games_per_pairing": True}, {"games_per_pairing": "2"}, {"move_ms": "1000"},
                {"duplicate": 1}, {"bots": [True, "bob"]}, {"seed": 1.5}):
        response = api.post("/v1/tournaments", json={**base, **bad})
        assert response.status_code == 422 and is_api_error(response), (bad, response.text)
        assert response.json()["errors"], bad
    integral = api.post("/v1/tournaments", json={**base, "games_per_pairing": 2.0})
    assert integral.status_code == 201 and integral.json()["games_per_pairing"] == 2  # 2.0: an integer
    by_id = api.post("/v1/tournaments", json={**base, "bots": [alice, str(bob)]})  # ids: integers or digits
    assert by_id.status_code == 201 and sorted(by_id.json()["entrants"]) == ["alice", "bob"], by_id.text

    for name in ("2", "0042"):
        refused = api.post("/v1/bots", json={"name": name})
        assert refused.status_code == 422 and "all digits" in refused.json()["detail"], refused.text
    assert api.get(f"/v1/bots/{bob}").json()["name"] == "bob"  # a string of digits is always an id


def test_nan_and_infinity_are_422s(api: httpx.Client) -> None:
    bots(api, "alice", "bob")
    for constant in ("NaN", "Infinity", "-Infinity"):
        body = '{"name": "t", "game": "tiercon", "bots": ["alice", "bob"], "options": {"x": CONST}}'
        body = body.replace("CONST", constant)
        response = api.post("/v1/tournaments", content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 422 and is_api_error(response), (constant, response.text)
        assert f"{constant} is not JSON" in response.json()["detail"]
    sprt = {"game": "tiercon", "a": "alice", "b": "bob", "sprt": {"elo1": float("nan")}}
    response = api.post("/v1/tests", content=json.dumps(sprt), headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and is_api_error(response), response.text


def test_options_and_405_name_the_methods_of_the_path(api: httpx.Client) -> None:
    schema = api.get("/openapi.json").json()
    for path, methods in (("/v1/bots", "GET, OPTIONS, POST"), ("/v1/bots/alice", "GET, OPTIONS"),
                          ("/v1/tournaments/1/start", "OPTIONS, POST")):
        template = path.replace("alice", "{bot}").replace("/1/", "/{tournament_id}/")
        declared = {m.upper() for m in schema["paths"][template]}
        assert set(methods.split(", ")) == declared | {"OPTIONS"}
        options = api.options(path)
        assert options.status_code == 204 and options.headers["allow"] == methods and options.content == b""
        wrong = api.request("DELETE", path)
        assert wrong.status_code == 405 and wrong.headers["allow"] == methods and is_api_error(wrong)
    assert api.options("/v1/nothing-here").status_code == 404


def test_docs_load_from_local_files_with_no_other_host(api: httpx.Client, tmp_path: Path) -> None:
    html = api.anonymous.get("/docs").text  # type: ignore[attr-defined]
    import re

    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url:\s*'([^']+)'""", html)
    urls = [a or b for a, b in urls]
    assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    for url in urls:
        assert api.anonymous.get(url).status_code == 200, url  # type: ignore[attr-defined]
    for page in ("/redoc",):
        assert "cdn" not in api.anonymous.get(page).text.lower()  # type: ignore[attr-defined]

    base = str(api.base_url).rstrip("/")
    outside: list[str] = []
    with playwright()() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            page = browser.new_page()

            def route(request_route: Any) -> None:
                if request_route.request.url.startswith(base):
                    request_route.continue_()
                else:  # no network but the API's own: a CDN would be cut off here
                    outside.append(request_route.request.url)
                    request_route.abort()

            page.route("**/*", route)
            page.goto(f"{base}/docs")
            page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
            assert "Atout arena" in page.inner_text(".swagger-ui .info .title")
            page.wait_for_selector(".opblock-tag-section", timeout=30_000)
            assert page.locator(".opblock").count() >= 30  # every operation is listed
            page.screenshot(path=str(tmp_path / "docs.png"))
        finally:
            browser.close()
    assert outside == [], outside
