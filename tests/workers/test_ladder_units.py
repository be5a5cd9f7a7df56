"""The ladder's own logic: the rating of a duplicate set (OpenSkill Plackett-Luce), the
matchmaker's choice of table, statistical claims over many seeds with simulated outcomes through
the real choice and rating code, and the service's tick on a real database (matches finished by
hand: who is seated, cancelled, rated). Real bots on real workers: tests/api/test_ladder.py."""

from __future__ import annotations

import math
import random
import time
from time import time_ns

import pytest
from sqlalchemy import select

from atout_arena.core.models import Bot, LadderMember, LadderSet, Match
from atout_arena.core.vocabulary import MATCH_DONE, LadderStatus, MatchStatus
from atout_arena.services.competitions import CompetitionError, CompetitionSpec
from atout_arena.services.ladders import create_ladder, ladder_summary, set_status, tick
from atout_arena.services.matchmaking import (
    Candidate,
    choose_table,
    information,
    ordinal,
    prior,
    quality,
    rate,
    set_ranks,
)


@pytest.fixture(autouse=True)
def no_ladder_left_running(sessions):
    """The session's database is shared with the real-process tests: a ladder left running here
    (an open one above all) would be ticked by their workers' sweeper and seat their bots."""
    yield
    from sqlalchemy import update

    from atout_arena.core.models import Ladder

    with sessions() as session:
        session.execute(update(Ladder).where(Ladder.status == LadderStatus.RUNNING)
                        .values(status=LadderStatus.PAUSED))
        session.commit()


# -- the rating of a set --------------------------------------------------------------------------


def test_a_set_ranks_by_opponents_beaten_over_its_games() -> None:
    # two games of a 2-player set: bot 0 sits in seat 0 then seat 1
    assert set_ranks([[1, 2], [2, 1]], [[0, 1], [1, 0]]) == [1, 2]  # bot 0 won both
    assert set_ranks([[1, 2], [1, 2]], [[0, 1], [1, 0]]) == [1, 1]  # one each: a tie
    # three bots, one game: places 2, 1, 3 by seat; bot i in seat i
    assert set_ranks([[2, 1, 3]], [[0, 1, 2]]) == [2, 1, 3]
    assert set_ranks([[1, 1, 3]], [[0, 1, 2]]) == [1, 1, 3]


def test_the_winner_gains_the_loser_loses_both_grow_surer() -> None:
    mu, sigma = prior()
    assert (mu, round(sigma, 4)) == (25.0, round(25 / 3, 4))  # a new bot: wide
    (wmu, wsig), (lmu, lsig) = rate([(mu, sigma), (mu, sigma)], [1, 2])
    assert wmu > mu > lmu and wsig < sigma and lsig < sigma
    (a, asig), (b, _) = rate([(mu, sigma), (mu, sigma)], [1, 1])
    assert math.isclose(a, b) and math.isclose(a, mu, abs_tol=1e-9) and asig < sigma  # a draw
    # an upset moves more than the expected result
    strong, weak = (35.0, 2.0), (15.0, 2.0)
    expected = rate([strong, weak], [1, 2])[0][0] - 35.0
    upset = 35.0 - rate([strong, weak], [2, 1])[0][0]
    assert upset > expected > 0
    assert ordinal(30.0, 2.0) == 24.0


# -- the choice of table --------------------------------------------------------------------------


def c(bot: int, mu: float = 25.0, sigma: float = 25 / 3, load: float = 0.0, busy: int = 0) -> Candidate:
    return Candidate(bot, mu, sigma, load, busy)


def test_information_prefers_close_and_uncertain_tables() -> None:
    close = [c(1, 25, 2), c(2, 25.5, 2)]
    apart = [c(1, 25, 2), c(3, 40, 2)]
    assert quality(close) > quality(apart) and information(close) > information(apart)
    assert information([c(1, 25, 8), c(2, 25, 8)]) > information([c(1, 25, 2), c(2, 25, 2)])
    pool = [c(1, 25, 2), c(2, 25.5, 2), c(3, 40, 2)]
    assert set(choose_table(pool, 2, max_busy=9, slack=8, rng=random.Random(1)) or ()) == {1, 2}


