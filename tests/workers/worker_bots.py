"""Bots for the workers' end-to-end tests (``atout-bot run tests/workers/worker_bots.py:NAME``)."""

from __future__ import annotations

import os
import time

from atout import Bot, Observation


class Sleepy(Bot):
    """A random legal action after thinking ``$ATOUT_TEST_THINK_S`` seconds (default 0.05)."""

    def act(self, observation: Observation) -> str:
        time.sleep(float(os.environ.get("ATOUT_TEST_THINK_S", "0.05")))
        return self.rng.choice(observation.legal_actions)


class QuitAfter(Bot):
    """Plays the first legal action ``$ATOUT_TEST_QUIT_AFTER`` times (default 3), then its
    process dies at once, as a crashed bot does."""

    acted = 0

    def act(self, observation: Observation) -> str:
        QuitAfter.acted += 1
        if QuitAfter.acted > int(os.environ.get("ATOUT_TEST_QUIT_AFTER", "3")):
            os._exit(17)
        return observation.legal_actions[0]


class Stamp(Bot):
    """A random legal action; first writes ``<match id> <unix time>`` to ``$ATOUT_TEST_STAMP_FILE``
    at each decision it is asked: when the request reached the bot, seen from the bot."""

    def act(self, observation: Observation) -> str:
        with open(os.environ["ATOUT_TEST_STAMP_FILE"], "a") as stamps:
            stamps.write(f"{observation.match_id} {time.time():.6f}\n")
        return self.rng.choice(observation.legal_actions)


class HalfHeuristic(Bot):
    """The game's heuristic move with probability 1/2, a random legal one otherwise: a bot
    between ``heuristic`` and ``random`` in strength (the ladder's tests)."""

    def __init__(self) -> None:
        super().__init__()
        from atout.bots import HeuristicBot

        self.heuristic = HeuristicBot()

    def on_match_start(self, match) -> None:  # type: ignore[no-untyped-def]
        self.heuristic.rng = self.rng
        self.heuristic.match = match
        self.heuristic.on_match_start(match)

    def act(self, observation: Observation) -> str:
        choice = self.heuristic.act(observation)  # always asked: the heuristic may keep state
        return choice if self.rng.random() < 0.5 else self.rng.choice(observation.legal_actions)
