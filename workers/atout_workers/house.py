"""House bots in the match loop: the seats of house bots are played in-process.

House bots (:mod:`atout_arena.services.practice` registers them and keeps the table of their
kinds, :data:`~atout_arena.services.practice.HOUSE_KINDS`) never connect over the network.
:meth:`HouseAsker.asking` makes a match loop ``ask`` (:mod:`atout_arena.core.match`) that
answers their seats with the SDK bot of their kind (``atout.bots.bot_factory(spec)``: one
instance per seat and match, seeded from the match seed, exactly as the SDK's runner would run
it) and hands every other seat to the network asker (the game servers' relay,
:func:`atout_workers.play.decision_asker`).

- The heuristic (``house-<game>-<n>``) answers on the worker's event loop: well under a
  millisecond a decision.
- A boss that searches (``house-<game>-pimc-small-<n>``...) thinks off the loop, in a small
  bounded pool of threads per worker process (:data:`SEARCH_THREADS`), so that the other
  matches' decisions on the loop never wait for it. Its time budget is the decision's deadline
  less a margin (:func:`budget_ms`: a fifth of it, at least :data:`MIN_MARGIN_MS`), less any
  wait for a thread; the bot gets it as ``observation.deadline_ms``. No answer by the deadline
  is a ``timeout`` fault, as for any bot (the late answer is thrown away; the seat's next
  decision waits for that thread to finish first).
- A house bot's exception is an ``illegal`` fault (``house bot error: ...``), never a crash.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import atout.bots
from atout.bot import Bot as SdkBot
from atout.bot import MatchInfo, MatchResult, Observation
from atout_arena.core.match import Answer, AsyncAsker, DecisionAsk, MatchSetup
from atout_arena.core.vocabulary import Fault
from atout_arena.services.bots import is_house
from atout_arena.services.practice import HouseKind, parse_house_name

log = logging.getLogger(__name__)

SEARCH_THREADS = 4  # search bots thinking at once in one worker process (more wait for a thread)
MIN_MARGIN_MS = 20  # kept from a search bot's deadline: the loop's and the threads' own delays

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def search_pool() -> ThreadPoolExecutor:
    """The process's threads for search bots (made on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(SEARCH_THREADS, thread_name_prefix="house-search")
        return _pool


