"""atout.search: PIMC and ISMCTS play every game legally and reproducibly, within their time,
better than random; built-in bot specs with parameters (``pimc:worlds=64``)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from math import comb
from typing import Any

import pytest

from atout import Bot, MatchInfo, Observation
from atout.bots import BOTS, RandomBot, bot_factory
from atout.cli import main
from atout.games import GAMES, Game, State, new_game
from atout.loading import BotLoadError, load_bot
from atout.local import play
from atout.search import IsmctsBot, PimcBot, SearchBot, playout_values, random_rollout


def test_every_game_samples_its_worlds() -> None:
    # the search bots' default sampler: the engine's own, which every game implements
    for game_id, cls in GAMES.items():
        assert cls.sample_state is not Game.sample_state, game_id


def search_bots(bots: Sequence[Bot]) -> list[SearchBot]:
    return [b for b in bots if isinstance(b, SearchBot)]


# game, players, options: every game, the smallest and largest tables, short games
TABLES = [
    ("merde", 3, {"deals": 2}),
    ("merde", 7, {"deals": 1}),
    ("tiercon", 2, {}),
    ("regicide", 3, {}),
    ("regicide", 4, {"teams": True}),
    ("fool", 2, {}),
    ("fool", 6, {}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players", "options"), TABLES, ids=[f"{g}-{n}" for g, n, _ in TABLES])
def test_whole_games_legal_and_reproducible(game: str, players: int, options: dict[str, Any]) -> None:
    def bots() -> list[Bot]:
        # both search bots at the table, small budgets and no clock: the counts decide
        return [PimcBot(worlds=2, time_ms=0), IsmctsBot(iterations=12, time_ms=0)] + [
            RandomBot() for _ in range(players - 2)
        ]

    first_bots, second_bots = bots(), bots()
    first = play(game, first_bots, seed=5, **options)  # each bot seeded "5/<seat>"
    second = play(game, second_bots, seed=5, **options)
    assert first.history == second.history  # the same seed: the same actions
    for bot in search_bots(first_bots):
        assert bot.stats["searches"] > 0
        # every sampled world fitted the observation, and no decision fell back to the heuristic
        assert bot.stats["bad_worlds"] == 0 and bot.stats["fallbacks"] == 0, bot.stats


def test_a_different_seed_plays_differently() -> None:
    games = [play("fool", [PimcBot(worlds=2, time_ms=0), RandomBot()], seed=s) for s in (1, 2)]
    assert games[0].history != games[1].history


# -- what a playout is worth -----------------------------------------------------------------


def test_playout_values_of_a_finished_game_are_pairwise_results() -> None:
    state = new_game("merde", players=3, deals=1).new_state(seed=2)
    rng = random.Random(1)
    random_rollout(state, rng)  # one deal: the game's end
    assert state.is_terminal
    values = playout_values(state)
    places = state.ranking
    for seat, value in enumerate(values):
        others = [p for s, p in enumerate(places) if s != seat]
        expected = sum(1.0 if places[seat] < p else 0.5 if places[seat] == p else 0.0 for p in others) / 2
        assert value == expected


def test_playout_values_of_a_game_going_on_follow_the_totals() -> None:
    state = new_game("tiercon").new_state(seed=4)
    random_rollout(state, random.Random(3))  # to the end of the first deal only
    assert not state.is_terminal and state._deals_started == 2
    values = playout_values(state)
    scores = state.scores
    assert 0 < values[0] < 1 and values[0] + values[1] == pytest.approx(1.0)
    assert (values[0] > 0.5) == (scores[0] > scores[1]) or scores[0] == scores[1]


# -- specs ---------------------------------------------------------------------------------


def test_builtin_specs_with_parameters() -> None:
    assert BOTS["pimc"] is PimcBot and BOTS["ismcts"] is IsmctsBot
    assert load_bot("pimc") is PimcBot and bot_factory("ismcts") is IsmctsBot
    bot = load_bot("pimc:worlds=64,rollout=heuristic")()
    assert isinstance(bot, PimcBot)
    assert bot.params == {"worlds": 64, "playouts": 1, "time_ms": 400, "rollout": "heuristic"}
    other = bot_factory("ismcts: iterations=2000 , exploration=1.5")()
    assert isinstance(other, IsmctsBot)
    assert other.params["iterations"] == 2000 and other.params["exploration"] == 1.5
    assert bot_factory("random") is RandomBot and bot_factory("heuristic:") is BOTS["heuristic"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("pimc:wrolds=3", "unknown key 'wrolds'; pimc takes worlds (default 24), playouts (default 1), "
                          "time_ms (default 400), rollout (auto or random or heuristic; default auto)"),
        ("pimc:worlds=many", "worlds must be an integer >= 0, not 'many'; pimc takes worlds"),
        ("pimc:playouts=0", "playouts must be an integer >= 1, not 0; pimc takes"),
        ("pimc:rollout=smart", "rollout must be auto or random or heuristic, not 'smart'"),
        ("pimc:worlds", "'worlds' is not key=value; pimc takes"),
        ("pimc:worlds=1,worlds=2", "'worlds' is given twice"),
        ("pimc:worlds=0,time_ms=0", "pimc needs a bound: worlds or time_ms above 0"),
        ("ismcts:exploration=-1", "exploration must be a number >= 0, not -1.0; ismcts takes iterations"),
        ("ismcts:iterations=0,time_ms=0", "ismcts needs a bound"),
        ("random:worlds=3", "unknown key 'worlds'; random takes no parameters"),
    ],
)  # fmt: skip
def test_bad_specs_are_one_line(spec: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    for load in (bot_factory, load_bot):
        with pytest.raises(BotLoadError) as info:
            load(spec)
        assert message in str(info.value) and "\n" not in str(info.value)
    assert main(["validate", spec, "--game", "tiercon", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bot_factory_knows_only_builtin_bots() -> None:
    with pytest.raises(BotLoadError) as info:
        bot_factory("atout.bots:RandomBot")
    assert "'atout.bots' is not a built-in bot (random, heuristic, pimc, ismcts)" in str(info.value)


def test_keyword_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown parameter 'wolds'; pimc takes worlds"):
        PimcBot(wolds=3)
    with pytest.raises(ValueError, match=r"worlds must be an integer >= 0, not 2\.5"):
        PimcBot(worlds=2.5)


# -- strength ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_small_pimc_beats_random_at_tiercon() -> None:
    # 20 games, PIMC (4 worlds a decision: it wins 19 of these 20) in seat 0, then seat 1,
    # alternately. Were it no better than random, it would win each game with probability at most
    # 1/2 (a draw is no win), and 17 wins or more out of 20 with probability
    # sum(C(20, k), k >= 17) / 2^20 = 1351 / 1048576 = 0.13%.
    games, needed = 20, 17
    assert sum(comb(games, k) for k in range(needed, games + 1)) / 2**games < 0.0013
    wins = 0
    for g in range(games):
        bots: list[Bot] = [PimcBot(worlds=4, time_ms=0), RandomBot()]
        if g % 2:
            bots.reverse()
        result = play("tiercon", bots, seed=100 + g)
        wins += result.ranking[g % 2] == 1 and result.ranking[1 - g % 2] == 2
    assert wins >= needed


# -- time -------------------------------------------------------------------------------------


class FakeClock:
    """A clock that moves ``step`` seconds at every reading."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def a_decision(game_id: str = "regicide", seed: int = 1) -> tuple[State, Observation]:
    """A position with several legal actions, reached by random play."""
    state = new_game(game_id).new_state(seed=seed)
    rng = random.Random(seed)
    while len(state.legal_actions()) < 3 or state.history == []:
        state.apply(rng.choice(state.legal_actions()))
    seat = state.current_player
    assert seat is not None
    return state, Observation(state.observation(seat), state.legal_actions())


