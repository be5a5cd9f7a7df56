"""The one AEC environment class behind the four games' modules (see docs/learning.md)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError:  # pragma: no cover - depends on the installed extras
    raise ImportError('atout.envs needs pettingzoo, gymnasium and numpy: pip install "atout[rl]"') from None

from ..encoding import Encoding, encoding_for, rank_rewards
from ..games import Game, State, new_game
from ..render import render_position

FLOAT32_MAX = float(np.finfo(np.float32).max)


class AtoutEnv(AECEnv[str, dict[str, Any], int]):
    """One game of Atout as a turn-based PettingZoo AEC environment.

    Agents ``player_0`` … ``player_{n-1}`` are the seats. An action is an index of
    ``encoding.actions``; the observation is ``{"observation": information-state tensor,
    "action_mask": 0/1 per index}`` (the mask is all zeros for an agent not to act), and
    ``infos[agent]["observation"]`` holds the seat's raw observation dict
    (``infos[agent]["legal_actions"]`` its legal action strings when it is to act). Rewards come at
    the end only: :func:`rank_rewards` of the final ranking (the final ``scores`` and ``ranking``
    are then in every agent's info). An illegal action raises ``ValueError``.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "atout",
        "is_parallelizable": False,
    }

    def __init__(
        self, game: str, players: int | None = None, render_mode: str | None = None, **options: Any
    ) -> None:
        super().__init__()
        self.game: Game[State] = new_game(game, players=players, **options)
        self.encoding: Encoding = encoding_for(self.game)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of: ansi, human")
        self.render_mode = render_mode
        n = self.game.players
        self.possible_agents = [f"player_{seat}" for seat in range(n)]
        self.agents: list[str] = []
        enc = self.encoding
        high = np.array([min(h, FLOAT32_MAX) for h in enc.high], dtype=np.float32)
        self._observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low=0.0, high=high, shape=(enc.size,), dtype=np.float32),
                    "action_mask": spaces.Box(low=0, high=1, shape=(len(enc.actions),), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self._action_spaces = {agent: spaces.Discrete(len(enc.actions)) for agent in self.possible_agents}
        self._seeds = random.Random()
        self.engine: State | None = None  # the game being played (atout.games): read it, never change it

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed`` deals exactly as ``game.new_state(seed=seed)``; a later
        ``reset()`` without a seed deals the next game of that seed's sequence (without any
        seed ever, the games are drawn from the system's randomness)."""
        if seed is not None:
            self._seeds = random.Random(seed)
            game_seed = seed
        else:
            game_seed = self._seeds.getrandbits(63)
        self.engine = self.game.new_state(seed=game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._update_infos()
        self.agent_selection = self._agent(self.engine.current_player)

    def _agent(self, seat: int | None) -> str:
        return self.possible_agents[seat if seat is not None else 0]

    def _update_infos(self) -> None:
        state = self.engine
        assert state is not None
        for seat, agent in enumerate(self.possible_agents):
            if agent in self.infos:
                info: dict[str, Any] = {"observation": state.observation(seat)}
                if state.current_player == seat:
                    info["legal_actions"] = state.legal_actions()
                self.infos[agent] = info

    def observe(self, agent: str) -> dict[str, Any]:
        state = self.engine
        assert state is not None
        seat = self.possible_agents.index(agent)
        enc = self.encoding
        mask = np.zeros(len(enc.actions), dtype=np.int8)
        if state.current_player == seat:
            mask[:] = enc.mask(state.legal_actions())
        tensor = np.array(enc.tensor(state.observation(seat)), dtype=np.float32)
        return {"observation": tensor, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.engine
        assert state is not None
        if action is None:
            raise ValueError(f"{agent} must act: None is only for an agent whose game is over")
        legal = state.legal_actions()
        index = int(action)
        text = self.encoding.actions[index] if 0 <= index < len(self.encoding.actions) else None
        if text not in legal:
            shown = f"{index}" if text is None else f"{index} ({text!r})"
            raise ValueError(
                f"illegal action {shown} for {agent}; legal: "
                + ", ".join(f"{self.encoding.index(a)} ({a!r})" for a in legal)
            )
        self._cumulative_rewards[agent] = 0.0
        state.apply(text)
        if state.is_terminal:
            rewards = rank_rewards(list(state.ranking))
            self.rewards = {a: rewards[seat] for seat, a in enumerate(self.possible_agents)}
            self.terminations = dict.fromkeys(self.agents, True)
        self._update_infos()
        if state.is_terminal:
            for agent_ in self.agents:
                self.infos[agent_].update(scores=list(state.scores), ranking=list(state.ranking))
        self._accumulate_rewards()
        self.agent_selection = self._agent(state.current_player) if not state.is_terminal else agent
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The table as text, every hand face up (``atout.render.render_position``): returned
        with ``render_mode="ansi"``, printed with ``"human"``."""
        if self.engine is None:
            return None
        text = render_position(self.engine)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


class GameEnv(AtoutEnv):
    """The environment of one game (its ``game_id``), as a game module's ``raw_env`` is."""

    game_id: ClassVar[str]

    def __init__(self, players: int | None = None, render_mode: str | None = None, **options: Any) -> None:
        super().__init__(self.game_id, players=players, render_mode=render_mode, **options)


def make(game: str) -> tuple[Callable[..., Any], type[GameEnv]]:
    """A game module's ``env`` function and ``raw_env`` class."""

    class raw_env(GameEnv):  # noqa: N801 - PettingZoo's name
        __doc__ = AtoutEnv.__doc__
        game_id: ClassVar[str] = game
        metadata: ClassVar[dict[str, Any]] = {**AtoutEnv.metadata, "name": f"{game}_v0"}

    raw_env.__qualname__ = raw_env.__name__ = "raw_env"

    def env(players: int | None = None, render_mode: str | None = None, **options: Any) -> Any:
        """The game's environment in PettingZoo's usual wrappers (out-of-bounds actions and
        calls out of order are errors)."""
        e: Any = raw_env(players=players, render_mode=render_mode, **options)
        e = wrappers.AssertOutOfBoundsWrapper(e)
        return wrappers.OrderEnforcingWrapper(e)

    return env, raw_env
