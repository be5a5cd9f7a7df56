"""Load balancing that sees hangs, and rebalancing, on real processes: HAProxy 2.6 with the
project's deploy/haproxy/haproxy.cfg (made loopback), real game servers (``atout-arena gateway``)
on a Redis of the test's own, raw gRPC clients and real SDK bots (``atout-bot run``).

- A game server stopped with SIGSTOP (hung: its kernel still completes handshakes) is marked
  DOWN by HAProxy within 3 s, and new streams through HAProxy land on the other one: its check
  goes through the game server's event loop (``GET /healthz`` on ATOUT_HEALTH_PORT).
- An SDK bot whose game server hangs logs one line and is back on the other one within about
  6 s, with the arena's default keep-alive (10 s).
- A game server that joins gets a fair share of the bots within a minute: the other hands its
  excess over (Error ``moved`` between decisions).
"""

from __future__ import annotations

import csv
import io
import shutil
import signal
import socket
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from e2e_helpers import wait_until
from gateway_helpers import RawBot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))  # deploy/ is not a package: the rehearsal's config conversion

import rehearsal as rh  # noqa: E402

HAPROXY_CFG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
COMPOSE = ROOT / "docker-compose.yml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Balancer:
    """A real HAProxy in front of game servers named in advance (one may start later)."""

    def __init__(self, processes, tmp_path: Path, servers: dict[str, tuple[int, int]]) -> None:
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not Path(haproxy).exists():
            pytest.fail("haproxy is not installed: ./install.sh (apt-get install -y haproxy)", pytrace=False)
        self.bots_port, self.monitor_port = free_port(), free_port()
        config = tmp_path / "haproxy.cfg"
        hosts = {name: ("127.0.0.1", grpc, health) for name, (grpc, health) in servers.items()}
        text = rh.haproxy_config(HAPROXY_CFG.read_text(), "127.0.0.1", self.bots_port, self.monitor_port,
                                 hosts)
        assert " check port " in text, "haproxy.cfg: a server-template checking a port"
        config.write_text(text)
        self.process = processes.start("haproxy", [haproxy, "-f", str(config), "-db"], {})
        wait_until(lambda: self._answers(), 20, "HAProxy's monitoring port")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.bots_port}"

    def _answers(self) -> bool:
        try:
            self.statuses()
            return True
        except OSError:
            return False

    def statuses(self) -> dict[str, str]:
        """Each game server's status in HAProxy's stats (``UP``, ``DOWN``, ``UP 1/2``...)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/stats;csv", timeout=2) as resp:
            text = resp.read().decode()
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {r["svname"]: r["status"] for r in rows if r["pxname"] == "gameservers"
                and r["svname"] not in ("FRONTEND", "BACKEND")}


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[str]:
    """A Redis of the test's own: the live game servers of other tests (the session's Redis)
    must not count in the fair shares."""
    from atout_arena.core.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(tmp_path / "redis") as server:
        yield server.url


@pytest.fixture
def servers(start_game_server, own_redis: str) -> Callable[..., object]:
    """``servers(name, grpc_port, health_port, **env)``: a game server on the test's Redis."""

    def start(name: str, grpc_port: int, health_port: int, **env: str):
        return start_game_server(name, f"127.0.0.1:{grpc_port}", ATOUT_REDIS_URL=own_redis,
                                 ATOUT_HEALTH_PORT=str(health_port), **env)

    return start


def holders(redis_url: str, bot_ids: list[str]) -> dict[str, str]:
    """bot id -> the game server holding its stream (its presence's connection id)."""
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        out = {}
        for bot_id in bot_ids:
            conn = client.get(f"atout:bot:{bot_id}:conn")
            if conn is not None:
                text = conn.decode() if isinstance(conn, bytes) else str(conn)
                out[bot_id] = text.rsplit("/", 1)[0]
        return out
    finally:
        client.close()


def test_compose_checks_each_game_server_on_its_health_port() -> None:
    """The port HAProxy checks is the one the game servers' ATOUT_HEALTH_PORT opens."""
    compose = yaml.safe_load(COMPOSE.read_text())
    gameserver = compose["services"]["gameserver"]
    port = str(gameserver["environment"]["ATOUT_HEALTH_PORT"])
    assert port in [str(p) for p in gameserver["expose"]]
    config = HAPROXY_CFG.read_text()
    template = next(line for line in config.splitlines() if line.strip().startswith("server-template "))
    assert f" check port {port} " in template
    assert "option httpchk GET /healthz" in config


