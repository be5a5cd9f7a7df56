"""Revocation that bites: disabling a bot or rotating its token.

:func:`revoke_bot` is what the REST API and the CLI call after the registry change:

- every game server hears it on the control channel (``core.keys.CONTROL_CHANNEL``) and closes
  the bot's streams within a second, with an Error ``revoked``; the decisions waiting for those
  streams are answered ``disconnected`` at once (``GatewayRelay.fault_pending``). A rotated
  token's streams are closed too: they were opened with the old token; the bot reconnects with
  the new one. A disabled bot cannot reconnect (the game server refuses its token);
- a disabled bot leaves its running tests (cancelled: a test of an absent bot says nothing) and
  whatever :data:`ON_DISABLE` holds (the hook for ladders and any later standing competition);
- it cannot be entered into anything new: tournaments and league seasons
  (``competitions.entrants``; a season leaves disabled members out), tests
  (``sprt.parse_contender``), practice (``practice.Practice.start``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import sessionmaker

from atout_arena.core.models import SprtTest
from atout_arena.core.relay import publish_revocation
from atout_arena.core.vocabulary import SprtStatus
from atout_arena.services.sprt import cancel_test

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
        cancelled = [t for t in tests if cancel_test(sessions, t)]
        for hook in ON_DISABLE:
            hook(sessions, bot_id)
    return {"game_servers": heard, "tests_cancelled": cancelled}
