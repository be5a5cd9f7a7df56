"""Fixtures of the SDK tests: a fake arena (see fake_arena.py) on 127.0.0.1, port 0."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_arena import FakeArena, start_server


@pytest.fixture
def arena() -> Iterator[tuple[FakeArena, int]]:
    servicer = FakeArena()
    server, port = start_server(servicer)
    yield servicer, port
    server.stop(grace=None)
