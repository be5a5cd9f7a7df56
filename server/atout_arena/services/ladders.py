"""Ladders: connected bots are matched all the time, rated by OpenSkill, and the standings always
say who is best now.

A ladder has a game and its rules of play (a :class:`CompetitionSpec`), a target number of
matches in flight, and who may join: any registered bot (``open``) or the bots it was created
with. A member plays whenever it has a live stream; it leaves the pool when it disconnects,
returns when it reconnects, and a disabled bot leaves it at once.

The work is one function, :func:`tick`, run by the ``atout.ladder_tick`` task (see
:mod:`atout_workers.tasks` for when it runs). A tick:

1. rates the sets whose games are all done (:func:`atout_arena.services.matchmaking.rate`, once
   per set: the set's status turns ``rated`` in the same transaction as the ratings), or voids
   them (a game cancelled or failed, a seat forfeited or played disconnected);
2. cancels the games of sets with a member that is now disconnected or disabled, the queued
   ones and the running ones (their workers told to stop them: ``TickReport.stopped``): those
   sets are void, their bots seated no more;
3. while running, fills the ladder up to ``target_in_flight`` matches with new duplicate sets,
   each table chosen by :func:`atout_arena.services.matchmaking.choose_table` among the
   connected members, and returns the new matches' ids for the caller to send.

Ticks are safe to run at once: a set number is claimed by a conditional update of ``next_set``
and a set is rated by a conditional update of its status.
"""

from __future__ import annotations

import math
import random
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, defer, selectinload, sessionmaker

from atout_arena.core.match import Step, rules_version
from atout_arena.core.models import Bot, Ladder, LadderMember, LadderSet, Match, MatchSeat, utcnow
from atout_arena.core.ratings import RatedSeat, rated_result
from atout_arena.core.schedule import deal_seed, deal_suits
from atout_arena.core.vocabulary import MATCH_DONE, Fault, LadderStatus, MatchStatus
from atout_arena.services.bots import HOUSE_PREFIX, is_house
from atout_arena.services.competitions import CompetitionError, CompetitionSpec, entrants, stop_running
from atout_arena.services.matchmaking import (
    Candidate,
    ordinal,
    plan,
    prior,
    provisional,
    rate,
    set_ranks,
)
from atout_arena.services.sprt import set_size_of, set_tables

MAX_TARGET_IN_FLIGHT = 256
SET_RUNNING, SET_RATED, SET_VOID = "running", "rated", "void"
LEFT = "a player left the ladder"  # the error of a running game stopped when one of its bots left

ConnectedBots = Callable[[], Iterable[int | str]]  # the ids of the bots with a live stream


def create_ladder(sessions: sessionmaker, *, name: str, spec: CompetitionSpec,
                  bots: Sequence[str | int] | None = None, target_in_flight: int = 4,
                  seed: int | None = None) -> int:
    """Store a running ladder; returns its id (send ``atout.ladder_tick`` to start it).

    ``bots``: its members (registered bots, and house bots of its game by name, always there);
    None: any registered bot that connects joins (never a house bot). Raises :class:`CompetitionError`."""
    name = (name or "").strip()
    if not name or len(name) > 128 or not name.isprintable():
        raise CompetitionError("a ladder's name is 1 to 128 printable characters")
    if not 1 <= target_in_flight <= MAX_TARGET_IN_FLIGHT:
        raise CompetitionError(f"target_in_flight={target_in_flight}: 1 to {MAX_TARGET_IN_FLIGHT} matches")
    with sessions() as session:
        if session.scalar(select(Ladder.id).where(Ladder.name == name)) is not None:
            raise CompetitionError(f"a ladder named {name!r} exists", "conflict")
        members = [] if bots is None else entrants(session, bots, game=spec.game)  # house bots too
        if bots is not None and len(members) < spec.players:
            raise CompetitionError(
                f"a ladder of {spec.players}-player tables needs at least {spec.players} bots")
        ladder = Ladder(name=name, **spec.columns(), open=bots is None, target_in_flight=target_in_flight,
                        seed=secrets.randbits(62) if seed is None else seed, status=LadderStatus.RUNNING)
        session.add(ladder)
        session.flush()
        mu, sigma = prior()
        for bot in members:
            session.add(LadderMember(ladder_id=ladder.id, bot_id=bot.id, mu=mu, sigma=sigma))
        try:
            session.commit()
        except IntegrityError:  # the same name, created at the same moment
            raise CompetitionError(f"a ladder named {name!r} exists", "conflict") from None
        return ladder.id