def searcher(cls: Callable[..., SearchBot], state: State, **params: Any) -> SearchBot:
    bot = cls(sampler=lambda game, obs, rng: state.clone(), **params)
    seat = state.current_player or 0
    bot.match = MatchInfo("t", state.game.id, seat, state.players, dict(state.game.options))
    bot.rng.seed(1)
    return bot


@pytest.mark.parametrize("cls", [PimcBot, IsmctsBot])
def test_the_search_stops_when_its_time_is_up(cls: Callable[..., SearchBot]) -> None:
    state, observation = a_decision()
    unbounded = "worlds" if cls is PimcBot else "iterations"
    bot = searcher(cls, state, **{unbounded: 0, "time_ms": 50})
    bot.cpu_clock = FakeClock(0.010)  # time_ms counts the thread's CPU time: 10 ms a reading
    bot.clock = wall = FakeClock(0.010)
    bot.act(observation)
    # Read at the start (10 ms), then after each world or iteration: 10, 20, 30, 40 ms spent go
    # on, 50 ms stops: five done. No deadline: the wall clock is not read.
    assert bot.stats["last"] == 5 and wall.now == 0
    # The observation's deadline (wall time): at most half of it (30 ms here): three done.
    bot.cpu_clock, bot.clock = FakeClock(0.010), FakeClock(0.010)
    bot.act(Observation(observation.raw, observation.legal_actions, deadline_ms=60))
    assert bot.stats["last"] == 3
    # a count budget stops first when it is smaller
    bot = searcher(cls, state, **{unbounded: 3, "time_ms": 50})
    bot.cpu_clock = FakeClock(0.001)
    bot.act(observation)
    assert bot.stats["last"] == 3


