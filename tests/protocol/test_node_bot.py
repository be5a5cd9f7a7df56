"""The Node example bot (examples/node/, @grpc/grpc-js from the repository's .proto) on real
processes: embedded Redis, the game server, Celery workers, Python SDK bots. It plays a
tournament of every game at once against Python bots with 0 faults, answering pings between
matches; and it reconnects with backoff when its game server restarts.

``./install.sh`` installs it (``npm ci`` in examples/node)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_helpers import wait_until
from example_bots import plays_every_game_with_no_fault, reconnects_with_backoff
from sqlalchemy import select

from atout_arena.core.models import Match
from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(240)

NODE_DIR = Path(__file__).resolve().parents[2] / "examples" / "node"

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
    bot, process = node_bot()
    plays_every_game_with_no_fault("Node", "node", bot, process, arena_bots, start_worker, run_tournament,
                                   sessions, redis_client)


def test_the_node_bot_reconnects_with_backoff_when_its_game_server_restarts(
    node_bot, start_game_server, redis_client
) -> None:
    reconnects_with_backoff("Node", "node", node_bot, start_game_server, redis_client)


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
