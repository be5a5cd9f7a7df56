"""Practice matches: a bot plays at once against house bots, unrated, and gets the replay after.

**House bots** are arena-run bots, registered like any bot as ``house-<game>-<n>`` (owner
``arena``; their token is thrown away, so nobody can connect as them) and created on first
use. They never connect over the network: the match loop asks them **in-process**.
:class:`HouseAsker` is a match loop ``ask`` (:mod:`atout_arena.core.match`) that answers the seats of
house bots with an SDK :class:`atout.bots.HeuristicBot` (one instance per seat and match,
seeded from the match seed, exactly as the SDK's runner would run it) and hands every other
seat to the network asker (the game servers' relay, :func:`atout_workers.runner.decision_asker`).

**Playing.** :func:`start_practice` stores the match (``queued``, no tournament, never
forfeited) and returns its id. It is played by the one match runner,
:func:`atout_workers.runner.run_match`, like every match: claim, heartbeat, spectator events, one
stored result, metrics, the bots' MatchStart / MatchEnd. The runner plays house seats with
:class:`HouseAsker` whenever a match has some (so a worker that gets a practice match from
the sweeper plays it the same way), and rates only tournament matches: a practice match never
moves a rating, so house bots never appear on a leaderboard and a bot under development can
practise without cost. :class:`Practice` puts both together for the REST API and the gRPC
``Games.StartPractice``: it checks that the caller is connected, stores the match and runs it
on its own thread pool, so the match starts at once, whatever the length of the workers'
match queue.

>>> practice = Practice(world)                                     # doctest: +SKIP
>>> started = practice.start(bot_id, "merde", players=3, options={"deals": 2})  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from atout.bot import Bot as SdkBot
from atout.bot import MatchInfo, MatchResult, Observation
from atout.games import new_game
from atout_arena.core.models import Bot, Match, MatchSeat, utcnow
from atout_arena.core.relay import is_connected
from atout_arena.services.bots import HOUSE_PREFIX, find_bot, hash_token, is_house, new_token

if TYPE_CHECKING:
    from atout_arena.core.match import Answer, Asker, DecisionAsk, MatchSetup
    from atout_workers.world import World

log = logging.getLogger(__name__)

HOUSE_OWNER = "arena"
DEFAULT_MOVE_MS = 2_000
MAX_MOVE_MS = 60_000
MAX_IN_FLIGHT = 4  # practice matches one bot may have queued or running at once
IN_FLIGHT = ("pending", "queued", "running")


class PracticeError(ValueError):
    """A practice match that cannot start. ``kind`` says why, for the API's status code:
    ``invalid`` (bad game or options), ``not_found``, ``forbidden`` (disabled or house bot),
    ``not_connected``, ``busy`` (too many practice matches in flight)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def house_bot_name(game: str, number: int) -> str:
    return f"{HOUSE_PREFIX}{game}-{number}"


def house_bots(sessions: sessionmaker, game: str, count: int) -> list[int]:
    """The ids of ``house-<game>-1..count``, registered now if missing (safe to race)."""
    names = [house_bot_name(game, n) for n in range(1, count + 1)]
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
    raise PracticeError("invalid", f"could not register the house bots of {game!r}")


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
            .where(Match.tournament_id.is_(None), MatchSeat.bot_id == bot_id, Match.status.in_(IN_FLIGHT))
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
) -> int:
    """Store a practice match of ``bot`` (id or name) against house bots; returns its id.

    The match is ``queued`` with no tournament; :func:`play_practice` plays it. ``players``
    and ``move_ms`` default to the game's default and :data:`DEFAULT_MOVE_MS`; ``seat`` (the
    bot's seat) to one drawn from the seed. Raises :class:`PracticeError`.
    """
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
        busy = in_flight(session, me.id)
        if busy >= MAX_IN_FLIGHT:
            raise PracticeError(
                "busy", f"bot {me.name!r} has {busy} practice matches in flight; at most {MAX_IN_FLIGHT}"
            )
        me_id = me.id
    house = iter(house_bots(sessions, game, n - 1))
    seating = [me_id if s == seat else next(house) for s in range(n)]
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
            status="queued",
            queued_at=utcnow(),
        )
        match.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate(seating)]
        session.add(match)
        session.commit()
        return match.id


# -- house bots in the match loop --------------------------------------------------------------


def house_player(setup: MatchSetup, seat: int) -> SdkBot:
    """The SDK bot that plays a house seat: the heuristic bot of the game, seeded per seat."""
    from atout.bots import HeuristicBot

    bot = HeuristicBot()
    bot.rng.seed(f"{setup.seed}/{seat}")
    bot.match = MatchInfo(
        setup.match_id, setup.game, seat, len(setup.seats), dict(setup.options), [s.name for s in setup.seats]
    )
    bot.on_match_start(bot.match)
    return bot


