"""Standings: points, places, faults and forfeits, and the order of the table."""

from __future__ import annotations

import pytest

from atout_arena.core.standings import MatchResult, standings


def by_bot(table: list) -> dict:
    return {line.bot: line for line in table}


def test_points_are_the_bots_beaten() -> None:
    table = standings([MatchResult(("a", "b", "c", "d"), (2, 1, 4, 3))])
    assert [(s.bot, s.points, s.rank) for s in table] == [
        ("b", 3.0, 1),
        ("a", 2.0, 2),
        ("d", 1.0, 3),
        ("c", 0.0, 4),
    ]


def test_a_shared_place_is_worth_half_a_point_against_each_other() -> None:
    table = by_bot(standings([MatchResult(("a", "b", "c"), (1, 1, 3))]))  # scores 9, 9, 5
    assert (table["a"].points, table["b"].points, table["c"].points) == (1.5, 1.5, 0.0)
    teams = by_bot(standings([MatchResult(("a", "b", "c", "d"), (1, 3, 1, 3))]))  # two teams of two
    assert [teams[b].points for b in "abcd"] == [2.5, 0.5, 2.5, 0.5]
    assert sum(s.points for s in teams.values()) == 6  # always n (n - 1) / 2 per match


def test_counts_places_wins_and_mean_place() -> None:
    results = [
        MatchResult(("a", "b", "c"), (1, 2, 3)),
        MatchResult(("c", "a", "b"), (1, 1, 3)),
        MatchResult(("b", "c", "a"), (1, 2, 3)),
    ]
    a = by_bot(standings(results))["a"]
    assert a.matches == 3
    assert a.wins == 1  # a first place shared with an opponent is not a win...
    assert a.places == {1: 2, 3: 1}  # ...but it is a first place
    assert a.mean_place == pytest.approx(5 / 3)
    assert a.points == 2 + 1.5 + 0


def test_faults_and_forfeits_are_summed() -> None:
    results = [
        MatchResult(("a", "b"), (2, 1), faults=(3, 0), forfeited=(True, False)),
        MatchResult(("b", "a"), (1, 2), faults=(1, 2)),
        MatchResult(("a", "b"), (1, 2)),
    ]
    table = by_bot(standings(results))
    assert (table["a"].faults, table["a"].forfeits) == (5, 1)
    assert (table["b"].faults, table["b"].forfeits) == (1, 0)


def test_members_without_matches_are_listed_last() -> None:
    table = standings([MatchResult(("a", "b"), (1, 2))], bots=["a", "b", "new"])
    assert [s.bot for s in table] == ["a", "b", "new"]
    new = table[-1]
    assert (new.matches, new.points, new.wins, new.places, new.mean_place) == (0, 0.0, 0, {}, None)


def test_level_on_points_the_direct_encounters_decide() -> None:
    # a and b both score 3 points; b beat a where they met.
    results = [
        MatchResult(("a", "b"), (2, 1)),
        MatchResult(("a", "c"), (1, 2)),
        MatchResult(("a", "c"), (1, 2)),
        MatchResult(("a", "c"), (1, 2)),
        MatchResult(("b", "c"), (1, 2)),
        MatchResult(("b", "c"), (1, 2)),
    ]
    table = standings(results)
    assert [(s.bot, s.points, s.direct, s.rank) for s in table[:2]] == [
        ("b", 3.0, 1.0, 1),
        ("a", 3.0, 0.0, 2),
    ]


def test_then_wins_then_fewer_forfeits_then_fewer_faults() -> None:
    # x and y both score 3 and split their direct encounters 1-1; x won a match, y did not.
    results = [
        MatchResult(("x", "y", "w", "v"), (1, 2, 3, 4)),
        MatchResult(("x", "y", "w", "v"), (4, 3, 1, 2)),
    ]
    wins = standings(results)
    assert [(s.bot, s.points, s.direct, s.wins, s.rank) for s in wins] == [
        ("w", 4.0, 0.0, 1, 1),
        ("x", 3.0, 1.0, 1, 2),
        ("y", 3.0, 1.0, 0, 3),
        ("v", 2.0, 0.0, 0, 4),
    ]

    forfeits = standings(
        [
            MatchResult(("p", "q"), (1, 2), faults=(0, 9)),
            MatchResult(("q", "p"), (1, 2), faults=(0, 3), forfeited=(False, True)),
        ]
    )
    assert [s.bot for s in forfeits] == ["q", "p"]  # level on points and wins: p forfeited, q did not

    faults = standings(
        [MatchResult(("p", "q"), (1, 2), faults=(4, 0)), MatchResult(("q", "p"), (1, 2), faults=(0, 0))]
    )
    assert [s.bot for s in faults] == ["q", "p"]


