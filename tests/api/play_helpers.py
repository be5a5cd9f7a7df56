"""A person's seat driven from Python: the play stream (``GET /v1/play/events``) read in a
thread, answers posted (``POST /v1/play/answer``), as the dashboard's play page does."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

import httpx


class HumanClient:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.events: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.headers = {"Authorization": f"Bearer {token}"}
        self._client = httpx.Client(base_url=url, headers=self.headers, timeout=httpx.Timeout(30, read=None))
        self._thread = threading.Thread(target=self._read, daemon=True, name="human-stream")
        self.status: int | None = None
        self._opened = threading.Event()

    def open(self) -> HumanClient:
        self._thread.start()
        kind, hello = self.next(15)
        assert kind == "hello", (kind, hello)
        self.hello = hello
        return self

    def _read(self) -> None:
        try:
            with self._client.stream("GET", "/v1/play/events", headers={"Accept": "text/event-stream"}) as r:
                self.status = r.status_code
                kind = "message"
                data: list[str] = []
                for line in r.iter_lines():
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif not line and data:
                        self.events.put((kind, json.loads("\n".join(data))))
                        kind, data = "message", []
        except httpx.HTTPError as exc:
            self.events.put(("closed", {"error": repr(exc)}))
            return
        self.events.put(("closed", {}))

    def next(self, timeout: float = 30) -> tuple[str, dict[str, Any]]:
        return self.events.get(timeout=timeout)

    def answer(self, request_id: str, action: str) -> httpx.Response:
        return self._client.post("/v1/play/answer", json={"request_id": request_id, "action": action})

    def close(self) -> None:
        self._client.close()
