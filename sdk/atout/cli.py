"""The ``atout-bot`` command: check a bot, measure it against another, run it against an arena.

    atout-bot validate mybot:MyBot --game merde           # faults, think time, determinism
    atout-bot test mybot:MyBot heuristic --game merde --sprt 0,50 --jobs 2
    atout-bot run mybot:MyBot --server arena.example.org:50051 --token T
    atout-bot run mybot:MyBot --server arena.example.org:50051 --ca ca.pem   # TLS, a private CA
    atout-bot run random --server 127.0.0.1:50051        # a bot from atout.bots.BOTS
    atout-bot run pimc:worlds=64 --server 127.0.0.1:50051   # a built-in bot's parameters (docs/bots.md)
    ATOUT_TOKEN=T atout-bot run path/to/mybot.py:MyBot
    atout-bot watch games.jsonl --game 2 --seat 0       # a recorded game, move by move (--web: a browser)
    atout-bot dataset games.jsonl -o decisions.parquet  # one row per decision (docs/datasets.md)

Exit codes of run: 0 stopped (Ctrl-C, SIGTERM); 1 the arena stayed unreachable (gave up
reconnecting) or an unexpected error; 2 bad usage: arguments, a bot that cannot be loaded, a
missing or refused token, a TLS handshake refused (the arena's certificate: --ca FILE); 3
another connection with the same token took over the bot; 4 the server does not speak this
protocol. test (also ``match``, its name before): 0 whatever the
verdict (also on Ctrl-C), 2 bad usage.
validate: 0 no fault found, 1 a fault found, 2 bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any, NoReturn

from .loading import BotLoadError, load_bot

if TYPE_CHECKING:
    from .sprt import SetResult, TestOutcome

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REPLACED, EXIT_PROTOCOL = 0, 1, 2, 3, 4
EXIT_FAULT = 1  # validate found a fault


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``atout-bot test: error: ...``), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _option(text: str) -> tuple[str, Any]:
    """``K=V`` -> ``(K, V)``, V an int, a bool (true/false) or a string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    if value.lstrip("-").isdigit():
        return key, int(value)
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    return key, value


