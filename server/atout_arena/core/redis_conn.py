"""``ATOUT_REDIS_URL`` turned into every kind of Redis client the arena uses.

Every part makes its Redis clients here, so that one URL says where Redis is, how to log in,
whether to speak TLS and whether Sentinel names the primary:

- ``redis://[[user]:password@]host:port/db`` and ``unix:///path?db=N`` (plain);
- ``rediss://[[user]:password@]host:port/db?ssl_ca_certs=CA.pem`` (TLS; redis-py's query
  parameters ``ssl_ca_certs``, ``ssl_certfile``, ``ssl_keyfile``, ``ssl_cert_reqs``
  (``required``, ``optional``, ``none``) and ``ssl_check_hostname``);
- ``redis+sentinel://[[user]:password@]host:port[,host:port...]/MASTER_NAME[/DB]`` and
  ``rediss+sentinel://...`` (the sentinels and the primary over TLS): the sentinels at those
  addresses name the primary of ``MASTER_NAME``; the credentials are the primary's and, unless
  ``sentinel_password`` (and ``sentinel_username``) in the query say otherwise, the sentinels'.

:func:`sync_client` and :func:`async_client` (redis-py), :func:`wire_options` (the arena's
pipelined :class:`~atout_arena.core.wire.Wire`) and :func:`celery_config` (Celery's broker and
result backend, kombu's ``sentinel://`` transport for Sentinel) all read the same
:func:`parse`. :func:`mask` hides the password of a URL that is printed; :func:`refusal` says
in one line why Redis refuses this URL's credentials (each command's start checks it).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.sentinel import Sentinel

SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
SENTINEL_PORT = 26379
SSL_PARAMS = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs", "ssl_check_hostname")
REFUSED = ("NOAUTH", "WRONGPASS", "NOPERM", "AUTH", "invalid password", "invalid username")
CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


@dataclass(frozen=True)
class RedisTarget:
    """What a Redis URL says, parsed (:func:`parse`); its repr hides the passwords."""

    url: str = field(repr=False)
    tls: bool = False
    host: str = "127.0.0.1"
    port: int = 6379
    path: str | None = None  # a unix socket
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    master_name: str | None = None  # Sentinel: the primary's name, and where to ask for it
    sentinels: tuple[tuple[str, int], ...] = ()
    sentinel_username: str | None = None
    sentinel_password: str | None = field(default=None, repr=False)
    ssl_params: dict[str, str] = field(default_factory=dict)  # the ssl_* query parameters

    @property
    def sentinel(self) -> bool:
        return self.master_name is not None

    @property
    def masked(self) -> str:
        return mask(self.url)

    def ssl_kwargs(self) -> dict[str, Any]:
        """redis-py's ``ssl_*`` keyword arguments (``ssl=True`` with them), or none."""
        if not self.tls:
            return {}
        out: dict[str, Any] = {"ssl": True}
        for name, value in self.ssl_params.items():
            out[name] = value.lower() in ("1", "true", "yes") if name == "ssl_check_hostname" else value
        return out

    def ssl_context(self) -> ssl.SSLContext | None:
        """The asyncio TLS context of these ``ssl_*`` parameters (None: plain)."""
        if not self.tls:
            return None
        context = ssl.create_default_context(cafile=self.ssl_params.get("ssl_ca_certs"))
        if self.ssl_params.get("ssl_certfile"):
            context.load_cert_chain(self.ssl_params["ssl_certfile"], self.ssl_params.get("ssl_keyfile"))
        reqs = CERT_REQS.get(self.ssl_params.get("ssl_cert_reqs", "required").lower(), ssl.CERT_REQUIRED)
        check = self.ssl_params.get("ssl_check_hostname", "true").lower() in ("1", "true", "yes")
        context.check_hostname = check and reqs != ssl.CERT_NONE
        context.verify_mode = reqs
        return context


