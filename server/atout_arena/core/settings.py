"""One settings object for the arena, read from ``ATOUT_*`` environment variables.

- ``ATOUT_DATA_DIR``: where the SQLite file and the embedded Redis keep their files
  (default ``./var``).
- ``ATOUT_DATABASE_URL``: a SQLAlchemy URL, e.g. ``postgresql+psycopg://...`` (default
  ``sqlite:///<data dir>/atout.db``).
- ``ATOUT_REDIS_URL``: the Redis shared by game servers and workers (``redis://``,
  ``unix://``); unset: the arena starts an embedded Redis (``server.embedded_redis``).
- ``ATOUT_GRPC_ADDRESS``: where the game server listens (default ``127.0.0.1:50051``).
- ``ATOUT_SERVER_ID``: this game server's name in Redis and in ``Welcome.server_id``
  (default ``<host>-<pid>``).
- ``ATOUT_KEEPALIVE_MS``: the arena's Ping interval on each bot stream (default 10000); a bot
  counts as connected for three intervals after its game server's last heartbeat.
- ``ATOUT_HELLO_TIMEOUT_MS``: time a new stream has to send its Hello (default 10000).
- ``ATOUT_SHUTDOWN_GRACE_S``: on SIGTERM, time left to open calls (default 5).
- ``ATOUT_ADMIN_TOKEN``: the organizer token of the REST API (unset: ``atout-arena api``
  makes one up and prints it; ``create_app`` without one turns organizer endpoints off).

A bad value raises ``ValueError`` naming the variable.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


def _default_server_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("var")
    database_url: str = ""
    redis_url: str | None = None
    grpc_address: str = "127.0.0.1:50051"
    server_id: str = field(default_factory=_default_server_id)
    keepalive_ms: int = 10_000
    hello_timeout_ms: int = 10_000
    shutdown_grace_s: float = 5.0
    admin_token: str | None = field(default=None, repr=False)  # a secret: never in logs

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", f"sqlite:///{self.data_dir / 'atout.db'}")

    @property
    def presence_ttl_ms(self) -> int:
        """How long a bot counts as connected without a heartbeat (three keep-alives)."""
        return 3 * self.keepalive_ms

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            value = env.get(f"ATOUT_{name}")
            return value.strip() if value and value.strip() else None

        def number(name: str, default: float, kind: type = int, minimum: float = 1) -> float:
            raw = text(name)
            if raw is None:
                return default
            try:
                value = kind(raw)
            except ValueError:
                raise ValueError(f"ATOUT_{name}={raw!r}: not a {kind.__name__}") from None
            if value < minimum:
                raise ValueError(f"ATOUT_{name}={raw!r}: must be at least {minimum}")
            return value

        address = text("GRPC_ADDRESS") or cls.grpc_address
        if ":" not in address:
            raise ValueError(f"ATOUT_GRPC_ADDRESS={address!r}: expected HOST:PORT")
        return cls(
            data_dir=Path(text("DATA_DIR") or "var"),
            database_url=text("DATABASE_URL") or "",
            redis_url=text("REDIS_URL"),
            grpc_address=address,
            server_id=text("SERVER_ID") or _default_server_id(),
            keepalive_ms=int(number("KEEPALIVE_MS", 10_000, minimum=50)),
            hello_timeout_ms=int(number("HELLO_TIMEOUT_MS", 10_000, minimum=50)),
            shutdown_grace_s=float(number("SHUTDOWN_GRACE_S", 5.0, float, minimum=0)),
            admin_token=text("ADMIN_TOKEN"),
        )


def get_settings() -> Settings:
    """The settings of this process, from the environment."""
    return Settings.from_env()
