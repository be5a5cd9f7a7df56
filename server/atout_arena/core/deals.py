"""Secret deals: match seeds nobody can compute from what is public.

A competition's match seeds derive from its public-ish seed (the tournament's or the test's)
**and** its *deal key*, a 256-bit HMAC of the arena's secret::

    key  = HMAC-SHA256(arena secret, "atout/deal-key/<kind>/<seed>")
    seed of deal group g = HMAC-SHA256(key, "atout/schedule/<seed>/<g>")[:8] >> 1

- The **arena secret** is 32 random bytes stored in the database (table ``arena_secrets``),
  made by the first process that needs it (an insert that only one process wins, then read
  back): every process sharing the database shares it, restarts keep it, nothing to configure.
  Whoever can read the database can compute every deal; so can the organizer's API.
- Each competition stores its key (``deal_key``) and shows, from its creation, its
  **commitment** ``sha256(key)``. While the competition runs neither the key nor any match
  seed is shown to anyone but the organizer; once it is over both are, so anyone can check
  ``sha256(key)`` against the commitment published before play, recompute every match seed
  from the key (:func:`atout_arena.core.schedule.deal_seed`) and replay every match (``atout-arena replay``).
- The same seed on the same arena gives the same deals (a tournament can be played again);
  on another arena (another secret), other deals.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from atout_arena.core.models import ArenaSecret
from atout_arena.core.schedule import deal_seed

__all__ = ["arena_secret", "commitment", "deal_key", "deal_seed"]

SECRET_NAME = "deals"


def arena_secret(sessions: sessionmaker[Session]) -> bytes:
    """The arena's deal secret, made on first use (32 random bytes in ``arena_secrets``)."""
    with sessions() as session:
        stored = session.scalar(select(ArenaSecret.value).where(ArenaSecret.name == SECRET_NAME))
        if stored is not None:
            return bytes.fromhex(stored)
        session.add(ArenaSecret(name=SECRET_NAME, value=secrets.token_hex(32)))
        try:
            session.commit()
        except IntegrityError:  # another process made it first: read theirs
            session.rollback()
        stored = session.scalar(select(ArenaSecret.value).where(ArenaSecret.name == SECRET_NAME))
        assert stored is not None
        return bytes.fromhex(stored)


def deal_key(sessions: sessionmaker[Session], kind: str, seed: int) -> str:
    """A competition's deal key (hex): ``kind`` is ``tournament`` or ``test``."""
    message = f"atout/deal-key/{kind}/{seed}".encode()
    return hmac.new(arena_secret(sessions), message, hashlib.sha256).hexdigest()


def commitment(key: str | None) -> str | None:
    """What is published of a key before play: its SHA-256 (hex)."""
    return None if key is None else hashlib.sha256(bytes.fromhex(key)).hexdigest()
