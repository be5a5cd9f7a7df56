"""Who may see a deal, and when: seeds nobody can compute from what is public, and views
nobody sees before their time.

A match's seed deals every card of it, so it is shown to anyone only once nothing that shares
its deals is still to be played:

- a tournament's (or league season's) matches, and its seed and deal key, once it is
  ``finished``, or ``cancelled`` with no match still running;
- a test's, once it is over and none of its matches is still pending, queued or running;
- a ladder match's, once every rotation of its duplicate set is done (a ladder never ends;
  its seed is secret and never shown, its matches' seeds are hashes of it);
- a practice match's, once it is done (its seed is random, shared with nothing).

The organizer sees everything, always. The same rule opens, for anyone but the organizer, the
replays and the live events of a match played in *duplicate* (a tournament with ``duplicate``,
every test): another rotation of its deal is still to be played while its competition is open,
and what one rotation shows (the cards played, a seat's hand) is the deal of the others
(:func:`check_duplicate_open`). A seat's view (its hand) is the organizer's and that seat's bot's
(:func:`check_seat`); a replay is of a finished match (:func:`check_replayable`). Each refuses
with a :class:`ViewError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import and_, bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from atout_arena.core.models import Match, SprtTest, Tournament, utcnow
from atout_arena.core.vocabulary import MATCH_DONE, MATCH_IN_FLIGHT, MatchStatus, SprtStatus, TournamentStatus


class ViewError(ValueError):
    """A view of a match that the caller may not have, or not yet. ``kind``, for the API's status
    code: ``not_found`` (no such seat), ``unauthorized`` (it needs a token the caller did not
    give), ``forbidden``, ``conflict`` (the match is not in a state to show it)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def check_seat(match: Match, seat: int | None, *, organizer: bool, bot_id: int | None) -> None:
    """A seat's view is for the organizer and for that seat's own bot (``bot_id``: the caller's
    bot, None without a bot's token); ``seat`` None (the public view) is anyone's."""
    if seat is None:
        return
    if seat >= len(match.seats):
        raise ViewError(f"seat {seat} is not a seat of match {match.id} (0..{len(match.seats) - 1})",
                        "not_found")
    owner = next(s.bot_id for s in match.seats if s.seat == seat)
    if organizer or (bot_id is not None and bot_id == owner):
        return
    if bot_id is None:
        raise ViewError(f"seat {seat}'s view needs the organizer token or the token of the bot in that seat",
                        "unauthorized")
    raise ViewError(f"seat {seat} is not your bot's seat in match {match.id}", "forbidden")


def check_duplicate_open(session: Session, match: Match, *, organizer: bool, what: str) -> None:
    """A match played in duplicate shows nothing beyond its own seats' live views while its
    competition is open (:func:`duplicate_still_open`): its deal is another rotation's.
    ``what``: what is asked for (``replay``, ``live public view``), for the message."""
    if not organizer and duplicate_still_open(session, match):
        raise ViewError(
            f"match {match.id} is played in duplicate and its competition is still open: its {what} "
            "is the organizer's until every rotation of its deal is played", "forbidden")


def check_replayable(match: Match) -> None:
    """A replay is of a finished match; a running one is followed live instead."""
    if match.status != MatchStatus.FINISHED:
        live = match.status == MatchStatus.RUNNING
        hint = f": follow it live at /v1/matches/{match.id}/events" if live else ""
        raise ViewError(f"match {match.id} is {match.status}; a replay needs a finished match{hint}",
                        "conflict")