def _elos(text: str) -> tuple[float, float]:
    try:
        elo0, elo1 = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ELO0,ELO1 (e.g. 0,50), not {text!r}") from None
    return elo0, elo1


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _add_game_arguments(command: argparse.ArgumentParser) -> None:
    from .games import GAMES

    command.add_argument("--game", required=True, choices=list(GAMES), help="the game")
    command.add_argument(
        "--option",
        action="append",
        type=_option,
        default=[],
        metavar="K=V",
        help="a game option, as in atout.games.new_game (repeat for more), e.g. --option deals=2",
    )
    command.add_argument("--seed", type=int, default=0, help="the seed of the deals (default: %(default)s)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="atout-bot",
        description="Check an Atout bot, measure it against another locally, run it against an arena.",
        epilog="examples:\n"
        + "\n\n".join(textwrap.indent(textwrap.dedent(par), "  ") for par in __doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser("run", help="connect a bot and play its matches until stopped")
    run.add_argument("bot", help="module:Class, path/to/file.py:Class, or a built-in bot (random, heuristic, "
                     "pimc, ismcts; parameters after a colon: pimc:worlds=64, see docs/bots.md)")
    run.add_argument(
        "--server", default="127.0.0.1:50051", help="the arena's HOST:PORT (default: %(default)s)"
    )
    run.add_argument("--token", help="the bot's token (default: $ATOUT_TOKEN)")
    run.add_argument("--tls", action="store_true",
                     help="connect with TLS, the arena's certificate checked against the system's CAs")
    run.add_argument("--ca", metavar="FILE",
                     help="connect with TLS, the arena's certificate checked against this CA's PEM file "
                          "(a private CA; default: $ATOUT_CA_FILE)")
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
        "--version",
        dest="bot_version",
        help="a label of this version of the bot, e.g. a git commit (default: $ATOUT_BOT_VERSION): every "
        "match stores the version each seat played with, and two versions may be connected at once",
    )
    run.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="default: %(default)s",
    )

    bot_help = ("module:Class, path/to/file.py:Class, or a built-in bot (random, heuristic, pimc, ismcts; "
                "parameters after a colon: pimc:worlds=64, see docs/bots.md)")
    # A *test*, as in the arena (/v1/tests, atout-arena test); `match`, its name before, still works.
    test = commands.add_parser(
        "test",
        aliases=["match"],
        help="bot A against bot B, locally, in duplicate sets, until an SPRT decides",
        description="Play bot A against bot B locally at engine speed, in duplicate sets (the same deals "
        "in every seat rotation), and report A's score, Elo with a 95% interval, LOS and, with --sprt, "
        "the GSPRT's verdict. Exit code 0 whatever the verdict.",
    )
    test.add_argument("bot_a", metavar="BOT_A", help=bot_help)
    test.add_argument("bot_b", metavar="BOT_B", help=bot_help)
    _add_game_arguments(test)
    test.add_argument("--players", type=_positive, help="seats at the table (default: the game's default)")
    test.add_argument(
        "--field", default="heuristic", metavar="BOT", help="the bot of the other seats (default: heuristic)"
    )
    test.add_argument(
        "--games", type=_positive, default=20000, help="at most this many games (default: %(default)s)"
    )
    test.add_argument(
        "--sprt", type=_elos, metavar="ELO0,ELO1", help="stop when the SPRT of elo0 against elo1 decides"
    )
    test.add_argument("--alpha", type=float, default=0.05, help="SPRT false positive rate (default: 0.05)")
    test.add_argument("--beta", type=float, default=0.05, help="SPRT false negative rate (default: 0.05)")
    test.add_argument("--jobs", type=_positive, default=1, help="processes playing sets (default: 1)")
    test.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")
    test.add_argument("--record", metavar="FILE.jsonl",
                      help="append every game to this file, one JSON line each (docs/record.md)")
    test.add_argument("--dataset", metavar="FILE.jsonl|FILE.parquet",
                      help="write (replace) this file with one row per decision of every game, what "
                           "the seat saw and chose (docs/datasets.md; Parquet: pip install \"atout[data]\")")

    validate = commands.add_parser(
        "validate",
        help="play local games against the house bots and report faults, think time, determinism",
        description="Play local games in every seat of every player count of the game against the "
        "heuristic bot; report exceptions, illegal actions, decision time against the budget, "
        "reproducibility and peak memory. Exit code 1 when a fault is found.",
    )
    validate.add_argument("bot", help=bot_help)
    _add_game_arguments(validate)
    validate.add_argument(
        "--games", type=_positive, default=5, help="games per player count and seat (default: %(default)s)"
    )
    validate.add_argument(
        "--move-ms", type=float, default=1000.0, help="the per-move budget in ms (default: %(default)g)"
    )
    validate.add_argument("--record", metavar="FILE.jsonl",
                          help="append every game to this file, one JSON line each (docs/record.md)")

    watch = commands.add_parser(
        "watch",
        help="step through a recorded game: the table move by move, in the terminal or a browser",
        description="Step through a game of a record file (atout-game/1, JSON Lines): the table after "
        "each move, with the bot's note. On a terminal one move per key (Enter or space; q quits) or "
        "every --delay seconds; piped, every step at once. Without --seat every hand is face up.",
    )
    watch.add_argument("file", help="a record file (test/validate --record, atout-arena match export)")
    watch.add_argument("--game", type=_positive, default=1, help="which game of the file, from 1 (default 1)")
    watch.add_argument("--seat", type=int, help="show what this seat saw (its hand only); default every hand")
    watch.add_argument("--delay", type=float, metavar="SEC", help="move on every SEC seconds, not per key")
    watch.add_argument("--web", action="store_true",
                       help="show the dashboard's table in a browser, served on 127.0.0.1 (Ctrl-C stops)")
    watch.add_argument("--port", type=int, default=0, help="with --web: the port (default: a free one)")
    watch.add_argument("--no-browser", action="store_true", help="with --web: print the address only")
    dataset = commands.add_parser(
        "dataset",
        help="a record file's games as one row per decision (JSON Lines or Parquet), to learn from",
        description="Replay every game of a record file (atout-game/1: test/validate --record, "
        "atout-arena match export) and write one row per decision: the seat's observation and legal "
        "actions, its action, who chose it, the think time, the final scores and ranks "
        "(docs/datasets.md). The format comes from OUTPUT's name: .jsonl or .parquet (pip install "
        "\"atout[data]\").",
    )
    dataset.add_argument("records", metavar="RECORDS.jsonl", help="a record file")
    dataset.add_argument("-o", "--output", required=True, metavar="ROWS.jsonl|ROWS.parquet",
                         help="the dataset file to write (replaced)")
    _add_replay_command(commands, bot_help)
    return parser


