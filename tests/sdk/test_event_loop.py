"""The event loop the runner and the arena's processes run on (``atout._loop``): uvloop's when
installed, asyncio's when it is not or when ``ATOUT_EVENT_LOOP=asyncio``."""

from __future__ import annotations

import asyncio
import sys

import pytest
import uvloop

from atout import _loop
from atout_arena.api import uvicorn_loop
from atout_workers.loop import MatchLoop


def test_uvloop_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ATOUT_EVENT_LOOP", raising=False)
    assert _loop.loop_factory() is uvloop.new_event_loop


@pytest.mark.parametrize("value", ["asyncio", " AsyncIO "])
def test_the_standard_loop_when_asked(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ATOUT_EVENT_LOOP", value)
    assert _loop.loop_factory() is asyncio.new_event_loop


def test_the_standard_loop_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ATOUT_EVENT_LOOP", raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    assert _loop.loop_factory() is asyncio.new_event_loop


@pytest.mark.parametrize(("value", "expected"), [("uvloop", uvloop.Loop), ("asyncio", asyncio.BaseEventLoop)])
def test_run_runs_the_coroutine_on_the_chosen_loop(monkeypatch: pytest.MonkeyPatch, value: str,
                                                   expected: type) -> None:
    monkeypatch.setenv("ATOUT_EVENT_LOOP", value)

    async def which() -> type:
        await asyncio.sleep(0)
        return type(asyncio.get_running_loop())

    kind = _loop.run(which())
    assert issubclass(kind, expected)
    if value == "asyncio":
        assert not issubclass(kind, uvloop.Loop)


def test_a_worker_plays_its_matches_on_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ATOUT_EVENT_LOOP", raising=False)
    matches = MatchLoop(capacity=2, sync_threads=1)
    try:
        assert isinstance(matches.loop, uvloop.Loop)

        async def on_loop() -> bool:
            return isinstance(asyncio.get_running_loop(), uvloop.Loop)

        assert matches.reserve(1)
        assert matches.start(on_loop()).result(5)
    finally:
        matches.stop()


@pytest.mark.parametrize(("value", "expected"), [(None, "uvloop"), ("asyncio", "asyncio")])
def test_the_api_runs_on_the_same_choice(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                         expected: str) -> None:
    if value is None:
        monkeypatch.delenv("ATOUT_EVENT_LOOP", raising=False)
    else:
        monkeypatch.setenv("ATOUT_EVENT_LOOP", value)
    assert uvicorn_loop() == expected
