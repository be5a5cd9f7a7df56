"""The worker's body without Celery: claim, play, publish, store, finalize, replay — with the
real database and Redis, and fake bots (an in-process asker)."""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time

import pytest
from e2e_helpers import stored_match
from sqlalchemy import select

from atout_arena.core.keys import SERVERS_KEY, conn_key, current_key, public_channel, seat_channel
from atout_arena.core.match import Answer, DecisionAsk
from atout_arena.core.metrics import DECISION_SECONDS, MATCHES_TOTAL, metrics_registry
from atout_arena.core.models import Match, Rating, Tournament, TournamentRating
from atout_arena.core.relay import now_ms
from atout_arena.core.replay import replay_match, replay_views
from atout_arena.core.settings import Settings
from atout_arena.core.vocabulary import RunResult
from atout_arena.services.tournaments import (
    cancel_tournament,
    create_tournament,
    finalize_tournament,
    start_tournament,
    tournament_summary,
)
from atout_workers import store
from atout_workers.play import (
    CLAIMS_PER_ATTEMPT,
    _let_go,
    absent_seats,
    claim,
    run_match,
    with_stream_addresses,
)
from atout_workers.world import build_world


@pytest.fixture
def world(database_url: str, redis_url: str):
    w = build_world(Settings(database_url=database_url, redis_url=redis_url, heartbeat_s=0.1,
                             match_stale_s=0.5))
    yield w
    w.close()


def random_asker(seed: int = 0, think_ms: float = 2.0):
    rng = random.Random(seed)

    def ask(a: DecisionAsk) -> Answer:
        return Answer(rng.choice(a.legal_actions), think_ms)

    return ask


def _tournament(world, make_bot, n_bots: int = 3, **spec):
    bots = [make_bot("fake")[0] for _ in range(n_bots)]
    spec = {"game": "merde", "players": 3, "options": {"deals": 2}, **spec}
    tid = create_tournament(world.sessions, name="unit", bots=[b.name for b in bots], seed=3, **spec)
    return tid, bots, start_tournament(world.sessions, tid)


