"""The organizer's commands (``atout-arena bots``, ``tournament``, ``league``, ``test``,
``match``, ``replay``) go through the running arena's REST API: here the session's real API
(uvicorn on a free port of 127.0.0.1, the session's SQLite database and Redis), called by the
real command, in this process (``main([...])``) or in another one. The same rules hold as for
the API (they are the services'), and no command touches a file of the current directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN

from atout_arena.cli import main
from atout_arena.core.match import Answer
from atout_arena.core.models import Match
from atout_arena.services.tournaments import create_tournament, start_tournament

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cli(api: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    """``cli(*args) -> CompletedProcess``: ``atout-arena ARGS --api URL`` in this process, with
    the organizer token in ``ATOUT_ADMIN_TOKEN``, no config file, run from an empty directory."""
    monkeypatch.setenv("ATOUT_ADMIN_TOKEN", ADMIN_TOKEN)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ATOUT_CONFIG", raising=False)
    monkeypatch.delenv("ATOUT_API_URL", raising=False)
    monkeypatch.delenv("ATOUT_DATABASE_URL", raising=False)
    monkeypatch.delenv("ATOUT_REDIS_URL", raising=False)
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)

    def run(*args: str, api_url: str | None = api.url) -> subprocess.CompletedProcess:
        capsys.readouterr()
        code = main([*args, *(["--api", api_url] if api_url else [])])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    run.here = here  # type: ignore[attr-defined]
    return run


def one_line_error(result: subprocess.CompletedProcess, code: int = 2) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_bots_add_list_rotate_disable_enable_through_the_api(
    cli: Any, database_url: str, game_server: Any, registry: Any, spawn_bot: Any
) -> None:
    name = f"cli-bot-{os.getpid()}-{random.randrange(10**6)}"
    added = cli("bots", "add", name, "--owner", "carol")
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("atout_") and "\n" not in token  # only the token on stdout
    assert "shown only this once" in added.stderr
    with sqlite3.connect(database_url.removeprefix("sqlite:///")) as db:
        row = db.execute("SELECT owner, token_hash FROM bots WHERE name = ?", (name,)).fetchone()
    assert row == ("carol", hashlib.sha256(token.encode()).hexdigest())
    spawn_bot(game_server.info["address"], token, "random")  # the arena that runs knows the token
    deadline = time.monotonic() + 30
    while not {b["name"]: b["connected"] for b in json.loads(cli("bots", "list", "--json").stdout)}[name]:
        assert time.monotonic() < deadline, "the bot did not connect"
        time.sleep(0.1)

    listed = cli("bots", "list")
    assert listed.returncode == 0 and name in listed.stdout and "carol" in listed.stdout
    assert token not in listed.stdout
    as_json = json.loads(cli("bots", "list", "--json").stdout)
    assert {b["name"]: b["owner"] for b in as_json}[name] == "carol"

    again = cli("bots", "add", name)
    assert f"a bot named {name!r} already exists" in one_line_error(again)

    rotated = cli("bots", "rotate", name)
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.strip()
    assert registry.verify(token) is None and registry.verify(new).name == name
    assert cli("bots", "disable", name).returncode == 0 and registry.verify(new).disabled
    assert cli("bots", "enable", name).returncode == 0 and not registry.verify(new).disabled
    assert "no bot 'no-such-bot'" in one_line_error(cli("bots", "disable", "no-such-bot"))
    assert not (cli.here / "var").exists() and list(cli.here.iterdir()) == []  # no stray database


def test_without_an_arena_or_a_token_the_commands_say_so_in_one_line(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    nothing = one_line_error(cli("bots", "add", "lonely", api_url=f"http://127.0.0.1:{port}"))
    assert f"nothing answers at http://127.0.0.1:{port}: is the arena running?" in nothing
    assert "--api" in one_line_error(cli("bots", "list", api_url="127.0.0.1:8000"))
    monkeypatch.setenv("ATOUT_ADMIN_TOKEN", "change-me")
    refused = one_line_error(cli("bots", "add", "lonely"))
    assert "refused the token from ATOUT_ADMIN_TOKEN: HTTP 401" in refused
    monkeypatch.delenv("ATOUT_ADMIN_TOKEN")
    assert "no organizer token" in one_line_error(cli("bots", "add", "lonely"))
    assert not (cli.here / "var").exists()


def test_the_config_file_of_up_gives_the_api_and_the_token(
    cli: Any, api: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``atout-arena up`` writes ``$XDG_CONFIG_HOME/atout/arena.json``; the commands read it
    when neither ``--api`` nor ``ATOUT_ADMIN_TOKEN`` is given (ATOUT_CONFIG names another)."""
    monkeypatch.delenv("ATOUT_ADMIN_TOKEN")
    config = tmp_path / "config" / "atout" / "arena.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"api_url": api.url, "admin_token": ADMIN_TOKEN}))
    name = f"cfg-{os.getpid()}-{random.randrange(10**6)}"
    added = cli("bots", "add", name, api_url=None)
    assert added.returncode == 0, added.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"api_url": api.url, "admin_token": "wrong"}))
    monkeypatch.setenv("ATOUT_CONFIG", str(other))
    assert f"refused the token from {other}" in one_line_error(cli("bots", "list", api_url=None))


