"""What the search bots share: their parameters, the worlds they sample, playouts and their value.

A playout plays a world on **to the end of the current deal** (or to the game's end, when that
comes first: fool is one deal, and a deal may end a game of merde, tiercon or regicide). Its
value for a seat is a number in [0, 1] that wants the *game* won (see :func:`playout_values`).
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..bot import Bot, MatchInfo, Observation
from ..games import Game, IllegalAction, State, new_game

log = logging.getLogger("atout.search")

#: ``sampler(game, observation_dict, rng) -> State``: a world the observing seat cannot tell
#: from the real one (by default ``game.sample_state``).
Sampler = Callable[[Game[State], dict[str, Any], random.Random], State]

#: The part of ``Observation.deadline_ms`` a search may spend: the rest is the answer's way back
#: to the arena and the machine's other work.
DEADLINE_SHARE = 0.5

#: The score difference, per game, that makes a seat about 73% sure to stay ahead of another
#: (the logistic's unit, see :func:`playout_values`): about what one deal can swing.
SCORE_SCALE: dict[str, float] = {"merde": 15.0, "tiercon": 100.0, "regicide": 10.0, "fool": 3.0}
DEFAULT_SCORE_SCALE = 10.0


def default_sampler(game: Game[State], observation: dict[str, Any], rng: random.Random) -> State:
    """The game's own sampler: ``game.sample_state(observation, rng)``."""
    return game.sample_state(observation, rng)


def deal_number(state: State) -> int:
    """How many deals the engine has dealt so far: it changes exactly when a deal ends (every
    engine deals its next deal at once, in the move that ends the last one)."""
    return state._deals_started


def playout_values(state: State, scale: float | None = None) -> list[float]:
    """Each seat's value, in [0, 1], of ``state`` reached by a playout (at a deal's end).

    It is the seat's mean pairwise result against every other seat, the way the arena rates an
    n-player result: a finished game scores 1 against a seat ranked below, 1/2 against one ranked
    equal (a partner, in regicide's teams) and 0 against one ranked above. A game that goes on
    scores the same pairs softly on the running totals: ``1 / (1 + exp(-(mine - theirs) /
    scale))``, with ``scale`` the game's :data:`SCORE_SCALE`. So a deal's points count for what
    they do to the seat's standing (a lead of 20 points matters less when it is already 200),
    and a deal that can end the game counts for winning it, not for its points.
    """
    players = state.players
    if state.is_terminal:
        places = state.ranking
        return [
            sum(1.0 if places[seat] < p else 0.5 if places[seat] == p else 0.0
                for other, p in enumerate(places) if other != seat) / (players - 1)
            for seat in range(players)
        ]  # fmt: skip
    unit = scale if scale is not None else SCORE_SCALE.get(state.game.id, DEFAULT_SCORE_SCALE)
    scores = state.scores
    values = []
    for seat in range(players):
        mine = scores[seat]
        total = 0.0
        for other in range(players):
            if other != seat:
                x = (mine - scores[other]) / unit
                total += 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
        values.append(total / (players - 1))
    return values


def random_rollout(state: State, rng: random.Random) -> None:
    """Play ``state`` on with uniformly random legal actions to the end of its current deal."""
    deal = state._deals_started
    draw = rng.random
    while not state.is_terminal and state._deals_started == deal:
        legal = state.legal_actions()
        state.apply(legal[int(draw() * len(legal))])


class HeuristicRollout:
    """Plays a state on to the end of its deal with the game's heuristic bot in every seat (fresh
    bots for every playout, seeded from the playout's generator); an answer the engine refuses
    is replaced by a random legal action."""

    def __init__(self, game: Game[State]) -> None:
        from ..bots import heuristic_bot_class  # here: atout.bots imports this package

        self.game = game
        self.bot_class = heuristic_bot_class(game.id)
        self.options = dict(game.options)

    def __call__(self, state: State, rng: random.Random) -> None:
        deal = state._deals_started
        bots: dict[int, Bot] = {}
        while not state.is_terminal and state._deals_started == deal:
            seat = state.current_player
            assert seat is not None
            bot = bots.get(seat)
            if bot is None:
                bot = bots[seat] = self.bot_class()
                bot.rng.seed(rng.getrandbits(32))
                bot.match = MatchInfo("search", self.game.id, seat, self.game.players, self.options)
            legal = state.legal_actions()
            action = str(bot.act(Observation(state.observation(seat), legal)))
            state.apply(action if action in legal else legal[int(rng.random() * len(legal))])


Rollout = Callable[[State, random.Random], None]


