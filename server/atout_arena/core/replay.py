"""Replays: re-run a stored match from its seed and action log.

:func:`replay_match` checks that the log reproduces the stored result: every action by the
seat the engine says is to act, legal, a fallback equal to the first legal action, the faults
and the stored absent seats (bots that never came: forfeited from the start, every decision a
fallback, the first one charged ``absent``) adding up to the stored forfeits, and the final
scores and ranking (forfeits applied) equal to the stored ones. It reports the first divergence.

A match played under another version of its game's rules (``Game.RULES_VERSION``, stored with
the match) is not replayed at all: :func:`check_rules_version` raises
:class:`RulesVersionMismatch`, which says so, instead of a false divergence. The exception is a
version whose games the engine still plays action for action (``Game.replays``: a later version
changed only the ranking): such a match replays, ranked as its own version ranked it.

:func:`verify_matches` checks every finished match of a database so (``atout-arena verify``).

:func:`replay_views` gives the match step by step as one seat saw it, or as a spectator
(``seat=None``: the public view, no hidden card), for the REST API and the dashboard.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from atout.games import GAMES, IllegalAction, State, new_game
from atout_arena.core.match import Step, fallback_action, ranking_with_forfeits, rules_version
from atout_arena.core.models import Match, MatchSeat
from atout_arena.core.views import StepViews
from atout_arena.core.vocabulary import Fault, MatchStatus, PlayedBy


@dataclass(frozen=True)
class MatchRecord:
    """A stored match, detached from the database."""

    id: int
    game: str
    options: dict[str, Any]
    seed: int
    players: int
    max_faults: int
    status: str
    actions: list[list[Any]]
    scores: list[int] | None
    ranking: list[int] | None
    forfeited: list[bool] = field(default_factory=list)
    absent: list[bool] = field(default_factory=list)  # per seat: its bot never came (stored)
    seat_names: list[str] = field(default_factory=list)
    rules_version: int = 1
    suits: str | None = None  # the suit permutation of its deal (duplicate rotations)

    @classmethod
    def of(cls, match: Match) -> MatchRecord:
        seats = sorted(match.seats, key=lambda s: s.seat)
        return cls(
            id=match.id, game=match.game, options=dict(match.options or {}), seed=int(match.seed),
            players=len(seats), max_faults=match.max_faults, status=match.status,
            actions=list(match.actions or []), scores=match.scores, ranking=match.ranking,
            forfeited=[bool(s.forfeited) for s in seats], absent=[bool(s.absent) for s in seats],
            seat_names=[s.bot.name if s.bot is not None else str(s.bot_id) for s in seats],
            rules_version=int(match.rules_version), suits=match.suits,
        )

    def steps(self) -> list[Step]:
        return [Step.from_json(ply, row) for ply, row in enumerate(self.actions)]

    def new_state(self) -> State:
        return new_game(self.game, players=self.players, **self.options).new_state(
            seed=self.seed, suit_permutation=self.suits)


class RulesVersionMismatch(ValueError):  # noqa: N818 - a refusal, said in its message
    """The match was played under other rules than this engine's: it cannot be replayed here."""


def check_rules_version(record: MatchRecord) -> None:
    """Raise :class:`RulesVersionMismatch` unless ``record`` was played under rules this engine
    replays (its own, or an earlier version it plays action for action: ``Game.replays``)."""
    current = rules_version(record.game)
    if not GAMES[record.game].replays(record.rules_version):
        raise RulesVersionMismatch(
            f"match {record.id} was played under version {record.rules_version} of the {record.game} "
            f"rules; this arena's engine implements version {current}, so it cannot be replayed "
            f"here (its stored result stands; replay it with an arena of version {record.rules_version})"
        )


def load_match(sessions: sessionmaker[Session], match_id: int) -> MatchRecord | None:
    with sessions() as session:
        match = session.get(Match, match_id, options=[selectinload(Match.seats)])
        if match is None:
            return None
        for seat in match.seats:
            _ = seat.bot  # loaded before the session closes
        return MatchRecord.of(match)


@dataclass
class ReplayReport:
    match_id: int
    ok: bool
    plies: int
    scores: list[int] | None = None
    ranking: list[int] | None = None
    divergence: str | None = None

    def summary(self) -> str:
        if self.ok:
            return (f"match {self.match_id}: {self.plies} actions replayed; scores {self.scores}, "
                    f"ranking {self.ranking}: as stored")
        return f"match {self.match_id}: DIVERGES: {self.divergence}"


