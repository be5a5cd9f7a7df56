"""Check a bot locally before it goes online: ``atout-bot validate mybot:Bot --game merde``.

>>> from atout.validate import validate
>>> report = validate("heuristic", "tiercon", games=1)
>>> report.ok
True

The bot plays ``games`` local games in every seat of every player count the game allows, the
other seats held by house bots (the heuristic bot), driven as :func:`atout.local.play` drives
them with the arena's fallback (a faulted decision is played by the first legal action). The
report gives:

- exceptions raised by the bot's hooks (``act``, ``on_match_start``, ``on_match_end``), with the
  first traceback: a fault;
- illegal actions, with the engine's reason: a fault;
- decision time (each ``act()`` call) p50, p99 and max against the per-move budget: a decision
  over the budget is a fault (the arena would time it out);
- whether the same seed gives the same actions: at every player count, :data:`SAME_SEED_SEEDS`
  games (seeds ``seed``, ``seed + 1``...) are each played twice with fresh bots and the action
  logs compared. A difference is a warning, not a fault (the arena replays matches from their
  action log), but such a bot cannot be debugged by replaying a seed;
- the peak of the memory Python allocated during one of those games (``tracemalloc``, the engine
  and the house bots included).

Every fault comes with the command that plays its game again (``atout-bot replay --game ...
--seed ... --seats ... --seat N``, see :func:`atout.record.replay_command`); with ``record``
every game played (not the same-seed check's) is written to it (see docs/record.md).
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bot import Bot
from .games import GAMES, new_game
from .loading import load_bot
from .local import Fault, LocalResult, play
from .record import RecordWriter, replay_command

BotSpec = str | Callable[[], Bot]
DEFAULT_MOVE_MS = 1000.0
SAME_SEED_SEEDS = 3  # games played twice at every player count


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of ``values``; 0 when there are none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass
class ValidationReport:
    """What :func:`validate` found."""

    bot: str
    game: str
    options: dict[str, Any]
    player_counts: tuple[int, ...]
    games: int = 0
    decisions: int = 0
    exceptions: int = 0
    first_exception: Fault | None = None
    illegal: int = 0
    first_illegal: Fault | None = None
    # the command that plays the game of the first fault of each kind again
    commands: dict[str, str] = field(default_factory=dict)
    think_s: list[float] = field(default_factory=list, repr=False)
    move_ms: float = DEFAULT_MOVE_MS
    reproducible: bool = True
    reproducible_detail: str = ""
    peak_memory_bytes: int = 0
    seconds: float = 0.0

    @property
    def over_budget(self) -> int:
        return sum(1 for t in self.think_s if t * 1000.0 > self.move_ms)

    @property
    def ok(self) -> bool:
        """No fault: no exception, no illegal action, no decision over the budget."""
        return self.exceptions == 0 and self.illegal == 0 and self.over_budget == 0

    def lines(self) -> list[str]:
        ms = [t * 1000.0 for t in self.think_s]
        counts = self.player_counts
        seats = _counts(counts)
        options = "".join(f", {k}={v}" for k, v in self.options.items())
        out = [
            f"validate {self.bot} on {self.game}{options}: {self.games} games against the heuristic bot, "
            f"{seats} players, every seat ({self.decisions} decisions, {self.seconds:.1f} s)",
            f"  exceptions       {self.exceptions}" + _first(self.first_exception),
            f"  illegal actions  {self.illegal}" + _first(self.first_illegal),
            f"  decision time    p50 {percentile(ms, 0.5):.3f} ms, p99 {percentile(ms, 0.99):.3f} ms, "
            f"max {max(ms, default=0.0):.3f} ms; budget {self.move_ms:g} ms: {self.over_budget} over",
            f"  same seed        {self.reproducible_detail}",
            f"  peak memory      {_size(self.peak_memory_bytes)} (tracemalloc, one game)",
        ]
        for kind, what in (("exception", "the first exception"), ("illegal", "the first illegal action"),
                           ("slow", "the first decision over the budget"),
                           ("same seed", "the first game that differs")):  # fmt: skip
            if kind in self.commands:
                out.append(f"reproduce {what}: {self.commands[kind]}")
        if self.first_exception is not None and self.first_exception.traceback:
            out.append("first exception:\n" + self.first_exception.traceback.rstrip())
        faults = [
            f"{n} {what}"
            for n, what in (
                (self.exceptions, "exceptions"),
                (self.illegal, "illegal actions"),
                (self.over_budget, f"decisions over {self.move_ms:g} ms"),
            )
            if n
        ]
        out.append("FAIL: " + ", ".join(faults) if faults else "ok: no fault found")
        return out


def _size(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"


def _first(fault: Fault | None) -> str:
    return f"; first: {fault.describe()}" if fault is not None else ""


def _name(spec: BotSpec) -> str:
    return spec if isinstance(spec, str) else getattr(spec, "__qualname__", repr(spec))


class _Seats:
    """The bots of a validation: the one checked in a seat, house bots elsewhere."""

    def __init__(self, game: str, bot: BotSpec, house: BotSpec, options: Mapping[str, Any]) -> None:
        self.game, self.options = game, dict(options)
        self.names = (_name(bot), _name(house))
        self.factory = load_bot(bot) if isinstance(bot, str) else bot
        self.house = load_bot(house) if isinstance(house, str) else house

    def specs(self, players: int, seat: int) -> list[str]:
        return [self.names[0] if s == seat else self.names[1] for s in range(players)]

    def play(self, players: int, seat: int, seed: int, record: bool = False) -> LocalResult:
        bots = [self.factory() if s == seat else self.house() for s in range(players)]
        return play(self.game, bots, seed=seed, match_id=f"validate-{players}-{seat}-{seed}", fallback=True,
                    record=record, specs=self.specs(players, seat), **self.options)  # fmt: skip

    def command(self, players: int, seat: int, seed: int) -> str:
        return replay_command(self.game, players, seed, self.options, self.specs(players, seat), seat)


def validate(
    bot: BotSpec,
    game: str,
    games: int = 5,
    move_ms: float = DEFAULT_MOVE_MS,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    house: BotSpec = "heuristic",
    record: RecordWriter | None = None,
) -> ValidationReport:
    """Play ``games`` games in every seat of every player count of ``game`` and report faults.

    ``ValueError`` for an unknown game, bad options or ``games < 1``;
    :class:`~atout.loading.BotLoadError` for a bot that cannot be loaded.
    """
    if games < 1:
        raise ValueError(f"games must be at least 1, not {games}")
    options = dict(options or {})
    counts = GAMES[new_game(game, **options).id].player_counts()
    for players in counts:  # options valid for every count, before anything is played
        new_game(game, players=players, **options)
    seats = _Seats(game, bot, house, options)
    report = ValidationReport(_name(bot), game, options, counts, move_ms=move_ms)
    started = time.monotonic()
    for players in counts:
        for seat in range(players):
            for g in range(games):
                result = seats.play(players, seat, seed + g, record=record is not None)
                if record is not None and result.record is not None:
                    result.record.source.update(
                        tool="validate", replay=seats.command(players, seat, seed + g)
                    )
                    record.write(result.record)
                report.games += 1
                think = result.think_s[seat]
                report.think_s.extend(think)
                report.decisions += len(think)
                # a house bot's fault is not the bot's
                kinds = [f.kind for f in result.faults if f.seat == seat]
                if any(t * 1000.0 > move_ms for t in think):
                    kinds.append("slow")
                for kind in dict.fromkeys(kinds):
                    report.commands.setdefault(kind, seats.command(players, seat, seed + g))
                for fault in result.faults:
                    if fault.seat != seat:
                        continue
                    if fault.kind == "exception":
                        report.exceptions += 1
                        report.first_exception = report.first_exception or fault
                    else:
                        report.illegal += 1
                        report.first_illegal = report.first_illegal or fault
    # each seed twice, fresh bots each time, at every player count; one game under tracemalloc
    differ: list[str] = []
    same = 0
    for players in counts:
        for g in range(SAME_SEED_SEEDS):
            seat = g % players
            first = seats.play(players, seat, seed + g)
            if players == counts[0] and g == 0:
                tracemalloc.start()
                try:
                    second = seats.play(players, seat, seed + g)
                    report.peak_memory_bytes = tracemalloc.get_traced_memory()[1]
                finally:
                    tracemalloc.stop()
            else:
                second = seats.play(players, seat, seed + g)
            if first.history == second.history:
                same += len(first.history)
            elif not differ:
                differ.append(_compare(first, second, players, seat, seed + g))
                report.commands["same seed"] = seats.command(players, seat, seed + g)
    checked = f"{SAME_SEED_SEEDS * len(counts)} games twice: {_counts(counts)} players, seeds {seed} to " \
              f"{seed + SAME_SEED_SEEDS - 1}"  # fmt: skip
    report.reproducible = not differ
    report.reproducible_detail = (
        f"NO (warning): {differ[0]}; use self.rng (seeded per match), not the random module or the clock"
        if differ
        else f"yes: {checked}, the same {same} actions each time"
    )
    report.seconds = time.monotonic() - started
    return report


def _counts(counts: Sequence[int]) -> str:
    return f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"


def _compare(first: LocalResult, second: LocalResult, players: int, seat: int, seed: int) -> str:
    where = f"seed {seed}, {players} players, the bot in seat {seat}"
    for i, (a, b) in enumerate(zip(first.history, second.history, strict=False)):
        if a != b:
            return f"decision {i + 1} differs, seat {a[0]} played {a[1]!r} then {b[1]!r} ({where})"
    return f"{len(first.history)} actions then {len(second.history)} ({where})"
