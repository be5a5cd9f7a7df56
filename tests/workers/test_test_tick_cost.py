"""What an arena test's matches cost the worker (issue 38, bench/arena_test.py): the test is
ticked once per duplicate set, when its last game is stored, not after every game; and its
analysis reads the action log only of a game where a contender was charged a fault. Matches are
played by the real runner with an in-process asker on a real database."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event

from atout_arena.core.match import Answer
from atout_arena.core.settings import Settings
from atout_arena.core.vocabulary import Fault
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.deals import release_next
from atout_arena.services.sprt import analysis_of, create_test, tick
from atout_workers.play import run_match
from atout_workers.world import build_world


@pytest.fixture
def world(database_url: str, redis_url: str):
    w = build_world(Settings(database_url=database_url, redis_url=redis_url))
    yield w
    w.close()


def play_sets(world, ids: list[int], asker, ticked: list[int]) -> list[int]:
    """Play ``ids`` and the rotations each releases, as the play task does; ``ticked`` gets the
    test id of every tick the worker would send."""
    played, pending = [], list(ids)
    while pending:
        match_id = pending.pop(0)
        run_match(world, match_id, asker=asker, on_test=ticked.append)
        played.append(match_id)
        pending += release_next(world.sessions, match_id)
    return played


@contextmanager
def statements_run(engine, wanted: Callable[[str], bool]) -> Iterator[list[tuple[str, Any]]]:
    """The SQL statements (with their parameters) ``engine`` runs inside the block that ``wanted`` keeps."""
    found: list[tuple[str, Any]] = []

    def seen(conn, cursor, statement: str, parameters, context, executemany) -> None:
        if wanted(statement):
            found.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", seen)
    try:
        yield found
    finally:
        event.remove(engine, "before_cursor_execute", seen)


def first_legal(ask) -> Answer:
    return Answer(ask.legal_actions[0], 1.0)


def test_a_test_is_ticked_once_a_set_not_once_a_game(world, make_bot) -> None:
    a, _ = make_bot("tick-a")
    b, _ = make_bot("tick-b")
    test_id = create_test(world.sessions, a=a.name, b=b.name, spec=CompetitionSpec.of("fool", 3),
                          sets_in_flight=2, max_games=60)
    ticked: list[int] = []
    played = play_sets(world, tick(world.sessions, test_id), first_legal, ticked)
    assert len(played) == 2 * 6  # two sets of six games (three rotations, three of the mirror)
    assert ticked == [test_id, test_id]  # one tick per set, sent by the set's last game
    assert analysis_of(world.sessions, test_id).complete_sets == 2


def test_only_a_faulted_contenders_log_is_read_and_its_disconnection_voids_the_set(world, make_bot) -> None:
    a, _ = make_bot("log-a")
    b, _ = make_bot("log-b")
    test_id = create_test(world.sessions, a=a.name, b=b.name, spec=CompetitionSpec.of("tiercon"),
                          sets_in_flight=2)
    ids = tick(world.sessions, test_id)
    cut: set[str] = set()

    def b_drops_once(ask) -> Answer:  # one disconnection in the first set's first game: no forfeit
        if ask.bot.bot_id == b.id and ask.match_id == str(ids[0]) and ask.match_id not in cut:
            cut.add(ask.match_id)
            return Answer(None, 0.0, Fault.DISCONNECTED, "not connected")
        return Answer(ask.legal_actions[0], 1.0)

    ticked: list[int] = []
    assert len(play_sets(world, ids, b_drops_once, ticked)) == 4 and cut == {str(ids[0])}
    with statements_run(world.engine, lambda s: "matches.actions" in s) as logs_read:
        view = analysis_of(world.sessions, test_id)
    assert view.complete_sets == 2 and view.absent_sets == 1 and view.analysis.sets == 1
    # the log of the one game with a fault, by its id; not the logs of every game of the test
    assert len(logs_read) == 1, logs_read
    statement, parameters = logs_read[0]
    assert "matches.id =" in statement and "test_id" not in statement and ids[0] in tuple(parameters)


def test_the_tick_folds_the_sets_done_and_reads_only_the_later_ones(world, make_bot) -> None:
    """After many sets, a tick reads the matches of the sets not folded yet, not the whole test,
    and its analysis is the one of every set read again (the organizer's view, unfolded)."""
    from atout_arena.core.models import SprtTest

    a, _ = make_bot("fold-a")
    b, _ = make_bot("fold-b")
    test_id = create_test(world.sessions, a=a.name, b=b.name, spec=CompetitionSpec.of("tiercon"),
                          sets_in_flight=3, max_games=400, elo0=995, elo1=1000)
    rng = random.Random(2)

    def either(ask) -> Answer:  # A and B play at random: sets of every score
        return Answer(rng.choice(ask.legal_actions), 1.0)

    ids = tick(world.sessions, test_id)
    for _ in range(6):
        play_sets(world, ids, either, [])
        ids = tick(world.sessions, test_id)
    with world.sessions() as session:
        test = session.get(SprtTest, test_id)
        counted, folded = test.counted_sets, test.counted
    assert counted >= 12 and folded is not None and folded["complete"] == counted
    # the view read again from every match (nothing folded) is the folded one
    with world.sessions() as session:
        test = session.get(SprtTest, test_id)
        test.counted_sets, test.counted = 0, None
        session.commit()
    full = analysis_of(world.sessions, test_id)
    with world.sessions() as session:
        test = session.get(SprtTest, test_id)
        test.counted_sets, test.counted = counted, folded
        session.commit()
    with statements_run(world.engine, lambda s: "FROM matches" in s or "JOIN matches" in s) as statements:
        folded_view = analysis_of(world.sessions, test_id)
    assert folded_view == full and full.complete_sets >= counted
    assert statements and all("deal_group >=" in s and counted in tuple(p) for s, p in statements), statements