def test_a_hung_game_server_leaves_the_pool_within_3_s(
    processes, tmp_path: Path, servers, make_bot
) -> None:
    ports = {name: (free_port(), free_port()) for name in ("gs-a", "gs-b")}
    for name, (grpc_port, health_port) in ports.items():
        servers(name, grpc_port, health_port)
    lb = Balancer(processes, tmp_path, ports)
    wait_until(lambda: set(lb.statuses().values()) == {"UP"}, 20, "both game servers UP")
    victim = next(p for p in processes.started if p.info.get("server_id") == "gs-a")

    victim.popen.send_signal(signal.SIGSTOP)
    try:
        began = time.monotonic()
        wait_until(lambda: lb.statuses()["gs-a"].startswith("DOWN"), 10, "gs-a DOWN", poll_s=0.05)
        took = time.monotonic() - began
        print(f"\nSIGSTOPped game server marked DOWN by HAProxy after {took:.2f} s")
        assert took < 3.0, took
        for _ in range(4):  # with the hung one in the pool, least connections would pick it
            _, token = make_bot("lb")
            bot = RawBot(lb.address, token)
            try:
                assert bot.connect().server_id == "gs-b"
            finally:
                bot.close()
    finally:
        victim.popen.send_signal(signal.SIGCONT)
    # back: two good checks and it is in the pool again
    wait_until(lambda: lb.statuses()["gs-a"] == "UP", 10, "gs-a UP again")


def test_an_sdk_bot_on_a_hung_server_is_back_on_the_other_within_6_s(
    processes, tmp_path: Path, servers, make_bot, spawn_bot, own_redis: str
) -> None:
    """The arena's default keep-alive (10 s): the SDK does not wait for it (it used to give a
    silent stream up after 31 s, past the 15 s reconnect grace)."""
    ports = {name: (free_port(), free_port()) for name in ("gs-a", "gs-b")}
    for name, (grpc_port, health_port) in ports.items():
        servers(name, grpc_port, health_port, ATOUT_KEEPALIVE_MS="10000")
    lb = Balancer(processes, tmp_path, ports)
    wait_until(lambda: set(lb.statuses().values()) == {"UP"}, 20, "both game servers UP")
    info, token = make_bot("hung")
    bot = spawn_bot(lb.address, token, "random")
    first = wait_until(lambda: holders(own_redis, [info.bot_id]).get(info.bot_id), 30, "the bot connected")
    other = "gs-b" if first == "gs-a" else "gs-a"
    victim = next(p for p in processes.started if p.info.get("server_id") == first)

    victim.popen.send_signal(signal.SIGSTOP)
    try:
        began = time.monotonic()
        wait_until(lambda: holders(own_redis, [info.bot_id]).get(info.bot_id) == other, 15,
                   f"the bot on {other}", poll_s=0.05)
        took = time.monotonic() - began
        print(f"\nSDK bot on a SIGSTOPped game server back on the other one after {took:.2f} s")
        assert took < 6.5, took
        said = [line for line in bot.log().splitlines() if "silent" in line]
        assert len(said) == 1 and f"game server {first}" in said[0], bot.log()
    finally:
        victim.popen.send_signal(signal.SIGCONT)


@pytest.mark.timeout(300)
def test_a_game_server_that_joins_gets_its_share_within_a_minute(
    processes, tmp_path: Path, servers, make_bot, spawn_bot, own_redis: str
) -> None:
    """Eight bots on gs-a, then gs-b starts: within a minute each holds at least a third. (Before,
    every bot stayed where it was: a restarted or added server held none.)"""
    ports = {name: (free_port(), free_port()) for name in ("gs-a", "gs-b")}
    servers("gs-a", *ports["gs-a"])
    lb = Balancer(processes, tmp_path, ports)  # gs-b is DOWN until it starts
    wait_until(lambda: lb.statuses()["gs-a"] == "UP", 20, "gs-a UP")
    bots = [make_bot("spread") for _ in range(8)]
    for _, token in bots:
        spawn_bot(lb.address, token, "random")
    ids = [info.bot_id for info, _ in bots]
    wait_until(lambda: list(holders(own_redis, ids).values()) == ["gs-a"] * 8, 60, "8 bots on gs-a")

    servers("gs-b", *ports["gs-b"])
    began = time.monotonic()

    def spread() -> bool:
        held = list(holders(own_redis, ids).values())
        return len(held) == 8 and all(held.count(name) >= 3 for name in ports)

    wait_until(spread, 60, "each game server holding a third of the bots", poll_s=0.2)
    took = time.monotonic() - began
    print(f"\nrebalanced after {took:.1f} s: {sorted(holders(own_redis, ids).values())}")
    gs_a = next(p for p in processes.started if p.info.get("server_id") == "gs-a")
    assert "rebalancing:" in gs_a.log()
    time.sleep(12)  # and it stays so: no bot moved back and forth
    held = list(holders(own_redis, ids).values())
    assert len(held) == 8 and all(held.count(name) >= 3 for name in ports), held
