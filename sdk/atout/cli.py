"""The ``atout-bot`` command: run a bot against an arena.

    atout-bot run mybot:MyBot --server arena.example.org:50051 --token T
    atout-bot run random --server 127.0.0.1:50051        # a bot from atout.bots.BOTS
    ATOUT_TOKEN=T atout-bot run path/to/mybot.py:MyBot

Exit codes: 0 stopped (Ctrl-C, SIGTERM); 1 the arena stayed unreachable (gave up reconnecting) or
an unexpected error; 2 bad usage: arguments, a bot that cannot be loaded, a missing or refused
token; 3 another connection with the same token took over the bot; 4 the server does not speak
this protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import textwrap

from .loading import BotLoadError, load_bot

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REPLACED, EXIT_PROTOCOL = 0, 1, 2, 3, 4


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="atout-bot",
        description="Run an Atout bot against an arena.",
        epilog="examples:\n"
        + "\n\n".join(textwrap.indent(textwrap.dedent(par), "  ") for par in __doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser("run", help="connect a bot and play its matches until stopped")
    run.add_argument("bot", help="module:Class, path/to/file.py:Class, or a built-in bot (random, heuristic)")
    run.add_argument(
        "--server", default="127.0.0.1:50051", help="the arena's HOST:PORT (default: %(default)s)"
    )
    run.add_argument("--token", help="the bot's token (default: $ATOUT_TOKEN)")
    run.add_argument("--tls", action="store_true", help="connect with TLS")
    run.add_argument(
        "--max-workers", type=int, default=8, help="matches computed at once (default: %(default)s)"
    )
    run.add_argument(
        "--max-reconnects",
        type=int,
        default=100,
        help="failed reconnection attempts in a row before giving up; -1: never (default: %(default)s)",
    )
    run.add_argument("--no-reconnect", action="store_true", help="exit when the stream breaks")
    run.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="default: %(default)s",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = args.token or os.environ.get("ATOUT_TOKEN")
    if not token:
        parser.error("no token: pass --token T or set ATOUT_TOKEN")
    host, sep, port = args.server.rpartition(":")
    if not sep or not host or not port.isdigit():
        parser.error(f"--server must be HOST:PORT, not {args.server!r}")
    if args.max_workers < 1:
        parser.error("--max-workers must be at least 1")
    try:
        factory = load_bot(args.bot)
    except BotLoadError as exc:
        print(f"atout-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE

    from .runner import AtoutError, run

    try:
        run(
            factory,
            args.server,
            token,
            max_workers=args.max_workers,
            reconnect=not args.no_reconnect,
            max_reconnects=None if args.max_reconnects < 0 else args.max_reconnects,
            tls=args.tls,
        )
    except AtoutError as exc:
        print(f"atout-bot: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