def test_a_tournament_played_in_process_finishes_with_standings_ratings_and_replays(world, make_bot) -> None:
    tid, bots, ids = _tournament(world, make_bot, n_bots=4, games_per_pairing=2)
    assert start_tournament(world.sessions, tid) == []  # starting twice sends nothing more
    finalized: list[int] = []
    for i, mid in enumerate(ids):
        assert run_match(world, mid, asker=random_asker(i), on_finalize=finalized.append) == "finished"
        assert run_match(world, mid, asker=random_asker(i)) == "skipped"  # a second delivery
    assert finalized == [tid]
    assert finalize_tournament(world.sessions, tid) is True
    assert finalize_tournament(world.sessions, tid) is False  # once
    summary = tournament_summary(world.sessions, tid)
    assert summary.status == "finished" and summary.matches == {"finished": len(ids)}
    assert [row["bot"] for row in summary.standings] and len(summary.standings) == 4
    assert sum(row["matches"] for row in summary.standings) == 3 * len(ids)
    assert sum(row["points"] for row in summary.standings) == 3 * len(ids)  # 3 pairs per match
    assert len(summary.ratings) == 4
    for r in summary.ratings:
        assert r["ci_low"] is not None and r["ci_high"] is not None
        assert r["ci_low"] < r["rating"] < r["ci_high"]
    assert all(r["los_next"] is not None and 0 <= r["los_next"] <= 1 for r in summary.ratings[:-1])
    assert summary.ratings[-1]["los_next"] is None
    with world.sessions() as session:
        ratings = session.scalars(select(Rating).where(Rating.bot_id.in_([b.id for b in bots]))).all()
        assert sorted(r.matches for r in ratings) == [3 * len(ids) // 4] * 4
        fitted = session.scalars(select(TournamentRating).where(TournamentRating.tournament_id == tid))
        assert len(fitted.all()) == 4
    for mid in ids:
        report = replay_match(stored_match(world.sessions, mid))
        assert report.ok, report.divergence
        assert report.plies == len(stored_match(world.sessions, mid).actions) > 0


def test_a_duplicate_rotation_is_played_and_replayed_under_its_suits(world, make_bot) -> None:
    from atout_arena.services.deals import release_next

    _, _, ids = _tournament(world, make_bot, duplicate=True)
    records = [stored_match(world.sessions, mid) for mid in ids]
    assert all(r.suits is not None and sorted(r.suits) == sorted("cdhs") for r in records)
    # The identity is one of the 24 (the deal key is new each run): a rotation may keep the plain
    # deal, its siblings then do not. Only rotation 0 is queued at the start: when it keeps the
    # plain deal, it is played and the next rotation (another permutation) is taken instead.
    mid = ids[0]
    if records[0].suits == "cdhs":
        assert run_match(world, mid, asker=random_asker()) == "finished"
        (mid,) = release_next(world.sessions, mid)
        assert stored_match(world.sessions, mid).suits not in (None, "cdhs")
    assert run_match(world, mid, asker=random_asker()) == "finished"
    record = stored_match(world.sessions, mid)
    assert replay_match(record).ok
    # the log is of the disguised deal: on the plain deal of the same seed it diverges
    plain = dataclasses.replace(record, suits=None)
    assert not replay_match(plain).ok


def test_replay_reports_the_first_divergence(world, make_bot) -> None:
    _, _, ids = _tournament(world, make_bot)
    assert run_match(world, ids[0], asker=random_asker()) == "finished"
    record = stored_match(world.sessions, ids[0])
    assert replay_match(record).ok
    with world.sessions() as session:
        match = session.get(Match, ids[0])
        actions = [list(a) for a in match.actions]
        actions[1][1] = "bid 13"  # an action the engine refuses there
        match.actions = actions
        session.commit()
    report = replay_match(stored_match(world.sessions, ids[0]))
    assert not report.ok and str(report.divergence).startswith("action 1 ")
    with world.sessions() as session:
        match = session.get(Match, ids[0])
        match.actions = record.actions
        assert record.scores is not None
        match.scores = [s + 1 for s in record.scores]
        session.commit()
    report = replay_match(stored_match(world.sessions, ids[0]))
    assert not report.ok and "final scores" in str(report.divergence)


def test_spectators_see_every_step_without_hidden_cards(world, make_bot, redis_client) -> None:
    _, _, ids = _tournament(world, make_bot)
    mid = ids[0]
    pubsub = redis_client.pubsub()
    pubsub.subscribe(public_channel(mid), *(seat_channel(mid, s) for s in range(3)))
    for _ in range(4):
        pubsub.get_message(timeout=1)  # the subscribe confirmations
    assert run_match(world, mid, asker=random_asker()) == "finished"
    events: dict[str, list[dict]] = {}
    while (message := pubsub.get_message(timeout=0.5)) is not None:
        if message["type"] == "message":
            events.setdefault(message["channel"].decode(), []).append(json.loads(message["data"]))
    pubsub.close()
    record = stored_match(world.sessions, mid)
    public = events[public_channel(mid)]
    assert [e["type"] for e in public] == ["start"] + ["step"] * len(record.actions) + ["end"]
    assert [e["action"] for e in public[1:-1]] == [a[1] for a in record.actions]
    assert public[-1]["ranking"] == record.ranking
    assert all("hand" not in e.get("view", {}) for e in public)
    for seat in range(3):
        seen = events[seat_channel(mid, seat)]
        assert len(seen) == len(public)
        assert all(e["view"]["seat"] == seat and "hand" in e["view"] for e in seen[:-1])
    # the replay gives the same views as were published
    assert [e["view"] for e in replay_views(record, None)] == [e["view"] for e in public[:-1]]
    seat1 = events[seat_channel(mid, 1)][:-1]
    assert [e["view"] for e in replay_views(record, 1)] == [e["view"] for e in seat1]
    with pytest.raises(ValueError, match="not a seat"):
        replay_views(record, 3)


def test_a_match_taken_over_stops_and_stores_nothing(world, make_bot) -> None:
    _, _, ids = _tournament(world, make_bot)
    mid = ids[0]
    started = threading.Event()

    def slow(a: DecisionAsk) -> Answer:
        started.set()
        time.sleep(0.05)
        return Answer(a.legal_actions[0], 50.0)

    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(run_match(world, mid, asker=slow)))
    thread.start()
    assert started.wait(5)
    # another worker takes the match over (as after the sweeper found it stale)
    with world.sessions() as session:
        session.execute(Match.__table__.update().where(Match.id == mid)
                        .values(status="queued", lease_id=None))
        session.commit()
    assert store.claim_match(world.sessions, mid, "other", 30) is not None
    thread.join(10)
    assert result == ["lost"]
    with world.sessions() as session:
        match = session.get(Match, mid)
        assert match.status == "running" and match.lease_id == "other" and match.actions is None
        match.status = "cancelled"  # leave nothing running for the sweepers of later tests
        session.commit()


