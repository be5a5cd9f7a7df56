"""Tournaments, leagues and the sweeper as plain functions (real database and Redis, fake bots)."""

from __future__ import annotations

import random
import time
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from atout_arena.core.match import Answer
from atout_arena.core.models import League, Match, MatchSeat, Tournament, utcnow
from atout_arena.core.schedule import deal_suits
from atout_arena.core.settings import Settings
from atout_arena.core.vocabulary import LadderStatus, MatchStatus, TournamentStatus
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.ladders import create_ladder, set_status
from atout_arena.services.leagues import (
    create_league,
    due_leagues,
    league_standings,
    set_members,
    start_season,
)
from atout_arena.services.tournaments import (
    TournamentError,
    TournamentSummary,
    cancel_tournament,
    create_tournament,
    finalize_tournament,
    retry_and_send,
    start_tournament,
    tournament_summary,
)
from atout_workers.play import run_match
from atout_workers.sweeper import SweepReport, sweep
from atout_workers.world import build_world


@pytest.fixture
def world(database_url: str, redis_url: str):
    w = build_world(Settings(database_url=database_url, redis_url=redis_url))
    yield w
    w.close()


def play_all(world, ids: list[int]) -> None:
    rng = random.Random(2)
    for mid in ids:
        assert run_match(world, mid, asker=lambda a: Answer(rng.choice(a.legal_actions), 1.0)) == "finished"


def test_tournaments_check_what_they_are_given(world, make_bot) -> None:
    names = [make_bot("chk")[0].name for _ in range(3)]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"game": "merde", "options": {"deals": 99}}, "'deals'"),
        ({"game": "merde", "players": 9}, "'players'"),
        ({"game": "merde", "players": 4}, "need at least 4 bots"),
        ({"game": "merde", "move_ms": 0}, "move_ms"),
        ({"game": "merde", "move_ms": 200_000, "time_bank_ms": 200_000}, "at most"),
        ({"game": "merde", "games_per_pairing": 0}, "games_per_pairing"),
    ]
    for spec, message in cases:
        with pytest.raises(TournamentError, match=message):
            create_tournament(world.sessions, name="x", bots=names, **{"players": 3, **spec})
    with pytest.raises(TournamentError, match="entered more than once"):
        create_tournament(world.sessions, name="x", game="merde", players=3, bots=[*names[:2], names[0]])


def test_a_tournament_stores_its_schedule_with_seeds_seats_and_deadlines(world, make_bot) -> None:
    bots = [make_bot("sch")[0] for _ in range(4)]
    tid = create_tournament(world.sessions, name="s", game="tiercon", bots=[b.name for b in bots],
                            games_per_pairing=2, duplicate=True, move_ms=250, time_bank_ms=1000, max_faults=5,
                            seed=42)
    with world.sessions() as session:
        t = session.get(Tournament, tid)
        assert (t.status, t.players, t.seed) == ("created", 2, 42)
        assert [e.bot_id for e in t.entries] == [b.id for b in bots]
        query = select(Match).where(Match.tournament_id == tid).order_by(Match.number)
        matches = session.scalars(query).all()
        assert len(matches) == 12 and {m.status for m in matches} == {"pending"}
        assert {(m.move_ms, m.time_bank_ms, m.max_faults) for m in matches} == {(250, 1000, 5)}
        groups: dict[int, list[Match]] = {}
        for m in matches:
            groups.setdefault(m.deal_group, []).append(m)
        for group in groups.values():  # a duplicate deal group: one seed, both seatings
            assert len(group) == 2 and group[0].seed == group[1].seed
            seats = [[s.bot_id for s in sorted(m.seats, key=lambda s: s.seat)] for m in group]
            assert seats[0] == seats[1][::-1]
            # each rotation disguised by its own suit permutation, from the deal key
            expected = [deal_suits(42, m.deal_group, m.rotation, t.deal_key) for m in group]
            assert [m.suits for m in group] == expected
            assert group[0].suits != group[1].suits


