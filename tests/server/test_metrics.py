"""The arena's metrics: names and help, bounded labels, and counts that add up across processes
(every process writes to Redis; the scrape reads Redis)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from atout_arena.core.keys import CONNECTED_KEY
from atout_arena.core.metrics import (
    ALL_METRICS,
    BOTS_CONNECTED,
    DECISION_BUCKETS,
    QUEUE_DEPTH,
    MetricsRecorder,
    metrics_registry,
)
from atout_arena.core.relay import now_ms

EXPECTED = {
    "atout_decision_seconds": ("histogram", ("game", "bot")),
    "atout_matches_total": ("counter", ("game", "outcome")),
    "atout_match_seconds": ("histogram", ("game",)),
    "atout_faults_total": ("counter", ("bot", "kind")),
    "atout_rating": ("gauge", ("game", "bot")),
    "atout_bots_connected": ("gauge", ()),
    "atout_queue_depth": ("gauge", ("queue",)),
    "atout_stream_limited_total": ("counter", ("bot", "limit")),  # a stream's limits
}


@pytest.fixture
def recorder(redis_client):
    recorder = MetricsRecorder(redis_client)
    recorder.reset()
    yield recorder
    recorder.reset()


def test_the_names_of_design_md_with_help_text() -> None:
    assert {m.name: (m.kind, m.labels) for m in ALL_METRICS} == EXPECTED
    assert all(len(m.help) > 20 for m in ALL_METRICS)


def test_the_scrape_holds_what_was_recorded(recorder, redis_client) -> None:
    baseline_connected = connected_now(redis_client)
    recorder.decision("merde", "alice", 0.003)
    recorder.decision("merde", "alice", 0.2)
    recorder.decision("fool", "bob", 99.0)  # above every bucket: +Inf only
    recorder.match("merde", "forfeit", 3.5)
    recorder.fault("bob", "timeout")
    recorder.fault("bob", "timeout")
    recorder.rating("merde", "alice", 1512.25)
    # a queue of this test's own: another test of this process may have left tasks in atout.matches
    queue = "atout.matches-metrics-test"
    redis_client.rpush(queue, "x", "y")
    redis_client.rpush(f"{queue}\x06\x163", "z")  # kombu's list for priority 3
    live, gone = now_ms() + 60_000, now_ms() - 1
    fake = {"metrics-live-1": live, "metrics-live-2": live, "metrics-live-3": live, "metrics-gone": gone}
    redis_client.zadd(CONNECTED_KEY, fake)
    try:
        text = generate_latest(metrics_registry(redis_client, queues=[queue])).decode()
    finally:
        redis_client.delete(queue, f"{queue}\x06\x163")
        redis_client.zrem(CONNECTED_KEY, *fake)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name, (kind, _) in EXPECTED.items():
        family = families[name.removesuffix("_total")]
        assert family.type == kind and family.documentation
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in families.values() for s in f.samples}
    alice = (("bot", "alice"), ("game", "merde"))
    assert samples[("atout_decision_seconds_count", alice)] == 2
    assert samples[("atout_decision_seconds_sum", alice)] == pytest.approx(0.203)
    assert samples[("atout_decision_seconds_bucket", (*alice, ("le", "0.005")))] == 1
    assert samples[("atout_decision_seconds_bucket", (("bot", "bob"), ("game", "fool"), ("le", "10.0")))] == 0
    assert samples[("atout_decision_seconds_bucket", (("bot", "bob"), ("game", "fool"), ("le", "+Inf")))] == 1
    assert samples[("atout_matches_total", (("game", "merde"), ("outcome", "forfeit")))] == 1
    assert samples[("atout_match_seconds_count", (("game", "merde"),))] == 1
    assert samples[("atout_faults_total", (("bot", "bob"), ("kind", "timeout")))] == 2
    assert samples[("atout_rating", alice)] == 1512.25
    assert samples[("atout_bots_connected", ())] == 3 + baseline_connected  # not the expired one
    assert samples[("atout_queue_depth", (("queue", queue),))] == 3
    assert len(DECISION_BUCKETS) + 1 == sum(1 for name, labels in samples if name.endswith("_bucket")
                                            and dict(labels).get("bot") == "alice")


def test_decisions_added_up_scrape_as_the_same_decisions_one_by_one(recorder, redis_client) -> None:
    """MetricsRecorder.decisions (a match's decisions of one bot, added up before writing)
    gives the very histogram that one decision() call per decision gives, in fewer commands."""
    times = [0.0004, 0.003, 0.003, 0.02, 0.2, 0.2, 0.2, 7.0, 99.0, 0.001]

    def scrape() -> dict[tuple[str, tuple], float]:
        text = generate_latest(metrics_registry(redis_client, queues=[])).decode()
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(text) for s in f.samples
                if s.name.startswith("atout_decision_seconds")}

    for t in times:
        recorder.decision("merde", "carol", t)
    one_by_one = scrape()
    recorder.reset()
    pipe = redis_client.pipeline(transaction=False)
    recorder.decisions("merde", "carol", times, pipe)
    commands = len(pipe)
    pipe.execute()
    assert scrape() == pytest.approx(one_by_one)
    assert one_by_one[("atout_decision_seconds_count", (("bot", "carol"), ("game", "merde")))] == len(times)
    assert commands < len(times)  # one per bucket hit and one sum, not two per decision
    recorder.decisions("merde", "carol", [])  # nothing to add: nothing written
    assert scrape() == pytest.approx(one_by_one)


def test_faults_and_limits_start_at_zero_for_every_bot_that_decided(recorder, redis_client) -> None:
    """A healthy arena's fault and limit rates are 0, not "no data": the dashboard's fault
    panels have series to draw (the rehearsal, tests/deploy, queries them through Prometheus)."""
    from atout_arena.core.metrics import STREAM_LIMITS
    from atout_arena.core.vocabulary import FAULT_KINDS

    recorder.decision("merde", "alice", 0.01)
    recorder.decision("fool", "alice", 0.01)
    recorder.fault("carol", "timeout")  # a bot with faults and no decision keeps its own series only
    recorder.fault("alice", "illegal", 2)
    text = generate_latest(metrics_registry(redis_client)).decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(text) for s in f.samples}
    faults = {labels: v for (name, labels), v in samples.items() if name == "atout_faults_total"}
    expected = {(("bot", "alice"), ("kind", kind)): 2.0 if kind == "illegal" else 0.0 for kind in FAULT_KINDS}
    assert faults == {**expected, (("bot", "carol"), ("kind", "timeout")): 1.0}
    limited = {labels: v for (name, labels), v in samples.items() if name == "atout_stream_limited_total"}
    assert limited == {(("bot", "alice"), ("limit", limit)): 0.0 for limit in STREAM_LIMITS}


def test_labels_are_bounded(recorder) -> None:
    with pytest.raises(ValueError, match="unknown game"):
        recorder.decision("chess", "alice", 0.1)
    with pytest.raises(ValueError, match="unknown outcome"):
        recorder.match("merde", "exploded", 1.0)
    with pytest.raises(ValueError, match="unknown fault kind"):
        recorder.fault("bob", "slow")


def test_counts_of_several_processes_add_up(recorder, redis_client, redis_url: str) -> None:
    script = (
        "import redis, sys\n"
        "from atout_arena.core.metrics import MetricsRecorder\n"
        "m = MetricsRecorder(redis.Redis.from_url(sys.argv[1]))\n"
        "for i in range(200):\n"
        "    m.decision('merde', 'alice', 0.001 * (i % 7))\n"
        "    m.fault('alice', 'illegal')\n"
        "m.match('merde', 'finished', 1.0)\n"
    )
    workers = [subprocess.Popen([sys.executable, "-c", script, redis_url]) for _ in range(3)]
    assert [w.wait(60) for w in workers] == [0, 0, 0]
    registry = metrics_registry(redis_client)
    assert registry.get_sample_value("atout_decision_seconds_count", {"game": "merde", "bot": "alice"}) == 600
    assert registry.get_sample_value("atout_faults_total", {"bot": "alice", "kind": "illegal"}) == 600
    assert registry.get_sample_value("atout_matches_total", {"game": "merde", "outcome": "finished"}) == 3
    total = 3 * sum(0.001 * (i % 7) for i in range(200))
    assert registry.get_sample_value("atout_decision_seconds_sum", {"game": "merde", "bot": "alice"}) == (
        pytest.approx(total))


def connected_now(redis_client) -> float:
    """``atout_bots_connected`` as a scrape of /metrics reports it."""
    return metrics_registry(redis_client).get_sample_value(BOTS_CONNECTED.name) or 0.0


def test_bots_connected_counts_live_streams_across_game_servers(
    game_server, start_game_server, make_bot, spawn_bot, redis_client
) -> None:
    """Bots on two game servers (other processes) add up in one scrape; a bot that leaves is
    no longer counted, nor are those of a game server killed without a word, once their
    presence (three keep-alives) has expired."""
    from e2e_helpers import wait_until

    from atout_arena.core.relay import connected_bots

    def counted(present: set[str], absent: set[str]) -> bool:
        """The scrape counts every live bot: these present, those not (bots of other tests may
        come and go meanwhile: compared with the live ones of the same moment)."""
        live = set(connected_bots(redis_client))
        value = connected_now(redis_client)
        return present <= live and not absent & live and value == len(live)

    other = start_game_server()
    bots: dict[str, object] = {}
    for address in (game_server.info["address"], other.info["address"], other.info["address"]):
        info, token = make_bot("metrics")
        bots[info.bot_id] = spawn_bot(address, token, "FirstLegal")
    first, *on_other = bots
    wait_until(lambda: counted(set(bots), set()), 20, "3 bots on 2 game servers counted")
    bots[first].stop()  # type: ignore[attr-defined]  # a clean close: released at once
    wait_until(lambda: counted(set(on_other), {first}), 10, "the bot that left to be gone")
    other.kill()  # SIGKILL: its bots' presence is never released, it expires
    wait_until(lambda: counted(set(), set(bots)), 15, "the dead server's bots to expire")


def test_queue_depth_counts_the_tasks_waiting_in_the_broker(celery_app, clean_queues, redis_client) -> None:
    """Tasks sent through Celery (no worker running) are counted by queue, priorities included."""
    from atout_arena.core.tasks import CONTROL_QUEUE, MATCH_QUEUE, PLAY_BATCH, PLAY_MATCH, QUEUES

    celery_app.play_matches([10**9 + i for i in range(PLAY_BATCH + 3)])  # two tasks: 8 matches, 3
    celery_app.app.send_task(PLAY_MATCH, (10**9 + 30,), queue=MATCH_QUEUE, priority=5)
    celery_app.finalize_tournament(10**9)
    registry = metrics_registry(redis_client, QUEUES)
    assert registry.get_sample_value(QUEUE_DEPTH.name, {"queue": MATCH_QUEUE}) == 3
    assert registry.get_sample_value(QUEUE_DEPTH.name, {"queue": CONTROL_QUEUE}) == 1
