"""The worker-side call: ask a bot for a decision, get an action or a typed fault.

>>> client = DecisionClient(redis_url)                                        # doctest: +SKIP
>>> decision = client.request(bot_id, match_id, "merde", seat, state.observation(seat),
...                           state.legal_actions(), deadline_ms=1000, check=legality_check(state))
>>> decision.action if decision.ok else decision.fault                         # doctest: +SKIP

``check(action)`` returns ``None`` when the action is legal, else the engine's reason (the
match loop's :func:`atout_arena.core.match.legality_check`). An
illegal answer goes back to the bot as a Rejection with that reason, and the call keeps
waiting for a legal answer until the deadline. Faults (:class:`Fault`):

- ``disconnected``: the bot had no live stream when asked (at once), or its stream was gone
  when the deadline passed;
- ``illegal``: the deadline passed after at least one illegal answer, or the bot gave
  :data:`~atout_arena.core.relay.MAX_REJECTIONS` illegal answers (faulted at once);
- ``timeout``: the deadline passed with no answer.

Concurrency, to keep 16+ matches in flight in one worker process: :class:`DecisionClient` is
thread-safe (one Redis connection pool; each call in flight holds one connection while it
waits), so run one match per thread. A call is one Redis round trip (push and wait are
pipelined), plus one per illegal answer. The Redis keys and scripts are described in
:mod:`atout_arena.core.relay`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from atout.v1 import atout_pb2 as pb
from atout_arena.core.relay import (
    COMMAND_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    MAX_DEADLINE_MS,
    MAX_REJECTIONS,
    REPLY_DISCONNECTED,
    REPLY_MARGIN_S,
    REQ_GRACE_MS,
    call_sync,
    cancel_command,
    conn_key,
    notify_command,
    now_ms,
    parse_reply,
    push_decision_command,
    reject_command,
    reply_key,
)
from atout_arena.core.vocabulary import Fault

Check = Callable[[str], str | None]
MIN_WAIT_S = 0.001  # BLPOP's 0 means "forever": never send it


@dataclass(frozen=True)
class Decision:
    """The outcome of one request: ``action`` (legal) or ``fault``, never both."""

    request_id: str
    action: str | None
    fault: Fault | None
    think_ms: float  # from the request pushed to the legal answer received (or to the fault)
    rejected: tuple[tuple[str, str], ...] = ()  # (illegal answer, reason given), in order
    bot_think_ms: float | None = None  # the bot's own time for the legal answer, as it told it

    @property
    def ok(self) -> bool:
        return self.fault is None


def new_request_id() -> str:
    return secrets.token_hex(12)


class _Exchange:
    """One request's logic without I/O (the client below does the Redis calls)."""

    def __init__(
        self,
        bot_id: str,
        match_id: str,
        game: str,
        seat: int,
        observation: dict[str, Any] | str,
        legal_actions: Sequence[str],
        deadline_ms: int,
        check: Check,
        max_deadline_ms: int,
    ) -> None:
        if not 0 < deadline_ms <= max_deadline_ms:
            raise ValueError(f"deadline_ms={deadline_ms}: must be in 1..{max_deadline_ms}")
        self.bot_id = bot_id
        self.check = check
        self.request_id = new_request_id()
        self.reply_key = reply_key(self.request_id)
        self.started = time.perf_counter()
        self.deadline_unix_ms = now_ms() + deadline_ms
        self.ttl_ms = deadline_ms + REQ_GRACE_MS
        self.rejected: list[tuple[str, str]] = []
        self.request = pb.ArenaMessage(
            decision=pb.DecisionRequest(
                request_id=self.request_id,
                match_id=match_id,
                game=game,
                seat=seat,
                observation_json=observation if isinstance(observation, str) else json.dumps(observation),
                legal_actions=legal_actions,
                deadline_ms=deadline_ms,
                deadline_unix_ms=self.deadline_unix_ms,
            )
        ).SerializeToString()
        self.match_id = match_id

    def push(self) -> tuple[Any, ...]:
        return push_decision_command(
            self.bot_id, self.request_id, self.deadline_unix_ms, self.request, self.ttl_ms
        )

    def wait_s(self) -> float:
        return max((self.deadline_unix_ms - now_ms()) / 1000, MIN_WAIT_S)

    def _elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def outcome(self, fault: Fault | None, action: str | None = None,
                bot_ms: float | None = None) -> Decision:
        return Decision(self.request_id, action, fault, self._elapsed_ms(), tuple(self.rejected), bot_ms)

    def on_reply(self, popped: Any) -> Decision | tuple[Any, ...] | None:
        """A Decision when done; the REJECT command to send (then wait again); or None when
        the deadline passed (cancel, then :meth:`expired`)."""
        if popped is None:
            return None
        value: bytes = popped[1]
        if value == REPLY_DISCONNECTED:
            return self.outcome(Fault.DISCONNECTED)
        action, bot_ms = parse_reply(value)
        reason = self.check(action)
        if reason is None:
            return self.outcome(None, action, bot_ms)
        self.rejected.append((action, reason))
        if now_ms() >= self.deadline_unix_ms or len(self.rejected) >= MAX_REJECTIONS:
            return None  # cancelled, then faulted (illegal) by expired()
        rejection = pb.ArenaMessage(
            rejection=pb.Rejection(
                request_id=self.request_id, match_id=self.match_id, action=action, reason=reason
            )
        ).SerializeToString()
        return reject_command(
            self.bot_id, self.request_id, self.deadline_unix_ms, self.request, rejection, self.ttl_ms
        )

    def expired(self, still_connected: bool) -> Decision:
        if not still_connected:
            return self.outcome(Fault.DISCONNECTED)
        return self.outcome(Fault.ILLEGAL if self.rejected else Fault.TIMEOUT)