def test_only_duplicate_rotations_are_disguised(world, make_bot) -> None:
    bots = [make_bot("plain")[0] for _ in range(3)]
    tid = create_tournament(world.sessions, name="p", game="tiercon", bots=[b.name for b in bots],
                            games_per_pairing=2, seed=42)
    with world.sessions() as session:
        assert {m.suits for m in session.scalars(select(Match).where(Match.tournament_id == tid))} == {None}


def test_a_league_plays_seasons_one_at_a_time_with_standings_across_them(world, make_bot) -> None:
    bots = [make_bot("lea")[0].name for _ in range(4)]
    lid = create_league(world.sessions, name=f"l-{bots[0]}", game="merde", players=3, options={"deals": 1},
                        bots=bots[:3], every_s=3600)
    assert lid in due_leagues(world.sessions)  # a new league with an interval starts at once
    first = start_season(world.sessions, lid)
    assert first is not None
    tid1, ids1 = first
    assert start_season(world.sessions, lid) is None  # season 1 still runs
    assert lid not in due_leagues(world.sessions)  # next season in an hour
    play_all(world, ids1)
    assert finalize_tournament(world.sessions, tid1)
    set_members(world.sessions, lid, join=[bots[3]])
    second = start_season(world.sessions, lid)
    assert second is not None
    tid2, ids2 = second
    play_all(world, ids2)
    assert finalize_tournament(world.sessions, tid2)
    info = league_standings(world.sessions, lid)
    assert [(s["season"], s["status"]) for s in info["seasons"]] == [(1, "finished"), (2, "finished")]
    played = {row["bot"]: row["matches"] for row in info["standings"]}
    assert played[bots[3]] == len(ids2) * 3 // 4  # joined for season 2 only
    assert sum(played.values()) == 3 * (len(ids1) + len(ids2))
    with world.sessions() as session:
        assert session.get(Tournament, tid2).season == 2 and session.get(Tournament, tid2).league_id == lid
        session.execute(update(League).where(League.id == lid).values(next_season_at=utcnow() - timedelta(1)))
        session.commit()
    assert lid in due_leagues(world.sessions)
    set_members(world.sessions, lid, leave=bots)
    with pytest.raises(TournamentError, match="0 active members"):
        start_season(world.sessions, lid)


def test_a_bot_named_twice_joins_a_league_once(world, make_bot) -> None:
    a, b, c = (make_bot("twice")[0] for _ in range(3))
    lid = create_league(world.sessions, name=f"twice-{a.name}", game="merde", players=3,
                        bots=[a.name, str(a.id), b.name, b.id])
    everyone = [a.name, b.name, c.name]
    assert set_members(world.sessions, lid, join=[c.name, str(c.id), c.id, a.name]) == everyone
    assert set_members(world.sessions, str(lid), leave=[b.id, b.name]) == [a.name, c.name]
    assert set_members(world.sessions, f"twice-{a.name}", join=[b.name, str(b.id)]) == everyone


@pytest.mark.parametrize("ref", ["²", "٣", "9" * 19, "99999999999999999999999", 2**63, "0", -1])
def test_names_or_ids_that_are_no_ids_are_clear_lookup_errors(world, make_bot, ref) -> None:
    """What is not an id a database can hold is a name: not found, never a crash."""
    from atout_arena.services.competitions import entrants
    from atout_arena.services.leagues import find_league

    bots = [make_bot("nid")[0].name for _ in range(2)]
    lid = create_league(world.sessions, name=f"nid-{bots[0]}", game="tiercon", bots=bots)
    with world.sessions() as session:
        with pytest.raises(TournamentError, match="no bot named"):
            entrants(session, [bots[0], ref])
        with pytest.raises(TournamentError, match="no league"):
            find_league(session, ref)
        assert find_league(session, str(lid)).id == lid
    with pytest.raises(TournamentError, match="no bot named"):
        set_members(world.sessions, lid, join=[ref])
    with pytest.raises(TournamentError, match="no bot named"):
        create_tournament(world.sessions, name="x", game="tiercon", bots=[*bots, ref])


