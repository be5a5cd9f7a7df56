"""Renamed :mod:`atout.sprt` (``atout-bot test``): bot A against bot B until an SPRT decides is a
*test* everywhere in Atout, as in the arena's ``/v1/tests``; a *match* is one game in the arena.
These old names still work, with a DeprecationWarning."""

from __future__ import annotations

import warnings

from .sprt import TestConfig as MatchConfig
from .sprt import TestOutcome as MatchOutcome
from .sprt import run_test as run_match

__all__ = ["MatchConfig", "MatchOutcome", "run_match"]

warnings.warn("atout.match is now atout.sprt (MatchConfig -> TestConfig, MatchOutcome -> TestOutcome, "
              "run_match -> run_test)", DeprecationWarning, stacklevel=2)
