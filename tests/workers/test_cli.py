"""The competitions' subcommands: tournament, league and replay (the worker and beat commands
are exercised by the end-to-end tests). They call the same services as the REST API, so the
same rules hold: tests/api/test_http.py checks them over HTTP."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from atout_arena.cli import main
from atout_arena.core.match import Answer
from atout_arena.core.models import Match
from atout_arena.services.tournaments import start_tournament
from atout_workers.runner import run_match


@pytest.fixture
def env(monkeypatch, database_url: str, redis_url: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ATOUT_DATABASE_URL", database_url)
    monkeypatch.setenv("ATOUT_REDIS_URL", redis_url)
    return {"ATOUT_DATABASE_URL": database_url, "ATOUT_REDIS_URL": redis_url}


def test_tournament_create_and_show(env, make_bot, capsys) -> None:  # type: ignore[no-untyped-def]
    names = [make_bot("cli")[0].name for _ in range(4)]
    assert main(["tournament", "create", "cup", "--game", "merde", "--bots", ",".join(names),
                 "--players", "3", "--option", "deals=2", "--games-per-pairing", "2", "--seed", "9"]) == 0
    out = capsys.readouterr().out
    assert "created: 4 matches" in out
    tid = int(out.split()[1])
    assert main(["tournament", "show", str(tid), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "created" and shown["matches"] == {"pending": 4}
    assert shown["options"] == {"deals": 2} and shown["seed"] == 9 and shown["entrants"] == names
    assert main(["tournament", "create", "bad", "--game", "merde", "--bots", ",".join(names),
                 "--option", "deals=99"]) == 2
    assert "deals" in capsys.readouterr().err
    assert main(["tournament", "create", "bad", "--game", "merde", "--bots", "nobody,else,at,all"]) == 2
    assert "no bot named 'nobody'" in capsys.readouterr().err


def test_the_cli_keeps_the_arena_rules_as_the_api_does(env, make_bot, sessions, capsys) -> None:  # type: ignore[no-untyped-def]
    """House bots are never entered, a bot is entered once, a schedule has at most 20,000
    matches: from the CLI as from the API (the rules are the services')."""
    from atout_arena.core.models import Tournament
    from atout_arena.services.practice import house_bots

    names = [make_bot("rules")[0].name for _ in range(3)]
    house_bots(sessions, "merde", 1)  # registered, as after a practice match
    with sessions() as session:
        before = session.query(Tournament).count()
    cases = [
        ([*names, "house-merde-1"], "house bots play practice matches only: house-merde-1"),
        ([*names, "house-tiercon-9"], "house bots play practice matches only: house-tiercon-9"),
        ([names[0], names[0], names[1]], "each bot may be entered once"),
    ]
    for bots, message in cases:
        code = main(["tournament", "create", "cup", "--game", "merde", "--players", "3",
                     "--bots", ",".join(bots)])
        assert code == 2 and message in capsys.readouterr().err
    code = main(["league", "create", f"lg-{names[0]}", "--game", "merde", "--players", "3",
                 "--bots", ",".join([*names, "house-merde-1"])])
    assert code == 2 and "house bots play practice matches only" in capsys.readouterr().err
    assert main(["league", "show", f"lg-{names[0]}"]) == 2  # not created
    capsys.readouterr()
    many = [make_bot("many")[0].name for _ in range(40)]
    code = main(["tournament", "create", "huge", "--game", "tiercon", "--bots", ",".join(many),
                 "--games-per-pairing", "100"])
    assert code == 2 and "at least 78000 matches; at most 20000" in capsys.readouterr().err
    assert main(["tournament", "create", "bad", "--game", "merde", "--bots", ",".join(names),
                 "--option", "players=3"]) == 2
    assert "'players' is a field of its own" in capsys.readouterr().err
    with sessions() as session:
        assert session.query(Tournament).count() == before  # nothing was created


def test_league_create_join_leave_show(env, make_bot, capsys) -> None:  # type: ignore[no-untyped-def]
    bots = [make_bot("lg")[0].name for _ in range(4)]
    name = f"league-{bots[0]}"
    assert main(["league", "create", name, "--game", "fool", "--players", "2", "--bots", ",".join(bots[:3]),
                 "--every", "1d"]) == 0
    assert main(["league", "join", name, bots[3]]) == 0
    assert main(["league", "leave", name, bots[0]]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(f"members: {', '.join(bots[1:])}")
    assert main(["league", "show", name, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["every_s"] == 86400 and sorted(info["members"]) == sorted(bots[1:]) and info["seasons"] == []
    assert main(["league", "create", name, "--game", "fool", "--bots", bots[0]]) == 2
    assert "already exists" in capsys.readouterr().err


def test_replay_exits_0_when_the_match_reproduces_and_1_with_the_divergence(env, make_bot, sessions) -> None:  # type: ignore[no-untyped-def]
    from atout_arena.core.settings import Settings
    from atout_arena.services.tournaments import create_tournament
    from atout_workers.world import build_world

    bots = [make_bot("replay")[0].name for _ in range(3)]
    tid = create_tournament(sessions, name="r", game="merde", bots=bots, players=3, options={"deals": 2})
    [mid] = start_tournament(sessions, tid)
    world = build_world(Settings.from_env())
    rng = random.Random(1)
    try:
        assert run_match(world, mid, asker=lambda a: Answer(rng.choice(a.legal_actions), 1.0)) == "finished"
    finally:
        world.close()

    def replay() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "atout_arena.cli", "replay", str(mid)],
                              capture_output=True,
                              text=True, timeout=60, env={**os.environ, **env})

    ok = replay()
    assert ok.returncode == 0, ok.stderr
    assert f"match {mid}:" in ok.stdout and "as stored" in ok.stdout
    with sessions() as session:
        match = session.get(Match, mid)
        actions = [list(a) for a in match.actions]
        actions[-1][1] = actions[-2][1]  # the last action replaced: illegal there
        match.actions = actions
        session.commit()
    bad = replay()
    assert bad.returncode == 1 and "DIVERGES" in bad.stdout and f"action {len(actions) - 1} " in bad.stdout
    missing = subprocess.run([sys.executable, "-m", "atout_arena.cli", "replay", "999999"],
                             capture_output=True,
                             text=True, timeout=60, env={**os.environ, **env})
    assert missing.returncode == 2 and "no match 999999" in missing.stderr


@pytest.mark.parametrize("game", ["tiercon", "regicide", "merde"])
def test_a_match_of_other_rules_is_refused_not_reported_as_a_divergence(env, make_bot, sessions, capsys,
                                                                         game) -> None:  # type: ignore[no-untyped-def]
    """Every stored match records the rules version it was played under; a replay under an
    engine of another version says so and exits 2, never "DIVERGES"."""
    from atout.games import GAMES
    from atout_arena.core.settings import Settings
    from atout_arena.services.tournaments import create_tournament
    from atout_workers.world import build_world

    players = 2 if game == "tiercon" else 3
    bots = [make_bot(f"ver-{game}")[0].name for _ in range(players)]
    tid = create_tournament(sessions, name="v", game=game, bots=bots, players=players, seed=4)
    ids = start_tournament(sessions, tid)
    current = GAMES[game].RULES_VERSION
    with sessions() as session:
        assert {session.get(Match, m).rules_version for m in ids} == {current}  # recorded when stored
        session.get(Match, ids[0]).rules_version = 99  # as if an older (or newer) arena stored it
        session.commit()
    world = build_world(Settings.from_env())
    rng = random.Random(2)
    try:
        played = run_match(world, ids[0], asker=lambda a: Answer(rng.choice(a.legal_actions), 1.0))
        assert played == "finished"
    finally:
        world.close()
    with sessions() as session:
        assert session.get(Match, ids[0]).rules_version == current  # the worker's engine played it
        session.get(Match, ids[0]).rules_version = current - 1 if current > 1 else current + 1
        session.commit()
    assert main(["replay", str(ids[0])]) == 2
    captured = capsys.readouterr()
    assert "DIVERGES" not in captured.out
    old = current - 1 if current > 1 else current + 1
    assert (f"match {ids[0]} was played under version {old} of the {game} rules; this arena's engine "
            f"implements version {current}, so it cannot be replayed here") in captured.err


def test_create_warns_of_entrants_not_connected_and_match_retry_requeues_a_failed_match(
    env, make_bot, sessions, capsys
) -> None:  # type: ignore[no-untyped-def]
    names = [make_bot("cli-away")[0].name for _ in range(2)]
    assert main(["tournament", "create", "away", "--game", "fool", "--players", "2",
                 "--bots", ",".join(names), "--games-per-pairing", "2", "--absent-grace", "3"]) == 0
    captured = capsys.readouterr()
    assert f"warning: not connected: {', '.join(names)}" in captured.err and "3 s" in captured.err
    tid = int(captured.out.split()[1])
    with sessions() as session:
        match = session.query(Match).filter(Match.tournament_id == tid).first()
        match.status, match.error = "failed", "every seat was disconnected"
        session.commit()
        failed_id = match.id
    assert main(["match", "retry", str(failed_id)]) == 0
    assert f"match {failed_id} queued again" in capsys.readouterr().out
    with sessions() as session:
        assert session.get(Match, failed_id).status == "queued"
    assert main(["match", "retry", str(failed_id)]) == 2
    assert "only a failed match" in capsys.readouterr().err