def set_status(sessions: sessionmaker, ladder_id: int, status: LadderStatus) -> bool:
    """Pause or resume a ladder; False when it already was. A paused ladder seats nobody: the
    sets in flight finish and are rated."""
    with sessions() as session:
        ladder = _ladder(session, ladder_id)
        if ladder.status == status:
            return False
        ladder.status = status
        session.commit()
        return True


def _ladder(session: Session, ladder_id: int) -> Ladder:
    ladder = session.get(Ladder, ladder_id)
    if ladder is None:
        raise CompetitionError(f"no ladder {ladder_id}", "not_found")
    return ladder


def ladders_of(sessions: sessionmaker, bot_id: int) -> list[int]:
    """The running ladders ``bot_id`` is a member of."""
    with sessions() as session:
        return list(session.scalars(
            select(Ladder.id).join(LadderMember, LadderMember.ladder_id == Ladder.id)
            .where(LadderMember.bot_id == bot_id, Ladder.status == LadderStatus.RUNNING)))


def running_ladders(sessions: sessionmaker) -> list[int]:
    with sessions() as session:
        return list(session.scalars(select(Ladder.id).where(Ladder.status == LadderStatus.RUNNING)))


def _rates_every_seat(match: Match, disabled: set[int]) -> bool:
    """The rating rule (:func:`~atout_arena.core.ratings.rated_result`, ``disabled``: the bots
    disabled by now) keeps every seat of a finished game: a duplicate set rates all its seats or
    none, so a game with an absent or disabled bot's seat voids its set."""
    seats = sorted(match.seats, key=lambda s: s.seat)
    ranking = list(match.ranking or [])
    kept = rated_result([RatedSeat(s.bot_id, ranking[s.seat] if s.seat < len(ranking) else None,
                                   absent=s.absent, disabled=s.bot_id in disabled) for s in seats])
    return kept is not None and len(kept[0]) == len(seats)


def _absent(match: Match) -> bool:
    """A seat forfeited, or played (in part) disconnected: the set says nothing about strength.
    The action log (deferred) is read only when a seat was charged a fault: every fault of a
    step counts in its seat's ``faults`` (core.match.playing), so a game without one had no
    disconnection (reading every game's log was half the tick's CPU: bench/ladder.py --live)."""
    if any(seat.forfeited for seat in match.seats):
        return True
    if not any(seat.faults for seat in match.seats):
        return False
    return any(Fault.DISCONNECTED in step.faults
               for step in (Step.from_json(ply, row) for ply, row in enumerate(match.actions or [])))


def _settle(session: Session, ladder: Ladder, sets: list[LadderSet]) -> int:
    """Rate (or void) the running sets whose games are all done; returns how many were rated."""
    if not sets:
        return 0
    matches = session.scalars(
        select(Match).where(Match.ladder_id == ladder.id, Match.deal_group.in_([s.number for s in sets]))
        .options(selectinload(Match.seats), defer(Match.actions))
    ).all()
    by_set: dict[int, list[Match]] = {}
    for match in matches:
        by_set.setdefault(match.deal_group, []).append(match)
    size = set_size_of(ladder.players)
    rated = 0
    for ladder_set in sets:
        group = sorted(by_set.get(ladder_set.number, []), key=lambda m: m.rotation)
        if len(group) == size and any(m.status not in MATCH_DONE for m in group):
            continue
        disabled = set(session.scalars(select(Bot.id).where(Bot.id.in_(ladder_set.bots), Bot.disabled)))
        void = len(group) < size or any(
            m.status != MatchStatus.FINISHED or m.ranking is None or _absent(m)
            or not _rates_every_seat(m, disabled) for m in group)
        bots: list[int] = list(ladder_set.bots)
        claimed = cast(CursorResult[Any], session.execute(  # an UPDATE's result: its rowcount
            update(LadderSet).where(LadderSet.id == ladder_set.id, LadderSet.status == SET_RUNNING)
            .values(status=SET_VOID if void else SET_RATED, rated_at=utcnow())
            .execution_options(synchronize_session=False)))
        if claimed.rowcount != 1 or void:
            continue
        seats_of = [[next(s.seat for s in m.seats if s.bot_id == bot) for bot in bots] for m in group]
        # every game has its ranking: a set with one without is void
        ranks = set_ranks([m.ranking for m in group if m.ranking is not None], seats_of)
        # Read after the claim, locked (PostgreSQL; SQLite holds its write lock already): two
        # ticks rating sets of one bot at once apply both updates, neither from a stale rating.
        members = {m.bot_id: m for m in session.scalars(
            select(LadderMember).where(LadderMember.ladder_id == ladder.id, LadderMember.bot_id.in_(bots))
            .with_for_update().execution_options(populate_existing=True))}
        if any(bot not in members for bot in bots):
            continue
        rows = [members[bot] for bot in bots]
        after = rate([(row.mu, row.sigma) for row in rows], ranks)
        for row, (mu, sigma) in zip(rows, after, strict=True):
            row.mu, row.sigma = mu, sigma
            row.games += size
            row.sets += 1
        session.execute(update(LadderSet).where(LadderSet.id == ladder_set.id)
                        .values(ranks=ranks, ratings=[[round(mu, 6), round(sigma, 6)] for mu, sigma in after])
                        .execution_options(synchronize_session=False))
        rated += 1
    return rated


