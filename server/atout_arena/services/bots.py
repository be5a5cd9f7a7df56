"""The bot registry: add a bot and get its token once, verify tokens, rotate, disable, list.

Tokens are 256 random bits (``secrets.token_urlsafe``), so a fast hash is enough: the
database keeps ``sha256(token)`` only, and a lookup by that hash is checked again with a
constant-time comparison.

>>> from atout_arena.core.db import make_engine, make_session_factory, create_all
>>> engine = make_engine("sqlite://"); create_all(engine)
>>> registry = BotRegistry(make_session_factory(engine))
>>> bot, token = registry.add("alice", owner="ann")
>>> registry.verify(token).name
'alice'
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from atout_arena.core.match import Step
from atout_arena.core.models import Bot, Match, MatchSeat, parse_id
from atout_arena.core.vocabulary import FAULT_KINDS, MatchStatus, PlayedBy

TOKEN_PREFIX = "atout_"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
BOT_KINDS = ("bot", "human")
DEFAULT_HUMAN_MOVE_MS = 60_000  # a person's move time, unless registered with another
MAX_OWN_MOVE_MS = 240_000  # below the relay's longest wait (core.relay.MAX_DEADLINE_MS)
HOUSE_PREFIX = "house-"  # reserved for the arena's house bots (atout_arena.services.practice)
# A bot's name as the OpenAPI states it: NAME_PATTERN, not all digits (a string of digits is an
# id: GET /v1/bots/2 is bot 2), not a house bot's.
BOT_NAME_REGEX = r"^(?!house-)(?![0-9]+$)[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
# What names a bot in a request: a name, or an id as a string of digits.
BOT_REF_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


def bot_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a new bot's name, or None when it can."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        return (f"bad bot name {name!r}: 1 to 64 letters, digits, '_', '.' or '-', "
                "starting with a letter or digit")
    if name.isdigit():
        return f"bad bot name {name!r}: a name cannot be all digits (those are ids)"
    if is_house(name):
        return f"bad bot name {name!r}: names starting with {HOUSE_PREFIX!r} are the arena's"
    return None


def is_house(name: str) -> bool:
    """Whether a bot name is a house bot's (the prefix is reserved: nobody else may take it)."""
    return name.startswith(HOUSE_PREFIX)


def find_bot(session: Session, name_or_id: str | int) -> Bot | None:
    """The bot with this id (an int, or a string of ASCII digits), else with this name; None
    when there is none. Anything that is not an id a database can hold is taken as a name."""
    bot_id = parse_id(name_or_id)
    if bot_id is not None:
        bot = session.get(Bot, bot_id)
        if bot is not None:
            return bot
    return session.scalars(select(Bot).where(Bot.name == str(name_or_id))).one_or_none()


class RegistryError(ValueError):
    """A registry operation that cannot be done; the message says why. ``kind``, for the API's
    status code: ``conflict`` (the default: a name taken, a house bot), ``unauthorized`` (no
    token where one is needed), ``forbidden`` (a token without the right)."""

    def __init__(self, message: str, kind: str = "conflict") -> None:
        super().__init__(message)
        self.kind = kind


def check_not_house(name: str, doing: str) -> None:
    """Refuse (:class:`RegistryError`) to ``doing`` a house bot: the arena runs it alone, so
    nobody may hold its token, disable or enable it."""
    if is_house(name):
        raise RegistryError(f"{name} is a house bot: the arena runs it, nobody can {doing} it")


def check_details_viewer(bot_id: int, *, organizer: bool, caller_bot_id: int | None) -> None:
    """A bot's details are the organizer's and the bot's own (its token): anyone else is refused,
    ``unauthorized`` without a token (``caller_bot_id`` None), ``forbidden`` with another bot's."""
    if organizer or caller_bot_id == bot_id:
        return
    if caller_bot_id is None:
        raise RegistryError("a bot's details need the organizer token or the bot's own token", "unauthorized")
    raise RegistryError("a bot's token shows that bot's details only", "forbidden")