def test_a_starved_bot_is_seated_first_and_a_hog_waits() -> None:
    settled = [c(i, 25 + i, 1.0, load=100) for i in range(1, 5)]
    late = c(9, 25, 1.0, load=10)  # more than slack games below the mean: seated at every choice
    for seed in range(10):
        assert 9 in (choose_table([*settled, late], 2, max_busy=9, slack=8, rng=random.Random(seed)) or ())
    hog = c(7, 25, 8.0, load=400)  # the most uncertain, yet above CAP x the mean
    pool = [*settled, hog]
    assert hog.load > 8 + sum(x.load for x in pool) / len(pool)
    for seed in range(10):
        assert 7 not in (choose_table(pool, 2, max_busy=9, slack=8, rng=random.Random(seed)) or ())


def test_busy_bots_and_a_short_pool_give_no_table() -> None:
    assert choose_table([c(1), c(2)], 3, max_busy=2, slack=8, rng=random.Random(0)) is None
    assert choose_table([c(1, busy=2), c(2), c(3)], 3, max_busy=2, slack=8, rng=random.Random(0)) is None
    table = choose_table([c(1, busy=2), c(2), c(3)], 2, max_busy=2, slack=8, rng=random.Random(0))
    assert set(table or ()) == {2, 3}
    a = choose_table([c(i) for i in range(6)], 3, max_busy=2, slack=8, rng=random.Random(5))
    assert a == choose_table([c(i) for i in range(6)], 3, max_busy=2, slack=8, rng=random.Random(5))  # seeded


# -- statistical claims, simulated outcomes ---------------------------------------------------------


def simulate(strengths: list[float], players: int, seed: int, sets: int, *,
             late: int | None = None, join_at: int = 0) -> tuple[list[list[float]], list[int]]:
    """Play ``sets`` duplicate sets of bots of known strength through the real choice and rating:
    a set's ranking is a Plackett-Luce draw of the true strengths. Returns the ordinals after
    each set and the games each bot played. ``late``: a bot that joins after ``join_at`` sets."""
    rng = random.Random(seed)
    mu0, sig0 = prior()
    rating = {i: (mu0, sig0) for i in range(len(strengths))}
    games = {i: 0 for i in rating}
    baseline = {i: 0.0 for i in rating}
    size = players if players == 2 else 2 * players
    history: list[list[float]] = []
    for k in range(sets):
        pool_ids = [i for i in rating if late is None or i != late or k >= join_at]
        if late is not None and k == join_at:
            others = [games[i] + baseline[i] for i in pool_ids if i != late]
            baseline[late] = sum(others) / len(others)
        pool = [Candidate(i, *rating[i], games[i] + baseline[i]) for i in pool_ids]
        table = choose_table(pool, players, max_busy=9, slack=4 * size, rng=rng)
        assert table is not None
        left = list(table)
        order = []
        while left:  # Plackett-Luce: the next place goes to a bot with probability e^strength
            weights = [math.exp(strengths[i]) for i in left]
            pick = rng.choices(left, weights)[0]
            order.append(pick)
            left.remove(pick)
        ranks = [order.index(i) + 1 for i in table]
        for i, after in zip(table, rate([rating[i] for i in table], ranks), strict=True):
            rating[i] = after
            games[i] += size
        history.append([ordinal(*rating[i]) for i in range(len(strengths))])
    return history, [games[i] for i in range(len(strengths))]


def ordered_by(ordinals: list[float]) -> list[int]:
    return sorted(range(len(ordinals)), key=lambda i: -ordinals[i])


