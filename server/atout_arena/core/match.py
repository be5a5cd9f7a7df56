"""The match loop: one game between bots under deadlines, with the fault policy of DESIGN.md.

A plain function, no I/O of its own: :func:`run_loop` takes the match's setup, a callable
that asks a seat's bot for a decision, and an optional callback run after every step (the
Celery task passes one that stores heartbeats, publishes spectator views and counts metrics).
Unit tests drive it with a fake asker. The loop itself is the generator :func:`playing`
(it yields each decision to ask and is sent the answer), so that a worker process drives it as
a coroutine, :func:`run_loop_async`, with :class:`atout_workers.decisions.AsyncDecisionClient`:
a thousand matches on one event loop (see :mod:`atout_workers.play` and
:mod:`atout_workers.loop`).

Fault policy (DESIGN.md, "Matches, faults, tournaments"):

- every decision has ``move_ms``; a bot may overrun it by what is left of its optional
  ``time_bank_ms`` for the match (the overrun is taken from the bank);
- no legal reply by the deadline is one fault: ``timeout``, or ``illegal`` when replies were
  rejected (a rejected reply followed by a legal one in time costs nothing); a bot that is
  not connected a ``disconnected`` fault;
- a faulted decision is played by the fallback: the first legal action, recorded as such;
- after ``max_faults`` faults (0: never) the bot forfeits: it ranks last and the rest of its
  decisions are played by the fallback without asking it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from atout.games import GAMES, State, new_game, ranking_from_scores
from atout_arena.core.keys import split_address
from atout_arena.core.vocabulary import FAULT_KINDS, Fault, Outcome, PlayedBy


@dataclass(frozen=True)
class FaultPolicy:
    """Deadlines and faults of one match (copied from its tournament)."""

    move_ms: int = 1000
    time_bank_ms: int = 0
    max_faults: int = 3

    def __post_init__(self) -> None:
        if self.move_ms < 1:
            raise ValueError(f"move_ms must be >= 1, not {self.move_ms!r}")
        if self.time_bank_ms < 0:
            raise ValueError(f"time_bank_ms must be >= 0, not {self.time_bank_ms!r}")
        if self.max_faults < 0:
            raise ValueError(f"max_faults must be >= 0 (0: never forfeit), not {self.max_faults!r}")


@dataclass(frozen=True)
class SeatBot:
    """The bot sitting in one seat: ``version`` is the version the seat asks for ("": the bot's
    current stream); ``address`` the stream the worker plays it through (resolved when the
    match starts, :func:`atout_arena.core.relay.seat_address`)."""

    bot_id: int
    name: str
    version: str = ""
    address: str = ""
    move_ms: int = 0  # the bot's own move time (a human's): the seat waits the longer of it and the match's

    @property
    def stream(self) -> str:
        """The relay address to ask this seat's bot through."""
        return self.address or str(self.bot_id)

    @property
    def played_version(self) -> str:
        """The version of the stream that plays the seat (its address's label)."""
        return split_address(self.address)[1] if self.address else self.version


@dataclass(frozen=True)
class MatchSetup:
    """Everything that decides a match: its game, options, seed, seating and deadlines."""

    match_id: str
    game: str
    options: dict[str, Any]
    seed: int
    seats: tuple[SeatBot, ...]
    policy: FaultPolicy = FaultPolicy()
    # How long the match waits at its start for bots that are not connected (a competition's
    # absent_grace_s); None: no such wait (practice matches, tests: checked when scheduled).
    absent_grace_s: float | None = None
    suits: str | None = None  # the suit permutation disguising the deal (None: the plain deal)

    def new_state(self) -> State:
        """The seeded initial state: the same seed (and suits) deals the same cards."""
        return new_game(self.game, players=len(self.seats), **self.options).new_state(
            seed=self.seed, suit_permutation=self.suits)


@dataclass(frozen=True)
class DecisionAsk:
    """One decision asked of a seat's bot."""

    match_id: str
    game: str
    seat: int
    bot: SeatBot
    observation: dict[str, Any]
    legal_actions: list[str]
    deadline_ms: int
    check: Callable[[str], str | None]  # the engine's reason an action is illegal, or None


@dataclass(frozen=True)
class Answer:
    """What came back: a legal action, or a fault. ``rejected`` counts illegal replies that
    came before (free: only a decision that ends with no legal reply is a fault)."""

    action: str | None
    think_ms: float
    fault: str | None = None
    detail: str = ""
    rejected: int = 0
    bot_ms: float | None = None  # the bot's own think time, when it told it
    note: str | None = None  # the bot's note on its decision (cleaned by the edge, at most 1 KB)

    def __post_init__(self) -> None:
        if (self.action is None) == (self.fault is None):
            raise ValueError("an Answer holds either an action or a fault")
        if self.fault is not None and self.fault not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.fault!r}; kinds: {', '.join(FAULT_KINDS)}")