def test_the_sweeper_gives_silent_and_lost_matches_back(world, make_bot) -> None:
    bots = [make_bot("swp")[0].name for _ in range(3)]
    tid = create_tournament(world.sessions, name="sw", game="merde", players=3, options={"deals": 1},
                            bots=bots, games_per_pairing=3)
    ids = start_tournament(world.sessions, tid)
    assert len(ids) == 3
    from atout_workers import store

    assert store.claim_match(world.sessions, ids[0], "dead-worker", 30)
    sent: list[int] = []
    finalize: list[int] = []
    queue = [5]

    def run(**kw: float) -> SweepReport:
        return sweep(world.sessions, stale_s=kw.get("stale_s", 30), requeue_after_s=kw.get("requeue", 60),
                     queue_length=lambda: queue[0], dispatch_match=sent.append,
                     dispatch_finalize=finalize.append)

    # the session's database holds other tests' matches too: look at this tournament's only
    mine = set(ids)
    report = run()
    assert not mine & {*report.stale, *report.requeued, *sent}
    time.sleep(0.05)
    report = run(stale_s=0.01)  # the dead worker's match goes back; the queue is busy: nothing else
    assert mine & set(report.stale) == {ids[0]} and mine & set(sent) == {ids[0]} and report.requeued == []
    queue[0] = 0
    sent.clear()
    time.sleep(0.05)
    report = run(requeue=0.01)  # the queue is empty and matches still wait: their tasks are lost
    assert mine <= set(report.requeued) and mine <= set(sent)
    report = run(requeue=60)  # sent again at most once per period
    assert not mine & set(report.requeued)
    play_all(world, ids)
    # the last result's finalize went missing: the sweeper finds the tournament
    with world.sessions() as session:
        assert session.get(Tournament, tid).status == "running"
    assert tid in run().finalize and tid in finalize


def test_a_cancelled_tournament_plays_no_more_matches(world, make_bot) -> None:
    bots = [make_bot("cancel")[0].name for _ in range(3)]
    tid = create_tournament(world.sessions, name="c", game="merde", players=3, options={"deals": 1},
                            bots=bots, games_per_pairing=3)
    ids = start_tournament(world.sessions, tid)
    play_all(world, ids[:1])
    assert cancel_tournament(world.sessions, tid) == 2
    assert cancel_tournament(world.sessions, tid) == 0
    assert run_match(world, ids[1]) == "skipped"
    assert finalize_tournament(world.sessions, tid) is False
    with world.sessions() as session:
        statuses = [session.get(Match, m).status for m in ids]
        assert statuses == ["finished", "cancelled", "cancelled"]
    finished = create_tournament(world.sessions, name="f", game="merde", players=3, options={"deals": 1},
                                 bots=bots)
    play_all(world, start_tournament(world.sessions, finished))
    assert finalize_tournament(world.sessions, finished)
    with pytest.raises(TournamentError, match="finished: it cannot be cancelled"):
        cancel_tournament(world.sessions, finished)
    with pytest.raises(TournamentError, match="no tournament"):
        cancel_tournament(world.sessions, 10**9)


