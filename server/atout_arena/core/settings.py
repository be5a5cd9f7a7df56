"""One settings object for every process of the arena, read from ``ATOUT_*`` environment
variables by pydantic-settings. Each field is the variable's name without the prefix, in
lower case (``ATOUT_REDIS_URL`` -> ``redis_url``):

- ``ATOUT_DATA_DIR`` (``./var``): where the SQLite file and the embedded Redis keep their files.
- ``ATOUT_DATABASE_URL`` (``sqlite:///<data dir>/atout.db``): a SQLAlchemy URL, e.g.
  ``postgresql+psycopg://...``.
- ``ATOUT_REDIS_URL`` (unset: an embedded Redis, :mod:`atout_arena.core.embedded_redis`): the
  Redis every part shares (``redis://``, ``rediss://``, ``unix://``, ``redis+sentinel://``: docs/redis.md).
- ``ATOUT_ADMIN_TOKEN`` (unset: ``atout-arena api`` makes one up and prints it): the organizer
  token of the REST API. Never in ``repr`` or logs. At least 24 characters besides an
  ``atout_admin_`` prefix, 8 of them different (:func:`admin_token_problem`).
- ``ATOUT_GRPC_ADDRESS`` (``127.0.0.1:50051``): where the game server listens.
- ``ATOUT_TLS_CERT`` / ``ATOUT_TLS_KEY`` (unset: plain text): PEM files of a certificate (its
  chain after it) and its private key, both or neither: the game server serves TLS with them
  (its health port stays plain HTTP), and ``atout-arena api`` serves HTTPS. Read when a server
  starts (:meth:`Settings.tls_pair`): a missing, unreadable or mismatched file is one line.
- ``ATOUT_SERVER_ID`` (``<host>-<pid>``): this game server's name in Redis and in ``Welcome``.
- ``ATOUT_KEEPALIVE_MS`` (10000): the Ping interval on each bot stream; a bot counts as
  connected for three intervals after its game server's last heartbeat.
- ``ATOUT_HELLO_TIMEOUT_MS`` (10000): time a new stream has to send its Hello.
- ``ATOUT_HEALTH_PORT`` (unset: none): the game server's HTTP health check, ``GET /healthz`` on
  this port of ``ATOUT_GRPC_ADDRESS``'s host (0: any free port, logged): 200 while it serves, 503
  while it drains after SIGTERM. Its event loop answers it, so a hung server answers nothing:
  what the load balancer checks (deploy/haproxy/haproxy.cfg).
- ``ATOUT_REBALANCE_S`` (5; 0: never): how often a game server compares the streams it holds
  with every live game server's, and hands its excess over (Error ``moved`` between decisions).
- ``ATOUT_SHUTDOWN_GRACE_S`` (5): on SIGTERM, time left to open calls.
- ``ATOUT_WORKER_CONCURRENCY`` (1000): matches in flight in one worker process (coroutines on its event loop).
- ``ATOUT_PRACTICE_CONCURRENCY`` (8): practice matches in flight in one practice worker.
- ``ATOUT_WORKER_SHUTDOWN_S`` (20): on a warm shutdown (SIGTERM), how long a worker lets its
  matches in flight finish; the others then stop at their next step and go back to the queue.
- ``ATOUT_HEARTBEAT_S`` (5): how often a worker renews the heartbeat of its matches.
- ``ATOUT_MATCH_STALE_S`` (30, at least twice the heartbeat): a running match silent this long
  is given to another worker.
- ``ATOUT_REQUEUE_AFTER_S`` (15): a queued match not started this long (with empty queues)
  is sent again.
- ``ATOUT_SWEEP_INTERVAL_S`` (10): how often beat runs the sweeper.
- ``ATOUT_LEAGUE_TICK_S`` (60): how often beat looks for leagues due for a season.
- ``ATOUT_VISIBILITY_TIMEOUT_S`` (3600): Redis transport: an unacknowledged task is delivered
  again after this long (see docs/tournaments.md).
- ``ATOUT_MATCH_ATTEMPTS`` (3): a match that had this many errors of its own (an outage that
  faulted every seat) fails; the deaths of the workers that played it do not count.
- ``ATOUT_RECONNECT_GRACE_S`` (15): a bot whose stream is gone (its game server died or
  restarted, the stream dropped) is waited for this long before its decision is faulted
  ``disconnected``; a bot back within it is asked again, charged nothing.
- ``ATOUT_TEST_WAIT_TIMEOUT_S`` (300): a test whose bot or version is not connected waits this
  long (from its creation or its last match's end), saying so, then gives up (``cancelled``).

Empty values count as unset; values are stripped. A bad value raises :class:`SettingsError`
(a ``ValueError``) whose message is one line naming each bad variable: every command prints
it as ``error: ...`` and exits 2, never a traceback.
"""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

