"""The match loop alone, with fake askers: the fault policy of DESIGN.md, step by step."""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest

from atout.games import new_game
from atout_arena.core.match import (
    Answer,
    DecisionAsk,
    FaultPolicy,
    MatchSetup,
    SeatBot,
    ranking_with_forfeits,
    run_loop,
)
from atout_arena.core.vocabulary import Fault, PlayedBy

TIMEOUT, ILLEGAL, DISCONNECTED = Fault.TIMEOUT, Fault.ILLEGAL, Fault.DISCONNECTED
FALLBACK = PlayedBy.FALLBACK

GAMES = [("merde", {"deals": 2}, 4), ("tiercon", {}, 2), ("regicide", {}, 3), ("fool", {}, 3)]


def setup(game: str = "merde", options: dict | None = None, players: int = 3, seed: int = 7,
          **policy: int) -> MatchSetup:
    options = {"deals": 2} if options is None and game == "merde" else (options or {})
    return MatchSetup("m1", game, options, seed, tuple(SeatBot(i + 1, f"bot{i}") for i in range(players)),
                      FaultPolicy(**{"move_ms": 100, **policy}))


def random_asker(seed: int = 1):
    rng = random.Random(seed)
    asks: list[DecisionAsk] = []

    def ask(a: DecisionAsk) -> Answer:
        asks.append(a)
        return Answer(rng.choice(a.legal_actions), 2.0)

    ask.asks = asks  # type: ignore[attr-defined]
    return ask


@pytest.mark.parametrize(("game", "options", "players"), GAMES)
def test_a_clean_match_plays_to_the_end_as_the_engine_says(game: str, options: dict, players: int) -> None:
    ask = random_asker()
    out = run_loop(setup(game, options, players), ask)
    # the same actions on a fresh engine give the same result
    state = new_game(game, players=players, **options).new_state(seed=7)
    for step in out.steps:
        assert step.seat == state.current_player
        assert step.by == "bot" and step.faults == ()
        state.apply(step.action)
    assert state.is_terminal
    assert out.scores == state.scores and out.ranking == state.ranking == out.engine_ranking
    assert out.faults == [0] * players and out.forfeited == [False] * players
    assert out.outcome == "finished"
    assert len(ask.asks) == len(out.steps)
    assert all(a.deadline_ms == 100 for a in ask.asks)
    assert all("hand" in a.observation and a.observation["seat"] == a.seat for a in ask.asks)


def test_a_timeout_is_played_by_the_first_legal_action_and_recorded() -> None:
    def ask(a: DecisionAsk) -> Answer:
        if a.seat == 1:
            return Answer(None, 100.0, TIMEOUT)
        return Answer(a.legal_actions[-1], 1.0)

    out = run_loop(setup(max_faults=0), ask)
    seat1 = [s for s in out.steps if s.seat == 1]
    assert seat1 and all(s.by == FALLBACK and s.faults == (TIMEOUT,) for s in seat1)
    others = [s for s in out.steps if s.seat != 1]
    assert all(s.by == "bot" and not s.faults for s in others)
    assert out.faults == [0, len(seat1), 0]
    assert out.forfeited == [False, False, False]  # max_faults=0: never forfeit
    # each fallback is the first legal action at that point
    state = setup().new_state()
    for step in out.steps:
        if step.by == FALLBACK:
            assert step.action == state.legal_actions()[0]
        state.apply(step.action)


def test_max_faults_forfeits_the_bot_which_ranks_last_and_is_not_asked_again() -> None:
    asked_seat0 = []

    def ask(a: DecisionAsk) -> Answer:
        if a.seat == 0:
            asked_seat0.append(a)
            return Answer(None, 0.0, DISCONNECTED, "not connected")
        return Answer(a.legal_actions[0], 1.0)

    out = run_loop(setup(max_faults=2), ask)
    assert len(asked_seat0) == 2  # asked twice, then forfeited
    assert out.forfeited == [True, False, False]
    assert out.faults == [2, 0, 0]
    assert out.outcome == "forfeit"
    assert out.ranking[0] == 3 and sorted(out.ranking[1:]) == sorted(ranking_with_forfeits(
        out.scores, out.engine_ranking, out.forfeited)[1:])
    later = [s for s in out.steps if s.seat == 0][2:]
    assert later and all(s.by == FALLBACK and s.faults == () and s.detail == "forfeited" for s in later)