def test_tournament_create_show_and_refusals(cli: Any, make_bot: Any) -> None:
    names = [make_bot("cli")[0].name for _ in range(4)]
    created = cli("tournament", "create", "cup", "--game", "merde", "--bots", ",".join(names),
                  "--players", "3", "--option", "deals=2", "--games-per-pairing", "2", "--seed", "9")
    assert created.returncode == 0, created.stderr
    assert "created: 4 matches" in created.stdout
    tid = int(created.stdout.split()[1])
    shown = cli("tournament", "show", str(tid), "--json")
    t = json.loads(shown.stdout)
    assert t["status"] == "created" and t["progress"]["by_status"] == {"pending": 4}
    assert t["options"] == {"deals": 2} and t["seed"] == 9 and t["entrants"] == names
    table = cli("tournament", "show", str(tid))
    assert f"tournament {tid} 'cup': merde, 3 players" in table.stdout and "0/4 matches done" in table.stdout
    assert str(tid) in cli("tournament", "list").stdout
    assert "deals" in one_line_error(cli("tournament", "create", "bad", "--game", "merde",
                                         "--bots", ",".join(names), "--option", "deals=99"))
    assert "no bot named 'nobody'" in one_line_error(
        cli("tournament", "create", "bad", "--game", "merde", "--bots", "nobody,else,at,all"))
    assert "NAME=VALUE" in one_line_error(
        cli("tournament", "create", "bad", "--game", "merde", "--bots", ",".join(names), "--option", "deals"))
    assert "no tournament 999999" in one_line_error(cli("tournament", "show", "999999"))


def test_the_cli_keeps_the_arena_rules_as_the_api_does(cli: Any, make_bot: Any, sessions: Any) -> None:
    from atout_arena.core.models import Tournament
    from atout_arena.services.practice import house_bots

    names = [make_bot("rules")[0].name for _ in range(3)]
    house_bots(sessions, "merde", 1)
    with sessions() as session:
        before = session.query(Tournament).count()
    cases = [
        ([*names, "house-merde-huge-1"], "unknown house bot kind 'huge'; kinds: heuristic, pimc-small, "
                                         "pimc-large, ismcts"),
        ([names[0], names[0], names[1]], "each bot may be entered once"),
    ]
    for bots, message in cases:
        result = cli("tournament", "create", "cup", "--game", "merde", "--players", "3",
                     "--bots", ",".join(bots))
        assert message in one_line_error(result)
    result = cli("league", "create", f"lg-{names[0]}", "--game", "merde", "--players", "3",
                 "--bots", ",".join([*names, "house-merde-1"]))
    assert "house bots play practice matches only" in one_line_error(result)
    assert "no league" in one_line_error(cli("league", "show", f"lg-{names[0]}"))
    with sessions() as session:
        assert session.query(Tournament).count() == before  # nothing was created


