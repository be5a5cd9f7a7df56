"""Fixtures of the API tests: the real API served by uvicorn on 127.0.0.1 (port 0), on the
session's real Redis and SQLite database, beside the shared fixtures of tests/conftest.py
(Celery worker processes, a game server, SDK bots in their own processes).

- ``api``: the session's API server; ``api.url``, ``api.client`` (httpx, no token),
  ``api.organizer`` (httpx with the organizer token), ``api.as_bot(token)``.
- ``organizer_headers`` / ``ADMIN_TOKEN``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN, Api, serve_in_thread
from e2e_helpers import WORKER_BOTS, wait_until


@pytest.fixture(scope="session")
def api(redis_url: str, database_url: str, celery_app: Any) -> Iterator[Api]:
    """The session's API: ``create_app`` on the session's Redis and database, served by uvicorn."""
    from atout_arena.api import create_app
    from atout_arena.core.settings import Settings

    settings = Settings(database_url=database_url, redis_url=redis_url)
    app = create_app(settings, admin_token=ADMIN_TOKEN)
    url, server, thread = serve_in_thread(app)
    handle = Api(url, app)
    yield handle
    handle.close()
    server.should_exit = True
    thread.join(10)
    app.state.arena.close()


@pytest.fixture
def organizer_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def new_bot(api: Api) -> Any:
    """``new_bot(prefix) -> (name, id, token)``: a bot registered through the API."""
    numbers = iter(range(1, 10**6))

    def make(prefix: str = "api") -> tuple[str, int, str]:
        name = f"{prefix}-{os.getpid()}-{time.monotonic_ns() % 10**9}-{next(numbers)}"
        response = api.organizer.post("/v1/bots", json={"name": name, "owner": "tests"})
        assert response.status_code == 201, response.text
        body = response.json()
        return name, body["id"], body["token"]

    return make


@pytest.fixture
def connected_bots(api: Api, game_server: Any, spawn_bot: Any, redis_client: Any, new_bot: Any) -> Any:
    """``connected_bots(n, spec="random", **env) -> [(name, id, token)]``: bots registered
    through the API and run by ``atout-bot run`` in their own processes, connected."""
    from atout_arena.core.relay import is_connected

    def make(n: int, spec: str = "random", prefix: str = "api", **env: str) -> list[tuple[str, int, str]]:
        bots = [new_bot(prefix) for _ in range(n)]
        if spec[0].isupper():  # a class of tests/workers/worker_bots.py
            spec = f"{WORKER_BOTS}:{spec}"
        for _, _, token in bots:
            spawn_bot(game_server.info["address"], token, spec, **env)
        for name, bot_id, _ in bots:
            wait_until(lambda b=bot_id: is_connected(redis_client, str(b)), 30, f"bot {name} to connect")
        return bots

    return make
