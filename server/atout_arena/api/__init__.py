"""The REST API (FastAPI, OpenAPI at ``/docs``) and the web dashboard it serves at ``/``.

>>> app = create_app(Settings.from_env())           # doctest: +SKIP
>>> serve_api("127.0.0.1", 8000)                     # doctest: +SKIP  (``atout-arena api``)

Resources are versioned under ``/v1`` (one router each, :mod:`atout_arena.api.routes`); ``/metrics``
and ``/healthz`` are not. Who may do what is in :mod:`atout_arena.api.deps`; ``docs/api.md`` has
curl examples for organizers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import redis
from fastapi import Depends, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from atout._loop import loop_factory
from atout.web import SHARED as SDK_WEB_FILES
from atout.web import WEB_DIR as SDK_WEB
from atout_arena.api import errors
from atout_arena.api.context import Arena, Dispatch
from atout_arena.api.deps import reject_unknown_query
from atout_arena.api.leadership import MetricsLeadership
from atout_arena.api.routes import (
    bots,
    games,
    ladders,
    leagues,
    matches,
    play,
    practice,
    ratings,
    sprt_tests,
    system,
    tournaments,
)
from atout_arena.core.relay import ContractMismatch, check_contract
from atout_arena.core.settings import Settings

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard"

DESCRIPTION = """
Atout is an arena where card-playing bots meet. Organizers register bots and run tournaments
and leagues; spectators follow matches live; bots practise against house bots.

**Tokens** (`Authorization: Bearer <token>`): the organizer token (`ATOUT_ADMIN_TOKEN`) for
every endpoint that changes something; a bot's token for its own details, its own seat's views
and practice matches; no token for what spectators see. An unknown token is a 401, a token
without the right a 403.
"""


def create_app(
    settings: Settings | None = None,
    *,
    admin_token: str | None = None,
    dispatch: Dispatch | None = None,
    metrics_lease: bool = False,
) -> FastAPI:
    """The API app. ``admin_token`` defaults to ``settings.admin_token`` (``ATOUT_ADMIN_TOKEN``;
    none: organizer endpoints answer 403); ``dispatch`` sends match tasks (default: the
    workers' Celery app). ``metrics_lease``: this API is one of several, and serves the
    arena-wide series on ``/metrics`` only while it holds the metrics lease
    (:mod:`atout_arena.api.leadership`; ``atout-arena api`` does); without it, it always does."""
    arena = Arena(settings or Settings.from_env(), admin_token=admin_token, dispatch=dispatch)
    leadership = MetricsLeadership(arena.redis_url) if metrics_lease else None
    arena.metrics_leadership = leadership

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if leadership is not None:
            await asyncio.to_thread(leadership.start)
        yield
        if leadership is not None:
            await asyncio.to_thread(leadership.stop)
        arena.close()

    # Swagger UI (/docs) and ReDoc (/redoc) from the files fastapi-offline ships: no CDN, so
    # they work offline.
    app = FastAPIOffline(
        static_url="/docs-assets",
        title="Atout arena",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        openapi_tags=[
            {"name": "games", "description": "the rulesets"},
            {"name": "bots", "description": "registration, tokens, details"},
            {"name": "tournaments", "description": "schedules of matches between bots"},
            {"name": "leagues", "description": "standing competitions with seasons"},
            {"name": "matches", "description": "results, replays, live events"},
            {"name": "ratings", "description": "leaderboards"},
            {"name": "practice", "description": "a bot against house bots"},
            {"name": "play", "description": "human seats: a person plays in the browser"},
            {"name": "tests", "description": "is A stronger than B? duplicate sets until an SPRT decides"},
            {"name": "ladders", "description": "connected bots matched all the time, rated by OpenSkill"},
            {"name": "system", "description": "health and metrics"},
        ],
    )
    app.state.arena = arena
    for module in (games, bots, tournaments, leagues, matches, ratings, practice, play, sprt_tests, ladders):
        app.include_router(module.router, dependencies=[Depends(reject_unknown_query)])
    app.include_router(system.router)  # /metrics, /healthz: scrapers may add their own parameters

    errors.install(app)

    # The table renderer ships with the SDK (``atout-bot watch --web`` draws the same table): one
    # copy, served here where the dashboard's modules import it (./table.js, ./cards.js).
    for name in SDK_WEB_FILES:
        app.add_api_route(f"/dashboard/js/{name}", _sdk_file(SDK_WEB / name), include_in_schema=False)
    app.mount("/dashboard", StaticFiles(directory=DASHBOARD), name="dashboard")

    @app.get("/", include_in_schema=False)
    def dashboard() -> FileResponse:
        return FileResponse(DASHBOARD / "index.html", headers={"Cache-Control": "no-cache"})

    errors.document(app)
    return app


def _sdk_file(path: Path) -> Callable[[], FileResponse]:
    def serve() -> FileResponse:
        return FileResponse(path, media_type="text/javascript")

    return serve


def uvicorn_loop() -> str:
    """The loop uvicorn runs the API on: the one ``ATOUT_EVENT_LOOP`` chooses for every process
    of the arena (uvicorn's own "auto" would take uvloop whatever it says)."""
    return "asyncio" if loop_factory() is asyncio.new_event_loop else "uvloop"


def serve_api(host: str = "127.0.0.1", port: int = 8000, settings: Settings | None = None) -> None:
    """Run the API and the dashboard until SIGTERM / Ctrl-C (``atout-arena api``).

    Port 0 takes a free port; the line ``API listening on http://HOST:PORT`` says which
    (``https://`` with ``ATOUT_TLS_CERT`` and ``ATOUT_TLS_KEY``: it serves HTTPS). Without
    ``ATOUT_ADMIN_TOKEN`` an organizer token is made up for this run and printed once.
    """
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = settings or Settings.from_env()
    admin_token = settings.admin_token
    if not admin_token:
        admin_token = "atout_admin_" + secrets.token_urlsafe(24)
        print(
            f"no ATOUT_ADMIN_TOKEN set: the organizer token of this run is {admin_token}",
            file=sys.stderr,
            flush=True,
        )
    app = create_app(settings, admin_token=admin_token, metrics_lease=True)  # one of several APIs
    arena = app.state.arena
    try:  # it serves people's play streams as a game server does: the same contract, looked at once
        check_contract(arena.redis, f"API {socket.gethostname()}:{os.getpid()}", ttl_ms=0)
    except ContractMismatch:
        arena.close()
        raise
    except redis.RedisError as exc:
        logging.getLogger(__name__).warning("could not check the Redis contract's version (%s)", exc)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP: asyncio sets TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # Listen before saying so: a client that connects on the line below must not be refused
    # while uvicorn is still starting (connections wait in the backlog until it accepts).
    sock.listen(2048)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    scheme = "https" if settings.tls_cert else "http"
    print(f"API listening on {scheme}://{shown}:{bound} (dashboard at /, OpenAPI at /docs)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, loop=uvicorn_loop(), log_level="info",
                                           timeout_graceful_shutdown=5,
                                           ssl_certfile=settings.tls_cert, ssl_keyfile=settings.tls_key))
    server.run(sockets=[sock])