def _add_replay_command(commands: Any, bot_help: str) -> None:
    """``atout-bot replay``: see atout/replay.py."""
    replay = commands.add_parser(
        "replay",
        help="ask your bot again every decision of its seat in a recorded game, an arena match or a seed",
        description="Rebuild a recorded game (a --record FILE, or an arena match: MATCH_ID, --api) and "
        "ask BOT every decision of --seat: print where it now answers differently, with the position. "
        "--from K lets the bots play on from decision K (decision 1 is the game's first action, every "
        "seat counted). "
        "Without FILE/MATCH_ID: play again the game --seed ... --seats ... that validate or test printed "
        "for a fault, and print every fault of --seat with its position. Exit code 0 whatever it finds.",
    )
    replay.add_argument("source", nargs="?", metavar="FILE|MATCH_ID",
                        help="a record file, or an arena match's id")
    replay.add_argument("--bot", help=f"the bot to ask: {bot_help}")
    replay.add_argument("--seat", type=int, help="the seat the bot plays")
    replay.add_argument("--game",
                        help="with FILE: the N-th game of the file (default: 1); with --seed: the game")
    replay.add_argument("--from", dest="start", type=_positive, metavar="K",
                        help="play on from decision K: your bot in --seat, --field in the others")
    replay.add_argument("--field", metavar="BOT", help="with --from: the other seats' bot (default: each "
                        "seat's recorded bot when it loads here, else heuristic)")
    replay.add_argument("--api", metavar="URL", help="with MATCH_ID: the arena's API (default: "
                        "$ATOUT_API_URL, else http://127.0.0.1:8000)")
    replay.add_argument("--token", help="with MATCH_ID: a token (default: $ATOUT_TOKEN), e.g. your bot's")
    replay.add_argument("--players", type=_positive,
                        help="with --seed: seats at the table (default: as many as --seats)")
    replay.add_argument("--seed", type=int, help="replay the game of this seed (as validate/test print it)")
    replay.add_argument("--option", action="append", type=_option, default=[], metavar="K=V",
                        help="with --seed: a game option (repeat for more)")
    replay.add_argument("--suit-permutation", metavar="P", help="with --seed: the deals' suit permutation")
    replay.add_argument("--seats", metavar="SPEC0,SPEC1,...", help="with --seed: the bot of every seat")
    replay.add_argument("--bot-seeds", metavar="S0,S1,...",
                        help="with --seed: each bot's rng seed (default: SEED/SEAT, as validate seeds them)")
    replay.add_argument("--match-id", default="local", help="with --seed: the match id the bots are told "
                        "(default: %(default)s)")  # fmt: skip


