"""A database outage, seen from the API (issue 30, finding 5): what needs the database answers
503 with one line and logs one line, no traceback; ``/metrics`` keeps serving what Redis
counts, and leaves out (and counts, and logs once per outage) a collector of the database.

Before: every scrape during a 14 s PostgreSQL stop answered 500 (the ladders' collector), and
``GET /v1/tournaments/1`` answered 500 with a traceback, 73 times.

PostgreSQL: a real ``atout-arena api`` on a throwaway cluster of its own, stopped and started
again under it. SQLite: the app under a real uvicorn, its database file replaced by a directory.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from pathlib import Path

import httpx
import pytest
from api_helpers import ADMIN_TOKEN, serve_in_thread
from pg_helpers import Cluster

from atout_arena.core.metrics import MetricsRecorder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

REQUESTS = 40  # refused during the outage (the finding's: 73 in 14 s)
SCRAPES = 8


def _bot_name() -> str:
    return f"outage-{os.getpid()}-{time.monotonic_ns() % 10**9}"


def _counted(redis_client, bot: str) -> None:
    """Something Redis counts, as a worker would: two decisions of ``bot``."""
    MetricsRecorder(redis_client).decisions("merde", bot, [0.01, 0.02])


def _sample(body: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name{labels}`` in a Prometheus text ``body`` (None: absent)."""
    for line in body.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if "{" in line else {}
        if line.split("{")[0].split(" ")[0] == name and all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def _assert_refused(response: httpx.Response) -> None:
    """503, one line in the API's error shape, and when to try again."""
    assert response.status_code == 503, response.text
    body = response.json()
    assert set(body) == {"detail", "errors"} and body["errors"] == [], body
    assert body["detail"] and "\n" not in body["detail"] and len(body["detail"]) < 200, body
    assert "database" in body["detail"], body
    assert int(response.headers["Retry-After"]) > 0


def _assert_scrapes_during_outage(client: httpx.Client, bot: str, errors_before: float) -> float:
    """Every scrape answers 200 with Redis's counts; the ladders' metrics are left out, counted."""
    body = ""
    for _ in range(SCRAPES):
        scrape = client.get("/metrics")
        assert scrape.status_code == 200, scrape.text
        body = scrape.text
        assert _sample(body, "atout_decision_seconds_count", game="merde", bot=bot) == 2.0
        assert "atout_ladder_mu" not in body
    errors = _sample(body, "atout_collector_errors_total", collector="ladders")
    assert errors == errors_before + SCRAPES, body
    return errors


# ------------------------------------------------------------------ PostgreSQL, real processes


def test_a_postgresql_outage_is_a_503_and_metrics_keep_serving_redis(
    cluster: Cluster, processes, redis_url: str, redis_client, tmp_path: Path
) -> None:
    api = processes.start("api", [sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"], {
        "ATOUT_DATABASE_URL": cluster.url, "ATOUT_REDIS_URL": redis_url, "ATOUT_ADMIN_TOKEN": ADMIN_TOKEN,
        "ATOUT_DATA_DIR": str(tmp_path / "data")})
    url = api.wait_for_log(r"API listening on (http://127\.0\.0\.1:\d+)", timeout=60).group(1)
    bot = _bot_name()
    _counted(redis_client, bot)
    organizer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/v1/tournaments/1").status_code == 404  # the database answers
        assert client.post("/v1/ladders", headers=organizer, json={"name": "outage", "game": "merde"}
                           ).status_code == 201, "a ladder, for its metrics"
        assert "atout_ladder_mu" in client.get("/metrics").text

        cluster.stop()  # the outage
        started = time.monotonic()
        for _ in range(REQUESTS):
            _assert_refused(client.get("/v1/tournaments/1"))
        _assert_refused(client.post("/v1/bots", headers=organizer, json={"name": "during-the-outage"}))
        errors = _assert_scrapes_during_outage(client, bot, 0.0)
        assert client.get("/healthz").status_code == 503
        refusing_s = time.monotonic() - started

        cluster.start()  # back: the same API answers again, its metrics whole
        assert client.get("/v1/tournaments/1").status_code == 404
        back = client.get("/metrics").text
        assert "atout_ladder_mu" in back
        assert _sample(back, "atout_collector_errors_total", collector="ladders") == errors

        cluster.stop()  # a second outage: logged again, once
        _assert_scrapes_during_outage(client, bot, errors)
        _assert_refused(client.get("/v1/tournaments/1"))
        cluster.start()
        assert client.get("/v1/tournaments/1").status_code == 404
    log = api.log()
    print(f"{REQUESTS + 2} requests refused in {refusing_s:.1f} s; API log:\n{log}")
    assert "Traceback" not in log
    assert len(re.findall(r"metrics: the ladders collector failed", log)) == 2, log  # once per outage
    assert len(re.findall(r"metrics: the ladders collector works again", log)) == 1, log
    # one line for the first refusal, then at most one every OUTAGE_NOTE_EVERY_S (10 s: the
    # second outage, seconds after the first, is within it)
    refusals = re.findall(r"database unavailable", log)
    assert 1 <= len(refusals) <= 2 + refusing_s / 10, log
    assert " 503 " in log  # uvicorn's access log line of each, nothing more


# ------------------------------------------------------------------ SQLite, the app under uvicorn


def test_a_sqlite_database_gone_is_a_503_and_metrics_keep_serving_redis(
    redis_url: str, redis_client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from atout_arena.api import create_app
    from atout_arena.core.settings import Settings

    database = tmp_path / "atout.db"
    app = create_app(Settings(database_url=f"sqlite:///{database}", redis_url=redis_url, data_dir=tmp_path),
                     admin_token=ADMIN_TOKEN)
    url, server, thread = serve_in_thread(app)
    bot = _bot_name()
    _counted(redis_client, bot)
    caplog.set_level(logging.INFO, logger="atout_arena")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/v1/tournaments/1").status_code == 404
            # the outage: the file is replaced by a directory. Connections the pool holds keep
            # the old file open (SQLite reads through their descriptors): let them go, as a
            # process restarting, or the pool recycling them, would.
            moved = tmp_path / "away"
            moved.mkdir()
            for path in tmp_path.glob("atout.db*"):
                path.rename(moved / path.name)
            database.mkdir()
            app.state.arena.engine.dispose()
            for _ in range(REQUESTS):
                _assert_refused(client.get("/v1/tournaments/1"))
            errors = _assert_scrapes_during_outage(client, bot, 0.0)
            database.rmdir()
            for path in moved.iterdir():
                path.rename(tmp_path / path.name)
            assert client.get("/v1/tournaments/1").status_code == 404
            back = client.get("/metrics").text
            assert _sample(back, "atout_collector_errors_total", collector="ladders") == errors
    finally:
        server.should_exit = True
        thread.join(10)
        app.state.arena.close()
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("atout_arena")]
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    assert sum("metrics: the ladders collector failed" in line for line in lines) == 1, lines
    assert sum("metrics: the ladders collector works again" in line for line in lines) == 1, lines
    assert 1 <= sum("database unavailable" in line for line in lines) <= 3, lines