Asker = Callable[[DecisionAsk], Answer]


@dataclass(frozen=True)
class Step:
    """One applied action, as stored: who chose it, how long the bot thought, any faults."""

    ply: int
    seat: int
    action: str
    by: str  # a PlayedBy
    think_ms: float
    faults: tuple[str, ...] = ()  # fault kinds charged to the seat at this decision
    detail: str = ""
    bot_ms: float | None = None  # the bot's own think time as it told it (the rest is network)
    note: str | None = None  # the bot's note on this decision (an eighth item of the row, when set)

    def to_json(self) -> list[Any]:
        """The stored row: ``[seat, action, by, think_ms, faults, detail, bot_ms]`` and the bot's
        note as an eighth item when it sent one (rows stored before bot_ms existed have six items)."""
        bot_ms = None if self.bot_ms is None else round(self.bot_ms, 3)
        row = [self.seat, self.action, self.by, round(self.think_ms, 3), list(self.faults), self.detail,
               bot_ms]
        if self.note:
            row.append(self.note)
        return row

    @classmethod
    def from_json(cls, ply: int, row: Sequence[Any]) -> Step:
        seat, action, by, think_ms, faults, detail, *rest = row
        bot_ms = float(rest[0]) if rest and rest[0] is not None else None
        note = str(rest[1]) if len(rest) > 1 and rest[1] else None
        return cls(ply, int(seat), str(action), str(by), float(think_ms), tuple(faults), str(detail), bot_ms,
                   note)


@dataclass
class MatchOutcome:
    """The result of a played match."""

    scores: list[int]
    ranking: list[int]  # with forfeits applied: a forfeiting seat ranks last
    engine_ranking: list[int]
    faults: list[int]
    forfeited: list[bool]
    think_ms: list[float]
    steps: list[Step] = field(default_factory=list)
    rules_version: int = 1  # of the engine that played it

    @property
    def outcome(self) -> str:
        """``forfeit`` when a seat forfeited, else ``finished``: the metrics' outcome label."""
        return Outcome.FORFEIT if any(self.forfeited) else Outcome.FINISHED


def ranking_with_forfeits(scores: Sequence[float], engine_ranking: Sequence[int],
                          forfeited: Sequence[bool]) -> list[int]:
    """Places once forfeits count: the others keep the engine's order among themselves, and
    every forfeiting seat shares the last place after them (ties share, places are skipped)."""
    if not any(forfeited):
        return list(engine_ranking)
    playing = [i for i, f in enumerate(forfeited) if not f]
    # Among the seats still playing, the engine's places keep their order and their ties.
    sub = ranking_from_scores([-engine_ranking[i] for i in playing])
    places = [0] * len(scores)
    for i, p in zip(playing, sub, strict=True):
        places[i] = p
    last = len(playing) + 1
    for i, f in enumerate(forfeited):
        if f:
            places[i] = last
    return places


# No game of the four comes near this (merde's longest, 13 deals, is under 800 actions): a match
# that reaches it fails with its reason instead of holding a worker's slot for ever.
MAX_STEPS = 100_000


def rules_version(game: str) -> int:
    """The version of ``game``'s rules this engine plays (``Game.RULES_VERSION``)."""
    return GAMES[game].RULES_VERSION


def legality_check(state: State) -> Callable[[str], str | None]:
    """The one legality check of a bot's answer, against ``state`` as it is when called:
    ``None`` when the engine accepts the action (listed, or another spelling it normalises,
    such as ``"play th"``), else the engine's reason."""

    def check(action: str) -> str | None:
        if action in state.legal_actions():
            return None
        probe = state.clone()
        try:
            probe.apply(action)
        except ValueError as exc:  # IllegalAction, or a non-string
            return str(exc)
        return None

    return check


def fallback_action(legal: Sequence[str]) -> str:
    """The fixed fallback of a faulted decision: the first legal action (DESIGN.md)."""
    return legal[0]


AsyncAsker = Callable[[DecisionAsk], Awaitable[Answer]]


