"""Practice matches: a bot plays at once against house bots, unrated, and gets the replay after.

**House bots** are arena-run bots, registered like any bot as ``house-<game>-<n>`` (owner
``arena``; their token is thrown away, so nobody can connect as them) and created on first
use. They never connect over the network: the worker that plays the match asks them
in-process (:mod:`atout_workers.house`).

**Bosses** are house bots of a stronger kind: ``house-<game>-<kind>-<n>`` (``house-tiercon-pimc-small-1``).
:data:`HOUSE_KINDS` is the one table of kinds: each names the SDK bot spec it plays
(``atout.bots.bot_factory(spec)``), a label in words (the Play page shows it) and whether it
searches (a search bot thinks off the worker's event loop, within a budget cut from the match's
move time). The heuristic kind keeps its old names, ``house-<game>-<n>``. Organizers seat any
house bot of a competition's game in tournaments, ladders and tests by its name
(docs/bosses.md).

**Starting.** :class:`Practice` is what the REST API and the gRPC ``Games.StartPractice`` call:
it checks that the caller is connected, stores the match (:func:`start_practice`: ``queued``,
no tournament, never forfeited) and sends it to the workers' **practice queue**
(:meth:`atout_arena.core.tasks.Tasks.play_practice`), where capacity is kept for it (a
practice worker, ``atout-arena worker --practice``), so it starts at once whatever the length
of the tournaments' queue. Only workers play matches: the API and the game servers store and
send, nothing more. A practice match never moves a rating, so house bots never appear on a
leaderboard and a bot under development can practise without cost.

>>> practice = Practice(sessions, redis, tasks)                               # doctest: +SKIP
>>> started = practice.start(bot_id, "merde", players=3, options={"deals": 2})  # doctest: +SKIP
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from atout.games import GAMES, new_game
from atout_arena.core.match import rules_version
from atout_arena.core.models import Bot, Match, MatchSeat, utcnow
from atout_arena.core.relay import is_connected
from atout_arena.core.tasks import Tasks
from atout_arena.core.vocabulary import MATCH_IN_FLIGHT, MatchStatus
from atout_arena.services.bots import HOUSE_PREFIX, find_bot, hash_token, is_house, new_token

HOUSE_OWNER = "arena"
DEFAULT_MOVE_MS = 2_000
MAX_MOVE_MS = 60_000
MAX_IN_FLIGHT = 4  # practice matches one bot may have queued or running at once


class PracticeError(ValueError):
    """A practice match that cannot start. ``kind`` says why, for the API's status code:
    ``invalid`` (bad game or options), ``not_found``, ``forbidden`` (disabled or house bot),
    ``not_connected``, ``busy`` (too many practice matches in flight)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def is_practice(match: Match) -> bool:
    """A practice match belongs to no competition (tournament or league season, test, ladder):
    it is played from the practice queue, and rated nowhere. :data:`PRACTICE` says it in SQL."""
    return match.tournament_id is None and match.test_id is None and match.ladder_id is None


PRACTICE = and_(Match.tournament_id.is_(None), Match.test_id.is_(None), Match.ladder_id.is_(None))


@dataclass(frozen=True)
class HouseKind:
    """A kind of house bot: its SDK bot spec, its strength in words, whether it searches."""

    kind: str
    spec: str  # for atout.bots.bot_factory
    label: str
    search: bool


HEURISTIC = "heuristic"
# The one table of house bot kinds (weakest first). The heuristic is inline on the worker's loop
# (well under a millisecond a decision); a search kind runs off the loop (atout_workers.house).
HOUSE_KINDS: dict[str, HouseKind] = {k.kind: k for k in (
    HouseKind(HEURISTIC, "heuristic", "easy (heuristic)", search=False),
    HouseKind("pimc-small", "pimc:worlds=16", "medium (PIMC search, 16 worlds)", search=True),
    HouseKind("pimc-large", "pimc:worlds=64", "hard (PIMC search, 64 worlds)", search=True),
    HouseKind("ismcts", "ismcts:iterations=1000", "tree search (ISMCTS, 1,000 iterations)", search=True),
)}
MAX_HOUSE_NUMBER = 99  # house-<game>[-<kind>]-0..99 (registered from 1): at most that many of a kind
_HOUSE_NAME = re.compile(rf"{HOUSE_PREFIX}([a-z]+)-(?:([a-z][a-z0-9-]*?)-)?([0-9]+)")


class HouseNameError(ValueError):
    """A ``house-`` name that names no house bot; the message is one line that says why."""


@dataclass(frozen=True)
class HouseName:
    game: str
    kind: HouseKind
    number: int

    @property
    def name(self) -> str:
        return house_bot_name(self.game, self.number, self.kind.kind)


def house_kinds_line() -> str:
    """``heuristic, pimc-small, pimc-large, ismcts``: the kinds, for error messages."""
    return ", ".join(HOUSE_KINDS)


