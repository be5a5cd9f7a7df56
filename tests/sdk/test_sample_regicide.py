"""Régicide's world sampler (Regicide.sample_state): on thousands of positions of random and
heuristic playouts (every seat count, teams, both tie options), a sampled world shows the seat
exactly its observation, puts the turned card with its opener, respects every failure to
follow suit (checked here from the deal's history, not from the sampler's constraints), hides
other cards than the real ones, and plays on legally to the game's end; on small positions
every consistent deal is enumerated by brute force (through new_state(decks=...) and apply)
and the sampler's draws pass a chi-square test; a malformed observation is one clear error."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from typing import Any

import pytest
from scipy.stats import chisquare

from atout.bot import Observation
from atout.bots.regicide import RegicideHeuristicBot
from atout.games import IllegalAction, new_game
from atout.games.core import JOKERS
from atout.games.regicide import DECK, Regicide, RegicideState, _plan


def through_json(obs: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(obs))  # the sampler gets what a bot gets, nothing more


def hidden_part(state: RegicideState, seat: int) -> tuple[frozenset[str], ...]:
    """What ``seat`` cannot see: the other hands, the stock, the cards set aside."""
    others = [frozenset(h) for s, h in enumerate(state.hands) if s != seat]
    return (*others, frozenset(state.stock), frozenset(state.aside))


def check_obligations(world: RegicideState, obs: dict[str, Any]) -> None:
    """Every seat's holdings in ``world``, rebuilt trick by trick from the deal's history, had
    no card of the led suit whenever the seat played another suit card to a suit card led; the
    turned card is with its opener until played."""
    n = obs["players"]
    plays = [(who, action[5:]) for who, action in obs["deal_history"] if action.startswith("play ")]
    held = {s: set(world.hands[s]) | {c for who, c in plays if who == s} for s in range(n)}
    trick: list[str] = []
    for who, card in plays:
        led = trick[0] if trick else None
        if led is not None and led not in JOKERS and card not in JOKERS and card[1] != led[1]:
            assert not [c for c in held[who] if c[1] == led[1]], (who, card, led, held[who])
        held[who].remove(card)
        trick = [] if len(trick) + 1 == n else [*trick, card]
    turned, opener = obs["turned"], obs["opener"]
    if turned is not None and turned not in {c for _, c in plays}:
        assert turned in world.hands[opener]


def play_to_the_end(state: RegicideState, rng: random.Random) -> None:
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))  # raises on an illegal action
    assert state.current_player is None and max(state.scores) >= 50


# (players, options, games, stop at one ply in ...): about 25 positions per game
CONFIGS = [(2, {}, 14, 8), (3, {}, 11, 16), (4, {}, 10, 32), (4, {"teams": True}, 11, 14),
           (3, {"tie": "share"}, 11, 16), (2, {"tie": "share"}, 14, 8)]


@pytest.mark.parametrize(
    ("players", "options", "games", "every"), CONFIGS,
    ids=["2p", "3p", "4p", "teams", "3p-share", "2p-share"])
def test_sampled_worlds_fit_the_observation_and_play_on(
    players: int, options: dict[str, Any], games: int, every: int
) -> None:
    game = new_game("regicide", players=players, **options)
    assert isinstance(game, Regicide)
    positions = uncertain = differ = 0
    for seed in range(games):
        rng = random.Random(seed)
        state = game.new_state(seed=seed)
        bots = {}
        for s in range(players):  # a heuristic bot in some seats, random play in the others
            if (seed + s) % 2:
                bots[s] = RegicideHeuristicBot()
                bots[s].rng = random.Random(seed * 10 + s)
        while True:
            # stop at random plies, and at the end of the game
            if state.is_terminal or rng.randrange(every) == 0:
                positions += 1
                acting = state.current_player if state.current_player is not None else rng.randrange(players)
                other = (acting + 1 + rng.randrange(players - 1)) % players
                for seat in (acting, other):
                    obs = through_json(state.observation(seat))
                    for k in range(2):
                        world = game.sample_state(through_json(obs), rng)
                        assert world.observation(seat) == obs
                        check_obligations(world, obs)
                        # another deal is possible when two places hide cards from the seat
                        if sum(map(bool, hidden_part(state, seat))) > 1:
                            uncertain += 1
                            differ += hidden_part(world, seat) != hidden_part(state, seat)
                        if seat == acting and k == 0 and rng.randrange(3) == 0:
                            play_to_the_end(world, rng)
            if state.is_terminal:
                break
            to_act = state.current_player
            assert to_act is not None
            legal = state.legal_actions()
            if to_act in bots:
                action = bots[to_act].act(Observation(state.observation(to_act), legal))
            else:
                action = rng.choice(legal)
            state.apply(action)
    assert positions > 250
    print(f"{players}p {options}: {positions} positions, {differ} of {uncertain} worlds not the real one")
    assert differ > uncertain * 0.8, (differ, uncertain)


# -- uniformity over the consistent deals ---------------------------------------------------


def deck_for(
    n: int, dealer: int, opener: int, turned: str, full: dict[int, list[str]], aside: list[str]
) -> list[str]:
    """A deck from which the engine deals seat s the cards ``full[s]`` (the turned card to its
    opener), as RULES.md deals: 9 each from the dealer's left, the turned card, then the rest
    clockwise skipping full hands, then the cards set aside."""
    queues = {s: [c for c in full[s] if c != turned] for s in range(n)}
    deck = [queues[(dealer + 1 + i) % n].pop() for i in range(9 * n)]
    deck.append(turned)
    held = [9 + (s == opener) for s in range(n)]
    while any(h < 42 // n for h in held):
        for offset in range(1, n + 1):
            s = (dealer + offset) % n
            if held[s] < 42 // n:
                deck.append(queues[s].pop())
                held[s] += 1
    return deck + aside


Deal = tuple[frozenset[str], ...]  # the other hands and the cards set aside


def every_consistent_deal(game: Regicide, obs: dict[str, Any]) -> tuple[list[Deal], int]:
    """Brute force: every assignment of the unseen cards to the other hands and the cards set
    aside, kept when the deal's history replays through the engine from it and the seat's
    observation is the same; and the number of assignments tried."""
    n, seat, hist = obs["players"], obs["seat"], obs["deal_history"]
    turned, opener = obs["turned"], obs["opener"]
    played = {s: [a[5:] for who, a in hist if who == s and a.startswith("play ")] for s in range(n)}
    seen = set(obs["hand"]) | {c for p in played.values() for c in p} | {turned}
    unseen = [c for c in DECK if c not in seen]
    others = [s for s in range(n) if s != seat]
    with_turned = opener != seat and turned not in played[opener]
    counts = [obs["hand_sizes"][s] - (s == opener and with_turned) for s in others] + [obs["aside"]]

    def assignments(i: int, left: list[str]) -> Any:
        if i == len(counts):
            yield ()
            return
        for pick in itertools.combinations(left, counts[i]):
            for rest in assignments(i + 1, [c for c in left if c not in pick]):
                yield (pick, *rest)

    found, tried = [], 0
    for assign in assignments(0, unseen):
        tried += 1
        full = {s: list(played[s]) for s in range(n)}
        full[seat] += obs["hand"]
        for s, cards in zip(others, assign, strict=False):
            full[s] += cards
        if with_turned:
            full[opener].append(turned)
        state = game.new_state(decks=[deck_for(n, obs["dealer"], opener, turned, full, list(assign[-1]))],
                               dealer=obs["dealer"])
        try:
            for who, action in hist:
                assert state.current_player == who
                state.apply(action)
        except IllegalAction:
            continue
        if state.observation(seat) == obs:
            found.append(tuple(frozenset(a) for a in assign))
    assert tried == math.factorial(len(unseen)) // math.prod(math.factorial(c) for c in counts)
    return found, tried


def late_position(players: int, options: dict[str, Any], seed: int, left: int) -> dict[str, Any]:
    """The acting seat's observation in the first deal of a random playout, once every hand
    holds at most ``left`` cards."""
    game = new_game("regicide", players=players, **options)
    state = game.new_state(seed=seed, dealer=seed % players)
    rng = random.Random(seed)
    while not (state.phase in ("play", "choose") and max(map(len, state.hands)) <= left):
        state.apply(rng.choice(state.legal_actions()))
    assert state.deal == 1 and state.current_player is not None
    return through_json(state.observation(state.current_player))


# (players, options, seed, cards left per hand): the consistent deals found, of the deals tried
UNIFORM = [
    ((3, {}, 1, 3), (10, 10)),  # no failure to follow suit shows: every split of 5 cards
    ((3, {}, 2, 3), (10, 20)),  # a void rules half of them out
    ((3, {}, 4, 2), (3, 6)),
    ((4, {}, 17, 2), (30, 2520)),  # voids leave 30 of 2520
    ((4, {"teams": True}, 29, 1), (36, 60)),  # three hands of one card and two cards set aside
    ((2, {}, 5, 4), (1, 1)),  # two players, no card aside: the other hand is known
]


@pytest.mark.slow
@pytest.mark.parametrize(("position", "sizes"), UNIFORM, ids=[f"{p[0]}p-seed{p[2]}" for p, _ in UNIFORM])
def test_worlds_are_drawn_uniformly_among_the_consistent_deals(
    position: tuple[int, dict[str, Any], int, int], sizes: tuple[int, int]
) -> None:
    players, options, seed, left = position
    game = new_game("regicide", players=players, **options)
    assert isinstance(game, Regicide)
    obs = late_position(players, options, seed, left)
    every, tried = every_consistent_deal(game, obs)
    assert (len(every), tried) == sizes
    rng = random.Random(0)
    seat = obs["seat"]
    drawn: Counter[Deal] = Counter()
    for _ in range(100 * len(every)):
        world = game.sample_state(obs, rng)
        others = (frozenset(h).difference([obs["turned"]]) for s, h in enumerate(world.hands) if s != seat)
        drawn[(*others, frozenset(world.aside))] += 1
    assert set(drawn) <= set(every)
    if len(every) > 1:
        assert chisquare([drawn[d] for d in every]).pvalue > 0.01, sorted(drawn.values())


# -- what else the sampler does ---------------------------------------------------------------


def test_every_phase_and_a_later_deal_are_sampled() -> None:
    """Before the trump is opened (the stock unseen, its top card the one to be turned), after a
    turned joker, in a later deal with points carried, and once the game is over."""
    game = new_game("regicide", players=4)
    assert isinstance(game, Regicide)
    rng = random.Random(3)
    decks = [[*DECK[:36], "RJ", "BJ", *DECK[36:40]]]  # a joker on top of the stock
    state = game.new_state(seed=3, decks=decks, dealer=0)
    state.apply("pass")
    obs = through_json(state.observation(2))
    tops = Counter(game.sample_state(obs, rng).stock[0] for _ in range(400))
    assert len(tops) == 42 - 9  # any card seat 2 does not hold may be the one to be turned
    state.apply("open")
    assert state.phase == "name_trump" and state.turned == "RJ"
    obs = through_json(state.observation(2))
    for _ in range(20):
        world = game.sample_state(obs, rng)
        assert "RJ" in world.hands[1] and "BJ" not in world.hands[2] and world.observation(2) == obs
    phases, deals, terminal = set(), set(), 0
    while not state.is_terminal:
        if rng.randrange(8) == 0 or state.phase != "play":
            seat = rng.randrange(4)
            obs = through_json(state.observation(seat))
            world = game.sample_state(obs, rng)
            assert world.observation(seat) == obs
            phases.add(state.phase)
        deals.add(state.deal)
        state.apply(rng.choice(state.legal_actions()))
    for seat in range(4):
        obs = through_json(state.observation(seat))
        world = game.sample_state(obs, rng)
        assert world.observation(seat) == obs and world.is_terminal and world.ranking == state.ranking
        terminal += 1
    assert phases == {"open", "name_trump", "play", "choose"} and len(deals) > 3 and terminal == 4


def test_one_observation_is_planned_once() -> None:
    game = new_game("regicide", players=3)
    assert isinstance(game, Regicide)
    obs = late_position(3, {}, 2, 5)
    game.sample_state(obs, random.Random(1))
    hits = _plan.cache_info().hits
    for seed in range(5):
        game.sample_state(through_json(obs), random.Random(seed))
    assert _plan.cache_info().hits == hits + 5


def test_a_malformed_observation_is_one_clear_error() -> None:
    game = new_game("regicide", players=3)
    assert isinstance(game, Regicide)
    obs = late_position(3, {}, 2, 5)
    rng = random.Random(1)
    merde = through_json(new_game("merde", players=3).new_state(seed=1).observation(0))
    cases: list[tuple[Any, str]] = [
        (merde, r"^not a regicide observation \(game 'merde'\)$"),
        ([1, 2], r"^not a regicide observation \(game 'list'\)$"),
        ({k: v for k, v in obs.items() if k not in ("deal_history", "hand")},
         r"^the regicide observation lacks deal_history, hand$"),
        (through_json(new_game("regicide", players=2).new_state(seed=1).observation(0)),
         r"^an observation of 2 players \(teams: False\) for a game of 3 \(teams: False\)$"),
        ({**obs, "hand": obs["hand"][1:]},
         r"^seat \d holds and played 13 cards this deal, but the deal gives it 14$"),
        ({**obs, "deal_history": [*obs["deal_history"], [0, "dance"]]},
         r"^the observation's deal_history does not replay: "),
        ({**obs, "deal_history": [*obs["deal_history"][:-1], [9, "keep"]]},
         r"^deal_history holds \[9, 'keep'\]"),
        ({**obs, "tricks_won": [9, 0, 0], "inverted": not obs["inverted"]},
         r"^the regicide observation does not follow from its deal_history: inverted, tricks_won$"),
        ({**obs, "hand": None}, r"^malformed regicide observation: "),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            game.sample_state(bad, rng)
    teams = new_game("regicide", players=4, teams=True)
    four = through_json(new_game("regicide", players=4).new_state(seed=1).observation(0))
    wrong = r"^an observation of 4 players \(teams: False\) for a game of 4 \(teams: True\)$"
    with pytest.raises(ValueError, match=wrong):
        teams.sample_state(four, rng)
