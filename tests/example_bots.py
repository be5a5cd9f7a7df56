"""The checks the example bots of other languages share (tests/protocol/test_node_bot.py and
test_cpp_bot.py): a tournament of every game against Python bots with no fault, answering pings
between matches; reconnecting with backoff when the game server restarts. Each example logs ``connected as``,
``match N ended (finished|forfeit)``, ``connection lost``, ``reconnecting in S s`` and
``arena error CODE``, which these read."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from e2e_helpers import wait_until
from sqlalchemy import select

from atout_arena.core.models import Match, Tournament
from atout_arena.core.relay import is_connected

TOURNAMENTS: list[tuple[str, dict[str, Any]]] = [
    # game, spec: each with the example bot and two Python bots
    ("merde", {"players": 3, "options": {"deals": 3}}),
    ("tiercon", {"games_per_pairing": 2}),
    ("regicide", {"players": 3}),
    ("fool", {"players": 2, "games_per_pairing": 2}),
]


def plays_every_game_with_no_fault(label: str, key: str, bot: Any, process: Any, arena_bots: Any,
                                   start_worker: Any, run_tournament: Any, sessions: Any,
                                   redis_client: Any) -> None:
    """``bot`` (connected, its ``process``) in a tournament of each game against Python bots:
    every match finished, none with a fault or a forfeit of its seats, each with its decisions;
    then idle past three keep-alives, still connected."""
    start_worker(concurrency=16)
    began = time.monotonic()
    tournaments = {}
    for game, spec in TOURNAMENTS:
        python = arena_bots(["random", "heuristic"], prefix=f"py-{key}-{game}")
        tournaments[game] = run_tournament([bot, *python], game=game, move_ms=3000, name=f"{key}-{game}",
                                           **spec)

    def all_finished() -> bool:
        with sessions() as session:
            return all(session.get(Tournament, t).status == "finished" for t in tournaments.values())

    wait_until(all_finished, 180, "the four tournaments to finish", poll_s=0.2)
    elapsed = time.monotonic() - began
    played, decided = 0, 0
    with sessions() as session:
        for game, tid in tournaments.items():
            matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
            for match in matches:
                assert match.status == "finished", (game, match.id, match.status, match.error)
                seats = {s.seat for s in match.seats if s.bot_id == bot.id}
                if not seats:
                    continue
                played += 1
                faults = [row for row in match.actions if row[0] in seats and row[4]]
                assert not faults, (game, match.id, faults[:3])
                decisions = [row for row in match.actions if row[0] in seats and row[2] == "bot"]
                assert decisions, (game, match.id)
                decided += len(decisions)
                assert not any(s.forfeited for s in match.seats), (game, match.id)
    log = process.log()
    ended = re.findall(r"match (\d+) ended \((finished|forfeit)\)", log)
    print(f"\n{label} bot: {played} matches of 4 games, {decided} decisions, 0 faults in {elapsed:.1f} s")
    assert played >= 4 * 2 and len(ended) == played, log[-3000:]
    assert "connection lost" not in log and "rejected" not in log, log[-3000:]
    time.sleep(4.5)  # idle for over 3 keep-alive intervals (1 s in tests): it answers the pings
    assert is_connected(redis_client, bot.bot_id) and "keepalive_timeout" not in process.log()
    assert process.alive()


def reconnects_with_backoff(label: str, key: str, start_bot: Callable[..., Any], start_game_server: Any,
                            redis_client: Any) -> None:
    """The bot's game server stopped (SIGTERM) and started again on the same address a moment
    later: the bot saw Error ``shutting_down``, tried again with growing delays, and is back."""
    server = start_game_server(f"gs-{key}")
    address = server.info["address"]
    info, process = start_bot(address, name=f"{key}-reconnect")
    assert process.log().count("connected as") == 1
    server.stop()  # SIGTERM: the streams get Error shutting_down, then the port closes
    wait_until(lambda: "connection lost" in process.log(), 15, f"the {label} bot to see its stream end")
    time.sleep(1.5)  # a few refused attempts, with growing delays
    start_game_server(f"gs-{key}-2", address=address)
    wait_until(lambda: process.log().count("connected as") == 2, 30, f"the {label} bot to reconnect")
    wait_until(lambda: is_connected(redis_client, info.bot_id), 10, "its presence")
    log = process.log()
    delays = [float(d) for d in re.findall(r"reconnecting in ([\d.]+) s", log)]
    print(f"\n{label} bot: reconnected after {len(delays)} attempts, delays {delays}")
    assert "arena error shutting_down" in log, log
    assert len(delays) >= 2 and delays[-1] > delays[0], delays  # backing off
    assert process.alive()
