"""Atout SDK: rules engines, protocol, bot base class and runner.

``atout.run(MyBot, "HOST:PORT", token=...)`` connects a bot to the arena (see :mod:`atout.runner`);
it is imported on first use, so ``import atout.games`` stays free of gRPC.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .bot import Action, Bot, MatchInfo, MatchResult, Observation, split_note

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .runner import run


def __getattr__(name: str) -> Any:
    if name == "run":
        from .runner import run

        return run
    raise AttributeError(f"module 'atout' has no attribute {name!r}")


__all__ = ["Action", "Bot", "MatchInfo", "MatchResult", "Observation", "__version__", "run", "split_note"]
