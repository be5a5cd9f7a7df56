"""The Node example bot (examples/node/, @grpc/grpc-js from the repository's .proto) on real
processes: embedded Redis, the game server, Celery workers, Python SDK bots. It plays a
tournament of every game at once against Python bots with 0 faults, answering pings between
matches; and it reconnects with backoff when its game server restarts.

``./install.sh`` installs it (``npm ci`` in examples/node)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import wait_until
from sqlalchemy import select

from atout_arena.core.models import Match, Tournament
from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(240)

NODE_DIR = Path(__file__).resolve().parents[2] / "examples" / "node"
TOURNAMENTS: list[tuple[str, dict[str, Any]]] = [
    # game, spec: each with the Node bot and two Python bots
    ("merde", {"players": 3, "options": {"deals": 3}}),
    ("tiercon", {"games_per_pairing": 2}),
    ("regicide", {"players": 3}),
    ("fool", {"players": 2, "games_per_pairing": 2}),
]


def node() -> str:
    path = shutil.which("node")
    assert path, "node is not installed (Node.js 18 or later: the example bot's runtime)"
    assert (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(), \
        "examples/node has no node_modules: run ./install.sh (npm ci in examples/node)"
    return path


@pytest.fixture
def node_bot(processes, make_bot, game_server, redis_client):
    """``node_bot(address=None) -> (BotInfo, Process)``: the Node bot registered and connected."""

    def start(address: str | None = None, name: str = "node"):
        info, token = make_bot(name)
        process = processes.start("node-bot", [node(), str(NODE_DIR / "bot.js"), "--server",
                                               address or game_server.info["address"], "--token", token], {})
        wait_until(lambda: is_connected(redis_client, info.bot_id), 30, "the Node bot to connect")
        wait_until(lambda: "connected as" in process.log(), 10, "the Node bot to log its Welcome")
        return info, process

    return start


@pytest.mark.slow
def test_the_node_bot_plays_every_game_against_python_bots_with_no_fault(
    node_bot, arena_bots, start_worker, run_tournament, sessions, redis_client
) -> None:
    js, process = node_bot()
    start_worker(concurrency=16)
    began = time.monotonic()
    tournaments = {}
    for game, spec in TOURNAMENTS:
        python = arena_bots(["random", "heuristic"], prefix=f"py-{game}")
        tournaments[game] = run_tournament([js, *python], game=game, move_ms=3000, name=f"node-{game}",
                                           **spec)

    def all_finished() -> bool:
        with sessions() as session:
            return all(session.get(Tournament, t).status == "finished" for t in tournaments.values())

    wait_until(all_finished, 180, "the four tournaments to finish", poll_s=0.2)
    elapsed = time.monotonic() - began
    played = 0
    with sessions() as session:
        for game, tid in tournaments.items():
            matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
            for match in matches:
                assert match.status == "finished", (game, match.id, match.status, match.error)
                seats = [s for s in match.seats if s.bot_id == js.id]
                if not seats:
                    continue
                played += 1
                node_seats = {s.seat for s in seats}
                faults = [row for row in match.actions if row[0] in node_seats and row[4]]
                assert not faults, (game, match.id, faults[:3])
                decisions = [row for row in match.actions if row[0] in node_seats and row[2] == "bot"]
                assert decisions, (game, match.id)
                assert not any(s.forfeited for s in match.seats), (game, match.id)
    log = process.log()
    ended = re.findall(r"match (\d+) ended \((finished|forfeit)\)", log)
    print(f"\nNode bot: {played} matches of 4 games with 0 faults in {elapsed:.1f} s")
    assert played >= 4 * 2 and len(ended) == played, log[-3000:]
    assert "connection lost" not in log and "rejected" not in log, log[-3000:]
    time.sleep(4.5)  # idle for over 3 keep-alive intervals (1 s in tests): it answers the pings
    assert is_connected(redis_client, js.bot_id) and "keepalive_timeout" not in process.log()
    assert process.alive()


def test_the_node_bot_reconnects_with_backoff_when_its_game_server_restarts(
    node_bot, start_game_server, redis_client
) -> None:
    server = start_game_server("gs-node")
    address = server.info["address"]
    info, process = node_bot(address, name="node-reconnect")
    assert process.log().count("connected as") == 1
    server.stop()  # SIGTERM: the streams get Error shutting_down, then the port closes
    wait_until(lambda: "connection lost" in process.log(), 15, "the Node bot to see its stream end")
    time.sleep(1.5)  # a few refused attempts, with growing delays
    start_game_server("gs-node-2", address=address)
    wait_until(lambda: process.log().count("connected as") == 2, 30, "the Node bot to reconnect")
    wait_until(lambda: is_connected(redis_client, info.bot_id), 10, "its presence")
    log = process.log()
    delays = [float(d) for d in re.findall(r"reconnecting in ([\d.]+) s", log)]
    print(f"\nNode bot: reconnected after {len(delays)} attempts, delays {delays}")
    assert "arena error shutting_down" in log, log
    assert len(delays) >= 2 and delays[-1] > delays[0], delays  # backing off
    assert process.alive()


def test_a_raw_grpc_bot_written_from_the_protocol_doc_plays_with_no_fault(
    processes, make_bot, game_server, arena_bots, start_worker, run_tournament, wait_finished, sessions,
    redis_client,
) -> None:
    """The doc's "done when": a second bot, from docs/protocol.md and the .proto alone (plain
    grpcio, stubs generated at start; tests/protocol/raw_python_bot.py)."""
    import sys

    info, token = make_bot("raw")
    process = processes.start("raw-bot", [sys.executable, str(Path(__file__).parent / "raw_python_bot.py"),
                                          game_server.info["address"], token], {})
    wait_until(lambda: is_connected(redis_client, info.bot_id), 30, "the raw bot to connect")
    python = arena_bots(["random", "heuristic"], prefix="py-raw")
    start_worker(concurrency=8)
    tid = run_tournament([info, *python], game="regicide", players=3, move_ms=3000, name="raw")
    wait_finished(tid)
    with sessions() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        seats = {(m.id, s.seat) for m in matches for s in m.seats if s.bot_id == info.id}
        faults = [row for m in matches for row in m.actions if (m.id, row[0]) in seats and row[4]]
        assert all(m.status == "finished" for m in matches) and seats
    assert not faults, faults[:3]
    log = process.log()
    assert log.count("ended (") == len(seats) and "rejected" not in log, log[-2000:]


def test_the_node_bot_connects_with_tls_and_its_ca_and_refuses_another_ca_in_one_line(
    processes, make_bot, start_game_server, redis_client, tmp_path
) -> None:
    from tls_helpers import make_ca, tls_env

    certs, other = make_ca(tmp_path / "arena"), make_ca(tmp_path / "other")
    address = start_game_server("gs-node-tls", **tls_env(certs)).info["address"]
    info, token = make_bot("node-tls")
    bot = processes.start("node-bot-tls", [node(), str(NODE_DIR / "bot.js"), "--server", address,
                                           "--token", token, "--ca", str(certs.ca)], {})
    wait_until(lambda: is_connected(redis_client, info.bot_id), 30, "the Node bot to connect over TLS")
    refused = processes.start("node-bot-other-ca", [node(), str(NODE_DIR / "bot.js"), "--server", address,
                                                    "--token", token, "--ca", str(other.ca)], {})
    wait_until(lambda: not refused.alive(), 15, "the Node bot with another CA to exit")
    lines = refused.log().strip().splitlines()
    print(f"\nNode bot, another CA: {lines}")
    assert refused.popen.returncode == 2 and len(lines) == 1, refused.log()
    assert lines[0].startswith("error: TLS: the arena's certificate is not trusted (unable to verify"), lines
    assert lines[0].endswith(f"is {other.ca} the CA that signed it?"), lines
    assert bot.alive() and "connected as" in bot.log()
