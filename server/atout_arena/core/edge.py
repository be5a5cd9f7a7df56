"""The decision clock of the API's play streams (human seats): it runs at the edge, as the game
server's does for bots (``atout_arena.gateway.session``).

A human's answers come in separate HTTP requests (``POST /v1/play/answer``), which hold no
stream state: they are taken by ``ANSWER_IF_PENDING`` while the request's score in ``pending``
is before now. So when the play stream sends a decision, its deadline starts (now + the
decision's time), becomes that score (``EDGE_DEADLINE``), and when it passes with the request
still pending the stream tells the worker (``EXPIRE``): ``timeout``, or ``illegal`` after
rejected answers. A Rejection (the worker re-stores the request with a far score) puts the
deadline back, and a Rejection that arrives after the deadline ends the request at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from atout.v1 import atout_pb2 as pb
from atout_arena.core.relay import GatewayRelay, now_ms

log = logging.getLogger(__name__)

EXPIRE_MARGIN_S = 0.05  # an answer posted at the last moment is taken before the verdict


@dataclass
class _Open:
    match_id: str
    deadline: int  # ms since the epoch
    sent_at: float  # time.monotonic()
    timer: asyncio.TimerHandle


class EdgeClock:
    """The clocks of one play stream's open decisions."""

    def __init__(self, relay: GatewayRelay, address: str, conn_id: str) -> None:
        self.relay = relay
        self.address = address
        self.conn_id = conn_id
        self.open: dict[str, _Open] = {}

    async def sent(self, decision: pb.DecisionRequest) -> None:
        """``decision`` is about to go to the page: its clock starts (sets its deadline)."""
        rid = decision.request_id
        if rid in self.open:  # sent again (a Rejection's page reload): the clock runs on
            decision.deadline_unix_ms = self.open[rid].deadline
            return
        now = now_ms()
        decision.deadline_unix_ms = deadline = now + decision.deadline_ms
        loop = asyncio.get_running_loop()
        timer = loop.call_later(decision.deadline_ms / 1000 + EXPIRE_MARGIN_S, self._expire, rid)
        self.open[rid] = _Open(decision.match_id, deadline, time.monotonic(), timer)
        await self.relay.edge_deadline(self.address, rid, deadline)

    async def rejected(self, rid: str) -> None:
        """The worker refused an answer: the request is open again until its deadline."""
        request = self.open.get(rid)
        if request is None:
            return
        if now_ms() >= request.deadline:
            self._expire(rid)
        else:
            await self.relay.edge_deadline(self.address, rid, request.deadline)

    def ended(self, match_id: str) -> None:
        for rid in [r for r, o in self.open.items() if o.match_id == match_id]:
            self.open.pop(rid).timer.cancel()

    def close(self) -> None:
        for request in self.open.values():
            request.timer.cancel()
        self.open.clear()

    def _expire(self, rid: str) -> None:
        request = self.open.get(rid)
        if request is None:
            return
        edge_ms = (time.monotonic() - request.sent_at) * 1000
        posted = self.relay.expire(self.address, self.conn_id, rid, edge_ms)

        def told(done: asyncio.Future[object]) -> None:
            exc = None if done.cancelled() else done.exception()
            if exc is not None:
                log.warning("play stream %s: the deadline of %s could not be told to Redis: %s",
                            self.conn_id, rid, exc)

        posted.add_done_callback(told)
