"""Tests in the arena: is bot A (or version A) stronger than bot B? Fishtest's loop, for card games.

A test plays **duplicate sets**: one seeded deal played in every seat rotation of the table
(2 games for 2 players; otherwise A, B and the field's house bots rotate, and so does the mirror
table with B before A: ``2 * players`` games), so a set's score cancels the luck of the cards
and the seat order, as ``atout-bot match`` plays them locally. After every set it recomputes the analysis of
:mod:`atout.stats` (Elo ± 95%, LOS and the generalized SPRT on the set scores) and stops as soon
as the SPRT decides (``H1``: A is at least ``elo1`` stronger; ``H0``: at most ``elo0``), or when
``max_games`` games are played (``inconclusive``).

The work is done by the ``atout.test_tick`` task (:mod:`atout_workers.tasks`), sent when a test
is created and again each time one of its sets is complete (its last match stored; a tick
between would change nothing): :func:`tick` tops up the sets in flight to ``sets_in_flight``
(when the test was given one), or to 8 at first and then more as sets complete
(:func:`sets_wanted`, up to 64; their matches stored ``queued``, returned for the caller to
send) and finishes the test when it is decided, cancelling the matches not started. Ticks are
idempotent: a set is only scheduled once (``next_set``, advanced in the same transaction).
Test matches are never rated.

A test whose A or B has no live stream (a version never connected, or gone mid-test) schedules
nothing and says so (:func:`waiting_for`: ``waiting for alice@v9: not connected``); after
``ATOUT_TEST_WAIT_TIMEOUT_S`` of that (since it was created or its last match ended) it gives up:
``cancelled``, its ``reason`` saying why, which frees its place among the bot's running tests.

Seats: ``a`` and ``b`` are bot names or ids, optionally ``name@version`` (the seat is then
played by that version's stream; see :func:`atout_arena.core.relay.seat_address`); ``b`` may be
``house`` (the arena's heuristic house bot) or any house bot of the test's game by its name,
a boss too (``house-tiercon-pimc-small-1``). The other seats of a table of more than two are
house bots of the ``field``'s kind (``heuristic`` by default, or a boss's:
:data:`~atout_arena.services.practice.HOUSE_KINDS`). Who may create one: the
organizer, or a bot for a test of itself against one of its own versions or a house bot.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from atout.stats import Analysis, Sprt, Tally, pairwise_score
from atout_arena.core.deals import commitment, deal_key
from atout_arena.core.keys import VERSION_SEPARATOR
from atout_arena.core.match import Step, rules_version
from atout_arena.core.models import Bot, Match, MatchSeat, SprtTest, utcnow
from atout_arena.core.schedule import deal_seed, deal_suits
from atout_arena.core.vocabulary import MATCH_DONE, Fault, MatchStatus, SprtStatus
from atout_arena.services.bots import BotInfo, find_bot, is_house
from atout_arena.services.competitions import CompetitionError, CompetitionSpec, stop_running, tell_workers
from atout_arena.services.deals import open_tests
from atout_arena.services.practice import HOUSE_KINDS, house_bots, parse_house_name, register_house_bots

HOUSE = "house"
FIELDS = tuple(HOUSE_KINDS)  # the kinds of house bots that fill the other seats
MAX_GAMES = 100_000
MAX_SETS_IN_FLIGHT = 64
MAX_RUNNING_PER_BOT = 2  # tests a bot may have running at once (the organizer: no limit)


@dataclass(frozen=True)
class Contender:
    """One side of a test: a bot, and the version its seats ask for ("" = its current stream)."""

    bot: Bot
    version: str = ""

    @property
    def label(self) -> str:
        return f"{self.bot.name}{VERSION_SEPARATOR}{self.version}" if self.version else self.bot.name


def parse_contender(session: Session, sessions: sessionmaker, ref: str | int, game: str) -> Contender:
    """``alice``, ``7``, ``alice@v2`` or ``house`` -> the bot and version; CompetitionError else."""
    text = str(ref).strip()
    if text == HOUSE:
        (house_id,) = house_bots(sessions, game, 1)
        bot = session.get(Bot, house_id)
        assert bot is not None
        return Contender(bot)
    name, _, version = (part.strip() for part in text.partition(VERSION_SEPARATOR))
    if is_house(name) and not version:  # a house bot (a boss) by its name: registered on first use
        try:
            (house_id,) = register_house_bots(sessions, [parse_house_name(name, game).name])
        except ValueError as exc:
            raise CompetitionError(str(exc)) from None
        bot = session.get(Bot, house_id)
        assert bot is not None
        return Contender(bot)
    bot = find_bot(session, name)
    if bot is None:
        raise CompetitionError(f"no bot named {name!r}")
    if len(version) > 64 or not version.isprintable():
        raise CompetitionError(f"version {version[:80]!r}: at most 64 printable characters")
    if bot.disabled:
        raise CompetitionError(f"bot {bot.name!r} is disabled")
    if is_house(bot.name) and version:
        raise CompetitionError("house bots have no versions")
    return Contender(bot, version)


def check_tester(*, organizer: bool, bot: BotInfo | None) -> int | None:
    """Who may create a test: the organizer (returns None), or a bot by its own token (returns its
    id, for :func:`create_test`'s ``caller_bot_id``, which holds it to tests of itself) unless it
    is disabled (:class:`CompetitionError` kind ``forbidden``). Without either token: kind
    ``unauthorized``."""
    if organizer:
        return None
    if bot is None:
        raise CompetitionError("a test needs the organizer's token or a bot's token", "unauthorized")
    if bot.disabled:
        raise CompetitionError(f"bot {bot.name!r} is disabled", "forbidden")
    return bot.id


def create_test(
    sessions: sessionmaker,
    *,
    a: str | int,
    b: str | int,
    spec: CompetitionSpec,
    elo0: float = 0.0,
    elo1: float = 5.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_games: int = 20_000,
    field: str = "heuristic",
    sets_in_flight: int | None = None,
    name: str | None = None,
    caller_bot_id: int | None = None,
    seed: int | None = None,
) -> int:
    """Store a running test; returns its id (send ``atout.test_tick`` to start it).

    ``caller_bot_id``: the bot asking (None: the organizer); a bot may test itself against one
    of its own versions or a house bot only. Raises :class:`CompetitionError`."""
    try:
        sprt = Sprt(elo0, elo1, alpha, beta)
    except ValueError as exc:
        raise CompetitionError(str(exc)) from None
    if field not in FIELDS:
        raise CompetitionError(f"field {field!r}: the field is one of {', '.join(FIELDS)} (the house bots)")
    if not 1 <= max_games <= MAX_GAMES:
        raise CompetitionError(f"max_games={max_games}: 1 to {MAX_GAMES}")
    auto = sets_in_flight is None  # none given: they grow (sets_wanted)
    if sets_in_flight is None:
        sets_in_flight = START_SETS_IN_FLIGHT
    if not 1 <= sets_in_flight <= MAX_SETS_IN_FLIGHT:
        raise CompetitionError(f"sets_in_flight={sets_in_flight}: 1 to {MAX_SETS_IN_FLIGHT}")
    seed = secrets.randbits(62) if seed is None else seed
    with sessions() as session:
        first = parse_contender(session, sessions, a, spec.game)
        second = parse_contender(session, sessions, b, spec.game)
        if is_house(first.bot.name):
            raise CompetitionError("a is the bot under test: a house bot can only be b")
        if (first.bot.id, first.version) == (second.bot.id, second.version):
            raise CompetitionError(f"a and b are both {first.label}: test two bots, or two versions of one")
        if first.bot.id == second.bot.id and not (first.version and second.version):
            raise CompetitionError(
                f"a and b are the same bot: name both versions (e.g. {first.bot.name}@v2 against "
                f"{first.bot.name}@v1), or an unversioned seat could be played by the other's stream")
        if max_games < set_size_of(spec.players):
            raise CompetitionError(
                f"max_games={max_games}: a duplicate set of {spec.players} players is "
                f"{set_size_of(spec.players)} games; at least that many")
        if caller_bot_id is not None:
            running = session.scalar(select(func.count()).select_from(SprtTest).where(
                SprtTest.created_by == f"bot {caller_bot_id}", SprtTest.status == SprtStatus.RUNNING))
            if (running or 0) >= MAX_RUNNING_PER_BOT:
                raise CompetitionError(f"bot {first.bot.name!r} has {running} tests running; "
                                       f"at most {MAX_RUNNING_PER_BOT}", "busy")
            if first.bot.id != caller_bot_id:
                raise CompetitionError("a bot may only create a test of itself (a)", "forbidden")
            if second.bot.id != caller_bot_id and not is_house(second.bot.name):
                raise CompetitionError(
                    "a bot may test itself against its own versions or the house bot only; "
                    "the organizer may test any two bots", "forbidden")
        test = SprtTest(
            name=name or f"{first.label} vs {second.label}", **spec.columns(),
            bot_a_id=first.bot.id, version_a=first.version, bot_b_id=second.bot.id, version_b=second.version,
            field=field, elo0=sprt.elo0, elo1=sprt.elo1, alpha=sprt.alpha, beta=sprt.beta,
            max_games=max_games, sets_in_flight=sets_in_flight, sets_auto=auto,
            seed=seed, deal_key=deal_key(sessions, "test", seed), status=SprtStatus.RUNNING,
            created_by="organizer" if caller_bot_id is None else f"bot {caller_bot_id}",
        )
        session.add(test)
        session.commit()
        return test.id


def _table(sessions: sessionmaker, test: SprtTest) -> list[tuple[int, str]]:
    """The table's seats before rotation: A, B, then the field's house bots."""
    seats = [(test.bot_a_id, test.version_a), (test.bot_b_id, test.version_b)]
    if test.players > 2:
        taken = {test.bot_b_id}
        field = [b for b in house_bots(sessions, test.game, test.players, test.field) if b not in taken]
        seats += [(bot_id, "") for bot_id in field[: test.players - 2]]
    return seats


Connected = Callable[[int, str], bool]


def _contenders(session: Session, test: SprtTest) -> list[tuple[int, str, str]]:
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_([test.bot_a_id, test.bot_b_id])))
                 .all())
    return [(test.bot_a_id, test.version_a, names.get(test.bot_a_id, "")),
            (test.bot_b_id, test.version_b, names.get(test.bot_b_id, ""))]


def test_labels(session: Session, test_ids: list[int]) -> dict[int, str]:
    """What a test's matches are labelled with: ``test #3: alice@v2 vs alice@v1``, by test id."""
    tests = list(session.scalars(select(SprtTest).where(SprtTest.id.in_(set(test_ids))))) if test_ids else []
    ids = {bot_id for t in tests for bot_id in (t.bot_a_id, t.bot_b_id)}
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(ids))).all()) if ids else {}
    return {t.id: f"test #{t.id}: {_label(names.get(t.bot_a_id, str(t.bot_a_id)), t.version_a)} vs "
                  f"{_label(names.get(t.bot_b_id, str(t.bot_b_id)), t.version_b)}" for t in tests}


