"""TLS end to end on real processes, with a private CA made by ``openssl`` (deploy/tls.py):

- a game server with ``ATOUT_TLS_CERT``/``ATOUT_TLS_KEY`` serves TLS; an SDK bot with ``--ca``
  plays a tournament through it with no fault;
- a bot that refuses the certificate (another CA, no CA, another host name) or speaks TLS to a
  plain server prints one line that says what to do and exits 2 at once; a plain bot at a TLS
  server is told to pass ``--tls``;
- a certificate refused after a Welcome (changed under a running bot) is retried, said in each
  reconnection line, within ``--max-reconnects``;
- ``atout-arena api`` serves HTTPS; the organizer's client trusts it with ``--ca`` /
  ``ATOUT_CA_FILE`` and says one line without;
- a bad pair of settings is one line, exit 2, before anything starts.
"""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

import httpx
import pytest
from e2e_helpers import wait_until
from sqlalchemy import select
from tls_helpers import CertificatePaths, make_ca, tls_env

from atout_arena import cli
from atout_arena.client import ArenaClient, ClientError, Target
from atout_arena.core.models import Match
from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CertificatePaths]:
    """The arena's CA, another CA, and a certificate of the arena's CA for another host."""
    base = tmp_path_factory.mktemp("tls")
    return {"arena": make_ca(base / "arena"), "other": make_ca(base / "other", name="Another CA"),
            "elsewhere": make_ca(base / "elsewhere", hosts=["arena.example.org"])}


def lines_about(log: str, word: str) -> list[str]:
    return [line for line in log.splitlines() if word in line]


def test_an_sdk_bot_plays_through_a_tls_game_server_with_its_private_ca(
    certs, start_game_server, make_bot, spawn_bot, arena_bots, start_worker, run_tournament, wait_finished,
    sessions, redis_client,
) -> None:
    server = start_game_server("gs-tls", **tls_env(certs["arena"]))
    assert "(TLS, certificate" in server.log()
    info, token = make_bot("tls-bot")
    bot = spawn_bot(server.info["address"], token, "random", "--ca", str(certs["arena"].ca))
    wait_until(lambda: is_connected(redis_client, info.bot_id), 20, "the TLS bot to connect")
    others = arena_bots(["random", "heuristic"], prefix="tls-field")  # plain, on the session's server
    start_worker(concurrency=4)
    tid = run_tournament([info, *others], game="regicide", players=3, move_ms=3000, name="tls")
    wait_finished(tid)
    with sessions() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        seats = {(m.id, s.seat) for m in matches for s in m.seats if s.bot_id == info.id}
        faults = [row for m in matches for row in m.actions if (m.id, row[0]) in seats and row[4]]
        decided = [row for m in matches for row in m.actions if (m.id, row[0]) in seats and row[2] == "bot"]
    assert seats and decided and not faults, (faults[:3], bot.log()[-2000:])
    assert bot.alive() and "Traceback" not in bot.log()


def test_a_refused_certificate_is_one_line_and_exit_2_at_once(
    certs, start_game_server, start_game_server_plain, make_bot, spawn_bot,
) -> None:
    """Every way of getting TLS wrong, at once: the bots run side by side."""
    tls_server = start_game_server("gs-tls-refuse", **tls_env(certs["arena"]))
    elsewhere = start_game_server("gs-tls-elsewhere", **tls_env(certs["elsewhere"]))
    plain = start_game_server_plain
    _, token = make_bot("tls-refused")
    began = time.monotonic()
    bots = {
        "another CA": spawn_bot(tls_server.info["address"], token, "random", "--ca", str(certs["other"].ca)),
        "system CAs": spawn_bot(tls_server.info["address"], token, "random", "--tls"),
        "another host": spawn_bot(elsewhere.info["address"], token, "random", "--ca",
                                  str(certs["elsewhere"].ca)),
        "TLS to plain": spawn_bot(plain.info["address"], token, "random", "--ca", str(certs["arena"].ca)),
    }
    expected = {
        "another CA": f"is {certs['other'].ca} the CA that signed it?",
        "system CAs": "pass --ca FILE",
        "another host": "the arena's certificate is not for 127.0.0.1",
        "TLS to plain": "failed (WRONG_VERSION_NUMBER): does the arena serve TLS on this port?",
    }
    for case, process in bots.items():
        wait_until(lambda process=process: not process.alive(), 15, f"the bot ({case}) to exit")
        log = process.log()
        said = [line for line in log.splitlines() if "INFO atout: connecting to" not in line]
        print(f"\n{case}: {said}")
        assert process.popen.returncode == 2, (case, log)
        assert len(said) == 1 and said[0].startswith("atout-bot: TLS: "), (case, log)  # and nothing else
        assert expected[case] in said[0], (case, said)
        assert "Traceback" not in log and "reconnecting" not in log, (case, log)
    assert time.monotonic() - began < 10  # at once, not after the reconnection's backoff


@pytest.fixture
def start_game_server_plain(start_game_server):
    return start_game_server("gs-plain-for-tls")


