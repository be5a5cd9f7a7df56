"""Human players: people who play at the dashboard, seated like any bot.

A **human** is a bot record of kind ``human`` (:data:`atout_arena.services.bots.BOT_KINDS`)
with its own move time (``Bot.move_ms``, default
:data:`~atout_arena.services.bots.DEFAULT_HUMAN_MOVE_MS`): a seat waits the longer of it and the
match's. An organizer registers one (``POST /v1/bots`` with ``kind: human``) and seats it in
tournaments and leagues like any bot; its token opens its play stream.

A bot's **companion** is the human a bot developer plays as against their own bot: a record
named ``<bot name>~you`` (``~`` is refused in registered names, so it never clashes), created
on first use, whose seats are played with *the bot's* token (its own token is never shown).
:func:`human_for` says which human a token plays: itself for a human's token, the companion
for a bot's.

The browser cannot speak gRPC: the API serves human seats on the same Redis contract as the
game servers (:mod:`atout_arena.core.relay`): see :mod:`atout_arena.api.routes.play`.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from atout_arena.core.models import Bot
from atout_arena.services.bots import DEFAULT_HUMAN_MOVE_MS, BotInfo, hash_token, is_house, new_token

HUMAN = "human"
COMPANION_MARK = "~you"


def companion_name(bot: BotInfo) -> str:
    """The name of ``bot``'s companion human (at most 64 characters, unique per bot)."""
    name = f"{bot.name}{COMPANION_MARK}"
    return name if len(name) <= 64 else f"{bot.name[:48]}{COMPANION_MARK}{bot.id}"


def companion(sessions: sessionmaker, bot: BotInfo) -> BotInfo:
    """``bot``'s companion human, registered now if missing (safe to race)."""
    name = companion_name(bot)
    for _ in range(3):
        with sessions() as session:
            found = session.scalars(select(Bot).where(Bot.name == name)).one_or_none()
            if found is not None:
                return BotInfo.of(found)
            human = Bot(name=name, owner=bot.owner, token_hash=hash_token(new_token()), kind=HUMAN,
                        move_ms=DEFAULT_HUMAN_MOVE_MS)  # fmt: skip
            session.add(human)
            try:
                session.commit()
            except IntegrityError:  # registered by another request first: read again
                session.rollback()
                continue
            return BotInfo.of(human)
    raise RuntimeError(f"could not register the companion of bot {bot.name!r}")


def human_for(sessions: sessionmaker, bot: BotInfo) -> BotInfo:
    """The human whose seats this caller plays: a human itself, or a bot's companion.
    Raises ``ValueError`` for a house bot's or a disabled caller."""
    if bot.disabled:
        raise ValueError(f"{bot.name!r} is disabled")
    if bot.kind == HUMAN:
        return bot
    if is_house(bot.name):
        raise ValueError(f"{bot.name} is a house bot")
    return companion(sessions, bot)
