"""A bot's figures by version, over one stated window (its last 100 finished matches): think and
network p50/p99 per version, not pooled; the fault total over the same matches as its kinds.
Matches are stored as the worker stores them (the action log's rows), read through the real API."""

from __future__ import annotations

from atout_arena.core.match import Step
from atout_arena.core.models import Match, MatchSeat
from atout_arena.core.vocabulary import PlayedBy
from atout_arena.services.bots import FIGURES_WINDOW, bot_figures


def _store(sessions, bot_id: int, other_id: int, version: str, think_ms: float, bot_ms: float,
           faults: tuple[str, ...] = (), n: int = 1, other_version: str = "") -> None:
    """``n`` finished matches in which ``bot_id`` (seat 0, played by ``version``) answers 10
    decisions in ``think_ms`` (its own ``bot_ms``), the first with ``faults``; seat 1 is
    ``other_id`` (``other_version``) answering in 1 ms."""
    with sessions() as session:
        for _ in range(n):
            steps = []
            for ply in range(20):
                seat = ply % 2
                mine = seat == 0
                charged = faults if mine and ply == 0 else ()
                by = PlayedBy.FALLBACK if charged else PlayedBy.BOT
                steps.append(Step(ply, seat, "x", by, think_ms if mine else 1.0, charged, "",
                                  bot_ms if mine and not charged else None).to_json())
            match = Match(game="tiercon", options={}, seed=1, status="finished", actions=steps,
                          scores=[1, 0], ranking=[1, 2])
            match.seats = [
                MatchSeat(seat=0, bot_id=bot_id, version=version, played_version=version, place=1,
                          faults=len(faults)),
                MatchSeat(seat=1, bot_id=other_id, version=other_version, played_version=other_version,
                          place=2),
            ]
            session.add(match)
        session.commit()


def test_figures_are_by_version_and_every_one_over_the_same_window(api, sessions, new_bot) -> None:
    name, bot_id, token = new_bot("figures")
    _, other_id, _ = new_bot("figures-other")
    _store(sessions, bot_id, other_id, "v1", 5.0, 4.0, faults=("timeout",))  # old: out of the window
    _store(sessions, bot_id, other_id, "v2", 0.2, 0.1, n=60)  # an instant version
    _store(sessions, bot_id, other_id, "v3", 52.0, 50.0, faults=("illegal",), n=39)  # a 50 ms one
    # and one match of a test of v3 against v2: two seats of the bot, one match of its window
    _store(sessions, bot_id, bot_id, "v3", 52.0, 50.0, faults=("illegal",), other_version="v2")

    detail = api.as_bot(token).get(f"/v1/bots/{name}").json()
    window = detail["figures_window"]
    assert (window["matches"], window["counted"]) == (FIGURES_WINDOW, 100) == (100, 100)
    assert "last 100 finished matches" in window["description"]
    # the total and its kinds count the same matches: the old v1 match's timeout is out of both
    faults = detail["faults"]
    assert faults["total"] == faults["illegal"] == 40 and faults["timeout"] == 0
    assert faults["total"] == sum(faults[k] for k in ("timeout", "illegal", "disconnected", "absent"))
    versions = {v["version"]: v for v in detail["versions"]}
    assert versions["v1"]["matches"] == 1 and versions["v1"]["think_time"] is None  # no match in the window
    v2, v3 = versions["v2"]["think_time"], versions["v3"]["think_time"]
    assert v2["p50_ms"] == 0.2 and v2["network_p50_ms"] == 0.1  # and the 1 ms of its seat in the test match
    assert v3["p50_ms"] == v3["p99_ms"] == 52.0 and v3["bot_p50_ms"] == 50.0 and v3["network_p99_ms"] == 2.0
    assert (v2["matches_counted"], v3["matches_counted"], v3["decisions"]) == (61, 40, 40 * 9)
    assert v2["decisions"] == 60 * 10 + 10 and versions["v2"]["faults"]["matches_counted"] == 61
    assert versions["v3"]["faults"]["illegal"] == 40 and versions["v2"]["faults"]["total"] == 0

    with sessions() as session:  # the service itself, with a smaller window
        small = bot_figures(session, bot_id, window=10)
    assert small["window"]["counted"] == 10 and set(small["versions"]) == {"v2", "v3"}  # v2: the test match
    assert small["faults"]["total"] == small["faults"]["illegal"] == 10