def set_tables(table: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """The seatings of one duplicate set: every rotation of the table and, beyond two seats, of
    its mirror (B before A): with rotations alone B would always sit on A's left, a seat-order
    bias that makes two equal bots look different (as ``atout-bot test`` measured)."""
    tables = [table]
    if len(table) > 2:
        tables.append([table[1], table[0], *table[2:]])
    return [t[r:] + t[:r] for t in tables for r in range(len(t))]


def set_size_of(players: int) -> int:
    """Games in one duplicate set: every seat rotation of the table (and of its mirror)."""
    return players if players == 2 else 2 * players


def set_size(test: SprtTest) -> int:
    return set_size_of(test.players)


def _label(name: str, version: str) -> str:
    return f"{name}{VERSION_SEPARATOR}{version}" if version else name


def absent_contenders(session: Session, test: SprtTest, connected: Connected) -> list[str]:
    """The labels (``alice@v9``) of A and B that have no live stream now (house bots always do)."""
    return [_label(name, version) for bot_id, version, name in _contenders(session, test)
            if not is_house(name) and not connected(bot_id, version)]


def waiting_for(absent: list[str]) -> str:
    """The line a test shows while it waits: ``waiting for alice@v9: not connected``."""
    return f"waiting for {' and '.join(absent)}: not connected"


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)  # SQLite's are naive, UTC


