"""The event loop of a worker process: every match it holds is a coroutine on one loop.

A Celery task (a thread of the pool) claims its match, then hands the match to this loop and
returns: the process keeps up to ``capacity`` matches in flight (``ATOUT_WORKER_CONCURRENCY``,
1000 by default) on one thread, whose decisions all go through one pipelined Redis connection
and come back through one mailbox (:class:`atout_workers.decisions.AsyncDecisionClient`). A
match in flight costs a coroutine, its game state and a few dicts: well under 1 MB (measured
by ``bench/concurrency.py``), where a thread per match cost a thread and a Redis connection.

What blocks — the database (claim, result, ratings), the sync Redis calls of the follow-ups —
runs on a small pool of threads (:meth:`MatchLoop.run_sync`), never on the loop. Heartbeats,
leases and recovery after ``kill -9`` are the same as for a match played on a thread: the
heartbeat thread renews every lease of the process; a dead process's matches go stale and the
sweeper gives them back to the queue.

When the pool is full, :meth:`reserve` blocks the Celery thread that wants to start one more
match (so the process takes no more messages from the broker than it can play). On a warm
shutdown the matches in flight get ``ATOUT_WORKER_SHUTDOWN_S`` (20 s) to finish (:meth:`drain`); then
:attr:`MatchLoop.stopping` makes the others stop at their next step and go back to the queue
(played again from their seed by another worker: nothing is lost, nothing stored twice).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from atout._loop import new_event_loop

log = logging.getLogger(__name__)

T = TypeVar("T")
SYNC_THREADS = 4  # threads for the blocking parts (database, sync Redis)
STOP_WAIT_S = 30.0  # after `stopping` is set: the longest a match waits for its current decision


class MatchLoop:
    """One event loop in a thread of its own, and a bounded number of matches on it."""

    def __init__(self, capacity: int, sync_threads: int = SYNC_THREADS) -> None:
        self.capacity = capacity
        self.loop = new_event_loop()
        self._slots = threading.BoundedSemaphore(capacity)
        self._lock = threading.Lock()
        self._in_flight = 0
        self._idle = threading.Condition(self._lock)
        self.stopping = threading.Event()  # set: every match stops at its next step, given back
        self.closing = threading.Event()  # set: a warm shutdown began; no more matches start here
        self.executor = concurrent.futures.ThreadPoolExecutor(sync_threads, thread_name_prefix="atout-sync")
        self._thread = threading.Thread(target=self._run, name="atout-matches", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # the worker is started: what it made so far lives as long as the process, out of the
        # collector's way (a full collection walked it all: tens of milliseconds mid-match)
        gc.freeze()
        asyncio.set_event_loop(self.loop)
        self.loop.set_default_executor(self.executor)
        self.loop.run_forever()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def reserve(self, timeout_s: float | None = None) -> bool:
        """Take room for one more match (blocks while ``capacity`` matches are in flight)."""
        if not self._slots.acquire(timeout=timeout_s):
            return False
        with self._lock:
            self._in_flight += 1
        return True

    def release(self) -> None:
        with self._lock:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.notify_all()
        self._slots.release()

    def start(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coroutine`` on the loop (room was taken with :meth:`reserve`; it is given back
        when the coroutine ends, whatever happens)."""

        async def holding() -> T:
            try:
                return await coroutine
            finally:
                self.release()

        return asyncio.run_coroutine_threadsafe(holding(), self.loop)

    def call(self, coroutine: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run ``coroutine`` on the loop and wait for its result (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout_s)

    async def run_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the pool's threads (what blocks: the database, sync Redis)."""
        return await self.loop.run_in_executor(self.executor, fn, *args)

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until no match is in flight (a warm shutdown); False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout_s)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.executor.shutdown(wait=False, cancel_futures=True)