def test_rejected_replies_followed_by_a_legal_one_cost_no_fault() -> None:
    """Issue 35, point 1: rejected answers are free while the deadline lasts; seven of them,
    then a legal one, in every decision, with max_faults 3: no fault, no forfeit."""
    def ask(a: DecisionAsk) -> Answer:
        assert a.check("play 1x") is not None  # the engine's reason
        assert a.check(a.legal_actions[0]) is None
        if a.seat == 2:  # seven illegal replies, then a legal one
            return Answer(a.legal_actions[-1], 3.0, detail="'play 1x': not a card", rejected=7)
        return Answer(a.legal_actions[0], 1.0)

    out = run_loop(setup(max_faults=3), ask)
    mine = [s for s in out.steps if s.seat == 2]
    assert mine and all(s.by == "bot" and s.faults == () for s in mine)
    assert mine[0].detail == "'play 1x': not a card"  # the rejected replies are still recorded
    assert out.forfeited == [False, False, False] and out.faults == [0, 0, 0]


def test_a_decision_without_a_legal_reply_is_one_fault_whatever_was_rejected() -> None:
    """One decision, at most one fault: 8 rejected replies (the limit) are one illegal fault,
    so max_faults 3 forfeits at the third such decision, not the first."""
    def ask(a: DecisionAsk) -> Answer:
        if a.seat == 2:
            return Answer(None, 3.0, ILLEGAL, "'play 1x': not a card", rejected=8)
        return Answer(a.legal_actions[0], 1.0)

    out = run_loop(setup(max_faults=3), ask)
    mine = [s for s in out.steps if s.seat == 2]
    assert [s.faults for s in mine[:3]] == [(ILLEGAL,)] * 3
    assert all(s.faults == () and s.detail == "forfeited" for s in mine[3:])
    assert out.forfeited == [False, False, True] and out.faults[2] == 3


def test_illegal_then_nothing_is_one_fault_per_reply_not_two() -> None:
    def ask(a: DecisionAsk) -> Answer:
        if a.seat == 0:
            return Answer(None, 100.0, ILLEGAL, "'play 1x': not a card", rejected=1)
        return Answer(a.legal_actions[0], 1.0)

    out = run_loop(setup(max_faults=0), ask)
    first = next(s for s in out.steps if s.seat == 0)
    assert first.by == FALLBACK and first.faults == (ILLEGAL,)


def test_the_time_bank_extends_deadlines_and_is_spent_by_overruns() -> None:
    deadlines: list[int] = []

    def ask(a: DecisionAsk) -> Answer:
        if a.seat == 0:
            deadlines.append(a.deadline_ms)
            return Answer(a.legal_actions[0], 130.0)  # 30 ms over the move time each time
        return Answer(a.legal_actions[0], 1.0)

    run_loop(setup(move_ms=100, time_bank_ms=100), ask)
    assert deadlines[:5] == [200, 170, 140, 110, 100]  # the bank shrinks by 30 ms, never below 0
    assert all(d == 100 for d in deadlines[4:])


def test_a_timeout_spends_the_whole_bank() -> None:
    deadlines: list[int] = []

    def ask(a: DecisionAsk) -> Answer:
        if a.seat == 0:
            deadlines.append(a.deadline_ms)
            if len(deadlines) == 1:
                return Answer(None, 600.0, TIMEOUT)
        return Answer(a.legal_actions[0], 1.0)

    run_loop(setup(move_ms=100, time_bank_ms=500), ask)
    assert deadlines[0] == 600 and deadlines[1] == 100


def test_on_step_sees_every_step_and_can_stop_the_match() -> None:
    seen = []

    class StopError(Exception):
        pass

    def on_step(state, step):
        seen.append(step.ply)
        if step.ply == 4:
            raise StopError

    with pytest.raises(StopError):
        run_loop(setup(), random_asker(), on_step)
    assert seen == [0, 1, 2, 3, 4]