def test_a_match_that_keeps_failing_is_given_up_and_its_tournament_still_ends(world, make_bot) -> None:
    tid, _, ids = _tournament(world, make_bot)

    def broken(a: DecisionAsk) -> Answer:
        raise RuntimeError("a bug")

    finalized: list[int] = []
    assert run_match(world, ids[0], asker=broken, on_finalize=finalized.append) == "failed"
    for mid in ids[1:]:
        assert run_match(world, mid, asker=random_asker(), on_finalize=finalized.append) == "finished"
    assert finalized == [tid]
    assert finalize_tournament(world.sessions, tid)
    with world.sessions() as session:
        failed = session.get(Match, ids[0])
        assert failed.status == "failed" and "a bug" in failed.error
        assert session.get(Tournament, tid).status == "finished"


def test_worker_deaths_are_not_attempts_but_a_crash_loop_is_bounded(world, make_bot) -> None:
    _, _, ids = _tournament(world, make_bot, games_per_pairing=2)
    with world.sessions() as session:
        session.get(Match, ids[0]).attempts = world.settings.match_attempts  # 3 workers died under it
        session.get(Match, ids[1]).attempts = world.settings.match_attempts * CLAIMS_PER_ATTEMPT
        session.commit()
    assert run_match(world, ids[0], asker=random_asker()) == "finished"
    assert run_match(world, ids[1], asker=random_asker()) == "failed"
    with world.sessions() as session:
        assert "kept dying" in session.get(Match, ids[1]).error


def _cut_off(a: DecisionAsk) -> Answer:
    return Answer(None, 0.0, fault="disconnected", detail="not connected")


def test_a_match_whose_every_seat_was_cut_off_is_played_again_never_stored(world, make_bot) -> None:
    tid, _, ids = _tournament(world, make_bot)
    finalized: list[int] = []
    for attempt in range(1, world.settings.match_attempts):
        assert run_match(world, ids[0], asker=_cut_off) == "replayed"
        with world.sessions() as session:
            match = session.get(Match, ids[0])
            assert (match.status, match.errors, match.scores) == ("queued", attempt, None)
            assert session.scalars(select(Rating).where(Rating.bot_id.in_(
                [s.bot_id for s in match.seats]))).all() == []  # never rated
    assert run_match(world, ids[0], asker=_cut_off, on_finalize=finalized.append) == "failed"
    with world.sessions() as session:
        match = session.get(Match, ids[0])
        assert match.status == "failed" and "every seat was disconnected" in match.error
    assert finalized == [tid]


def test_metrics_count_decisions_and_matches(world, make_bot, redis_client) -> None:
    world.metrics.reset()
    _, bots, ids = _tournament(world, make_bot)
    for mid in ids:
        run_match(world, mid, asker=random_asker(think_ms=3.0))
    decisions = sum(len(stored_match(world.sessions, mid).actions) for mid in ids)
    registry = metrics_registry(redis_client)
    assert registry.get_sample_value(MATCHES_TOTAL.name, {"game": "merde", "outcome": "finished"}) == len(ids)
    name = f"{DECISION_SECONDS.name}_count"
    counted = sum(registry.get_sample_value(name, {"game": "merde", "bot": b.name}) or 0 for b in bots)
    assert counted == decisions
    assert registry.get_sample_value("atout_rating", {"game": "merde", "bot": bots[0].name}) is not None


# -- practice matches: the same runner, house seats in-process, unrated ------------------------


def test_a_practice_match_is_played_by_the_runner_with_its_house_bots_in_process(
    world, make_bot, redis_client
) -> None:
    """What a worker does with a practice match (from the practice queue, or the sweeper):
    ``run_match`` plays the house seats in-process
    (never faulted ``disconnected``), asks only the visiting seat, stores it unrated."""
    from atout_arena.core.keys import ended_key, inbox_key, matches_key
    from atout_arena.core.models import RatingChange
    from atout_arena.services.practice import house_bots, start_practice

    bot, _ = make_bot("practice")
    match_id = start_practice(world.sessions, bot.id, "merde", players=3, options={"deals": 2},
                              seat=1, seed=4)
    asked: list[int] = []

    def visitor(a: DecisionAsk) -> Answer:  # the network side: only the visiting bot's seat
        asked.append(a.seat)
        return Answer(a.legal_actions[-1], 1.0)

    assert run_match(world, match_id, asker=visitor) == "finished"
    assert set(asked) == {1}
    record = stored_match(world.sessions, match_id)
    assert {seat for seat, *_ in record.actions} == {0, 1, 2}
    steps = record.steps()
    assert all(step.by == "bot" and not step.faults for step in steps), record.actions
    # house bots play in-process: all of their time is their own; this visitor told none
    assert all(s.bot_ms is not None and s.bot_ms <= s.think_ms + 1e-6 for s in steps if s.seat != 1), steps
    assert all(s.bot_ms is None for s in steps if s.seat == 1)
    assert replay_match(record).ok
    with world.sessions() as session:
        match = session.get(Match, match_id)
        assert match.status == "finished" and match.tournament_id is None
        assert all(s.faults == 0 for s in match.seats)
        assert session.scalars(select(RatingChange).where(RatingChange.match_id == match_id)).all() == []
    for house in house_bots(world.sessions, "merde", 2):  # nothing for them in Redis: in-process
        assert not redis_client.exists(inbox_key(str(house)), matches_key(str(house)), ended_key(str(house)))
    # the visiting bot (not connected here) finds the MatchEnd when it comes back
    assert redis_client.hexists(ended_key(bot.bot_id), str(match_id))
    assert run_match(world, match_id, asker=visitor) == "skipped"