@dataclass
class TickReport:
    rated: int = 0
    cancelled: int = 0  # queued games of sets with an absent or disabled member
    scheduled: list[int] | None = None  # the new matches' ids (every rotation of the new sets)
    running: bool = False  # the ladder is running (its periodic ticks go on)
    queued: list[int] | None = None  # those to send to the workers now: each new set's rotation 0
    stopped: list[int] | None = None  # running games cancelled (a member left): their workers to tell

    @property
    def match_ids(self) -> list[int]:
        return self.scheduled or []

    @property
    def to_send(self) -> list[int]:
        return self.queued or []


def _join(session: Session, ladder: Ladder, connected: set[int], members: dict[int, LadderMember]) -> None:
    """An open ladder takes in every registered bot that connects (never a house bot)."""
    new = [i for i in connected if i not in members]
    if not ladder.open or not new:
        return
    bots = session.scalars(select(Bot).where(Bot.id.in_(new), Bot.disabled.is_(False))).all()
    mu, sigma = prior()
    baseline = (sum(m.games + m.baseline for m in members.values()) / len(members)) if members else 0.0
    for bot in bots:
        if is_house(bot.name):
            continue
        member = LadderMember(ladder_id=ladder.id, bot_id=bot.id, mu=mu, sigma=sigma, baseline=baseline)
        session.add(member)
        members[bot.id] = member


def tick(sessions: sessionmaker, ladder_id: int, connected_bots: ConnectedBots) -> TickReport:
    """One matchmaking step of a ladder (see the module): returns what it did, with the ids of
    the new matches to send."""
    report = TickReport()
    with sessions() as session:
        ladder = _ladder(session, ladder_id)
        running = list(session.scalars(select(LadderSet).where(
            LadderSet.ladder_id == ladder_id, LadderSet.status == SET_RUNNING)))
        report.rated = _settle(session, ladder, running)
        session.commit()
        live = {int(b) for b in connected_bots() if str(b).isdigit()}
        members = {m.bot_id: m for m in session.scalars(
            select(LadderMember).where(LadderMember.ladder_id == ladder_id))}
        if ladder.status == LadderStatus.RUNNING:
            _join(session, ladder, live, members)
            try:
                session.commit()
            except IntegrityError:  # another tick took the same newcomer in first
                session.rollback()
                members = {m.bot_id: m for m in session.scalars(
                    select(LadderMember).where(LadderMember.ladder_id == ladder_id))}
        disabled = set(session.scalars(
            select(Bot.id).where(Bot.id.in_(list(members)), Bot.disabled.is_(True))))
        live |= set(session.scalars(select(Bot.id).where(  # house bots are always there
            Bot.id.in_(list(members)), Bot.name.startswith(HOUSE_PREFIX))))
        pool = {bot for bot in members if bot in live and bot not in disabled}
        # Sets still open, and queued games of a set with a member no longer in the pool.
        open_sets = [s for s in session.scalars(select(LadderSet).where(
            LadderSet.ladder_id == ladder_id, LadderSet.status == SET_RUNNING))]
        gone = [s.number for s in open_sets if any(bot not in pool for bot in s.bots)]
        if gone:
            result = session.execute(
                update(Match).where(Match.ladder_id == ladder_id, Match.deal_group.in_(gone),
                                    Match.status.in_((MatchStatus.QUEUED, MatchStatus.PENDING)))
                .values(status=MatchStatus.CANCELLED, finished_at=utcnow())
                .execution_options(synchronize_session=False))
            report.cancelled = result.rowcount or 0
            # and their running games: void whatever they do, stopped now (docs/ladders.md)
            report.stopped = stop_running(
                session, (Match.ladder_id == ladder_id) & Match.deal_group.in_(gone), LEFT)
            session.commit()
        if ladder.status != LadderStatus.RUNNING:
            return report
        report.running = True
        new = _schedule(session, ladder, members, pool, open_sets, set(gone))
        report.scheduled = [m.id for m in new]
        report.queued = [m.id for m in new if m.status == MatchStatus.QUEUED]
        return report


