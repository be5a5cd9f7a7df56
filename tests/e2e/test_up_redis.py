"""``atout-arena up`` supervises its embedded Redis like every other part (issue 30, finding 8:
a kill -9 of it left a zombie, nothing said, an arena without Redis). The real command on free
ports; its redis-server killed with SIGKILL is reaped, said in one line, started again on the
same socket with its snapshot, and the parts reconnect by themselves: /healthz answers 200
again and a bot registered and connected after the restart is seen connected."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from test_up import Up, arena_cli

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def healthz(api_port: int) -> int:
    try:
        with _NO_PROXY.open(f"http://127.0.0.1:{api_port}/healthz", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def zombie_or_running(pid: int) -> str | None:
    """The state of process ``pid`` (``Z`` for a zombie), or None once it is gone (reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def wait_for(what: str, predicate: Callable[[], Any], timeout: float, poll_s: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(poll_s)


def test_up_restarts_its_embedded_redis_killed_with_sigkill(tmp_path: Path) -> None:
    up = Up(tmp_path)
    bot = None
    try:
        up.wait_for("running; Ctrl-C (or SIGTERM) stops everything")
        url = re.search(r"embedded redis-server, (unix://\S+) \(owned by atout-arena up\)", up.output)
        assert url, up.output
        client = redis.Redis.from_url(url.group(1), socket_timeout=2, socket_connect_timeout=2)
        client.set("atout:test:kept", "yes")
        client.save()  # in its snapshot: it must come back with the restarted server
        victim = up.child("redis-server")
        assert healthz(up.api_port) == 200

        killed = time.monotonic()
        os.kill(victim.pid, signal.SIGKILL)
        line = f"the embedded Redis (pid {victim.pid}) exited with code -9; started again, pid "
        up.wait_for(line, timeout=10)
        said_s = time.monotonic() - killed

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_for("PING on the same socket", answers, 10)
        back_s = time.monotonic() - killed
        assert client.get("atout:test:kept") == b"yes"  # the same data dir: its snapshot is back
        assert zombie_or_running(victim.pid) is None, "the killed redis-server is left a zombie"
        # (the test's watch of up's children samples them now and then: wait for it to see it)
        wait_for("the restarted redis-server among up's children", lambda: any(
            "redis-server" in p.cmdline and p.alive() and p.pid != victim.pid for p in up.children()), 10)
        restarted = next(p for p in up.children()
                         if "redis-server" in p.cmdline and p.alive() and p.pid != victim.pid)
        assert restarted.pid != victim.pid
        assert f"pid {restarted.pid}, on {url.group(1)} (restart 1; log " in up.output
        assert up.output.count("the embedded Redis (pid") == 1  # one line

        # The parts reconnect by themselves: the API is healthy again, a bot connects and is
        # seen connected (game server -> Redis -> API), and no part was restarted for it.
        wait_for("/healthz 200 after the restart", lambda: healthz(up.api_port) == 200, 60, 0.5)
        added = arena_cli("bots", "add", "after-redis", env=up.env, cwd=tmp_path)
        assert added.returncode == 0, added.stderr
        bot = subprocess.Popen(
            [sys.executable, "-m", "atout.cli", "run", "random", "--server", f"127.0.0.1:{up.grpc_port}"],
            env={**up.env, "ATOUT_TOKEN": added.stdout.strip()}, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=tmp_path)

        def connected() -> bool:
            listed = arena_cli("bots", "list", "--json", env=up.env, cwd=tmp_path)
            return listed.returncode == 0 and any(
                b["name"] == "after-redis" and b["connected"] for b in json.loads(listed.stdout))

        wait_for("the bot connected after the restart", connected, 60, 0.5)
        assert "exited with code" not in up.output.replace(line, ""), up.output  # no part died of it
        print(f"\nRedis killed: said after {said_s:.1f} s, PING answered after {back_s:.1f} s")
    finally:
        if bot is not None:
            bot.terminate()
            bot.wait(30)
        code = up.stop(signal.SIGTERM) if up.process.poll() is None else up.process.returncode
        for p in up.children():  # never left behind by a failed test
            if p.alive():
                os.kill(p.pid, signal.SIGKILL)
    assert code == 0, up.output
    assert [p.cmdline for p in up.children() if p.alive()] == []
