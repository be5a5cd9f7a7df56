"""What a ladder's matches cost the worker (issue 38, bench/ladder.py --live): its tick reads the
action log only of a game where a seat was charged a fault (reading every game's log was half
the tick's CPU), and a game played disconnected still voids its set; a game that releases its
set's next rotation sends no tick (it would rate and seat nothing), the set's last game does.
Real services on a real database; results stored by hand as the worker stores them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, select

from atout_arena.core.models import LadderSet, Match
from atout_arena.core.vocabulary import Fault, LadderStatus, MatchStatus
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.ladders import create_ladder, set_status, tick


def test_only_a_faulted_games_log_is_read_and_its_disconnection_voids_the_set(sessions, make_bot) -> None:
    a, b = (make_bot(f"logs-{x}")[0] for x in "ab")
    ladder_id = create_ladder(sessions, name=f"logs-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              bots=[a.name, b.name], target_in_flight=4, seed=3)
    live = {a.id, b.id}
    try:
        first = tick(sessions, ladder_id, lambda: live)
        assert len(first.match_ids) == 4  # two sets of two games
        with sessions() as session:
            matches = [session.get(Match, m) for m in first.match_ids]
            cut = min(matches, key=lambda m: (m.deal_group, m.rotation))  # a game of the first set
            for match in matches:
                match.status = MatchStatus.FINISHED
                match.ranking = [1, 2]
                if match.id == cut.id:  # b (seat 1) was cut off once: one fault, no forfeit
                    match.actions = [[1, "pass", "fallback", 0.0, [Fault.DISCONNECTED], "cut off", None]]
                    next(s for s in match.seats if s.seat == 1).faults = 1
            cut_id, cut_set = cut.id, cut.deal_group
            session.commit()
        engine = sessions.kw["bind"]
        logs_read: list[tuple[str, Any]] = []

        def seen(conn, cursor, statement: str, parameters, context, executemany) -> None:
            if "matches.actions" in statement:
                logs_read.append((statement, parameters))

        event.listen(engine, "before_cursor_execute", seen)
        try:
            settled = tick(sessions, ladder_id, lambda: live)
        finally:
            event.remove(engine, "before_cursor_execute", seen)
        assert settled.rated == 1  # the clean set; the other is void
        with sessions() as session:
            status = dict(session.execute(select(LadderSet.number, LadderSet.status)
                                          .where(LadderSet.ladder_id == ladder_id)).all())
        assert status[cut_set] == "void" and sorted(status.values()).count("rated") == 1
        # the log of the faulted game alone, by its id: not the logs of every game settled
        assert len(logs_read) == 1, logs_read
        statement, parameters = logs_read[0]
        assert "matches.id =" in statement and "ladder_id" not in statement and cut_id in tuple(parameters)
    finally:
        set_status(sessions, ladder_id, LadderStatus.PAUSED)


def test_a_ladder_game_that_releases_its_sets_next_rotation_sends_no_tick(sessions, make_bot) -> None:
    from types import SimpleNamespace

    from atout_workers.tasks import after_match

    sent: list[tuple[str, Any]] = []

    class Recorder:  # what would be sent (the tasks' own transport is not under test)
        def play_matches(self, ids: list[int]) -> int:
            sent.append(("play", list(ids)))
            return len(ids)

        def ladder_tick(self, ladder_id: int, *, countdown: float | None = None, chain: str = "") -> None:
            sent.append(("tick", ladder_id))

    a, b = (make_bot(f"rot-{x}")[0] for x in "ab")
    ladder_id = create_ladder(sessions, name=f"rot-{a.id}", spec=CompetitionSpec.of("tiercon"),
                              bots=[a.name, b.name], target_in_flight=2, seed=5)
    try:
        [first] = tick(sessions, ladder_id, lambda: {a.id, b.id}).to_send  # one set: its rotation 0
        world = SimpleNamespace(sessions=sessions, tasks=Recorder())
        with sessions() as session:
            match = session.get(Match, first)
            match.status, match.ranking = MatchStatus.FINISHED, [1, 2]
            second = session.scalars(select(Match.id).where(Match.ladder_id == ladder_id,
                                                            Match.id != first)).one()
            session.commit()
        after_match(world, first)
        assert sent == [("play", [second])]  # the next rotation, and no tick: the set is not done
        with sessions() as session:
            match = session.get(Match, second)
            match.status, match.ranking = MatchStatus.FINISHED, [2, 1]
            session.commit()
        after_match(world, second)
        assert sent[1:] == [("tick", ladder_id)]  # the set's last game: the tick rates it
    finally:
        set_status(sessions, ladder_id, LadderStatus.PAUSED)
