"""``atout-arena up``: a whole arena on one machine, supervised, until Ctrl-C or SIGTERM.

    atout-arena up [--api-port 8000] [--grpc-port 50051] [--workers 2] [--data-dir DIR]

It owns every part it starts (each a process group of its own, its output appended to
``<data dir>/logs/<part>.log``):

- Redis: ``ATOUT_REDIS_URL`` when set, else an embedded ``redis-server`` that ``up`` itself
  starts, supervises and stops (never one of the parts: the Redis outlives any part that dies).
  When it dies it is started again at once on the same socket and data dir (its snapshot, if
  any, comes back), said in one line, and the parts reconnect by themselves; dying again within
  a minute, after the parts' backoff;
- the database: ``ATOUT_DATABASE_URL`` when set, else ``<data dir>/atout.db`` (SQLite),
  its tables created before any part starts;
- the game server on 127.0.0.1:``--grpc-port``, the API and dashboard on
  http://127.0.0.1:``--api-port``, ``--workers`` Celery workers and Celery beat (the sweeper,
  league seasons).

A part that dies is started again after a backoff (1 s, doubling up to 30 s; back to 1 s once
it has run for a minute), and ``up`` says so. A part that cannot start at all (it exits before
it is ready) stops ``up`` with the last lines of its log, exit code 1: that is a setting to fix,
not a crash to retry. It prints where everything listens and the
organizer token, and writes them to the config file the CLI reads (:func:`config_path`), so
that ``atout-arena bots add`` etc. from any directory talk to this arena's API (the last ``up``
started writes it; it is removed when that ``up`` stops). The organizer
token is ``ATOUT_ADMIN_TOKEN`` when set, else the one kept in ``<data dir>/arena.json`` (made
up on the first run), so that tokens and scripts keep working across restarts.

On Ctrl-C or SIGTERM it stops the parts (SIGTERM to each group, SIGKILL after a timeout), then
the embedded Redis, and exits 0: no process is left behind. Bad options (a port out of range or
in use, a data dir that cannot be made) are one line and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import redis

from atout_arena.client import CONFIG_ENV, config_path
from atout_arena.core.db import create_all, make_engine
from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.redis_conn import mask, sync_client
from atout_arena.core.settings import admin_token_problem
from atout_arena.demo.commands import DEFAULT_API_PORT, DEFAULT_GRPC_PORT
from atout_arena.demo.plan import DEFAULT_WORKERS, plural
from atout_arena.demo.processes import (
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

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
BACKOFF_S = (1.0, 30.0)  # first delay, cap
HEALTHY_S = 60.0  # a part that ran this long starts its backoff over
POLL_S = 0.2
# Settings of a network-facing arena that up does not pass to its parts (all on 127.0.0.1): its
# health check, its printed addresses and the organizer's commands speak plain HTTP and gRPC.
LOOPBACK_ONLY = ("ATOUT_TLS_CERT", "ATOUT_TLS_KEY")


class UsageError(ValueError):
    """A bad option of ``up``: one line, exit code 2."""


def check_port(value: int, option: str) -> int:
    if not 1 <= value <= 65535:
        raise UsageError(f"{option} {value}: a port is a number from 1 to 65535")
    if not port_is_free(value):
        raise UsageError(f"{option} {value}: the port is in use on 127.0.0.1 (is an arena running already?)")
    return value


def prepare_data_dir(path: Path, option: str = "--data-dir") -> Path:
    try:
        path = path.expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot use it ({exc.strerror or exc})") from None
    return path


def organizer_token(data_dir: Path, environ: dict[str, str]) -> str:
    """``ATOUT_ADMIN_TOKEN``, else the token kept in ``<data dir>/arena.json`` if it is strong
    enough (one kept by an older arena may not be), else a new one."""
    if environ.get("ATOUT_ADMIN_TOKEN", "").strip():
        return environ["ATOUT_ADMIN_TOKEN"].strip()
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        token = json.loads((data_dir / "arena.json").read_text())["admin_token"]
        if isinstance(token, str) and token and not admin_token_problem(token):
            return token
    return "atout_admin_" + secrets.token_urlsafe(24)


def next_delay(restarts: int, ran_s: float, backoff: tuple[float, float] = BACKOFF_S) -> tuple[float, int]:
    """The delay before restarting a part that died after ``ran_s`` seconds, having been
    restarted ``restarts`` times in a row: (delay, the new count)."""
    if ran_s >= HEALTHY_S:
        restarts = 0
    base, cap = backoff
    return min(cap, base * 2**restarts), restarts + 1


@dataclass
class Supervised:
    """A part's recipe, so that it can be started again, and its restart state."""

    name: str
    label: str
    args: list[str]
    tier: int
    env: dict[str, str] = field(default_factory=dict)
    ready: str | None = None  # a pattern of its log that says it is ready
    part: Part | None = None
    started_at: float = 0.0
    restarts: int = 0
    restart_at: float | None = None  # dead: when to start it again

    @classmethod
    def of(cls, part: Part) -> Supervised:
        """The recipe of a part already started (``demo --keep`` supervises its parts so)."""
        args = part.popen.args
        assert isinstance(args, list)  # Parts.start gives Popen a list
        return cls(part.name, part.label, [str(a) for a in args], part.tier, dict(part.env),
                   part=part, started_at=time.monotonic())


