"""Verifying and rating, as users see them (issue 32, findings 1, 2, 10 and 12). Real processes:
the API, a game server, a Celery worker, SDK bots.

- A match with a never-connected (absent) bot replays as stored, and once its tournament is over
  anyone checks it with no token (``GET /v1/matches/{id}/check``, ``atout-arena replay``);
  before, the check is the organizer's (it would show the secret deal).
- Only played, present seats are rated: the absent bot is on no leaderboard and moves nobody (the
  global leaderboard gives the tournament's own fit); a bot disabled mid-tournament is rated no
  more: a result stored after its disable rates nothing of it (2 players: nobody).

Before: the check answered 401 to anyone without the organizer token, even once the seeds were
public; the leaderboard listed the absent bot (1123 ± 354 over 4 matches) and moved the others;
a disabled bot kept getting rating rows (52 of its 60 matches).
"""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import wait_until
from sqlalchemy import func, select

from atout_arena.cli import main
from atout_arena.core.keys import pending_key
from atout_arena.core.match import Answer, Step
from atout_arena.core.models import Match, MatchSeat, Rating, RatingChange, TournamentRating, utcnow

pytestmark = pytest.mark.timeout(180)
PAUSING = f"{Path(__file__).parent / 'pausing_bot.py'}:Pausing"  # holds its decisions on demand


