"""PettingZoo environments of the four games (the SDK's optional extra ``rl``).

>>> from atout.envs import merde_v0
>>> env = merde_v0.env(players=4)  # doctest: +SKIP

One module per game, ``merde_v0``, ``tiercon_v0``, ``regicide_v0`` and ``fool_v0``, each with
``env(players=..., render_mode=None, **options)`` (the environment in PettingZoo's usual
wrappers) and ``raw_env`` (the bare class). Turn-based AEC games with action masks; see
docs/learning.md ("PettingZoo") for the observations, rewards and seeding. Needs pettingzoo,
gymnasium and numpy: ``pip install "atout[rl]"``.
"""
