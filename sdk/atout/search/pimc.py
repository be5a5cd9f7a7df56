"""Perfect Information Monte Carlo: sample worlds, play every action out in each, keep the best.

For each decision the bot draws worlds the seat cannot tell from the real one
(``game.sample_state``); in every world it plays each legal action followed by ``playouts``
playouts to the end of the deal (random by default, or the game's heuristic bot), and answers
the action of the best mean value (:func:`atout.search.playout_values`: the seat's standing
against the others, in [0, 1]; a finished game counts as won or lost). Every action is played
out in the same worlds, so the comparison is paired.

Its known weakness is the one of every determinized search: in each world it plays as if it
saw every card, so it never plays to learn or to hide anything ("strategy fusion").
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from ..bot import Action, Observation
from ..games import Game, State
from ._common import ROLLOUT, Param, Sampler, SearchBot, best_index, playout_values


class PimcBot(SearchBot):
    """PIMC: ``worlds`` sampled worlds, ``playouts`` playouts per legal action and world, the
    best mean value played. The search stops early, with the worlds it finished, once the
    thread has spent ``time_ms`` of CPU time (0: no limit) or half the decision's deadline has
    passed; it always finishes one.

    ``PimcBot(worlds=64, rollout="heuristic")``; ``sampler`` replaces ``game.sample_state``.
    """

    NAME = "pimc"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("worlds", int, 24, "worlds sampled per decision (0: as many as time_ms allows)", minimum=0),
        Param("playouts", int, 1, "playouts per legal action and world", minimum=1),
        Param("time_ms", int, 400, "the most CPU milliseconds a decision searches (0: no limit)", minimum=0),
        ROLLOUT,
    )

    def __init__(self, sampler: Sampler | None = None, **params: Any) -> None:
        super().__init__(sampler, **params)
        if not self.params["worlds"] and not self.params["time_ms"]:
            raise ValueError("pimc needs a bound: worlds or time_ms above 0")

    def search(self, game: Game[State], observation: Observation, rng: random.Random) -> str:
        legal = observation.legal_actions
        seat: int = observation["seat"]
        worlds: int = self.params["worlds"]
        playouts: int = self.params["playouts"]
        time_up = self.timer(observation, self.params["time_ms"])
        rollout = self.rollout_for(game)
        totals = [0.0] * len(legal)
        done = 0  # worlds whose every action was played out
        bad = 0  # this decision's worlds that did not fit the observation
        last = len(legal) - 1
        while not worlds or done < worlds:
            if done and time_up():
                break
            world = self.sample(game, observation, rng)
            if world is None:
                bad += 1
                if bad > 3 * (done + 1):  # the sampler does not fit this game
                    raise ValueError(f"{bad} sampled worlds did not fit the observation")
                continue
            sums = []
            for i, action in enumerate(legal):
                value = 0.0
                for p in range(playouts):
                    # the world itself serves the very last playout: one copy saved per world
                    state = world if i == last and p == playouts - 1 else world.clone()
                    state.apply(action)
                    rollout(state, rng)
                    value += playout_values(state)[seat]
                sums.append(value)
            for i, value in enumerate(sums):
                totals[i] += value
            done += 1
        self.stats["last"] = done
        best = best_index(totals)
        top = totals[best]
        tied = [i for i, value in enumerate(totals) if value >= top - 1e-9 * max(1.0, abs(top))]
        if len(tied) > 1:  # the worlds cannot tell these apart: the game's heuristic bot chooses
            best = self.tie_break(game, observation, tied, rng)
        mean = totals[best] / (done * playouts)
        return Action(legal[best], note=f"pimc: {done} worlds, value {mean:.3f}")
