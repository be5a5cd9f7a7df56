"""The ``demo`` and ``up`` commands' options, without what runs them: ``atout-arena --help``
and the organizer's REST commands import this module, never the supervisor's database, Redis
and process machinery (:mod:`atout_arena.demo.run`, :mod:`atout_arena.demo.arena`), which the
handlers import when the command runs."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Preset:
    """How a game is played in the demo: seats per match, options, games per pairing."""

    players: int
    options: dict[str, Any]
    games_per_pairing: int


# Chosen so that the default demo (4 bots) takes about a minute on a 2-core laptop.
PRESETS: dict[str, Preset] = {
    "merde": Preset(players=4, options={"deals": 5}, games_per_pairing=600),
    "tiercon": Preset(players=2, options={}, games_per_pairing=30),
    "regicide": Preset(players=2, options={}, games_per_pairing=20),
    "fool": Preset(players=2, options={}, games_per_pairing=65),
}
DEFAULT_GAME = "merde"
DEFAULT_BOTS = 4
DEFAULT_WORKERS = 2
DEFAULT_API_PORT, DEFAULT_GRPC_PORT = 8000, 50051


def add_demo_parser(subparsers: Any) -> None:
    """``atout-arena demo``, run by :func:`atout_arena.demo.run.cmd_demo`."""
    demo = subparsers.add_parser(
        "demo", help="everything on this machine: a tournament between example bots",
        description="Start Redis, a SQLite database, the game server, the API and dashboard, Celery "
                    "workers and example bots (all on 127.0.0.1); play a tournament; print the "
                    "standings; stop everything.")
    demo.add_argument("--game", default=DEFAULT_GAME, choices=sorted(PRESETS),
                      help=f"the game (default {DEFAULT_GAME})")
    demo.add_argument("--bots", type=int, default=DEFAULT_BOTS,
                      help=f"number of bots, heuristic and random alternately (default {DEFAULT_BOTS})")
    demo.add_argument("--games-per-pairing", type=int,
                      help="games each pair of bots plays together (default: the game's, "
                           + ", ".join(f"{g} {p.games_per_pairing}" for g, p in PRESETS.items()) + ")")
    demo.add_argument("--players", type=int, help="seats per match (default: the game's, at most --bots)")
    demo.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                      help=f"Celery worker processes (default {DEFAULT_WORKERS})")
    demo.add_argument("--keep", action="store_true",
                      help="after the tournament keep everything running (dashboard) until Ctrl-C")
    demo.add_argument("--port", "--api-port", type=int, dest="port",
                      help=f"the API's port (default {DEFAULT_API_PORT}, or a free one if it is taken; "
                           "a port given here must be free)")
    demo.add_argument("--grpc-port", type=int,
                      help=f"the game server's port (default {DEFAULT_GRPC_PORT}, or a free one if it is "
                           "taken; a port given here must be free)")
    demo.add_argument("--data-dir", type=Path,
                      help="put the database and the logs here and keep them (default: a temporary "
                           "directory, removed at the end)")
    demo.set_defaults(func=_demo)


def add_arena_options(parser: argparse.ArgumentParser, data_dir_help: str) -> None:
    parser.add_argument("--api-port", type=int, default=DEFAULT_API_PORT,
                        help=f"the API's and dashboard's port on 127.0.0.1 (default {DEFAULT_API_PORT})")
    parser.add_argument("--grpc-port", type=int, default=DEFAULT_GRPC_PORT,
                        help=f"the game server's port on 127.0.0.1 (default {DEFAULT_GRPC_PORT})")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help=f"Celery worker processes (default {DEFAULT_WORKERS})")
    parser.add_argument("--data-dir", type=Path, help=data_dir_help)


def add_up_parser(subparsers: Any) -> None:
    """``atout-arena up``, run by :func:`atout_arena.demo.arena.cmd_up`."""
    up = subparsers.add_parser(
        "up", help="run a whole arena on this machine, supervised, until Ctrl-C",
        description="Start Redis (embedded, or ATOUT_REDIS_URL), the database (SQLite in the data dir, "
                    "or ATOUT_DATABASE_URL), the game server, the API and dashboard, Celery workers and "
                    "beat, all on 127.0.0.1; restart a part that dies; stop everything on Ctrl-C.")
    add_arena_options(up, "the database, the embedded Redis's data and the logs "
                          "(default: ATOUT_DATA_DIR, else ./var)")
    up.set_defaults(func=_up)


def _demo(args: argparse.Namespace) -> int:
    from atout_arena.demo.run import cmd_demo  # when it runs: see the module's docstring

    return cmd_demo(args)


def _up(args: argparse.Namespace) -> int:
    from atout_arena.demo.arena import cmd_up

    return cmd_up(args)
