"""Tournament schedules: counts, balance of pairs and seats, duplicate deal groups, seeds."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable

import pytest

from atout_arena.core.schedule import ScheduledMatch, deal_seed, deal_suits, round_robin, tables


def bots(n: int) -> list[str]:
    return [f"bot{i}" for i in range(n)]


def pair_counts(schedule: list[ScheduledMatch], entrants: list[str]) -> list[int]:
    met = Counter(frozenset(p) for m in schedule for p in itertools.combinations(m.seats, 2))
    return [met[frozenset(p)] for p in itertools.combinations(entrants, 2)]


def seat_counts(schedule: list[ScheduledMatch]) -> dict[str, Counter[int]]:
    seats: dict[str, Counter[int]] = defaultdict(Counter)
    for m in schedule:
        for seat, bot in enumerate(m.seats):
            seats[bot][seat] += 1
    return seats


def seat_spread(schedule: list[ScheduledMatch], players: int) -> int:
    """The largest difference, over bots, between a bot's most and least used seats."""
    return max(
        max(c[s] for s in range(players)) - min(c[s] for s in range(players))
        for c in seat_counts(schedule).values()
    )


def games_per_bot(schedule: list[ScheduledMatch]) -> set[int]:
    return set(Counter(b for m in schedule for b in m.seats).values())


# -- round robin -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9])
@pytest.mark.parametrize("games", [2, 4, 6])
def test_round_robin_even_games_every_seating_equally(n: int, games: int) -> None:
    entrants = bots(n)
    schedule = round_robin(entrants, games)
    assert len(schedule) == n * (n - 1) * (games // 2)  # N(N-1) ordered seatings, games/2 each
    seatings = Counter(m.seats for m in schedule)
    assert set(seatings) == set(itertools.permutations(entrants, 2))
    assert set(seatings.values()) == {games // 2}
    assert set(pair_counts(schedule, entrants)) == {games}
    assert seat_spread(schedule, 2) == 0


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 10])
@pytest.mark.parametrize("games", [1, 3, 5])
def test_round_robin_odd_games_splits_as_evenly_as_possible(n: int, games: int) -> None:
    entrants = bots(n)
    schedule = round_robin(entrants, games)
    assert len(schedule) == n * (n - 1) // 2 * games
    assert set(pair_counts(schedule, entrants)) == {games}
    for a, b in itertools.combinations(entrants, 2):  # one seating has the extra game
        a_first = sum(m.seats == (a, b) for m in schedule)
        b_first = sum(m.seats == (b, a) for m in schedule)
        assert sorted([a_first, b_first]) == [games // 2, games // 2 + 1]
    # Each bot has seat 0 in half its games: exactly for odd N, within one for even N.
    assert seat_spread(schedule, 2) == (0 if n % 2 else 1)


def test_round_robin_rounds_have_no_bot_twice() -> None:
    schedule = round_robin(bots(6), 1)
    for start in range(0, len(schedule), 3):  # 5 rounds of 3 matches
        in_round = [b for m in schedule[start : start + 3] for b in m.seats]
        assert len(in_round) == len(set(in_round)) == 6


def test_round_robin_is_tables_of_two() -> None:
    assert round_robin(bots(5), 3, seed=9) == tables(bots(5), 2, 3, seed=9)


# -- tables ------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [3, 4, 5, 7])
@pytest.mark.parametrize("games", [1, 2, 5])
def test_everyone_at_every_table_when_bots_equal_players(k: int, games: int) -> None:
    entrants = bots(k)
    schedule = tables(entrants, k, games)
    assert len(schedule) == games
    assert all(sorted(m.seats) == sorted(entrants) for m in schedule)
    assert seat_spread(schedule, k) == (0 if games % k == 0 else 1)
    # Seats rotate: bot i moves one seat on per game.
    for g, m in enumerate(schedule):
        assert m.seats.index("bot0") == g % k


@pytest.mark.parametrize(
    ("n", "k", "games"),
    [(4, 3, 2), (5, 3, 3), (6, 3, 4), (7, 3, 1), (6, 4, 6), (8, 4, 15), (13, 4, 1), (7, 5, 10)],
)
def test_exact_balance_when_a_design_allows(n: int, k: int, games: int) -> None:
    """Complete designs and difference sets (7,3,1), (13,4,1): every pair meets exactly."""
    entrants = bots(n)
    schedule = tables(entrants, k, games)
    assert set(pair_counts(schedule, entrants)) == {games}
    assert len(games_per_bot(schedule)) == 1
    assert seat_spread(schedule, k) <= 1


CASES = [(n, k, g) for n in range(4, 13) for k in range(3, 8) if k < n for g in (1, 3)]
CASES += [(16, 4, 2), (20, 5, 1), (24, 6, 3), (30, 7, 1)]  # the larger ones sample their blocks


@pytest.mark.parametrize(("n", "k", "games"), CASES)
def test_tables_balance(n: int, k: int, games: int) -> None:
    entrants = bots(n)
    schedule = tables(entrants, k, games)
    met = pair_counts(schedule, entrants)
    assert min(met) >= games  # every pair meets at least as often as asked
    assert max(met) - min(met) <= 2  # and as evenly as the numbers allow (usually within 1)
    assert len(games_per_bot(schedule)) == 1  # everyone plays the same number of matches
    assert seat_spread(schedule, k) <= 1
    assert all(len(set(m.seats)) == k for m in schedule)
    # Not wasteful: at most about two rounds of N tables beyond the lower bound.
    assert len(schedule) <= math.ceil(math.comb(n, 2) * games / math.comb(k, 2)) + 2 * n


def test_eight_bots_four_players_one_meeting() -> None:
    """A common case, checked by hand: 8 tables, every pair meets once or twice."""
    schedule = tables(bots(8), 4, 1)
    assert len(schedule) == 8
    assert set(pair_counts(schedule, bots(8))) == {1, 2}
    assert seat_spread(schedule, 4) == 0
    assert games_per_bot(schedule) == {4}


# -- duplicate ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "k", "games"), [(2, 2, 2), (5, 2, 4), (4, 4, 8), (6, 3, 3), (9, 4, 4), (10, 5, 5)]
)
def test_duplicate_groups_share_a_seed_and_cover_every_rotation(n: int, k: int, games: int) -> None:
    entrants = bots(n)
    schedule = tables(entrants, k, games, seed=42, duplicate=True)
    groups: dict[int, list[ScheduledMatch]] = defaultdict(list)
    for m in schedule:
        groups[m.deal_group].append(m)
    for group, matches in groups.items():
        assert [m.rotation for m in matches] == list(range(k))
        assert {m.seed for m in matches} == {deal_seed(42, group)}
        base = matches[0].seats
        for m in matches:  # bot in base seat i sits in seat (i + r) % k
            assert all(m.seats[(i + m.rotation) % k] == bot for i, bot in enumerate(base))
    assert len({ms[0].seed for ms in groups.values()}) == len(groups)  # groups differ
    assert seat_spread(schedule, k) == 0  # every deal is played from every seat
    assert min(pair_counts(schedule, entrants)) >= games
    assert all(c % k == 0 for c in pair_counts(schedule, entrants))


