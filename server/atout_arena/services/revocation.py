"""Revocation that bites: disabling a bot or rotating its token.

:func:`rotate_token` and :func:`set_disabled` are what the REST API calls: the registry's change
(a house bot's refused), then :func:`revoke_bot`:

- every game server hears it on the control channel (``core.keys.CONTROL_CHANNEL``) and closes
  the bot's streams within a second, with an Error ``revoked``; the decisions waiting for those
  streams are answered ``disconnected`` at once (``GatewayRelay.fault_pending``). A rotated
  token's streams are closed too: they were opened with the old token; the bot reconnects with
  the new one. A disabled bot cannot reconnect (the game server refuses its token);
- a disabled bot leaves its running tests (cancelled: a test of an absent bot says nothing, its
  running games stopped), its running ladder games are stopped (:func:`stop_ladder_games`), and
  whatever :data:`ON_DISABLE` holds (the hook for ladders and any later standing competition);
  the workers heard the revocation too: its decisions in other games fault at once;
- it cannot be entered into anything new: tournaments and league seasons
  (``competitions.entrants``; a season leaves disabled members out), tests
  (``sprt.parse_contender``), practice (``practice.Practice.start``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from sqlalchemy import or_, select
from sqlalchemy.orm import sessionmaker

from atout_arena.core.models import Match, MatchSeat, SprtTest
from atout_arena.core.relay import publish_revocation
from atout_arena.core.vocabulary import SprtStatus
from atout_arena.services.bots import BotInfo, BotRegistry
from atout_arena.services.competitions import stop_running, tell_workers
from atout_arena.services.ladders import ladders_of
from atout_arena.services.sprt import cancel_test

REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)
# Called as hook(sessions, bot_id) when a bot is disabled: ladders register theirs here.
ON_DISABLE: list[Callable[[sessionmaker, int], Any]] = []


def revoke_bot(sessions: sessionmaker, redis_client: Any, bot_id: int, reason: str) -> dict[str, Any]:
    """Close the bot's streams everywhere (``reason``: ``disabled`` or ``token_rotated``) and,
    when disabled, take it out of its running tests and of :data:`ON_DISABLE`'s competitions.
    Returns what was done: ``game_servers`` that heard it, ``tests_cancelled``."""
    heard = publish_revocation(redis_client, bot_id, reason)
    cancelled: list[int] = []
    if reason == "disabled":
        with sessions() as session:
            tests = list(session.scalars(select(SprtTest.id).where(
                SprtTest.status == SprtStatus.RUNNING,
                or_(SprtTest.bot_a_id == bot_id, SprtTest.bot_b_id == bot_id))))
        cancelled = [t for t in tests if cancel_test(sessions, t, redis_client=redis_client)]
        stop_ladder_games(sessions, redis_client, bot_id)
        for hook in ON_DISABLE:
            hook(sessions, bot_id)
    return {"game_servers": heard, "tests_cancelled": cancelled}


def stop_ladder_games(sessions: sessionmaker, redis_client: Any, bot_id: int) -> list[int]:
    """Cancel the disabled bot's running ladder games, stopped by their workers within a
    second: its sets are void whatever they would have done (played without it), so nobody
    waits for them (docs/ladders.md). Its tournament games play on, its decisions faulted at
    once. Returns the games' ids."""
    reason = "a player was disabled"
    with sessions() as session:
        stopped = stop_running(session, Match.ladder_id.is_not(None) & Match.id.in_(
            select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)), reason)
        session.commit()
    tell_workers(redis_client, stopped, reason)
    return stopped


def rotate_token(sessions: sessionmaker, redis_client: Any, bot_id: int) -> str:
    """Give the bot a new token (:meth:`BotRegistry.rotate`: a house bot's is refused with a
    :class:`~atout_arena.services.bots.RegistryError`) and close the streams opened with the old
    one; returns the new token, to be shown once."""
    token = BotRegistry(sessions).rotate(bot_id)
    revoke_bot(sessions, redis_client, bot_id, "token_rotated")
    return token


@dataclass(frozen=True)
class Disabled:
    """What :func:`set_disabled` did: the bot as it is now, and the running ladders it is a
    member of, to tick at once (the tick takes a disabled bot out of their pools and cancels its
    queued sets); none when it was enabled."""

    bot: BotInfo
    ladders: list[int] = field(default_factory=list)


def set_disabled(sessions: sessionmaker, redis_client: Any, bot_id: int, disabled: bool) -> Disabled:
    """Disable a bot (``disabled`` True) or enable it again (:meth:`BotRegistry.disable`: a house
    bot is refused with a :class:`~atout_arena.services.bots.RegistryError`). Disabling revokes
    it everywhere (:func:`revoke_bot`) and names its running ladders, for the caller to tick.

    A disable is done whole or not at all: Redis, which every step after the registry's needs,
    is asked first (unreachable: its error is raised, the bot left as it was: the API's 503),
    and a revocation Redis fails midway enables the bot again before the error is raised."""
    registry = BotRegistry(sessions)
    if disabled:
        redis_client.ping()
    info = registry.disable(bot_id, disabled=disabled)
    if not disabled:
        return Disabled(info)
    try:
        revoke_bot(sessions, redis_client, bot_id, "disabled")
    except REDIS_DOWN:
        registry.disable(bot_id, disabled=False)
        raise
    return Disabled(info, ladders_of(sessions, bot_id))
