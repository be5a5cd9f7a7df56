"""Bot A against bot B, locally and at engine speed, until a sequential test decides: ``atout-bot test``.

>>> from atout.sprt import TestConfig, run_test
>>> from atout.stats import Sprt
>>> outcome = run_test(TestConfig("merde", "heuristic", "random", options={"deals": 1}), Sprt(0, 50))
>>> outcome.analysis.result
'H1'

The games come in duplicate sets (see :mod:`atout.stats`). A set is one table, A in seat 0, B
in seat 1 and ``field`` bots in the other seats, played in every rotation of its seats (in
rotation ``r`` seat ``i`` holds the table's bot ``(i + r) % n``, as the arena's ``duplicate``
option does), each rotation from the same seed: the same deals, so every hand is played once by
A and once by B. With more than two seats the set also plays the mirror table, B in seat 0 and A
in seat 1, in every rotation: rotations alone keep B on A's left in every game, and where the
seat to someone's left matters that is worth Elo by itself (4-player fool, random against
random: +61 Elo [55, 67] over 8000 games with rotations alone). With the mirror, swapping A and B
gives the same set, so two equal bots score ½ on average. A set is ``n`` games for 2 seats and
``2n`` for ``n > 2``. Set ``i`` of a test of seed ``S`` has the seed :func:`set_seed` ``(S, i)``;
a bot's ``rng`` is seeded from the set's seed, the game's place in the set and the bot's place at
the table, so two identical random bots do not mirror each other's draws.

Bots are driven as :func:`atout.local.play` drives them (a fresh instance per game,
``on_match_start``, ``act`` with an :class:`~atout.Observation`, ``on_match_end``), with the
arena's fallback: an exception or an illegal action is counted as a fault of that bot and the
decision is played by the first legal action.

After each set the tally is analysed; the test stops when the SPRT decides, when the next set
would pass ``max_games``, or on Ctrl-C (the sets finished so far count). With ``jobs > 1`` the
sets are played by that many processes and taken in order, so the result is the same as with one.
"""

from __future__ import annotations

import multiprocessing
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .bot import Bot
from .games import new_game
from .loading import load_bot
from .local import Fault, play
from .record import GameRecord, RecordWriter, replay_command
from .stats import Analysis, Sprt, Tally, pairwise_score

BotSpec = str | Callable[[], Bot]  # "random", "heuristic", "module:Class", or a Bot class / factory
ROLES = ("A", "B", "field")
DEFAULT_MAX_GAMES = 20000


def set_seed(seed: int, index: int) -> int:
    """The engine seed of set ``index`` of a test of seed ``seed``."""
    return random.Random(f"atout-match/{seed}/{index}").getrandbits(63)  # (named so before: seeds kept)


def set_tables(players: int) -> list[list[str]]:
    """The tables of a set, roles from seat 0 on, each played in its every rotation: A, B, then the
    field; and with more than two seats its mirror, B then A."""
    field = ["field"] * (players - 2)
    return [["A", "B", *field]] + ([["B", "A", *field]] if players > 2 else [])


@dataclass(frozen=True)
class TestConfig:
    """What is played: the game, its options, the two bots and the field around them."""

    __test__ = False  # (a name pytest would otherwise take for a test class)

    game: str
    bot_a: BotSpec
    bot_b: BotSpec
    players: int | None = None  # None: the game's default
    options: Mapping[str, Any] = field(default_factory=dict)
    field: BotSpec = "heuristic"
    seed: int = 0
    record: bool = False  # keep each game's GameRecord in SetResult.records

    def checked(self) -> TestConfig:
        """This config with its player count filled in; ``ValueError`` for a bad game or option."""
        players = {} if self.players is None else {"players": self.players}
        game = new_game(self.game, **players, **self.options)
        if game.players < 2:
            raise ValueError(f"{self.game} with {game.players} player cannot seat two bots")
        return TestConfig(self.game, self.bot_a, self.bot_b, game.players, dict(self.options), self.field,
                          self.seed, self.record)  # fmt: skip

    @property
    def set_size(self) -> int:
        """Games per duplicate set: one per seat rotation of each table (:func:`set_tables`)."""
        assert self.players is not None, "use checked() first"
        return self.players * len(set_tables(self.players))


