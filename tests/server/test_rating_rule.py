"""Who a match rates, one plain rule (``core.ratings.rated_result``) read by every rating (the
workers' live Elo, the batch fits, the leaderboard, ladders), and the replay check reading a
match's stored absent seats (issue 32, findings 1, 2 and 10). The arena-wide behaviour, with
real processes, is tests/api/test_who_is_rated.py."""

from __future__ import annotations

import dataclasses
import random

import pytest

from atout_arena.core.match import Answer, DecisionAsk, FaultPolicy, MatchSetup, SeatBot, run_loop
from atout_arena.core.models import Match, MatchSeat
from atout_arena.core.ratings import RatedSeat, rated_result
from atout_arena.core.replay import MatchRecord, replay_match
from atout_arena.services.ladders import _rates_every_seat


def test_only_played_present_seats_are_rated_among_themselves() -> None:
    seats = [RatedSeat(10, 2), RatedSeat(11, 4, absent=True), RatedSeat(12, 1),
             RatedSeat(13, 3, disabled=True)]
    assert rated_result(seats) == ((10, 12), (2, 1))
    assert rated_result([RatedSeat(10, 1), RatedSeat(11, 2)]) == ((10, 11), (1, 2))
    # fewer than two left: nobody is rated (a 2-player match against an absent or disabled bot)
    assert rated_result([RatedSeat(10, 1), RatedSeat(11, 2, absent=True)]) is None
    assert rated_result([RatedSeat(10, 2), RatedSeat(11, 1, disabled=True)]) is None
    assert rated_result([RatedSeat(10, 1), RatedSeat(11, None)]) is None  # no place: no result
    assert rated_result([RatedSeat(10, 1), RatedSeat(10, 2)]) is None  # one bot in two seats
    assert rated_result([]) is None


def _record(absent_seats: list[int], stored_absent: list[bool] | None, seed: int = 5) -> MatchRecord:
    """A merde match of 4 played by the real match loop, seat ``absent_seats`` never connected,
    stored as the workers store it (``stored_absent``: the seats' ``absent`` column)."""
    rng = random.Random(seed)

    def ask(a: DecisionAsk) -> Answer:
        return Answer(rng.choice(a.legal_actions), 1.0)

    setup = MatchSetup("m", "merde", {"deals": 2}, seed, tuple(SeatBot(i + 1, f"b{i}") for i in range(4)),
                       FaultPolicy(move_ms=100, max_faults=3))
    out = run_loop(setup, ask, absent=absent_seats)
    return MatchRecord(id=seed, game="merde", options={"deals": 2}, seed=seed, players=4, max_faults=3,
                       status="finished", actions=[s.to_json() for s in out.steps], scores=out.scores,
                       ranking=out.ranking, forfeited=out.forfeited, absent=stored_absent or [],
                       rules_version=out.rules_version)


def test_the_replay_check_reads_the_stored_absent_seats() -> None:
    stored = _record([1], [False, True, False, False])
    report = replay_match(stored)
    assert report.ok, report.divergence
    assert report.ranking is not None and report.ranking[1] == 4  # forfeited from the start: last
    # a record without the column (made by hand): the log's `absent` fault says it
    assert replay_match(dataclasses.replace(stored, absent=[])).ok
    # what was stored and what the log says must agree, both ways
    played = replay_match(dataclasses.replace(stored, absent=[False, True, True, False]))
    assert not played.ok and played.divergence is not None
    assert "seat 2 is stored absent, but its bot played" in played.divergence
    unstored = replay_match(dataclasses.replace(stored, absent=[False, False, False, False]))
    assert not unstored.ok
    assert "seat 1 charged the fault absent, not stored absent" in str(unstored.divergence)


def _ladder_game(absent: bool = False) -> Match:
    match = Match(id=1, game="fool", options={}, seed=1, status="finished", ranking=[1, 2], actions=[])
    match.seats = [MatchSeat(seat=0, bot_id=1, place=1, forfeited=False, absent=False),
                   MatchSeat(seat=1, bot_id=2, place=2, forfeited=False, absent=absent)]
    return match


@pytest.mark.parametrize(("disabled", "absent", "void"), [
    (set(), False, False), ({2}, False, True), (set(), True, True), ({3}, False, False)])
def test_a_ladder_set_rates_all_its_seats_by_the_same_rule_or_is_void(
    disabled: set[int], absent: bool, void: bool
) -> None:
    assert _rates_every_seat(_ladder_game(absent=absent), disabled) is not void