@pytest.mark.parametrize("bots", [3, 6])
def test_the_ladder_orders_bots_of_known_strength_over_many_seeds(bots: int) -> None:
    strengths = [1.5 * (bots - 1 - i) / (bots - 1) * 2 for i in range(bots)]  # bot 0 the strongest
    right = 0
    seeds = 30
    for seed in range(seeds):
        history, games = simulate(strengths, 2, seed, 100 * bots)
        right += ordered_by(history[-1]) == list(range(bots))
        assert max(games) <= 2 * min(games)  # a bounded share: nobody starves, nobody hogs
    assert right >= seeds - 3, f"{right}/{seeds} seeds ordered"


def test_a_late_bot_gets_its_share_and_reaches_its_place_over_many_seeds() -> None:
    strengths = [3.0, 1.5, 0.0]  # the late bot (0) is the strongest
    placed = 0
    for seed in range(30):
        history, games = simulate(strengths, 2, seed, 200, late=0, join_at=100)
        placed += ordered_by(history[-1])[0] == 0
        # since it joined it played at least its share of the 100 sets (2 seats of 3)
        assert games[0] >= 0.8 * (100 * 2 * 2 / 3), games
    assert placed >= 28


# -- the service's tick on a real database --------------------------------------------------------


def finish(sessions, match_ids: list[int], rankings: dict[int, int]) -> None:
    """Store a result by hand: ``rankings[bot] = place`` for each match's seats."""
    with sessions() as session:
        for match_id in match_ids:
            match = session.get(Match, match_id)
            match.status = MatchStatus.FINISHED
            match.ranking = [rankings[s.bot_id] for s in sorted(match.seats, key=lambda s: s.seat)]
        session.commit()


def test_tick_seats_connected_members_and_rates_each_set_once(sessions, make_bot) -> None:
    a, b, d = (make_bot(f"lad-{x}")[0] for x in "abd")
    spec = CompetitionSpec.of("tiercon")
    with pytest.raises(CompetitionError, match="at least 2"):
        create_ladder(sessions, name=f"short-{a.id}", spec=spec, bots=[a.name])
    ladder_id = create_ladder(sessions, name=f"lad-{a.id}", spec=spec, bots=[a.name, b.name, d.name],
                              target_in_flight=4, seed=7)
    with pytest.raises(CompetitionError) as taken:
        create_ladder(sessions, name=f"lad-{a.id}", spec=spec, bots=[a.name, b.name])
    assert taken.value.kind == "conflict"
    live = {a.id, b.id}
    first = tick(sessions, ladder_id, lambda: live)
    assert len(first.match_ids) == 4  # two sets of two games: the target in flight
    with sessions() as session:
        matches = [session.get(Match, m) for m in first.match_ids]
        assert all({s.bot_id for s in m.seats} == {a.id, b.id} for m in matches)  # d is away
        assert len({(m.deal_group, m.seed) for m in matches}) == 2  # one deal per set, both rotations
    assert tick(sessions, ladder_id, lambda: live).match_ids == []  # full: nothing more
    finish(sessions, first.match_ids[:2], {a.id: 1, b.id: 2})  # a wins set 0 in both seats
    second = tick(sessions, ladder_id, lambda: live)
    assert second.rated == 1 and len(second.match_ids) == 2
    again = tick(sessions, ladder_id, lambda: live)
    assert again.rated == 0  # rated once
    summary = ladder_summary(sessions, ladder_id, live)
    top = summary["standings"][0]
    assert top["bot"] == a.name and top["games"] == 2 and top["sets"] == 1 and top["connected"]
    assert summary["sets"]["rated"] == 1
    # one rotation of a set at a time: rotation 0 queued, the next pending until it is done
    assert summary["matches"]["queued"] == 2 and summary["matches"]["pending"] == 2
    assert sorted(second.to_send) == sorted(second.match_ids[::2])
    with sessions() as session:
        suits = {session.get(Match, m).suits for m in second.match_ids}
        assert len(suits) == 2 and None not in suits  # each rotation under its own suit permutation

    # b disconnects: the queued games of its sets are cancelled (void), nobody is seated
    gone = tick(sessions, ladder_id, lambda: {a.id, d.id})
    assert gone.cancelled == 4 and len(gone.match_ids) == 4  # the target in flight again, without b
    with sessions() as session:
        seated = [session.get(Match, m) for m in gone.match_ids]
        assert all({s.bot_id for s in m.seats} == {a.id, d.id} for m in seated)
        # d is disabled: out of the pool at the next tick, its queued games cancelled
        session.get(Bot, d.id).disabled = True
        session.commit()
    out = tick(sessions, ladder_id, lambda: {a.id, b.id, d.id})
    assert out.cancelled == 4 and out.match_ids  # a and b play on
    with sessions() as session:
        statuses = session.scalars(select(LadderSet.status).where(LadderSet.ladder_id == ladder_id)).all()
        assert statuses.count("void") == 2  # b's two sets, settled by this tick
        for m in out.match_ids:
            assert d.id not in {s.bot_id for s in session.get(Match, m).seats}
        session.get(Bot, d.id).disabled = False
        session.commit()

    # paused: nothing seated, the sets in flight still rated
    assert set_status(sessions, ladder_id, LadderStatus.PAUSED)
    assert not set_status(sessions, ladder_id, LadderStatus.PAUSED)
    with sessions() as session:
        flying = session.scalars(select(Match.id).where(Match.ladder_id == ladder_id,
                                                        Match.status.not_in(MATCH_DONE))).all()
    finish(sessions, list(flying), {a.id: 2, b.id: 1, d.id: 1})
    paused = tick(sessions, ladder_id, lambda: {a.id, b.id, d.id})
    assert paused.match_ids == [] and paused.rated >= 1 and not paused.running