def playing(
    setup: MatchSetup,
    on_step: Callable[[State, Step], None] | None = None,
    on_start: Callable[[State], None] | None = None,
    absent: Sequence[int] = (),
) -> Generator[DecisionAsk, Answer, MatchOutcome]:
    """The match loop without I/O: a generator that yields each :class:`DecisionAsk` and is
    sent back its :class:`Answer`; it returns the :class:`MatchOutcome`. :func:`run_loop`
    drives it with a plain ``ask``, :func:`run_loop_async` with a coroutine (the workers'
    event loop plays many matches at once that way): the rules of a match live here once.

    ``on_start(state)`` runs once with the initial state; ``on_step(state, step)`` after each
    applied action (the state is the one after it). An exception either raises stops the
    match (the worker's way to give up a lost lease). The ``absent`` seats (their bots never
    came) are forfeited from the start: never asked, one ``absent`` fault at their first
    decision, ranked last.
    """
    policy = setup.policy
    state = setup.new_state()
    n = state.players
    if n != len(setup.seats):
        raise ValueError(f"{setup.game} match {setup.match_id} has {len(setup.seats)} bots for {n} seats")
    faults = [0] * n
    forfeited = [seat in absent for seat in range(n)]
    absent_left = set(absent)  # absent seats not charged their one fault yet
    bank = [float(policy.time_bank_ms)] * n
    think = [0.0] * n
    steps: list[Step] = []
    if on_start is not None:
        on_start(state)

    check = legality_check(state)

    while not state.is_terminal:
        if len(steps) >= MAX_STEPS:  # an engine whose game goes round in circles: a slot held for ever
            raise RuntimeError(f"{setup.game} match {setup.match_id}: no end after {MAX_STEPS} actions; "
                               "given up")
        seat = state.current_player
        assert seat is not None
        legal = state.legal_actions()
        charged: list[str] = []
        detail = ""
        bot_ms: float | None = None
        note: str | None = None
        if forfeited[seat]:
            action, by, think_ms = fallback_action(legal), PlayedBy.FALLBACK, 0.0
            detail = "forfeited"
            if seat in absent_left:
                absent_left.discard(seat)
                charged.append(Fault.ABSENT)
                faults[seat] += 1
                detail = "absent: not connected when the match started"
        else:
            move_ms = max(policy.move_ms, setup.seats[seat].move_ms)
            deadline = move_ms + int(bank[seat])
            answer = yield DecisionAsk(setup.match_id, setup.game, seat, setup.seats[seat],
                                       state.observation(seat), legal, deadline, check)
            think_ms = max(0.0, answer.think_ms)
            think[seat] += think_ms
            # One decision, at most one fault: rejected replies are free while the deadline
            # lasts (up to MAX_REJECTIONS); a decision left with no legal reply is one fault.
            if answer.fault is not None:
                if answer.fault == Fault.TIMEOUT:
                    bank[seat] = 0.0  # the whole bank was spent waiting
                charged.append(answer.fault)
                action, by, detail = fallback_action(legal), PlayedBy.FALLBACK, answer.detail
            else:
                assert answer.action is not None
                bank[seat] = max(0.0, bank[seat] - max(0.0, think_ms - move_ms))
                action, by, bot_ms, note = answer.action, PlayedBy.BOT, answer.bot_ms, answer.note
                if answer.rejected:
                    detail = answer.detail  # the rejected replies before the legal one: free
            if charged:
                faults[seat] += len(charged)
                if policy.max_faults and faults[seat] >= policy.max_faults:
                    forfeited[seat] = True
        before = len(state.history)
        state.apply(action)  # an asker's action was checked; a normalised spelling is stored as such
        step = Step(len(steps), seat, state.history[before][1], by, think_ms, tuple(charged), detail, bot_ms,
                    note)
        steps.append(step)
        if on_step is not None:
            on_step(state, step)

    scores = list(state.scores)
    engine_ranking = list(state.ranking)
    return MatchOutcome(
        scores=scores,
        ranking=ranking_with_forfeits(scores, engine_ranking, forfeited),
        engine_ranking=engine_ranking,
        faults=faults,
        forfeited=forfeited,
        think_ms=think,
        steps=steps,
        rules_version=rules_version(setup.game),
    )


def run_loop(
    setup: MatchSetup,
    ask: Asker,
    on_step: Callable[[State, Step], None] | None = None,
    on_start: Callable[[State], None] | None = None,
    absent: Sequence[int] = (),
) -> MatchOutcome:
    """Play ``setup`` to the end, asking each seat's bot through ``ask`` (see :func:`playing`)."""
    loop = playing(setup, on_step, on_start, absent)
    try:
        request = next(loop)
        while True:
            request = loop.send(ask(request))
    except StopIteration as done:
        outcome: MatchOutcome = done.value  # what playing() returns
        return outcome


async def run_loop_async(
    setup: MatchSetup,
    ask: AsyncAsker,
    on_step: Callable[[State, Step], None] | None = None,
    on_start: Callable[[State], None] | None = None,
    absent: Sequence[int] = (),
) -> MatchOutcome:
    """:func:`run_loop` with a coroutine ``ask``: many matches share one event loop."""
    loop = playing(setup, on_step, on_start, absent)
    try:
        request = next(loop)
        while True:
            request = loop.send(await ask(request))
    except StopIteration as done:
        outcome: MatchOutcome = done.value  # what playing() returns
        return outcome