def test_duplicate_round_robin_counts_games_in_both_seatings() -> None:
    schedule = round_robin(bots(4), 6, duplicate=True)
    assert len(schedule) == 4 * 3 // 2 * 6
    assert set(pair_counts(schedule, bots(4))) == {6}
    odd = round_robin(bots(4), 3, duplicate=True)  # rounded up to whole deal groups
    assert set(pair_counts(odd, bots(4))) == {4}


def test_without_duplicate_every_match_is_its_own_deal() -> None:
    schedule = tables(bots(7), 3, 2, seed=5)
    assert [m.deal_group for m in schedule] == [m.index for m in schedule] == list(range(len(schedule)))
    assert {m.rotation for m in schedule} == {0}
    assert len({m.seed for m in schedule}) == len(schedule)


# -- seeds and determinism ---------------------------------------------------------------------


def test_schedules_are_deterministic() -> None:
    assert tables(bots(11), 4, 2, seed=3) == tables(bots(11), 4, 2, seed=3)
    assert round_robin(bots(6), 4, seed=3, duplicate=True) == round_robin(bots(6), 4, seed=3, duplicate=True)
    other = tables(bots(11), 4, 2, seed=4)
    assert [m.seats for m in other] == [m.seats for m in tables(bots(11), 4, 2, seed=3)]
    assert all(a.seed != b.seed for a, b in zip(other, tables(bots(11), 4, 2, seed=3), strict=True))


def test_seeds_are_stable_63_bit_integers() -> None:
    assert deal_seed(0, 0) == deal_seed(0, 0)
    assert deal_seed(0, 0) != deal_seed(0, 1) != deal_seed(1, 1)
    schedule = tables(bots(6), 3, 2, seed=123)
    assert all(0 <= m.seed < 2**63 for m in schedule)
    assert schedule[0].seed == 8346058817283563834  # pinned: a stored tournament replays the same


def test_indices_are_positions_and_bot_ids_may_be_ints() -> None:
    schedule = tables([10, 20, 30, 40, 50], 3, 1)
    assert [m.index for m in schedule] == list(range(len(schedule)))
    assert {b for m in schedule for b in m.seats} == {10, 20, 30, 40, 50}


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tables(bots(3), 4, 1), "need at least 4 bots for 4-player tables, got 3"),
        (lambda: round_robin(["solo"], 1), "need at least 2 bots"),
        (lambda: round_robin([], 1), "need at least 2 bots"),
        (lambda: tables(bots(5), 3, 0), "games_per_pairing must be an integer >= 1, not 0"),
        (lambda: round_robin(bots(5), -2), "games_per_pairing must be an integer >= 1, not -2"),
        (lambda: round_robin(bots(5), 1.5), "games_per_pairing must be an integer >= 1"),  # type: ignore[arg-type]
        (lambda: tables(["a", "b", "a", "c", "b"], 3, 1), "entered more than once: 'a', 'b'"),
        (lambda: round_robin(["a", "a"], 1), "entered more than once: 'a'"),
        (lambda: tables(bots(5), 1, 1), "players_per_table must be an integer >= 2, not 1"),
        (lambda: tables(bots(5), 3, 1, seed="x"), "seed must be an integer"),  # type: ignore[arg-type]
    ],
)
def test_bad_input(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        call()


def test_deal_suits_gives_the_rotations_of_a_group_distinct_secret_permutations() -> None:
    key, other = "ab" * 32, "cd" * 32
    for group in range(50):
        perms = [deal_suits(7, group, r, key) for r in range(24)]
        assert all(sorted(p) == sorted("cdhs") for p in perms)
        assert len(set(perms)) == 24  # every rotation its own disguise (fewer than 24 rotations)
        assert perms == [deal_suits(7, group, r, key) for r in range(24)]  # reproducible
    # the key changes them: without it nobody computes them
    plain = [deal_suits(7, g, 0, key) for g in range(50)]
    assert plain != [deal_suits(7, g, 0, other) for g in range(50)]
    assert plain != [deal_suits(7, g, 0) for g in range(50)]
    assert len(set(plain)) > 12  # spread over the 24
