"""fool as a PettingZoo AEC environment: ``env(players=..., render_mode=None, **options)``, ``raw_env``
(see atout.envs and docs/learning.md)."""

from __future__ import annotations

from ._aec import make

env, raw_env = make("fool")

__all__ = ["env", "raw_env"]