@pytest.mark.parametrize("cls", [PimcBot, IsmctsBot])
def test_the_real_clock_ends_a_search_without_a_count(cls: Callable[..., SearchBot]) -> None:
    state, observation = a_decision()
    unbounded = "worlds" if cls is PimcBot else "iterations"
    bot = searcher(cls, state, **{unbounded: 0, "time_ms": 30})
    cpu_started, wall_started = time.thread_time(), time.perf_counter()
    bot.act(observation)
    cpu, wall = time.thread_time() - cpu_started, time.perf_counter() - wall_started
    # It stopped by itself, after 30 ms of CPU time and one world or iteration more at most (a
    # few milliseconds; wall time is longer on a shared machine: 5 s would be a hang).
    assert cpu >= 0.030 and wall < 5.0 and bot.stats["last"] >= 1


def test_one_legal_action_is_answered_without_a_search() -> None:
    state, observation = a_decision()
    bot = searcher(PimcBot, state)
    only = observation.legal_actions[:1]
    assert bot.act(Observation(observation.raw, only)) == only[0]
    assert bot.stats["searches"] == 0


def test_without_a_sampler_the_heuristic_bot_answers() -> None:
    def broken(game: Game[State], observation: dict[str, Any], rng: random.Random) -> State:
        raise NotImplementedError("no sampler")

    state, observation = a_decision()
    bot = searcher(PimcBot, state)
    bot.sampler = broken
    assert bot.act(observation) in observation.legal_actions
    assert bot.stats["fallbacks"] == 1


def test_heuristic_rollouts_play_the_heuristic_bot_to_the_deal_end() -> None:
    from atout.bots import MerdeHeuristicBot
    from atout.search import HeuristicRollout

    game = new_game("merde", players=4, deals=4)
    state = game.new_state(seed=6)
    for _ in range(2):  # two deals played: the third begins
        random_rollout(state, random.Random(1))
    start = state.clone()
    HeuristicRollout(game)(state, random.Random(2))
    assert state._deals_started == start._deals_started + 1 and not state.is_terminal  # not further
    replay = start.clone()
    for seat, action in state.history[len(start.history):]:
        bot = MerdeHeuristicBot()  # merde's heuristic bot draws nothing and remembers nothing
        assert bot.act(Observation(replay.observation(seat), replay.legal_actions())) == action
        replay.apply(action)
    assert PimcBot(rollout="heuristic").rollout_for(game).__class__ is HeuristicRollout


def test_run_plays_a_search_bot_from_its_spec(arena: tuple[Any, int]) -> None:
    """``atout-bot run pimc:...``'s path: the spec loaded, a real runner, a decision from the
    fake arena answered by a search in sampled worlds (the engine's sampler)."""
    import json

    from fake_arena import RunnerThread

    from atout.v1 import atout_pb2 as pb

    servicer, port = arena
    game = new_game("tiercon")
    state = game.new_state(seed=3)
    rng = random.Random(3)
    while len(state.legal_actions()) < 3 or len(state.history) < 6:
        state.apply(rng.choice(state.legal_actions()))
    seat = state.current_player
    assert seat is not None
    runner = RunnerThread(load_bot("pimc:worlds=4,time_ms=0"), port)
    try:
        conn = servicer.next_connection()
        conn.send(match_start=pb.MatchStart(match_id="m", game="tiercon", seat=seat, players=2))
        conn.send(decision=pb.DecisionRequest(
            request_id="r", match_id="m", game="tiercon", seat=seat, deadline_ms=5000,
            observation_json=json.dumps(state.observation(seat)), legal_actions=state.legal_actions(),
        ))  # fmt: skip
        answer = conn.expect("action", timeout=20)
    finally:
        runner.stop()
    assert answer.action in state.legal_actions()
    assert answer.note.decode().startswith("pimc: 4 worlds, value ")