@dataclass
class SetResult:
    """One duplicate set: A's pairwise score against B in each rotation, and the faults."""

    index: int
    scores: list[float]
    fault_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (role, kind) -> count
    # (role, kind) -> (game of the set, its first fault)
    first_faults: dict[tuple[str, str], tuple[int, Fault]] = field(default_factory=dict)
    records: list[GameRecord] = field(default_factory=list)  # with TestConfig.record


def game_setup(config: TestConfig, index: int, number: int) -> tuple[int, list[str], list[str]]:
    """Game ``number`` of set ``index``: its engine seed, each seat's role (A, B, field) and each
    seat's bot seed."""
    n = config.players
    assert n is not None, "use checked() first"
    table, rotation = set_tables(n)[number // n], number % n
    seed = set_seed(config.seed, index)
    roles = [table[(i + rotation) % n] for i in range(n)]
    return seed, roles, [f"{seed}/{number}/{(i + rotation) % n}" for i in range(n)]


def game_command(config: TestConfig, index: int, number: int, seat: int) -> str:
    """The ``atout-bot replay`` command that plays game ``number`` of set ``index`` again, as the
    test played it, showing seat ``seat``'s decisions."""
    seed, roles, bot_seeds = game_setup(config, index, number)
    specs = {"A": _name(config.bot_a), "B": _name(config.bot_b), "field": _name(config.field)}
    assert config.players is not None
    return replay_command(config.game, config.players, seed, config.options, [specs[r] for r in roles], seat,
                          bot_seeds=bot_seeds)  # fmt: skip


def _factory(spec: BotSpec) -> Callable[[], Bot]:
    if isinstance(spec, str):
        return load_bot(spec)
    return spec


class _Players:
    """The bot factories of a config, loaded once per process."""

    def __init__(self, config: TestConfig) -> None:
        self.config = config.checked()
        self.factories = {role: _factory(spec) for role, spec in
                          zip(ROLES, (config.bot_a, config.bot_b, config.field), strict=True)}  # fmt: skip

    def play_set(self, index: int) -> SetResult:
        config = self.config
        n = config.players
        assert n is not None
        result = SetResult(index, [])
        specs = {"A": _name(config.bot_a), "B": _name(config.bot_b), "field": _name(config.field)}
        for _table in set_tables(n):
            for _rotation in range(n):
                number = len(result.scores)  # the game's place in the set
                seed, roles, bot_seeds = game_setup(config, index, number)  # roles: seat -> role
                game = play(
                    config.game,
                    [self.factories[role]() for role in roles],
                    seed=seed,
                    match_id=f"match-{config.seed}-{index}-{number}",
                    fallback=True,
                    bot_seeds=bot_seeds,
                    record=config.record,
                    specs=[specs[role] for role in roles],
                    **config.options,
                )
                if game.record is not None:
                    game.record.source.update(
                        tool="test", test_seed=config.seed, set=index, game_of_set=number, roles=roles,
                        replay=game_command(config, index, number, roles.index("A")),
                    )  # fmt: skip
                    result.records.append(game.record)
                result.scores.append(pairwise_score(game.ranking, roles.index("A"), roles.index("B")))
                for fault in game.faults:
                    key = (roles[fault.seat], fault.kind)
                    result.fault_counts[key] += 1
                    result.first_faults.setdefault(key, (number, fault))
        return result


@dataclass
class TestOutcome:
    """Where a test stands: the analysis of the sets played, and the faults of each bot."""

    __test__ = False

    config: TestConfig
    sprt: Sprt | None
    analysis: Analysis
    faults: Counter[tuple[str, str]] = field(default_factory=Counter)  # (role, kind) -> count
    first_faults: dict[tuple[str, str], tuple[int, int, Fault]] = field(default_factory=dict)
    interrupted: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the analysis's fields, then what was played and the faults by bot."""
        c = self.config
        out = self.analysis.to_dict()
        if self.sprt is not None:
            out.update(elo0=self.sprt.elo0, elo1=self.sprt.elo1, alpha=self.sprt.alpha, beta=self.sprt.beta)
        field = _name(c.field) if (c.players or 2) > 2 else None
        out.update(
            game=c.game, players=c.players, options=dict(c.options), seed=c.seed,
            bot_a=_name(c.bot_a), bot_b=_name(c.bot_b), field=field, set_size=c.set_size,
            faults={role: {kind: self.faults[role, kind] for kind in ("exception", "illegal")}
                    for role in ROLES},
            interrupted=self.interrupted, seconds=round(self.seconds, 3),
        )  # fmt: skip
        return out


def _name(spec: BotSpec) -> str:
    return spec if isinstance(spec, str) else getattr(spec, "__qualname__", repr(spec))


# ---------------------------------------------------------------- worker processes

_worker: _Players | None = None


def _init_worker(config: TestConfig) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _worker = _Players(config)


def _play_in_worker(index: int) -> SetResult:
    assert _worker is not None
    return _worker.play_set(index)


def _context() -> multiprocessing.context.BaseContext:
    # fork: the workers start at once and have the parent's modules (a bot loaded from a file)
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _sets(players: _Players, config: TestConfig, count: int, jobs: int) -> Iterator[SetResult]:
    if jobs <= 1:
        for index in range(count):
            yield players.play_set(index)
        return
    pool = _context().Pool(jobs, initializer=_init_worker, initargs=(config,))
    try:
        # ordered: set i always comes i-th, whatever process played it
        yield from pool.imap(_play_in_worker, range(count), chunksize=4)
    finally:
        pool.terminate()  # sets played ahead of a stop are dropped
        pool.join()


T = TypeVar("T")


def sequential(
    sets: Iterable[T], sprt: Sprt | None, scores: Callable[[T], Sequence[float]]
) -> Iterator[tuple[T, Analysis]]:
    """The stopping rule of a test: each set of ``sets`` with the analysis of the sets so far,
    until the SPRT decides (``H0`` or ``H1``, that set included) or ``sets`` runs out.
    ``scores(set)`` gives A's pairwise score in each game of a set. :func:`run_test` stops by it,
    and ``scripts/sprt_error_rates.py`` measures its error rates by it."""
    tally = Tally()
    for item in sets:
        tally.add(scores(item))
        analysis = tally.analysis(sprt)
        yield item, analysis
        if analysis.result in ("H0", "H1"):
            return


def set_scores(config: TestConfig, count: int, jobs: int = 1) -> list[list[float]]:
    """A's pairwise scores in each game of sets ``0..count-1`` of ``config`` (no SPRT, faults
    not kept): the set scores an error-rate simulation resamples."""
    players = _Players(config)
    return [result.scores for result in _sets(players, players.config, count, jobs)]


def run_test(
    config: TestConfig,
    sprt: Sprt | None = None,
    max_games: int = DEFAULT_MAX_GAMES,
    jobs: int = 1,
    on_set: Callable[[TestOutcome, SetResult], None] | None = None,
    record: RecordWriter | None = None,
) -> TestOutcome:
    """Play duplicate sets of ``config`` until ``sprt`` decides or ``max_games`` would be passed.

    ``on_set(outcome, set_result)`` is called after each set with the test so far. Ctrl-C
    (``KeyboardInterrupt``) stops the test: the outcome of the finished sets comes back with
    ``interrupted`` set. With ``record`` every game of the sets counted is written to it, in
    order (see docs/record.md). ``ValueError`` for a bad config (game, options, players, ``max_games``
    below one set) and :class:`~atout.loading.BotLoadError` for a bot that cannot be loaded.
    """
    config = replace(config, record=True) if record is not None else config
    config = config.checked()
    if max_games < config.set_size:
        raise ValueError(f"--games {max_games} is less than one duplicate set ({config.set_size} games)")
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    players = _Players(config)  # loads the bots here first: a bad spec fails before any process starts
    started = time.monotonic()
    outcome = TestOutcome(config, sprt, Tally().analysis(sprt))
    # Ctrl-C stops after the set being played (a flag: a KeyboardInterrupt raised inside a
    # finalizer is lost, and the test then went on); a second Ctrl-C stops at once.
    stop = _Stop()
    previous = stop.install()
    try:
        sets = _sets(players, config, max_games // config.set_size, jobs)
        for result, analysis in sequential(sets, sprt, lambda result: result.scores):
            outcome.analysis = analysis
            if record is not None:
                for game in result.records:
                    record.write(game)
            outcome.faults.update(result.fault_counts)
            for key, (number, fault) in result.first_faults.items():
                outcome.first_faults.setdefault(key, (result.index, number, fault))
            outcome.seconds = time.monotonic() - started
            if on_set is not None:
                on_set(outcome, result)
            if stop.asked and outcome.analysis.result not in ("H0", "H1"):
                outcome.interrupted = True
                break
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        stop.uninstall(previous)
    outcome.seconds = time.monotonic() - started
    return outcome


class _Stop:
    """The first SIGINT asks the test to stop after its current set; the next one raises
    KeyboardInterrupt as usual. Only in the main thread (where signal handlers live)."""

    def __init__(self) -> None:
        self.asked = False

    def _handler(self, signum: int, frame: Any) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def install(self) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return None
        return signal.signal(signal.SIGINT, self._handler)

    def uninstall(self, previous: Any) -> None:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


# ---------------------------------------------------------------- what the command prints


def _elo_text(elo: float) -> str:
    return f"{elo:+.1f}" if elo == elo and abs(elo) != float("inf") else ("+inf" if elo > 0 else "-inf")


def progress_line(outcome: TestOutcome) -> str:
    """One line: games, sets, A's score, Elo with its interval, LOS, the LLR within its bounds."""
    a = outcome.analysis
    low, high = a.elo_ci95
    parts = [
        f"games {a.games}",
        f"sets {a.sets}",
        f"score {a.score:.1%}",
        f"Elo {_elo_text(a.elo)} [{_elo_text(low)}, {_elo_text(high)}]",
        f"LOS {a.los:.1%}",
    ]
    if a.llr is not None and a.lower is not None and a.upper is not None:
        parts.append(f"LLR {a.llr:.2f} [{a.lower:.2f}, {a.upper:.2f}]")
    faults = Counter(role for (role, _), count in outcome.faults.items() for _ in range(count))
    if faults:
        parts.append("faults " + " ".join(f"{role} {faults[role]}" for role in ROLES if faults[role]))
    return "  ".join(parts)


def summary(outcome: TestOutcome) -> str:
    """The final report: what was played, the estimate and the verdict."""
    c, a, sprt = outcome.config, outcome.analysis, outcome.sprt
    options = "".join(f", {k}={v}" for k, v in c.options.items())
    field = f", field {_name(c.field)}" if (c.players or 2) > 2 else ""
    lines = [
        f"{_name(c.bot_a)} (A) vs {_name(c.bot_b)} (B): {c.game}, {c.players} players{options}{field}, "
        f"seed {c.seed}, {c.set_size} games per duplicate set",
        progress_line(outcome),
    ]
    if sprt is not None:
        verdict = {
            "H1": f"H1 accepted: A's Elo over B is {sprt.elo1:g} rather than {sprt.elo0:g}",
            "H0": f"H0 accepted: A's Elo over B is {sprt.elo0:g} rather than {sprt.elo1:g}",
            "inconclusive": "inconclusive: the SPRT has not decided",
        }[a.result or "inconclusive"]
        design = f"SPRT [{sprt.elo0:g}, {sprt.elo1:g}], alpha {sprt.alpha:g}, beta {sprt.beta:g}"
        lines.append(f"{design}: {verdict}")
    if outcome.interrupted:
        lines.append("interrupted: the sets finished so far")
    lines.append(f"{a.games} games in {outcome.seconds:.1f} s")
    return "\n".join(lines)


def describe_fault(outcome: TestOutcome, role: str, kind: str) -> str:
    """The first fault of ``role`` of that kind, for the command's warning (with a traceback)."""
    index, number, fault = outcome.first_faults[role, kind]
    spec = {"A": outcome.config.bot_a, "B": outcome.config.bot_b, "field": outcome.config.field}[role]
    what = "raised an exception" if kind == "exception" else "played an illegal action"
    text = f"bot {role} ({_name(spec)}) {what}: set {index + 1}, game {number + 1}, {fault.describe()}"
    text += "\n  the first legal action was played instead; further faults are counted, not shown"
    text += f"\n  reproduce: {game_command(outcome.config, index, number, fault.seat)}"
    if fault.traceback:
        text += "\n" + fault.traceback.rstrip()
    return text