@dataclass
class SupervisedRedis:
    """The embedded Redis under supervision, and its restart state."""

    server: EmbeddedRedis
    label: str = "the embedded Redis"
    started_at: float = field(default_factory=time.monotonic)
    restarts: int = 0
    restart_at: float | None = None  # dead: when to start it again
    death: str = ""  # how the last one ended, for the line that says it is back


def redis_delay(restarts: int, ran_s: float, backoff: tuple[float, float] = BACKOFF_S) -> tuple[float, int]:
    """:func:`next_delay` for the embedded Redis, except that its first restart in a row is at
    once: every part waits for it (their decisions' clocks stopped), and a restart costs 0.1 s."""
    if ran_s >= HEALTHY_S:
        restarts = 0
    if restarts == 0:
        return 0.0, 1
    delay, _ = next_delay(restarts - 1, 0.0, backoff)
    return delay, restarts + 1


class Supervisor:
    """Starts parts and starts again, after a backoff, those that die; says so with ``say``.
    The embedded Redis (:meth:`watch_redis`) is supervised too."""

    def __init__(self, parts: Parts, say: Callable[[str], None]) -> None:
        self.parts = parts
        self.say = say
        self.supervised: list[Supervised] = []
        self.redis: SupervisedRedis | None = None

    def watch_redis(self, server: EmbeddedRedis) -> None:
        self.redis = SupervisedRedis(server)

    def redis_once(self, now: float | None = None) -> None:
        """Start the embedded Redis again if it died (reaped at once: no zombie), in one line."""
        r = self.redis
        if r is None:
            return
        now = time.monotonic() if now is None else now
        server = r.server
        if r.restart_at is None:
            if server.process is None or server.alive():  # alive() reaps a dead one
                return
            r.death = f"(pid {server.pid}) exited with code {server.process.returncode}"
            delay, r.restarts = redis_delay(r.restarts, now - r.started_at)
            r.restart_at = now + delay
            if delay > 0:  # dying again and again: not at once (two lines, then)
                self.say(f"{r.label} {r.death}; restarting it in {delay:.0f} s "
                         f"(restart {r.restarts}; log {server.directory / 'redis.log'})")
                return
        if now < r.restart_at:
            return
        try:
            server.restart()
        except (RuntimeError, OSError) as exc:
            delay, r.restarts = next_delay(r.restarts, 0.0)
            r.restart_at = time.monotonic() + delay
            self.say(f"{r.label} did not start again: {exc}; trying again in {delay:.0f} s")
            return
        r.restart_at, r.started_at = None, time.monotonic()
        self.say(f"{r.label} {r.death}; started again, pid {server.pid}, on {server.url} "
                 f"(restart {r.restarts}; log {server.directory / 'redis.log'})")

    def launch(self, s: Supervised) -> None:
        again = s.part is not None  # a restart: its log goes on
        if s.part is not None and s.part in self.parts.started:
            self.parts.started.remove(s.part)
        s.part = self.parts.start(s.name, s.label, s.args, tier=s.tier, env=s.env, append=again)
        s.started_at = time.monotonic()
        s.restart_at = None
        if s not in self.supervised:
            self.supervised.append(s)

    def once(self, now: float | None = None) -> None:
        """Restart the embedded Redis and the parts that died, each after its backoff."""
        now = time.monotonic() if now is None else now
        self.redis_once(now)
        for s in self.supervised:
            if s.part is None or s.part.alive():
                continue
            if s.restart_at is None:
                delay, s.restarts = next_delay(s.restarts, now - s.started_at)
                s.restart_at = now + delay
                s.part.signal_group(signal.SIGKILL)  # whatever it left in its group goes with it
                self.say(f"{s.label} ({s.name}) exited with code {s.part.popen.returncode}; "
                         f"restarting it in {delay:.0f} s (restart {s.restarts}; log {s.part.log_path})")
            elif now >= s.restart_at:
                self.launch(s)
                self.say(f"{s.label} ({s.name}) restarted, pid {s.part.pid}")


