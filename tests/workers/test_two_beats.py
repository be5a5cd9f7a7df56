"""Two real ``atout-arena beat`` processes on one Redis (issue 31): one sends the periodic tasks,
the other stands by; kill -9 the sender and the other takes over within seconds, going on with
the schedule where the dead one left it (a task it had just sent is not sent again early).

What the beats send is counted where it lands: the control queue in Redis (no worker consumes
it during the test), each message's task name and id, with the time it was first seen.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_helpers import wait_until

from atout_arena.core.keys import BEAT_LAST_RUN_KEY, BEAT_LEADER_KEY
from atout_arena.core.tasks import CONTROL_QUEUE, LEAGUE_TICK, SWEEP
from atout_workers.beat import LEASE_TTL_MS, RENEW_S

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SWEEP_S = 1.0
LEAGUE_S = 8.0  # longer than a takeover: a new leader that forgot the last sending would send early


class Sent:
    """The tasks that reach the control queue: [(first seen, task name)], watched by a thread."""

    def __init__(self, redis_client) -> None:
        self.redis = redis_client
        self.seen: dict[str, tuple[float, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            for raw in self.redis.lrange(CONTROL_QUEUE, 0, -1):
                headers = json.loads(raw)["headers"]
                self.seen.setdefault(headers["id"], (time.monotonic(), headers["task"]))

    def times(self, task: str) -> list[float]:
        return sorted(at for at, name in list(self.seen.values()) if name == task)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def sent(redis_client, clean_queues) -> Iterator[Sent]:
    redis_client.delete(BEAT_LEADER_KEY, BEAT_LAST_RUN_KEY)
    watcher = Sent(redis_client)
    yield watcher
    watcher.stop()
    redis_client.delete(BEAT_LEADER_KEY, BEAT_LAST_RUN_KEY)


def test_two_beats_send_once_and_the_standby_takes_over(start_beat, sent: Sent, redis_client,
                                                        tmp_path: Path) -> None:
    env = {"ATOUT_SWEEP_INTERVAL_S": str(SWEEP_S), "ATOUT_LEAGUE_TICK_S": str(LEAGUE_S)}
    beats = [start_beat(**env, ATOUT_DATA_DIR=str(tmp_path / f"beat-{i}")) for i in (1, 2)]

    def leader():
        held = redis_client.get(BEAT_LEADER_KEY)
        pid = int(held.decode().rsplit(":", 1)[1]) if held else None
        return next((b for b in beats if b.popen.pid == pid), None)

    first = wait_until(leader, 10, "a beat to hold the lease")
    standby = next(b for b in beats if b is not first)
    standby.wait_for_log(r"sends the periodic tasks; this beat stands by", timeout=10)

    # -- one beat sends: one sweep a period, not two
    wait_until(lambda: sent.times(SWEEP), 10, "a first sweep")
    start = sent.times(SWEEP)[0]
    wait_until(lambda: sent.times(LEAGUE_TICK), LEAGUE_S + 5, "a first league tick")
    window = time.monotonic() - start
    sweeps = [t for t in sent.times(SWEEP) if t >= start]
    assert len(sweeps) <= window / SWEEP_S + 1.5, (len(sweeps), window)  # two senders: twice as many
    assert len(sweeps) >= window / SWEEP_S - 1.5, (len(sweeps), window)
    assert "Sending due task" not in standby.log(), standby.log()

    # -- kill -9 the sender, right after its league tick: the other goes on, on the same schedule
    league_sent = sent.times(LEAGUE_TICK)[-1]
    first.kill()
    killed = time.monotonic()
    wait_until(lambda: [t for t in sent.times(SWEEP) if t > killed], LEASE_TTL_MS / 1000 + 5,
               "the standby's first sweep", poll_s=0.1)
    took_s = min(t for t in sent.times(SWEEP) if t > killed) - killed
    print(f"the standby beat sent its first sweep {took_s:.1f} s after kill -9 of the leader")
    assert took_s <= LEASE_TTL_MS / 1000 + RENEW_S + SWEEP_S + 1, took_s
    standby.wait_for_log(r"took the lease over", timeout=5)
    assert standby.log().count("took the lease over") == 1, standby.log()
    assert redis_client.get(BEAT_LEADER_KEY).decode().endswith(f":{standby.popen.pid}")

    wait_until(lambda: len(sent.times(LEAGUE_TICK)) >= 2, LEAGUE_S + 5, "the new leader's league tick")
    ticks = sent.times(LEAGUE_TICK)
    assert ticks[-2] == league_sent and ticks[-1] - league_sent >= LEAGUE_S - 1, (ticks, league_sent)

    # -- and it sends once a period on its own
    time.sleep(3 * SWEEP_S)
    after = [t for t in sent.times(SWEEP) if t > killed]
    assert all(b - a >= SWEEP_S * 0.5 for a, b in itertools.pairwise(after)), after