def house_kind(kind: str) -> HouseKind:
    """The kind named ``kind``; :class:`HouseNameError` (one line listing the kinds) else."""
    try:
        return HOUSE_KINDS[kind]
    except KeyError:
        raise HouseNameError(f"unknown house bot kind {kind!r}; kinds: {house_kinds_line()}") from None


def house_bot_name(game: str, number: int, kind: str = HEURISTIC) -> str:
    """``house-<game>-<n>`` (the heuristic), ``house-<game>-<kind>-<n>`` (a boss)."""
    house_kind(kind)
    return f"{HOUSE_PREFIX}{game}-{number}" if kind == HEURISTIC else f"{HOUSE_PREFIX}{game}-{kind}-{number}"


def parse_house_name(name: str, game: str | None = None) -> HouseName:
    """The game, kind and number of a house bot's name (of ``game``, when given). Raises
    :class:`HouseNameError`, one line: an unknown kind lists the kinds."""
    form = (f"house bots are named {HOUSE_PREFIX}<game>-<n> (heuristic) or {HOUSE_PREFIX}<game>-<kind>-<n>, "
            f"n 0 to {MAX_HOUSE_NUMBER}; kinds: {house_kinds_line()}")
    found = _HOUSE_NAME.fullmatch(name)
    if found is None:
        raise HouseNameError(f"{name!r} is no house bot: {form}")
    their_game, kind, number = found.group(1), found.group(2), int(found.group(3))
    if their_game not in GAMES:
        raise HouseNameError(f"{name!r}: unknown game {their_game!r}; games: {', '.join(GAMES)}")
    if kind is not None and kind not in HOUSE_KINDS:
        raise HouseNameError(f"{name!r}: unknown house bot kind {kind!r}; kinds: {house_kinds_line()}")
    if kind == HEURISTIC or number > MAX_HOUSE_NUMBER or found.group(3) != str(number):
        raise HouseNameError(f"{name!r} is no house bot: {form}")
    if game is not None and their_game != game:
        raise HouseNameError(f"{name} plays {their_game}, not {game}")
    return HouseName(their_game, HOUSE_KINDS[kind or HEURISTIC], number)


def house_bots(sessions: sessionmaker, game: str, count: int, kind: str = HEURISTIC) -> list[int]:
    """The ids of ``house-<game>[-<kind>]-1..count``, registered now if missing (safe to race)."""
    return register_house_bots(sessions, [house_bot_name(game, n, kind) for n in range(1, count + 1)])


def register_house_bots(sessions: sessionmaker, names: list[str]) -> list[int]:
    """The ids of the house bots ``names`` (checked with :func:`parse_house_name` first), each
    registered now if missing (safe to race)."""
    for name in names:
        parse_house_name(name)
    for _ in range(3):
        with sessions() as session:
            found = dict(session.execute(select(Bot.name, Bot.id).where(Bot.name.in_(names))).all())
            missing = [n for n in names if n not in found]
            if not missing:
                return [found[n] for n in names]
            for name in missing:  # the token is never shown: nobody can connect as a house bot
                session.add(Bot(name=name, owner=HOUSE_OWNER, token_hash=hash_token(new_token())))
            try:
                session.commit()
            except IntegrityError:  # another request registered one first: read again
                session.rollback()
    raise PracticeError("invalid", f"could not register the house bots {', '.join(names)}")


def _find_bot(session: Session, bot: int | str) -> Bot:
    found = find_bot(session, bot)
    if found is None:
        raise PracticeError("not_found", f"no bot {bot!r}")
    return found