@dataclass
class ArenaOptions:
    api_port: int = DEFAULT_API_PORT
    grpc_port: int = DEFAULT_GRPC_PORT
    workers: int = DEFAULT_WORKERS
    data_dir: Path = Path("var")
    beat: bool = True


class Arena:
    """The supervised parts of one arena; :meth:`run` until a stop signal, or :meth:`start`,
    :meth:`supervise_once` and :meth:`stop` driven by another command (``demo --keep``)."""

    def __init__(self, options: ArenaOptions, out: TextIO = sys.stdout,
                 signals: StopSignals | None = None, environ: dict[str, str] | None = None) -> None:
        self.options = options
        self.out = out
        self.signals = signals or StopSignals()
        self.environ = dict(os.environ if environ is None else environ)
        self.data_dir = options.data_dir
        self.admin_token = ""
        self.redis_server: EmbeddedRedis | None = None
        self.redis_url = ""
        self.database_url = ""
        self.api_url = f"http://127.0.0.1:{options.api_port}"
        self.grpc_address = f"127.0.0.1:{options.grpc_port}"
        self.parts: Parts | None = None
        self.supervisor: Supervisor | None = None
        self.config_file = config_path(self.environ)

    def say(self, text: str = "") -> None:
        with contextlib.suppress(OSError):
            print(text, file=self.out, flush=True)

    # -- start

    def start(self) -> None:
        self.admin_token = organizer_token(self.data_dir, self.environ)
        self.database_url = self.environ.get("ATOUT_DATABASE_URL", "").strip() or \
            f"sqlite:///{self.data_dir / 'atout.db'}"
        engine = make_engine(self.database_url)
        try:
            create_all(engine)  # before any part starts: they would race to create the tables
        finally:
            engine.dispose()
        self.start_redis()
        env = {k: v for k, v in self.environ.items() if not k.startswith("ATOUT_")}
        env.update({
            "PYTHONUNBUFFERED": "1",
            "ATOUT_DATA_DIR": str(self.data_dir),
            "ATOUT_DATABASE_URL": self.database_url,
            "ATOUT_REDIS_URL": self.redis_url,
            "ATOUT_ADMIN_TOKEN": self.admin_token,
            "ATOUT_GRPC_ADDRESS": self.grpc_address,
        })
        for name, value in self.environ.items():  # the arena's other settings go to its parts
            if name in LOOPBACK_ONLY and value.strip():
                self.say(f"  ({name} is not passed on: up serves 127.0.0.1 alone, in plain text; TLS is "
                         "for atout-arena gateway and api facing a network)")
            elif name.startswith("ATOUT_") and name not in env and name != CONFIG_ENV:
                env[name] = value
        python_path = python_path_for_children()
        if python_path:
            env["PYTHONPATH"] = python_path
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        self.parts = Parts(self.data_dir / "logs", env)
        self.supervisor = Supervisor(self.parts, self.say)
        if self.redis_server is not None:
            self.supervisor.watch_redis(self.redis_server)
        recipes = [
            Supervised("gateway", "the game server", python_module(
                "atout_arena.cli", "gateway", "--address", self.grpc_address), tier=2,
                env={"ATOUT_SERVER_ID": "up-gateway"}, ready=r"listening on 127\.0\.0\.1:\d+"),
            Supervised("api", "the API", python_module(
                "atout_arena.cli", "api", "--host", "127.0.0.1", "--port", str(self.options.api_port)),
                tier=2, ready=r"API listening on http://\S+"),
            *[Supervised(f"worker-{i}", f"Celery worker {i}", python_module(
                "atout_arena.cli", "worker", "--hostname", f"up-{i}@%h", "--loglevel", "info"), tier=1,
                ready=r"\bready\b") for i in range(1, self.options.workers + 1)],
        ]
        if self.options.beat:
            recipes.append(Supervised("beat", "Celery beat (sweeper, league seasons)", python_module(
                "atout_arena.cli", "beat", "--loglevel", "info"), tier=1))
        began = time.monotonic()
        for s in recipes:
            self.supervisor.launch(s)
        self.say(f"  starting         {starting_line(recipes)}   (logs in {self.data_dir / 'logs'})")
        for s in recipes:
            assert s.part is not None
            if not s.ready:
                continue
            if not re.search(s.ready, s.part.log()):  # say what the silence is
                self.say(f"  waiting for {s.label}...")
            s.part.wait_for(s.ready, self.signals)
            if s.name == "api":
                wait_http_ok(self.api_url + "/healthz", self.signals, s.part)
            self.say(f"  ready            {s.label} ({time.monotonic() - began:.1f} s)")
        self.write_config()
        self.say(f"  game server      {self.grpc_address}   (atout-bot run ... --server {self.grpc_address})")
        self.say(f"  API              {self.api_url}   (OpenAPI at {self.api_url}/docs)")
        self.say(f"  dashboard        {self.api_url}/")
        self.say(f"  workers          {self.options.workers} Celery worker processes"
                 f"{' and beat' if self.options.beat else ''}")
        self.say(f"  database         {self.database_url}")
        self.say(f"  organizer token  {self.admin_token}")
        self.say(f"  config           {self.config_file}   (read by atout-arena bots, tournament, ...)")
        self.say(f"  logs             {self.data_dir / 'logs'}")
        self.say(f"    export ATOUT_ADMIN_TOKEN={self.admin_token} ATOUT_REDIS_URL={mask(self.redis_url)} "
                 f"ATOUT_DATA_DIR={self.data_dir}")

    def start_redis(self) -> None:
        external = self.environ.get("ATOUT_REDIS_URL", "").strip()
        if external:
            self.redis_url = external
            described = f"{mask(external)} (ATOUT_REDIS_URL)"
        else:
            server = EmbeddedRedis(self.data_dir / "redis", persist=True, new_session=True)
            try:
                self.redis_server = server.start()
            except (RuntimeError, OSError) as exc:
                server.stop()
                raise ArenaError(f"the embedded Redis did not start: {exc}") from None
            self.redis_url = server.url
            described = f"embedded redis-server, {self.redis_url} (owned by atout-arena up)"
        client = sync_client(self.redis_url, socket_timeout=5, socket_connect_timeout=5)
        try:
            client.ping()
        except (redis.RedisError, OSError) as exc:
            raise ArenaError(f"no Redis answers at {mask(self.redis_url)}: {exc}") from None
        finally:
            client.close()
        self.say(f"  redis            {described}")

    def write_config(self) -> None:
        for problem in write_config({"api_url": self.api_url, "admin_token": self.admin_token,
                                     "grpc_address": self.grpc_address, "data_dir": str(self.data_dir),
                                     "redis_url": self.redis_url},
                                    [self.data_dir / "arena.json", self.config_file]):
            self.say(f"warning: {problem}")

    def supervise_once(self) -> None:
        if self.supervisor is not None:
            self.supervisor.once()

    def run(self) -> int:
        """Start, supervise until Ctrl-C / SIGTERM, stop. The exit code."""
        with self.signals:
            code = EXIT_OK
            try:
                self.say(f"atout-arena up: data in {self.data_dir}")
                self.start()
                self.say("running; Ctrl-C (or SIGTERM) stops everything")
                while True:
                    self.supervise_once()
                    self.signals.sleep(POLL_S)
            except DemoInterrupted:
                self.say("stopping")
            except PartError as exc:
                self.say(f"error: {exc}")
                self.say(f"last lines of {exc.part.log_path}:")
                self.say("\n".join("    " + line for line in exc.part.tail().splitlines()) or "    (empty)")
                code = EXIT_FAILED
            except ArenaError as exc:
                self.say(f"error: {exc}")
                code = EXIT_FAILED
            finally:
                self.stop()
        return code

    def stop(self) -> None:
        if self.parts is not None and self.parts.started:
            self.say(f"stopping {len(self.parts.started)} processes... (Ctrl-C again: kill them now)")
            killed = self.parts.stop_all(lambda: self.signals.forced)
            if killed:
                self.say(f"killed: {', '.join(p.name for p in killed)}")
        if self.redis_server is not None:
            try:
                self.redis_server.stop()
            except Exception as exc:  # reported: a redis-server left running must be known
                self.say(f"warning: stopping the embedded Redis failed: {exc}")
            self.redis_server = None
        self._forget_config()
        self.say("stopped.")

    def _forget_config(self) -> None:
        forget_config(self.config_file)


