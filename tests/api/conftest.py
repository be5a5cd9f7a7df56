"""Fixtures of the API tests: the real API served by uvicorn on 127.0.0.1 (port 0), on the
session's real Redis and SQLite database, beside the shared fixtures of tests/conftest.py
(Celery worker processes, a game server, SDK bots in their own processes).

- ``api``: the session's API server; ``api.url``, ``api.client`` (httpx, no token),
  ``api.organizer`` (httpx with the organizer token), ``api.as_bot(token)``.
- ``organizer_headers`` / ``ADMIN_TOKEN``.
- ``lone_api``: an API of its own (its own database, the session's Redis, tasks sent nowhere),
  for tests that need no worker: an httpx client with the organizer token, ``.anonymous`` (no
  token) and ``.sessions`` (the database's session factory).
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


@pytest.fixture
def lone_api(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import httpx

    from atout_arena.api import create_app
    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.settings import Settings

    data = tmp_path_factory.mktemp("lone-api")
    database_url = f"sqlite:///{data / 'api.db'}"
    engine = make_engine(database_url)
    create_all(engine)
    app = create_app(
        Settings(database_url=database_url, redis_url=redis_url, data_dir=data),
        admin_token=ADMIN_TOKEN,
        dispatch=lambda ids: len(list(ids)),
    )
    url, server, thread = serve_in_thread(app)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30) as client:
        client.anonymous = httpx.Client(base_url=url, timeout=30)  # type: ignore[attr-defined]
        client.sessions = make_session_factory(engine)  # type: ignore[attr-defined]
        yield client
        client.anonymous.close()  # type: ignore[attr-defined]
    server.should_exit = True
    thread.join(10)
    app.state.arena.close()
    engine.dispose()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium (the system's) for a module's browser tests."""
    from test_dashboard import chromium, playwright  # a test module: imported only by the tests that ask

    with playwright()() as p:
        b = p.chromium.launch(executable_path=chromium(), headless=True)
        try:
            yield b
        finally:
            b.close()