def mask(url: str) -> str:
    """``url`` with its password (and ``sentinel_password``) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a Redis URL that cannot be parsed>"
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, hosts = netloc.rpartition("@")
        user, colon, _password = credentials.partition(":")
        netloc = f"{user}:***@{hosts}" if colon else f"{user}@{hosts}"
    query = "&".join(
        "sentinel_password=***" if k.split("=")[0] == "sentinel_password" else k
        for k in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _address(text: str, default_port: int) -> tuple[str, int]:
    host, colon, port = text.rpartition(":") if not text.endswith("]") else (text, "", "")
    if not colon:
        host, port = text, ""
    host = host.strip("[]") or "127.0.0.1"
    if port and not port.isdigit():
        raise ValueError(f"bad port in {text!r}")
    return host, int(port) if port else default_port


def parse(url: str) -> RedisTarget:
    """A Redis URL of one of :data:`SCHEMES`, parsed; ValueError (passwords masked) if it is not one."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in SCHEMES:
        raise ValueError(f"a Redis URL starts with redis://, rediss://, unix://, redis+sentinel:// or "
                         f"rediss+sentinel://, not {mask(url)!r}")
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    credentials, _, hosts = parts.netloc.rpartition("@")
    username = password = None
    if credentials:
        user, colon, secret = credentials.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
        if not colon:  # redis://secret@host: a password alone, as redis-py reads it
            username, password = None, unquote(user) or None
    tls = scheme.startswith("rediss")
    ssl_params = {k: query[k] for k in SSL_PARAMS if k in query}
    db = int(query["db"]) if query.get("db", "").isdigit() else 0
    if scheme == "unix":
        return RedisTarget(url=url, path=unquote(parts.path), db=db, username=username, password=password)
    path = [unquote(p) for p in parts.path.split("/") if p]
    if scheme.endswith("+sentinel"):
        if not path:
            raise ValueError(f"a Sentinel URL names its primary: {scheme}://HOST:PORT[,HOST:PORT]"
                             f"/MASTER_NAME[/DB], not {mask(url)!r}")
        if len(path) > 1:
            if not path[1].isdigit():
                raise ValueError(f"bad database number in {mask(url)!r}")
            db = int(path[1])
        sentinels = tuple(_address(h, SENTINEL_PORT) for h in hosts.split(",") if h)
        if not sentinels:
            raise ValueError(f"no sentinel address in {mask(url)!r}")
        # sentinel_password= (empty): sentinels without a password
        sentinel_password = query.get("sentinel_password", password) or None
        sentinel_username = query.get("sentinel_username",
                                      username if "sentinel_password" not in query else None) or None
        return RedisTarget(url=url, tls=tls, host=sentinels[0][0], port=sentinels[0][1], db=db,
                           username=username, password=password, master_name=path[0], sentinels=sentinels,
                           sentinel_username=sentinel_username, sentinel_password=sentinel_password,
                           ssl_params=ssl_params)
    host, port = _address(hosts, 6379)
    if path:
        if not path[0].isdigit():
            raise ValueError(f"bad database number in {mask(url)!r}")
        db = int(path[0])
    return RedisTarget(url=url, tls=tls, host=host, port=port, db=db, username=username, password=password,
                       ssl_params=ssl_params)


def _auth(target: RedisTarget) -> dict[str, Any]:
    return {k: v for k, v in (("username", target.username), ("password", target.password)) if v}


def _sentinel_kwargs(target: RedisTarget, timeouts: dict[str, Any]) -> dict[str, Any]:
    """How to talk to the sentinels themselves: their credentials, TLS, and the timeouts."""
    out = {k: v for k, v in timeouts.items() if k.startswith("socket_")}
    if target.sentinel_password:
        out["password"] = target.sentinel_password
    if target.sentinel_username:
        out["username"] = target.sentinel_username
    return {**out, **target.ssl_kwargs()}


def sync_client(url: str | RedisTarget, **options: Any) -> redis.Redis:
    """A redis-py client for ``url``; ``options``: its keyword arguments (``socket_timeout``,
    ``socket_connect_timeout``, ``protocol``...). Through Sentinel, a client of the current
    primary (redis-py's ``SentinelConnectionPool``: it asks again when a connection breaks, and
    leaves a primary demoted to replica)."""
    client: redis.Redis = _client(url, redis.Redis, Sentinel, options)
    return client


def async_client(url: str | RedisTarget, **options: Any) -> aioredis.Redis:
    """:func:`sync_client` for asyncio (``redis.asyncio``)."""
    client: aioredis.Redis = _client(url, aioredis.Redis, AsyncSentinel, options)
    return client


def _client(url: str | RedisTarget, client_class: Any, sentinel_class: Any, options: dict[str, Any]) -> Any:
    """A client of ``client_class`` for ``url`` (through ``sentinel_class`` for Sentinel): the
    one construction of :func:`sync_client` and :func:`async_client`."""
    target = url if isinstance(url, RedisTarget) else parse(url)
    if target.sentinel:
        sentinel = sentinel_class(list(target.sentinels), sentinel_kwargs=_sentinel_kwargs(target, options),
                                  **options, **target.ssl_kwargs())
        assert target.master_name is not None
        return sentinel.master_for(target.master_name, db=target.db, **_auth(target))
    if target.path is not None:
        return client_class(unix_socket_path=target.path, db=target.db, **_auth(target), **options)
    return client_class(host=target.host, port=target.port, db=target.db, **_auth(target),
                        **target.ssl_kwargs(), **options)