def test_bots_level_on_everything_share_the_better_rank_in_name_order() -> None:
    results = [MatchResult(("zed", "amy", "bob"), (1, 1, 3)), MatchResult(("bob", "cat"), (1, 2))]
    table = standings(results)
    assert [(s.bot, s.rank) for s in table] == [("amy", 1), ("zed", 1), ("bob", 3), ("cat", 4)]


def test_points_hand_out_the_same_total_per_match_whatever_the_ties() -> None:
    rankings = [(1, 2, 3, 4, 5), (1, 1, 1, 1, 1), (2, 2, 1, 4, 4), (1, 3, 1, 3, 5)]
    results = [MatchResult(("a", "b", "c", "d", "e"), r) for r in rankings]
    assert sum(s.points for s in standings(results)) == 4 * 10


def test_int_bot_ids_and_lists_are_accepted() -> None:
    result = MatchResult([7, 3], [2, 1], [0, 1], [False, False])  # type: ignore[arg-type]
    assert result.seats == (7, 3) and result.faults == (0, 1)
    assert [s.bot for s in standings([result])] == [3, 7]


def test_empty() -> None:
    assert standings([]) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seats": ("a",), "ranking": (1,)}, "at least 2 seats"),
        ({"seats": ("a", "a"), "ranking": (1, 2)}, "two seats"),
        ({"seats": ("a", "b"), "ranking": (1, 2, 3)}, "2 seats but 3 values in ranking"),
        ({"seats": ("a", "b"), "ranking": ()}, "needs a ranking"),
        ({"seats": ("a", "b"), "ranking": (0, 1)}, "a ranking holds places"),
        ({"seats": ("a", "b"), "ranking": (1, 2), "faults": (1,)}, "2 seats but 1 values in faults"),
        ({"seats": ("a", "b"), "ranking": (1, 2), "faults": (-1, 0)}, "faults are counts"),
        ({"seats": ("a", "b"), "ranking": (1, 2), "forfeited": (True,)}, "values in forfeited"),
    ],
)
def test_bad_results_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MatchResult(**kwargs)


def test_a_win_is_a_first_place_shared_with_no_opponent() -> None:
    from atout_arena.core.standings import sides_of, won

    results = [MatchResult(("a", "b", "c"), (1, 1, 3)), MatchResult(("a", "b", "c"), (1, 2, 3))]
    shared = by_bot(standings(results))
    assert (shared["a"].wins, shared["b"].wins, shared["c"].wins) == (1, 0, 0)
    assert shared["b"].places == {1: 1, 2: 1}
    # Teams (seats 0+2 against 1+3): the winning partners share first place, and both won.
    sides = sides_of({"teams": True}, 4)
    assert sides == (0, 1, 0, 1) and sides_of({"teams": False}, 4) == () and sides_of({}, 3) == ()
    teams = by_bot(standings([MatchResult(("a", "b", "c", "d"), (1, 3, 1, 3), sides=sides)]))
    assert [teams[b].wins for b in "abcd"] == [1, 0, 1, 0]
    # Two teams level on first: nobody won.
    level = by_bot(standings([MatchResult(("a", "b", "c", "d"), (1, 1, 1, 1), sides=sides)]))
    assert [level[b].wins for b in "abcd"] == [0, 0, 0, 0]
    assert won((1, 2), 0) and not won((1, 1), 0) and not won((2, 1), 0)
    with pytest.raises(ValueError, match="sides"):
        MatchResult(("a", "b"), (1, 2), sides=(0,))
