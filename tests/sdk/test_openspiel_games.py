"""atout.openspiel: the four games as OpenSpiel python games, checked by OpenSpiel itself
(``pyspiel.random_sim_test``, its IS-MCTS bot) and against the engines."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

import atout.openspiel as aos
from atout.encoding import encoding_for
from atout.games import new_game
from atout.games.core import ranking_from_scores

# Every game at every seat count (and régicide's teams). Merde's long default games are played
# once, at 4 players; its other counts play 3 deals. The LONG ones play one game, the others two.
CONFIGS = [
    "merde(players=3,deals=3)", "merde(players=4)", "merde(players=5,deals=3)", "merde(players=6,deals=3)",
    "merde(players=7,deals=3)",
    "tiercon(players=2)",
    "regicide(players=2)", "regicide(players=3)", "regicide(players=4)", "regicide(players=4,teams=True)",
    "fool(players=2)", "fool(players=3)", "fool(players=4)", "fool(players=5)", "fool(players=6,deck=52)",
]
LONG = {
    "regicide(players=3)", "regicide(players=4)", "regicide(players=4,teams=True)", "fool(players=6,deck=52)",
}


def _load(config: str) -> Any:
    return pyspiel.load_game(aos.PREFIX + config)


def _play_random(state: Any, rng: random.Random, until: int | None = None) -> None:
    """Random moves (chance by its probabilities) to the end, or until ``until`` decisions."""
    decisions = 0
    while not state.is_terminal() and (until is None or decisions < until):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
            decisions += 1


@pytest.mark.parametrize("config", CONFIGS)
def test_random_simulations_pass_openspiel_checks(config: str) -> None:
    """OpenSpiel's own checks of a game (those its python games' tests run): legal actions
    sorted and in range, chance outcomes, clones, serialization, tensors' sizes, returns."""
    game = _load(config)
    pyspiel.random_sim_test(game, num_sims=1 if config in LONG else 2, serialize=True, verbose=False)


def test_the_game_is_the_engine_with_the_encoding() -> None:
    game = _load("merde(players=5,deals=3)")
    enc = encoding_for("merde", 5, deals=3)
    assert game.num_players() == 5
    assert game.num_distinct_actions() == len(enc.actions)
    assert game.information_state_tensor_size() == enc.size
    assert game.observation_tensor_size() == enc.observation_size
    assert game.max_chance_outcomes() == 52
    assert game.max_game_length() == 5 * (2 + 3 + 4)  # bids and plays of deals of 1, 2 and 3 cards
    assert (game.min_utility(), game.max_utility(), game.get_type().utility) == (
        -1.0, 1.0, pyspiel.GameType.Utility.ZERO_SUM,
    )
    # merde's deals=0 is the engine's default for the seat count
    assert _load("merde(players=4)").get_parameters()["deals"] == 0
    assert aos.AtoutGame.__subclasses__()  # one class per game
    assert _load("merde(players=4)").max_game_length() == 4 * sum(1 + d for d in range(1, 14))


def test_a_bad_option_is_the_engines_one_line_error() -> None:
    with pytest.raises(ValueError, match="option 'players': 9 is not allowed for merde; allowed: 3, 4, 5"):
        _load("merde(players=9)")
    with pytest.raises(ValueError, match="option 'teams': True needs 4 players"):
        _load("regicide(teams=True)")


def test_the_deal_is_drawn_at_chance_nodes_and_dealt_by_the_engine() -> None:
    """The first dealer, then the deck card by card (uniform over the cards left); the engine
    deals that deck: its hands are those of new_state(decks=[deck], dealer=...)."""
    game = _load("tiercon(players=2)")
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)
    rng = random.Random(3)
    for left in range(32, 0, -1):
        outcomes = state.chance_outcomes()
        assert len(outcomes) == left and all(p == pytest.approx(1 / left) for _, p in outcomes)
        state.apply_action(rng.choice(outcomes)[0])
    assert not state.is_chance_node()
    deck = [state.action_to_string(pyspiel.PlayerId.CHANCE, a).split()[1] for a in state.history()[1:]]
    assert sorted(deck) == sorted(new_game("tiercon").new_state(seed=0).FULL_DECK)
    reference = new_game("tiercon").new_state(decks=[deck], dealer=1)
    for seat in (0, 1):
        assert state.engine.observation(seat) == reference.observation(seat)
    assert state.current_player() == reference.current_player


def test_every_deal_starts_with_chance_nodes() -> None:
    """A deal starts inside the action that ends the previous one: that action waits while the
    next deck is drawn. Merde with 3 deals: 1 + 3 x 52 chance outcomes in the history."""
    game = _load("merde(players=3,deals=3)")
    state = game.new_initial_state()
    _play_random(state, random.Random(5))
    chance = [a for a in state.full_history() if a.player == pyspiel.PlayerId.CHANCE]
    assert len(chance) == 1 + 3 * 52
    assert state.engine.deal == 3 and state.engine.is_terminal
    assert len(state.history()) == len(chance) + len(state.engine.history)


