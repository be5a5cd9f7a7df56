"""The demo itself (:class:`Demo`): start the parts, play the tournament, show the result, stop
everything; and the ``atout-arena demo`` command's handler (:func:`cmd_demo`; its options are
in :mod:`atout_arena.demo.commands`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import redis
from sqlalchemy import func, select

from atout_arena.client import config_path
from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.keys import CONNECTED_KEY, bot_keys_pattern
from atout_arena.core.models import Match, Tournament
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.relay import is_connected
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.core.vocabulary import MATCH_DONE, TournamentStatus
from atout_arena.demo.arena import (
    Supervised,
    Supervisor,
    UsageError,
    check_port,
    forget_config,
    prepare_data_dir,
    write_config,
)
from atout_arena.demo.commands import DEFAULT_API_PORT, DEFAULT_GRPC_PORT
from atout_arena.demo.plan import (
    DEFAULT_BOTS,
    DEFAULT_GAME,
    DEFAULT_WORKERS,
    DemoPlan,
    plan_demo,
    plural,
)
from atout_arena.demo.processes import (
    START_TIMEOUT_S,
    DemoInterrupted,
    Part,
    PartError,
    Parts,
    StopSignals,
    port_is_free,
    python_module,
    python_path_for_children,
    wait_http_ok,
)
from atout_arena.demo.report import (
    Progress,
    Rate,
    Report,
    build_report,
    decisions_made,
    format_report,
    summary_line,
    tournament_line,
)
from atout_arena.services.bots import BotRegistry
from atout_arena.services.tournaments import cancel_tournament, create_tournament

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

STALL_S = 120.0  # no match finished and no decision made for this long: give up
POLL_S = 0.2


@dataclass
class DemoOptions:
    game: str = DEFAULT_GAME
    bots: int = DEFAULT_BOTS
    games_per_pairing: int | None = None
    players: int | None = None
    workers: int = DEFAULT_WORKERS
    keep: bool = False
    port: int | None = None  # None: 8000, or a free port when 8000 is taken; a given port must be free
    grpc_port: int | None = None  # None: 50051, or a free port when it is taken
    data_dir: Path | None = None  # None: a fresh temporary directory, removed at the end


class DemoError(Exception):
    """The demo cannot go on; the message says why."""


class Demo:
    """One run of the demo; :meth:`run` returns the exit code."""

    def __init__(self, options: DemoOptions, plan: DemoPlan, out: TextIO = sys.stdout) -> None:
        self.options = options
        self.plan = plan
        self.out = out
        self.signals = StopSignals()
        self.serving = False  # --keep: the tournament is over, Ctrl-C is the normal way out
        self.progress: Progress | None = None
        self.temporary = options.data_dir is None
        self.data_dir = Path(options.data_dir or tempfile.mkdtemp(prefix="atout-demo-")).resolve()
        self.admin_token = "atout_admin_" + secrets.token_urlsafe(24)
        self.parts: Parts | None = None
        self.redis_server: Any = None  # EmbeddedRedis
        self.redis_url = ""
        self.redis: Any = None
        self.engine: Any = None
        self.sessions: Any = None
        self.tasks: Tasks | None = None
        self.tournament_id: int | None = None
        self.grpc_address = ""
        self.api_url = ""
        self.config_written = False

    # -- output

    def say(self, text: str = "") -> None:
        if self.progress is not None:
            self.progress.interrupt()
        with contextlib.suppress(OSError):  # a closed pipe (`| head`) must not stop the cleanup
            print(text, file=self.out, flush=True)

    def _plus_minus(self) -> str:
        try:
            "±".encode(getattr(self.out, "encoding", None) or "ascii")
        except (UnicodeEncodeError, LookupError):
            return "+/-"
        return "±"

    # -- lifecycle

    def run(self) -> int:
        started = time.monotonic()
        keep_dir = True  # unless all went well (or was interrupted): the logs tell what happened
        code = EXIT_FAILED
        with self.signals:
            try:
                self.say(f"Atout demo: {self.plan.describe()}")
                where = "a temporary directory, removed at the end" if self.temporary else "kept at the end"
                self.say(f"  data dir     {self.data_dir}  (logs of every part; {where})")
                self.start()
                report = self.play()
                self.say()
                self.say(format_report(report, plus_minus=self._plus_minus()))
                self.say()
                self.say(f"demo done in {time.monotonic() - started:.1f} s")
                if self.options.keep:
                    self.keep_serving()
                keep_dir, code = False, EXIT_OK
            except DemoInterrupted:
                self.say("Ctrl-C: stopping" if self.serving else "interrupted: stopping everything")
                keep_dir, code = False, EXIT_OK if self.serving else EXIT_INTERRUPTED
            except PartError as exc:
                self.say(f"error: {exc}")
                self.say(f"last lines of {exc.part.log_path}:")
                self.say("\n".join("    " + line for line in exc.part.tail().splitlines()) or "    (empty)")
            except DemoError as exc:
                self.say(f"error: {exc}")
            finally:  # whatever happened, even an unexpected error (raised after this)
                self.stop(keep_dir=keep_dir)
        return code

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        database = self.data_dir / "atout.db"
        if database.exists():
            raise DemoError(f"{database} exists: give --data-dir an empty (or new) directory")
        database_url = f"sqlite:///{database}"
        self.engine = make_engine(database_url)
        create_all(self.engine)  # before any part starts: they would race to create the tables
        self.sessions = make_session_factory(self.engine)
        registry = BotRegistry(self.sessions)
        tokens = {bot.name: registry.add(bot.name, owner="demo") for bot in self.plan.bots}

        self.start_redis()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ATOUT_")}
        env.update({
            "PYTHONUNBUFFERED": "1",
            "ATOUT_DATA_DIR": str(self.data_dir),
            "ATOUT_DATABASE_URL": database_url,
            "ATOUT_REDIS_URL": self.redis_url,
            "ATOUT_ADMIN_TOKEN": self.admin_token,
            "ATOUT_SHUTDOWN_GRACE_S": "2",
        })
        for name in ("ATOUT_WORKER_CONCURRENCY", "ATOUT_KEEPALIVE_MS"):  # tuning the user may want
            if os.environ.get(name):
                env[name] = os.environ[name]
        python_path = python_path_for_children()
        if python_path:
            env["PYTHONPATH"] = python_path
        parts = self.parts = Parts(self.data_dir, env)

        # Independent of each other: started together, then waited for.
        gateway = parts.start("gateway", "the game server", python_module(
            "atout_arena.cli", "gateway", "--address", f"127.0.0.1:{self.options.grpc_port or 0}"), tier=2,
            env={"ATOUT_SERVER_ID": "demo-gateway"})
        port = self.options.port or 0
        api = parts.start("api", "the API", python_module(
            "atout_arena.cli", "api", "--host", "127.0.0.1", "--port", str(port)), tier=2)
        workers = [
            parts.start(f"worker-{i}", f"Celery worker {i}", python_module(
                "atout_arena.cli", "worker", "--hostname", f"demo-{i}@%h", "--loglevel", "info"), tier=1)
            for i in range(1, self.options.workers + 1)
        ]
        found = gateway.wait_for(r"listening on (127\.0\.0\.1:\d+)", self.signals)
        self.grpc_address = found.group(1)
        self.say(f"  game server  {self.grpc_address}")

        bot_parts = {}
        for bot in self.plan.bots:
            _, token = tokens[bot.name]
            bot_parts[bot.name] = parts.start(
                f"bot-{bot.name}", f"bot {bot.name}",
                python_module("atout.cli", "run", bot.kind, "--server", self.grpc_address), tier=1,
                env={"ATOUT_TOKEN": token},  # not on the command line, where `ps` shows it
            )
        self.api_url = api.wait_for(r"API listening on (http://\S+)", self.signals).group(1)
        wait_http_ok(self.api_url + "/healthz", self.signals, api)
        self.say(f"  API          {self.api_url}  (dashboard at /, OpenAPI at /docs)")
        for worker in workers:
            worker.wait_for(r"\bready\b", self.signals)
        self.say(f"  workers      {len(workers)} Celery worker processes")
        self.wait_connected(bot_parts, {name: str(info.id) for name, (info, _) in tokens.items()})
        self.say(f"  bots         {', '.join(b.name for b in self.plan.bots)}: connected (atout-bot run)")

    def start_redis(self) -> None:
        external = os.environ.get("ATOUT_REDIS_URL", "").strip()
        if external:
            self.redis_url = external
            described = f"{external} (ATOUT_REDIS_URL)"
        else:
            server = EmbeddedRedis(self.data_dir / "redis", new_session=True)
            try:
                self.redis_server = server.start()
            except (RuntimeError, OSError) as exc:
                server.stop()
                log = server.directory / "redis.log"
                tail = log.read_text(errors="replace").strip().splitlines()[-10:] if log.exists() else []
                lines = "\n    ".join([str(exc), *tail])
                raise DemoError(f"the embedded Redis did not start: {lines}") from None
            self.redis_url = self.redis_server.url
            described = f"embedded redis-server, {self.redis_url}"
        self.redis = sync_client(self.redis_url, socket_timeout=10, socket_connect_timeout=5)
        try:
            self.redis.ping()
        except (redis.RedisError, OSError) as exc:
            raise DemoError(f"no Redis answers at {self.redis_url}: {exc}") from None
        if external:  # keys of an earlier demo's bots (same ids in a fresh database) would mislead
            for number in range(1, len(self.plan.bots) + 1):
                keys = list(self.redis.scan_iter(bot_keys_pattern(str(number))))
                if keys:
                    self.redis.delete(*keys)
                self.redis.zrem(CONNECTED_KEY, str(number))
        self.say(f"  redis        {described}")

    def wait_connected(self, bot_parts: dict[str, Part], bot_ids: dict[str, str]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        waiting = dict(bot_parts)
        while waiting:
            for name, part in list(waiting.items()):
                if is_connected(self.redis, bot_ids[name]):
                    del waiting[name]
                elif not part.alive():
                    raise PartError(part, f"exited with code {part.popen.returncode} before it connected")
                elif time.monotonic() > deadline:
                    raise PartError(part, f"did not connect within {START_TIMEOUT_S:.0f} s")
            if waiting:
                self.signals.sleep(0.05)

    def _progress_counts(self) -> tuple[str, int, int]:
        with self.sessions() as session:
            tournament = session.get(Tournament, self.tournament_id)
            status = tournament.status if tournament is not None else "missing"
            rows = session.execute(
                select(Match.status, func.count()).where(Match.tournament_id == self.tournament_id)
                .group_by(Match.status)
            ).all()
        total = sum(n for _, n in rows)
        done = sum(n for s, n in rows if s in MATCH_DONE)
        return status, done, total

    def play(self) -> Report:
        plan = self.plan
        self.tournament_id = create_tournament(
            self.sessions, name="demo", game=plan.game, bots=[b.name for b in plan.bots],
            players=plan.players, options=plan.options, games_per_pairing=plan.games_per_pairing,
            move_ms=plan.move_ms,
        )
        self.tasks = Tasks.for_settings(Settings(redis_url=self.redis_url))

        baseline = decisions_made(self.redis)
        began = time.monotonic()
        # as the API does: a worker turns the matches queued and sends them, one task each
        self.tasks.start_tournament(self.tournament_id)
        self.say()
        self.say(tournament_line(self.tournament_id, plan.matches, plan.game))
        assert self.parts is not None
        progress = self.progress = Progress(self.out, plan.matches)
        rate = Rate()
        last_change, last_seen = began, (-1, -1)
        while True:
            self.signals.check()
            self._check_redis()
            status, done, total = self._progress_counts()
            progress.total = total or plan.matches
            now = time.monotonic()
            decisions = decisions_made(self.redis) - baseline
            finished = status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
            progress.update(done, rate.add(now, decisions), now - began, final=finished)
            if finished:
                break
            if (done, decisions) != last_seen:
                last_change, last_seen = now, (done, decisions)
            elif now - last_change > STALL_S:
                played = f"{done}/{plural(total, 'match', 'matches')} done"
                raise DemoError(f"no progress for {STALL_S:.0f} s ({played}); "
                                f"the parts' logs are in {self.data_dir}")
            dead = self.parts.dead()
            if dead is not None:
                raise PartError(dead, f"stopped during the tournament (exit code {dead.popen.returncode})")
            self.signals.sleep(POLL_S)
        self.progress = None
        elapsed = time.monotonic() - began
        report = build_report(self.sessions, self.tournament_id)
        self.say(summary_line(sum(report.matches.values()), report.decisions, elapsed))
        return report

    def _check_redis(self) -> None:
        """During the tournament, a dead embedded Redis ends the demo with why (and is reaped),
        not with a ConnectionError's traceback at the next look at the decisions' count."""
        server = self.redis_server
        if server is not None and not server.alive():
            code = server.process.returncode if server.process is not None else None
            raise DemoError(f"the embedded Redis stopped during the tournament (exit code {code}; "
                            f"log {server.directory / 'redis.log'})")

    def keep_serving(self) -> None:
        assert self.parts is not None
        self.say()
        self.say("The arena keeps running (--keep). Ctrl-C stops it.")
        self.say(f"  dashboard        {self.api_url}/")
        self.say(f"  API (OpenAPI)    {self.api_url}/docs")
        self.say(f"  organizer token  {self.admin_token}")
        self.say(f"  game server      {self.grpc_address}   (atout-bot run ... --server {self.grpc_address})")
        self.say("  other atout-arena commands reach it with:")
        self.say(f"    export ATOUT_API_URL={self.api_url} ATOUT_ADMIN_TOKEN={self.admin_token}")
        self.say(f"    export ATOUT_DATA_DIR={self.data_dir} ATOUT_REDIS_URL={self.redis_url}")
        for problem in write_config({"api_url": self.api_url, "admin_token": self.admin_token,
                                     "grpc_address": self.grpc_address, "data_dir": str(self.data_dir),
                                     "redis_url": self.redis_url}, [config_path()]):
            self.say(f"warning: {problem}")
        self.config_written = True
        self.say(f"  config           {config_path()}   (read by atout-arena bots, tournament, ...)")
        self.say("  a part that dies is started again, as atout-arena up does")
        self.serving = True
        supervisor = Supervisor(self.parts, self.say)  # as `up`: restart what dies, with backoff
        supervisor.supervised = [Supervised.of(part) for part in self.parts.started]
        if self.redis_server is not None:  # its embedded Redis too (same socket: parts reconnect)
            supervisor.watch_redis(self.redis_server)
        while True:
            supervisor.once()
            self.signals.sleep(0.2)

    def stop(self, keep_dir: bool) -> None:
        """Stop everything this run started, whatever happened. A second Ctrl-C (or SIGTERM)
        while it waits kills what is left at once."""
        if self.progress is not None:
            self.progress.interrupt()
            self.progress = None
        if self.tournament_id is not None and self.sessions is not None:
            with contextlib.suppress(Exception):  # finished already, or the database is gone
                cancel_tournament(self.sessions, self.tournament_id)  # queued matches: never started
        if self.parts is not None and self.parts.started:
            self.say(f"stopping {len(self.parts.started)} processes... (Ctrl-C again: kill them now)")
            killed = self.parts.stop_all(lambda: self.signals.forced)
            if killed:
                why = "killed at once" if self.signals.forced else "did not stop in time: killed"
                self.say(f"{why}: {', '.join(p.name for p in killed)}")
        if self.config_written:
            forget_config(config_path())
        if self.tasks is not None:
            with contextlib.suppress(Exception):
                self.tasks.close()
        if self.redis is not None:
            with contextlib.suppress(Exception):
                self.redis.close()
        if self.redis_server is not None:
            try:
                self.redis_server.stop()
            except Exception as exc:  # reported: a redis-server left running must be known
                self.say(f"warning: stopping the embedded Redis failed: {exc}")
        if self.engine is not None:
            self.engine.dispose()
        if self.temporary and not (keep_dir and any(self.data_dir.rglob("*.log"))):
            shutil.rmtree(self.data_dir, ignore_errors=True)
        else:
            self.say(f"data and logs kept in {self.data_dir}")
        self.say("stopped.")


def demo_port(given: int | None, default: int, option: str) -> int:
    """The port a part of the demo listens on: ``given`` must be valid and free (else
    :class:`UsageError`, never another port silently); by default ``default``, or a free port
    (0) when it is taken."""
    if given == 0:
        return 0  # any free port, said when it is known
    if given is not None:
        return check_port(given, option)
    return default if port_is_free(default) else 0


def run_demo(options: DemoOptions, out: TextIO = sys.stdout) -> int:
    """Run the demo; returns the exit code (see the module docstring). Bad options are one
    line and exit code 2, checked before anything is made (no temporary folder is left)."""
    try:
        plan = plan_demo(options.game, options.bots, options.games_per_pairing, options.players)
        if options.workers < 1:
            raise UsageError(f"--workers {options.workers}: at least 1")
        options.port = demo_port(options.port, DEFAULT_API_PORT, "--port")
        options.grpc_port = demo_port(options.grpc_port, DEFAULT_GRPC_PORT, "--grpc-port")
        if options.port and options.port == options.grpc_port:
            raise UsageError(f"--port and --grpc-port are both {options.port}")
        if options.data_dir is not None:
            options.data_dir = prepare_data_dir(options.data_dir)
    except ValueError as exc:  # UsageError too
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return Demo(options, plan, out).run()


# -- the command ------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(DemoOptions(
        game=args.game, bots=args.bots, games_per_pairing=args.games_per_pairing, players=args.players,
        workers=args.workers, keep=args.keep, port=args.port, grpc_port=args.grpc_port,
        data_dir=args.data_dir,
    ))