@dataclass(frozen=True)
class Param:
    """One parameter of a built-in bot, as ``name=value`` in a spec (``pimc:worlds=64``) or a
    keyword of the bot's class: an integer or a number of at least ``minimum``, or one of
    ``choices``."""

    name: str
    kind: type
    default: Any
    doc: str
    minimum: float | None = None
    choices: tuple[str, ...] = ()

    def allowed(self) -> str:
        if self.choices:
            return " or ".join(self.choices)
        what = "an integer" if self.kind is int else "a number"
        return what if self.minimum is None else f"{what} >= {self.minimum:g}"

    def check(self, value: Any) -> Any:
        """``value`` if allowed (an int is a number), else ``ValueError`` naming the parameter."""
        if self.choices:
            ok = value in self.choices
        elif self.kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            value = float(value) if ok else value
        if ok and self.minimum is not None and value < self.minimum:
            ok = False
        if not ok:
            raise ValueError(f"{self.name} must be {self.allowed()}, not {value!r}")
        return value

    def parse(self, text: str) -> Any:
        """The value of ``text`` from a spec, checked."""
        value: Any = text.strip()
        if not self.choices:
            try:
                value = self.kind(value)
            except ValueError:
                raise ValueError(f"{self.name} must be {self.allowed()}, not {text!r}") from None
        return self.check(value)

    def describe(self) -> str:
        """``worlds (default 24)`` or ``rollout (random or heuristic; default random)``."""
        choices = f"{' or '.join(self.choices)}; " if self.choices else ""
        return f"{self.name} ({choices}default {self.default})"


ROLLOUT = Param("rollout", str, "auto",
                "the playouts' policy: random, the game's heuristic bot, or auto (heuristic in regicide)",
                choices=("auto", "random", "heuristic"))

# ``rollout=auto``: the games whose playouts need the heuristic bot. In régicide a random playout
# changes the trump and the ranking at random after every trick: pimc with random playouts scored
# 25% against the heuristic bot (12 games), with heuristic ones 12 of 12. Elsewhere random
# playouts already beat the heuristic bot (merde 4 players, 48 games: 68% random, 85% heuristic,
# five times slower) and keep a decision well under 200 ms.
AUTO_ROLLOUT = {"regicide": "heuristic"}