def in_flight(session: Session, bot_id: int) -> int:
    """Practice matches of ``bot_id`` not done yet."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(Match)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(Match.tournament_id.is_(None), MatchSeat.bot_id == bot_id,
                   Match.status.in_(MATCH_IN_FLIGHT))
        )
        or 0
    )


def start_practice(
    sessions: sessionmaker,
    bot: int | str,
    game: str,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
    move_ms: int | None = None,
    seat: int | None = None,
    seed: int | None = None,
    human: int | None = None,
    house: str = HEURISTIC,
    with_bot: bool = True,
) -> int:
    """Store a practice match of ``bot`` (id or name) against house bots; returns its id.

    The match is ``queued`` with no tournament; :func:`play_practice` plays it. ``players``
    and ``move_ms`` default to the game's default and :data:`DEFAULT_MOVE_MS`; ``seat`` (the
    bot's seat) to one drawn from the seed. ``human`` (a human's id, "play against your
    bot"): the human sits in ``seat`` (or a drawn one), the bot in another drawn seat, house
    bots in the rest. ``house``: the kind of the house bots (:data:`HOUSE_KINDS`).
    ``with_bot`` False (with ``human`` only): the human alone against house bots, ``bot``
    (its token) only asks. Raises :class:`PracticeError`.
    """
    if house not in HOUSE_KINDS:
        raise PracticeError("invalid", f"unknown house bot kind {house!r}; kinds: {house_kinds_line()}")
    if not with_bot and human is None:
        raise PracticeError("invalid", "a practice match without the bot needs a human")
    options = dict(options or {})
    options.pop("players", None)
    try:
        rules = new_game(game, players=players, **options)
    except (ValueError, TypeError) as exc:
        raise PracticeError("invalid", str(exc)) from None
    n = rules.players
    move_ms = DEFAULT_MOVE_MS if move_ms is None else move_ms
    if not 1 <= move_ms <= MAX_MOVE_MS:
        raise PracticeError("invalid", f"move_ms={move_ms}: a practice move takes 1 to {MAX_MOVE_MS} ms")
    seed = secrets.randbits(62) if seed is None else seed
    if seat is None:
        seat = random.Random(seed).randrange(n)
    elif not 0 <= seat < n:
        raise PracticeError("invalid", f"seat {seat} is not a seat of a {n}-player {game} (0..{n - 1})")
    with sessions() as session:
        me = _find_bot(session, bot)
        if is_house(me.name):
            raise PracticeError("forbidden", f"{me.name} is a house bot: house bots do not practise")
        if me.disabled:
            raise PracticeError("forbidden", f"bot {me.name!r} is disabled")
        busy = in_flight(session, me.id if with_bot or human is None else human)
        if busy >= MAX_IN_FLIGHT:
            raise PracticeError(
                "busy", f"bot {me.name!r} has {busy} practice matches in flight; at most {MAX_IN_FLIGHT}"
            )
        me_id = me.id
    if human is None:
        houses = iter(house_bots(sessions, game, n - 1, house))
        seating = [me_id if s == seat else next(houses) for s in range(n)]
    elif not with_bot:
        houses = iter(house_bots(sessions, game, n - 1, house))
        seating = [human if s == seat else next(houses) for s in range(n)]
    else:
        bot_seat = random.Random(seed + 1).choice([s for s in range(n) if s != seat])
        houses = iter(house_bots(sessions, game, n - 2, house))
        seating = [human if s == seat else me_id if s == bot_seat else next(houses) for s in range(n)]
    with sessions() as session:
        match = Match(
            tournament_id=None,
            number=0,
            game=game,
            options=options,
            seed=seed,
            move_ms=move_ms,
            time_bank_ms=0,
            max_faults=0,  # practice: never forfeit, every decision is asked
            rules_version=rules_version(game),
            status=MatchStatus.QUEUED,
            queued_at=utcnow(),
        )
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(seating)]
        session.add(match)
        session.commit()
        return match.id


# -- practice matches for the API and the game servers ----------------------------------------


@dataclass(frozen=True)
class PracticeStarted:
    match_id: int
    game: str
    seat: int
    seats: list[str]


class Practice:
    """Starts practice matches for one process (the API, a game server): checks, stores, and
    sends each to the workers' practice queue. Thread-safe; holds no thread of its own."""

    def __init__(self, sessions: sessionmaker, redis: Any, tasks: Tasks) -> None:
        self.sessions = sessions
        self.redis = redis
        self.tasks = tasks

    def start(
        self,
        bot_id: int,
        game: str,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        move_ms: int | None = None,
        seat: int | None = None,
        human: int | None = None,
        house: str = HEURISTIC,
        with_bot: bool = True,
    ) -> PracticeStarted:
        """Start a practice match of a connected bot at once. Raises :class:`PracticeError`.
        ``human``: a human's id, seated too (its play stream must be open); ``seat`` is then
        the human's, and so is the returned one. ``house``, ``with_bot``: as
        :func:`start_practice` (without the bot, it need not be connected)."""
        if with_bot and not is_connected(self.redis, str(bot_id)):
            raise PracticeError(
                "not_connected",
                f"bot {bot_id} is not connected to a game server: connect it first "
                "(atout-bot run ... --token ...), then ask for a practice match",
            )
        if human is not None and not is_connected(self.redis, str(human)):
            raise PracticeError(
                "not_connected", "your play stream is not open: open GET /v1/play/events first"
            )
        match_id = start_practice(self.sessions, bot_id, game, players, options, move_ms, seat, human=human,
                                  house=house, with_bot=with_bot)
        with self.sessions() as session:
            match = session.get(Match, match_id)
            assert match is not None
            seats = sorted(match.seats, key=lambda s: s.seat)
            names = dict(
                session.execute(select(Bot.id, Bot.name).where(Bot.id.in_([s.bot_id for s in seats]))).all()
            )
            mine = next(s.seat for s in seats if s.bot_id == (bot_id if human is None else human))
            started = PracticeStarted(match_id, game, mine, [names[s.bot_id] for s in seats])
        # stored before it is sent: should the send fail, the sweeper sends it again
        self.tasks.play_practice(match_id)
        return started