def test_league_create_join_leave_season_show(cli: Any, make_bot: Any) -> None:
    bots = [make_bot("lg")[0].name for _ in range(4)]
    name = f"league-{bots[0]}"
    created = cli("league", "create", name, "--game", "fool", "--players", "2",
                  "--bots", ",".join(bots[:3]), "--every", "1d")
    assert created.returncode == 0, created.stderr
    assert cli("league", "join", name, bots[3]).returncode == 0
    left = cli("league", "leave", name, bots[0])
    assert left.returncode == 0 and left.stdout.strip().endswith(f"members: {', '.join(bots[1:])}")
    info = json.loads(cli("league", "show", name, "--json").stdout)
    assert info["every_s"] == 86400 and sorted(info["members"]) == sorted(bots[1:]) and info["seasons"] == []
    again = cli("league", "create", name, "--game", "fool", "--bots", bots[0])
    assert "already exists" in one_line_error(again)
    assert "--every" in one_line_error(cli("league", "create", "x", "--game", "fool", "--every", "often"))
    season = cli("league", "season", name)
    assert season.returncode == 0 and f"league {name!r}: season 1 started as tournament" in season.stdout
    assert "season still running" in one_line_error(cli("league", "season", name))


def _played_match(sessions: Any, make_bot: Any, game: str = "merde") -> int:
    from atout_arena.core.settings import Settings
    from atout_workers.play import run_match
    from atout_workers.world import build_world

    bots = [make_bot("replay")[0].name for _ in range(3)]
    tid = create_tournament(sessions, name="r", game=game, bots=bots, players=3, options={"deals": 2})
    [mid] = start_tournament(sessions, tid)
    world = build_world(Settings.from_env())
    rng = random.Random(1)
    try:
        assert run_match(world, mid, asker=lambda a: Answer(rng.choice(a.legal_actions), 1.0)) == "finished"
    finally:
        world.close()
    return mid