ENV_PREFIX = "ATOUT_"


class SettingsError(ValueError):
    """A bad ``ATOUT_*`` value; the message names the variable and what is wrong, in one line."""


def _default_server_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


ADMIN_TOKEN_PREFIX = "atout_admin_"  # what the arena's own tokens start with: no secret in it
ADMIN_TOKEN_MIN_CHARS = 24  # besides the prefix: 24 random characters are 96 bits at least (hex)
ADMIN_TOKEN_MIN_DISTINCT = 8  # refuses repeats (aaaa..., abcabc...); 32 random hex digits pass


def admin_token_problem(token: str) -> str | None:
    """Why ``token`` is too weak to be the organizer token, or ``None``. The organizer token can
    do everything through the API, on a network: a short or repetitive one (``atout_admin_x``)
    would be guessed. The arena's own (``atout_admin_`` + ``secrets.token_urlsafe(24)``) and
    ``atout_admin_$(openssl rand -hex 16)`` pass."""
    secret = token.removeprefix(ADMIN_TOKEN_PREFIX)
    if len(secret) >= ADMIN_TOKEN_MIN_CHARS and len(set(secret)) >= ADMIN_TOKEN_MIN_DISTINCT:
        return None
    return (f"too weak: the organizer token needs at least {ADMIN_TOKEN_MIN_CHARS} characters "
            f"besides the {ADMIN_TOKEN_PREFIX} prefix, {ADMIN_TOKEN_MIN_DISTINCT} of them different "
            f"(e.g. {ADMIN_TOKEN_PREFIX}$(openssl rand -hex 16))")