MEETINGS_LOOKBACK = 1000  # sets read back for when two members last met (older: long ago)


def _recent_meetings(session: Session, ladder_id: int) -> tuple[dict[tuple[int, int], int], dict[int, int]]:
    """The number of the last set each pair of members shared (void sets left out: they
    compared nobody), and the last set each member was seated in."""
    met: dict[tuple[int, int], int] = {}
    last: dict[int, int] = {}
    for number, bots, set_status in session.execute(
            select(LadderSet.number, LadderSet.bots, LadderSet.status).where(LadderSet.ladder_id == ladder_id)
            .order_by(LadderSet.number.desc()).limit(MEETINGS_LOOKBACK)):
        for i, a in enumerate(bots):
            last.setdefault(a, number)
            if set_status != SET_VOID:
                for b in bots[i + 1:]:
                    met.setdefault((min(a, b), max(a, b)), number)
    return met, last


def _schedule(session: Session, ladder: Ladder, members: dict[int, LadderMember], pool: set[int],
              open_sets: list[LadderSet], gone: set[int]) -> list[Match]:
    size = set_size_of(ladder.players)
    in_flight = session.scalar(select(func.count()).select_from(Match).where(
        Match.ladder_id == ladder.id, Match.status.not_in(MATCH_DONE))) or 0
    room = (max(ladder.target_in_flight, size) - in_flight) // size
    if room <= 0 or len(pool) < ladder.players:
        return []
    busy: dict[int, int] = {}
    for s in open_sets:
        if s.number in gone:
            continue
        for bot in s.bots:
            busy[bot] = busy.get(bot, 0) + 1
    target_sets = max(1, ladder.target_in_flight // size)
    max_busy = math.ceil(target_sets * ladder.players / len(pool)) + 1
    first = ladder.next_set
    met, last = _recent_meetings(session, ladder.id)
    pool_now = [Candidate(bot, members[bot].mu, members[bot].sigma,
                          members[bot].games + members[bot].baseline + busy.get(bot, 0) * size,
                          busy.get(bot, 0), last.get(bot, -1)) for bot in sorted(pool)]
    chosen = plan(pool_now, ladder.players, size, room=room, max_busy=max_busy, first=first, met=met,
                  rng=random.Random(deal_seed(ladder.seed, first)))
    tables = chosen.tables
    for bot, extra in chosen.raised.items():  # late, or back: it starts from the mean load
        members[bot].baseline += extra
    if not tables:
        return []
    claimed = cast(CursorResult[Any], session.execute(  # an UPDATE's result: its rowcount
        update(Ladder).where(Ladder.id == ladder.id, Ladder.next_set == first,
                             Ladder.status == LadderStatus.RUNNING)
        .values(next_set=first + len(tables)).execution_options(synchronize_session=False)))
    if claimed.rowcount != 1:  # another tick took these set numbers first
        session.rollback()
        return []
    new: list[Match] = []
    version = rules_version(ladder.game)
    for offset, table in enumerate(tables):
        number = first + offset
        session.add(LadderSet(ladder_id=ladder.id, number=number, bots=list(table)))
        seed = deal_seed(ladder.seed, number)
        # One rotation at a time (the next one released when it is done: services.deals), each
        # under its own suit permutation, as in duplicate tournaments: no bot sees two rotations
        # of a deal at once, nor recognises a deal it already played.
        for rotation, seats in enumerate(set_tables([(bot, "") for bot in table])):
            match = Match(
                tournament_id=None, ladder_id=ladder.id, number=number * size + rotation,
                deal_group=number, rotation=rotation, game=ladder.game, options=ladder.options, seed=seed,
                suits=deal_suits(ladder.seed, number, rotation),
                move_ms=ladder.move_ms, time_bank_ms=ladder.time_bank_ms, max_faults=ladder.max_faults,
                rules_version=version,
                status=MatchStatus.QUEUED if rotation == 0 else MatchStatus.PENDING,
                queued_at=utcnow() if rotation == 0 else None)
            match.seats = [MatchSeat(seat=s, bot_id=bot, version=v) for s, (bot, v) in enumerate(seats)]
            session.add(match)
            new.append(match)
    session.commit()
    return new


def ladder_of(sessions: sessionmaker, match_id: int) -> int | None:
    """The ladder a match belongs to, if any (the task that stored it ticks that ladder)."""
    with sessions() as session:
        return session.scalar(select(Match.ladder_id).where(Match.id == match_id))


def standings(session: Session, ladder_id: int, live: set[int] | None = None) -> list[dict[str, Any]]:
    """The members by ordinal (mu - 3 sigma), best first: the established ones, then the
    provisional ones (:func:`atout_arena.services.matchmaking.provisional`)."""
    rows = session.execute(
        select(LadderMember, Bot.name, Bot.disabled).join(Bot, Bot.id == LadderMember.bot_id)
        .where(LadderMember.ladder_id == ladder_id)).all()
    seated: dict[int, int] = {}
    for bots in session.scalars(select(LadderSet.bots).where(
            LadderSet.ladder_id == ladder_id, LadderSet.status == SET_RUNNING)):
        for bot in bots:
            seated[bot] = seated.get(bot, 0) + 1
    table: list[dict[str, Any]] = [{
        "bot": name, "bot_id": m.bot_id, "mu": round(m.mu, 4), "sigma": round(m.sigma, 4),
        "ordinal": round(ordinal(m.mu, m.sigma), 4), "games": m.games, "sets": m.sets,
        "sets_in_flight": seated.get(m.bot_id, 0), "disabled": bool(disabled),
        "connected": None if live is None else m.bot_id in live, "joined_at": m.joined_at,
        "provisional": provisional(m.sets, m.sigma),
    } for m, name, disabled in rows]
    # The established members first, then the provisional ones (too few sets, or too wide a
    # sigma), each group by ordinal: a bot that has hardly played is never ranked above one
    # that has proved itself.
    table.sort(key=lambda r: (r["provisional"], -r["ordinal"], r["bot"]))
    for rank, row in enumerate(table, 1):
        row["rank"] = rank
    return table


def history(sessions: sessionmaker, ladder_id: int, bot: str | None = None) -> list[dict[str, Any]]:
    """Each member's rating after each of its rated sets, oldest first (``bot``: that member
    only): ``[{"bot", "bot_id", "points": [{"set", "rated_at", "mu", "sigma", "ordinal"}]}]``.
    Raises :class:`CompetitionError` for an unknown ladder, or a bot not a member of it."""
    with sessions() as session:
        _ladder(session, ladder_id)
        names = dict(session.execute(
            select(Bot.id, Bot.name).join(LadderMember, LadderMember.bot_id == Bot.id)
            .where(LadderMember.ladder_id == ladder_id)).all())
        if bot is not None:
            names = {i: name for i, name in names.items() if name == bot or str(i) == bot}
            if not names:
                raise CompetitionError(f"{bot!r} is no member of ladder {ladder_id}", "not_found")
        points: dict[int, list[dict[str, Any]]] = {i: [] for i in names}
        for number, bots, ratings, rated_at in session.execute(
                select(LadderSet.number, LadderSet.bots, LadderSet.ratings, LadderSet.rated_at)
                .where(LadderSet.ladder_id == ladder_id, LadderSet.status == SET_RATED)
                .order_by(LadderSet.rated_at, LadderSet.number)):
            for member, (mu, sigma) in zip(bots, ratings or [], strict=False):  # none: rated before 0011
                if member in points:
                    points[member].append({"set": number, "rated_at": rated_at, "mu": mu, "sigma": sigma,
                                           "ordinal": round(ordinal(mu, sigma), 4)})
    return [{"bot": names[i], "bot_id": i, "points": points[i]} for i in sorted(names, key=names.__getitem__)]


def ladder_summary(sessions: sessionmaker, ladder_id: int, live: set[int] | None = None) -> dict[str, Any]:
    """A ladder as plain data: its rules, its standings, and its matches in flight."""
    with sessions() as session:
        ladder = _ladder(session, ladder_id)
        counts = dict(session.execute(select(Match.status, func.count()).where(Match.ladder_id == ladder_id)
                                      .group_by(Match.status)).all())
        sets = dict(session.execute(
            select(LadderSet.status, func.count()).where(LadderSet.ladder_id == ladder_id)
            .group_by(LadderSet.status)).all())
        flying = session.scalars(
            select(Match).where(Match.ladder_id == ladder_id, Match.status.not_in(MATCH_DONE))
            .options(selectinload(Match.seats)).order_by(Match.id).limit(100)).all()
        names = dict(session.execute(select(Bot.id, Bot.name).where(
            Bot.id.in_({s.bot_id for m in flying for s in m.seats}))).all())
        return {
            "id": ladder.id, "name": ladder.name, "game": ladder.game, "players": ladder.players,
            "options": ladder.options, "move_ms": ladder.move_ms, "time_bank_ms": ladder.time_bank_ms,
            "max_faults": ladder.max_faults, "open": ladder.open, "target_in_flight": ladder.target_in_flight,
            "status": ladder.status, "created_at": ladder.created_at,
            "matches": counts, "sets": sets,
            "in_flight": [{"id": m.id, "status": m.status, "set": m.deal_group,
                           "bots": [names.get(s.bot_id, str(s.bot_id)) for s in m.seats]} for m in flying],
            "standings": standings(session, ladder_id, live),
        }


class LadderCollector(Collector):
    """The ladders' Prometheus metrics, read from the database at scrape time (served by the
    API's ``/metrics`` beside :class:`atout_arena.core.metrics.ArenaCollector`):
    ``atout_ladder_matches_total`` (matches played to the end; its ``rate()`` is the ladder's
    matches per second), ``atout_ladder_matches_in_flight``, and each member's
    ``atout_ladder_mu`` and ``atout_ladder_sigma``. Labels: the ladder's and the bot's names."""

    def __init__(self, sessions: sessionmaker) -> None:
        self.sessions = sessions

    def describe(self) -> Iterator[Metric]:
        return iter(())

    def collect(self) -> Iterator[Metric]:
        played = CounterMetricFamily("atout_ladder_matches", "Ladder matches played to the end, by ladder.",
                                     labels=("ladder",))
        flying = GaugeMetricFamily("atout_ladder_matches_in_flight",
                                   "Ladder matches queued or running, by ladder.", labels=("ladder",))
        mu = GaugeMetricFamily("atout_ladder_mu", "A ladder member's OpenSkill mean.",
                               labels=("ladder", "bot"))
        sigma = GaugeMetricFamily("atout_ladder_sigma", "A ladder member's OpenSkill uncertainty.",
                                  labels=("ladder", "bot"))
        with self.sessions() as session:
            names = dict(session.execute(select(Ladder.id, Ladder.name)).all())
            counts = session.execute(select(Match.ladder_id, Match.status, func.count())
                                     .where(Match.ladder_id.is_not(None))
                                     .group_by(Match.ladder_id, Match.status)).all()
            members = session.execute(
                select(LadderMember.ladder_id, Bot.name, LadderMember.mu, LadderMember.sigma)
                .join(Bot, Bot.id == LadderMember.bot_id)).all()
        done: dict[int, int] = dict.fromkeys(names, 0)
        open_: dict[int, int] = dict.fromkeys(names, 0)
        for ladder_id, match_status, count in counts:
            if match_status == MatchStatus.FINISHED:
                done[ladder_id] = done.get(ladder_id, 0) + count
            elif match_status not in MATCH_DONE:
                open_[ladder_id] = open_.get(ladder_id, 0) + count
        for ladder_id, name in sorted(names.items()):
            played.add_metric([name], float(done.get(ladder_id, 0)))
            flying.add_metric([name], float(open_.get(ladder_id, 0)))
        for ladder_id, bot, m, s in sorted(members):
            mu.add_metric([names.get(ladder_id, str(ladder_id)), bot], float(m))
            sigma.add_metric([names.get(ladder_id, str(ladder_id)), bot], float(s))
        yield from (played, flying, mu, sigma)
