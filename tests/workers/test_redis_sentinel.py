"""Redis that fails over (issue 31): a primary, a replica and three sentinels
(deploy/redis_ha.py, every node with a password), the arena on ``redis+sentinel://``. Killing
the primary with SIGKILL promotes the replica; every kind of client follows it, and a tournament
played by a real worker, game server and SDK bots finishes with one result per match and no
fault charged to a bot. The figures are printed (``-s`` shows them)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from e2e_helpers import WORKER_BOTS, wait_until
from redis_parts import RedisHA, all_finished, own_database, start_parts, tournament_costs

from atout_arena.core.redis_conn import async_client, sync_client
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks, make_celery
from atout_arena.core.wire import Wire
from atout_arena.services.tournaments import create_tournament, start_tournament

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
_ = own_database  # the fixture, imported
PASSWORD = "sentinel-Secret-3"


@pytest.fixture
def ha(tmp_path: Path) -> Iterator[RedisHA]:
    with RedisHA(tmp_path / "ha", password=PASSWORD) as topology:
        yield topology


def until_ok(call: Callable[[], Any], timeout_s: float = 30.0) -> tuple[Any, float]:
    """``call()``'s value once it stops raising a Redis error, and how long that took."""
    started = time.monotonic()
    while True:
        try:
            return call(), time.monotonic() - started
        except (redis.RedisError, OSError):
            if time.monotonic() - started > timeout_s:
                raise
            time.sleep(0.1)


def test_every_kind_of_client_follows_the_primary_killed_with_sigkill(ha: RedisHA) -> None:
    url = ha.url
    sync = sync_client(url, socket_timeout=2, socket_connect_timeout=2)
    celery = make_celery(Settings(redis_url=url))
    loop = asyncio.new_event_loop()
    wire = Wire(url, 3.0)
    aclient = async_client(url, socket_timeout=2, socket_connect_timeout=2)

    async def through_wire() -> Any:
        await wire.call("SET", "k:wire", "1")
        return await wire.call("ROLE")

    async def through_async() -> Any:
        await aclient.set("k:async", "1")
        return await aclient.execute_command("ROLE")

    def through_celery() -> int:
        with celery.connection_for_write() as connection:
            connection.default_channel.client.lpush("k:celery", "1")  # type: ignore[attr-defined]
            return int(connection.default_channel.client.llen("k:celery"))  # type: ignore[attr-defined]

    assert sync.set("k:sync", "1") and sync.execute_command("ROLE")[0] == b"master"
    assert loop.run_until_complete(through_wire())[0] == b"master"
    assert loop.run_until_complete(through_async())[0] == b"master"
    assert through_celery() >= 1
    celery.backend.set("k:backend", b"1")  # type: ignore[attr-defined]
    old = ha.kill_primary()
    promote_s = ha.wait_for_failover(old)
    new = ha.primary()
    assert new is not old and new.role() == "master"
    _, sync_s = until_ok(lambda: sync.set("k:sync", "2"))
    role, wire_s = until_ok(lambda: loop.run_until_complete(through_wire()))
    assert role[0] == b"master"
    role, async_s = until_ok(lambda: loop.run_until_complete(through_async()))
    assert role[0] == b"master"
    _, celery_s = until_ok(through_celery)
    _, backend_s = until_ok(lambda: celery.backend.set("k:backend", b"2"))  # type: ignore[attr-defined]
    assert new.client().get("k:wire") == b"1" and new.client().get("k:backend") == b"2"
    print(f"\nSentinel failover (SIGKILL): promoted in {promote_s:.1f} s; then redis-py {sync_s:.1f} s, "
          f"Wire {wire_s:.1f} s, asyncio {async_s:.1f} s, kombu {celery_s:.1f} s, result backend "
          f"{backend_s:.1f} s to write to the new primary")
    # the old primary back: the sentinels make it a replica, and a Wire asked again never uses it
    old.start()
    wait_until(lambda: old.role() == "slave", 60, "the old primary to be made a replica")
    assert loop.run_until_complete(through_wire())[0] == b"master"
    loop.run_until_complete(wire.close())
    loop.run_until_complete(aclient.aclose())
    loop.close()
    sync.close()
    celery.close()


def test_a_tournament_finishes_after_the_primary_is_killed_mid_way_and_charges_no_bot(
    tmp_path: Path, processes: Any, own_database: tuple[str, Any, Any], spawn_bot: Any, ha: RedisHA
) -> None:
    database_url, sessions, registry = own_database
    url = ha.url
    parts = start_parts(processes, tmp_path, url, database_url, ATOUT_OUTAGE_LIMIT_S="20",
                        ATOUT_RECONNECT_GRACE_S="30")
    client = sync_client(url, socket_timeout=5, socket_connect_timeout=5)
    bots = []
    for i in range(3):
        info, token = registry.add(f"failover-{i}", owner="tests")
        spawn_bot(parts.address, token, f"{WORKER_BOTS}:Sleepy", ATOUT_TEST_THINK_S="0.01")
        bots.append(info)
    wait_until(lambda: all(is_connected(client, b.bot_id) for b in bots), 30, "the bots")
    tasks = Tasks.for_settings(Settings(redis_url=url))
    tid = create_tournament(sessions, name="failover", bots=[b.name for b in bots], game="regicide",
                            players=3, games_per_pairing=12)
    tasks.play_matches(start_tournament(sessions, tid))
    tasks.close()
    wait_until(lambda: tournament_costs(sessions, tid)["finished"] >= 2, 60, "a few matches played")
    old = ha.kill_primary()
    killed = time.monotonic()
    promote_s = ha.wait_for_failover(old)
    wait_until(lambda: all_finished(sessions, tid), 240, "the tournament after the failover")
    finish_s = time.monotonic() - killed
    costs = tournament_costs(sessions, tid)
    print(f"\nSentinel failover mid-tournament (primary SIGKILLed): promoted in {promote_s:.1f} s, the "
          f"tournament finished {finish_s:.1f} s after the kill; {costs['matches']} matches, "
          f"{costs['with_result']} with a result, {costs['replayed']} played more than once, "
          f"{costs['faults']} faults and {costs['forfeits']} forfeits charged to bots")
    client.close()
    assert costs["with_result"] == costs["finished"] == costs["matches"], costs
    assert costs["rated_twice"] == 0 and costs["faults"] == 0 and costs["forfeits"] == 0, costs
    for part in (parts.gateway, parts.worker, parts.beat):
        assert part.alive(), part.log()[-3000:]
        assert PASSWORD not in part.log()
