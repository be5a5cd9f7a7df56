"""Who may see a deal, and when (issue 11, findings 1 and 2).

A match's seed deals every card of it, so it is shown to anyone only once nothing that shares
its deals is still to be played:

- a tournament's (or league season's) matches, and its seed and deal key, once it is
  ``finished``, or ``cancelled`` with no match still running;
- a test's, once it is over and none of its matches is still pending, queued or running;
- a practice match's, once it is done (its seed is random, shared with nothing).

The organizer sees everything, always. The same rule opens, for anyone but the organizer, the
replays and the live events of a match played in *duplicate* (a tournament with ``duplicate``,
every test): another rotation of its deal is still to be played while its competition is open,
and what one rotation shows (the cards played, a seat's hand) is the deal of the others.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from atout_arena.core.models import Match, SprtTest, Tournament
from atout_arena.core.vocabulary import MATCH_DONE, MATCH_IN_FLIGHT, MatchStatus, SprtStatus, TournamentStatus


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


def secret_matches(session: Session, matches: Iterable[Match]) -> set[int]:
    """The ids of the ``matches`` whose seed only the organizer may see."""
    matches = list(matches)
    tournaments = open_tournaments(session, {m.tournament_id for m in matches if m.tournament_id is not None})
    tests = open_tests(session, {m.test_id for m in matches if m.test_id is not None})
    secret = set()
    for m in matches:
        if m.tournament_id is not None:
            hidden = m.tournament_id in tournaments
        elif m.test_id is not None:
            hidden = m.test_id in tests
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
    if match.tournament_id is None:
        return False
    duplicate = session.scalar(select(Tournament.duplicate).where(Tournament.id == match.tournament_id))
    return bool(duplicate) and match.tournament_id in open_tournaments(session, [match.tournament_id])