def test_match_and_validate_take_search_specs(capsys: pytest.CaptureFixture[str]) -> None:
    # merde of one deal (one card each): whole commands, cheaply
    argv = ["--game", "merde", "--option", "deals=1"]
    assert main(["match", "pimc:worlds=4,time_ms=0", "heuristic", *argv, "--games", "8", "--players=3"]) == 0
    out = capsys.readouterr().out
    assert "pimc:worlds=4,time_ms=0 (A) vs heuristic (B): merde, 3 players" in out and "games 6" in out
    assert main(["validate", "ismcts:iterations=20,time_ms=0", *argv, "--games", "1"]) == 0
    out = capsys.readouterr().out
    assert "exceptions       0" in out and "illegal actions  0" in out and "same seed        yes" in out


def test_rollout_auto_plays_the_heuristic_in_regicide_and_random_elsewhere() -> None:
    """Régicide's random playouts cannot value its rule changes: pimc with them lost to the
    heuristic bot (25% of 12 games), with heuristic playouts it won 12 of 12 (docs/bots.md)."""
    from atout.games import new_game
    from atout.search import PimcBot
    from atout.search._common import HeuristicRollout, random_rollout

    bot = PimcBot()
    assert bot.params["rollout"] == "auto"
    assert isinstance(bot.rollout_for(new_game("regicide", players=2)), HeuristicRollout)
    for game in ("merde", "tiercon", "fool"):
        assert bot.rollout_for(new_game(game)) is random_rollout
    assert PimcBot(rollout="random").rollout_for(new_game("regicide", players=2)) is random_rollout


def test_a_regicide_heuristic_bot_sitting_down_mid_deal_knows_every_card_played() -> None:
    """A heuristic bot made fresh in a playout reads the cards played from deal_history; it
    remembered only the tricks it had seen itself, so in pimc's playouts it played blind."""
    import random as random_module

    from atout.bot import Observation
    from atout.bots import heuristic_bot_class
    from atout.games import new_game

    state = new_game("regicide", players=3).new_state(seed=5)
    rng = random_module.Random(5)
    while len([a for _, a in state.observation(0)["deal_history"] if a.startswith("play ")]) < 7:
        state.apply(rng.choice(state.legal_actions()))
    seat = state.current_player
    assert seat is not None
    observation = state.observation(seat)
    played = {a[5:] for _, a in observation["deal_history"] if a.startswith("play ")}
    bot = heuristic_bot_class("regicide")()
    bot.act(Observation(observation, state.legal_actions()))
    assert getattr(bot, "_played") == played and len(played) >= 7  # noqa: B009


def test_a_world_that_does_not_fit_counts_against_its_own_decision_only() -> None:
    """Bad worlds once counted over the bot's life: after a few, any later decision gave up at
    its first bad world and the heuristic played instead."""
    from atout.bot import Observation
    from atout.games import new_game
    from atout.search import PimcBot

    game = new_game("tiercon")
    real = game.new_state(seed=1)
    misfit = game.new_state(seed=2)
    while misfit.current_player == real.current_player:
        misfit.apply(misfit.legal_actions()[0])
    script = iter([misfit] * 5 + [misfit] + [real] * 100)  # decision 1: five misfits; decision 2: one

    bot = PimcBot(sampler=lambda g, o, r: next(script).clone(), worlds=3, time_ms=0)
    seat = real.current_player
    assert seat is not None
    observation = Observation(real.observation(seat), real.legal_actions())
    bot.act(observation)
    assert bot.stats["fallbacks"] == 1  # more misfits than worlds: the heuristic answered
    bot.act(observation)
    assert bot.stats["fallbacks"] == 1 and bot.stats["last"] == 3  # one misfit, then three worlds searched
