"""What the demo shows: the live progress of the tournament, and the final table (standings,
batch Elo with its interval, faults, think times) read from the stored matches."""

from __future__ import annotations

import contextlib
import math
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from atout_arena.core.match import Step
from atout_arena.core.metrics import DECISION_SECONDS
from atout_arena.core.models import Match, MatchSeat
from atout_arena.core.vocabulary import MatchStatus, PlayedBy
from atout_arena.demo.plan import plural
from atout_arena.services.tournaments import tournament_summary

# -- progress ---------------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class Progress:
    """Matches done out of the total, decisions per second, time elapsed: a bar redrawn in
    place on a terminal; otherwise a plain line when the count moves (at most every
    ``every_s``, and at least every ``quiet_s``)."""

    def __init__(self, out: TextIO, total: int, tty: bool | None = None, every_s: float = 2.0,
                 quiet_s: float = 15.0) -> None:
        self.out = out
        self.total = total
        self.tty = out.isatty() if tty is None else tty
        self.every_s = every_s
        self.quiet_s = quiet_s
        self._last_line = -math.inf
        self._last_done = -1
        self._drawn = False
        # fixed once, so the bar does not jitter as the numbers beside it change length
        self.width = max(10, min(40, shutil.get_terminal_size((80, 24)).columns - 50))

    def line(self, done: int, rate: float, elapsed: float) -> str:
        text = f"{done}/{plural(self.total, 'match', 'matches')}  {rate:,.0f} decisions/s  {_clock(elapsed)}"
        if not self.tty:
            return "progress: " + text
        filled = int(self.width * done / self.total) if self.total else self.width
        return f"  [{'#' * filled}{'.' * (self.width - filled)}] {text}"

    def update(self, done: int, rate: float, elapsed: float, final: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            self._write("\r" + self.line(done, rate, elapsed) + "\x1b[K" + ("\n" if final else ""))
            self._drawn = not final
            return
        due = done != self._last_done and now - self._last_line >= self.every_s
        if final or due or now - self._last_line >= self.quiet_s:
            self._write(self.line(done, rate, elapsed) + "\n")
            self._last_line, self._last_done = now, done

    def interrupt(self) -> None:
        """End the bar's line (before other output)."""
        if self.tty and self._drawn:
            self._write("\n")
            self._drawn = False

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError):  # a closed pipe: the demo goes on (and stops cleanly)
            self.out.write(text)
            self.out.flush()