def glue_sprt(argv: list[str]) -> list[str]:
    """``--sprt -3,1`` as ``--sprt=-3,1``: argparse takes a value that starts with ``-`` (and is
    not a plain number) for an option, so negative bounds would be "expected one argument"."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--sprt" and arg.startswith("-") and arg[1:2].isdigit():
            out[-1] = f"--sprt={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(glue_sprt(sys.argv[1:] if argv is None else list(argv)))
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command in ("test", "match"):
        return _test(args)
    if args.command == "validate":
        return _validate(args)
    if args.command == "replay":
        from .replay import run as replay

        return replay(args)
    if args.command == "watch":
        return _watch(args)
    if args.command == "dataset":
        return _dataset(args)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = args.token or os.environ.get("ATOUT_TOKEN")
    if not token:
        parser.error("no token: pass --token T or set ATOUT_TOKEN")
    host, sep, port = args.server.rpartition(":")
    if not sep or not host or not port.isdigit():
        parser.error(f"--server must be HOST:PORT, not {args.server!r}")
    if not 1 <= int(port) <= 65535:
        parser.error(f"--server {args.server!r}: the port must be from 1 to 65535")
    if args.max_workers < 1:
        parser.error("--max-workers must be at least 1")
    from . import _grpc_engine

    _grpc_engine.choose()  # before the bot's module, which may import gRPC (it reads the engine once)
    _grpc_engine.quiet_core_logs()
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
            ca=args.ca,
            version=args.bot_version,
        )
    except ValueError as exc:  # a bad --version, an unreadable --ca
        print(f"atout-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AtoutError as exc:
        print(f"atout-bot: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK


def _watch(args: argparse.Namespace) -> int:
    from .record import RecordError
    from .watch import pick_record, watch_terminal, watch_web

    if args.delay is not None and args.delay < 0:
        return _usage_error("watch", "--delay must be 0 or more seconds")
    try:
        record = pick_record(args.file, args.game)
        if args.web:
            watch_web(record, args.seat, port=args.port, open_browser=not args.no_browser)
        else:
            watch_terminal(record, args.seat, args.delay)
    except RecordError as exc:
        return _usage_error("watch", exc)
    except BrokenPipeError:  # | head: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
    except OSError as exc:  # a port in use
        return _usage_error("watch", exc)
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _dataset(args: argparse.Namespace) -> int:
    """``atout-bot dataset RECORDS -o ROWS``: the decision rows of every game of a record file."""
    from .dataset import DatasetError, DatasetWriter, decision_rows
    from .record import RecordError, iter_records

    try:
        with DatasetWriter(args.output) as out:
            games = 0
            for games, record in enumerate(iter_records(args.records), 1):
                try:
                    out.write_rows(decision_rows(record))
                except RecordError as exc:
                    raise RecordError(f"{args.records}: game {games}: {exc}") from None
    except (DatasetError, RecordError) as exc:
        return _usage_error("dataset", exc)
    except OSError as exc:
        return _usage_error("dataset", f"{exc.filename or args.output}: {exc.strerror or exc}")
    print(f"{games} games, {out.count} decisions written to {args.output}", file=sys.stderr)
    return EXIT_OK


def _usage_error(command: str, message: object) -> int:
    print(f"atout-bot {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


class _Progress:
    """The live line on stderr: rewritten in place on a terminal, plain lines every few seconds
    otherwise; the first fault of each kind of each bot is told in full."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every_s = 0.1 if self.tty else 2.0
        self.last = 0.0
        self.told: set[tuple[str, str]] = set()
        self.pending = False  # a line was written in place and not ended

    def __call__(self, outcome: TestOutcome, result: SetResult | None = None) -> None:
        from .sprt import describe_fault, progress_line

        for key in outcome.first_faults.keys() - self.told:
            self.told.add(key)
            self._end_line()
            print(f"atout-bot test: {describe_fault(outcome, *key)}", file=self.stream, flush=True)
        now = time.monotonic()
        if result is None or now - self.last >= self.every_s:
            self.last = now
            line = progress_line(outcome)
            if self.tty:
                self.stream.write(f"\r{line}\x1b[K")
                self.pending = True
            else:
                self.stream.write(line + "\n")
            self.stream.flush()

    def close(self, outcome: TestOutcome) -> None:
        self(outcome)
        self._end_line()

    def _end_line(self) -> None:
        if self.pending:
            self.stream.write("\n")
            self.pending = False


def _test(args: argparse.Namespace) -> int:
    from .sprt import TestConfig, run_test, summary
    from .stats import Sprt

    try:
        sprt = None
        if args.sprt is not None:
            elo0, elo1 = args.sprt
            sprt = Sprt(elo0, elo1, alpha=args.alpha, beta=args.beta)
        config = TestConfig(
            args.game, args.bot_a, args.bot_b, args.players, dict(args.option), args.field, args.seed
        ).checked()
        if args.games < config.set_size:
            raise ValueError(f"--games {args.games} is less than one duplicate set ({config.set_size} games)")
        for spec in (args.bot_a, args.bot_b, args.field):
            load_bot(spec)
    except (ValueError, BotLoadError) as exc:
        return _usage_error("test", exc)
    from .dataset import DatasetError, DatasetWriter, RecordRows
    from .record import RecordWriter

    progress = _Progress()
    try:
        writer: RecordWriter | None = None
        if args.dataset:  # its rows, and the records too with --record
            writer = RecordRows(DatasetWriter(args.dataset), args.record)
        elif args.record:
            writer = RecordWriter(args.record)
        with writer if writer is not None else contextlib.nullcontext() as out:
            outcome = run_test(config, sprt, max_games=args.games, jobs=args.jobs, on_set=progress,
                               record=out)  # fmt: skip
    except (OSError, DatasetError) as exc:  # the --record or --dataset file
        return _usage_error("test", exc)
    progress.close(outcome)
    if args.json:
        print(json.dumps(outcome.to_dict()))
    else:
        print(summary(outcome))
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    from .record import RecordWriter
    from .validate import validate

    try:
        with RecordWriter(args.record) if args.record else contextlib.nullcontext() as out:
            report = validate(args.bot, args.game, args.games, args.move_ms, dict(args.option), args.seed,
                              record=out)  # fmt: skip
    except (ValueError, BotLoadError, OSError) as exc:
        return _usage_error("validate", exc)
    print("\n".join(report.lines()))
    return EXIT_OK if report.ok else EXIT_FAULT


if __name__ == "__main__":
    sys.exit(main())