def test_ranking_with_forfeits() -> None:
    assert ranking_with_forfeits([5, 9, 9], [3, 1, 1], [False, False, False]) == [3, 1, 1]
    assert ranking_with_forfeits([5, 9, 9], [3, 1, 1], [False, True, False]) == [2, 3, 1]
    assert ranking_with_forfeits([5, 9, 9, 1], [3, 1, 1, 4], [True, False, True, False]) == [3, 1, 3, 2]
    # teams (1, 3, 1, 3): a forfeiting member is last, the partner keeps the team's place
    assert ranking_with_forfeits([10, 4, 10, 4], [1, 3, 1, 3], [False, True, False, False]) == [1, 4, 1, 3]


def test_policy_and_answers_are_checked() -> None:
    with pytest.raises(ValueError, match="move_ms"):
        FaultPolicy(move_ms=0)
    with pytest.raises(ValueError, match="max_faults"):
        FaultPolicy(max_faults=-1)
    with pytest.raises(ValueError, match="either"):
        Answer("play Th", 1.0, TIMEOUT)
    with pytest.raises(ValueError, match="unknown fault"):
        Answer(None, 1.0, "slow")


@pytest.mark.parametrize(("game", "options", "players"), GAMES)
def test_the_same_seed_deals_the_same_cards(game: str, options: dict, players: int) -> None:
    """Duplicate mode rests on this: ``new_state(seed=s)`` deals the same cards, and later deals
    do not depend on the actions played before them."""
    rules = new_game(game, players=players, **options)
    hands = [rules.new_state(seed=11).observation(s)["hand"] for s in range(players)]
    assert hands == [rules.new_state(seed=11).observation(s)["hand"] for s in range(players)]
    assert hands != [rules.new_state(seed=12).observation(s)["hand"] for s in range(players)]
    if game == "merde":  # the second deal too, after different plays of the first
        firsts = []
        for pick in (0, -1):
            state = rules.new_state(seed=11)
            while state.observation(0)["deal"] == 1:
                state.apply(state.legal_actions()[pick])
            firsts.append([state.observation(s)["hand"] for s in range(players)])
        assert firsts[0] == firsts[1]


def test_an_absent_seat_is_forfeited_from_the_start_never_asked_one_fault() -> None:
    asked: list[int] = []
    inner = random_asker()

    def ask(a):
        asked.append(a.seat)
        return inner(a)

    outcome = run_loop(setup(), ask, absent=[1])
    assert 1 not in asked and asked
    assert outcome.forfeited == [False, True, False] and outcome.ranking[1] == 3
    absent_faults = [(s.seat, f) for s in outcome.steps for f in s.faults if f == "absent"]
    assert absent_faults == [(1, "absent")] and outcome.faults[1] == 1


def test_a_match_that_never_ends_is_given_up_with_its_reason(monkeypatch) -> None:
    """A game going round in circles (fool did, before rules version 2) must not hold a
    worker's slot for ever: past MAX_STEPS actions the match stops with an error saying so."""
    from atout_arena.core import match as core

    monkeypatch.setattr(core, "MAX_STEPS", 10)
    with pytest.raises(RuntimeError, match="no end after 10 actions"):
        run_loop(setup("fool", {}, 3), random_asker())


def test_first_legal_fool_matches_end() -> None:
    """The arena's fallback (first legal action) plays forfeited seats: fool matches whose every
    seat is played that way end (a position repeated three times ends the game)."""
    from atout_arena.core.match import Answer

    for seed in range(60):
        out = run_loop(setup("fool", {}, 3, seed=seed), lambda a: Answer(a.legal_actions[0], 0.0))
        assert len(out.steps) < 5000


def test_fool_matches_of_3_to_6_players_give_one_winner_and_tied_losers_to_the_statistics() -> None:
    """RULES.md, fool, Result (revised): what the arena stores, and so what standings, ratings,
    ladders and SPRT tests read, is one winner at place 1 and every other seat at place 2."""
    from atout.stats import pairwise_score
    from atout_arena.core.ratings import pairwise_results
    from atout_arena.core.standings import MatchResult, standings

    results = []
    for players in range(3, 7):
        for seed in range(8):
            out = run_loop(setup("fool", {}, players, seed=seed), random_asker(seed))
            top = max(out.scores)
            assert out.ranking == [1 if s == top else 2 for s in out.scores], (players, seed)
            seats = tuple(f"bot{(seed + i) % 6}" for i in range(players))
            results.append(MatchResult(seats, tuple(out.ranking)))
            losers = [i for i, p in enumerate(out.ranking) if p == 2]
            winner = out.ranking.index(1)
            # two losers draw against each other whatever their counts; a loser loses to the winner
            for a, b in itertools.pairwise(losers):
                assert pairwise_score(out.ranking, a, b) == 0.5
            for a in losers:
                assert pairwise_score(out.ranking, winner, a) == 1.0
            assert all(score in (0.5, 1.0) for i, _, score in pairwise_results(out.ranking)
                       if out.ranking[i] == 1)
    lines = standings(results)
    assert all(set(line.places) <= {1, 2} for line in lines)
    assert sum(line.places.get(1, 0) for line in lines) >= len(results)


