"""Logs that do not cry wolf: a game server stopped after its Redis went away says so in a
line per stream, without a traceback per bot (the real gateway, its own embedded Redis, two
SDK bots in other processes); a worker run as root says so in one line of its own, not with
Celery's SecurityWarning. (A finished match reported as a lost lease: tests/workers/test_store.py.)"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from gateway_helpers import wait_until

pytestmark = pytest.mark.timeout(120)


def test_a_game_server_stopped_without_redis_logs_no_tracebacks(
    processes: Any, database_url: str, make_bot: Any, spawn_bot: Any, tmp_path: Path
) -> None:
    from atout_arena.core.embedded_redis import EmbeddedRedis
    from atout_arena.core.relay import is_connected

    own = EmbeddedRedis(tmp_path / "redis").start()
    try:
        gateway = processes.start(
            "gateway-no-redis",
            [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"],
            {"ATOUT_REDIS_URL": own.url, "ATOUT_DATABASE_URL": database_url, "ATOUT_SERVER_ID": "gs-quiet",
             "ATOUT_KEEPALIVE_MS": "1000", "ATOUT_SHUTDOWN_GRACE_S": "2"},
        )
        port = gateway.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)").group(1)
        client = redis.Redis.from_url(own.url, socket_timeout=5)
        bots = [make_bot("quiet") for _ in range(2)]
        for _, token in bots:
            spawn_bot(f"127.0.0.1:{port}", token, "FirstLegal")
        for info, _ in bots:
            wait_until(lambda b=info.bot_id: is_connected(client, str(b)), 30, "the bots to connect")
        client.close()
    finally:
        own.stop()  # Redis is gone while the game server and its streams live on
    time.sleep(2.5)  # the streams' heartbeats and reads meet the missing Redis
    gateway.stop()
    log = gateway.log()
    assert gateway.popen.returncode is not None and "listening on" in log
    assert "Traceback" not in log, log[-6000:]


def test_a_worker_run_as_root_gives_one_line_not_celerys_security_warning(start_worker: Any) -> None:
    import os

    worker = start_worker("quiet", concurrency=1)
    worker.stop()
    log = worker.log()
    assert "ready" in log and "SecurityWarning" not in log and "absolutely not recommended" not in log, log
    root_lines = [line for line in log.splitlines() if "running as root" in line]
    assert len(root_lines) == (1 if os.geteuid() == 0 else 0), log


def test_the_root_note_is_only_for_json_workers() -> None:
    import os

    from atout_workers.cli import root_note

    assert root_note(["json", "pickle"]) is None  # Celery refuses such a worker as root: its message stands
    note = root_note(["json"])
    assert (note is not None) == (os.geteuid() == 0)