def test_a_stopping_process_gives_its_practice_match_back_to_the_queue(world, make_bot) -> None:
    from atout_arena.services.practice import start_practice

    bot, _ = make_bot("practice-stop")
    match_id = start_practice(world.sessions, bot.id, "tiercon", seat=0, seed=2)
    stop = threading.Event()

    def visitor(a: DecisionAsk) -> Answer:
        stop.set()  # the process is told to stop while the bot thinks
        return Answer(a.legal_actions[0], 1.0)

    assert run_match(world, match_id, asker=visitor, stop=stop) == "released"
    with world.sessions() as session:
        match = session.get(Match, match_id)
        assert (match.status, match.lease_id, match.actions) == ("queued", None, None)
    assert run_match(world, match_id, asker=visitor) == "finished"  # anyone may play it now


# -- the start of a match: the streams chosen at the claim -------------------------------------


def _live(redis_client, server: str, bot_id: str, address: str = "") -> None:
    """The stream ``address`` (by default the bot's unversioned one) connected, as its bot's
    current stream, on game server ``server``, alive for a minute."""
    address = address or bot_id
    redis_client.zadd(SERVERS_KEY, {server: now_ms() + 60_000})
    redis_client.set(current_key(bot_id), address)
    redis_client.set(conn_key(address), f"{server}/{address}")


def test_a_match_whose_chosen_streams_are_live_starts_without_looking_again(
    world, make_bot, redis_client
) -> None:
    """The usual start: every stream chosen at the claim is live, no seat is absent, and the
    streams are not chosen again. A bot not connected at the claim is looked for in full."""
    tid, bots, ids = _tournament(world, make_bot, absent_grace_s=30.0)
    server = f"test-srv-{bots[0].bot_id}"
    for bot in bots:
        _live(redis_client, server, str(bot.bot_id))
    claimed = claim(world, ids[0])
    assert not isinstance(claimed, RunResult)
    try:
        assert [s.address for s in claimed.setup.seats] == [str(s.bot_id) for s in claimed.setup.seats]
        def absent(setup):
            return world.matches.call(absent_seats(world, setup, claimed.lease))

        assert absent(claimed.setup) == ([], False)
        gone = claimed.setup.seats[1]
        redis_client.delete(conn_key(gone.stream))  # its stream dropped after the claim
        short = dataclasses.replace(claimed.setup, absent_grace_s=0.3)
        assert absent(short) == ([1], True)  # looked for, waited, absent
        _live(redis_client, server, gone.stream)
        assert absent(short) == ([], False)  # back on the same stream
        redis_client.delete(conn_key(gone.stream))
        _live(redis_client, server, gone.stream, f"{gone.stream}@v2")  # back as another version
        assert absent(short) == ([], True)  # its stream is chosen again
        chosen = with_stream_addresses(world.redis, short)  # what _announce does then
        assert [s.address for s in chosen.seats] == [
            f"{s.bot_id}@v2" if s.bot_id == gone.bot_id else str(s.bot_id) for s in short.seats]
    finally:
        _let_go(world, claimed)
        store.release_match(world.sessions, claimed.match_id, claimed.lease_id)
        cancel_tournament(world.sessions, tid)  # no match left for the workers of later tests
        for bot in bots:
            redis_client.delete(conn_key(str(bot.bot_id)), current_key(str(bot.bot_id)),
                                conn_key(f"{bot.bot_id}@v2"))
        redis_client.zrem(SERVERS_KEY, server)


