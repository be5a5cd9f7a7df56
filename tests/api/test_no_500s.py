"""No request answers 500 (issue 32, finding 13): a body nested a thousand deep is a one-line
422 on every POST route, before authentication (it was a 500, RecursionError, on all 14), and
a disable while Redis is unreachable is a 503 that leaves the bot enabled (it was a 500 after
the bot was disabled in the database, its tests and ladders left as they were)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import ADMIN_TOKEN, serve_in_thread

from atout_arena.api.errors import MAX_DEPTH, too_deep


def test_too_deep_walks_without_recursion() -> None:
    assert too_deep([[[1]]]) is None and too_deep({"a": [{"b": 1}]}) is None
    deep: Any = 1
    for _ in range(100_000):  # far past the interpreter's recursion limit
        deep = [deep]
    assert too_deep(deep) is not None
    exactly: Any = 1
    for _ in range(MAX_DEPTH):
        exactly = {"k": exactly}
    assert too_deep(exactly) is None and too_deep([exactly]) is not None


def _one_line_422(response: httpx.Response) -> None:
    assert response.status_code == 422, (response.request.url, response.text)
    detail = response.json()["detail"]
    assert "\n" not in detail and "nested" in detail, detail


def test_a_body_nested_a_thousand_deep_is_a_422_on_every_post_route(lone_api: Any) -> None:
    paths = lone_api.get("/openapi.json").json()["paths"]
    posts = [path.replace("{", "").replace("}", "") for path, item in paths.items() if "post" in item]
    assert len(posts) >= 14, posts
    body = "[" * 1000 + "]" * 1000  # 2 KB
    nested_objects = '{"a":' * 600 + "1" + "}" * 600
    for path in posts:
        for content in (body, nested_objects):
            for headers in ({"Content-Type": "application/json"}, {}):  # FastAPI reads untyped bodies too
                _one_line_422(lone_api.anonymous.post(path, content=content, headers=headers))


@pytest.fixture
def redis_down_api(tmp_path: Path) -> Iterator[Any]:
    """An API whose Redis is a port nobody listens on, with a bot registered in its database."""
    from atout_arena.api import create_app
    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.settings import Settings
    from atout_arena.services.bots import BotRegistry

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    database_url = f"sqlite:///{tmp_path / 'api.db'}"
    engine = make_engine(database_url)
    create_all(engine)
    sessions = make_session_factory(engine)
    bot, _ = BotRegistry(sessions).add("lonely", owner="tests")
    app = create_app(Settings(database_url=database_url, redis_url=f"redis://127.0.0.1:{port}/0",
                              data_dir=tmp_path), admin_token=ADMIN_TOKEN, dispatch=lambda ids: 0)
    url, server, thread = serve_in_thread(app)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30) as client:
        yield client, sessions, bot
    server.should_exit = True
    thread.join(10)
    app.state.arena.close()
    engine.dispose()


def test_a_disable_while_redis_is_down_is_a_503_and_leaves_the_bot_enabled(redis_down_api: Any) -> None:
    from atout_arena.services.bots import BotRegistry

    client, sessions, bot = redis_down_api
    response = client.post("/v1/bots/lonely/disable")
    assert response.status_code == 503, response.text
    assert "Redis" in response.json()["detail"] and "\n" not in response.json()["detail"]
    assert not BotRegistry(sessions).get(bot.id).disabled
