"""The arena's metrics: names and help, bounded labels, and counts that add up across processes
(every process writes to Redis; the scrape reads Redis)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from server.metrics import (
    ALL_METRICS,
    DECISION_BUCKETS,
    MetricsRecorder,
    metrics_registry,
)

EXPECTED = {
    "atout_decision_seconds": ("histogram", ("game", "bot")),
    "atout_matches_total": ("counter", ("game", "outcome")),
    "atout_match_seconds": ("histogram", ("game",)),
    "atout_faults_total": ("counter", ("bot", "kind")),
    "atout_rating": ("gauge", ("game", "bot")),
    "atout_bots_connected": ("gauge", ()),
    "atout_queue_depth": ("gauge", ("queue",)),
}


@pytest.fixture
def recorder(redis_client):  # type: ignore[no-untyped-def]
    recorder = MetricsRecorder(redis_client)
    recorder.reset()
    yield recorder
    recorder.reset()


def test_the_names_of_design_md_with_help_text() -> None:
    assert {m.name: (m.kind, m.labels) for m in ALL_METRICS} == EXPECTED
    assert all(len(m.help) > 20 for m in ALL_METRICS)


def test_the_scrape_holds_what_was_recorded(recorder, redis_client) -> None:  # type: ignore[no-untyped-def]
    recorder.decision("merde", "alice", 0.003)
    recorder.decision("merde", "alice", 0.2)
    recorder.decision("fool", "bob", 99.0)  # above every bucket: +Inf only
    recorder.match("merde", "forfeit", 3.5)
    recorder.fault("bob", "timeout")
    recorder.fault("bob", "timeout")
    recorder.rating("merde", "alice", 1512.25)
    redis_client.rpush("atout.matches", "x", "y")
    try:
        text = generate_latest(metrics_registry(redis_client, queues=["atout.matches"],
                                                bots_connected=lambda: 3)).decode()
    finally:
        redis_client.delete("atout.matches")
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
    assert samples[("atout_bots_connected", ())] == 3
    assert samples[("atout_queue_depth", (("queue", "atout.matches"),))] == 2
    assert len(DECISION_BUCKETS) + 1 == sum(1 for name, labels in samples if name.endswith("_bucket")
                                            and dict(labels).get("bot") == "alice")


def test_labels_are_bounded(recorder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="unknown game"):
        recorder.decision("chess", "alice", 0.1)
    with pytest.raises(ValueError, match="unknown outcome"):
        recorder.match("merde", "exploded", 1.0)
    with pytest.raises(ValueError, match="unknown fault kind"):
        recorder.fault("bob", "slow")


def test_counts_of_several_processes_add_up(recorder, redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    script = (
        "import redis, sys\n"
        "from server.metrics import MetricsRecorder\n"
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