def test_a_worker_is_alive_as_soon_as_its_keeper_starts(world, redis_client) -> None:
    """A worker may claim a match the moment it is ready: it is in ``atout:workers`` from its
    keeper's start, not a tick later, so that one killed at once is still seen dead (its matches
    taken back in seconds, not after ATOUT_MATCH_STALE_S)."""
    from atout_arena.core.keys import WORKERS_KEY
    from atout_workers.keeper import Keeper

    keeper = Keeper(world, tick_s=60.0)  # no tick during the test: only the start registers it
    keeper.start()
    try:
        assert redis_client.zscore(WORKERS_KEY, keeper.me) is not None
    finally:
        keeper.stop()
    assert redis_client.zscore(WORKERS_KEY, keeper.me) is None


def test_a_keeper_back_from_an_outage_gives_the_others_a_liveness_ttl_before_judging_them(
    world, redis_client, monkeypatch
) -> None:
    """After an outage that cut every worker off Redis (a partition), every liveness lapsed
    together: the first keeper back must not take the others' matches before they could renew
    (the nemesis's 10 s partition had them all played again). ``recover_dead_workers`` is
    recorded here (its own test is above); what is tested is when the keeper calls it."""
    import redis as redis_lib

    from atout_workers import keeper as keeper_module
    from atout_workers.keeper import LIVENESS_TTL_S, Keeper

    judged: list[str] = []

    def recorded(world: object, me: str) -> list[int]:
        judged.append(me)
        return []

    monkeypatch.setattr(keeper_module, "recover_dead_workers", recorded)
    keeper = Keeper(world, tick_s=0.2)
    keeper._reaching_since -= LIVENESS_TTL_S + 1  # long running: others are judged at each tick
    keeper.tick_safely()
    assert judged == [keeper.me]
    # a partition drops packets silently: the calls hang rather than fail, and the renewal goes
    # through only when it heals, more than a TTL after the last one: not judged either
    keeper._renewed_at -= LIVENESS_TTL_S + 1
    keeper.tick_safely()
    assert judged == [keeper.me]
    keeper._reaching_since -= LIVENESS_TTL_S + 1
    real_renew = keeper._renew

    def cut_off() -> None:
        raise redis_lib.ConnectionError("Error 111 connecting: Connection refused.")

    monkeypatch.setattr(keeper, "_renew", cut_off)
    keeper.tick_safely()  # the outage: the tick fails
    monkeypatch.setattr(keeper, "_renew", real_renew)
    keeper.tick_safely()  # back: its own liveness renewed, the others not judged yet
    assert judged == [keeper.me]
    keeper._reaching_since -= LIVENESS_TTL_S + 1  # a liveness TTL later
    keeper.tick_safely()
    assert judged == [keeper.me, keeper.me]
    redis_client.zrem("atout:workers", keeper.me)


def test_a_slow_sweep_delays_neither_the_keepers_liveness_nor_its_judgement_of_the_dead(
    world, redis_client, monkeypatch
) -> None:
    """The sweep reads the whole database: seconds on a large one or a loaded machine. It ran in
    the liveness thread, so this worker went unrenewed meanwhile (the others could take its
    matches) and, its renewal late, it took itself for cut off and never judged a dead worker
    (CI: a worker killed with kill -9 kept its matches 30 s and more). A sweep of 3 s here."""
    from atout_arena.core.keys import WORKERS_KEY
    from atout_workers import keeper as keeper_module
    from atout_workers.keeper import LIVENESS_TTL_S, Keeper

    sweeping = threading.Event()

    def slow_sweep(world: object) -> object:
        sweeping.set()
        time.sleep(3.0)
        return keeper_module.SweepReport()

    judged: list[float] = []
    monkeypatch.setattr(keeper_module, "sweep_world", slow_sweep)
    monkeypatch.setattr(keeper_module, "recover_dead_workers", lambda w, me: judged.append(time.monotonic()))
    redis_client.delete(keeper_module.SWEEPER_LOCK_KEY)
    keeper = Keeper(world, tick_s=0.2)
    keeper._reaching_since -= LIVENESS_TTL_S + 1  # long running: it judges the others at each tick
    keeper.start()
    try:
        assert sweeping.wait(10), "no sweep started"
        began = time.monotonic()
        expiries = []
        while time.monotonic() - began < 2.5:  # within the sweep
            expiries.append(redis_client.zscore(WORKERS_KEY, keeper.me) / 1000 - time.time())
            time.sleep(0.1)
        assert min(expiries) > LIVENESS_TTL_S - 1.0, expiries  # renewed every tick all along
        assert len([t for t in judged if t > began]) >= 5, judged
    finally:
        keeper.stop()
