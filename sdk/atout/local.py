"""Play whole games in-process, with no server: for bot developers' own tests.

>>> from atout.local import play
>>> from atout.bots import RandomBot
>>> result = play("merde", [RandomBot(), RandomBot(), RandomBot()], seed=1, deals=2)
>>> len(result.scores)
3

By default a bot's mistake is loud: an illegal action raises :class:`~atout.games.IllegalAction`
and an exception in a hook propagates. With ``fallback=True`` the game goes on as in the arena:
the faulted decision is played by the first legal action and the fault is recorded in
``result.faults`` (the match runner and the validator play that way).

``record=True`` also fills ``result.record``, the game as an :class:`atout.record.GameRecord`
(what ``--record`` saves and ``atout-bot replay`` rebuilds); ``suit_permutation``, ``decks`` and
``dealer`` are passed to the engine's ``new_state`` (the arena's deals, say).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .bot import Bot, MatchInfo, MatchResult, Observation, split_note
from .games import IllegalAction, new_game

if TYPE_CHECKING:
    from .record import GameRecord


@dataclass
class Fault:
    """A bot's mistake in a local game played with ``fallback=True``."""

    seat: int
    kind: str  # "exception" (a hook raised) or "illegal" (act() answered what the engine refused)
    hook: str  # "act", "on_match_start" or "on_match_end"
    reason: str  # the engine's reason, or "ValueError: message"
    turn: int  # decisions played in the game before this one
    action: Any = None  # the answer, for "illegal"
    traceback: str | None = None  # for "exception"

    def describe(self) -> str:
        """One line: the seat, where, and what went wrong."""
        where = f"seat {self.seat}"
        if self.hook == "act":
            where += f", decision {self.turn + 1} of the game"
        if self.kind == "illegal":
            said = "" if repr(self.action) in self.reason else f"answered {self.action!r}: "
            return f"{where}: {said}{self.reason}"
        return f"{where}: {self.hook}() raised {self.reason}"


@dataclass
class LocalResult:
    scores: list[int]
    ranking: list[int]
    history: list[tuple[int, str]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)  # with fallback=True
    think_s: list[list[float]] = field(default_factory=list)  # per seat: seconds of each act() call
    record: GameRecord | None = None  # with record=True


def play(
    game_id: str,
    bots: Sequence[Bot],
    seed: int | None = None,
    match_id: str = "local",
    *,
    fallback: bool = False,
    bot_seeds: Sequence[Any] | None = None,
    suit_permutation: str | None = None,
    decks: Sequence[Sequence[str]] | None = None,
    dealer: int | None = None,
    record: bool = False,
    specs: Sequence[str] | None = None,
    **options: Any,
) -> LocalResult:
    """Play one game of ``game_id`` between ``bots`` (seat i is ``bots[i]``).

    The number of players is ``len(bots)``. A bot that returns an illegal action raises
    :class:`~atout.games.IllegalAction` with the engine's reason: locally, mistakes are loud.
    With ``fallback=True`` they are recorded in ``result.faults`` instead and the decision is
    played by the first legal action, as the arena's fallback does.

    Each bot's ``rng`` is seeded with ``bot_seeds[seat]`` when given, else with
    ``f"{seed}/{seat}"`` when ``seed`` is given.

    ``record=True``: ``result.record`` is the game as a GameRecord, each seat's bot named by
    ``specs[seat]`` (default: the bot's ``module:Class``), each step with who chose it ("bot", or
    "fallback" and the fault's kind), its think time and the bot's note.
    """
    game = new_game(game_id, players=len(bots), **options)
    state = game.new_state(seed=seed, decks=decks, dealer=dealer, suit_permutation=suit_permutation)
    steps: list[dict[str, Any]] = []  # with record=True: the steps' fields, in order
    faults: list[Fault] = []
    think_s: list[list[float]] = [[] for _ in bots]

    def fault(seat: int, hook: str, exc: BaseException) -> None:
        if not fallback:
            raise exc
        faults.append(
            Fault(seat, "exception", hook, f"{type(exc).__name__}: {exc}", len(state.history),
                  traceback=traceback.format_exc())
        )  # fmt: skip

    for i, bot in enumerate(bots):
        bot.match = MatchInfo(match_id, game_id, i, len(bots), dict(game.options))
        if bot_seeds is not None:
            bot.rng.seed(bot_seeds[i])
        elif seed is not None:
            bot.rng.seed(f"{seed}/{i}")
        try:
            bot.on_match_start(bot.match)
        except Exception as exc:
            fault(i, "on_match_start", exc)
    clock = time.perf_counter
    while not state.is_terminal:
        seat = state.current_player
        assert seat is not None
        legal = state.legal_actions()
        observation = Observation(state.observation(seat), legal, None, match_id)
        started = clock()
        step: dict[str, Any] = {"seat": seat, "by": "bot"}
        if record:
            steps.append(step)
        try:
            action, step["note"] = split_note(bots[seat].act(observation))
        except Exception as exc:
            think_s[seat].append(clock() - started)
            step.update(think_ms=think_s[seat][-1] * 1000, by="fallback", fault="exception", action=legal[0])
            fault(seat, "act", exc)
            state.apply(legal[0])
            continue
        think_s[seat].append(clock() - started)
        step["think_ms"] = think_s[seat][-1] * 1000
        if action in legal:
            step["action"] = action
            state.apply(action)
            continue
        try:
            if not isinstance(action, str):
                raise IllegalAction(f"act() returned {type(action).__name__} {action!r}, not a string")
            state.apply(action)  # normalises a person's spelling, or explains the error
            step["action"] = state.history[-1][1]
        except IllegalAction as exc:
            if not fallback:
                raise IllegalAction(f"bot {type(bots[seat]).__name__} in seat {seat}: {exc}") from None
            faults.append(Fault(seat, "illegal", "act", str(exc), len(state.history), action=action))
            step.update(by="fallback", fault="illegal", action=legal[0])
            state.apply(legal[0])
    for seat, bot in enumerate(bots):
        try:
            bot.on_match_end(MatchResult(match_id, state.scores, state.ranking, seat))
        except Exception as exc:
            fault(seat, "on_match_end", exc)
    result = LocalResult(state.scores, state.ranking, list(state.history), faults, think_s)
    if record:
        from .record import GameRecord, SeatRecord, StepRecord

        names = (
            list(specs)
            if specs is not None
            else [f"{type(b).__module__}:{type(b).__qualname__}" for b in bots]
        )
        result.record = GameRecord(
            game=game_id, players=len(bots), options=dict(game.options), seed=seed,
            suit_permutation=suit_permutation, dealer=dealer,
            decks=[list(deck) for deck in decks] if decks is not None else None,
            seats=[SeatRecord(seat=i, bot=names[i]) for i in range(len(bots))],
            steps=[StepRecord(**step) for step in steps],
            scores=list(state.scores), ranking=list(state.ranking),
            source={"kind": "local", "match_id": match_id,
                    "bot_seeds": [bot_seeds[i] if bot_seeds is not None else None if seed is None
                                  else f"{seed}/{i}" for i in range(len(bots))]},
        )  # fmt: skip
    return result
