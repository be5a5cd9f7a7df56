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
import importlib
import importlib.util
import logging
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from .bot import Bot

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REPLACED, EXIT_PROTOCOL = 0, 1, 2, 3, 4


class BotLoadError(Exception):
    """The bot given on the command line cannot be loaded; the message says why."""


def load_bot(spec: str) -> Callable[[], Bot]:
    """``module:Class``, ``path/to/file.py:Class`` or a name from ``atout.bots.BOTS`` -> the class.

    The current directory is importable, as with ``python -m``.
    """
    from .bots import BOTS

    if spec in BOTS:
        return BOTS[spec]
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise BotLoadError(
            f"bot {spec!r} is not module:Class (e.g. mybot:MyBot) nor a built-in bot ({', '.join(BOTS)})"
        )
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise BotLoadError(f"no file {module_name!r}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise BotLoadError(f"cannot load {module_name!r} as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            raise BotLoadError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
                raise BotLoadError(
                    f"cannot import module {module_name!r}: {exc} (run from its directory?)"
                ) from exc
            raise BotLoadError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise BotLoadError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    try:
        obj = getattr(module, attr)
    except AttributeError:
        bots = sorted(
            n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
        )
        raise BotLoadError(
            f"module {module_name!r} has no {attr!r}" + (f"; its bots: {', '.join(bots)}" if bots else "")
        ) from None
    if isinstance(obj, Bot) or not callable(obj):
        raise BotLoadError(f"{spec!r} is {obj!r}: give a Bot subclass (or a zero-argument factory)")
    if isinstance(obj, type) and not issubclass(obj, Bot):
        raise BotLoadError(f"{spec!r} is the class {obj.__name__}, which is not a subclass of atout.Bot")
    return obj


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
