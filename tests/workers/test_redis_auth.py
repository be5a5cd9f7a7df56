"""Redis with a password (issue 31): every part of the arena (game server, worker, beat, API,
and the Celery sender) works on a Redis that requires one, logged in as an ACL user; a wrong
password is one line and exit code 2 from each command, not a traceback or a retry loop."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import WORKER_BOTS, wait_until
from redis_parts import (
    CLI,
    ROOT,
    RedisNode,
    all_finished,
    api_reaches_redis,
    own_database,
    start_parts,
    tournament_costs,
)

from atout_arena.core.redis_conn import sync_client
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.services.tournaments import create_tournament, start_tournament

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
_ = own_database  # the fixture, imported

PASSWORD = "default-Secret-1"
USER, USER_PASSWORD = "arena", "arena-Secret-2"


@pytest.fixture
def protected(tmp_path: Path) -> Any:
    node = RedisNode(tmp_path / "redis", password=PASSWORD).start()
    client = node.client()
    client.execute_command("ACL", "SETUSER", USER, "on", f">{USER_PASSWORD}", "~*", "&*", "+@all")
    client.close()
    yield node
    node.stop()


def test_every_part_works_with_an_acl_user_on_a_password_protected_redis(
    tmp_path: Path, processes: Any, own_database: tuple[str, Any, Any], spawn_bot: Any, protected: RedisNode
) -> None:
    database_url, sessions, registry = own_database
    url = f"redis://{USER}:{USER_PASSWORD}@127.0.0.1:{protected.port}/0"
    parts = start_parts(processes, tmp_path, url, database_url, api=True)
    client = sync_client(url, socket_timeout=5)
    bots = []
    for i in range(3):
        info, token = registry.add(f"auth-{i}", owner="tests")
        spawn_bot(parts.address, token, f"{WORKER_BOTS}:Sleepy", ATOUT_TEST_THINK_S="0.01")
        bots.append(info)
    wait_until(lambda: all(is_connected(client, b.bot_id) for b in bots), 30, "the bots")
    assert parts.api_url is not None and api_reaches_redis(parts.api_url)
    tasks = Tasks.for_settings(Settings(redis_url=url))  # the Celery sender of the API, the CLI
    tid = create_tournament(sessions, name="auth", bots=[b.name for b in bots], game="regicide", players=3)
    tasks.play_matches(start_tournament(sessions, tid))
    tasks.close()
    wait_until(lambda: all_finished(sessions, tid), 90, "the tournament")
    parts.worker.wait_for_log(r"Task atout\.sweep\[\S+\] succeeded", timeout=30)  # beat -> worker
    costs = tournament_costs(sessions, tid)
    assert costs["with_result"] == costs["matches"] and costs["faults"] == costs["forfeits"] == 0, costs
    # the parts are logged in as the ACL user, not the default one
    clients = client.execute_command("CLIENT", "LIST")
    assert f"user={USER}" in (clients.decode() if isinstance(clients, bytes) else str(clients))
    client.close()
    for part in (parts.gateway, parts.worker, parts.beat):
        assert part.alive() and "WRONGPASS" not in part.log() and "NOAUTH" not in part.log()
        assert USER_PASSWORD not in part.log(), f"{part.name} printed the password"


@pytest.mark.parametrize("command", [["gateway", "--address", "127.0.0.1:0"], ["worker"], ["beat"],
                                     ["api", "--port", "0"], ["up"]])
def test_a_wrong_password_is_one_line_and_exit_2_in_each_command(
    tmp_path: Path, protected: RedisNode, command: list[str]
) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ATOUT_DATA_DIR": str(tmp_path / "data"),
           "ATOUT_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}",
           "ATOUT_REDIS_URL": f"redis://:not-the-Password@127.0.0.1:{protected.port}/0"}
    done = subprocess.run([*CLI, *command], env=env, cwd=ROOT, capture_output=True, text=True, timeout=90)
    lines = done.stderr.strip().splitlines()
    print(f"\natout-arena {command[0]}: exit {done.returncode}: {done.stderr.strip()}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: Redis refused the password (WRONGPASS"), done.stderr
    assert "not-the-Password" not in done.stdout + done.stderr
    assert f"redis://:***@127.0.0.1:{protected.port}/0" in lines[0]
