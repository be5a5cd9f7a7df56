"""House bots in the match loop: the seats of ``house-<game>-<n>`` are played in-process.

House bots (:mod:`atout_arena.services.practice` registers them) never connect over the
network. :meth:`HouseAsker.asking` makes a match loop ``ask`` (:mod:`atout_arena.core.match`)
that answers their seats with an SDK :class:`atout.bots.HeuristicBot` (one instance per seat
and match, seeded from the match seed, exactly as the SDK's runner would run it) and hands
every other seat to the network asker (the game servers' relay,
:func:`atout_workers.play.decision_asker`).
"""

from __future__ import annotations

import logging
import time

from atout.bot import Bot as SdkBot
from atout.bot import MatchInfo, MatchResult, Observation
from atout.bots import HeuristicBot
from atout_arena.core.match import Answer, AsyncAsker, DecisionAsk, MatchSetup
from atout_arena.core.vocabulary import Fault
from atout_arena.services.bots import is_house

log = logging.getLogger(__name__)



def house_player(setup: MatchSetup, seat: int) -> SdkBot:
    """The SDK bot that plays a house seat: the heuristic bot of the game, seeded per seat."""
    bot = HeuristicBot()
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

    def asking(self, network: AsyncAsker) -> AsyncAsker:
        """The match loop's ``ask``: house seats in-process, the others awaited on ``network``."""

        async def ask(request: DecisionAsk) -> Answer:
            if not is_house(request.bot.name):
                return await network(request)
            return self._house(request)

        return ask

    def _house(self, ask: DecisionAsk) -> Answer:
        started = time.perf_counter()
        player = self.players.get(ask.seat)
        try:
            if player is None:
                player = self.players[ask.seat] = house_player(self.setup, ask.seat)
            action = player.act(
                Observation(ask.observation, list(ask.legal_actions), ask.deadline_ms, ask.match_id)
            )
            reason = ask.check(action) if isinstance(action, str) else f"not an action string: {action!r}"
        except Exception as exc:  # a house bot's bug is a fault like any bot's, never a crash
            log.exception("house bot %s (match %s) failed", ask.bot.name, ask.match_id)
            return Answer(None, _ms(started), Fault.ILLEGAL, f"house bot error: {type(exc).__name__}: {exc}")
        if reason is not None:
            return Answer(None, _ms(started), Fault.ILLEGAL, f"{action!r}: {reason}", rejected=1)
        elapsed = _ms(started)
        return Answer(action, elapsed, bot_ms=elapsed)  # in-process: no network, all of it is thinking

    def finish(self, scores: list[int], ranking: list[int], reason: str) -> None:
        for seat, player in self.players.items():
            try:
                player.on_match_end(MatchResult(self.setup.match_id, scores, ranking, seat, reason))
            except Exception:
                log.exception(
                    "house bot in seat %s of match %s: on_match_end failed", seat, self.setup.match_id
                )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
