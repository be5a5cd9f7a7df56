"""The four Atout games as OpenSpiel python games (docs/learning.md, "OpenSpiel").

Importing this module registers ``python_atout_merde``, ``python_atout_tiercon``,
``python_atout_regicide`` and ``python_atout_fool`` with ``pyspiel.register_game``, so that
``pyspiel.load_game("python_atout_tiercon(players=2)")`` works. Needs OpenSpiel:
``pip install "atout[openspiel]"``.

The rules are the engines' own (:mod:`atout.games`): a state here wraps an engine state and
applies its actions with ``apply``. What OpenSpiel adds:

- **Chance nodes: the deal, card by card.** The game starts with one chance node drawing the
  first dealer (uniform over the seats, as the engine's lot), then every deck is drawn as chance
  outcomes, one card per node (the outcome is the card's index in the engine's full deck,
  uniform over the cards not drawn yet; the deck is then dealt by the engine, top first, as
  ``new_state(decks=...)`` deals it). A deal starts inside the action that ends the previous
  one: that action waits, the next deck is drawn at chance nodes, then the action is applied
  with it. Explicit, enumerable chance (``EXPLICIT_STOCHASTIC``) is what OpenSpiel's samplers
  (MCTS, IS-MCTS, Monte Carlo CFR) all handle; a deck is 32 to 52 nodes of at most 52 outcomes.
- **Actions** are indices into the fixed action space of :mod:`atout.encoding`.
- **Information state** of a seat: its engine observation (which holds the current deal's
  history); string: that dict as JSON, tensor: ``Encoding.tensor``. **Observation**: the same
  without ``deal_history``; tensor: ``Encoding.observation_tensor``. Earlier deals are summed up
  by the scores (and ``last_deal``): a seat does not recall who played what in them.
- **Returns** at the end, rank-based in [-1, 1]: (seats ranked below - seats ranked above) /
  (players - 1); zero-sum, ties count as draws.
- ``resample_from_infostate(player, sampler)``: a world drawn by the engine's
  ``game.sample_state(observation, rng)``, with a seed drawn from ``sampler``. Its
  ``history()`` is empty (earlier deals are not re-created) and its later deals are chance
  nodes again.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from typing import Any, ClassVar

try:
    import numpy as np
    import pyspiel
except ImportError:  # pragma: no cover - depends on the installed extras
    raise ImportError('atout.openspiel needs OpenSpiel: pip install "atout[openspiel]"') from None

from atout.encoding import Encoding, encoding_for, rank_rewards
from atout.games import GAMES, new_game
from atout.games.core import Game, State

PREFIX = "python_atout_"

# Bounds on the number of decisions of one game, for GameInfo.max_game_length. Merde's is exact;
# the others play deals until a score is reached, and these are far beyond the longest random
# games measured (tiercon 238 decisions, regicide 1,967 with 4 players, fool 474 with 6).
_MAX_DECISIONS: dict[str, Callable[[Game[Any]], int]] = {
    "merde": lambda g: sum(g.players * (1 + deal) for deal in range(1, g.options["deals"] + 1)),
    "tiercon": lambda g: 5_000,
    "regicide": lambda g: 10_000 * g.players,
    "fool": lambda g: 200 * g.players * len(_full_deck(g)),
}


def _full_deck(game: Game[Any]) -> tuple[str, ...]:
    return tuple(game.new_state(seed=0).FULL_DECK)  # fool's depends on its options


def _parameters(game_id: str) -> dict[str, Any]:
    """The OpenSpiel parameters of a game: players and its options, with their defaults (an
    option the engine computes from the player count, merde's deals, is 0 for "the default")."""
    cls = GAMES[game_id]
    spec: dict[str, Any] = {"players": cls.default_players}
    for opt in cls.OPTIONS:
        spec[opt.name] = 0 if opt.default is None else opt.default
    return spec


class _Spec:
    """What every state of one game (id, players, options) shares: the engine's game, the
    encoding, the deck. Copies of a state share it (``__deepcopy__``)."""

    def __init__(self, game_id: str, params: dict[str, Any]) -> None:
        self.params = (game_id, tuple(sorted(params.items())))
        options = {k: v for k, v in params.items() if k != "players"}
        for opt in GAMES[game_id].OPTIONS:
            if opt.default is None and options.get(opt.name) == 0:
                del options[opt.name]  # 0: the engine's default for the player count
        self.game: Game[Any] = new_game(game_id, players=params["players"], **options)
        self.players: int = self.game.players
        self.encoding: Encoding = encoding_for(self.game)
        self.deck = _full_deck(self.game)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Spec:
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # OpenSpiel serializes a state by pickling it
        return _spec, self.params


@functools.lru_cache(maxsize=64)
def _spec(game_id: str, params: tuple[tuple[str, Any], ...]) -> _Spec:
    return _Spec(game_id, dict(params))


class _Engine:
    """An engine state that nothing changes once it is here (a move applies to a clone of it),
    so OpenSpiel's Clone, a deep copy of the python state, shares it."""

    def __init__(self, state: State, spec: _Spec) -> None:
        self.state = state
        self.spec = spec  # its game is the state's

    def __deepcopy__(self, memo: dict[int, Any]) -> _Engine:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # An engine's game holds its options in a mappingproxy, which pickle refuses: the state
        # is pickled without it, and its game is the one of the spec.
        state = self.state.clone()
        state.game = None  # type: ignore[assignment]
        return _restore_engine, (self.spec, state)


def _restore_engine(spec: _Spec, state: State) -> _Engine:
    state.game = spec.game
    return _Engine(state, spec)


def _needs_deck(state: State) -> bool:
    """Whether ``state`` has started a deal with a deck it shuffled itself (none was given)."""
    return state.deals_started > state.decks_given


def _given_decks(state: State) -> State:
    """``state`` with a deck marked as given for each deal it has started (a world from
    ``sample_state`` may have started more than it was given), so that :func:`_needs_deck`
    tells the next deal. The decks added are never read: their deals have started."""
    state.give_decks([state.FULL_DECK] * (state.deals_started - state.decks_given))
    return state


rank_returns = rank_rewards  # (seats ranked below - seats ranked above) / (players - 1)


class AtoutState(pyspiel.State):
    """One game in progress (see the module's text for the chance nodes)."""

    def __init__(self, game: AtoutGame) -> None:
        super().__init__(game)
        self._spec: _Spec = game.spec
        self._dealer: int | None = None  # the first dealer, once drawn
        self._decks: list[list[str]] = []  # drawn for the engine's next deals (then given to it)
        self._dealing: list[str] | None = None  # the deck being drawn, card by card
        self._pending: str | None = None  # the action waiting for the next deck
        self._engine: _Engine | None = None

    # -- whose turn -------------------------------------------------------------------------

    def current_player(self) -> int:
        if self._dealer is None or self._dealing is not None:
            return int(pyspiel.PlayerId.CHANCE)
        assert self._engine is not None
        seat = self._engine.state.current_player
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else int(seat)

    def is_terminal(self) -> bool:
        return self._dealing is None and self._engine is not None and self._engine.state.is_terminal

    def _legal_actions(self, player: int) -> list[int]:
        assert self._engine is not None and player == self._engine.state.current_player
        index = self._spec.encoding.index
        return sorted(index(action) for action in self._engine.state.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._dealer is None:
            n = self._spec.players
            return [(seat, 1.0 / n) for seat in range(n)]
        assert self._dealing is not None
        drawn = set(self._dealing)
        left = [i for i, card in enumerate(self._spec.deck) if card not in drawn]
        return [(i, 1.0 / len(left)) for i in left]

    # -- moves ------------------------------------------------------------------------------

    def _apply_action(self, action: int) -> None:
        if self._dealer is None:
            self._dealer = action
            self._dealing = []
            return
        if self._dealing is not None:
            self._dealing.append(self._spec.deck[action])
            if len(self._dealing) < len(self._spec.deck):
                return
            deck, self._dealing = self._dealing, None
            self._decks.append(deck)
        else:
            self._pending = self._spec.encoding.action(action)
        self._advance()

    def _advance(self) -> None:
        """Start the game, or apply the pending action, with the decks drawn for it; when that
        starts a deal they do not cover, draw its deck first (chance nodes) and try again."""
        if self._engine is None:
            state = self._spec.game.new_state(seed=0, decks=self._decks, dealer=self._dealer)
        else:
            assert self._pending is not None
            state = self._engine.state.clone()
            state.give_decks(self._decks)  # the decks of the deals this action starts
            state.apply(self._pending)
        if _needs_deck(state):
            self._dealing = []  # the engine's own shuffle is dropped: chance draws the deck
            return
        self._engine = _Engine(state, self._spec)
        self._pending = None
        self._decks = []

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._dealer is None:
                return f"first dealer: seat {action}"
            return f"deal {self._spec.deck[action]}"
        return self._spec.encoding.action(action)

    # -- the end ----------------------------------------------------------------------------

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._spec.players
        assert self._engine is not None
        return rank_returns(list(self._engine.state.ranking))

    # -- views ------------------------------------------------------------------------------

    @property
    def engine(self) -> State | None:
        """The engine's state (``atout.games``), None while the first deal is drawn; while a
        later deal is drawn, the state before the action that started it. Read it, never change
        it: copies of this state share it."""
        return None if self._engine is None else self._engine.state

    def observation_of(self, player: int) -> dict[str, Any] | None:
        """The engine's observation of ``player`` (None while the first deal is drawn; while a
        later deal is drawn, the observation before the action that started it)."""
        if self._engine is None:
            return None
        return self._engine.state.observation(player)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> AtoutState:
        """A state that ``player_id`` cannot tell from this one (the same information state),
        drawn by the engine's ``sample_state``; ``probability_sampler()`` seeds it."""
        observation = self.observation_of(player_id)
        if observation is None or self.is_chance_node():
            raise ValueError("resample_from_infostate: only at a decision or terminal node, not at a deal")
        rng = random.Random(int(probability_sampler() * 2**53))
        world = self._spec.game.sample_state(observation, rng)
        state = AtoutState(self.get_game())
        state._dealer = self._dealer
        state._engine = _Engine(_given_decks(world), self._spec)
        return state

    def __str__(self) -> str:
        lines = []
        if self._dealer is None:
            lines.append("chance: the first dealer")
        elif self._dealing is not None:
            lines.append(f"chance: dealing, drawn {' '.join(self._dealing) or '-'}")
        if self._pending is not None:
            lines.append(f"waiting for the deck: {self._pending}")
        if self._engine is not None:
            state = self._engine.state
            lines.append(repr(state))
            lines.extend(f"seat {s}: {' '.join(state.observation(s)['hand'])}" for s in range(state.players))
            last = state.history[-8:]
            lines.append("last moves: " + "; ".join(f"{seat} {action}" for seat, action in last))
        return "\n".join(lines)


class _Observer:
    """OpenSpiel's python observer: the information state (``perfect_recall``) or the
    observation of one seat, as a tensor with named parts and as a string."""

    def __init__(self, spec: _Spec, info_state: bool) -> None:
        self.spec = spec
        self.info_state = info_state
        enc = spec.encoding
        self.tensor = np.zeros(enc.size if info_state else enc.observation_size, np.float32)
        self.dict: dict[str, Any] = {}  # the named parts, views of the tensor
        start = 0
        for name, size in enc.sections if info_state else enc.observation_sections:
            self.dict[name] = self.tensor[start : start + size]
            start += size

    def set_from(self, state: AtoutState, player: int) -> None:
        observation = state.observation_of(player)
        if observation is None:
            self.tensor.fill(0)
        elif self.info_state:
            self.tensor[:] = self.spec.encoding.tensor(observation)
        else:
            self.tensor[:] = self.spec.encoding.observation_tensor(observation)

    def string_from(self, state: AtoutState, player: int) -> str:
        observation = state.observation_of(player)
        if observation is None:
            return f"seat {player}: dealing"
        if not self.info_state:
            observation = {k: v for k, v in observation.items() if k != "deal_history"}
        return json.dumps(observation, sort_keys=True, separators=(",", ":"))


class AtoutGame(pyspiel.Game):
    """One Atout game with its players and options, as OpenSpiel sees it (a subclass per game,
    which names it in ``GAME_ID``)."""

    GAME_ID: ClassVar[str]

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        game_id = self.GAME_ID
        spec = _spec(game_id, tuple(sorted({**_parameters(game_id), **(params or {})}.items())))
        self.spec = spec
        info = pyspiel.GameInfo(
            num_distinct_actions=len(spec.encoding.actions),
            max_chance_outcomes=max(len(spec.deck), spec.players),
            num_players=spec.players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=_MAX_DECISIONS[game_id](spec.game),
        )
        super().__init__(_GAME_TYPES[game_id], info, params or {})

    def new_initial_state(self) -> AtoutState:
        return AtoutState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> _Observer:
        if params:
            raise ValueError(f"observation parameters are not supported: {params!r}")
        info_state = iig_obs_type is not None and iig_obs_type.perfect_recall
        if iig_obs_type is not None and (
            not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError("only a seat's own view is supported (public and its private information)")
        return _Observer(self.spec, info_state)


def _game_type(game_id: str) -> Any:
    cls = GAMES[game_id]
    return pyspiel.GameType(
        short_name=PREFIX + game_id,
        long_name=f"Atout {cls.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(cls.player_counts()),
        min_num_players=min(cls.player_counts()),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameters(game_id),
    )


_GAME_TYPES: dict[str, Any] = {game_id: _game_type(game_id) for game_id in GAMES}


class MerdeGame(AtoutGame):
    GAME_ID = "merde"


class TierconGame(AtoutGame):
    GAME_ID = "tiercon"


class RegicideGame(AtoutGame):
    GAME_ID = "regicide"


class FoolGame(AtoutGame):
    GAME_ID = "fool"


def _register() -> None:
    # A class, not a lambda, as the creator: OpenSpiel keeps the creator until the interpreter
    # has exited, and a function freed then aborts the process (a class outlives it).
    registered = set(pyspiel.registered_names())
    for cls in (MerdeGame, TierconGame, RegicideGame, FoolGame):
        game_type = _GAME_TYPES[cls.GAME_ID]
        if game_type.short_name not in registered:
            pyspiel.register_game(game_type, cls)


_register()

__all__ = [
    "PREFIX", "AtoutGame", "AtoutState", "FoolGame", "MerdeGame", "RegicideGame", "TierconGame",
    "rank_returns",
]