def test_match_show_and_replay_through_the_api(
    cli: Any, make_bot: Any, sessions: Any, database_url: str, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from atout.games import GAMES

    with monkeypatch.context() as m:  # the worker code of this test reads its settings from the env
        m.setenv("ATOUT_DATABASE_URL", database_url)
        m.setenv("ATOUT_REDIS_URL", redis_url)
        mid = _played_match(sessions, make_bot)
    shown = cli("match", "show", str(mid))
    assert shown.returncode == 0 and f"match {mid}: merde, 3 players - finished" in shown.stdout
    assert json.loads(cli("match", "show", str(mid), "--json").stdout)["id"] == mid
    ok = cli("replay", str(mid))
    assert ok.returncode == 0, ok.stderr
    assert f"match {mid}:" in ok.stdout and "as stored" in ok.stdout
    with sessions() as session:
        match = session.get(Match, mid)
        actions = [list(a) for a in match.actions]
        actions[-1][1] = actions[-2][1]  # the last action replaced: illegal there
        match.actions = actions
        session.commit()
    bad = cli("replay", str(mid))
    assert bad.returncode == 1 and "DIVERGES" in bad.stdout and f"action {len(actions) - 1} " in bad.stdout
    assert json.loads(cli("replay", str(mid), "--json").stdout)["ok"] is False
    assert "no match 999999" in one_line_error(cli("replay", "999999"))
    current = GAMES["merde"].RULES_VERSION
    with sessions() as session:
        session.get(Match, mid).rules_version = current + 1
        session.commit()
    other_rules = cli("replay", str(mid))
    assert "DIVERGES" not in other_rules.stdout
    assert f"was played under version {current + 1} of the merde rules" in one_line_error(other_rules)


def test_the_command_in_its_own_process_from_another_directory(api: Any, tmp_path: Path) -> None:
    """The real ``python -m atout_arena.cli`` in another process, in an empty directory: the
    bot is registered in the running arena and nothing is created where it ran."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOUT_")}
    env.update(ATOUT_ADMIN_TOKEN=ADMIN_TOKEN, XDG_CONFIG_HOME=str(tmp_path / "config"))
    name = f"proc-{os.getpid()}-{random.randrange(10**6)}"
    done = subprocess.run([sys.executable, "-m", "atout_arena.cli", "bots", "add", name, "--api", api.url],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert api.organizer.get(f"/v1/bots/{name}").status_code == 200
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no ./var, no config written


def test_create_warns_of_entrants_not_connected_and_match_retry_requeues_a_failed_match(
    cli: Any, make_bot: Any, sessions: Any
) -> None:
    names = [make_bot("cli-away")[0].name for _ in range(2)]
    created = cli("tournament", "create", "away", "--game", "fool", "--players", "2",
                  "--bots", ",".join(names), "--games-per-pairing", "2", "--absent-grace", "3")
    assert created.returncode == 0, created.stderr
    assert "created: 2 matches" in created.stdout
    assert f"warning: not connected: {', '.join(names)}" in created.stderr and "3 s" in created.stderr
    tid = int(created.stdout.split()[1])
    with sessions() as session:
        match = session.query(Match).filter(Match.tournament_id == tid).first()
        match.status, match.error = "failed", "every seat was disconnected"
        session.commit()
        failed_id = match.id
    retried = cli("match", "retry", str(failed_id))
    assert retried.returncode == 0, retried.stderr
    assert f"match {failed_id} queued again" in retried.stdout
    with sessions() as session:
        assert session.get(Match, failed_id).status == "queued"
    assert "failed" in one_line_error(cli("match", "retry", str(failed_id)))


def test_bots_add_human_registers_a_person_with_its_own_move_time(cli: Any, sessions: Any) -> None:
    from atout_arena.services.bots import BotRegistry

    name = f"cli-person-{os.getpid()}-{random.randrange(10**6)}"
    added = cli("bots", "add", name, "--human", "--move-ms", "45000")
    assert added.returncode == 0, added.stderr
    person = BotRegistry(sessions).verify(added.stdout.strip())
    assert person is not None and person.kind == "human" and person.move_ms == 45_000
    assert "move_ms" in one_line_error(cli("bots", "add", f"{name}-2", "--human", "--move-ms", "0"))


HEAVY_MODULES = ("fastapi", "starlette", "sqlalchemy", "celery", "kombu", "grpc", "numpy", "redis",
                 "pydantic_settings", "uvicorn", "atout_arena.api", "atout_arena.gateway",
                 "atout_arena.core.db", "atout_arena.demo.run", "atout_arena.demo.arena")


@pytest.mark.parametrize("argv", [["--help"], ["bots", "list"], ["tournament", "show", "1"],
                                  ["demo", "--help"]])
def test_the_organizers_commands_import_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    """`atout-arena --help` and a REST command load argparse, httpx and rich, never the API's,
    the database's, Celery's or gRPC's modules (they cost over a second of CPU before)."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on: the REST command fails at once
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    code = (
        "import sys\n"
        "from atout_arena.cli import main\n"
        f"try:\n    code = main({argv!r} + (['--api', {url!r}] if {argv!r}[-1] != '--help' else []))\n"
        "except SystemExit as exit:\n    code = exit.code\n"
        "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOUT_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    modules = set(run.stderr.rsplit("MODULES ", 1)[1].split())
    loaded = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY_MODULES))
    assert loaded == [], loaded
    if argv[-1] == "--help":
        assert run.returncode == 0 and "usage: atout-arena" in run.stdout
    else:  # nothing answers there: one line, exit code 2
        assert run.returncode == 2 and "error: nothing answers at" in run.stderr, run.stderr