@dataclass(frozen=True)
class BotInfo:
    """A bot as the rest of the arena sees it (never its token nor its hash)."""

    id: int
    name: str
    owner: str
    created_at: datetime
    disabled: bool
    kind: str = "bot"  # or "human" (services.humans)
    move_ms: int | None = None  # its own move time, when longer than a match's

    @property
    def bot_id(self) -> str:
        """The id used in Redis keys and on the wire."""
        return str(self.id)

    @classmethod
    def of(cls, bot: Bot) -> BotInfo:
        created = bot.created_at
        if created.tzinfo is None:  # SQLite keeps no time zone: the stored value is UTC
            created = created.replace(tzinfo=UTC)
        return cls(bot.id, bot.name, bot.owner, created, bot.disabled, bot.kind or "bot", bot.move_ms)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class BotRegistry:
    """Bots in the database. Thread-safe: every call opens its own session."""

    def __init__(self, session_factory: sessionmaker) -> None:
        self._sessions = session_factory

    def add(
        self, name: str, owner: str = "", kind: str = "bot", move_ms: int | None = None
    ) -> tuple[BotInfo, str]:
        """Register a bot; returns it and its token (shown once: only its hash is kept).
        ``kind="human"``: a person who plays at the dashboard (:mod:`atout_arena.services.humans`),
        with ``move_ms`` (default :data:`DEFAULT_HUMAN_MOVE_MS`) as its own move time."""
        problem = bot_name_problem(name)
        if problem is not None:
            raise RegistryError(problem)
        if len(owner) > 128:
            raise RegistryError(f"owner {owner[:20]!r}...: at most 128 characters")
        if kind not in BOT_KINDS:
            raise RegistryError(f"bad kind {kind!r}: one of {', '.join(BOT_KINDS)}")
        if kind == "human" and move_ms is None:
            move_ms = DEFAULT_HUMAN_MOVE_MS
        if move_ms is not None and not 1 <= move_ms <= MAX_OWN_MOVE_MS:
            raise RegistryError(f"move_ms={move_ms}: a bot's own move time is 1 to {MAX_OWN_MOVE_MS} ms")
        token = new_token()
        with self._sessions() as session:
            bot = Bot(name=name, owner=owner, token_hash=hash_token(token), kind=kind, move_ms=move_ms)
            session.add(bot)
            try:
                session.commit()
            except IntegrityError:
                session.rollback()
                raise RegistryError(f"a bot named {name!r} already exists") from None
            return BotInfo.of(bot), token

    def verify(self, token: str) -> BotInfo | None:
        """The bot whose token this is, or None (disabled bots are returned: check ``disabled``)."""
        if not token:
            return None
        digest = hash_token(token)
        with self._sessions() as session:
            bot = session.scalars(select(Bot).where(Bot.token_hash == digest)).one_or_none()
            if bot is None or not hmac.compare_digest(bot.token_hash, digest):
                return None
            return BotInfo.of(bot)

    def get(self, name_or_id: str | int) -> BotInfo:
        with self._sessions() as session:
            return BotInfo.of(self._find(session, name_or_id))

    def rotate(self, name_or_id: str | int) -> str:
        """Give the bot a new token; the old one stops working. Returns the new token. A house
        bot's is refused (:func:`check_not_house`)."""
        token = new_token()
        with self._sessions() as session:
            bot = self._find(session, name_or_id)
            check_not_house(bot.name, "hold a token of")
            bot.token_hash = hash_token(token)
            session.commit()
        return token

    def disable(self, name_or_id: str | int, disabled: bool = True) -> BotInfo:
        """Disable (or enable again) a bot: a disabled bot cannot connect. A house bot is
        refused (:func:`check_not_house`)."""
        with self._sessions() as session:
            bot = self._find(session, name_or_id)
            check_not_house(bot.name, "disable or enable")
            bot.disabled = disabled
            session.commit()
            return BotInfo.of(bot)

    def list(self) -> list[BotInfo]:
        with self._sessions() as session:
            return [BotInfo.of(b) for b in session.scalars(select(Bot).order_by(Bot.id))]

    @staticmethod
    def _find(session: Session, name_or_id: str | int) -> Bot:
        bot = find_bot(session, name_or_id)
        if bot is None:
            raise RegistryError(f"no bot named {name_or_id!r}")
        return bot


