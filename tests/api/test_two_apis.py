"""Two real ``atout-arena api`` processes on one Redis and one database (issue 31, "stateless,
repeatable services"): the arena-wide series of /metrics are served by exactly one of them (the
holder of the metrics lease), a kill -9 of that one puts them on the other within seconds, a
clean stop hands them over at once, and either API answers the same to the same request.
"""

from __future__ import annotations

import re
import signal
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from api_helpers import ADMIN_TOKEN
from e2e_helpers import wait_until

from atout_arena.api.leadership import LEASE_TTL_MS, RENEW_S
from atout_arena.core.keys import METRICS_LEADER_KEY
from atout_arena.core.metrics import ALL_METRICS, METRICS_LEADER, MetricsRecorder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ORGANIZER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
TAKEOVER_S = LEASE_TTL_MS / 1000 + RENEW_S + 2  # the lease's expiry, the next try, a scrape's margin


def _start(processes, name: str, redis_url: str, database_url: str, tmp_path: Path):
    process = processes.start(name, [sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"], {
        "ATOUT_DATABASE_URL": database_url, "ATOUT_REDIS_URL": redis_url, "ATOUT_ADMIN_TOKEN": ADMIN_TOKEN,
        "ATOUT_DATA_DIR": str(tmp_path / name)})
    listening = process.wait_for_log(r"API listening on (http://127\.0\.0\.1:\d+)", timeout=60)
    process.info["url"] = listening.group(1)
    return process


def _scrape(url: str) -> str:
    response = httpx.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200, response.text
    return response.text


def _leader_value(body: str) -> float:
    found = re.search(rf"^{METRICS_LEADER.name} (\S+)$", body, re.M)
    assert found, body
    return float(found.group(1))


def _arena_wide(body: str) -> set[str]:
    """The arena-wide metrics a /metrics body declares (``# TYPE`` lines)."""
    names = {spec.name for spec in ALL_METRICS}
    declared = re.findall(r"^# TYPE (\S+) ", body, re.M)
    return {m for m in declared if m in names or m.startswith("atout_ladder_")}


def test_two_apis_serve_the_arena_wide_series_once_and_take_over(
    processes, redis_url: str, redis_client, database_url: str, tmp_path: Path
) -> None:
    redis_client.delete(METRICS_LEADER_KEY)  # a lease some earlier test's API was killed holding
    bot = f"two-apis-{uuid.uuid4().hex[:8]}"
    MetricsRecorder(redis_client).decisions("merde", bot, [0.01, 0.02, 0.03])
    first = _start(processes, "api-1", redis_url, database_url, tmp_path)
    second = _start(processes, "api-2", redis_url, database_url, tmp_path)
    apis = [first, second]

    # -- exactly one serves the arena-wide series; each serves its own
    bodies = [_scrape(api.info["url"]) for api in apis]
    assert sorted(_leader_value(b) for b in bodies) == [0.0, 1.0], bodies
    leader, standby = (first, second) if _leader_value(bodies[0]) == 1.0 else (second, first)
    lead_body, standby_body = bodies[apis.index(leader)], bodies[apis.index(standby)]
    assert _arena_wide(lead_body) >= {spec.name for spec in ALL_METRICS}
    assert _arena_wide(standby_body) == set(), standby_body
    samples = [line for body in bodies for line in body.splitlines()
               if line.startswith("atout_decision_seconds_count{") and f'bot="{bot}"' in line]
    assert samples == [f'atout_decision_seconds_count{{bot="{bot}",game="merde"}} 3.0'], samples
    for body in bodies:  # per process, on every API
        assert "# TYPE atout_collector_errors_total counter" in body
    assert "serves the arena-wide series" in standby.log()

    # -- the same answers through either
    created = httpx.post(f"{first.info['url']}/v1/bots", headers=ORGANIZER, timeout=30,
                         json={"name": bot, "owner": "tests"})
    assert created.status_code == 201, created.text
    bot_id, token = created.json()["id"], created.json()["token"]
    seen = [httpx.get(f"{api.info['url']}/v1/bots/{bot_id}", headers={"Authorization": f"Bearer {token}"},
                      timeout=30) for api in apis]
    assert [r.status_code for r in seen] == [200, 200], [r.text for r in seen]
    assert seen[0].json() == seen[1].json()
    listed = [httpx.get(f"{api.info['url']}/v1/bots", headers=ORGANIZER, timeout=30).json() for api in apis]
    assert listed[0] == listed[1]
    assert [httpx.get(f"{api.info['url']}/v1/games", timeout=30).json() for api in apis] == [
        httpx.get(f"{first.info['url']}/v1/games", timeout=30).json()] * 2

    # -- kill -9 the leader: the other serves the series within seconds
    leader.kill()
    killed = time.monotonic()

    def standby_serves() -> bool:
        body = _scrape(standby.info["url"])
        return _leader_value(body) == 1.0 and f'bot="{bot}"' in body

    wait_until(standby_serves, TAKEOVER_S + 5, "the standby API to serve the arena-wide series", poll_s=0.2)
    took_s = time.monotonic() - killed
    print(f"metrics served by the other API {took_s:.1f} s after kill -9 of the leader")
    assert took_s <= TAKEOVER_S, took_s
    assert "took the metrics lease over" in standby.log()

    # -- a clean stop gives the lease up: a third API serves the series at its next try, not a TTL later
    third = _start(processes, "api-3", redis_url, database_url, tmp_path)
    assert _leader_value(_scrape(third.info["url"])) == 0.0
    standby.stop(signal.SIGTERM)
    stopped = time.monotonic()
    wait_until(lambda: _leader_value(_scrape(third.info["url"])) == 1.0, LEASE_TTL_MS / 1000,
               "the third API to serve the series after a clean stop", poll_s=0.1)
    handed_s = time.monotonic() - stopped
    print(f"metrics served by the third API {handed_s:.1f} s after a clean stop of the leader")
    assert handed_s < LEASE_TTL_MS / 1000 - 1, handed_s
