"""Adapters for what the workers' modules do not offer yet (see the API helper's report).

- :func:`cancel_tournament` belongs in :mod:`workers.tournaments`.
"""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.orm import sessionmaker

from server.models import Match, Tournament
from workers.store import utcnow
from workers.tournaments import TournamentError


def cancel_tournament(sessions: sessionmaker, tournament_id: int) -> int:
    """Cancel a created or running tournament: its matches not started yet (``pending`` or
    ``queued``) become ``cancelled``; matches already running play to the end and keep their
    result. Returns how many matches were cancelled. Cancelling twice is harmless (0); a
    finished tournament cannot be cancelled.

    Safe against workers: a queued match is claimed only while ``queued`` (a cancelled one is
    skipped), and a cancelled tournament is never finalized (finalize needs ``running``).
    """
    with sessions() as session:
        result = session.execute(
            update(Tournament)
            .where(Tournament.id == tournament_id, Tournament.status.in_(("created", "running")))
            .values(status="cancelled", finished_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:
            session.rollback()
            tournament = session.get(Tournament, tournament_id)
            if tournament is None:
                raise TournamentError(f"no tournament {tournament_id}")
            if tournament.status == "cancelled":
                return 0
            raise TournamentError(
                f"tournament {tournament_id} is {tournament.status}: it cannot be cancelled"
            )
        cancelled = session.execute(
            update(Match)
            .where(Match.tournament_id == tournament_id, Match.status.in_(("pending", "queued")))
            .values(status="cancelled", finished_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        session.commit()
        return int(cancelled.rowcount)
