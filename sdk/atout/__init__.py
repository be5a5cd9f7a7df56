"""Atout SDK: rules engines, protocol, bot base class and runner."""

from .bot import Bot, MatchInfo, MatchResult, Observation

__version__ = "0.1.0"

__all__ = ["Bot", "MatchInfo", "MatchResult", "Observation", "__version__"]
