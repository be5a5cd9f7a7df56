"""What duplicate leaks at two players: a bot that memorises its hand knows its opponent's in the
second rotation (issue 32, finding 15).

The deals are the arena's own: a duplicate round robin of two bots
(:func:`atout_arena.core.schedule.round_robin`), each rotation disguised by
:func:`~atout_arena.core.schedule.deal_suits` under a deal key, dealt by the worker's
:meth:`atout_arena.core.match.MatchSetup.new_state`. In rotation 1 the memorising bot sits in
the seat its opponent had in rotation 0 and the opponent in its old seat: the opponent's hand is
the bot's rotation-0 hand relabelled by the unknown suit permutation ``sigma`` between the two
rotations' disguises. The bot keeps every ``sigma`` of the 24 that fits what it saw before its
first decision of each rotation (its dealt hand, the face-up card, the cards the opponent played
before any card was drawn): the two seats' hands are disjoint, a card the opponent played in
rotation 0 is now in its own hand, one the opponent plays in rotation 1 was in its rotation-0
hand, the face-up card is the same card. When every such ``sigma`` gives the same hand, it knows
its opponent's whole hand. docs/tournaments.md states the shares this measures.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from atout.games import suit_map
from atout_arena.core.match import MatchSetup, SeatBot
from atout_arena.core.schedule import deal_suits, round_robin

DOC = Path(__file__).resolve().parents[2] / "docs" / "tournaments.md"
PERMUTATIONS = ["".join(p) for p in itertools.permutations("cdhs")]
KEY = "5e" * 32  # a deal key (any 256-bit hex): the figures are for these deals
SEED = 32
GROUPS = 200  # deal groups (sets) per game


@dataclass(frozen=True)
class Seen:
    """What the bot knows of one rotation at its first decision."""

    hand: frozenset[str]  # as dealt
    turned: str | None  # the face-up card as dealt (tiercon), None where there is none
    opponent_played: frozenset[str]  # cards the opponent played from its dealt hand before


def _relabel(cards: frozenset[str] | set[str], permutation: str) -> frozenset[str]:
    table = suit_map(permutation)
    return frozenset(cards) if table is None else frozenset(table.get(c, c) for c in cards)


def _first_decision(setup: MatchSetup, seat: int, rng: random.Random) -> tuple[Seen, frozenset[str]]:
    """Play the other seat at random up to ``seat``'s first decision: what it sees then, and
    (for the check) its opponent's dealt hand."""
    state = setup.new_state()
    dealt = state.observation(seat)
    opponent_hand = frozenset(state.observation(1 - seat)["hand"])
    while state.current_player != seat:
        state.apply(rng.choice(state.legal_actions()))
    seen = state.observation(seat)
    played: frozenset[str] = frozenset()
    if seen.get("stock") == dealt.get("stock"):  # nothing drawn yet: the opponent played from its deal
        # (or the face-up card, which tiercon's exchange puts in a hand)
        played = frozenset(card for who, card in seen.get("trick") or []
                           if who != seat and card != dealt.get("turned"))
    return Seen(frozenset(dealt["hand"]), dealt.get("turned"), played), opponent_hand


def _candidates(first: Seen, second: Seen) -> list[str]:
    """The permutations sigma (rotation-0 suits to rotation-1 suits) that fit what the bot saw."""
    out = []
    for sigma in PERMUTATIONS:
        mine_before = _relabel(first.hand, sigma)  # = the opponent's dealt hand now
        if mine_before & second.hand or not second.opponent_played <= mine_before:
            continue
        if not _relabel(first.opponent_played, sigma) <= second.hand:
            continue
        if first.turned is not None and _relabel({first.turned}, sigma) != {second.turned}:
            continue
        out.append(sigma)
    return out


def known_share(game: str, groups: int = GROUPS) -> tuple[int, int, float]:
    """(sets where the memorising bot knows its opponent's whole dealt hand at its first
    decision of rotation 1, sets, mean permutations left of 24): two bots, duplicate, the
    arena's deals."""
    schedule = round_robin(["memo", "other"], 2 * groups, seed=SEED, duplicate=True, key=KEY)
    by_group: dict[int, list] = {}
    for match in schedule:
        by_group.setdefault(match.deal_group, []).append(match)
    known = left = 0
    for group, matches in sorted(by_group.items()):
        matches.sort(key=lambda m: m.rotation)
        assert len(matches) == 2 and matches[0].seats == matches[1].seats[::-1]
        views = []
        for match in matches:
            setup = MatchSetup(
                f"leak-{group}-{match.rotation}", game, {}, match.seed,
                tuple(SeatBot(i + 1, name) for i, name in enumerate(match.seats)),
                suits=deal_suits(SEED, group, match.rotation, KEY),
            )
            rng = random.Random(f"{group}/{match.rotation}")  # the opponent's moves before the bot's first
            views.append(_first_decision(setup, match.seats.index("memo"), rng))
        (first, _), (second, opponent_now) = views
        candidates = _candidates(first, second)
        left += len(candidates)
        hands = {_relabel(first.hand, sigma) for sigma in candidates}
        assert opponent_now in hands, (game, group)  # the truth always fits: the inference is sound
        known += hands == {opponent_now}
    return known, len(by_group), left / len(by_group)


@pytest.mark.parametrize("game", ["tiercon", "regicide", "fool"])
def test_the_doc_states_the_measured_share(game: str) -> None:
    known, sets, left = known_share(game)
    assert sets == GROUPS
    share = f"{known / sets:.0%}"
    print(f"{game}: the memorising bot knows its opponent's hand in {known} of {sets} sets ({share}); "
          f"permutations left: {left:.1f} of 24 on average")
    text = " ".join(DOC.read_text().split())
    row = re.search(rf"\| {game} \| (\d+) of (\d+) \((\d+)%\) \| ([\d.]+) \|", text)
    assert row is not None, f"docs/tournaments.md has no row for {game} in the duplicate leak table"
    assert (int(row[1]), int(row[2]), f"{row[3]}%", row[4]) == (known, sets, share, f"{left:.1f}"), row[0]


def test_the_doc_says_when_to_turn_duplicate_off() -> None:
    text = " ".join(DOC.read_text().split())
    assert "knows its opponent's whole hand" in text
    assert "turn `duplicate` off" in text.lower()
    assert "2-player games" in text
