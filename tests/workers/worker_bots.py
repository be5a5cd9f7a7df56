"""Bots for the workers' end-to-end tests (``atout-bot run tests/workers/worker_bots.py:NAME``)."""

from __future__ import annotations

import json
import os
import time
from typing import ClassVar

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

    def on_match_start(self, match) -> None:
        self.heuristic.rng = self.rng
        self.heuristic.match = match
        self.heuristic.on_match_start(match)

    def act(self, observation: Observation) -> str:
        choice = self.heuristic.act(observation)  # always asked: the heuristic may keep state
        return choice if self.rng.random() < 0.5 else self.rng.choice(observation.legal_actions)


class Spy(Bot):
    """A random legal action; at its first decision of each match it tries to find every hand
    of the deal from what it knows: its own hand, the tournament seed ``$ATOUT_TEST_SPY_SEED``
    and the public API at ``$ATOUT_TEST_API_URL`` (the match's seed if shown, else the seeds
    of the first ``$ATOUT_TEST_SPY_GROUPS`` deal groups by the schedule's public formula). One
    JSON line per match goes to ``$ATOUT_TEST_SPY_FILE``: its hand and whether it found the deal."""

    seen: ClassVar[set[str]] = set()

    def act(self, observation: Observation) -> str:
        if observation.match_id not in Spy.seen:
            Spy.seen.add(observation.match_id)
            self._spy(observation)
        return self.rng.choice(observation.legal_actions)

    def _spy(self, observation: Observation) -> None:
        import httpx

        from atout.games import new_game
        from atout_arena.core.schedule import deal_seed

        api = os.environ["ATOUT_TEST_API_URL"]
        match = httpx.get(f"{api}/v1/matches/{observation.match_id}", timeout=10).json()
        seed = int(os.environ["ATOUT_TEST_SPY_SEED"])
        candidates = [match["seed"]] if match.get("seed") is not None else []
        candidates += [deal_seed(seed, g) for g in range(int(os.environ.get("ATOUT_TEST_SPY_GROUPS", "64")))]
        hand = sorted(observation.raw["hand"])
        found = None
        for candidate in candidates:
            rules = new_game(match["game"], players=match["players"], **match["options"])
            state = rules.new_state(seed=candidate)
            if sorted(state.observation(observation.raw["seat"])["hand"]) == hand:
                found = [state.observation(s)["hand"] for s in range(match["players"])]
                break
        with open(os.environ["ATOUT_TEST_SPY_FILE"], "a") as out:
            out.write(json.dumps({"match": int(observation.match_id), "seat": observation.raw["seat"],
                                  "hand": observation.raw["hand"], "found": found}) + "\n")
