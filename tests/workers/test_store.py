"""The workers' transactions: claims, leases, exactly one result, ratings that never lose an
update under concurrency (threads and processes), on SQLite and on PostgreSQL (the
``postgres_url`` fixture: a throwaway cluster, or ``ATOUT_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import itertools
import multiprocessing
import random
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select, text

from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.match import MatchOutcome, Step
from atout_arena.core.models import Base, Bot, Match, MatchSeat, Rating, RatingChange, Tournament
from atout_workers import store

DATABASES = ["sqlite", "postgresql"]


@pytest.fixture(params=DATABASES)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = request.getfixturevalue("postgres_url")  # started only when a test needs it
        engine = make_engine(url)
        Base.metadata.drop_all(engine)
        engine.dispose()
    engine = make_engine(url)
    create_all(engine)
    engine.dispose()
    return url


@pytest.fixture
def sessions(db_url: str):
    engine = make_engine(db_url)
    yield make_session_factory(engine)
    engine.dispose()


def add_bots(sessions, n: int) -> list[int]:
    with sessions() as session:
        bots = [Bot(name=f"b{i}-{random.random()}", owner="t", token_hash=f"{random.random()}")
                for i in range(n)]
        session.add_all(bots)
        session.commit()
        return [b.id for b in bots]


def add_match(sessions, seats: list[int], status: str = "queued", tournament_id: int | None = None,
              number: int | None = None) -> int:
    """A match of ``seats`` (in a new running tournament unless one is given: rated)."""
    with sessions() as session:
        if tournament_id is None:
            t = Tournament(name="t", game="merde", options={}, players=len(seats), status="running")
            session.add(t)
            session.flush()
            tournament_id = t.id
        number = 0 if number is None else number
        match = Match(game="merde", options={"deals": 1}, seed=1, status=status, tournament_id=tournament_id,
                      number=number)
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(seats)]
        session.add(match)
        session.commit()
        return match.id


def outcome(ranking: list[int]) -> MatchOutcome:
    n = len(ranking)
    return MatchOutcome(scores=[10 * (n - p) for p in ranking], ranking=ranking, engine_ranking=ranking,
                        faults=[0] * n, forfeited=[False] * n, think_ms=[1.0] * n,
                        steps=[Step(0, 0, "bid 0", "bot", 1.0)])


def test_a_match_is_claimed_once_and_stored_once(sessions) -> None:
    bots = add_bots(sessions, 3)
    mid = add_match(sessions, bots)
    claimed = store.claim_match(sessions, mid, "r1", stale_s=30)
    assert claimed is not None
    setup, attempts = claimed
    assert attempts == 1 and [s.bot_id for s in setup.seats] == bots and setup.options == {"deals": 1}
    assert store.claim_match(sessions, mid, "r2", stale_s=30) is None  # alive elsewhere
    assert store.store_result(sessions, mid, "r2", outcome([1, 2, 3])) is None  # not the holder
    done = store.store_result(sessions, mid, "r1", outcome([1, 2, 3]))
    assert done is not None and set(done.ratings) == set(bots) and done.tournament_done is True
    assert store.store_result(sessions, mid, "r1", outcome([3, 2, 1])) is None  # never twice
    assert store.claim_match(sessions, mid, "r3", stale_s=0) is None  # finished: nobody plays it again
    with sessions() as session:
        match = session.get(Match, mid)
        assert match.status == "finished" and match.ranking == [1, 2, 3] and match.outcome == "finished"
        assert [(s.place, s.score) for s in match.seats] == [(1, 20), (2, 10), (3, 0)]
        assert len(session.scalars(select(RatingChange).where(RatingChange.match_id == mid)).all()) == 3


def test_practice_matches_are_not_rated(sessions) -> None:
    bots = add_bots(sessions, 2)
    with sessions() as session:
        match = Match(game="fool", options={}, seed=1, status="queued")
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(bots)]
        session.add(match)
        session.commit()
        mid = match.id
    assert store.claim_match(sessions, mid, "r", 30)
    done = store.store_result(sessions, mid, "r", outcome([1, 2]))
    assert done is not None and done.ratings == {} and done.tournament_id is None
    with sessions() as session:
        assert session.scalars(select(Rating).where(Rating.bot_id.in_(bots))).all() == []


def test_a_silent_lease_holder_loses_its_match_to_the_next(sessions) -> None:
    bots = add_bots(sessions, 3)
    mid = add_match(sessions, bots)
    assert store.claim_match(sessions, mid, "r1", stale_s=30)
    assert store.heartbeat(sessions, [(mid, "r1")]) == set()
    time.sleep(0.05)
    assert store.stale_running(sessions, stale_s=10) == []
    assert store.stale_running(sessions, stale_s=0.01) == [mid]  # back to queued
    claimed = store.claim_match(sessions, mid, "r2", stale_s=30)
    assert claimed is not None and claimed[1] == 2
    assert store.heartbeat(sessions, [(mid, "r1"), (mid, "r2")]) == {mid}  # r1's lease is lost
    assert store.store_result(sessions, mid, "r1", outcome([1, 2, 3])) is None
    assert store.store_result(sessions, mid, "r2", outcome([1, 2, 3])) is not None


def test_a_heartbeat_renews_only_the_matches_it_names(sessions) -> None:
    bots = add_bots(sessions, 3)
    named, other = add_match(sessions, bots), add_match(sessions, bots)
    for mid in (named, other):
        assert store.claim_match(sessions, mid, "r1", stale_s=30)
    with sessions() as session:
        claimed_at = dict(session.execute(select(Match.id, Match.heartbeat_at)).all())
    time.sleep(0.05)
    assert store.heartbeat(sessions, [(named, "r1")]) == set()
    with sessions() as session:
        beaten = dict(session.execute(select(Match.id, Match.heartbeat_at)).all())
    assert beaten[named] > claimed_at[named] and beaten[other] == claimed_at[other]


def test_a_match_its_lease_holder_finished_is_not_a_lost_lease(sessions, caplog) -> None:
    from atout_workers.world import Heartbeater

    bots = add_bots(sessions, 3)
    finished, taken = add_match(sessions, bots), add_match(sessions, bots)
    beats = Heartbeater(sessions, interval_s=3600)
    leases = {}
    for mid in (finished, taken):
        assert store.claim_match(sessions, mid, "r1", stale_s=30)
        leases[mid] = beats.add(mid, "r1")
    # The result is stored while the heartbeat is on its way (the lease not yet removed): over,
    # not lost. The other match went stale and another worker took it: lost.
    assert store.store_result(sessions, finished, "r1", outcome([1, 2, 3])) is not None
    assert store.heartbeat(sessions, [(finished, "r1")]) == set()
    time.sleep(0.05)
    assert store.stale_running(sessions, stale_s=0.01) == [taken]
    assert store.claim_match(sessions, taken, "r2", stale_s=30)
    with caplog.at_level("WARNING", logger="atout_workers.world"):
        beats.beat_once()
        beats.remove(leases[finished])
        beats.beat_once()
    beats.stop()
    assert not leases[finished].lost.is_set() and leases[taken].lost.is_set()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2 and all(f"match {taken}:" in w for w in warnings), warnings


def test_a_running_match_with_a_stale_heartbeat_can_be_claimed_directly(sessions) -> None:
    bots = add_bots(sessions, 3)
    mid = add_match(sessions, bots)
    assert store.claim_match(sessions, mid, "r1", stale_s=30)
    time.sleep(0.05)
    assert store.claim_match(sessions, mid, "r2", stale_s=30) is None
    assert store.claim_match(sessions, mid, "r2", stale_s=0.01) is not None


def test_the_last_result_of_a_tournament_says_so(sessions) -> None:
    bots = add_bots(sessions, 3)
    with sessions() as session:
        t = Tournament(name="t", game="merde", options={}, players=3, status="running")
        session.add(t)
        session.commit()
        tid = t.id
    ids = [add_match(sessions, bots, tournament_id=tid, number=i) for i in range(3)]
    flags = []
    for i, mid in enumerate(ids):
        assert store.claim_match(sessions, mid, f"r{i}", 30)
        if i == 1:
            done = store.fail_match(sessions, mid, f"r{i}", "boom")
        else:
            done = store.store_result(sessions, mid, f"r{i}", outcome([1, 2, 3]))
        assert done is not None
        flags.append(done.tournament_done)
    assert flags == [False, False, True]
    assert store.unfinalized_tournaments(sessions) == [tid]


def _store_many(url: str, jobs: list[tuple[int, str, list[int]]]) -> int:
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    stored = 0
    for mid, runner, ranking in jobs:
        for attempt in range(50):
            try:
                if store.store_result(sessions, mid, runner, outcome(ranking)) is not None:
                    stored += 1
                break
            except Exception as exc:  # PostgreSQL may end a transaction as a deadlock victim: retry
                if "deadlock" not in str(exc).lower() or attempt == 49:
                    raise
    engine.dispose()
    return stored


def test_concurrent_results_never_lose_a_rating_update(sessions, db_url: str) -> None:
    """Many matches between the same few bots stored at once by 6 threads and 2 processes:
    every rating change is chained on the one before it (no lost update), the ratings add up
    (Elo is zero-sum) and each bot counts every one of its matches."""
    rng = random.Random(5)
    bots = add_bots(sessions, 4)
    jobs = []
    for i in range(120):
        seats = rng.sample(bots, rng.choice([2, 3, 4]))
        mid = add_match(sessions, seats)
        assert store.claim_match(sessions, mid, f"r{i}", 30)
        ranking = rng.sample(range(1, len(seats) + 1), len(seats))
        jobs.append((mid, f"r{i}", ranking))
    # every match twice: a duplicate delivery must not count
    chunks = [jobs[i::8] + jobs[(i + 1) % 8::8] for i in range(8)]
    results: list[int] = []
    threads = [threading.Thread(target=lambda c=c: results.append(_store_many(db_url, c)))
               for c in chunks[:6]]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        async_results = [pool.apply_async(_store_many, (db_url, c)) for c in chunks[6:]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results += [r.get(timeout=120) for r in async_results]
    assert sum(results) == len(jobs)  # each match stored exactly once
    with sessions() as session:
        ratings = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == "merde"))}
        per_bot = {b: 0 for b in bots}
        for mid, _, _ in jobs:
            for seat in session.get(Match, mid).seats:
                per_bot[seat.bot_id] += 1
        assert {b: r.matches for b, r in ratings.items()} == per_bot
        assert sum(r.rating for r in ratings.values()) == pytest.approx(1500 * len(bots))
        for bot in bots:
            history = session.scalars(
                select(RatingChange).where(RatingChange.bot_id == bot).order_by(RatingChange.id)
            ).all()
            assert len(history) == per_bot[bot]
            for before, after in itertools.pairwise(history):
                assert after.before == pytest.approx(before.after)  # chained: nothing lost
            assert history[-1].after == pytest.approx(ratings[bot].rating)
        assert session.execute(text("SELECT count(*) FROM rating_history")).scalar() == sum(per_bot.values())


def test_a_bulk_stored_schedule_reads_back_as_orm_rows(sessions) -> None:
    """``create_tournament`` stores its schedule through ``insert_many`` (the driver's
    executemany): every value must read back as the ORM would have written it, on both
    databases (types processed, defaults filled, columns in the right places)."""
    from atout_arena.core.schedule import deal_suits
    from atout_arena.services.tournaments import create_tournament

    bots = add_bots(sessions, 5)
    with sessions() as session:
        names = [session.get(Bot, b).name for b in bots]
    tid = create_tournament(sessions, name="bulk", bots=names, game="merde", players=4, games_per_pairing=4,
                            duplicate=True, options={"deals": 2}, move_ms=700, seed=11)
    with sessions() as session:
        t = session.get(Tournament, tid)
        query = select(Match).where(Match.tournament_id == tid).order_by(Match.number)
        matches = session.scalars(query).all()
        assert len(matches) == len({m.number for m in matches}) > 4
        for m in matches:
            assert (m.game, m.options, m.move_ms, m.status, m.attempts, m.errors) == \
                ("merde", {"deals": 2}, 700, "pending", 0, 0)
            assert m.suits == deal_suits(11, m.deal_group, m.rotation, t.deal_key)
            assert m.created_at is not None and m.queued_at is None and m.actions is None
            assert [s.seat for s in m.seats] == [0, 1, 2, 3] and {s.bot_id for s in m.seats} <= set(bots)
            assert all((s.faults, s.forfeited, s.absent, s.think_ms, s.version) == (0, False, False, 0.0, "")
                       for s in m.seats)
        rotations = {(m.deal_group, m.rotation) for m in matches}
        assert len(rotations) == len(matches)  # every rotation of every deal group once


def test_insert_many_puts_values_in_their_columns_and_asks_for_computed_defaults(sessions) -> None:
    import datetime

    from atout_arena.core.db import insert_many

    bots = add_bots(sessions, 1)
    add_match(sessions, bots)  # a tournament and a match to hang new rows on
    with sessions() as session:
        tid = session.scalars(select(Tournament.id).order_by(Tournament.id.desc())).first()
        when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
        # keys in an order unlike the table's, a shared JSON value and a shared datetime
        insert_many(session.connection(), Match.__table__, ("seed", "number", "game"),
                    [(7, 100, "tiercon"), (8, 101, "fool")], options={"a": [1]}, tournament_id=tid,
                    created_at=when)
        with pytest.raises(ValueError, match=r"give (options|created_at)"):
            insert_many(session.connection(), Match.__table__, ("seed", "number", "game"), [(9, 102, "fool")])
        session.commit()
        rows = session.scalars(select(Match).where(Match.tournament_id == tid, Match.number >= 100)
                               .order_by(Match.number)).all()
        assert [(m.seed, m.number, m.game, m.options, m.status, m.move_ms) for m in rows] == \
            [(7, 100, "tiercon", {"a": [1]}, "pending", 1000), (8, 101, "fool", {"a": [1]}, "pending", 1000)]
        assert all(m.created_at.replace(tzinfo=datetime.UTC) == when for m in rows)


def test_a_claim_reads_the_whole_setup_and_a_result_writes_every_seat(sessions) -> None:
    """The claim and the result are Core statements (no ORM objects): every field they read
    and write is checked here, on both databases."""
    from dataclasses import replace as copy

    from atout_arena.core.match import FaultPolicy

    bots = add_bots(sessions, 3)
    with sessions() as session:
        t = Tournament(name="t", game="merde", options={}, players=3, status="running", absent_grace_s=7.5)
        session.add(t)
        session.flush()
        match = Match(game="merde", options={"deals": 2}, seed=2**62 + 5, status="queued", tournament_id=t.id,
                      move_ms=1500, time_bank_ms=200, max_faults=2, suits="hdsc")
        match.seats = [MatchSeat(seat=s, bot_id=b, version="v2" if s == 1 else "")
                       for s, b in enumerate(bots)]
        session.add(match)
        session.get(Bot, bots[2]).move_ms = 4000
        session.commit()
        mid, names = match.id, [session.get(Bot, b).name for b in bots]
    claimed = store.claim_match(sessions, mid, "r1", stale_s=30)
    assert claimed is not None
    setup, attempts = claimed
    assert (setup.match_id, setup.game, setup.options, setup.seed, setup.suits) == \
        (str(mid), "merde", {"deals": 2}, 2**62 + 5, "hdsc")
    assert (setup.absent_grace_s, attempts) == (7.5, 1)
    assert setup.policy == FaultPolicy(1500, 200, 2)
    assert [(s.bot_id, s.name, s.version, s.move_ms) for s in setup.seats] == [
        (bots[0], names[0], "", 0), (bots[1], names[1], "v2", 0), (bots[2], names[2], "", 4000)]
    result = copy(outcome([2, 1, 3]), faults=[1, 0, 3], forfeited=[False, False, True],
                  think_ms=[1.5, 2.5, 0.0])
    done = store.store_result(sessions, mid, "r1", result, played_versions=["a", "v2", "c"], absent=[2])
    assert done is not None and done.bot_names == dict(zip(bots, names, strict=True))
    assert set(done.ratings) == set(bots[:2])  # the absent seat is not rated
    with sessions() as session:
        match = session.get(Match, mid)
        assert (match.status, match.lease_id, match.scores, match.error) == \
            ("finished", "r1", [10, 20, 0], None)
        assert match.actions == [step.to_json() for step in result.steps] and match.finished_at is not None
        assert [(s.score, s.place, s.faults, s.forfeited, s.think_ms, s.played_version, s.absent)
                for s in sorted(match.seats, key=lambda s: s.seat)] == [
            (10, 2, 1, False, 1.5, "a", False), (20, 1, 0, False, 2.5, "v2", False),
            (0, 3, 3, True, 0.0, "c", True)]
        ratings = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.bot_id.in_(bots)))}
        assert set(ratings) == set(bots[:2]) and all(r.matches == 1 for r in ratings.values())
        assert ratings[bots[1]].rating > ratings[bots[0]].rating  # the winner gained
        changes = session.scalars(select(RatingChange).where(RatingChange.match_id == mid)).all()
        assert {(c.bot_id, c.after) for c in changes} == {(b, ratings[b].rating) for b in bots[:2]}
    failed_mid = add_match(sessions, bots)
    assert store.claim_match(sessions, failed_mid, "r2", stale_s=30) is not None
    gone = store.fail_match(sessions, failed_mid, "r2", "boom" * 2000)
    assert gone is not None and gone.game == "merde" and gone.tournament_done is True
    with sessions() as session:
        failed = session.get(Match, failed_mid)
        assert failed.status == "failed" and failed.error == ("boom" * 2000)[:4000]
