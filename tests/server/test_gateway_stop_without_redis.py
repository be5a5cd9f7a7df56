"""A game server that loses its Redis, then is stopped (SIGTERM), says so in a line or two, with
no traceback (issue 30, finding 7): a real game server on a Redis of the test's own, real SDK
bots connected to it, Redis killed with -9."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest
from e2e_helpers import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

# one line per stream when it ends, promised by docs/deployment.md (its presence expires by itself)
PER_STREAM = "presence not released"


def _said(log: str) -> list[str]:
    """The game server's warnings and errors (the Redis outage's lines), except the one per stream."""
    return [line for line in log.splitlines()
            if re.search(r" (WARNING|ERROR|CRITICAL) ", line) and PER_STREAM not in line]


@pytest.mark.parametrize("outage_s", [0.3, 3.0])
def test_a_game_server_stopped_without_redis_says_it_in_one_line(
    tmp_path: Path, start_game_server, make_bot, spawn_bot, outage_s: float
) -> None:
    from atout_arena.core.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(tmp_path / "redis") as redis_server:
        import redis

        server = start_game_server("gs-no-redis", ATOUT_REDIS_URL=redis_server.url)
        bots = [make_bot("lonely") for _ in range(3)]
        for _, token in bots:
            spawn_bot(server.info["address"], token, "random")
        client = redis.Redis.from_url(redis_server.url, socket_timeout=5)
        try:
            wait_until(lambda: all(client.get(f"atout:bot:{info.bot_id}:conn") for info, _ in bots),
                       30, "three bots connected")
        finally:
            client.close()
        before = len(server.log())
        assert redis_server.process is not None
        redis_server.process.kill()
        redis_server.process.wait()
        time.sleep(outage_s)  # the bots try to come back meanwhile; the server retries its beat
        server.popen.send_signal(signal.SIGTERM)
        assert server.popen.wait(20) == 0

    log = server.log()[before:]
    assert "Traceback" not in log and "CancelledError" not in log, log
    said = _said(log)
    # one line when Redis is found gone (whichever loop finds it), one as the server stops
    assert 1 <= len(said) <= 2, "\n".join(said)
    assert any(re.search(r"stop", line) for line in said), "\n".join(said)
    assert len([line for line in log.splitlines() if PER_STREAM in line]) <= len(bots), log
