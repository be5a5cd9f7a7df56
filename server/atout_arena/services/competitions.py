"""What every competition shares, checked once: the :class:`CompetitionSpec` (game, players,
options, games per pairing, duplicate, fault policy) and the rules on entrants.

Tournaments and leagues (and whatever competition comes next) are created through these
checks, whoever asks: the REST routes, the CLI, the demo, a test. A rule written here holds
everywhere:

- the game exists, its options are the engine's (a bad one is the engine's own message), and
  ``players`` is a field of its own, never an option;
- a move takes 1 ms to :data:`~atout_arena.core.relay.MAX_DEADLINE_MS` with the time bank;
  faults and the bank are never negative; ``games_per_pairing`` is at least 1;
- entrants are registered bots (every unknown one is named), never disabled bots (each is
  named), each entered once; house bots (bosses too, ``house-tiercon-pimc-small-1``) only by
  their names, of the competition's game (tournaments and ladders: ``game``; leagues: never);
- a schedule holds at most :data:`MAX_MATCHES` matches.

A broken rule raises :class:`CompetitionError` (a ``ValueError``) whose message says which.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import redis
from sqlalchemy import ColumnElement, update
from sqlalchemy.orm import Session, sessionmaker

from atout.games import GAMES, new_game
from atout_arena.core.models import Bot, Match, utcnow
from atout_arena.core.relay import MAX_DEADLINE_MS, publish_stop
from atout_arena.core.vocabulary import MatchStatus
from atout_arena.services.bots import find_bot, is_house
from atout_arena.services.practice import parse_house_name, register_house_bots

MAX_MATCHES = 20_000  # one tournament's schedule (a season's too)


class CompetitionError(ValueError):
    """A competition that cannot be created or changed; the message says why. ``kind``, for
    the API's status code: ``invalid`` (the request breaks a rule), ``not_found``,
    ``conflict`` (the state of things forbids it: a name taken, a season still running)."""

    def __init__(self, message: str, kind: str = "invalid") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class CompetitionSpec:
    """A competition's game and rules of play, validated: build one with :meth:`of`."""

    game: str
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    games_per_pairing: int = 1
    duplicate: bool = False
    move_ms: int = 1000
    time_bank_ms: int = 0
    max_faults: int = 3

    @classmethod
    def of(
        cls,
        game: str,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        games_per_pairing: int = 1,
        duplicate: bool = False,
        move_ms: int = 1000,
        time_bank_ms: int = 0,
        max_faults: int = 3,
    ) -> CompetitionSpec:
        """The spec, or :class:`CompetitionError` naming what is wrong. ``players`` defaults
        to the game's."""
        options = dict(options or {})
        if "players" in options:
            raise CompetitionError("'players' is a field of its own, not an option")
        if game not in GAMES:
            raise CompetitionError(f"unknown game {game!r}; games: {', '.join(GAMES)}")
        try:
            rules = new_game(game, players=players, **options)
        except (ValueError, TypeError) as exc:
            raise CompetitionError(str(exc)) from None
        if time_bank_ms < 0 or max_faults < 0:
            raise CompetitionError("time_bank_ms and max_faults must be >= 0")
        if not move_ms >= 1 or move_ms + time_bank_ms > MAX_DEADLINE_MS:
            raise CompetitionError(
                f"move_ms={move_ms}, time_bank_ms={time_bank_ms}: a move needs at least 1 ms and at most "
                f"{MAX_DEADLINE_MS} ms with the bank"
            )
        if games_per_pairing < 1:
            raise CompetitionError(f"games_per_pairing={games_per_pairing}: at least 1")
        return cls(game, rules.players, options, games_per_pairing, bool(duplicate), move_ms, time_bank_ms,
                   max_faults)

    def columns(self) -> dict[str, Any]:
        """The spec as the stored competition's columns (tournaments and leagues alike)."""
        return asdict(self)

    def estimated_matches(self, bots: int) -> int:
        """A lower bound of a schedule's length: pairs to meet over pairs per table."""
        pairs = bots * (bots - 1) // 2 * self.games_per_pairing
        per_table = self.players * (self.players - 1) // 2
        return math.ceil(pairs / per_table)

    def check_size(self, bots: int) -> None:
        """Refuse at once a schedule whose lower bound is over the limit (never built)."""
        estimate = self.estimated_matches(bots)
        if estimate > MAX_MATCHES:
            raise CompetitionError(
                f"this tournament would have at least {estimate} matches; at most {MAX_MATCHES}"
            )

    def check_count(self, matches: int) -> None:
        """Refuse a built schedule of more than :data:`MAX_MATCHES` matches (its real length,
        which the lower bound may underestimate)."""
        if matches > MAX_MATCHES:
            raise CompetitionError(
                f"this tournament would have {matches} matches; at most {MAX_MATCHES}"
            )