def waiting_since(session: Session, test: SprtTest) -> datetime:
    """Since when a test with nothing in flight has been idle: its last match's end, else its
    creation (what :func:`tick`'s give-up clock counts from)."""
    last = session.scalar(select(func.max(Match.finished_at)).where(Match.test_id == test.id))
    since = _utc(test.created_at)
    return max(since, _utc(last)) if last is not None else since


START_SETS_IN_FLIGHT = 8  # a test given no sets_in_flight starts with this many
GROWN_SETS_IN_FLIGHT = 64  # and grows to this many at most


def sets_wanted(sets_in_flight: int, complete_sets: int) -> int:
    """The sets a test given no ``sets_in_flight`` keeps in flight (one given one keeps exactly
    that many: a user who asks for 1 for a bot that plays one game at a time gets 1): 8 to
    begin with, then as many as it has complete sets, up to :data:`GROWN_SETS_IN_FLIGHT`. A slow
    start: the sets in flight double with each round of sets.

    Why grow: a set's rotations are played one after another (no bot holds one deal in two
    seats at once), so ``n`` sets are ``n`` matches in flight, and 8 of them keep a worker
    waiting on round trips with instant bots (bench/arena_test.py: 32 sets played fool 40%
    faster than 8). Why not at once: the sets in flight when the SPRT decides are wasted (their
    running games; their pending rotations are cancelled). Growing with the sets complete keeps
    that waste under one game for each set counted (at most half of a 2-player test's games,
    a sixth of a 3-player one's), while a test that runs long (the usual one: elo1 5 needs
    thousands of games) soon has 64 sets at once."""
    return max(sets_in_flight, min(GROWN_SETS_IN_FLIGHT, complete_sets))


