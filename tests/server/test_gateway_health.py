"""The game server's HTTP health check (ATOUT_HEALTH_PORT) and its rebalancing arithmetic.

The check is answered by the game server's event loop: 200 while it serves, 503 while it drains,
nothing while it is stopped (SIGSTOP), where gRPC's health service kept answering SERVING.
HAProxy's use of it is tested in tests/deploy/test_haproxy_hangs.py."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import urllib.error
import urllib.request

import pytest

from atout_arena.gateway.server import HealthEndpoint, excess_streams


def _get(port: int, path: str = "/healthz", timeout: float = 2.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_endpoint_says_serving_then_draining() -> None:
    async def scenario() -> list[tuple[int, str]]:
        endpoint = HealthEndpoint("127.0.0.1", 0)
        port = await endpoint.start()
        try:
            seen = [await asyncio.to_thread(_get, port)]
            seen.append(await asyncio.to_thread(_get, port, "/other"))
            # a client that sends nothing, or garbage, costs nothing and breaks nothing
            with socket.create_connection(("127.0.0.1", port)) as idle:
                idle.sendall(b"\x00\xffnot http")
                endpoint.draining = True
                seen.append(await asyncio.to_thread(_get, port))
            return seen
        finally:
            await endpoint.close()

    assert asyncio.run(scenario()) == [(200, "serving\n"), (404, "GET /healthz only\n"),
                                       (503, "draining\n")]


@pytest.mark.parametrize(("mine", "others", "excess"), [
    (8, [0], 3),  # 8 bots, 2 servers: fair 4, +1 tolerated: 3 go
    (5, [3], 0),
    (8, [], 0),  # alone: nothing to hand over
    (100, [0, 0, 0], 74),  # fair 25 (+1)
    (26, [25, 25, 24], 0),
    (30, [30, 0], 9),  # fair 20 (+1): both full servers shed 9
])
def test_excess_streams(mine: int, others: list[int], excess: int) -> None:
    counts = {"me": mine, **{f"other-{i}": n for i, n in enumerate(others)}}
    assert excess_streams(mine, counts) == excess


@pytest.mark.slow
def test_a_stopped_game_server_answers_no_health_check(start_game_server) -> None:
    server = start_game_server("gs-health", ATOUT_HEALTH_PORT="0")
    port = int(server.wait_for_log(r"health check on http://127\.0\.0\.1:(\d+)/healthz").group(1))
    assert _get(port) == (200, "serving\n")
    server.popen.send_signal(signal.SIGSTOP)
    try:
        with pytest.raises(OSError):  # TimeoutError: the kernel accepts, the loop never answers
            _get(port, timeout=1.0)
    finally:
        server.popen.send_signal(signal.SIGCONT)
    assert _get(port) == (200, "serving\n")
    server.popen.send_signal(signal.SIGTERM)
    assert server.popen.wait(15) == 0
    assert re.search(r"stopping: \d+ bot streams open", server.log())


def test_the_health_port_is_an_option_of_the_command_too(processes, redis_url, database_url) -> None:
    import sys

    from atout_arena.core.embedded_redis import free_tcp_port

    env = {"ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": database_url, "ATOUT_SERVER_ID": "gs-hp"}
    cli = [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"]
    bad = processes.start("gateway-bad-health", [*cli, "--health-port", "70000"], env)
    assert bad.popen.wait(30) == 2
    assert "--health-port 70000: a port is a number from 0" in bad.log()
    port = free_tcp_port()
    server = processes.start("gateway-health-option", [*cli, "--health-port", str(port)], env)
    server.wait_for_log(rf"health check on http://127\.0\.0\.1:{port}/healthz")
    assert _get(port) == (200, "serving\n")
