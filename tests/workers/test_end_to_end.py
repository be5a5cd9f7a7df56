"""Tournaments with every real part: Redis, the game server, SDK bots in their own processes,
Celery worker processes (and beat), the database.

Timing settings of the workers are in conftest.FAST (a silent match is taken over after 2 s).
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from e2e_helpers import stored_match, wait_until
from sqlalchemy import func, select

from atout.games import SUITS, relabel_action
from atout_arena.core.metrics import FAULTS_TOTAL, MATCHES_TOTAL, metrics_registry
from atout_arena.core.models import Match, Rating, RatingChange, Tournament, as_utc, utcnow
from atout_arena.core.replay import replay_match, replay_views

pytestmark = pytest.mark.timeout(180)


def matches_of(sessions, tid: int) -> list[Match]:
    with sessions() as session:
        query = select(Match).where(Match.tournament_id == tid).order_by(Match.number)
        matches = session.scalars(query).all()
        for m in matches:
            _ = m.seats
        return list(matches)


def assert_one_result_each(sessions, tid: int, expected: int) -> list[Match]:
    matches = matches_of(sessions, tid)
    assert len(matches) == expected
    for m in matches:
        assert m.status == "finished", (m.id, m.status, m.error)
        assert m.scores is not None and m.ranking is not None and len(m.ranking) == len(m.seats) and m.actions
        assert all(s.place is not None for s in m.seats)
    with sessions() as session:
        bots = {s.bot_id for m in matches for s in m.seats}
        # one rating change per (match, bot): nothing counted twice
        changes = session.scalar(select(func.count()).select_from(RatingChange)
                                 .where(RatingChange.match_id.in_([m.id for m in matches])))
        assert changes == sum(len(m.seats) for m in matches)
        assert session.get(Tournament, tid).status == "finished"
        assert len(session.get(Tournament, tid).standings) == len(bots)
    return matches


ROUND_ROBINS = [
    # game, spec, matches for 4 bots
    ("merde", {"players": 3, "options": {"deals": 2}}, 4),
    ("tiercon", {"games_per_pairing": 2}, 12),
    ("regicide", {"players": 3}, 4),
    ("fool", {"players": 2, "games_per_pairing": 2}, 12),
]


@pytest.mark.parametrize(("game", "spec", "expected"), ROUND_ROBINS, ids=[g for g, _, _ in ROUND_ROBINS])
def test_a_round_robin_of_four_bots_ends_with_one_result_per_match(
    game, spec, expected, arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    bots = arena_bots(["random"] * 4, prefix=game)
    start_worker()
    tid = run_tournament(bots, game=game, move_ms=3000, **spec)
    wait_finished(tid)
    matches = assert_one_result_each(sessions, tid, expected)
    # the schedule: every pair of bots met, every bot played as often as the others
    plays = {b.id: 0 for b in bots}
    for m in matches:
        for s in m.seats:
            plays[s.bot_id] += 1
    assert len(set(plays.values())) == 1
    assert replay_match(stored_match(sessions, matches[0].id)).ok


def test_two_workers_share_a_tournament_and_their_metrics_add_up(
    arena_bots, start_worker, run_tournament, wait_finished, sessions, redis_client
) -> None:
    registry = metrics_registry(redis_client)
    labels = {"game": "merde", "outcome": "finished"}
    before = registry.get_sample_value(MATCHES_TOTAL.name, labels) or 0.0
    bots = arena_bots(["Sleepy"] * 4, "--max-workers", "16", ATOUT_TEST_THINK_S="0.01")
    start_worker("w1", concurrency=4)
    start_worker("w2", concurrency=4)
    tid = run_tournament(bots, game="merde", players=3, options={"deals": 2}, games_per_pairing=8,
                         via_task=True)
    wait_finished(tid)
    matches = assert_one_result_each(sessions, tid, 16)
    with sessions() as session:
        runners = session.scalars(select(Match.lease_id).where(Match.tournament_id == tid)).all()
    processes = {r.split(":")[1] for r in runners}
    assert len(processes) == 2, f"one worker played everything: {runners}"

    def counted() -> float:  # (read from Redis at every call)
        return (registry.get_sample_value(MATCHES_TOTAL.name, labels) or 0.0) - before

    # a match's metrics go out through its worker's event sink (a thread) after its result is
    # stored: the other worker may have finished the tournament before the last ones are written
    wait_until(lambda: counted() >= len(matches), 10, "the last matches' metrics")
    assert counted() == len(matches)


@pytest.mark.slow
def test_a_worker_killed_mid_tournament_and_the_tournament_still_finishes(
    arena_bots, start_worker, start_beat, run_tournament, wait_finished, sessions
) -> None:
    bots = arena_bots(["Sleepy"] * 4, "--max-workers", "32", ATOUT_TEST_THINK_S="0.03")
    victim = start_worker("victim", concurrency=4)
    start_worker("survivor", concurrency=4)
    start_beat()
    tid = run_tournament(bots, game="merde", players=3, options={"deals": 2}, games_per_pairing=16)
    mark = f"%:{victim.popen.pid}:%"

    def victim_running():
        return (select(Match.id, Match.started_at)
                .where(Match.tournament_id == tid, Match.lease_id.like(mark), Match.status == "running"))

    def victim_busy() -> bool:
        # A match that started less than 0.2 s ago (one takes about 0.6 s here) is far from its
        # end: a match about to end could store its result between this look and the kill.
        recent = utcnow() - timedelta(seconds=0.2)
        with sessions() as session:
            finished = session.scalar(select(func.count()).select_from(Match).where(
                Match.tournament_id == tid, Match.lease_id.like(mark), Match.status == "finished"))
            started = [at for _, at in session.execute(victim_running())]
        return finished >= 1 and any(at is not None and as_utc(at) > recent for at in started)

    wait_until(victim_busy, 60, "the victim to be mid-tournament")
    victim.kill()  # SIGKILL: no warm shutdown, no acknowledgement, heartbeats stop
    with sessions() as session:  # what the dead process held: nothing of it can change now
        interrupted = {match_id for match_id, _ in session.execute(victim_running())}
    assert interrupted, "the victim held no running match when it was killed"
    wait_finished(tid, 120)
    matches = assert_one_result_each(sessions, tid, 32)
    rerun = [m for m in matches if m.id in interrupted]
    assert all(m.attempts >= 2 for m in rerun), {m.id: m.attempts for m in rerun}
    assert all(m.lease_id is not None and f":{victim.popen.pid}:" not in m.lease_id for m in rerun)
    for m in rerun:
        assert replay_match(stored_match(sessions, m.id)).ok


def test_a_bot_that_hangs_is_timed_out_and_forfeits(
    arena_bots, start_worker, run_tournament, wait_finished, sessions, redis_client
) -> None:
    quick = arena_bots(["random", "random"])
    hanging = arena_bots(["Slow"], ATOUT_TEST_SLEEP_S="1")[0]
    start_worker()
    tid = run_tournament([*quick, hanging], game="merde", players=3, options={"deals": 2}, move_ms=300,
                         max_faults=2)
    started = time.monotonic()
    wait_finished(tid, 60)
    assert time.monotonic() - started < 20  # two deadlines of 0.3 s, then no more waiting
    [match] = assert_one_result_each(sessions, tid, 1)
    seat = next(s for s in match.seats if s.bot_id == hanging.id)
    assert (seat.faults, seat.forfeited, seat.place) == (2, True, 3)
    assert match.outcome == "forfeit" and match.actions is not None
    steps = [a for a in match.actions if a[0] == seat.seat]
    assert [a[4] for a in steps[:2]] == [["timeout"], ["timeout"]] and all(a[2] == "fallback" for a in steps)
    assert all(a[5] == "forfeited" for a in steps[2:])
    faults = metrics_registry(redis_client).get_sample_value(FAULTS_TOTAL.name,
                                                            {"bot": hanging.name, "kind": "timeout"})
    assert faults == 2


@pytest.mark.slow
def test_a_bot_that_disconnects_mid_match_is_faulted_and_forfeits(
    arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    quick = arena_bots(["random", "random"])
    quitter = arena_bots(["QuitAfter"], "--no-reconnect", ATOUT_TEST_QUIT_AFTER="2")[0]
    start_worker()
    # A decision counts as disconnected if the bot's stream is gone at its deadline. 3.5 s is more
    # than the presence TTL (3 keep-alives, 3 s): once the game server has seen the stream end
    # (at once, on loopback), the presence is gone by then even if a loaded game server is slow
    # to release it (with 1 s, both faults could be timeouts).
    tid = run_tournament([*quick, quitter], game="merde", players=3, options={"deals": 2}, move_ms=3500,
                         max_faults=2)
    wait_finished(tid, 60)
    [match] = assert_one_result_each(sessions, tid, 1)
    seat = next(s for s in match.seats if s.bot_id == quitter.id)
    assert (seat.forfeited, seat.place) == (True, 3) and match.actions is not None
    steps = [a for a in match.actions if a[0] == seat.seat]
    assert [a[2] for a in steps[:2]] == ["bot", "bot"]
    kinds = [k for a in steps for k in a[4]]
    assert len(kinds) == 2 and "disconnected" in kinds and set(kinds) <= {"disconnected", "timeout"}


def test_duplicate_mode_seats_the_same_deals_in_every_rotation(
    arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    bots = arena_bots(["random"] * 3)
    start_worker()
    tid = run_tournament(bots, game="merde", players=3, options={"deals": 2}, duplicate=True)
    wait_finished(tid)
    matches = assert_one_result_each(sessions, tid, 3)
    assert len({m.seed for m in matches}) == 1 and len({m.deal_group for m in matches}) == 1
    # every bot sits in every seat once
    for seat in range(3):
        assert {next(s.bot_id for s in m.seats if s.seat == seat) for m in matches} == {b.id for b in bots}
    records = [stored_match(sessions, m.id) for m in matches]
    # each rotation under its own suit permutation: the same deal once the suits are
    # put back, and not the same look
    assert len({r.suits for r in records}) == 3
    looks = set()
    for seat in range(3):
        for deal in (1, 2):
            hands = []
            for record in records:
                views = replay_views(record, seat)
                first = next(e["view"] for e in views if e["view"]["deal"] == deal)
                looks.add((seat, deal, tuple(sorted(first["hand"]))))
                back = "".join(SUITS[(record.suits or SUITS).index(s)] for s in SUITS)  # the inverse
                hands.append(sorted(relabel_action("x " + " ".join(first["hand"]), back).split()[1:]))
            assert hands[0] and all(h == hands[0] for h in hands), (seat, deal, hands)
    assert len(looks) > 6  # 6 (seat, deal) pairs: the rotations did not all look alike


def test_ratings_move_the_right_way_for_a_strong_bot(
    arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    """The heuristic bot wins about 9 fool games in 10 against random bots. Thresholds from
    300 simulated tournaments of this size (atout.local, the same ratings code): the batch fit
    put it first every time (its lead was at least 11 Elo), its online rating ended at 1533 or
    more, its likelihood of superiority over the next bot at 0.6 or more."""
    strong = arena_bots(["heuristic"])[0]
    weak = arena_bots(["random"] * 3)
    start_worker()
    tid = run_tournament([strong, *weak], game="fool", players=2, games_per_pairing=8)
    wait_finished(tid)
    assert_one_result_each(sessions, tid, 48)
    with sessions() as session:
        ids = [strong.id] + [b.id for b in weak]
        query = select(Rating).where(Rating.game == "fool", Rating.bot_id.in_(ids))
        online = {r.bot_id: r.rating for r in session.scalars(query)}
        fitted = session.get(Tournament, tid).fitted
        assert fitted[0].bot_id == strong.id and fitted[0].los_next > 0.5
        assert all(f.ci_low < f.rating < f.ci_high for f in fitted)
    assert online[strong.id] > 1525  # it went up...
    assert sum(online.values()) == pytest.approx(4 * 1500)  # ...and the random bots down as much


def test_one_worker_process_keeps_many_matches_in_flight(
    arena_bots, start_worker, run_tournament, wait_finished, sessions
) -> None:
    bots = arena_bots(["Sleepy"] * 3, "--max-workers", "32", ATOUT_TEST_THINK_S="0.3")
    start_worker(concurrency=32)
    tid = run_tournament(bots, game="merde", players=3, options={"deals": 1}, games_per_pairing=20)
    wait_finished(tid, 60)
    matches = assert_one_result_each(sessions, tid, 20)
    events = sorted([(m.started_at, 1) for m in matches] + [(m.finished_at, -1) for m in matches])
    in_flight = peak = 0
    for _, step in events:
        in_flight += step
        peak = max(peak, in_flight)
    assert peak >= 16, f"only {peak} matches in flight at once"


def test_a_league_runs_seasons_under_beat_with_standings_across_them(
    arena_bots, start_worker, start_beat, sessions, celery_app, clean_queues
) -> None:
    from atout_arena.services.leagues import create_league, league_standings, set_members

    bots = arena_bots(["random"] * 3)
    league = create_league(sessions, name=f"league-{bots[0].name}", game="merde", players=3,
                           options={"deals": 1}, bots=[b.name for b in bots], every_s=1)
    start_worker()
    start_beat()

    def seasons_done() -> bool:
        info = league_standings(sessions, league)
        return sum(s["status"] == "finished" for s in info["seasons"]) >= 2

    wait_until(seasons_done, 60, "two finished seasons", poll_s=0.2)
    set_members(sessions, league, leave=[b.name for b in bots])  # no more seasons can start
    info = league_standings(sessions, league)
    finished = [s for s in info["seasons"] if s["status"] == "finished"]
    assert [s["season"] for s in info["seasons"]][:2] == [1, 2]
    assert {row["bot"] for row in info["standings"]} >= {b.name for b in bots}
    played = {row["bot"]: row["matches"] for row in info["standings"]}
    assert all(played[b.name] >= len(finished) for b in bots)



def test_a_practice_match_left_queued_is_played_by_a_worker_with_its_house_bots(
    arena_bots, start_worker, start_beat, sessions, clean_queues
) -> None:
    """A practice match stored but never sent (its API or game server died in between) stays
    queued: the sweeper sends it to the practice queue, where a worker plays the house seats
    in-process, unrated."""
    from atout_arena.services.practice import start_practice

    (bot,) = arena_bots(["random"], prefix="practice")
    match_id = start_practice(sessions, bot.id, "tiercon", seat=1, seed=11)  # stored, never dispatched
    start_worker()
    start_beat()

    def finished() -> Match | None:
        with sessions() as session:
            match = session.get(Match, match_id)
            _ = match.seats
            return match if match.status == "finished" else None

    match = wait_until(finished, 60, "the sweeper and a worker to play the practice match", poll_s=0.2)
    assert match.tournament_id is None and match.attempts == 1
    assert all(s.faults == 0 for s in match.seats), [(s.seat, s.faults) for s in match.seats]
    assert all(by == "bot" for _, _, by, *_ in match.actions)  # the house seat too: never "disconnected"
    with sessions() as session:
        rated = select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
        assert session.scalar(rated) == 0
    assert replay_match(stored_match(sessions, match_id)).ok
