"""The ``atout-arena`` command: one command for the whole arena, thin over the services.

    atout-arena bots add NAME [--owner OWNER]    register a bot; prints its token once
    atout-arena bots list                        the registered bots
    atout-arena bots rotate NAME                 a new token (the old one stops working)
    atout-arena bots disable NAME | enable NAME
    atout-arena gateway [--address HOST:PORT]    run a game server (until SIGTERM / Ctrl-C)
    atout-arena api [--host H] [--port P]        run the REST API and the dashboard
    atout-arena worker [--practice] ...          run a Celery worker (``python -m atout_workers``)
    atout-arena beat                             run Celery beat (the sweeper, league seasons)
    atout-arena demo [--game G] [--bots N] ...   everything embedded: a tournament between bots
    atout-arena replay | tournament | league     see :mod:`atout_arena.cli_competitions`

``worker`` and ``beat`` hand over to ``python -m atout_workers`` (the same process: ``exec``),
so that nothing of the arena's own packages imports the workers' code.

Configuration comes from ``ATOUT_*`` environment variables (:mod:`atout_arena.core.settings`);
a bad value is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

import redis

from atout_arena import cli_competitions
from atout_arena.api import serve_api
from atout_arena.core.db import open_database
from atout_arena.core.embedded_redis import find_redis_url
from atout_arena.core.settings import Settings, SettingsError
from atout_arena.core.tasks import Tasks
from atout_arena.demo import add_demo_parser
from atout_arena.gateway.server import serve
from atout_arena.services.bots import BotRegistry, RegistryError
from atout_arena.services.practice import Practice

GATEWAY_DB_POOL = 4  # the game server reads the database to check tokens and start practice matches
WORKER_COMMANDS = ("worker", "beat")


def _bots(args: argparse.Namespace, settings: Settings) -> int:
    registry = BotRegistry(open_database(settings.database_url)[1])
    try:
        if args.bots_command == "add":
            kind = "human" if args.human else "bot"
            bot, token = registry.add(args.name, owner=args.owner, kind=kind, move_ms=args.move_ms)
            print(f"bot {bot.name!r} added (id {bot.id}). Its token, shown only this once:", file=sys.stderr)
            print(token)
        elif args.bots_command == "list":
            bots = registry.list()
            if not bots:
                print("no bots yet: atout-arena bots add NAME", file=sys.stderr)
            for bot in bots:
                state = "disabled" if bot.disabled else "enabled"
                print(f"{bot.id}\t{bot.name}\t{bot.owner or '-'}\t{state}\t{bot.created_at:%Y-%m-%d %H:%M}")
        elif args.bots_command == "rotate":
            token = registry.rotate(args.name)
            print(f"bot {args.name!r} has a new token (the old one no longer works):", file=sys.stderr)
            print(token)
        elif args.bots_command in ("disable", "enable"):
            bot = registry.disable(args.name, disabled=args.bots_command == "disable")
            print(f"bot {bot.name!r} is {'disabled' if bot.disabled else 'enabled'}")
    except RegistryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _gateway(args: argparse.Namespace, settings: Settings) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redis_url, embedded = find_redis_url(settings)
    assert redis_url is not None  # found or started
    if embedded is not None:
        print(f"embedded Redis at {redis_url} (set ATOUT_REDIS_URL to share it)", flush=True)
    settings = settings.replace(redis_url=redis_url)
    address = args.address or settings.grpc_address

    def ready(port: int) -> None:
        host = address.rsplit(":", 1)[0]
        print(f"game server {settings.server_id} listening on {host}:{port}", flush=True)

    # Holds streams and relays; practice matches (Games.StartPractice) are stored and sent to
    # the workers' practice queue, never played here.
    engine, sessions = open_database(settings.database_url, pool_size=GATEWAY_DB_POOL)
    client = redis.Redis.from_url(redis_url, socket_timeout=30, socket_connect_timeout=5)
    tasks = Tasks.for_settings(settings)
    try:
        practice = Practice(sessions, client, tasks)
        asyncio.run(serve(settings, BotRegistry(sessions), address=address, redis_url=redis_url,
                          on_ready=ready, practice=practice))
    finally:
        tasks.close()
        client.close()
        engine.dispose()
        if embedded is not None:
            embedded.stop()
    return 0


def _workers(argv: list[str]) -> int:
    """``atout-arena worker|beat ...``: become ``python -m atout_workers worker|beat ...``."""
    command = [sys.executable, "-m", "atout_workers", *argv]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, command)
    return 2  # not reached


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="atout-arena", description="Run the Atout arena.")
    commands = parser.add_subparsers(dest="command")

    bots = commands.add_parser("bots", help="register and manage bots")
    bots_commands = bots.add_subparsers(dest="bots_command", required=True)
    add = bots_commands.add_parser("add", help="register a bot and print its token (once)")
    add.add_argument("name")
    add.add_argument("--owner", default="", help="who the bot belongs to")
    add.add_argument("--human", action="store_true", help="a person, who plays on the dashboard's Play page")
    add.add_argument("--move-ms", type=int, default=None,
                     help="its own move time when longer than a match's (a human's default: 60000)")
    bots_commands.add_parser("list", help="list the registered bots")
    for name, text in (
        ("rotate", "give a bot a new token"),
        ("disable", "stop a bot from connecting"),
        ("enable", "let a disabled bot connect again"),
    ):
        bots_commands.add_parser(name, help=text).add_argument("name", help="bot name or id")

    gateway = commands.add_parser("gateway", help="run a gRPC game server")
    gateway.add_argument("--address", help="HOST:PORT to listen on (default: ATOUT_GRPC_ADDRESS)")

    api = commands.add_parser("api", help="run the REST API and the web dashboard")
    api.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    api.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 takes a free one)")

    for name, text in (("worker", "run a Celery worker that plays matches (--practice: practice alone)"),
                       ("beat", "run Celery beat: the sweeper and league seasons")):
        worker = commands.add_parser(name, help=text, add_help=False)
        worker.add_argument("rest", nargs=argparse.REMAINDER, help="see atout-arena worker --help")

    cli_competitions.register(commands)
    add_demo_parser(commands)  # everything embedded: atout_arena/demo
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in WORKER_COMMANDS:
        return _workers(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "bots":
        return _bots(args, settings)
    if args.command == "gateway":
        return _gateway(args, settings)
    if args.command == "api":
        serve_api(args.host, args.port, settings)
        return 0
    if hasattr(args, "func"):
        return int(args.func(args))
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