class Rate:
    """Decisions per second over the last few seconds."""

    def __init__(self, window_s: float = 3.0) -> None:
        self.window_s = window_s
        self.samples: list[tuple[float, int]] = []

    def add(self, now: float, count: int) -> float:
        self.samples.append((now, count))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window_s:
            self.samples.pop(0)
        (t0, c0), (t1, c1) = self.samples[0], self.samples[-1]
        return (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0


def decisions_made(redis_client: Any) -> int:
    """Decisions the workers have counted so far (``atout_decision_seconds``, all labels)."""
    total = 0
    for key, value in redis_client.hgetall(DECISION_SECONDS.key).items():
        name = key.decode() if isinstance(key, bytes) else str(key)
        if not name.endswith("\tsum"):
            total += int(value)
    return total


# -- the report -------------------------------------------------------------------------------


def tournament_line(tournament_id: int, matches: int, game: str) -> str:
    """The line that announces the demo's tournament: ``tournament 1: 6 matches of merde``."""
    return f"tournament {tournament_id}: {plural(matches, 'match', 'matches')} of {game}"


def summary_line(matches: int, decisions: int, elapsed: float) -> str:
    """The line after the tournament: ``6 matches, 1,234 decisions in 2.0 s (617 decisions/s)``."""
    rate = decisions / elapsed if elapsed else 0
    return (f"{plural(matches, 'match', 'matches')}, {plural(decisions, 'decision', 'decisions')} "
            f"in {elapsed:.1f} s ({rate:,.0f} decisions/s)")


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile (``p`` in 0..100), or None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class BotLine:
    """One bot in the final table."""

    rank: int
    bot: str
    points: float
    wins: int
    matches: int
    faults: int
    forfeits: int
    rating: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    fault_kinds: Counter[str] = field(default_factory=Counter)
    think_ms: list[float] = field(default_factory=list)

    @property
    def think_p50(self) -> float | None:
        return percentile(self.think_ms, 50)

    @property
    def think_p99(self) -> float | None:
        return percentile(self.think_ms, 99)


@dataclass
class Report:
    tournament_id: int
    status: str
    matches: dict[str, int]
    lines: list[BotLine]
    decisions: int


def build_report(sessions: Any, tournament_id: int) -> Report:
    """Standings and batch ratings of the tournament (``tournament_summary``), with each bot's
    faults by kind and think times (its own decisions, not the fallback's) from the stored
    action logs."""
    from sqlalchemy import select
    from sqlalchemy.orm import selectinload

    summary = tournament_summary(sessions, tournament_id)
    ratings = {r["bot"]: r for r in summary.ratings}
    lines = []
    for row in summary.standings or []:
        rating = ratings.get(row["bot"])
        lines.append(BotLine(
            rank=row["rank"], bot=row["bot"], points=row["points"], wins=row["wins"],
            matches=row["matches"], faults=row["faults"], forfeits=row["forfeits"],
            rating=rating["rating"] if rating else None, ci_low=rating["ci_low"] if rating else None,
            ci_high=rating["ci_high"] if rating else None,
        ))
    by_name = {line.bot: line for line in lines}
    decisions = 0
    with sessions() as session:
        matches = session.scalars(
            select(Match).where(Match.tournament_id == tournament_id, Match.status == MatchStatus.FINISHED)
            .options(selectinload(Match.seats).selectinload(MatchSeat.bot))
        )
        for match in matches:
            names = {s.seat: s.bot.name for s in match.seats}
            for ply, row in enumerate(match.actions or []):
                step = Step.from_json(ply, row)
                decisions += 1
                line = by_name.get(names.get(step.seat, ""))
                if line is None:
                    continue
                line.fault_kinds.update(step.faults)
                if step.by == PlayedBy.BOT:  # the bot's own time when it told it (the SDK does)
                    line.think_ms.append(step.think_ms if step.bot_ms is None else step.bot_ms)
    return Report(tournament_id, summary.status, summary.matches, lines, decisions)


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def format_report(report: Report, plus_minus: str = "±") -> str:
    """The final table: standings order, Elo of the batch fit with its 95% interval."""
    pm = plus_minus
    header = (f"{'rank':>4}  {'bot':<14} {'Elo':>5} {pm + ' 95%':>6}  {'points':>6} {'wins':>5} "
              f"{'matches':>7} {'faults':>6}  {'think p50':>9} {'think p99':>9}")
    rows = [header, "-" * len(header)]
    for line in report.lines:
        if line.rating is None:
            elo, ci = "-", ""
        else:
            elo = f"{line.rating:.0f}"
            ci = ("" if line.ci_low is None or line.ci_high is None
                  else f"{pm}{(line.ci_high - line.ci_low) / 2:.0f}")
        forfeits = f" ({plural(line.forfeits, 'forfeit', 'forfeits')})" if line.forfeits else ""
        faults = str(line.faults) + forfeits
        rows.append(f"{line.rank:>4}  {line.bot:<14} {elo:>5} {ci:>6}  {line.points:>6.1f} {line.wins:>5} "
                    f"{line.matches:>7} {faults:>6}  {_ms(line.think_p50):>9} {_ms(line.think_p99):>9}")
    kinds = [f"{line.bot}: " + ", ".join(f"{n} {k}" for k, n in sorted(line.fault_kinds.items()))
             for line in report.lines if line.fault_kinds]
    notes = [f"Elo: the batch fit of all the tournament's results, {pm} its 95% interval. Points: one per",
             "opponent placed below, a half per tie. Think: the bot's own decisions, timed by the worker."]
    if kinds:
        notes.append("faults by kind: " + "; ".join(kinds))
    not_finished = {k: v for k, v in report.matches.items() if k != MatchStatus.FINISHED}
    if not_finished:
        counts = ", ".join(f"{v} {k}" for k, v in sorted(not_finished.items()))
        notes.append(f"matches not finished: {counts}")
    return "\n".join([*rows, "", *notes])