def tick(sessions: sessionmaker, test_id: int, connected: Connected | None = None, *,
         wait_timeout_s: float | None = None, now: datetime | None = None) -> list[int]:
    """Finish the test if decided, or when every set ``max_games`` allows is done; else schedule
    sets up to ``sets_in_flight`` (or :func:`sets_wanted`, growing, when none was given).
    Returns the ids of the new matches to send (none when the test is over). ``connected(bot_id,
    version)``: no set is scheduled while A or B has no live stream (the sweeper ticks a test
    with nothing in flight again, so it resumes when they are back); sets they played absent do
    not count (:func:`analysis_of`). Once it has waited ``wait_timeout_s``
    (:func:`waiting_since`, up to ``now``) it gives up: ``cancelled``, with the reason.
    """
    with sessions() as session:
        test = session.get(SprtTest, test_id)
        if test is None:
            raise CompetitionError(f"no test {test_id}", "not_found")
        if test.status != SprtStatus.RUNNING:
            return []  # over: the games still running finish without a look at every match
        test_view = analysis_of(sessions, test_id, fold=True)
        games_scheduled = test.next_set * set_size(test)
        result = test_view.analysis.result
        decided = result if result in ("H0", "H1") else None  # the SPRT's verdict, if it has one
        max_sets = test.max_games // set_size(test)
        exhausted = test.next_set >= max_sets and test_view.complete_sets >= test.next_set
        if decided or exhausted or test_view.analysis.games >= test.max_games:
            analysis = test_view.analysis
            if _finish(session, test, decided or "inconclusive", analysis, _verdict(analysis)):
                session.commit()
            return []
        in_flight = test.next_set - test_view.complete_sets
        wanted = (sets_wanted(test.sets_in_flight, test_view.complete_sets) if test.sets_auto
                  else test.sets_in_flight)
        room = max(0, wanted - in_flight)
        room = min(room, max(0, (test.max_games - games_scheduled) // set_size(test)))
        if room == 0:
            return []
        absent = [] if connected is None else absent_contenders(session, test, connected)
        if absent:  # wait for A and B: sets played against an absent bot would say nothing
            if in_flight == 0 and wait_timeout_s is not None:
                waited = ((now or utcnow()) - waiting_since(session, test)).total_seconds()
                if waited >= wait_timeout_s and _finish(
                        session, test, "inconclusive", test_view.analysis,
                        f"gave up after {wait_timeout_s:g} s {waiting_for(absent)}", SprtStatus.CANCELLED):
                    session.commit()
            return []
        first = test.next_set
        table = _table(sessions, test)  # house bots registered (another session) before this one writes
        claimed = session.execute(
            update(SprtTest).where(SprtTest.id == test_id, SprtTest.next_set == first,
                                   SprtTest.status == SprtStatus.RUNNING)
            .values(next_set=first + room).execution_options(synchronize_session=False)
        )
        if claimed.rowcount != 1:  # another tick scheduled these sets first
            session.rollback()
            return []
        seatings = set_tables(table)
        n = len(seatings)
        new: list[Match] = []
        for set_index in range(first, first + room):
            seed = deal_seed(test.seed, set_index, test.deal_key)
            for rotation, seats in enumerate(seatings):
                match = Match(
                    tournament_id=None, test_id=test.id, number=set_index * n + rotation,
                    deal_group=set_index,
                    rotation=rotation, game=test.game, options=test.options, seed=seed, move_ms=test.move_ms,
                    time_bank_ms=test.time_bank_ms, max_faults=test.max_faults,
                    rules_version=rules_version(test.game),
                    suits=deal_suits(test.seed, set_index, rotation, test.deal_key),  # a disguise each
                    # one rotation of a set at a time (services.deals.release_next queues the next)
                    status=MatchStatus.QUEUED if rotation == 0 else MatchStatus.PENDING,
                    queued_at=utcnow() if rotation == 0 else None,
                )
                match.seats = [MatchSeat(seat=s, bot_id=bot, version=version)
                               for s, (bot, version) in enumerate(seats)]
                session.add(match)
                new.append(match)
        session.commit()
        return [m.id for m in new if m.rotation == 0]


def _verdict(analysis: Analysis) -> str:
    """Why a test that ran its course ended, in words."""
    if analysis.result == "H1" and analysis.llr is not None:
        return f"H1 accepted: the LLR {analysis.llr:.2f} reached its upper bound {analysis.upper:.2f}"
    if analysis.result == "H0" and analysis.llr is not None:
        return f"H0 accepted: the LLR {analysis.llr:.2f} reached its lower bound {analysis.lower:.2f}"
    return f"max_games reached: {analysis.games} games counted without a decision"


def _finish(session: Session, test: SprtTest, result: str, analysis: Analysis, reason: str,
            status: str = SprtStatus.FINISHED) -> bool:
    """End ``test`` (``status``: ``finished``, or ``cancelled``) with the statistics that ended it
    and the ``reason`` (kept with them in ``final``). Only a running test ends, and only once:
    two ticks may both have seen it running, and the later one, counting a game more, must not
    replace the verdict already given (the test read 3.07 when it ended, 3.21 a moment later).
    False, and nothing changed, when another ended it first."""
    now = utcnow()
    final = {**analysis.to_dict(), "reason": reason}
    ended = cast(CursorResult[Any], session.execute(  # an UPDATE's result: its rowcount
        update(SprtTest).where(SprtTest.id == test.id, SprtTest.status == SprtStatus.RUNNING)
        .values(status=status, result=result, finished_at=now, final=final)
        .execution_options(synchronize_session=False)
    ))
    if ended.rowcount != 1:
        session.rollback()
        return False
    test.status, test.result, test.finished_at, test.final = status, result, now, final
    session.execute(
        update(Match)
        .where(Match.test_id == test.id, Match.status.in_((MatchStatus.QUEUED, MatchStatus.PENDING)))
        .values(status=MatchStatus.CANCELLED, finished_at=now)
        .execution_options(synchronize_session=False)
    )
    return True


def cancel_test(sessions: sessionmaker, test_id: int, reason: str = "cancelled",
                redis_client: Any = None) -> bool:
    """Stop a running test: its matches not started are cancelled, and its running ones too,
    stopped by their workers within a second (told through ``redis_client``; without it, at
    their next heartbeat); ``reason`` is kept (shown as the test's ``reason``). False when it
    was over."""
    with sessions() as session:
        test = session.get(SprtTest, test_id)
        if test is None:
            raise CompetitionError(f"no test {test_id}", "not_found")
        if test.status != SprtStatus.RUNNING:
            return False
        if not _finish(session, test, "inconclusive", analysis_of(sessions, test_id).analysis, reason,
                       SprtStatus.CANCELLED):
            return False  # it ended meanwhile
        stopped = stop_running(session, Match.test_id == test_id, f"test {test_id} cancelled")
        session.commit()
    tell_workers(redis_client, stopped, f"test {test_id} cancelled")
    return True


@dataclass(frozen=True)
class SprtView:
    analysis: Analysis
    complete_sets: int  # sets whose every game is done
    in_flight: int  # matches not done yet
    absent_sets: int = 0  # complete sets left out: A or B was disconnected or forfeited


def analysis_of(sessions: sessionmaker, test_id: int, fold: bool = False) -> SprtView:
    """The statistics of a test from its finished sets (a set counts once all its games are done;
    a failed or cancelled game leaves its set out).

    Ticks read this after every set, so it reads little: the sets below the test's
    ``counted_sets`` are complete and already added up in ``counted`` (their tally, and how
    many were complete and absent); of the later sets it reads columns, not records (the
    matches' status and ranking and their seats), and a match's action log only when a
    contender's seat was charged a fault there (a seat with no fault was never
    ``disconnected``). With ``fold`` (the tick), the complete sets that follow ``counted_sets``
    without a gap are added to ``counted`` for good, in one conditional update (two ticks at
    once: one of them folds). Reading every match of the test at every tick made a test
    quadratic in its length, and its tick most of a worker's CPU (bench/arena_test.py)."""
    with sessions() as session:
        test = session.get(SprtTest, test_id)
        if test is None:
            raise CompetitionError(f"no test {test_id}", "not_found")
        first = test.counted_sets
        counted = test.counted or {}
        tally = Tally.from_dict(counted["tally"]) if counted else Tally()
        complete, skipped = int(counted.get("complete", 0)), int(counted.get("absent", 0))
        results, in_flight = _later_sets(session, test, first)
        next_uncounted = first
        later: list[_SetResult] = []
        for number in sorted(results):  # the complete sets right after the counted ones: folded
            result = results[number]
            if number == next_uncounted and result.complete:
                complete, skipped = _count(tally, result, complete, skipped)
                next_uncounted += 1
            else:
                later.append(result)
        if fold and next_uncounted > first:
            state = {"tally": tally.to_dict(), "complete": complete, "absent": skipped}
            folded = session.execute(
                update(SprtTest).where(SprtTest.id == test_id, SprtTest.counted_sets == first)
                .values(counted_sets=next_uncounted, counted=state)
                .execution_options(synchronize_session=False))
            if cast(CursorResult[Any], folded).rowcount == 1:
                session.commit()
            else:  # another tick folded them first: it saw the same sets
                session.rollback()
        for result in later:
            if result.complete:
                complete, skipped = _count(tally, result, complete, skipped)
        sprt = Sprt(test.elo0, test.elo1, test.alpha, test.beta)
        return SprtView(tally.analysis(sprt), complete, in_flight, skipped)


@dataclass(frozen=True)
class _SetResult:
    complete: bool  # every game of the set is done
    scores: list[float] | None  # A's pairwise scores; None: a game failed or was cancelled
    absent: bool = False  # A or B was not there: the set says nothing about their strength


def _count(tally: Tally, result: _SetResult, complete: int, skipped: int) -> tuple[int, int]:
    """A complete set added to ``tally`` (unless void or absent): the new complete and absent counts."""
    if result.absent:
        return complete + 1, skipped + 1
    if result.scores is not None:
        tally.add(result.scores)
    return complete + 1, skipped


def _later_sets(session: Session, test: SprtTest, first: int) -> tuple[dict[int, _SetResult], int]:
    """Each set numbered ``first`` or more, and the test's matches not done (all of them there:
    every set below ``first`` is complete)."""
    matches = session.execute(
        select(Match.id, Match.deal_group, Match.status, Match.ranking)
        .where(Match.test_id == test.id, Match.deal_group >= first)
    ).all()
    seats_of: dict[int, list[Any]] = {}
    for seat in session.execute(
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_id, MatchSeat.version,
               MatchSeat.forfeited, MatchSeat.faults)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.test_id == test.id, Match.deal_group >= first)
    ):
        seats_of.setdefault(seat.match_id, []).append(seat)
    size = set_size(test)
    by_set: dict[int, list[Any]] = {}
    for match in matches:
        by_set.setdefault(match.deal_group, []).append(match)
    results: dict[int, _SetResult] = {}
    for number, group in by_set.items():
        if len(group) < size or any(m.status not in MATCH_DONE for m in group):
            results[number] = _SetResult(False, None)
            continue
        if any(m.status != MatchStatus.FINISHED or m.ranking is None for m in group):
            results[number] = _SetResult(True, None)
            continue
        scores = []
        absent = False
        for m in group:
            seats = sorted(seats_of.get(m.id, []), key=lambda s: s.seat)
            a = next(s.seat for s in seats if (s.bot_id, s.version) == (test.bot_a_id, test.version_a))
            b = next(s.seat for s in seats if (s.bot_id, s.version) == (test.bot_b_id, test.version_b))
            absent = absent or _absent(session, m.id, seats, (a, b))
            assert m.ranking is not None  # a set with a game without one is left out above
            scores.append(pairwise_score(m.ranking, a, b))
        results[number] = _SetResult(True, None if absent else scores, absent)
    in_flight = sum(1 for m in matches if m.status not in MATCH_DONE)
    return results, in_flight


