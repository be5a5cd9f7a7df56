"""``atout-arena bots ...``: the printed token works on the game server and is stored hashed."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys

import pytest
from gateway_helpers import RawBot

from atout_arena.cli import main

pytestmark = pytest.mark.timeout(60)


def arena(*args: str, database_url: str) -> subprocess.CompletedProcess:
    """The real command, in another process."""
    return subprocess.run(
        [sys.executable, "-m", "atout_arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "ATOUT_DATABASE_URL": database_url},
    )


def arena_here(*args: str, database_url: str, monkeypatch, capsys) -> subprocess.CompletedProcess:
    """The same command run in this process (faster)."""
    monkeypatch.setenv("ATOUT_DATABASE_URL", database_url)
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


def test_bots_add_prints_a_token_that_works_and_is_stored_hashed(
    database_url, game_server, monkeypatch, capsys
) -> None:
    name = f"cli-bot-{os.getpid()}"
    added = arena("bots", "add", name, "--owner", "carol", database_url=database_url)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("atout_") and "\n" not in token  # only the token on stdout
    assert "shown only this once" in added.stderr

    database = database_url.removeprefix("sqlite:///")
    with sqlite3.connect(database) as db:
        row = db.execute("SELECT owner, token_hash FROM bots WHERE name = ?", (name,)).fetchone()
        dump = "\n".join(db.iterdump())
    assert row == ("carol", hashlib.sha256(token.encode()).hexdigest())
    assert token not in dump

    bot = RawBot(game_server.info["address"], token)
    try:
        assert bot.connect().bot_name == name
    finally:
        bot.close()

    listed = arena_here("bots", "list", database_url=database_url, monkeypatch=monkeypatch, capsys=capsys)
    assert listed.returncode == 0 and name in listed.stdout and "carol" in listed.stdout
    assert token not in listed.stdout

    again = arena_here("bots", "add", name, database_url=database_url, monkeypatch=monkeypatch, capsys=capsys)
    assert again.returncode == 1 and f"a bot named {name!r} already exists" in again.stderr


def test_bots_rotate_and_disable(database_url, registry, monkeypatch, capsys) -> None:
    name = f"cli-rot-{os.getpid()}"
    _, old = registry.add(name)
    rotated = arena_here(
        "bots", "rotate", name, database_url=database_url, monkeypatch=monkeypatch, capsys=capsys
    )
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.strip()
    assert registry.verify(old) is None and registry.verify(new).name == name
    disabled = arena_here(
        "bots", "disable", name, database_url=database_url, monkeypatch=monkeypatch, capsys=capsys
    )
    assert disabled.returncode == 0 and registry.verify(new).disabled
    missing = arena_here(
        "bots", "disable", "no-such-bot", database_url=database_url, monkeypatch=monkeypatch, capsys=capsys
    )
    assert missing.returncode == 1 and "no bot named 'no-such-bot'" in missing.stderr


def test_bots_add_human_registers_a_person_with_its_own_move_time(
    database_url, registry, monkeypatch, capsys
) -> None:
    name = f"cli-person-{os.getpid()}"
    added = arena_here("bots", "add", name, "--human", "--move-ms", "45000", database_url=database_url,
                       monkeypatch=monkeypatch, capsys=capsys)  # fmt: skip
    assert added.returncode == 0, added.stderr
    person = registry.verify(added.stdout.strip())
    assert person is not None and person.kind == "human" and person.move_ms == 45_000
    bad = arena_here("bots", "add", f"{name}-2", "--human", "--move-ms", "0", database_url=database_url,
                     monkeypatch=monkeypatch, capsys=capsys)  # fmt: skip
    assert bad.returncode == 1 and "move_ms=0" in bad.stderr