class SearchBot(Bot):
    """The base of the search bots: parameters, the game of the match, its worlds and clock.

    Subclasses declare ``PARAMS`` and implement :meth:`search`. A decision with one legal action
    is answered at once. Every decision draws its own generator from ``self.rng``, so a seeded
    bot given the same observations answers the same actions, as long as a count budget, not
    the clock, ends its searches.

    Two clocks end a search: ``time_ms`` counts the CPU time of the deciding thread
    (``time.thread_time``: other processes on a loaded machine do not make it run out, so a
    local game stays reproducible), and the decision's deadline, when the arena gives one,
    counts wall time (``time.perf_counter``): at most :data:`DEADLINE_SHARE` of it.
    """

    NAME: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, sampler: Sampler | None = None, **params: Any) -> None:
        super().__init__()
        known = {p.name: p for p in self.PARAMS}
        for name in params:
            if name not in known:
                raise ValueError(f"unknown parameter {name!r}; {self.params_text()}")
        self.params = {p.name: p.check(params[p.name]) if p.name in params else p.default
                       for p in self.PARAMS}  # fmt: skip
        self.sampler: Sampler = sampler or default_sampler
        # seconds: the wall clock (the deadline's) and the thread's CPU clock (time_ms's); a test
        # may give its own
        self.clock: Callable[[], float] = time.perf_counter
        self.cpu_clock: Callable[[], float] = time.thread_time
        self._games: dict[tuple[str, int, str], Game[State]] = {}
        self._started = (0.0, 0.0)  # the decision's start: (CPU clock, wall clock)
        # How the searches went, for tests and notes: decisions searched, worlds sampled, worlds
        # that did not fit the observation, decisions played by the fallback, and the worlds
        # (pimc) or iterations (ismcts) the last search completed.
        self.stats = {"searches": 0, "worlds": 0, "bad_worlds": 0, "fallbacks": 0, "last": 0}

    @classmethod
    def params_text(cls) -> str:
        """``pimc takes worlds (default 24), ...``: the one line that lists the parameters."""
        return f"{cls.NAME} takes " + ", ".join(p.describe() for p in cls.PARAMS)

    # -- the match's game, the decision's clock and generator ----------------------------

    def game_for(self, observation: Observation) -> Game[State]:
        """The game of the observation, with the match's options where known."""
        game_id: str = observation.get("game") or (self.match.game if self.match else "")
        players: int = observation.get("players") or (self.match.players if self.match else 0)
        options = {k: v for k, v in (self.match.options if self.match else {}).items() if k != "players"}
        key = (game_id, players, repr(sorted(options.items())))
        game = self._games.get(key)
        if game is None:
            try:
                game = new_game(game_id, players=players, **options)
            except ValueError:  # options the engine does not know (an arena's own): the defaults
                game = new_game(game_id, players=players)
            self._games[key] = game
        return game

    def timer(self, observation: Observation, time_ms: float) -> Callable[[], bool]:
        """``time_up()`` for this decision: true once the thread has spent ``time_ms`` of CPU time
        (0: no limit of its own) since the decision began, or :data:`DEADLINE_SHARE` of the
        observation's deadline (wall time) when it has one. A clock without a limit is not read."""
        cpu_limit = time_ms / 1000.0 if time_ms > 0 else math.inf
        deadline = observation.deadline_ms
        wall_limit = deadline * DEADLINE_SHARE / 1000.0 if deadline else math.inf
        cpu, wall = self.cpu_clock, self.clock
        cpu_started, wall_started = self._started

        def time_up() -> bool:
            return (cpu_limit < math.inf and cpu() - cpu_started >= cpu_limit) or (
                wall_limit < math.inf and wall() - wall_started >= wall_limit
            )

        return time_up

    def rollout_for(self, game: Game[State]) -> Rollout:
        rollout = self.params.get("rollout")
        if rollout == "auto":
            rollout = AUTO_ROLLOUT.get(game.id, "random")
        if rollout == "heuristic":
            return HeuristicRollout(game)
        return random_rollout

    def sample(self, game: Game[State], observation: Observation, rng: random.Random) -> State | None:
        """One world, or ``None`` when it does not fit the observation (its legal actions differ:
        a sampler's fault, counted in ``stats["bad_worlds"]``)."""
        world = self.sampler(game, observation.raw, rng)
        self.stats["worlds"] += 1
        seat = observation.get("seat")
        if world.current_player != seat or world.legal_actions() != observation.legal_actions:
            self.stats["bad_worlds"] += 1
            return None
        return world

    # -- a decision ------------------------------------------------------------------------

    def act(self, observation: Observation) -> str:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        self._started = (self.cpu_clock() if self.params.get("time_ms") else 0.0,
                         self.clock() if observation.deadline_ms else 0.0)  # fmt: skip
        rng = random.Random(self.rng.getrandbits(64))
        game = self.game_for(observation)
        self.stats["searches"] += 1
        try:
            return self.search(game, observation, rng)
        except (NotImplementedError, ValueError, IllegalAction) as exc:
            # No world to search (no sampler for this game, or one that fails here): the game's
            # heuristic bot answers, so that a match goes on; the log says why, once per bot.
            if not self.stats["fallbacks"]:
                log.warning("%s: no search for this decision (%s: %s); the heuristic bot answers",
                            self.NAME, type(exc).__name__, exc)  # fmt: skip
            self.stats["fallbacks"] += 1
            return self._fallback(game, observation)

    def _heuristic(self, game: Game[State]) -> Bot:
        """The game's heuristic bot, in this bot's match."""
        from ..bots import heuristic_bot_class  # here: atout.bots imports this package

        bot = heuristic_bot_class(game.id)()
        bot.match = self.match
        return bot

    def _fallback(self, game: Game[State], observation: Observation) -> str:
        bot = self._heuristic(game)
        bot.rng = self.rng
        action = str(bot.act(observation))
        return action if action in observation.legal_actions else observation.legal_actions[0]

    def search(self, game: Game[State], observation: Observation, rng: random.Random) -> str:
        raise NotImplementedError

    def tie_break(self, game: Game[State], observation: Observation, tied: Sequence[int],
                  rng: random.Random) -> int:
        """Among legal actions (indices) the search valued equally, the one the game's heuristic
        bot plays, else one at random. A deal often ends the same whatever is played now (a
        trick lost anyway, a heuristic rollout that plays on alike): taking the first in the
        engine's order then played the lowest card, or the first bid, every time, and lost to
        the heuristic bot at regicide."""
        bot = self._heuristic(game)
        bot.rng.seed(rng.getrandbits(32))
        try:
            choice = str(bot.act(observation))
        except Exception:  # a heuristic's bug never loses the decision
            choice = ""
        legal = observation.legal_actions
        preferred = [i for i in tied if legal[i] == choice]
        return preferred[0] if preferred else tied[int(rng.random() * len(tied))]


def best_index(values: Sequence[float]) -> int:
    """The index of the largest value, the first of equal ones (the engine's canonical order)."""
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best