# -- a bot's figures by version ---------------------------------------------------------------

FIGURES_WINDOW = 100  # a bot's figures (faults, think times) are over its last this many finished matches


def figures_window_text(window: int = FIGURES_WINDOW) -> str:
    return (f"the bot's last {window} finished matches: every figure (faults, their kinds, forfeits, think "
            "and network times), for the bot and for each version, is over these matches")


def _p50_p99(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    p50, p99 = (float(v) for v in np.percentile(values, [50, 99]))
    return p50, p99


@dataclass
class _Figures:
    """Faults and think times gathered over some matches of one bot (or one of its versions)."""

    matches: set[int] = field(default_factory=set)  # their ids (a test of two versions: two seats a match)
    forfeits: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    think: list[float] = field(default_factory=list)  # observed, request to answer
    told: list[float] = field(default_factory=list)  # as the bot reported it
    network: list[float] = field(default_factory=list)  # observed minus reported

    def add(self, match_id: int, seat: int, forfeited: bool, actions: list[Any] | None) -> None:
        self.matches.add(match_id)
        self.forfeits += bool(forfeited)
        for ply, row in enumerate(actions or []):
            step = Step.from_json(ply, row)
            if step.seat != seat:
                continue
            self.kinds.update(step.faults)
            if step.by == PlayedBy.BOT:
                self.think.append(step.think_ms)
                if step.bot_ms is not None:
                    self.told.append(step.bot_ms)
                    self.network.append(max(0.0, step.think_ms - step.bot_ms))

    def faults(self) -> dict[str, int]:
        return {"total": sum(self.kinds.values()), "forfeits": self.forfeits,
                **{kind: self.kinds[kind] for kind in FAULT_KINDS}, "matches_counted": len(self.matches)}

    def think_time(self) -> dict[str, Any]:
        p50, p99 = _p50_p99(self.think)
        bot_p50, bot_p99 = _p50_p99(self.told)
        net_p50, net_p99 = _p50_p99(self.network)
        return {"decisions": len(self.think), "p50_ms": p50, "p99_ms": p99, "told": len(self.told),
                "bot_p50_ms": bot_p50, "bot_p99_ms": bot_p99, "network_p50_ms": net_p50,
                "network_p99_ms": net_p99, "matches_counted": len(self.matches)}


def bot_figures(session: Session, bot_id: int, window: int = FIGURES_WINDOW) -> dict[str, Any]:
    """A bot's faults (total, forfeits, by kind: every one of them counted from the same
    decisions) and think times (observed, as it told them, network: p50 and p99), over one
    window, its last ``window`` finished matches: ``{"window": {...}, "faults": ..., "think_time":
    ..., "versions": {version: {"faults": ..., "think_time": ...}}}``, a version's figures over the
    matches of the window it played (the version of a seat is the one that played it)."""
    recent = list(session.scalars(
        select(MatchSeat.match_id).distinct()
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot_id, Match.status == MatchStatus.FINISHED)
        .order_by(MatchSeat.match_id.desc())
        .limit(window)
    ))
    rows = session.execute(  # every seat of the bot in them (two in a test of two of its versions)
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.played_version, MatchSeat.forfeited,
               Match.actions)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot_id, MatchSeat.match_id.in_(recent))
    ).all() if recent else []
    overall = _Figures()
    versions: dict[str, _Figures] = {}
    for match_id, seat, version, forfeited, actions in rows:
        overall.add(match_id, seat, forfeited, actions)
        versions.setdefault(version, _Figures()).add(match_id, seat, forfeited, actions)
    return {
        "window": {"matches": window, "counted": len(recent), "description": figures_window_text(window)},
        "faults": overall.faults(),
        "think_time": overall.think_time(),
        "versions": {v: {"faults": f.faults(), "think_time": f.think_time()} for v, f in versions.items()},
    }