class HouseAsker:
    """A match loop ``ask``: house seats are answered in-process, the others by ``network``."""

    def __init__(self, setup: MatchSetup, network: Asker | None) -> None:
        self.setup = setup
        self.network = network
        self.players: dict[int, SdkBot] = {}

    def __call__(self, ask: DecisionAsk) -> Answer:
        from atout_arena.core.match import DISCONNECTED, Answer

        if not is_house(ask.bot.name):
            if self.network is None:
                return Answer(None, 0.0, DISCONNECTED, "no network asker for a visiting bot")
            return self.network(ask)
        return self._house(ask)

    def _house(self, ask: DecisionAsk) -> Answer:
        from atout_arena.core.match import ILLEGAL, Answer

        started = time.perf_counter()
        player = self.players.get(ask.seat)
        try:
            if player is None:
                player = self.players[ask.seat] = house_player(self.setup, ask.seat)
            action = player.act(
                Observation(ask.observation, list(ask.legal_actions), ask.deadline_ms, ask.match_id)
            )
            reason = ask.check(action) if isinstance(action, str) else f"not an action string: {action!r}"
        except Exception as exc:  # a house bot's bug is a fault like any bot's, never a crash
            log.exception("house bot %s (match %s) failed", ask.bot.name, ask.match_id)
            return Answer(None, _ms(started), ILLEGAL, f"house bot error: {type(exc).__name__}: {exc}")
        if reason is not None:
            return Answer(None, _ms(started), ILLEGAL, f"{action!r}: {reason}", rejected=1)
        return Answer(action, _ms(started))

    def finish(self, scores: list[int], ranking: list[int], reason: str) -> None:
        for seat, player in self.players.items():
            try:
                player.on_match_end(MatchResult(self.setup.match_id, scores, ranking, seat, reason))
            except Exception:
                log.exception(
                    "house bot in seat %s of match %s: on_match_end failed", seat, self.setup.match_id
                )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# -- practice matches for the API and the game servers ----------------------------------------


@dataclass(frozen=True)
class PracticeStarted:
    match_id: int
    game: str
    seat: int
    seats: list[str]


class Practice:
    """Practice matches for one process (the API, a game server): checks, stores and plays
    them on a small thread pool of its own (one thread per match in flight)."""

    def __init__(self, world: World, max_workers: int = 8) -> None:
        self.world = world
        self.pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="atout-practice")
        self.stopping = threading.Event()

    def start(
        self,
        bot_id: int,
        game: str,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        move_ms: int | None = None,
        seat: int | None = None,
    ) -> PracticeStarted:
        """Start a practice match of a connected bot at once. Raises :class:`PracticeError`."""
        if not is_connected(self.world.redis, str(bot_id)):
            raise PracticeError(
                "not_connected",
                f"bot {bot_id} is not connected to a game server: connect it first "
                "(atout-bot run ... --token ...), then ask for a practice match",
            )
        match_id = start_practice(self.world.sessions, bot_id, game, players, options, move_ms, seat)
        with self.world.sessions() as session:
            match = session.get(Match, match_id)
            assert match is not None
            seats = sorted(match.seats, key=lambda s: s.seat)
            names = dict(
                session.execute(select(Bot.id, Bot.name).where(Bot.id.in_([s.bot_id for s in seats]))).all()
            )
            mine = next(s.seat for s in seats if s.bot_id == bot_id)
            started = PracticeStarted(match_id, game, mine, [names[s.bot_id] for s in seats])
        self.pool.submit(self._play, match_id)
        return started

    def _play(self, match_id: int) -> None:
        from atout_workers.runner import TRANSIENT_ERRORS, run_match

        try:
            outcome = run_match(self.world, match_id, stop=self.stopping)
            log.info("practice match %s: %s", match_id, outcome)
        except TRANSIENT_ERRORS as exc:  # given back to the queue: the sweeper sends it to a worker
            log.warning("practice match %s: %s; it went back to the queue", match_id, exc)
        except Exception:  # the pool would swallow it: say it
            log.exception("practice match %s crashed", match_id)

    def stop(self) -> None:
        """Ask running matches to stop at their next step (without waiting: see :meth:`close`)."""
        self.stopping.set()

    def close(self) -> None:
        """Stop: matches not started stay queued; running ones stop at their next step and go
        back to the queue (waits for the decisions in flight, each bounded by its deadline).
        Either way the sweeper gives them to a worker, which plays their house bots too."""
        self.stopping.set()
        self.pool.shutdown(wait=True, cancel_futures=True)
