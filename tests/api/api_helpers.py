"""Helpers of the API tests (imported by their conftest and modules)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

ADMIN_TOKEN = "atout_admin_test-organizer-token-0123"


@dataclass
class Api:
    url: str
    app: Any
    clients: list[httpx.Client] = field(default_factory=list)

    def _client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30)
        self.clients.append(client)
        return client

    @property
    def client(self) -> httpx.Client:
        return self._client(None)

    @property
    def organizer(self) -> httpx.Client:
        return self._client(ADMIN_TOKEN)

    def as_bot(self, token: str) -> httpx.Client:
        return self._client(token)

    def close(self) -> None:
        for client in self.clients:
            client.close()


def serve_in_thread(app: Any) -> tuple[str, Any, threading.Thread]:
    """Run ``app`` with uvicorn on 127.0.0.1, a free port, in a daemon thread."""
    import uvicorn

    sock = socket.socket(
        socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )  # asyncio then sets TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="api-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise AssertionError("the API server did not start within 15 s")
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}", server, thread


def arena_cli(monkeypatch: Any, tmp_path: Any, capsys: Any, *args: str,
                  token: str | None) -> tuple[int, str, str]:
    """``atout-arena ARGS`` in-process, with the organizer token ``token`` in the environment or
    none anywhere (no config file either): its exit code, stdout and stderr."""
    from atout_arena.cli import main

    if token is None:
        monkeypatch.delenv("ATOUT_ADMIN_TOKEN", raising=False)
    else:
        monkeypatch.setenv("ATOUT_ADMIN_TOKEN", token)
    monkeypatch.delenv("ATOUT_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage error
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