def _stranger_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                  api_url: str, *args: str) -> tuple[int, str, str]:
    """``atout-arena ARGS`` with no organizer token anywhere (no ATOUT_ADMIN_TOKEN, no config file)."""
    monkeypatch.delenv("ATOUT_ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("ATOUT_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    capsys.readouterr()
    code = main([*args, "--api", api_url])
    out, err = capsys.readouterr()
    return code, out, err


def _finished(api: Any, tid: int) -> bool:
    return api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished"


@pytest.mark.slow
def test_anyone_verifies_a_published_match_with_an_absent_bot_and_nothing_rates_that_bot(
    api, start_worker, connected_bots, new_bot, clean_queues, sessions, monkeypatch, tmp_path, capsys
) -> None:
    start_worker("verify", concurrency=4)
    here = connected_bots(3, "random", prefix="here")
    away, away_id, _ = new_bot("away")  # registered, never connected
    here_ids = sorted(bot_id for _, bot_id, _ in here)
    created = api.organizer.post("/v1/tournaments", json={
        "name": "with-away", "game": "fool", "players": 3, "bots": [name for name, _, _ in here] + [away],
        "absent_grace_s": 0.5, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    wait_until(lambda: _finished(api, tid), 90, "the tournament to finish")

    matches = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"]
    with_away = [m for m in matches if away in [s["bot"] for s in m["seats"]]]
    assert len(matches) == 4 and len(with_away) == 3
    for match in matches:  # anyone, no token: every match replays as stored
        check = api.client.get(f"/v1/matches/{match['id']}/check")
        assert check.status_code == 200, check.text
        assert check.json()["ok"] is True, check.json()["summary"]
    code, out, err = _stranger_cli(monkeypatch, tmp_path, capsys, api.url, "replay", str(with_away[0]["id"]))
    assert code == 0, (out, err)
    assert "as stored" in out and "DIVERGES" not in out

    # Nothing rates the absent bot, and its forfeits move nobody: the global leaderboard of these
    # bots is the tournament's own fit (their other games are with nobody else).
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(RatingChange)
                              .where(RatingChange.bot_id == away_id)) == 0
        fitted = {r.bot_id: r for r in session.scalars(
            select(TournamentRating).where(TournamentRating.tournament_id == tid))}
    assert sorted(fitted) == here_ids

    def board() -> list[dict[str, Any]] | None:  # fitted again at most every few seconds: the final one
        rows = api.client.get("/v1/ratings", params={"game": "fool"}).json()["rows"]
        ours = [r for r in rows if r["bot_id"] in [*here_ids, away_id]]
        done = sorted(r["bot_id"] for r in ours if r["matches"] == 3 and r["bot_id"] != away_id) == here_ids
        return ours if done else None

    ours = wait_until(board, 15, "the leaderboard with every match of the tournament")
    assert sorted(r["bot_id"] for r in ours) == here_ids  # the absent bot is not listed
    for row in ours:  # nor does it move the others: the tournament's own fit
        assert row["rating"] == pytest.approx(fitted[row["bot_id"]].rating, abs=0.01)
    print(f"\n{len(matches)} matches ({len(with_away)} with an absent bot) checked by a stranger: all as "
          f"stored; leaderboard {[(r['bot'], round(r['rating'])) for r in ours]} = the tournament's fit")


def test_before_its_seeds_are_published_only_the_organizer_checks_a_match(
    api, make_bot, sessions, database_url, redis_url, monkeypatch, tmp_path, capsys
) -> None:
    from atout_arena.core.settings import Settings
    from atout_arena.services.tournaments import create_tournament, start_tournament
    from atout_workers.play import run_match
    from atout_workers.world import build_world

    bots = [make_bot("unpublished") for _ in range(3)]
    tid = create_tournament(sessions, name="open", game="fool", players=2, bots=[b.name for b, _ in bots])
    first, *_ = start_tournament(sessions, tid)  # queued, sent nowhere: only this one is played
    with monkeypatch.context() as env:  # the worker code reads its settings from the environment
        env.setenv("ATOUT_DATABASE_URL", database_url)
        env.setenv("ATOUT_REDIS_URL", redis_url)
        world = build_world(Settings.from_env())
    rng = random.Random(7)
    try:
        assert run_match(world, first, asker=lambda a: Answer(rng.choice(a.legal_actions), 1.0)) == "finished"
    finally:
        world.close()
    with sessions() as session:
        match = session.get(Match, first)
        seed = str(match.seed)
        seated = {s.bot_id for s in match.seats}
    token = next(t for b, t in bots if b.id in seated)

    # The tournament runs: its seeds are secret, and so is the check (it re-deals the cards).
    stranger = api.client.get(f"/v1/matches/{first}/check")
    assert stranger.status_code == 401, stranger.text
    assert "not published yet" in stranger.json()["detail"] and seed not in stranger.text
    seat_bot = api.as_bot(token).get(f"/v1/matches/{first}/check")
    assert seat_bot.status_code == 403 and seed not in seat_bot.text
    code, out, err = _stranger_cli(monkeypatch, tmp_path, capsys, api.url, "replay", str(first))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "not published yet" in err
    organizer = api.organizer.get(f"/v1/matches/{first}/check")
    assert organizer.status_code == 200 and organizer.json()["ok"] is True, organizer.text

    # Cancelled with nothing running: its seeds are published, and anyone checks the match.
    assert api.organizer.post(f"/v1/tournaments/{tid}/cancel").status_code == 200
    assert api.client.get(f"/v1/matches/{first}").json()["seed"] == int(seed)
    public = api.client.get(f"/v1/matches/{first}/check")
    assert public.status_code == 200 and public.json()["ok"] is True, public.text
    code, out, err = _stranger_cli(monkeypatch, tmp_path, capsys, api.url, "replay", str(first))
    assert code == 0 and "as stored" in out, (out, err)


def _played_by_bot(match: Match, bot_id: int) -> bool:
    seat = next(s.seat for s in match.seats if s.bot_id == bot_id)
    steps = [Step.from_json(i, row) for i, row in enumerate(match.actions or [])]
    return any(step.seat == seat and step.by == "bot" for step in steps)


def _naive(moment: datetime) -> datetime:
    return moment.replace(tzinfo=None)


@pytest.mark.slow
def test_a_bot_disabled_mid_tournament_is_rated_no_more(
    api, start_worker, connected_bots, clean_queues, sessions, redis_client, tmp_path
) -> None:
    start_worker("unrate", concurrency=2)
    pause = tmp_path / "pause"
    (victim, victim_id, _), = connected_bots(1, PAUSING, prefix="victim", ATOUT_TEST_PAUSE_FILE=str(pause))
    (k1, _, _), (k2, _, _) = connected_bots(2, "random", prefix="keeps")
    created = api.organizer.post("/v1/tournaments", json={
        "name": "disabled-midway", "game": "fool", "players": 2, "bots": [victim, k1, k2],
        "games_per_pairing": 2, "move_ms": 20_000, "absent_grace_s": 0.5, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]

    def victim_rated() -> bool:
        with sessions() as session:
            return bool(session.scalar(select(func.count()).select_from(RatingChange)
                                       .where(RatingChange.bot_id == victim_id)))

    wait_until(victim_rated, 60, "a rated match of the victim", poll_s=0.01)
    pause.touch()  # the victim holds its next decision: it is disabled while playing a match
    wait_until(lambda: redis_client.zcard(pending_key(str(victim_id))) > 0, 30,
               "a decision held by the victim")
    with sessions() as session:
        held = set(session.scalars(select(Match.id).join(MatchSeat).where(
            Match.tournament_id == tid, Match.status == "running", MatchSeat.bot_id == victim_id)))
    before = _naive(utcnow())
    assert api.organizer.post(f"/v1/bots/{victim}/disable").status_code == 200
    after = _naive(utcnow())
    pause.unlink()
    wait_until(lambda: _finished(api, tid), 90, "the tournament to finish")

    with sessions() as session:
        mine = session.scalars(select(Match).join(MatchSeat).where(
            Match.tournament_id == tid, MatchSeat.bot_id == victim_id)).all()
        rows = {m.id: session.scalar(select(func.count()).select_from(RatingChange)
                                     .where(RatingChange.match_id == m.id)) for m in mine}
        ended_before = [m for m in mine if _naive(m.finished_at) < before]
        ended_after = [m for m in mine if _naive(m.finished_at) > after]
        played_into = [m for m in ended_after if m.id in held]  # connected at its start: not absent
        by_bot = sum(_played_by_bot(m, victim_id) for m in played_into)
        online = session.scalar(select(Rating.matches).where(Rating.bot_id == victim_id,
                                                             Rating.game == "fool"))
        fitted = session.scalar(select(TournamentRating.games).where(
            TournamentRating.tournament_id == tid, TournamentRating.bot_id == victim_id))
    assert ended_before and played_into, (held, len(ended_before), len(ended_after))
    assert all(rows[m.id] == 2 for m in ended_before)
    assert all(rows[m.id] == 0 for m in ended_after)  # nobody rated from a result against it
    rated = sum(1 for m in mine if rows[m.id])
    assert online == rated and fitted == rated

    def board() -> dict[int, dict]:
        rows = api.client.get("/v1/ratings", params={"game": "fool"}).json()["rows"]
        return {r["bot_id"]: r for r in rows}

    # The leaderboard is fitted again at most every LEADERBOARD_REFRESH_S (5 s): a board fitted by
    # another test just before may be served meanwhile; the next fit must count exactly the rated ones.
    wait_until(lambda: board().get(victim_id, {}).get("matches") == rated, 15,
               f"the leaderboard to count the victim's {rated} rated matches, no more (it shows "
               f"{board().get(victim_id, {}).get('matches')})", poll_s=0.5)
    print(f"\ndisabled mid-tournament: {len(mine)} matches of the bot, {len(ended_before)} ended before "
          f"(rated), {len(ended_after)} after ({len(played_into)} playing at the disable, {by_bot} of them "
          "with moves of its own): no rating row")