def test_a_plain_bot_at_a_tls_game_server_is_told_to_pass_tls(certs, start_game_server, make_bot,
                                                              spawn_bot) -> None:
    server = start_game_server("gs-tls-plainbot", **tls_env(certs["arena"]))
    _, token = make_bot("plain-at-tls")
    bot = spawn_bot(server.info["address"], token, "random")
    wait_until(lambda: not bot.alive(), 20, "the plain bot to give up")
    assert bot.popen.returncode == 2, bot.log()
    assert "an arena that serves TLS closes plain connections: pass --tls" in bot.log(), bot.log()


def test_a_certificate_changed_under_a_running_bot_is_retried_saying_why(
    certs, start_game_server, make_bot, spawn_bot, redis_client,
) -> None:
    """After a Welcome, a refused certificate is a failed attempt like any (bounded by
    --max-reconnects, which the runner's tests cover), not an exit: an organizer who rotated the
    wrong certificate can put the right one back without every bot exiting."""
    first = start_game_server("gs-tls-rotate", **tls_env(certs["arena"]))
    address = first.info["address"]
    info, token = make_bot("tls-rotated")
    bot = spawn_bot(address, token, "random", "--ca", str(certs["arena"].ca), "--max-reconnects", "-1")
    wait_until(lambda: is_connected(redis_client, info.bot_id), 20, "the bot to connect")
    first.stop()
    start_game_server("gs-tls-rotate-2", address=address, **tls_env(certs["other"]))  # another CA's

    def retried() -> list[str]:
        return [line for line in lines_about(bot.log(), "reconnecting in") if "is not trusted" in line]

    wait_until(lambda: len(retried()) >= 2, 30, "two refused reconnections")
    assert bot.alive() and "Traceback" not in bot.log(), bot.log()[-3000:]
    assert f"is {certs['arena'].ca} the CA that signed it?" in retried()[0]


def test_the_api_serves_https_that_the_organizer_client_trusts_with_its_ca(
    certs, processes, redis_url, database_url, tmp_path, monkeypatch,
) -> None:
    admin = "atout_admin_" + secrets.token_hex(16)
    api = processes.start("api-tls", [sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"], {
        "ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": database_url, "ATOUT_ADMIN_TOKEN": admin,
        "ATOUT_DATA_DIR": str(tmp_path), **tls_env(certs["arena"])})
    url = api.wait_for_log(r"API listening on (https://127\.0\.0\.1:\d+)", timeout=30).group(1)
    ca = str(certs["arena"].ca)
    health = httpx.get(url + "/healthz", verify=Target(url, None, "", ca).verify(), timeout=10)
    assert health.status_code == 200
    monkeypatch.setenv("ATOUT_ADMIN_TOKEN", admin)
    with ArenaClient(Target.find(url, ca=ca)) as client:
        assert client.get("/v1/bots") is not None  # the organizer's token, over HTTPS
    monkeypatch.setenv("ATOUT_CA_FILE", ca)
    with ArenaClient(Target.find(url)) as client:
        assert client.get("/v1/games")
    monkeypatch.delenv("ATOUT_CA_FILE")
    with pytest.raises(ClientError) as refused, ArenaClient(Target.find(url)) as client:
        client.get("/v1/games")
    message = str(refused.value)
    assert message.startswith(f"TLS: the certificate of {url} is not trusted") and "--ca FILE" in message
    assert "\n" not in message


@pytest.mark.parametrize(("env", "said"), [
    ({"ATOUT_TLS_CERT": "{cert}"}, "error: ATOUT_TLS_CERT is set but ATOUT_TLS_KEY is not"),
    ({"ATOUT_TLS_KEY": "{key}"}, "error: ATOUT_TLS_KEY is set but ATOUT_TLS_CERT is not"),
    ({"ATOUT_TLS_CERT": "{missing}", "ATOUT_TLS_KEY": "{key}"}, "cannot read it (No such file"),
    ({"ATOUT_TLS_CERT": "{cert}", "ATOUT_TLS_KEY": "{other_key}"}, "not a PEM certificate and its private"),
])
@pytest.mark.parametrize("command", ["gateway", "api"])
def test_bad_tls_settings_are_one_line_and_exit_2(certs, monkeypatch, capsys, env, said, command) -> None:
    names = {"cert": certs["arena"].cert, "key": certs["arena"].key, "other_key": certs["other"].key,
             "missing": Path("/nonexistent/server.pem")}
    for name in ("ATOUT_TLS_CERT", "ATOUT_TLS_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(**names))
    assert cli.main([command, "--port", "0"] if command == "api" else [command]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_an_unreadable_ca_is_a_usage_error_of_atout_bot(capsys, tmp_path) -> None:
    from atout import cli as bot_cli

    not_pem = tmp_path / "ca.txt"
    not_pem.write_text("hello")
    for path, said in ((tmp_path / "none.pem", "cannot read it"), (not_pem, "not a PEM certificate")):
        assert bot_cli.main(["run", "random", "--token", "t", "--ca", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"--ca '{path}': {said}" in err and err.count("\n") == 1, err
