"""A Redis outage is one line per part when it begins and one when Redis is back, not a
traceback per retry (issue 30, finding 8: a worker logged 144-150 tracebacks per 5 s restart,
beat 44). Real processes: a worker and beat (and, for matches in flight, a game server and SDK
bots) on a Redis of their own, killed with SIGKILL for 5 s and started again on the same port
and data dir; each part's log over the outage is read back."""

from __future__ import annotations

import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from e2e_helpers import FAST, WORKER_BOTS, wait_until
from redis_parts import own_database

from atout_arena.core.embedded_redis import EmbeddedRedis, free_tcp_port
from atout_arena.core.keys import WORKERS_KEY
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.services.tournaments import create_tournament, start_tournament

_ = own_database  # the fixture, imported

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

OUTAGE_S = 5.0
MAX_LOUD = 3  # lines of warning level or above, per part and outage
RECORD = re.compile(r"^\[[^]]*: (?P<level>[A-Z]+)/")  # how Celery's worker and beat start a record


def kill_and_restart(server: EmbeddedRedis, down_s: float = OUTAGE_S) -> None:
    """SIGKILL the Redis, wait ``down_s``, start it again: same port, socket and data dir."""
    assert server.process is not None
    server.process.kill()
    server.process.wait(10)
    server.process = None
    time.sleep(down_s)
    server.start()


def loud_lines(text: str) -> list[str]:
    """The lines of a Celery part's log that are not routine: records of warning level or above,
    and lines that are no record at all (a traceback, a Python warning, a record's next lines)."""
    loud = []
    for line in text.splitlines():
        record = RECORD.match(line)
        if line.strip() and (record is None or record["level"] not in ("DEBUG", "INFO")):
            loud.append(line)
    return loud


def assert_said_once(name: str, text: str) -> None:
    loud = loud_lines(text)
    print(f"\n{name}: {len(loud)} loud lines over the outage" + "".join(f"\n    {line}" for line in loud))
    assert "Traceback" not in text, f"{name}:\n" + "\n".join(loud[:80])
    assert len(re.findall(r"Redis unreachable \(.*\); retrying quietly until it is back", text)) == 1, text
    assert len(re.findall(r"Redis is back after \d+\.\d s", text)) == 1, text
    assert len(loud) <= MAX_LOUD, f"{name}: {len(loud)} lines of warning level or more:\n" + "\n".join(loud)


def start_parts(processes: Any, tmp_path: Path, url: str, database_url: str) -> tuple[Any, Any]:
    env = {"ATOUT_REDIS_URL": url, "ATOUT_DATABASE_URL": database_url, **FAST}
    worker = processes.start("worker", [sys.executable, "-m", "atout_arena.cli", "worker", "--concurrency",
                                        "16", "--hostname", "outage@%h", "--loglevel", "info"], env)
    beat = processes.start("beat", [sys.executable, "-m", "atout_arena.cli", "beat", "--loglevel", "info"],
                           {**env, "ATOUT_DATA_DIR": str(tmp_path / "beat")})
    worker.wait_for_log(r"\bready\b", timeout=60)
    beat.wait_for_log(r"beat: Starting", timeout=60)
    return worker, beat


def test_a_redis_outage_is_two_lines_in_a_worker_and_in_beat_and_both_work_after(
    tmp_path: Path, processes: Any, own_database: tuple[str, Any, Any]
) -> None:
    database_url = own_database[0]
    own = EmbeddedRedis(tmp_path / "redis", tcp_port=free_tcp_port(), persist=True).start()
    try:
        assert own.tcp_url is not None
        worker, beat = start_parts(processes, tmp_path, own.tcp_url, database_url)
        worker.wait_for_log(r"Task atout\.sweep\[\S+\] succeeded", timeout=30)  # beat -> worker works
        before = {p.name: len(p.log()) for p in (worker, beat)}
        kill_and_restart(own)
        back = len(worker.log())
        client = redis.Redis.from_url(own.tcp_url, socket_timeout=5)

        def worker_alive() -> bool:  # its keeper renews its liveness (an entry not expired) again
            try:
                return bool(client.zrangebyscore(WORKERS_KEY, int(time.time() * 1000), "+inf"))
            except redis.RedisError:
                return False

        wait_until(worker_alive, 30, "the worker's keeper to renew its liveness")
        # beat sends its sweep again and the worker (its consumer reconnected) runs it
        wait_until(lambda: re.search(r"Task atout\.sweep\[\S+\] succeeded", worker.log()[back:]), 30,
                   "a sweep sent by beat and run by the worker after the outage")
        time.sleep(2.0)  # the quiet retries would have gone on meanwhile
        client.close()
        for part in (worker, beat):
            assert part.alive(), part.log()[-3000:]
            assert_said_once(part.name, part.log()[before[part.name]:])
    finally:
        processes.stop_all()
        own.stop()


