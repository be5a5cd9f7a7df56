"""The Redis contract's version, checked where the arena's processes meet: a game server, a
worker or the API refuses to start, in one line, while a part of another version is live on
its Redis; parts of one version share it, register while they run and leave when they stop.
A Redis of these tests' own (a part registered here must never refuse another test's server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.keys import CONTRACT_KEY, CONTRACT_VERSION
from atout_arena.core.relay import ContractMismatch, check_contract, contract_command, now_ms

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, redis.Redis]]:
    server = EmbeddedRedis(tmp_path / "redis").start()
    client = redis.Redis.from_url(server.url, socket_timeout=10)
    try:
        yield server.url, client
    finally:
        client.close()
        server.stop()


def test_parts_of_one_version_share_a_redis_and_another_version_is_refused(own_redis) -> None:
    _, client = own_redis
    check_contract(client, "game server gs-1")
    check_contract(client, "worker host:1")  # the same version: welcome
    assert set(client.hgetall(CONTRACT_KEY)) == {b"game server gs-1", b"worker host:1"}
    with pytest.raises(ContractMismatch) as refused:
        check_contract(client, "worker host:2", version=CONTRACT_VERSION + 1)
    message = str(refused.value)
    assert "\n" not in message
    assert f"worker host:2 speaks version {CONTRACT_VERSION + 1} of the arena's Redis contract" in message
    assert f"(version {CONTRACT_VERSION}) is live on this Redis" in message
    assert "docs/deployment.md" in message
    assert b"worker host:2" not in client.hgetall(CONTRACT_KEY)  # refused: not registered
    # only looking (ttl 0) registers nothing
    check_contract(client, "API host:3", ttl_ms=0)
    assert b"API host:3" not in client.hgetall(CONTRACT_KEY)
    with pytest.raises(ContractMismatch):
        check_contract(client, "API host:3", ttl_ms=0, version=CONTRACT_VERSION + 1)


def test_a_part_gone_silent_stops_counting_and_a_new_version_may_start(own_redis) -> None:
    _, client = own_redis
    client.execute_command(*contract_command("game server old", ttl_ms=200, version=CONTRACT_VERSION - 1))
    with pytest.raises(ContractMismatch, match=r"game server old \(version "):
        check_contract(client, "game server new")
    time.sleep(0.3)  # its entry expires: it stopped renewing it (killed, or stopped)
    check_contract(client, "game server new")
    assert set(client.hgetall(CONTRACT_KEY)) == {b"game server new"}  # the expired entry is gone
    entry = client.hget(CONTRACT_KEY, "game server new").decode()
    version, expiry = entry.split()
    assert version == str(CONTRACT_VERSION) and int(expiry) > now_ms()


def _run(command: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def _env(redis_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ATOUT_")}
    return {**clean, "ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": f"sqlite:///{tmp_path / 'atout.db'}",
            "ATOUT_DATA_DIR": str(tmp_path / "data"), "ATOUT_SERVER_ID": "gs-contract", **extra}


def _one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, (run.stdout, run.stderr)
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in run.stderr, run.stderr
    return errors[0]


def test_a_game_server_a_worker_and_the_api_of_another_version_refuse_to_start(
    own_redis, tmp_path: Path
) -> None:
    url, client = own_redis
    other = CONTRACT_VERSION + 1  # a newer part is live (an upgrade under way elsewhere)
    client.execute_command(*contract_command("worker newer:7", ttl_ms=120_000, version=other))
    env = _env(url, tmp_path)
    expected = f"speaks version {CONTRACT_VERSION} of the arena's Redis contract, but worker newer:7 " \
               f"(version {other}) is live on this Redis"
    gateway = _run([sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"], env)
    line = _one_error_line(gateway)
    assert line.startswith("error: game server gs-contract ") and expected in line
    assert "listening" not in gateway.stdout
    worker = _run([sys.executable, "-m", "atout_workers", "worker", "--concurrency", "1"], env)
    line = _one_error_line(worker)
    assert line.startswith("error: worker ") and expected in line
    api = _run([sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"], env)
    line = _one_error_line(api)
    assert line.startswith("error: API ") and expected in line
    assert "API listening" not in api.stdout
    assert set(client.hgetall(CONTRACT_KEY)) == {b"worker newer:7"}  # none of them registered


def test_a_game_server_registers_while_it_runs_and_leaves_when_it_stops(own_redis, tmp_path: Path) -> None:
    url, client = own_redis
    env = _env(url, tmp_path)
    command = [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if "listening on" in line:
                break
        assert client.hget(CONTRACT_KEY, "game server gs-contract") is not None
        # a part of another version cannot join meanwhile
        with pytest.raises(ContractMismatch, match="game server gs-contract"):
            check_contract(client, "worker older:1", version=CONTRACT_VERSION - 1)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    assert client.hget(CONTRACT_KEY, "game server gs-contract") is None
    check_contract(client, "worker older:1", version=CONTRACT_VERSION - 1)  # now it may