def test_a_forfeit_in_fool_ranks_below_the_losers() -> None:
    """A forfeiting seat shares the last place after the others, who keep the engine's order:
    the winner first, the losers tied after."""
    assert ranking_with_forfeits([5, 3, 0, 0], [1, 2, 2, 2], [False, False, True, False]) == [1, 2, 4, 2]
    # the forfeiting seat had the most: the others, all losers by count, now share place 1
    assert ranking_with_forfeits([5, 3, 0, 0], [1, 2, 2, 2], [True, False, False, False]) == [4, 1, 1, 1]


def _fool_record(players: int, seed: int, version: int, ranking: list[int] | None = None):
    """A finished fool match as stored, played by random seats, under rules ``version``."""
    from atout.games import ranking_from_scores
    from atout_arena.core.replay import MatchRecord

    out = run_loop(setup("fool", {}, players, seed=seed), random_asker(seed))
    stored = ranking if ranking is not None else (
        ranking_from_scores(out.scores) if version == 2 else out.ranking)
    return out, MatchRecord(id=seed, game="fool", options={}, seed=seed, players=players, max_faults=0,
                            status="finished", actions=[s.to_json() for s in out.steps],
                            scores=out.scores, ranking=stored, rules_version=version)


def test_fool_matches_stored_under_version_2_replay_as_stored() -> None:
    """Rules version 3 changed only fool's ranking: a match stored under version 2 (every player
    ranked by their count) still replays action for action, and its check reproduces the ranking
    it was stored with; a version the engine no longer plays (1) is refused, as ever."""
    from atout_arena.core.replay import RulesVersionMismatch, iter_views, replay_match

    differed = 0
    for seed in range(12):
        out, record = _fool_record(4, seed, version=2)
        report = replay_match(record)
        assert report.ok, report.divergence
        assert report.ranking == record.ranking and report.scores == out.scores
        differed += record.ranking != out.ranking
        assert sum(1 for e in iter_views(record, None) if e.get("type") == "step") == len(out.steps)
        # stored under version 3, a version-2 ranking is a divergence (where they differ)
        if record.ranking != out.ranking:
            wrong = dataclasses.replace(record, rules_version=3)
            assert "final ranking" in (replay_match(wrong).divergence or "")
    assert differed >= 3, differed  # the two rankings really differed in some of these games
    _, current = _fool_record(4, 1, version=3)
    assert replay_match(current).ok
    with pytest.raises(RulesVersionMismatch, match="version 1 of the fool rules"):
        replay_match(dataclasses.replace(current, rules_version=1))
    with pytest.raises(RulesVersionMismatch, match="version 4 of the fool rules"):
        replay_match(dataclasses.replace(current, rules_version=4))


def test_a_match_with_an_absent_bot_replays_as_stored() -> None:
    """An absent seat forfeits from the start with one fault, whatever max_faults is: the replay
    check derives the same forfeits (it derived them from the fault count alone, so every match
    of a never-connected bot 'diverged': issue 32, finding 1)."""
    from atout_arena.core.replay import MatchRecord, replay_match

    for seed, max_faults in ((1, 3), (2, 0), (3, 1)):
        out = run_loop(setup("merde", {"deals": 2}, 4, seed=seed, max_faults=max_faults), random_asker(seed),
                       absent=[1])
        assert out.forfeited == [False, True, False, False]
        record = MatchRecord(id=seed, game="merde", options={"deals": 2}, seed=seed, players=4,
                             max_faults=max_faults, status="finished",
                             actions=[s.to_json() for s in out.steps], scores=out.scores,
                             ranking=out.ranking, forfeited=out.forfeited, rules_version=out.rules_version)
        report = replay_match(record)
        assert report.ok, report.divergence
        assert report.ranking == out.ranking