def test_a_failed_match_is_retried_on_the_queue_it_belongs_to(world, make_bot) -> None:
    bots = [make_bot("retry")[0] for _ in range(2)]
    tid = create_tournament(world.sessions, name="r", game="fool", players=2, bots=[b.name for b in bots])
    first = start_tournament(world.sessions, tid)[0]
    with world.sessions() as session:
        session.execute(update(Match).where(Match.id == first).values(status=MatchStatus.FAILED, errors=3,
                                                                      error="every seat was disconnected"))
        lone = Match(game="fool", seed=5, status=MatchStatus.FAILED)  # a practice match: no competition
        lone.seats = [MatchSeat(seat=s, bot_id=b.id) for s, b in enumerate(bots)]
        session.add(lone)
        session.commit()
        practice = lone.id
    sent: list[tuple[str, object]] = []

    def retry(match_id: int) -> bool:
        return retry_and_send(world.sessions, match_id,
                              dispatch=lambda ids: sent.append(("matches", list(ids))),
                              play_practice=lambda mid: sent.append(("practice", mid)))

    assert retry(first) is False and retry(practice) is True
    assert sent == [("matches", [first]), ("practice", practice)]
    with world.sessions() as session:
        again = session.get(Match, first)
        assert (again.status, again.errors, again.error) == ("queued", 0, None)
    with pytest.raises(TournamentError, match=f"match {first} is queued: only a failed match can be retried"):
        retry(first)
    with pytest.raises(TournamentError, match="no match"):
        retry(10**9)
    assert len(sent) == 2  # a refused retry sends nothing
    # a ladder's failed match goes back to the matches queue too (it was taken for practice)
    ladder = create_ladder(world.sessions, name=f"retry-{first}", spec=CompetitionSpec.of("fool", 2),
                           bots=[b.name for b in bots])
    with world.sessions() as session:
        rung = Match(game="fool", seed=6, status=MatchStatus.FAILED, ladder_id=ladder, deal_group=0)
        rung.seats = [MatchSeat(seat=s, bot_id=b.id) for s, b in enumerate(bots)]
        session.add(rung)
        session.commit()
        laddered = rung.id
    assert retry(laddered) is False and sent[-1] == ("matches", [laddered])
    with world.sessions() as session:
        session.execute(update(Match).where(Match.id == laddered).values(status=MatchStatus.CANCELLED))
        session.commit()
    set_status(world.sessions, ladder, LadderStatus.PAUSED)
    cancel_tournament(world.sessions, tid)
    with world.sessions() as session:
        session.execute(update(Match).where(Match.id == practice).values(status=MatchStatus.CANCELLED))
        session.commit()


def test_the_organizers_start_refuses_a_tournament_not_created(world, make_bot) -> None:
    bots = [make_bot("start")[0].name for _ in range(2)]
    tid = create_tournament(world.sessions, name="s", game="fool", players=2, bots=bots)
    ids = start_tournament(world.sessions, tid, refuse_started=True)
    assert ids  # queued, to dispatch
    assert start_tournament(world.sessions, tid) == []  # the workers' task: starting twice is harmless
    with pytest.raises(TournamentError) as again:
        start_tournament(world.sessions, tid, refuse_started=True)
    assert (again.value.kind, str(again.value)) == (
        "conflict", f"tournament {tid} is running: only a created tournament can start")
    cancel_tournament(world.sessions, tid)
    with pytest.raises(TournamentError, match="is cancelled: only a created tournament can start"):
        start_tournament(world.sessions, tid, refuse_started=True)
    for refuse in (False, True):
        with pytest.raises(TournamentError, match="no tournament") as unknown:
            start_tournament(world.sessions, 10**9, refuse_started=refuse)
        assert unknown.value.kind == "not_found"


def test_a_tournament_summary_is_typed_with_the_vocabulary(world, make_bot) -> None:
    bots = [make_bot("sum")[0] for _ in range(2)]
    tid = create_tournament(world.sessions, name="sum", game="fool", players=2, bots=[b.name for b in bots],
                            seed=11)
    created = tournament_summary(world.sessions, tid, organizer=False)
    assert isinstance(created, TournamentSummary)
    assert created.status is TournamentStatus.CREATED and created.final is False
    assert (created.seed, created.deal_key, created.deals_public) == (None, None, False)  # secret
    assert created.deal_commitment is not None and len(created.deal_commitment) == 64
    assert created.entrants == [b.name for b in bots] and list(created.matches) == ["pending"]
    assert [row["bot"] for row in created.standings] == [b.name for b in bots] and created.ratings == []
    organizer = tournament_summary(world.sessions, tid)
    assert organizer.seed == 11 and organizer.deal_key is not None
    played = start_tournament(world.sessions, tid)
    play_all(world, played)
    assert finalize_tournament(world.sessions, tid)
    finished = tournament_summary(world.sessions, tid, organizer=False)
    assert finished.status is TournamentStatus.FINISHED and finished.final is True
    assert created.matches == {"pending": len(played)} and finished.matches == {"finished": len(played)}
    assert finished.seed == 11 and finished.deals_public is True
    assert sorted(r["bot"] for r in finished.ratings) == sorted(b.name for b in bots)
    assert [r["rank"] for r in finished.ratings] == [1, 2]
    with pytest.raises(TournamentError, match="no tournament"):
        tournament_summary(world.sessions, 10**9)