def open_tournaments(session: Session, ids: Iterable[int]) -> set[int]:
    """The tournaments among ``ids`` whose deals are still secret."""
    ids = set(ids)
    if not ids:
        return set()
    status = dict(session.execute(
        select(Tournament.id, Tournament.status).where(Tournament.id.in_(ids))).all())
    over = (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
    secret = {t for t, s in status.items() if s not in over}
    cancelled = [t for t, s in status.items() if s == TournamentStatus.CANCELLED]
    if cancelled:  # a cancelled tournament's running matches play to the end
        secret |= set(session.scalars(select(Match.tournament_id).where(
            Match.tournament_id.in_(cancelled), Match.status == MatchStatus.RUNNING).distinct()))
    return secret


def open_tests(session: Session, ids: Iterable[int]) -> set[int]:
    """The tests among ``ids`` whose deals are still secret."""
    ids = set(ids)
    if not ids:
        return set()
    secret = set(session.scalars(select(SprtTest.id).where(SprtTest.id.in_(ids),
                                                             SprtTest.status == SprtStatus.RUNNING)))
    secret |= set(session.scalars(select(Match.test_id).where(
        Match.test_id.in_(ids), Match.status.in_(MATCH_IN_FLIGHT)).distinct()))
    return secret


def open_ladder_sets(session: Session, matches: Iterable[Match]) -> set[tuple[int, int]]:
    """The (ladder, set) pairs of ``matches`` with a rotation still to be played or playing."""
    pairs = {(m.ladder_id, m.deal_group) for m in matches if m.ladder_id is not None}
    if not pairs:
        return set()
    rows = session.execute(select(Match.ladder_id, Match.deal_group).where(
        Match.ladder_id.in_({p[0] for p in pairs}), Match.deal_group.in_({p[1] for p in pairs}),
        Match.status.in_(MATCH_IN_FLIGHT)).distinct()).all()
    return pairs & {(lid, group) for lid, group in rows}


def secret_matches(session: Session, matches: Iterable[Match]) -> set[int]:
    """The ids of the ``matches`` whose seed only the organizer may see."""
    matches = list(matches)
    tournaments = open_tournaments(session, {m.tournament_id for m in matches if m.tournament_id is not None})
    tests = open_tests(session, {m.test_id for m in matches if m.test_id is not None})
    sets = open_ladder_sets(session, matches)
    secret = set()
    for m in matches:
        if m.tournament_id is not None:
            hidden = m.tournament_id in tournaments
        elif m.test_id is not None:
            hidden = m.test_id in tests
        elif m.ladder_id is not None:
            hidden = (m.ladder_id, m.deal_group) in sets
        else:
            hidden = m.status not in MATCH_DONE
        if hidden:
            secret.add(m.id)
    return secret


def duplicate_still_open(session: Session, match: Match) -> bool:
    """True when ``match`` is played in duplicate and its competition's deals are still secret:
    its replays and live events are then the organizer's (and, live, its own seats')."""
    if match.test_id is not None:
        return match.test_id in open_tests(session, [match.test_id])
    if match.ladder_id is not None:  # every ladder set is played in duplicate
        return bool(open_ladder_sets(session, [match]))
    if match.tournament_id is None:
        return False
    duplicate = session.scalar(select(Tournament.duplicate).where(Tournament.id == match.tournament_id))
    return bool(duplicate) and match.tournament_id in open_tournaments(session, [match.tournament_id])


# -- one rotation of a deal at a time (finding 2) ----------------------------------------------
#
# The rotations of a deal group seat the same bots: played at once, a bot would hold several
# hands of one deal. So a duplicate tournament queues rotation 0 of each group at its start, and
# each later rotation only once the one before it is done (finished, failed or cancelled):
# released by the task that played it (:func:`release_next`) and, should that be lost, by the
# sweeper (:func:`release_stalled`). Tests (services.sprt) and ladders (services.ladders)
# create their sets the same way.


# The follow-up of every match runs these: prebuilt Core statements on the session's connection
# (an ORM select built per call cost a worker about 5 ms of CPU a match on a slow machine:
# the statement's construction, its cache key and the ORM's compile state).
_MATCHES, _TOURNAMENTS = Match.__table__, Tournament.__table__
_QUEUE_PENDING = (
    update(_MATCHES)
    .where(_MATCHES.c.id.in_(bindparam("k_ids", expanding=True)), _MATCHES.c.status == MatchStatus.PENDING)
    .values(status=MatchStatus.QUEUED, queued_at=bindparam("v_at", type_=_MATCHES.c.queued_at.type))
    .returning(_MATCHES.c.id)
)
_NEXT_ROTATION = {  # the pending next rotation of a deal group, by the column of its owner
    owner: select(_MATCHES.c.id).where(
        _MATCHES.c[owner] == bindparam("k_owner"), _MATCHES.c.deal_group == bindparam("k_group"),
        _MATCHES.c.rotation == bindparam("k_rotation"), _MATCHES.c.status == MatchStatus.PENDING)
    for owner in ("tournament_id", "test_id", "ladder_id")
}
_TOURNAMENT_STATUS = select(_TOURNAMENTS.c.status).where(_TOURNAMENTS.c.id == bindparam("k_id"))


def _released(session: Session, candidates: list[int]) -> list[int]:
    if not candidates:
        return []
    queued = session.connection().execute(_QUEUE_PENDING, {"k_ids": candidates, "v_at": utcnow()})
    ids = list(queued.scalars())
    session.commit()
    return sorted(ids)


def _next_rotations(session: Session, done: Sequence[Any]) -> list[int]:
    """The pending next rotations of ``done`` matches (Match rows, or rows of
    ``_ROTATION_OF``), in open competitions."""
    wanted: list[int] = []
    connection = session.connection()
    for m in done:
        if m.status not in MATCH_DONE:
            continue
        if m.tournament_id is not None:
            owner, owner_id = "tournament_id", m.tournament_id
        elif m.test_id is not None:
            owner, owner_id = "test_id", m.test_id
        elif m.ladder_id is not None:
            owner, owner_id = "ladder_id", m.ladder_id
        else:
            continue  # a practice match: no siblings
        nxt = connection.execute(_NEXT_ROTATION[owner], {
            "k_owner": owner_id, "k_group": m.deal_group, "k_rotation": m.rotation + 1}).scalar()
        if nxt is None:
            continue
        if m.tournament_id is not None:
            status = connection.execute(_TOURNAMENT_STATUS, {"k_id": m.tournament_id}).scalar()
            if status != TournamentStatus.RUNNING:
                continue
        wanted.append(nxt)
    return wanted


# a match's columns that _next_rotations reads: a whole Match row carries its replay and observations
_ROTATION_COLUMNS = ("id", "status", "tournament_id", "test_id", "ladder_id", "deal_group", "rotation")
_ROTATION_OF = (select(*(_MATCHES.c[name] for name in _ROTATION_COLUMNS))
                .where(_MATCHES.c.id == bindparam("k_id")))


def follow_up(sessions: sessionmaker, match_id: int) -> tuple[int | None, list[int]]:
    """What follows a match, in one session of light queries: its ladder (to tick after it),
    and the next rotation of its duplicate deal group, queued if it is done (the ids to send
    to the workers; none when not a duplicate match, not done, or released already)."""
    with sessions() as session:
        row = session.connection().execute(_ROTATION_OF, {"k_id": match_id}).first()
        if row is None:
            return None, []
        released = _released(session, _next_rotations(session, [row])) if row.deal_group is not None else []
        return row.ladder_id, released


def release_next(sessions: sessionmaker, match_id: int) -> list[int]:
    """:func:`follow_up`'s released rotation alone."""
    return follow_up(sessions, match_id)[1]


def release_stalled(sessions: sessionmaker) -> list[int]:
    """The sweeper's net: every pending rotation whose previous rotation is done, in a running
    tournament or test; queued, and returned to be sent.

    One join per kind of owner, each on equalities the owner's index serves (one join with an
    OR of the three owners compared every pending match with every match: a second on 20,000
    matches, and the sweep runs every half second)."""
    with sessions() as session:
        connection = session.connection()
        done: list[Any] = []
        for owner in ("tournament_id", "test_id", "ladder_id"):
            pending, previous = _MATCHES.alias("pending"), _MATCHES.alias("previous")
            done.extend(connection.execute(
                select(*(previous.c[name] for name in _ROTATION_COLUMNS))
                .select_from(pending.join(previous, and_(
                    previous.c[owner] == pending.c[owner], previous.c.deal_group == pending.c.deal_group,
                    previous.c.rotation == pending.c.rotation - 1)))
                .where(pending.c.status == MatchStatus.PENDING, pending.c[owner].isnot(None),
                       previous.c.status.in_(MATCH_DONE))
                .limit(1000)).all())
        return _released(session, _next_rotations(session, done))
