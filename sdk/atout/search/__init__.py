"""Search bots: they sample the worlds a seat cannot see and play them out.

- :class:`PimcBot` (``pimc``): Perfect Information Monte Carlo, the best mean value over sampled
  worlds of each legal action's playouts;
- :class:`IsmctsBot` (``ismcts``): single-observer Information Set MCTS (Cowling, Powley &
  Whitehouse 2012).

Both play every game at every seat count, with the engines' ``game.sample_state`` as their
sampler (or one given to them), and are named in ``atout.bots.BOTS``: ``atout-bot run
pimc:worlds=64``. docs/bots.md describes them, their parameters and what a playout is worth
(:func:`playout_values`).
"""

from ._common import (
    DEADLINE_SHARE,
    SCORE_SCALE,
    HeuristicRollout,
    Param,
    Sampler,
    SearchBot,
    default_sampler,
    playout_values,
    random_rollout,
)
from .ismcts import IsmctsBot
from .pimc import PimcBot

__all__ = [
    "DEADLINE_SHARE",
    "SCORE_SCALE",
    "HeuristicRollout",
    "IsmctsBot",
    "Param",
    "PimcBot",
    "Sampler",
    "SearchBot",
    "default_sampler",
    "playout_values",
    "random_rollout",
]
