"""Single-observer Information Set Monte Carlo Tree Search (Cowling, Powley & Whitehouse 2012).

One tree over the observer's information sets: a node is the sequence of actions since the
decision (every action of these games is public, so every seat's move is a node the observer
can tell apart), whoever made them, the opponents' moves included. Each iteration draws one
world (a determinization, ``game.sample_state``) and walks down the tree in it, only through
the actions legal in that world: UCB1 with *availability* counts (how often a child could have
been chosen, instead of its parent's visits) picks among them, and the first action not yet in
the tree is added. A random playout then ends the deal, and every node on the path adds the
value of the seat that chose it (:func:`atout.search.playout_values`, in [0, 1]). The answer is
the most visited action at the root.

The tree stops at the end of the current deal: what lies beyond (the next deal's cards) is
chance the observer cannot search.
"""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from ..bot import Action, Observation
from ..games import Game, State
from ._common import ROLLOUT, Param, Sampler, SearchBot, playout_values


class _Node:
    __slots__ = ("available", "children", "reward", "seat", "visits")

    def __init__(self, seat: int) -> None:
        self.seat = seat  # the seat whose action leads to this node
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.reward = 0.0  # the sum of ``seat``'s values over the visits
        self.available = 0  # how often this node's action was legal when its parent was visited


class IsmctsBot(SearchBot):
    """SO-ISMCTS: ``iterations`` determinized iterations, UCB1 with availability counts and
    exploration constant ``exploration``, random playouts (or the heuristic bot's,
    ``rollout=heuristic``) to the end of the deal. The search stops early once the thread has
    spent ``time_ms`` of CPU time (0: no limit) or half the decision's deadline has passed.

    ``IsmctsBot(iterations=2000)``; ``sampler`` replaces ``game.sample_state``.
    """

    NAME = "ismcts"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("iterations", int, 500, "iterations (one sampled world each) per decision "
              "(0: as many as time_ms allows)", minimum=0),
        Param("time_ms", int, 400, "the most CPU milliseconds a decision searches (0: no limit)", minimum=0),
        Param("exploration", float, 0.7, "UCB1's exploration constant (rewards are in [0, 1])", minimum=0),
        ROLLOUT,
    )  # fmt: skip

    def __init__(self, sampler: Sampler | None = None, **params: Any) -> None:
        super().__init__(sampler, **params)
        if not self.params["iterations"] and not self.params["time_ms"]:
            raise ValueError("ismcts needs a bound: iterations or time_ms above 0")

    def search(self, game: Game[State], observation: Observation, rng: random.Random) -> str:
        legal = observation.legal_actions
        seat: int = observation["seat"]
        iterations: int = self.params["iterations"]
        c: float = self.params["exploration"]
        time_up = self.timer(observation, self.params["time_ms"])
        rollout = self.rollout_for(game)
        log, sqrt = math.log, math.sqrt
        root = _Node(seat)
        done = bad = 0  # bad: this decision's worlds that did not fit the observation
        while not iterations or done < iterations:
            if done and time_up():
                break
            state = self.sample(game, observation, rng)
            if state is None:
                bad += 1
                if bad > 3 * (done + 1):
                    raise ValueError(f"{bad} sampled worlds did not fit the observation")
                continue
            deal = state._deals_started
            node = root
            path = [root]
            # selection and expansion, inside the current deal
            while not state.is_terminal and state._deals_started == deal:
                actions = state.legal_actions()
                mover = state.current_player
                assert mover is not None
                children = node.children
                untried = [a for a in actions if a not in children]
                for a in actions:
                    child = children.get(a)
                    if child is not None:
                        child.available += 1
                if untried:
                    action = untried[int(rng.random() * len(untried))]
                    child = children[action] = _Node(mover)
                    child.available = 1
                    state.apply(action)
                    path.append(child)
                    break
                best_action, best_score = actions[0], -math.inf
                for a in actions:
                    child = children[a]
                    score = child.reward / child.visits + c * sqrt(log(child.available) / child.visits)
                    if score > best_score:
                        best_action, best_score = a, score
                node = children[best_action]
                state.apply(best_action)
                path.append(node)
            rollout(state, rng)
            values = playout_values(state)
            for visited in path[1:]:
                visited.visits += 1
                visited.reward += values[visited.seat]
            done += 1
        self.stats["last"] = done
        children = root.children
        best = max(legal, key=lambda a: (children[a].visits, children[a].reward) if a in children else (0, 0))
        chosen = children.get(best)
        mean = chosen.reward / chosen.visits if chosen is not None and chosen.visits else 0.0
        return Action(best, note=f"ismcts: {done} iterations, value {mean:.3f}")