def replay_match(record: MatchRecord) -> ReplayReport:
    """Re-run ``record`` and compare with what was stored (see the module docstring). Raises
    :class:`RulesVersionMismatch` for a match of other rules."""
    check_rules_version(record)
    if record.status != MatchStatus.FINISHED or record.scores is None or record.ranking is None:
        return ReplayReport(record.id, False, 0,
                            divergence=f"the match is {record.status}: there is no result to reproduce")
    try:
        state = record.new_state()
    except ValueError as exc:
        return ReplayReport(record.id, False, 0, divergence=f"cannot set the game up: {exc}")
    faults = [0] * record.players
    for step in record.steps():
        where = f"action {step.ply} ({step.seat} {step.action!r}, by {step.by})"
        if state.is_terminal:
            return ReplayReport(record.id, False, step.ply, divergence=f"{where}: the game was already over")
        if step.seat != state.current_player:
            return ReplayReport(record.id, False, step.ply,
                                divergence=f"{where}: the engine has seat {state.current_player} to act")
        legal = state.legal_actions()
        if step.by == PlayedBy.FALLBACK and step.action != fallback_action(legal):
            return ReplayReport(record.id, False, step.ply, divergence=(
                f"{where}: a fallback must be the first legal action {fallback_action(legal)!r}"))
        try:
            state.apply(step.action)
        except IllegalAction as exc:
            return ReplayReport(record.id, False, step.ply, divergence=f"{where}: {exc}")
        faults[step.seat] += len(step.faults)
    plies = len(record.actions)
    if not state.is_terminal:
        return ReplayReport(record.id, False, plies,
                            divergence=f"the log ends after {plies} actions but the game is not over")
    # a seat forfeits by its faults, or from the start when its bot was absent (its one fault,
    # `absent`, at its first decision: match.playing forfeits it whatever max_faults is)
    absent, wrong = _absent_seats(record)
    if wrong is not None:
        return ReplayReport(record.id, False, plies, divergence=wrong)
    forfeited = [seat in absent or (bool(record.max_faults) and f >= record.max_faults)
                 for seat, f in enumerate(faults)]
    if record.forfeited and forfeited != record.forfeited:
        return ReplayReport(record.id, False, plies, divergence=(
            f"faults {faults} (max {record.max_faults}) give forfeits {forfeited}, "
            f"stored {record.forfeited}"))
    scores = list(state.scores)
    engine_ranking = GAMES[record.game].ranking_under(record.rules_version, state)
    ranking = ranking_with_forfeits(scores, engine_ranking, forfeited)
    if scores != list(record.scores):
        return ReplayReport(record.id, False, plies, scores, ranking,
                            divergence=f"final scores {scores}, stored {record.scores}")
    if ranking != list(record.ranking):
        return ReplayReport(record.id, False, plies, scores, ranking,
                            divergence=f"final ranking {ranking}, stored {record.ranking}")
    return ReplayReport(record.id, True, plies, scores, ranking)


def _absent_seats(record: MatchRecord) -> tuple[set[int], str | None]:
    """The seats whose bots were absent, as stored (``record.absent``; a record without it: as
    the log says), and the first way the log disagrees with that, if any: an absent seat's
    decisions are all fallbacks, its first one charged the one fault ``absent``; no other seat
    is ever charged ``absent``."""
    steps = record.steps()
    logged = {step.seat for step in steps if Fault.ABSENT in step.faults}
    if not record.absent:
        return logged, None
    stored = {seat for seat, gone in enumerate(record.absent) if gone}
    first: dict[int, Step] = {}
    for step in steps:
        first.setdefault(step.seat, step)
        if step.seat in stored and step.by != PlayedBy.FALLBACK:
            return stored, (f"action {step.ply}: seat {step.seat} is stored absent, "
                            f"but its bot played {step.action!r}")
        if Fault.ABSENT in step.faults and (step.seat not in stored or first[step.seat] is not step):
            where = "not stored absent" if step.seat not in stored else "charged it after its first decision"
            return stored, f"action {step.ply}: seat {step.seat} charged the fault absent, {where}"
    for seat in sorted(stored):
        if seat in first and list(first[seat].faults) != [Fault.ABSENT]:
            return stored, (f"action {first[seat].ply}: seat {seat} is stored absent, but its first "
                            f"decision was charged {list(first[seat].faults)}, not the one fault absent")
    return stored, None