def write_config(data: dict[str, Any], paths: list[Path]) -> list[str]:
    """Write the running arena's address and organizer token (readable by its owner only) to
    each path, with this process's pid; returns what could not be written."""
    text = json.dumps({**data, "pid": os.getpid()}, indent=2) + "\n"
    problems = []
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds a secret
            with os.fdopen(fd, "w") as f:
                f.write(text)
        except OSError as exc:
            problems.append(f"cannot write {path}: {exc.strerror or exc}")
    return problems


def forget_config(path: Path) -> None:
    """Remove the config file when it still names this process's arena (stopped now)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()


def starting_line(recipes: list[Supervised]) -> str:
    """The parts being started, for people: "the game server, the API, 2 Celery workers and
    Celery beat (sweeper, league seasons)"."""
    workers = sum(s.name.startswith("worker-") for s in recipes)
    names = [s.label for s in recipes if not s.name.startswith("worker-")]
    if workers:
        names.insert(2 if len(names) >= 2 else len(names), plural(workers, "Celery worker", "Celery workers"))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class ArenaError(Exception):
    """The arena cannot start; the message says why."""


# -- the command ------------------------------------------------------------------------------


def arena_options(args: argparse.Namespace, default_data_dir: Callable[[], Path]) -> ArenaOptions:
    """Check the options shared by ``up`` and ``demo``; :class:`UsageError` says which is bad."""
    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: at least 1")
    if args.api_port == args.grpc_port:
        raise UsageError(f"--api-port and --grpc-port are both {args.api_port}")
    api_port = check_port(args.api_port, "--api-port")
    grpc_port = check_port(args.grpc_port, "--grpc-port")
    data_dir = prepare_data_dir(args.data_dir if args.data_dir is not None else default_data_dir())
    return ArenaOptions(api_port=api_port, grpc_port=grpc_port, workers=args.workers, data_dir=data_dir)


def cmd_up(args: argparse.Namespace) -> int:
    try:
        options = arena_options(args, lambda: Path(os.environ.get("ATOUT_DATA_DIR") or "var"))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return Arena(options).run()