def budget_ms(deadline_ms: int) -> int:
    """A search bot's time for a decision whose deadline is ``deadline_ms``: the deadline less a
    fifth (at least :data:`MIN_MARGIN_MS`), at least 1 ms. 1000 -> 800, 2000 -> 1600."""
    return max(1, deadline_ms - max(MIN_MARGIN_MS, deadline_ms // 5))


@functools.cache
def _factory(spec: str) -> Callable[[], SdkBot]:
    """The SDK's bots by spec: a built-in one (``heuristic``) as it is, else a search bot's
    spec (``pimc:worlds=16``) read by ``atout.bots.bot_factory``."""
    if spec in atout.bots.BOTS:
        return atout.bots.BOTS[spec]
    return atout.bots.bot_factory(spec)


def house_kind(name: str) -> HouseKind:
    """The kind of the house bot ``name`` (a ``HouseNameError`` for a name that is none)."""
    return parse_house_name(name).kind


def house_player(setup: MatchSetup, seat: int) -> SdkBot:
    """The SDK bot that plays a house seat: its kind's bot, seeded per seat."""
    bot = _factory(house_kind(setup.seats[seat].name).spec)()
    bot.rng.seed(f"{setup.seed}/{seat}")
    bot.match = MatchInfo(
        setup.match_id, setup.game, seat, len(setup.seats), dict(setup.options), [s.name for s in setup.seats]
    )
    bot.on_match_start(bot.match)
    return bot


class HouseAsker:
    """House seats answered in-process (:meth:`asking` makes the match loop's ``ask``)."""

    def __init__(self, setup: MatchSetup) -> None:
        self.setup = setup
        self.players: dict[int, SdkBot] = {}
        self.late: dict[int, asyncio.Future[str]] = {}  # a seat's search still running past its deadline

    def asking(self, network: AsyncAsker) -> AsyncAsker:
        """The match loop's ``ask``: house seats in-process, the others awaited on ``network``."""

        async def ask(request: DecisionAsk) -> Answer:
            if not is_house(request.bot.name):
                return await network(request)
            try:
                search = house_kind(request.bot.name).search
            except ValueError as exc:
                return _error(request, time.perf_counter(), exc)
            if search:
                return await self._search(request)
            return self._house(request)

        return ask

    def _act(self, ask: DecisionAsk, deadline_ms: int | None) -> str:
        player = self.players.get(ask.seat)
        if player is None:
            player = self.players[ask.seat] = house_player(self.setup, ask.seat)
        action = player.act(
            Observation(ask.observation, list(ask.legal_actions),
                        ask.deadline_ms if deadline_ms is None else deadline_ms, ask.match_id)
        )
        if not isinstance(action, str):
            raise TypeError(f"not an action string: {action!r}")
        return action

    def _house(self, ask: DecisionAsk) -> Answer:
        started = time.perf_counter()
        try:
            action = self._act(ask, None)
        except Exception as exc:  # a house bot's bug is a fault like any bot's, never a crash
            return _error(ask, started, exc)
        return _checked(ask, started, action)

    async def _search(self, ask: DecisionAsk) -> Answer:
        """A search bot's decision, off the loop, within its budget (see the module)."""
        started = time.perf_counter()
        late = self.late.pop(ask.seat, None)
        if late is not None:  # its last search overran: the bot is busy until it ends
            await asyncio.gather(late, return_exceptions=True)
        budget = budget_ms(ask.deadline_ms)
        if ask.seat not in self.players:  # made here, on the loop: finish() reads them from it
            try:
                self.players[ask.seat] = house_player(self.setup, ask.seat)
            except Exception as exc:  # a house bot's bug is a fault like any bot's, never a crash
                return _error(ask, started, exc)

        def think() -> str:
            left = budget - _ms(started)  # less the waits: for its last search, for a thread
            return self._act(ask, max(1, int(left)))

        timeout = (ask.deadline_ms - _ms(started)) / 1000
        late_by = (f"house bot: no answer within {ask.deadline_ms} ms "
                   f"(its budget {budget} ms)")
        if timeout <= 0:  # its last search took this one's time too
            return Answer(None, _ms(started), Fault.TIMEOUT, late_by)
        future: asyncio.Future[str] = asyncio.wrap_future(search_pool().submit(think))
        try:
            action = await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            self.late[ask.seat] = future
            future.add_done_callback(_retrieve)
            return Answer(None, _ms(started), Fault.TIMEOUT, late_by)
        except Exception as exc:  # a house bot's bug is a fault like any bot's, never a crash
            return _error(ask, started, exc)
        return _checked(ask, started, action)  # checked here, on the loop: the engine is the loop's

    def finish(self, scores: list[int], ranking: list[int], reason: str) -> None:
        for seat, player in list(self.players.items()):  # a thread may still add a boss's player
            late = self.late.get(seat)
            if late is not None and not late.done():  # still thinking on its thread: left alone
                continue
            try:
                player.on_match_end(MatchResult(self.setup.match_id, scores, ranking, seat, reason))
            except Exception:
                log.exception(
                    "house bot in seat %s of match %s: on_match_end failed", seat, self.setup.match_id
                )


def _checked(ask: DecisionAsk, started: float, action: str) -> Answer:
    reason = ask.check(action)
    if reason is not None:
        return Answer(None, _ms(started), Fault.ILLEGAL, f"{action!r}: {reason}", rejected=1)
    elapsed = _ms(started)
    return Answer(action, elapsed, bot_ms=elapsed)  # in-process: no network, all of it is thinking


def _error(ask: DecisionAsk, started: float, exc: BaseException) -> Answer:
    log.error("house bot %s (match %s) failed", ask.bot.name, ask.match_id, exc_info=exc)
    return Answer(None, _ms(started), Fault.ILLEGAL, f"house bot error: {type(exc).__name__}: {exc}")


def _retrieve(future: asyncio.Future[str] | Future[str]) -> None:
    if not future.cancelled():
        future.exception()  # a late search's error is not "never retrieved"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
