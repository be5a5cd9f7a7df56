"""The supervisor of ``atout-arena up`` and ``demo --keep`` with a real embedded Redis: killed
with SIGKILL, it is reaped, started again at once on the same socket (its snapshot back) and
said in one line; killed again within a minute, it is started after the parts' backoff."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import redis

from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.demo.arena import Supervisor, redis_delay
from atout_arena.demo.processes import Parts


def state(pid: int) -> str | None:
    """The state of ``pid`` in /proc (``Z``: a zombie), None once it is reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def kill(server: EmbeddedRedis) -> int:
    pid = server.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while state(pid) != "Z":  # dead, not yet reaped: what the supervisor must notice
        assert time.monotonic() < deadline, state(pid)
        time.sleep(0.01)
    return pid


def supervise_until(supervisor: Supervisor, said: list[str], lines: int, now: float | None = None) -> None:
    """``supervisor.once()`` as ``up`` calls it (every 0.2 s there) until ``lines`` were said: a
    killed redis-server shows as a zombie before it can be reaped (its other threads still
    exiting), so the first look may find nothing to do yet."""
    deadline = time.monotonic() + 5
    while len(said) < lines:
        assert time.monotonic() < deadline, said
        supervisor.once(now)
        time.sleep(0.01)


def test_a_killed_embedded_redis_is_reaped_restarted_on_its_socket_and_said_once(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis", persist=True).start()
    said: list[str] = []
    supervisor = Supervisor(Parts(tmp_path, {}), said.append)
    supervisor.watch_redis(server)
    client = redis.Redis.from_url(server.url, socket_timeout=2)
    try:
        client.set("kept", "1")
        client.save()
        supervisor.once()
        assert said == []  # alive: nothing to do
        first = kill(server)
        supervise_until(supervisor, said, 1)
        assert state(first) is None  # reaped
        assert len(said) == 1 and said[0].startswith(
            f"the embedded Redis (pid {first}) exited with code -9; started again, pid {server.pid}, "
            f"on {server.url} (restart 1; log "), said
        assert client.ping() and client.get("kept") == b"1"

        # dying again at once: restarted after 1 s, said when it dies and when it is back
        second = kill(server)
        now = time.monotonic()
        supervise_until(supervisor, said, 2, now)
        assert state(second) is None and server.pid == second
        assert said[1] == (f"the embedded Redis (pid {second}) exited with code -9; restarting it in 1 s "
                           f"(restart 2; log {server.directory / 'redis.log'})")
        supervisor.once(now + 0.5)
        assert len(said) == 2 and not server.alive()
        supervisor.once(now + 1.0)
        assert len(said) == 3 and "started again" in said[2] and server.alive()
        assert client.ping()
    finally:
        client.close()
        server.stop()


def test_the_redis_backoff_starts_at_once_and_over_after_a_healthy_minute() -> None:
    assert redis_delay(0, 1.0) == (0.0, 1)
    assert redis_delay(1, 1.0) == (1.0, 2)
    assert redis_delay(2, 1.0) == (2.0, 3)
    assert redis_delay(9, 1.0) == (30.0, 10)
    assert redis_delay(5, 61.0) == (0.0, 1)