class Settings(BaseSettings):
    """Every ``ATOUT_*`` setting. Immutable: derive a variant with :meth:`replace`.

    ``Settings(**values)`` takes the values given and nothing else; :meth:`from_env` (and
    :func:`get_settings`) read the environment.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore", frozen=True, str_strip_whitespace=True,
    )

    data_dir: Path = Path("var")
    database_url: str = ""
    redis_url: str | None = None
    admin_token: str | None = Field(default=None, repr=False)  # a secret: never in logs
    grpc_address: str = "127.0.0.1:50051"
    server_id: str = Field(default_factory=_default_server_id)
    keepalive_ms: int = Field(10_000, ge=50)
    hello_timeout_ms: int = Field(10_000, ge=50)
    health_port: int | None = Field(None, ge=0, le=65_535)
    rebalance_s: float = Field(5.0, ge=0, allow_inf_nan=False)
    shutdown_grace_s: float = Field(5.0, ge=0, allow_inf_nan=False)
    worker_concurrency: int = Field(1000, ge=1)
    practice_concurrency: int = Field(8, ge=1)
    worker_shutdown_s: float = Field(20.0, ge=0, allow_inf_nan=False)
    heartbeat_s: float = Field(5.0, ge=0.05, allow_inf_nan=False)
    match_stale_s: float = Field(30.0, ge=0.1, allow_inf_nan=False)
    requeue_after_s: float = Field(15.0, ge=0.1, allow_inf_nan=False)
    sweep_interval_s: float = Field(10.0, ge=0.1, allow_inf_nan=False)
    league_tick_s: float = Field(60.0, ge=0.1, allow_inf_nan=False)
    ladder_tick_s: float = Field(2.0, ge=0.1, allow_inf_nan=False)  # a running ladder's matchmaking tick
    visibility_timeout_s: int = Field(3600, ge=1)
    match_attempts: int = Field(3, ge=1)
    reconnect_grace_s: float = Field(15.0, ge=0, allow_inf_nan=False)
    test_wait_timeout_s: float = Field(300.0, ge=1, allow_inf_nan=False)  # a test's wait for its bots
    # how long a decision waits, its clock stopped, for a bot cut off by the arena's own outage
    # (its game server hung, stopped or killed; Redis away) to be back: past it the match is
    # voided and played again from its seed, never stored as a result
    outage_limit_s: float = Field(300.0, ge=1, allow_inf_nan=False)
    tls_cert: Path | None = None  # PEM: the certificate (then its chain) of the game server and the API
    tls_key: Path | None = None  # PEM: its private key

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise SettingsError(_one_line(exc, values)) from None

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment is read by from_env alone, from the mapping it is given.
        return (init_settings,)

    @field_validator("grpc_address")
    @classmethod
    def _host_port(cls, value: str) -> str:
        if ":" not in value:
            raise ValueError("expected HOST:PORT")
        return value

    @field_validator("admin_token")
    @classmethod
    def _strong_admin_token(cls, value: str | None) -> str | None:
        if value and (problem := admin_token_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("redis_url")
    @classmethod
    def _plain_redis(cls, value: str | None) -> str | None:
        # every part reads it with core/redis_conn.py: one of its URL forms (docs/redis.md)
        if value:
            from atout_arena.core.redis_conn import parse

            parse(value)  # ValueError: one line, its password masked
        return value

    @model_validator(mode="after")
    def _derived(self) -> Settings:
        if not self.database_url:
            object.__setattr__(self, "database_url", f"sqlite:///{self.data_dir / 'atout.db'}")
        if self.match_stale_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"ATOUT_MATCH_STALE_S={self.match_stale_s} must be at least twice "
                f"ATOUT_HEARTBEAT_S={self.heartbeat_s}"
            )
        return self

    @model_validator(mode="after")
    def _tls_both_or_neither(self) -> Settings:
        if (self.tls_cert is None) != (self.tls_key is None):
            given, missing = ("ATOUT_TLS_CERT", "ATOUT_TLS_KEY") if self.tls_cert else \
                ("ATOUT_TLS_KEY", "ATOUT_TLS_CERT")
            raise ValueError(f"{given} is set but {missing} is not: TLS needs both (or neither)")
        return self

    def tls_pair(self) -> tuple[bytes, bytes] | None:
        """The PEM bytes of ``(certificate chain, private key)``, checked to load and match
        (Python's ``ssl``, as a TLS server would); ``None`` without TLS.

        :raises SettingsError: a file missing, unreadable, not PEM, or a key of another
            certificate; one line naming the variable.
        """
        if self.tls_cert is None or self.tls_key is None:
            return None
        pair = []
        for name, path in (("ATOUT_TLS_CERT", self.tls_cert), ("ATOUT_TLS_KEY", self.tls_key)):
            try:
                pair.append(path.read_bytes())
            except OSError as exc:
                raise SettingsError(f"{name}={str(path)!r}: cannot read it ({exc.strerror or exc})") from None
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(self.tls_cert, self.tls_key)
        except (ssl.SSLError, ValueError) as exc:
            raise SettingsError(
                f"ATOUT_TLS_CERT={str(self.tls_cert)!r}, ATOUT_TLS_KEY={str(self.tls_key)!r}: not a PEM "
                f"certificate and its private key ({' '.join(str(exc).split())})"
            ) from None
        return pair[0], pair[1]

    @property
    def presence_ttl_ms(self) -> int:
        """How long a bot counts as connected without a heartbeat (three keep-alives)."""
        return 3 * self.keepalive_ms

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (field names), validated again."""
        values = {**self.model_dump(), **changes}
        derived = self.database_url == f"sqlite:///{self.data_dir / 'atout.db'}"
        if "data_dir" in changes and "database_url" not in changes and derived:
            values["database_url"] = ""  # the default follows the data dir; an explicit URL stays
        return Settings(**values)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings from ``environ`` (default: this process's environment)."""
        env = os.environ if environ is None else environ
        names = {env_name(name): name for name in cls.model_fields}
        return cls(**{names[key]: raw for key, raw in env.items() if key in names and raw.strip()})


def env_name(field: str) -> str:
    """The environment variable of a settings field: ``redis_url`` -> ``ATOUT_REDIS_URL``."""
    return f"{ENV_PREFIX}{field.upper()}"


def _one_line(exc: ValidationError, values: Mapping[str, Any]) -> str:
    problems = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        if not field:  # a rule across fields: its message names the variables
            problems.append(message)
            continue
        shown = "(hidden)" if field == "admin_token" else repr(str(values.get(field)))
        if field == "redis_url":  # its password, masked
            from atout_arena.core.redis_conn import mask

            shown = repr(mask(str(values.get(field))))
        problems.append(f"{env_name(field)}={shown}: {message}")
    return "; ".join(problems)


def get_settings() -> Settings:
    """The settings of this process, from the environment."""
    return Settings.from_env()