def entrants(session: Session, refs: Sequence[str | int], *, distinct: bool = False,
             game: str | None = None) -> list[Bot]:
    """The bots named by ``refs`` (names or ids), in order, for a competition. Every unknown
    one is named in one error; house bots are refused, unless ``game`` is given: then a house
    bot of that game named by its name is seated (registered now if missing; a bad house name
    is one line, an unknown kind listing the kinds). A bot named twice (by name and by id,
    say) is an error, or with ``distinct`` is listed once, where it came first."""
    if game is not None:
        refs = _with_house_bots(session, refs, game)
    unknown: list[str] = []
    house: list[str] = []
    disabled: list[str] = []
    found: list[Bot] = []
    seen: set[int] = set()
    for ref in refs:
        bot = find_bot(session, ref)
        if bot is None and is_house(str(ref)):  # refused by name, registered or not yet
            house.append(str(ref))
            continue
        if bot is None:
            unknown.append(repr(ref))
            continue
        if is_house(bot.name) and (game is None or str(ref) != bot.name):
            house.append(bot.name)
            continue
        if bot.disabled:
            disabled.append(bot.name)
            continue
        if bot.id in seen:
            if distinct:
                continue
            raise CompetitionError(f"each bot may be entered once: {bot.name!r} is entered more than once")
        seen.add(bot.id)
        found.append(bot)
    if unknown:
        # A 422, not a 404: the resource the URL names exists; what the body says of it is wrong.
        raise CompetitionError(f"no bot named {', '.join(unknown)}")
    if house:
        raise CompetitionError(f"house bots play practice matches only: {', '.join(house)}")
    if disabled:
        raise CompetitionError(f"disabled bots cannot be entered: {', '.join(map(repr, disabled))}")
    return found


def _with_house_bots(session: Session, refs: Sequence[str | int], game: str) -> list[str | int]:
    """``refs``, its house bots' names checked for ``game`` and registered (one line else)."""
    names = [str(ref) for ref in refs if is_house(str(ref))]
    try:
        for name in names:
            parse_house_name(name, game)
    except ValueError as exc:
        raise CompetitionError(str(exc)) from None
    if names:
        register_house_bots(sessionmaker(bind=session.get_bind()), names)
    return list(refs)


def stop_running(session: Session, where: ColumnElement[bool], reason: str) -> list[int]:
    """Cancel the running matches ``where`` says (in the caller's transaction): ``cancelled``
    with ``reason`` as their error and no lease, so their workers store no result (nobody is
    rated by them) and their heartbeats find them lost. Returns their ids, for
    :func:`tell_workers` once committed."""
    return list(session.scalars(
        update(Match).where(where, Match.status == MatchStatus.RUNNING)
        .values(status=MatchStatus.CANCELLED, finished_at=utcnow(), lease_id=None, error=reason)
        .returning(Match.id).execution_options(synchronize_session=False)))


def tell_workers(redis_client: Any, match_ids: Sequence[int], reason: str) -> None:
    """Tell the workers to stop ``match_ids`` now (:func:`~atout_arena.core.relay.publish_stop`).
    Best effort: with Redis away, each worker finds its match lost at its next heartbeat
    (``ATOUT_HEARTBEAT_S``) instead."""
    if redis_client is None or not match_ids:
        return
    with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
        publish_stop(redis_client, match_ids, reason)