def _match_start(
    match_id: str, game: str, seat: int, players: int, options: dict[str, Any], seat_names: Sequence[str]
) -> bytes:
    return pb.ArenaMessage(
        match_start=pb.MatchStart(
            match_id=match_id,
            game=game,
            seat=seat,
            players=players,
            options_json=json.dumps(options),
            seat_names=list(seat_names),
        )
    ).SerializeToString()


def _match_end(match_id: str, seat: int, scores: Sequence[int], ranking: Sequence[int], reason: str) -> bytes:
    return pb.ArenaMessage(
        match_end=pb.MatchEnd(
            match_id=match_id, seat=seat, scores=list(scores), ranking=list(ranking), reason=reason
        )
    ).SerializeToString()


class DecisionClient:
    """Thread-safe, blocking. One per worker process (or per thread: both work)."""

    def __init__(self, redis_url: str, *, max_deadline_ms: int = MAX_DEADLINE_MS) -> None:
        self.max_deadline_ms = max_deadline_ms
        self.redis = redis.Redis.from_url(
            redis_url,
            socket_timeout=COMMAND_TIMEOUT_S,  # blocking waits pass their own timeout
            socket_connect_timeout=CONNECT_TIMEOUT_S,
        )
        self.pool = self.redis.connection_pool

    def request(
        self,
        bot_id: str,
        match_id: str,
        game: str,
        seat: int,
        observation: dict[str, Any] | str,
        legal_actions: Sequence[str],
        deadline_ms: int,
        check: Check,
    ) -> Decision:
        """Ask ``bot_id`` for its action in ``match_id``; waits at most ``deadline_ms``."""
        ex = _Exchange(
            bot_id, match_id, game, seat, observation, legal_actions, deadline_ms, check, self.max_deadline_ms
        )
        step: Any = ex.push()
        while True:
            wait = ex.wait_s()
            _, popped = call_sync(
                self.pool, [("EVAL", *step), ("BLPOP", ex.reply_key, wait)], wait + REPLY_MARGIN_S
            )
            step = ex.on_reply(popped)
            if isinstance(step, Decision):
                return step
            if step is None:
                commands = [("EXISTS", conn_key(bot_id)), ("EVAL", *cancel_command(bot_id, ex.request_id))]
                connected, _ = call_sync(self.pool, commands, REPLY_MARGIN_S)
                return ex.expired(bool(connected))

    def match_start(
        self,
        bot_id: str,
        match_id: str,
        game: str,
        seat: int,
        players: int,
        options: dict[str, Any],
        seat_names: Sequence[str] = (),
    ) -> None:
        """Tell the bot a match starts (sent again if it reconnects while the match runs)."""
        message = _match_start(match_id, game, seat, players, options, seat_names)
        self.redis.eval(*notify_command(bot_id, "start", match_id, message))

    def match_end(
        self,
        bot_id: str,
        match_id: str,
        seat: int,
        scores: Sequence[int],
        ranking: Sequence[int],
        reason: str = "finished",
    ) -> None:
        message = _match_end(match_id, seat, scores, ranking, reason)
        self.redis.eval(*notify_command(bot_id, "end", match_id, message))

    def is_connected(self, bot_id: str) -> bool:
        return bool(self.redis.exists(conn_key(bot_id)))

    def close(self) -> None:
        self.redis.close()
