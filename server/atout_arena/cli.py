"""The ``atout-arena`` command: one command for the whole arena, thin over the services.

    atout-arena gateway [--address HOST:PORT]    run a game server (until SIGTERM / Ctrl-C)
    atout-arena api [--host H] [--port P]        run the REST API and the dashboard
    atout-arena worker [--practice] ...          run a Celery worker (``python -m atout_workers``)
    atout-arena beat                             run Celery beat (the sweeper, league seasons)
    atout-arena demo [--game G] [--bots N] ...   everything embedded: a tournament between bots
    atout-arena up [--api-port 8000] [--grpc-port 50051] [--workers 2] [--data-dir DIR]
                                                 a whole arena, supervised (atout_arena/demo/arena.py)
    atout-arena backup FILE | restore FILE [--clean] | verify
                                                 the database: back it up, restore it, check every
                                                 finished match by replay (atout_arena/core/backup.py)
    atout-arena conformance [--games G,G] [-- COMMAND {address} {token}]
                                                 check a bot against docs/protocol.md: a scripted
                                                 game server (atout_arena/gateway/conformance.py)
    atout-arena bots | tournament | league | ladder | test | match | replay
                                                 the organizer's commands, through the REST API:
                                                 see :mod:`atout_arena.cli_competitions`
    atout-arena export (--competition KIND:ID | --game G) [--since DATE] [--format jsonl|parquet] [-o FILE]
                                                 the published matches' decisions as a dataset
                                                 (docs/datasets.md; atout_arena/cli_export.py)

``worker`` and ``beat`` hand over to ``python -m atout_workers`` (the same process: ``exec``),
so that nothing of the arena's own packages imports the workers' code.

Configuration comes from ``ATOUT_*`` environment variables (:mod:`atout_arena.core.settings`);
a bad value is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from atout_arena import cli_competitions
from atout_arena.cli_export import add_export_parser
from atout_arena.demo.commands import add_demo_parser, add_up_parser

if TYPE_CHECKING:
    from atout_arena.core.settings import Settings

# What a command runs is imported when it runs: `atout-arena --help` and the organizer's REST
# commands load argparse, httpx and rich, never FastAPI, SQLAlchemy, Celery, gRPC or numpy
# (tests/api/test_cli.py keeps them out).

GATEWAY_DB_POOL = 4  # the game server reads the database to check tokens and start practice matches
WORKER_COMMANDS = ("worker", "beat")
# The commands that run parts of an arena: the ATOUT_* settings are read (and a bad one refused)
# before they start anything. The others talk to an arena through its REST API.
SERVING_COMMANDS = ("gateway", "api", "demo", "up")
# The commands on the database itself (ATOUT_DATABASE_URL, or --database-url), arena running or not.
DATABASE_COMMANDS = ("backup", "restore", "verify")


def _gateway(args: argparse.Namespace, settings: Settings) -> int:
    from atout._loop import run as run_loop
    from atout_arena.core.db import open_database
    from atout_arena.core.embedded_redis import find_redis_url
    from atout_arena.core.redis_conn import sync_client
    from atout_arena.core.relay import ContractMismatch
    from atout_arena.core.tasks import Tasks
    from atout_arena.gateway.server import serve
    from atout_arena.services.bots import BotRegistry
    from atout_arena.services.practice import Practice

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redis_url, embedded = find_redis_url(settings)
    assert redis_url is not None  # found or started
    if embedded is not None:
        print(f"embedded Redis at {redis_url} (set ATOUT_REDIS_URL to share it)", flush=True)
    settings = settings.replace(redis_url=redis_url)
    if args.health_port is not None:
        settings = settings.replace(health_port=args.health_port)
    address = args.address or settings.grpc_address

    def ready(port: int) -> None:
        host = address.rsplit(":", 1)[0]
        tls = f" (TLS, certificate {settings.tls_cert})" if settings.tls_cert else ""
        print(f"game server {settings.server_id} listening on {host}:{port}{tls}", flush=True)

    # Holds streams and relays; practice matches (Games.StartPractice) are stored and sent to
    # the workers' practice queue, never played here.
    engine, sessions = open_database(settings.database_url, pool_size=GATEWAY_DB_POOL)
    client = sync_client(redis_url, socket_timeout=30, socket_connect_timeout=5)
    tasks = Tasks.for_settings(settings)
    try:
        practice = Practice(sessions, client, tasks)
        run_loop(serve(settings, BotRegistry(sessions), address=address, redis_url=redis_url,
                       on_ready=ready, practice=practice))
    except ContractMismatch as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        tasks.close()
        client.close()
        engine.dispose()
        if embedded is not None:
            embedded.stop()
    return 0


def _database(args: argparse.Namespace, settings: Settings) -> int:
    """``backup``, ``restore`` and ``verify``: :mod:`atout_arena.core.backup` and
    :func:`atout_arena.core.replay.verify_matches`; a failure is one line and exit code 2."""
    from atout_arena.core import backup
    from atout_arena.core.replay import verify_matches

    url = args.database_url or settings.database_url
    try:
        if args.command == "backup":
            print(backup.backup(url, args.file).line(), flush=True)
            return 0
        if args.command == "restore":
            print(backup.restore(url, args.file, clean=args.clean).line(), flush=True)
            print("check it: atout-arena verify (every finished match replayed)", flush=True)
            return 0
        engine, sessions = backup.open_existing(url)
    except backup.BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        found = verify_matches(sessions, on_report=lambda report: None if report.ok else
                               print(report.summary(), flush=True))
    finally:
        engine.dispose()
    print(found.summary(), flush=True)
    return 1 if found.diverged else 0


def _port_problem(host: str, port: str, option: str) -> str | None:
    """What is wrong with listening on ``host:port`` (0: a free port), said in one line; None
    when nothing is."""
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        return f"{option} {port}: a port is a number from 0 (any free port) to 65535"
    from atout_arena.demo.processes import port_is_free

    if int(port) and not port_is_free(int(port), host.strip("[]")):
        return f"{option} {host}:{port}: the port is in use (or the address is not this machine's)"
    return None


def _workers(argv: list[str]) -> int:
    """``atout-arena worker|beat ...``: become ``python -m atout_workers worker|beat ...``."""
    command = [sys.executable, "-m", "atout_workers", *argv]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, command)
    return 2  # not reached


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line (``atout-arena up: error: ...``), exit code 2; its subcommands'
    parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _conformance(args: argparse.Namespace) -> int:
    import asyncio

    from atout_arena.gateway.conformance import MATCHES, check

    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in MATCHES]
    if unknown or not games:
        print(f"atout-arena conformance: error: --games: unknown {unknown} (games: {', '.join(MATCHES)})",
              file=sys.stderr)
        return 2
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    def say(text: str) -> None:
        print(text, flush=True)

    return asyncio.run(check(args.port, games, args.move_ms, command, args.wait, say))


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="atout-arena", description="Run the Atout arena.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    commands = parser.add_subparsers(dest="command")

    gateway = commands.add_parser("gateway", help="run a gRPC game server")
    gateway.add_argument("--address", help="HOST:PORT to listen on (default: ATOUT_GRPC_ADDRESS)")
    gateway.add_argument("--health-port", type=int, metavar="PORT",
                         help="serve GET /healthz on this port, from the server's event loop, for a "
                              "load balancer's check (default: ATOUT_HEALTH_PORT; none)")

    api = commands.add_parser("api", help="run the REST API and the web dashboard")
    api.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    api.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 takes a free one)")

    for name, text in (("worker", "run a Celery worker that plays matches (--practice: practice alone)"),
                       ("beat", "run Celery beat: the sweeper and league seasons")):
        worker = commands.add_parser(name, help=text, add_help=False)
        worker.add_argument("rest", nargs=argparse.REMAINDER, help="see atout-arena worker --help")

    url_help = ("the database (default: ATOUT_DATABASE_URL, else the SQLite file under ATOUT_DATA_DIR); "
                "prefer the variable for a URL with a password: a command line is visible to ps")
    backup = commands.add_parser(
        "backup", help="back the arena's database up into a file (the arena may keep running)",
        description="PostgreSQL: pg_dump's custom format, in one snapshot; SQLite: its online backup "
                    "API. The file is readable by its owner only (it holds the arena's secrets). "
                    "See docs/backups.md.")
    backup.add_argument("file", type=Path, metavar="FILE", help="the backup file to write (replaced)")
    restore = commands.add_parser(
        "restore", help="restore a backup into an empty database (stop the arena's parts first)",
        description="Restore a file of `atout-arena backup` into the database: PostgreSQL by "
                    "pg_restore in one transaction, SQLite by its backup API. The database must be "
                    "empty, unless --clean. Then check it with `atout-arena verify`.")
    restore.add_argument("file", type=Path, metavar="FILE", help="the backup file")
    restore.add_argument("--clean", "--force", action="store_true", dest="clean",
                         help="replace what the database holds with the backup's contents")
    commands.add_parser(
        "verify", help="replay every finished match of the database: exit 1 if one diverges",
        description="Re-run every finished match from its seed and action log and compare with its "
                    "stored result (as `atout-arena replay ID` does for one, through the API); "
                    "prints each divergence and a summary.")
    for command in (backup, restore, commands.choices["verify"]):
        command.add_argument("--database-url", metavar="URL", help=url_help)

    conformance = commands.add_parser(
        "conformance", help="check a bot against docs/protocol.md: a scripted game server it connects to",
        description="Listen on 127.0.0.1, print an address and a token for the bot under test (or start "
                    "COMMAND, its {address} and {token} replaced), play one scripted match of each game "
                    "against it and print one line per protocol rule, PASS or FAIL with what was seen. "
                    "Exit code 0 when every rule passed, 1 otherwise. See docs/protocol.md, "
                    "\"Conformance check\".")
    conformance.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    conformance.add_argument("--games", default="merde,tiercon,regicide,fool",
                             help="the games to play, comma-separated (default: all four)")
    conformance.add_argument("--move-ms", type=int, default=2000, help="each request's time (default 2000)")
    conformance.add_argument("--wait", type=float, default=60.0,
                             help="seconds to wait for the bot to connect (default 60)")
    conformance.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                             help="the bot under test to start, e.g. -- node bot.js --server {address} "
                                  "--token {token}")
    conformance.set_defaults(func=_conformance)
    cli_competitions.register(commands)
    add_export_parser(commands)  # the published matches' decisions: atout_arena/cli_export.py
    add_demo_parser(commands)  # everything embedded: atout_arena/demo/run.py
    add_up_parser(commands)  # a whole arena, supervised: atout_arena/demo/arena.py
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; an unexpected error is one line and exit code 2 (its traceback with
    ``--debug``)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _main(argv)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BrokenPipeError:  # `atout-arena ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if "--debug" in argv:
            raise
        print(f"error: {one_line(exc)} (--debug shows the traceback)", file=sys.stderr)
        return 2


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type (unless the message says enough) and message."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if isinstance(exc, ValueError | OSError) else f"{type(exc).__name__}: {text}"


def _main(argv: list[str]) -> int:
    argv = [a for a in argv if a != "--debug"]  # anywhere on the line: main() looked at it
    if argv and argv[0] in WORKER_COMMANDS:
        return _workers(argv)
    parser = build_parser()
    from atout.cli import glue_sprt  # `test create --sprt -3,1`: negative bounds as the SDK reads them

    args = parser.parse_args(glue_sprt(argv))
    if args.command is None:
        parser.print_help()
        return 0
    if args.command not in (*SERVING_COMMANDS, *DATABASE_COMMANDS):  # the organizer's, through the API
        return int(args.func(args))
    from atout_arena.core.settings import Settings, SettingsError

    try:
        settings = Settings.from_env()
        if args.command in ("gateway", "api"):
            settings.tls_pair()  # its files, read and checked before anything starts
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command in DATABASE_COMMANDS:
        return _database(args, settings)
    if settings.redis_url:  # Redis refusing the password: one line, not a retry loop
        from atout_arena.core.redis_conn import refusal

        problem = refusal(settings.redis_url)
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    if args.command == "gateway":
        address = args.address or settings.grpc_address
        problem = _port_problem(address.rsplit(":", 1)[0], address.rsplit(":", 1)[-1],
                                "--address" if args.address else "ATOUT_GRPC_ADDRESS")
        if not problem and args.health_port is not None:
            problem = _port_problem(address.rsplit(":", 1)[0], str(args.health_port), "--health-port")
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        return _gateway(args, settings)
    if args.command == "api":
        problem = _port_problem(args.host, str(args.port), "--port")
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        from atout_arena.api import serve_api
        from atout_arena.core.relay import ContractMismatch

        try:
            serve_api(args.host, args.port, settings)
        except ContractMismatch as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if hasattr(args, "func"):
        return int(args.func(args))
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
