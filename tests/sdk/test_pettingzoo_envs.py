"""atout.envs: the four games as PettingZoo AEC environments pass PettingZoo's own API and seed
tests at every seat count, end with the engine's result, and render the table as text."""

from __future__ import annotations

import importlib
import random
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("pettingzoo")

import numpy as np
from pettingzoo.test import api_test, seed_test

from atout.encoding import encoding_for
from atout.envs import fool_v0, merde_v0, regicide_v0, tiercon_v0
from atout.envs._aec import rank_rewards
from atout.games import new_game

MODULES = {"merde": merde_v0, "tiercon": tiercon_v0, "regicide": regicide_v0, "fool": fool_v0}
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    *(("merde", {"players": n}) for n in range(3, 8)),
    ("tiercon", {}),
    *(("regicide", {"players": n}) for n in (2, 3, 4)),
    ("regicide", {"players": 4, "teams": True}),
    *(("fool", {"players": n}) for n in range(2, 7)),
    ("fool", {"players": 4, "deck": 52}),
]
IDS = [g + "".join(f"-{k}={v}" for k, v in kw.items()) for g, kw in CONFIGS]


@pytest.mark.filterwarnings("ignore:Observation")  # a Dict of tensor and mask, as PettingZoo's card games
@pytest.mark.parametrize(("game", "options"), CONFIGS, ids=IDS)
def test_pettingzoo_api_and_seed_tests(game: str, options: dict[str, Any]) -> None:
    module = MODULES[game]
    api_test(module.env(**options), num_cycles=25)
    seed_test(lambda: module.env(**options), num_cycles=25)


@pytest.mark.filterwarnings("ignore:Observation")
def test_api_test_through_the_end_of_a_game() -> None:
    """A one-deal merde ends within the cycles: agents leave one by one after the last card."""
    api_test(merde_v0.env(players=3, deals=1), num_cycles=20)


def play(env: Any, seed: int) -> tuple[list[str], dict[str, float], dict[str, dict[str, Any]]]:
    """A whole game by masked random actions: the actions played (as strings), the reward each
    agent got from last() at its end, and its last info."""
    env.reset(seed=seed)
    enc = env.unwrapped.encoding
    rng = random.Random(seed)
    played: list[str] = []
    rewards: dict[str, float] = {}
    infos: dict[str, dict[str, Any]] = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            rewards[agent], infos[agent] = reward, info
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        assert sorted(enc.action(int(i)) for i in legal) == sorted(info["legal_actions"])
        index = int(rng.choice(list(legal)))
        played.append(enc.action(index))
        env.step(index)
    return played, rewards, infos


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("merde", {"players": 4, "deals": 3}),
        ("tiercon", {}),
        ("regicide", {"players": 3}),
        ("fool", {"players": 4}),
    ],
)
def test_a_whole_game_ends_with_rewards_of_the_engines_result(game: str, options: dict[str, Any]) -> None:
    env = MODULES[game].env(**options)
    played, rewards, infos = play(env, seed=3)
    engine = new_game(game, **options).new_state(seed=3)  # the same deal: reset(seed=3)
    for action in played:
        engine.apply(action)
    assert engine.is_terminal
    expected = rank_rewards(list(engine.ranking))
    assert rewards == {f"player_{seat}": expected[seat] for seat in range(engine.players)}
    assert sum(rewards.values()) == pytest.approx(0.0)
    for seat in range(engine.players):
        info = infos[f"player_{seat}"]
        assert info["scores"] == engine.scores and info["ranking"] == engine.ranking
        assert info["observation"] == engine.observation(seat)
    assert env.agents == []


def test_rank_rewards_are_pairwise_and_zero_sum() -> None:
    assert rank_rewards([1, 2]) == [1.0, -1.0]
    assert rank_rewards([2, 3, 1]) == [0.0, -1.0, 1.0]
    assert rank_rewards([1, 1, 3]) == [0.5, 0.5, -1.0]
    assert rank_rewards([1, 2, 2, 2]) == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])  # fool: one winner
    assert rank_rewards([1, 2, 1, 2]) == pytest.approx([2 / 3, -2 / 3, 2 / 3, -2 / 3])  # régicide's teams


def test_reset_with_a_seed_deals_as_the_engine_and_the_raw_observation_is_in_infos() -> None:
    env = regicide_v0.env(players=3)
    env.reset(seed=7)
    state = new_game("regicide", players=3).new_state(seed=7)
    enc = encoding_for("regicide", players=3)
    for seat in range(3):
        agent = f"player_{seat}"
        assert env.infos[agent]["observation"] == state.observation(seat)
        observation = env.observe(agent)
        assert observation["observation"].tolist() == pytest.approx(enc.tensor(state.observation(seat)))
        acting = seat == state.current_player
        assert observation["action_mask"].tolist() == (
            enc.mask(state.legal_actions()) if acting else [0] * len(enc.actions)
        )
    assert env.agent_selection == f"player_{state.current_player}"
    # a reset without a seed goes on with the seed's sequence: the same in two environments
    other = regicide_v0.env(players=3)
    other.reset(seed=7)
    env.reset()
    other.reset()
    assert env.infos["player_0"] == other.infos["player_0"]
    assert env.infos["player_0"]["observation"] != state.observation(0)


def test_an_illegal_action_is_a_clear_error_and_changes_nothing() -> None:
    env = merde_v0.env(players=3, deals=2)
    env.reset(seed=1)
    agent = env.agent_selection
    before = env.infos[agent]["observation"]
    index = encoding_for("merde", players=3, deals=2).index("play As")  # bidding: no card may be played
    with pytest.raises(
        ValueError, match=r"^illegal action \d+ \('play As'\) for player_\d; legal: 0 \('bid 0'\)"
    ):
        env.step(index)
    assert env.agent_selection == agent and env.infos[agent]["observation"] == before
    with pytest.raises(AssertionError):  # PettingZoo's AssertOutOfBoundsWrapper
        env.step(10_000)
    raw = merde_v0.raw_env(players=3, deals=2)
    raw.reset(seed=1)
    with pytest.raises(ValueError, match=r"^illegal action 10000 for player_\d; legal: 0 \('bid 0'\)"):
        raw.step(10_000)


def test_render_gives_the_table_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    env = fool_v0.env(players=2, render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    assert isinstance(text, str)
    hand = env.infos["player_0"]["observation"]["hand"]
    assert "attack" in text.lower() and len(text.splitlines()) > 2
    assert hand
    human = fool_v0.env(players=2, render_mode="human")
    human.reset(seed=4)
    assert human.render() is None
    assert capsys.readouterr().out.strip() == text.strip()
    with pytest.raises(ValueError, match="render_mode 'rgb_array' is not one of: ansi, human"):
        fool_v0.env(players=2, render_mode="rgb_array")


def test_without_the_extra_the_import_says_which_pip_command() -> None:
    code = "import sys; sys.modules['pettingzoo'] = None; import atout.envs.merde_v0"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        'ImportError: atout.envs needs pettingzoo, gymnasium and numpy: pip install "atout[rl]"'
    )
    assert importlib.import_module("atout.envs.merde_v0") is merde_v0


def test_the_engine_state_does_not_hide_pettingzoos_state_method() -> None:
    """AECEnv.state() (a global view, for centralised critics) is PettingZoo's method: the engine
    state is ``env.unwrapped.engine``, so state() says it is not implemented, as PettingZoo's own."""
    env = tiercon_v0.env()
    env.reset(seed=2)
    engine = env.unwrapped.engine
    assert engine.observation(0) == new_game("tiercon").new_state(seed=2).observation(0)
    with pytest.raises(NotImplementedError):
        env.state()