def test_a_redis_outage_with_matches_in_flight_is_two_lines_in_a_worker(
    tmp_path: Path, processes: Any, own_database: tuple[str, Any, Any], spawn_bot: Any
) -> None:
    database_url, sessions, registry = own_database
    own = EmbeddedRedis(tmp_path / "redis", tcp_port=free_tcp_port(), persist=True).start()
    try:
        url = own.tcp_url
        assert url is not None
        gateway = processes.start(
            "gateway", [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"],
            {"ATOUT_REDIS_URL": url, "ATOUT_DATABASE_URL": database_url, "ATOUT_KEEPALIVE_MS": "1000",
             "ATOUT_SERVER_ID": "gs-outage-logs", **FAST})
        address = "127.0.0.1:" + gateway.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)").group(1)
        worker, beat = start_parts(processes, tmp_path, url, database_url)
        client = redis.Redis.from_url(url, socket_timeout=5)
        bots = []
        for i in range(3):
            info, token = registry.add(f"outage-logs-{i}", owner="tests")
            spawn_bot(address, token, f"{WORKER_BOTS}:Sleepy", ATOUT_TEST_THINK_S="0.01")
            bots.append(info)
        wait_until(lambda: all(is_connected(client, b.bot_id) for b in bots), 30, "the bots")
        client.close()
        tasks = Tasks.for_settings(Settings(redis_url=url))
        tid = create_tournament(sessions, name="outage-logs", bots=[b.name for b in bots], game="regicide",
                                players=3, games_per_pairing=6)
        tasks.play_matches(start_tournament(sessions, tid))
        tasks.close()
        worker.wait_for_log(r"Task atout\.play_match\[\S+\] received", timeout=30)
        time.sleep(1.0)  # matches in flight: decisions asked, events written
        before = {p.name: len(p.log()) for p in (worker, beat)}
        kill_and_restart(own)
        time.sleep(8.0)
        for part in (worker, beat):
            assert part.alive()
            assert_said_once(part.name, part.log()[before[part.name]:])
    finally:
        processes.stop_all()
        own.stop()



def test_celerys_records_of_an_outage_become_the_outage_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Without a broker to kill at the right instant: the records Celery makes when an ack, a
    task or its consumer meets a broken connection, through the filter the worker installs."""
    from atout_arena.core.wire import RedisOutage
    from atout_workers import celery_app

    outage = RedisOutage(logging.getLogger("test.celery.outage"), clock=lambda: 0.0)
    monkeypatch.setattr(celery_app, "redis_outage", outage)
    caplog.set_level(logging.INFO, "test.celery.outage")
    refused = redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    def record(name: str, msg: str, args: tuple, exc: BaseException | None = None) -> logging.LogRecord:
        return logging.LogRecord(name, logging.CRITICAL, __file__, 1, msg, args,
                                 (type(exc), exc, None) if exc is not None else None)

    keep = celery_app.BrokerOutageFilter().filter
    ack = record("celery.worker.request", "Couldn't ack %r, reason:%r", ("tag", refused), refused)
    assert keep(ack) is False
    task = record("celery.app.trace", "Task %(name)s[%(id)s] %(description)s: %(exc)s", (), refused)
    assert keep(task) is True and task.exc_info is None  # one line, no traceback
    cannot = celery_app._CANNOT_CONNECT or ""
    assert keep(record("celery.worker.consumer.consumer", cannot, ("uri", refused, "again"))) is False
    bug = record("celery.app.trace", "Task failed: %s", ("x",), ValueError("a bug"))
    assert keep(bug) is True and bug.exc_info is not None  # not an outage: its traceback stays
    assert keep(record("celery.worker.consumer.connection", "Connected to %s", ("redis://...",))) is True
    assert [r.getMessage() for r in caplog.records] == [
        "Redis unreachable (Celery (celery.worker.request), ConnectionError: Error 111 connecting to "
        "127.0.0.1:6379. Connection refused.); retrying quietly until it is back",
        "Redis is back after 0.0 s"]