def wire_options(url: str | RedisTarget) -> dict[str, Any]:
    """The connection options of a :class:`~atout_arena.core.wire.Wire`: ``path`` or ``host``
    and ``port``, ``db``, ``username``, ``password``, ``ssl`` (an ``ssl.SSLContext``, or
    absent), and for Sentinel ``sentinels``, ``master_name``, ``sentinel_username``,
    ``sentinel_password``."""
    target = url if isinstance(url, RedisTarget) else parse(url)
    out: dict[str, Any] = {"db": target.db}
    if target.path is not None:
        out["path"] = target.path
    else:
        out["host"], out["port"] = target.host, target.port
    for name in ("username", "password", "sentinel_username", "sentinel_password"):
        if getattr(target, name):
            out[name] = getattr(target, name)
    if target.tls:
        out["ssl"] = target.ssl_context()
    if target.sentinel:
        out["sentinels"], out["master_name"] = list(target.sentinels), target.master_name
    return out


def _plain_url(scheme: str, target: RedisTarget, host: str, port: int, with_db: bool = True) -> str:
    credentials = ""
    if target.password:
        credentials = f"{quote(target.username or '', safe='')}:{quote(target.password, safe='')}@"
    elif target.username:
        credentials = f"{quote(target.username, safe='')}@"
    return f"{scheme}://{credentials}{host}:{port}" + (f"/{target.db}" if with_db else "")


def celery_config(url: str | RedisTarget, transport_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Celery settings for a broker and result backend on ``url``: ``broker_url``,
    ``result_backend``, both transport options (``transport_options`` with, through
    Sentinel, ``master_name`` and ``sentinel_kwargs``: kombu's ``sentinel://`` transport and
    Celery's ``sentinel://`` result backend) and, for TLS, ``broker_use_ssl`` and
    ``redis_backend_use_ssl``."""
    target = url if isinstance(url, RedisTarget) else parse(url)
    options = dict(transport_options or {})
    out: dict[str, Any] = {}
    if target.sentinel:
        options["master_name"] = target.master_name
        options["sentinel_kwargs"] = _sentinel_kwargs(target, {})
        broker = ";".join(_plain_url("sentinel", target, h, p) for h, p in target.sentinels)
        out.update(broker_url=broker, result_backend=broker)
    elif target.path is not None:
        credentials = f":{quote(target.password, safe='')}@" if target.password else ""
        out.update(broker_url=f"redis+socket://{credentials}{target.path}",
                   result_backend=f"redis+socket://{credentials}{target.path}")
    else:
        scheme = "rediss" if target.tls else "redis"
        out.update(broker_url=_plain_url(scheme, target, target.host, target.port),
                   result_backend=_plain_url(scheme, target, target.host, target.port))
    if target.tls:
        use_ssl = {k: v for k, v in target.ssl_kwargs().items() if k != "ssl"}
        use_ssl.setdefault("ssl_cert_reqs", "required")
        out.update(broker_use_ssl=use_ssl, redis_backend_use_ssl=use_ssl)
    out.update(broker_transport_options=options, result_backend_transport_options=dict(options))
    return out


def refusal(url: str | RedisTarget, timeout_s: float = 5.0) -> str | None:
    """Why Redis refuses this URL's credentials (or its database, or the sentinels their
    own), in one line, or None: Redis took them, or cannot be reached now (an outage is waited
    out by the parts, not a reason to stop)."""
    target = url if isinstance(url, RedisTarget) else parse(url)
    client = sync_client(target, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
    try:
        client.ping()
    except redis.AuthenticationError as exc:  # redis-py keeps the reply's text, not its code
        text = one_line(exc)
        text = text if text.startswith(("WRONGPASS", "NOAUTH", "ERR")) else f"WRONGPASS {text}"
        return f"Redis refused the password ({text}) at {target.masked}"
    except redis.ResponseError as exc:
        text = one_line(exc)
        if any(word in text for word in REFUSED):
            return f"Redis refused the password ({text}) at {target.masked}"
        if "DB index" in text:
            return f"Redis refused the database ({text}) at {target.masked}"
        return None
    except redis.RedisError as exc:  # away, or no primary now: waited out...
        text = one_line(exc)  # ... unless a sentinel refused its credentials (redis-py lists why)
        if target.sentinel and any(word in text for word in REFUSED):
            return f"a Redis sentinel refused the password ({text}) at {target.masked}"
        return None
    finally:
        client.close()
    return None


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