def test_returns_are_rank_based_and_zero_sum() -> None:
    assert aos.rank_returns([1, 2, 3]) == [1.0, 0.0, -1.0]
    assert aos.rank_returns([1, 2, 2, 2]) == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])  # fool's one winner
    assert aos.rank_returns([1, 1]) == [0.0, 0.0]
    state = _load("fool(players=4)").new_initial_state()
    assert state.returns() == [0.0] * 4
    _play_random(state, random.Random(2))
    assert state.returns() == aos.rank_returns(list(state.engine.ranking))
    assert sum(state.returns()) == pytest.approx(0.0)


@pytest.mark.parametrize(
    "config", ["merde(players=4,deals=3)", "tiercon", "regicide(players=3)", "fool(players=3)"]
)
def test_resample_from_infostate_keeps_the_information_state(config: str) -> None:
    """As OpenSpiel's ResampleInfostateTest checks: the same information state (string and
    tensor) and player to act, for every seat; the worlds differ (the next seat's hand); a world
    plays on to the end, its later deals drawn at chance nodes again."""
    game = _load(config)
    n = game.num_players()
    state = game.new_initial_state()
    rng = random.Random(11)
    sampler = pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    checked = varied = 0
    while not state.is_terminal() and checked < 5:
        _play_random(state, rng, until=rng.randrange(1, 6))
        if state.is_terminal() or state.is_chance_node():
            continue
        player = state.current_player()
        for seat in range(n):
            world = state.resample_from_infostate(seat, sampler)
            assert world.information_state_string(seat) == state.information_state_string(seat)
            assert world.information_state_tensor(seat) == state.information_state_tensor(seat)
            assert world.current_player() == player
        worlds = [state.resample_from_infostate(player, sampler) for _ in range(4)]
        assert all(w.legal_actions() == state.legal_actions() for w in worlds)
        hands = {tuple(w.engine.observation((player + 1) % n)["hand"]) for w in worlds}
        varied += len(hands) > 1  # (late in a deal a seat may know the other hands)
        checked += 1
    assert checked >= 3 and varied >= 1
    _play_random(world, rng)
    assert world.is_terminal()


def test_resample_refuses_a_chance_node() -> None:
    state = _load("tiercon").new_initial_state()
    with pytest.raises(ValueError, match="only at a decision or terminal node"):
        state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))


def test_strings_and_tensors_are_the_seats_views() -> None:
    game = _load("regicide(players=2)")
    state = game.new_initial_state()
    _play_random(state, random.Random(4), until=5)
    enc = encoding_for("regicide", 2)
    for seat in (0, 1):
        obs = state.engine.observation(seat)
        assert state.information_state_tensor(seat) == pytest.approx(enc.tensor(obs))
        assert state.observation_tensor(seat) == pytest.approx(enc.observation_tensor(obs))
        # the strings are the observation as JSON: what the seat may know, nothing else
        assert json.loads(state.information_state_string(seat)) == obs and obs["deal_history"]
        del obs["deal_history"]
        assert json.loads(state.observation_string(seat)) == obs
    # the named parts of the information-state tensor are the encoding's sections
    from open_spiel.python.observation import make_observation

    observation = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    observation.set_from(state, 0)
    assert [(name, len(part)) for name, part in observation.dict.items()] == list(enc.sections)
    observation = make_observation(game)
    observation.set_from(state, 0)
    assert [(name, len(part)) for name, part in observation.dict.items()] == list(enc.observation_sections)


class _ScoreEvaluator(mcts.Evaluator):
    """A leaf's value without a rollout: the seats' rank-based returns by the running scores."""

    def evaluate(self, state: Any) -> list[float]:
        return aos.rank_returns(ranking_from_scores(state.engine.scores))

    def prior(self, state: Any) -> list[tuple[int, float]]:
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


@pytest.mark.parametrize(
    "config", ["merde(players=3,deals=4)", "tiercon", "regicide(players=2)", "fool(players=2)"]
)
def test_openspiel_ismcts_plays_a_whole_game(config: str) -> None:
    """OpenSpiel's IS-MCTS bot (python), in every seat, through resample_from_infostate."""
    game = _load(config)
    rs = np.random.RandomState(7)
    bot = ismcts.ISMCTSBot(game, _ScoreEvaluator(), uct_c=2.0, max_simulations=8, random_state=rs)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rs.choice(outcomes, p=probs)))
        else:
            action = int(bot.step(state))
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions += 1
    assert decisions > 10
    assert state.returns() == aos.rank_returns(list(state.engine.ranking))
