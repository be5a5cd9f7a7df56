"""The organizer's HTTP client of a running arena's REST API: what ``atout-arena bots``,
``tournament``, ``league``, ``test``, ``match`` and ``replay`` use, so that they act on the
arena that runs (never on files of the current directory).

Where the arena is, first found first:

- the API: ``--api URL``, else ``ATOUT_API_URL``, else the ``api_url`` of the config file that
  ``atout-arena up`` writes (:func:`config_path`), else http://127.0.0.1:8000;
- the organizer token: ``ATOUT_ADMIN_TOKEN``, else the config file's ``admin_token``;
- for an ``https://`` API whose certificate a private CA signed: that CA's PEM file, ``--ca
  FILE``, else ``ATOUT_CA_FILE`` (without either, the system's CAs).

Every failure is a :class:`ClientError` whose message is one line for people: nothing answers
at the URL, the token was refused, or the API's own ``detail`` (a 404, a 409, a 422...).
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

DEFAULT_API_URL = "http://127.0.0.1:8000"
CONFIG_ENV = "ATOUT_CONFIG"
CA_ENV = "ATOUT_CA_FILE"
TIMEOUT_S = 30.0


class ClientError(Exception):
    """A request that did not succeed; ``status`` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where ``atout-arena up`` writes, and the CLI reads, the running arena's API URL and
    organizer token: ``$ATOUT_CONFIG``, else ``$XDG_CONFIG_HOME/atout/arena.json``
    (``~/.config/atout/arena.json``)."""
    env = os.environ if environ is None else environ
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV])
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "atout" / "arena.json"


def read_config(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The config file's content; ``{}`` when there is none (or it cannot be read)."""
    try:
        data = json.loads(config_path(environ).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class Target:
    """Which API to talk to, with which token, and where each came from (for error messages)."""

    api_url: str
    token: str | None
    token_from: str
    ca: str | None = None  # the PEM file of the CA that signed an https:// API's certificate

    @classmethod
    def find(cls, api: str | None = None, environ: Mapping[str, str] | None = None,
             ca: str | None = None) -> Target:
        env = os.environ if environ is None else environ
        config = read_config(env)
        url = api or env.get("ATOUT_API_URL") or config.get("api_url") or DEFAULT_API_URL
        if not str(url).startswith(("http://", "https://")):
            raise ClientError(f"--api {url!r}: expected an http:// or https:// URL, e.g. {DEFAULT_API_URL}")
        if env.get("ATOUT_ADMIN_TOKEN"):
            token, source = env["ATOUT_ADMIN_TOKEN"], "ATOUT_ADMIN_TOKEN"
        elif config.get("admin_token"):
            token, source = str(config["admin_token"]), str(config_path(env))
        else:
            token, source = None, ""
        return cls(str(url).rstrip("/"), token, source, ca or env.get(CA_ENV) or None)

    def verify(self) -> ssl.SSLContext | bool:
        """What httpx checks an https:// API's certificate with: :attr:`ca`, else the system's CAs.

        :raises ClientError: a CA file that cannot be read or holds no certificate."""
        if not self.ca:
            return True
        try:
            return ssl.create_default_context(cafile=self.ca)
        except (OSError, ssl.SSLError) as exc:
            reason = getattr(exc, "strerror", None) or " ".join(str(exc).split())
            raise ClientError(f"--ca {self.ca!r} ({CA_ENV}): not a readable PEM certificate ({reason})") \
                from None


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or response.reason_phrase
    detail = body.get("detail", body) if isinstance(body, dict) else body
    if isinstance(detail, list):  # pydantic's errors: where, and what
        parts = []
        for error in detail:
            if isinstance(error, dict):
                where = ".".join(str(x) for x in error.get("loc", []) if x != "body")
                parts.append(f"{where}: {error.get('msg', '')}" if where else str(error.get("msg", "")))
            else:
                parts.append(str(error))
        return "; ".join(parts)
    if isinstance(detail, dict):
        return str(detail.get("message") or detail.get("detail") or json.dumps(detail))
    return " ".join(str(detail).split())


class ArenaClient:
    """A few calls of the REST API, with one-line errors (:class:`ClientError`)."""

    def __init__(self, target: Target, timeout: float = TIMEOUT_S, transport: Any = None) -> None:
        self.target = target
        headers = {"authorization": f"Bearer {target.token}"} if target.token else {}
        self._http = httpx.Client(base_url=target.api_url, headers=headers, timeout=timeout,
                                  transport=transport, trust_env=False,  # 127.0.0.1: never a proxy
                                  verify=target.verify())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ArenaClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, json_body: Any = None,
                params: Mapping[str, Any] | None = None) -> Any:
        url = self.target.api_url
        try:
            response = self._http.request(method, path, json=json_body, params=params)
        except httpx.TimeoutException:
            raise ClientError(f"{url} did not answer within {self._http.timeout.read:.0f} s") from None
        except httpx.TransportError as exc:
            if "CERTIFICATE_VERIFY_FAILED" in str(exc):  # an arena is there: say what is wrong
                reason = str(exc).partition("CERTIFICATE_VERIFY_FAILED]")[2].partition("(_ssl")[0]
                raise ClientError(
                    f"TLS: the certificate of {url} is not trusted ({reason.strip() or 'verify failed'}): "
                    f"pass --ca FILE (or set {CA_ENV}) with the CA that signed it") from None
            raise ClientError(
                f"nothing answers at {url}: is the arena running? (atout-arena up; or --api URL) "
                f"[{type(exc).__name__}]"
            ) from None
        if response.status_code in (401, 403):
            where = (f"the token from {self.target.token_from}" if self.target.token
                     else "no organizer token (set ATOUT_ADMIN_TOKEN, or run atout-arena up, which writes "
                          f"{config_path()})")
            raise ClientError(f"{url} refused {where}: HTTP {response.status_code}: {_detail(response)}",
                              response.status_code)
        if response.status_code >= 400:
            raise ClientError(f"{_detail(response)} (HTTP {response.status_code})", response.status_code)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, json_body=body)