def _absent(session: Session, match_id: int, seats: list[Any], contenders: tuple[int, int]) -> bool:
    """Whether a contender's seat was forfeited or faulted ``disconnected`` in the match. Its
    action log is read only when a contender was charged a fault (every fault of a step counts
    in its seat's ``faults``: core.match.playing)."""
    if any(seats[s].forfeited for s in contenders):
        return True
    if not any(seats[s].faults for s in contenders):
        return False
    actions = session.scalar(select(Match.actions).where(Match.id == match_id))
    return any(step.seat in contenders and Fault.DISCONNECTED in step.faults
               for step in (Step.from_json(ply, row) for ply, row in enumerate(actions or [])))


def sprt_summary(sessions: sessionmaker, test_id: int, *, organizer: bool = True,
                 connected: Connected | None = None, wait_timeout_s: float | None = None) -> dict[str, Any]:
    """Everything a person (or the API) wants to see of a test, as plain data. A finished test
    shows the statistics that decided it (read from the test, not recomputed), and why it ended
    (``reason``). Its ``seed`` and ``deal_key`` are for the ``organizer`` until its deals are
    public (services.deals). With ``connected``, a running test whose A or B has no live stream
    says so (``waiting``), since when nothing has been in flight and, with ``wait_timeout_s``,
    when it gives up."""
    with sessions() as session:
        test = session.get(SprtTest, test_id)
        if test is None:
            raise CompetitionError(f"no test {test_id}", "not_found")
        shown = organizer or test_id not in open_tests(session, [test_id])
        view = None if test.final is not None else analysis_of(sessions, test_id)
        names = {bot_id: name for bot_id, _, name in _contenders(session, test)}
        counts = dict(session.execute(
            select(Match.status, func.count()).where(Match.test_id == test_id).group_by(Match.status)
        ).all())

        def label(bot_id: int, version: str) -> str:
            return _label(names.get(bot_id, str(bot_id)), version)

        absent = (absent_contenders(session, test, connected)
                  if connected is not None and test.status == SprtStatus.RUNNING else [])
        idle = bool(absent) and not any(counts.get(s, 0) for s in MatchStatus if s not in MATCH_DONE)
        since = waiting_since(session, test) if idle else None
        final = test.final or {}

        return {
            "id": test.id, "name": test.name, "game": test.game, "players": test.players,
            "options": test.options,
            "a": label(test.bot_a_id, test.version_a), "b": label(test.bot_b_id, test.version_b),
            "field": test.field, "status": test.status,
            "result": test.result,  # None while it runs
            "reason": final.get("reason"),  # why it ended (None while it runs, and for old tests)
            "waiting": waiting_for(absent) if absent else None,
            "waiting_since": since,
            "gives_up_at": (since + timedelta(seconds=wait_timeout_s)
                            if since is not None and wait_timeout_s is not None else None),
            "sprt": {"elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta},
            "max_games": test.max_games, "move_ms": test.move_ms, "max_faults": test.max_faults,
            "sets_in_flight": (sets_wanted(test.sets_in_flight, view.complete_sets)
                               if test.sets_auto and view is not None else test.sets_in_flight),
            "sets_in_flight_auto": test.sets_auto, "matches": counts,
            "seed": test.seed if shown else None, "deal_key": test.deal_key if shown else None,
            "deal_commitment": commitment(test.deal_key),
            "created_by": test.created_by, "created_at": test.created_at, "finished_at": test.finished_at,
            # the statistics that decided it once over (later games never move them), else live
            **{k: v for k, v in (final if view is None else view.analysis.to_dict()).items()
               if k not in ("result", "reason")},
        }
