"""Bots for the tests of ``atout-bot replay`` (tests/sdk/test_replay_command.py and
tests/api/test_replay_arena_match.py): the heuristic bot, changed on purpose."""

from __future__ import annotations

from typing import Any

from atout.bots import HeuristicBot as Heuristic

CHANGED_FROM = 3  # Changed answers differently from its 3rd decision on, wherever it has a choice


class Changed(Heuristic):
    """The heuristic bot until its 3rd decision; from then on another legal action than the
    heuristic's wherever there is one (so it differs from a heuristic game exactly there)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def act(self, observation: Any) -> Any:
        self.asked += 1
        answer = super().act(observation)
        if self.asked >= CHANGED_FROM and len(observation.legal_actions) > 1:
            return next(a for a in observation.legal_actions if a != answer)
        return answer


class Faulty(Heuristic):
    """The heuristic bot, but an illegal answer whenever its hand holds exactly 3 cards."""

    def act(self, observation: Any) -> Any:
        if len(observation.hand) == 3:
            return "nonsense"
        return super().act(observation)
