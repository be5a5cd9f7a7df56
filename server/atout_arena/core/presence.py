"""A stream's presence: the one way a game server's bot stream and the API's play stream hold a
stream address (:func:`atout_arena.core.keys.stream_address`) in Redis.

    async with Presence(relay, address, conn_id, name="bot b7 stream gs-1/3fa2") as presence:
        for payload in presence.pending:            # what the last stream left: starts, requests
            ...
        while True:
            payloads, replaced_by = await presence.read(block_ms)
            ...                                     # forward them, in order
            if replaced_by is not None: ...         # a newer stream took the address: end
            if not await presence.heartbeat(): ...  # likewise, seen when renewing

Entering takes the address over (the relay's TAKEOVER: the bot's presence, its inbox cursor,
the messages its last stream left). Leaving, however it is left, closes the inbox and releases
the presence if it is still this stream's, with the hooks given run before and after the
release, in a task of its own and to its end (:func:`atout_arena.core.relay.to_the_end`): a
cancellation that arrives during the TAKEOVER or during the wind-up never leaves the presence
behind until its TTL (workers would send a gone stream decisions until then).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType

import redis

from atout_arena.core.relay import KIND_CONNECTION, KIND_MESSAGE, GatewayRelay, InboxReader, to_the_end

log = logging.getLogger(__name__)

RELEASE_TIMEOUT_S = 2.0  # each step of the wind-up that talks to Redis

Hook = Callable[[], Awaitable[None]]


class Presence:
    """One stream's hold on ``address`` (an async context manager: see the module's text).

    ``before_release`` runs first when it ends (the gateway stops its tasks and hands over the
    answers it read), ``after_release`` last (counts, a revoked bot's open decisions faulted).
    A hook's failure is logged and the others still run."""

    def __init__(self, relay: GatewayRelay, address: str, conn_id: str, *, name: str,
                 before_release: Hook | None = None, after_release: Hook | None = None) -> None:
        self.relay = relay
        self.address = address
        self.conn_id = conn_id
        self.name = name
        self.before_release = before_release
        self.after_release = after_release
        self.pending: list[bytes] = []  # MatchEnds, MatchStarts, then requests: to send first
        # > 0 when the arena ends the stream itself (a shutdown, a hand-over): the address reads as
        # cut off by an outage for this long (ms) after the release, not as a bot that left
        self.moved_ms = 0
        self._inbox: InboxReader | None = None
        self._cursor = b"0-0"

    async def __aenter__(self) -> Presence:
        self._inbox = self.relay.inbox(self.address)
        try:
            takeover = await self.relay.takeover(self.address, self.conn_id)
        except BaseException:  # cancelled while Redis ran the TAKEOVER: it may hold it now
            await to_the_end(self._wind_up())
            raise
        self._cursor = takeover.cursor
        self.pending = takeover.match_ends + takeover.match_starts + takeover.requests
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await to_the_end(self._wind_up())

    async def read(self, block_ms: int) -> tuple[list[bytes], str | None]:
        """The inbox's next messages, in order (waits up to ``block_ms`` for one), and the
        connection id of a newer stream that took the address over, if one did: the messages
        before its arrival are still this stream's to deliver, then it must end."""
        assert self._inbox is not None, "read inside `async with`"
        payloads: list[bytes] = []
        for entry_id, kind, payload in await self._inbox.read(self._cursor, block_ms):
            self._cursor = entry_id
            if kind == KIND_MESSAGE:
                payloads.append(payload)
            elif kind == KIND_CONNECTION:
                other = payload.decode(errors="replace")
                if other != self.conn_id:
                    return payloads, other
        return payloads, None

    async def heartbeat(self) -> bool:
        """Renew the presence; False when this stream no longer holds the address."""
        return await self.relay.heartbeat(self.address, self.conn_id)

    async def _wind_up(self) -> None:
        await self._hook(self.before_release)
        if self._inbox is not None:
            await self._inbox.aclose()
        try:
            await asyncio.wait_for(self.relay.release(self.address, self.conn_id, self.moved_ms),
                                   RELEASE_TIMEOUT_S)
        except (redis.RedisError, OSError, TimeoutError) as exc:  # Redis gone (a shutdown): one line
            log.warning("%s: presence not released, Redis unreachable (%s); it expires by itself",
                        self.name, exc)
        except Exception:
            log.exception("%s: could not release cleanly", self.name)
        await self._hook(self.after_release)

    async def _hook(self, hook: Hook | None) -> None:
        if hook is None:
            return
        try:
            await hook()
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("%s: Redis unreachable while winding up (%s)", self.name, exc)
        except Exception:
            log.exception("%s: its wind-up failed", self.name)
