"""atout-bot watch: a recorded game step by step, in the terminal (atout.render's text table) and
in a browser (the dashboard's own table.js and cards.js, served by the SDK on 127.0.0.1)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from watch_records import NOTE, PLAYERS, recorded_game, table_css, write_records

from atout.cli import main
from atout.record import GameRecord
from atout.render import render_position
from atout.watch import frames, make_server, watch_terminal, web_events
from atout.web import SHARED, WEB_DIR

GAMES = list(PLAYERS)


@pytest.fixture(scope="module")
def records() -> list[GameRecord]:
    return [recorded_game(game, options={"deals": 2} if game == "merde" else None) for game in GAMES]


@pytest.fixture
def record_file(tmp_path: Path, records: list[GameRecord]) -> Path:
    return write_records(tmp_path / "games.jsonl", records)


def test_render_position_shows_every_hand_or_one_seats(records: list[GameRecord]) -> None:
    for record in records:
        state = record.new_state()
        text = render_position(state, seats=record.seats)
        assert text.startswith(f"{record.game}, {record.players} players")
        assert text.count("hand: ") == record.players, text  # the whole deal, face up
        for s in range(record.players):
            assert f"heuristic v{s}" in text
        to_act = [line for line in text.splitlines() if line.endswith("<- to act")]
        assert len(to_act) == 1 and to_act[0].startswith(f"  seat {state.current_player}  ")
        own = render_position(state, seat=1, seats=record.seats)
        assert own.count("hand: ") == 1 and "seat 1 (you)" in own, own  # the others' hands hidden
        with pytest.raises(ValueError, match="not a seat"):
            render_position(state, seat=record.players)


def test_watch_piped_prints_every_move_its_note_and_the_record_scores(
    record_file: Path, records: list[GameRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    for number, record in enumerate(records, 1):
        assert main(["watch", str(record_file), "--game", str(number)]) == 0
        out = capsys.readouterr().out
        moves = [line for line in out.splitlines() if line.startswith("move ")]
        assert len(moves) == len(record.steps) and moves[-1].startswith(f"move {len(record.steps)}/")
        notes = sum(1 for step in record.steps if step.note)
        assert notes and out.count(f"note: {NOTE}") == notes
        assert out.rstrip().splitlines()[-1].startswith(
            "final scores: " + ", ".join(str(x) for x in record.scores))
        assert "game over: scores " + ", ".join(str(x) for x in record.scores) in out


def test_watch_command_through_a_pipe(record_file: Path, records: list[GameRecord]) -> None:
    """The installed command, its stdout a pipe: every step, no key awaited."""
    command = [sys.executable, "-m", "atout.cli", "watch", str(record_file), "--game", "3", "--seat", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("move ") == len(records[2].steps)
    assert "seat 0 (you)" in done.stdout and "[Enter" not in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--game", "9"], "no game 9 (the file holds 4: --game 1..4)"),
    (["--seat", "2"], "--seat 2: this game has seats 0..1"),
    (["--delay", "-1"], "--delay must be 0 or more seconds"),
])
def test_watch_errors_are_one_line(record_file: Path, capsys: pytest.CaptureFixture[str],
                                   args: list[str], message: str) -> None:
    assert main(["watch", str(record_file), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_a_terminal_steps_one_move_per_key_and_q_quits(records: list[GameRecord]) -> None:
    pressed = iter([" ", "\n", "q"])
    out = io.StringIO()
    shown = watch_terminal(records[0], interactive=True, out=out, keys=io.StringIO(),
                           read_key=lambda _: next(pressed))
    assert shown == 3  # the start, move 1, move 2: then q
    text = out.getvalue()
    assert text.count("\x1b[2J") == 3 and "move 2/" in text and "move 3/" not in text
    out = io.StringIO()
    shown = watch_terminal(records[2], delay=0, interactive=True, out=out, keys=io.StringIO(),
                           read_key=lambda _: pytest.fail("--delay waits for no key"))
    assert shown == len(records[2].steps) + 2 == len(list(frames(records[2])))


def test_the_arena_and_watch_serve_one_copy_of_the_table() -> None:
    from fastapi.testclient import TestClient

    from atout_arena.api import create_app
    from atout_arena.core.settings import Settings

    client = TestClient(create_app(Settings.from_env({})))
    for name in SHARED:
        answer = client.get(f"/dashboard/js/{name}")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/javascript")
        assert answer.content == (WEB_DIR / name).read_bytes()
    assert not (Path(__file__).parents[2] / "server/atout_arena/dashboard/js/table.js").exists()


def test_the_web_view_has_the_dashboard_table_css() -> None:
    assert (WEB_DIR / "table.css").read_text(encoding="utf-8") == table_css(), (
        "sdk/atout/web/table.css differs from the dashboard's table rules: "
        "run .venv/bin/python tests/watch_records.py")


def test_web_events_hide_the_other_hands_for_a_seat(records: list[GameRecord]) -> None:
    full = web_events(records[2])
    assert len(full["events"]) == len(records[2].steps) + 1 and len(full["events"][0]["hands"]) == 3
    seat = web_events(records[2], seat=2)
    assert "hands" not in seat["events"][5] and "hand" in seat["events"][5]["view"]


@pytest.fixture
def served(records: list[GameRecord]) -> Iterator[list[str]]:
    servers = [make_server(record) for record in records]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [f"http://127.0.0.1:{server.server_address[1]}/" for server in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_web_view_steps_to_the_record_final_scores(served: list[str], records: list[GameRecord]) -> None:
    from axe_helpers import assert_accessible
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("ATOUT_CHROMIUM", "/usr/bin/chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for url, record in zip(served, records, strict=True):
            page.goto(url)
            page.wait_for_selector("body[data-ready='1'] .felt .seat")
            assert page.locator(".felt .seat").count() == record.players
            page.get_by_role("button", name="next").click()
            page.wait_for_selector(".felt[data-ply='1'], #felt[data-ply='1']")
            page.get_by_role("button", name="last").click()
            page.wait_for_selector(f"#felt[data-ply='{len(record.steps)}']")
            shown = page.locator("table.scores td.score").all_inner_texts()
            assert shown == [str(x) for x in record.scores], record.game
            assert page.locator(".felt .badge.winner").count() == record.ranking.count(1)
            assert page.locator(".log li").count() == len(record.steps)
            assert page.locator(".log .move-note").first.inner_text() == f"note: {NOTE}"
            assert page.locator("#felt .card").count() > 0  # drawn by the dashboard's cards.js
        settled = "document.getAnimations().every((a) => a.playState !== 'running')"
        page.wait_for_function(settled)  # the bubble pops in: axe reads its colours once it is there
        assert_accessible(page, f"atout-bot watch --web, {records[-1].game}, last step")
        page.get_by_role("button", name="first").click()
        page.wait_for_selector("#felt[data-ply='0']")
        page.wait_for_function(settled)
        assert_accessible(page, f"atout-bot watch --web, {records[-1].game}, first step")
        browser.close()
    assert not errors, errors
