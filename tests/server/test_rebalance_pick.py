"""Which streams a game server hands over when it holds more than its share (a unit test of
``Rebalancer.pick``: the sessions are stand-ins; the end-to-end split is in
tests/deploy/test_haproxy_hangs.py and the nemesis rehearsal)."""

from __future__ import annotations

from types import SimpleNamespace

from atout_arena.gateway.server import MOVE_AGAIN_AFTER_S, Rebalancer


def _sessions(open_counts: dict[str, int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(address=a, open={str(i): None for i in range(n)}, presence=object())
            for a, n in open_counts.items()]


def test_idle_streams_go_first_then_the_least_busy_never_one_moved_lately() -> None:
    sessions = _sessions({"a": 3, "b": 0, "c": 7, "d": 1, "e": 0})
    rebalancer = Rebalancer(SimpleNamespace(sessions=sessions), "gs-1")  # type: ignore[arg-type]
    assert sorted(s.address for s in rebalancer.pick(2, now=100.0)) == ["b", "e"]
    # a bot in many matches is hardly ever between decisions: the least busy still move
    assert [s.address for s in rebalancer.pick(5, now=100.0)][2:] == ["d", "a", "c"]
    rebalancer.moved = {"b": 100.0, "e": 100.0}
    assert [s.address for s in rebalancer.pick(1, now=100.0 + MOVE_AGAIN_AFTER_S / 2)] == ["d"]
    assert sorted(s.address for s in rebalancer.pick(2, now=101.0 + MOVE_AGAIN_AFTER_S)) == ["b", "e"]
