"""What a ladder keeps of the sets of a member that leaves (issue 32, finding 6; the decision is
docs/ladders.md's): a set whose games were all done counts (rated); a set left part-way is
void, its finished game kept as a played match, its running game stopped (``cancelled``, no
lease: its worker is told through ``TickReport.stopped``, its result would not be stored).
The real tick on the session's database; results stored by hand."""

from __future__ import annotations

from sqlalchemy import select

from atout_arena.core.models import LadderSet, Match
from atout_arena.core.vocabulary import MatchStatus
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.ladders import LEFT, create_ladder, tick


def _set(sessions, match_id: int, **values: object) -> None:
    with sessions() as session:
        match = session.get(Match, match_id)
        for key, value in values.items():
            setattr(match, key, value)
        session.commit()


def test_a_complete_set_counts_a_partial_one_is_void_and_its_running_game_stopped(sessions, make_bot) -> None:
    a, b = (make_bot(f"leave-{x}")[0] for x in "ab")
    ladder_id = create_ladder(sessions, name=f"leave-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              bots=[a.name, b.name], target_in_flight=4, seed=11)
    both = {a.id, b.id}
    first = tick(sessions, ladder_id, lambda: both)
    with sessions() as session:
        games = sorted((session.get(Match, m) for m in first.match_ids),
                       key=lambda m: (m.deal_group, m.rotation))
        seats = {m.id: sorted(m.seats, key=lambda s: s.seat) for m in games}
        rankings = {m.id: [1 if s.bot_id == a.id else 2 for s in seats[m.id]] for m in games}
    complete, (played, running) = games[:2], games[2:]
    for match in (*complete, played):  # set 0 whole, set 1's first rotation
        _set(sessions, match.id, status=MatchStatus.FINISHED, ranking=rankings[match.id], actions=[])
    _set(sessions, running.id, status=MatchStatus.RUNNING, lease_id="worker:1:x")

    left = tick(sessions, ladder_id, lambda: {a.id})  # b left
    assert left.rated == 1  # set 0: all its games were done
    assert left.stopped == [running.id]  # set 1's running game, for its worker to stop now
    with sessions() as session:
        stopped = session.get(Match, running.id)
        assert (stopped.status, stopped.error, stopped.lease_id) == (MatchStatus.CANCELLED, LEFT, None)
        assert session.get(Match, played.id).status == MatchStatus.FINISHED  # kept, as played
    tick(sessions, ladder_id, lambda: {a.id})
    with sessions() as session:
        statuses = dict(session.execute(select(LadderSet.number, LadderSet.status)
                                        .where(LadderSet.ladder_id == ladder_id)).all())
    assert statuses == {complete[0].deal_group: "rated", played.deal_group: "void"}