def test_an_open_ladder_takes_in_connected_bots_with_a_baseline(sessions, make_bot) -> None:
    a, b, late = (make_bot(f"open-{x}")[0] for x in ("a", "b", "late"))
    ladder_id = create_ladder(sessions, name=f"open-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              target_in_flight=2, seed=3)
    first = tick(sessions, ladder_id, lambda: [str(a.id), str(b.id), "house-x"])
    finish(sessions, first.match_ids, {a.id: 1, b.id: 2})
    tick(sessions, ladder_id, lambda: [str(a.id), str(b.id)])
    with sessions() as session:
        members = {m.bot_id: m for m in session.scalars(
            select(LadderMember).where(LadderMember.ladder_id == ladder_id))}
    assert set(members) == {a.id, b.id}
    tick(sessions, ladder_id, lambda: [str(a.id), str(b.id), str(late.id)])
    with sessions() as session:
        joined = session.get(LadderMember, (ladder_id, late.id))
        assert joined is not None and joined.baseline == 2.0 and joined.games == 0  # the others' mean


# -- one chain of periodic ticks per ladder (real Redis) ------------------------------------------


def test_one_chain_of_periodic_ticks_per_ladder(redis_client) -> None:
    from types import SimpleNamespace

    from atout_arena.core.keys import ladder_armed_key
    from atout_arena.core.settings import Settings
    from atout_workers.tasks import arm_ladder, disarm_ladder

    sent: list[tuple[int, float | None, str]] = []

    class Recorder:  # records what would be sent (the tasks' own transport is not under test)
        def ladder_tick(self, ladder_id: int, *, countdown: float | None = None, chain: str = "") -> None:
            sent.append((ladder_id, countdown, chain))

    world = SimpleNamespace(settings=Settings(ladder_tick_s=0.5), redis=redis_client, tasks=Recorder())
    ladder_id = 10**9 + time_ns() % 10**6
    key = ladder_armed_key(ladder_id)
    redis_client.delete(key)
    assert arm_ladder(world, ladder_id)  # no chain yet: a plain tick starts one
    (_, countdown, token), = sent
    assert countdown == 0.5 and redis_client.get(key).decode() == token
    assert not arm_ladder(world, ladder_id)  # a second plain tick: the chain exists
    assert not arm_ladder(world, ladder_id, chain="another")  # a stray chain stops
    assert arm_ladder(world, ladder_id, chain=token)  # the chain's own tick goes on
    assert len(sent) == 2 and sent[1][2] != token and redis_client.get(key).decode() == sent[1][2]
    assert 0 < redis_client.pttl(key) <= 2500  # outlives a tick's delay, not much more
    disarm_ladder(world, ladder_id, "another")
    assert redis_client.exists(key)
    disarm_ladder(world, ladder_id, sent[1][2])  # the ladder paused: its chain's key goes
    assert not redis_client.exists(key)
    assert arm_ladder(world, ladder_id)  # resumed: a new chain at once


def test_the_ladder_metrics_are_valid_prometheus_text(sessions, make_bot) -> None:
    import shutil
    import subprocess

    from prometheus_client import CollectorRegistry, generate_latest

    from atout_arena.services.ladders import LadderCollector

    a, b = (make_bot(f"prom-{x}")[0] for x in "ab")
    ladder_id = create_ladder(sessions, name=f"prom-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              bots=[a.name, b.name], target_in_flight=2, seed=1)
    first = tick(sessions, ladder_id, lambda: {a.id, b.id})
    finish(sessions, first.match_ids[:1], {a.id: 1, b.id: 2})
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LadderCollector(sessions))
    text = generate_latest(registry).decode()
    assert f'atout_ladder_matches_total{{ladder="prom-{a.id}"}} 1.0' in text
    assert f'atout_ladder_matches_in_flight{{ladder="prom-{a.id}"}} 1.0' in text
    assert f'atout_ladder_mu{{bot="{a.name}",ladder="prom-{a.id}"}} 25.0' in text  # no set rated yet
    assert f'atout_ladder_sigma{{bot="{b.name}",ladder="prom-{a.id}"}}' in text
    promtool = shutil.which("promtool")
    assert promtool, "promtool is needed: apt-get install -y --no-install-recommends prometheus"
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_three_seat_sets_rotate_the_table_and_its_mirror_and_rate_once(sessions, make_bot) -> None:
    bots = [make_bot(f"three-{i}")[0] for i in range(4)]
    ladder_id = create_ladder(sessions, name=f"three-{bots[0].id}", spec=CompetitionSpec.of("fool", 3),
                              bots=[b.name for b in bots], target_in_flight=6, seed=5)
    live = {b.id for b in bots}
    first = tick(sessions, ladder_id, lambda: live)
    assert len(first.match_ids) == 6  # one set: 3 rotations of the table, 3 of its mirror
    with sessions() as session:
        matches = [session.get(Match, m) for m in first.match_ids]
        tables = [tuple(s.bot_id for s in sorted(m.seats, key=lambda s: s.seat)) for m in matches]
        assert len(set(tables)) == 6 and len({m.seed for m in matches}) == 1
        seated = set(tables[0])
    place = {b: i + 1 for i, b in enumerate(sorted(seated))}  # the lowest id wins every game
    finish(sessions, first.match_ids, place)
    second = tick(sessions, ladder_id, lambda: live)
    assert second.rated == 1
    standings = ladder_summary(sessions, ladder_id)["standings"]
    top = [r for r in standings if r["bot_id"] in seated]
    assert [r["bot_id"] for r in top] == sorted(seated) and all(r["games"] == 6 for r in top)
    assert second.match_ids  # the fourth bot, starved, is in the next set
    with sessions() as session:
        nxt = session.get(Match, second.match_ids[0])
        assert (live - seated) <= {s.bot_id for s in nxt.seats}


def test_three_seat_tables_order_bots_over_many_seeds() -> None:
    strengths = [2.0, 1.0, 0.0, -1.0]
    right = sum(ordered_by(simulate(strengths, 3, seed, 150)[0][-1]) == [0, 1, 2, 3] for seed in range(20))
    assert right >= 18, f"{right}/20"


@pytest.fixture(params=["sqlite", "postgresql"])
def own_sessions(request: pytest.FixtureRequest, tmp_path):
    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.models import Base

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ladder.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
        engine = make_engine(url)
        Base.metadata.drop_all(engine)
        engine.dispose()
    engine = make_engine(url)
    create_all(engine)
    yield make_session_factory(engine)
    engine.dispose()


def test_concurrent_ticks_rate_every_set_once_and_lose_no_update(own_sessions, monkeypatch) -> None:
    import threading

    from sqlalchemy.exc import OperationalError

    from atout_arena.services import ladders as service

    sessions = own_sessions
    real_rate = service.rate

    def slow_rate(*args, **kwargs):
        time.sleep(0.2)  # hold the set's transaction open: the other ticks wait or read meanwhile
        return real_rate(*args, **kwargs)

    monkeypatch.setattr(service, "rate", slow_rate)
    with sessions() as session:
        bots = [Bot(name=f"c{i}", owner="t", token_hash=f"hash-{i}") for i in range(3)]
        session.add_all(bots)
        session.commit()
        ids = [b.id for b in bots]
    ladder_id = create_ladder(sessions, name="concurrent", spec=CompetitionSpec.of("tiercon"),
                              bots=[f"c{i}" for i in range(3)], target_in_flight=12, seed=2)
    first = tick(sessions, ladder_id, lambda: ids)
    scheduled = len(first.match_ids) // 2
    assert scheduled >= 4  # sets sharing bots, to be rated at once
    finish(sessions, first.match_ids, {ids[0]: 1, ids[1]: 2, ids[2]: 3})
    barrier = threading.Barrier(6)
    rated: list[int] = []

    def run() -> None:
        barrier.wait()
        for _ in range(20):  # a locked database is retried, as Celery retries the task
            try:
                rated.append(tick(sessions, ladder_id, lambda: []).rated)
                return
            except OperationalError:
                time.sleep(0.05)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(rated) == scheduled and len(rated) == 6
    with sessions() as session:
        members = {m.bot_id: m for m in session.scalars(select(LadderMember))}
        sets = session.scalars(select(LadderSet).where(LadderSet.ladder_id == ladder_id)).all()
        for bot in ids:
            mine = [s for s in sets if bot in s.bots]
            assert members[bot].sets == len(mine) and members[bot].games == 2 * len(mine)


def test_a_tick_rating_a_later_set_reads_the_ratings_after_another_ticks_commit(
    own_sessions, monkeypatch
) -> None:
    """Tick A rates set 1 while tick B, which also saw set 2 finished, waits for it: B must rate
    set 2 from the ratings A committed, not from what it read before (a lost update)."""
    import threading

    from atout_arena.services import ladders as service

    sessions = own_sessions
    with sessions() as session:
        bots = [Bot(name=f"s{i}", owner="t", token_hash=f"stale-{i}") for i in range(2)]
        session.add_all(bots)
        session.commit()
        ids = [b.id for b in bots]
    ladder_id = create_ladder(sessions, name="stale", spec=CompetitionSpec.of("tiercon"),
                              bots=["s0", "s1"], target_in_flight=4, seed=4)
    first = tick(sessions, ladder_id, lambda: ids)
    assert len(first.match_ids) == 4  # sets 0 and 1, both of the same two bots
    with sessions() as session:
        by_set: dict[int, list[int]] = {}
        for m in first.match_ids:
            by_set.setdefault(session.get(Match, m).deal_group, []).append(m)
    set_a, set_b = sorted(by_set)
    finish(sessions, by_set[set_a], {ids[0]: 1, ids[1]: 2})
    a_read, b_read, a_claimed = threading.Event(), threading.Event(), threading.Event()
    who = threading.local()
    real_absent, real_rate = service._absent, service.rate

    def absent(match):
        if getattr(who, "name", "") == "A" and not a_read.is_set():
            a_read.set()  # A has read the sets (only set A done) and waits for B to read too
            assert b_read.wait(10)
        elif getattr(who, "name", "") == "B" and not b_read.is_set():
            b_read.set()
            # A claims set A first (an event, not a sleep: a loaded machine may keep A from
            # running for longer than any sleep, and B would then rate both sets)
            assert a_claimed.wait(10)
        return real_absent(match)

    def slow_rate(*args, **kwargs):
        if getattr(who, "name", "") == "A":
            a_claimed.set()  # (rate is called after the claim)
            time.sleep(0.5)  # A holds its claim: B waits for it
        return real_rate(*args, **kwargs)

    monkeypatch.setattr(service, "_absent", absent)
    monkeypatch.setattr(service, "rate", slow_rate)
    reports: dict[str, int] = {}

    def run(name: str) -> None:
        who.name = name
        reports[name] = tick(sessions, ladder_id, lambda: []).rated

    a = threading.Thread(target=run, args=("A",))
    a.start()
    assert a_read.wait(10)
    finish(sessions, by_set[set_b], {ids[0]: 1, ids[1]: 2})  # set B done: only B sees it
    b = threading.Thread(target=run, args=("B",))
    b.start()
    a.join(30)
    b.join(30)
    assert reports == {"A": 1, "B": 1}
    with sessions() as session:
        winner = session.get(LadderMember, (ladder_id, ids[0]))
        assert winner.sets == 2 and winner.games == 4  # both sets counted
    mu, sigma = prior()
    once = rate([(mu, sigma), (mu, sigma)], [1, 2])[0]
    twice = rate([once, rate([(mu, sigma), (mu, sigma)], [1, 2])[1]], [1, 2])[0]
    assert winner.mu == pytest.approx(twice[0]) and winner.mu > once[0]


def test_two_ticks_taking_in_one_newcomer_at_once_both_go_on(sessions, make_bot, monkeypatch) -> None:
    from atout_arena.services import ladders as service

    a, b = (make_bot(f"race-{x}")[0] for x in "ab")
    ladder_id = create_ladder(sessions, name=f"race-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              target_in_flight=2, seed=9)
    real_prior = service.prior

    def prior_and_a_rival():
        """The other tick commits the same newcomers between this one's read and its commit."""
        mu, sigma = real_prior()
        with sessions() as other:
            for bot in (a.id, b.id):
                if other.get(LadderMember, (ladder_id, bot)) is None:
                    other.add(LadderMember(ladder_id=ladder_id, bot_id=bot, mu=mu, sigma=sigma))
            other.commit()
        return mu, sigma

    monkeypatch.setattr(service, "prior", prior_and_a_rival)
    report = tick(sessions, ladder_id, lambda: {a.id, b.id})
    assert report.running and len(report.match_ids) == 2  # the rival's rows, and a set seated
    with sessions() as session:
        rows = session.scalars(select(LadderMember).where(LadderMember.ladder_id == ladder_id)).all()
        assert len(rows) == 2


def test_a_ladder_rotation_keeps_its_seed_secret_until_its_whole_set_is_played(sessions, make_bot) -> None:
    from atout_arena.services.deals import duplicate_still_open, release_next, secret_matches

    a, b = (make_bot(f"lad-secret-{x}")[0] for x in "ab")
    ladder_id = create_ladder(sessions, name=f"secret-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              bots=[a.name, b.name], target_in_flight=2)
    report = tick(sessions, ladder_id, lambda: {a.id, b.id})
    first, second = report.match_ids[:2]
    assert report.to_send == [first]
    finish(sessions, [first], {a.id: 1, b.id: 2})
    with sessions() as session:
        done = session.get(Match, first)
        assert first in secret_matches(session, [done]) and duplicate_still_open(session, done)
    assert release_next(sessions, first) == [second]  # the next rotation, once the first is done
    finish(sessions, [second], {a.id: 2, b.id: 1})
    with sessions() as session:
        both = [session.get(Match, m) for m in (first, second)]
        assert secret_matches(session, both) == set() and not duplicate_still_open(session, both[0])