@dataclass
class Verification:
    """Every finished match of a database checked by replay (:func:`verify_matches`)."""

    ok: int = 0
    diverged: list[ReplayReport] = field(default_factory=list)
    other_rules: list[int] = field(default_factory=list)  # ids of matches this engine cannot replay

    @property
    def checked(self) -> int:
        return self.ok + len(self.diverged)

    def summary(self) -> str:
        line = (f"{self.checked + len(self.other_rules)} finished matches verified by replay: "
                f"{self.ok} ok, {len(self.diverged)} diverge")
        if self.other_rules:
            line += (f", {len(self.other_rules)} played under rules this engine does not replay "
                     f"(first: match {self.other_rules[0]}; their stored results stand)")
        return line


VERIFY_BATCH = 200  # matches loaded at once


def verify_matches(sessions: sessionmaker[Session], on_report: Callable[[ReplayReport], None] | None = None,
                   batch: int = VERIFY_BATCH) -> Verification:
    """Replay every finished match of the database (:func:`replay_match`), in id order, a batch
    at a time; ``on_report`` sees each report as it comes."""
    found = Verification()
    after = 0
    while True:
        with sessions() as session:
            query = (select(Match).where(Match.status == MatchStatus.FINISHED, Match.id > after)
                     .order_by(Match.id).limit(batch)
                     .options(selectinload(Match.seats).selectinload(MatchSeat.bot)))
            records = [MatchRecord.of(match) for match in session.scalars(query)]
        if not records:
            return found
        for record in records:
            try:
                report = replay_match(record)
            except RulesVersionMismatch:
                found.other_rules.append(record.id)
                continue
            if report.ok:
                found.ok += 1
            else:
                found.diverged.append(report)
            if on_report is not None:
                on_report(report)
        after = records[-1].id


def iter_views(record: MatchRecord, seat: int | None, notes: Container[int] = ()) -> Iterator[dict[str, Any]]:
    """The events of :func:`replay_views`, one at a time (:class:`RulesVersionMismatch` for a
    match of other rules). A step of a seat in ``notes`` carries its bot's ``note``, if any (the
    caller decides whose notes the viewer may read: :func:`note_seats`)."""
    check_rules_version(record)
    if seat is not None and not (isinstance(seat, int) and 0 <= seat < record.players):
        raise ValueError(f"seat {seat!r} is not a seat of match {record.id} (0..{record.players - 1})")
    state = record.new_state()
    views = StepViews(state)

    def pick(events: tuple[dict[str, Any], Sequence[dict[str, Any]]]) -> dict[str, Any]:
        public, seats = events
        return public if seat is None else seats[seat]

    yield pick(views.events({"type": "start", "match_id": record.id, "game": record.game,
                             "options": record.options, "seats": record.seat_names}))
    for step in record.steps():
        state.apply(step.action)
        base = {"type": "step", "match_id": record.id, "ply": step.ply, "seat": step.seat,
                "by": step.by, "think_ms": step.think_ms, "faults": list(step.faults)}
        if step.note and step.seat in notes:
            base["note"] = step.note
        yield pick(views.events(base, step.action))


def note_seats(players: int, seat_bots: Sequence[int], *, viewer_bot: int | None, organizer: bool,
               ended: bool) -> set[int]:
    """The seats whose bots' notes a viewer may read: every seat for the organizer and, once the
    match's competition has ended (``ended``: its seeds are published), for everyone; before,
    a bot's token reads the notes of its own seats only (``seat_bots``: the bot id of each seat)."""
    if organizer or ended:
        return set(range(players))
    if viewer_bot is None:
        return set()
    return {seat for seat, bot in enumerate(seat_bots) if bot == viewer_bot}


def replay_views(match: MatchRecord | Match, seat: int | None) -> list[dict[str, Any]]:
    """Every step of ``match`` as ``seat`` saw it (``None``: as a spectator, public view only).

    The first event (``type: start``) is the initial position; then one ``type: step`` event
    per action, with the action as that viewer may see it and ``view`` the observation after it.
    """
    record = match if isinstance(match, MatchRecord) else MatchRecord.of(match)
    return list(iter_views(record, seat))
