"""The event loop the SDK's runner and the arena's processes run on: uvloop where installed.

uvloop (libuv under asyncio's API) runs the same coroutines with a cheaper loop: its
callbacks, futures' wake-ups and socket reads and writes cost a fraction of the pure-Python
loop's, which a process relaying thousands of decisions a second feels. ``ATOUT_EVENT_LOOP=asyncio``
keeps the standard loop (to compare, or where uvloop misbehaves).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """What makes a new event loop: uvloop's, unless ``ATOUT_EVENT_LOOP=asyncio`` or it is not
    installed."""
    if os.environ.get("ATOUT_EVENT_LOOP", "uvloop").strip().lower() != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop
    return asyncio.new_event_loop


def new_event_loop() -> asyncio.AbstractEventLoop:
    return loop_factory()()


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` on the loop :func:`loop_factory` chooses."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(coroutine)
