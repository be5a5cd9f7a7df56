"""``atout-bot replay``: a recorded game asked again of your bot.

Three sources of a game, one question (what would my bot answer now?):

- a record file (``--record``, ``atout-arena match export``):
  ``atout-bot replay FILE --bot SPEC --seat N``;
- an arena match (``GET /v1/matches/{id}/record``):
  ``atout-bot replay MATCH_ID --api URL --bot SPEC --seat N``;
- a seed, as ``validate`` and ``test`` print it for a fault: ``atout-bot replay --game G --players P
  --seed S --seats SPEC0,SPEC1,... --seat N`` plays the game again exactly and shows every fault of seat N.

Decisions are numbered as ``validate`` numbers them: decision 1 is the game's first action, every
seat counted. ``--from K`` keeps decisions 1..K-1 as played and lets the bots play from decision K.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .bot import Bot, MatchInfo, MatchResult, Observation, split_note
from .games import IllegalAction, State, new_game

if TYPE_CHECKING:
    from .record import GameRecord

DEFAULT_API_URL = "http://127.0.0.1:8000"  # as the arena's own commands (atout_arena.client)


class ReplayError(ValueError):
    """The game cannot be replayed as asked (a bad file, seat, decision, match): one line."""


# ---------------------------------------------------------------------------- the game again


def new_state(record: GameRecord) -> State:
    """The engine state before the record's first step."""
    options = {"players": record.players, **record.options}
    game = new_game(record.game, **options)
    return game.new_state(
        seed=record.seed, decks=record.decks, dealer=record.dealer, suit_permutation=record.suit_permutation
    )


def positions(record: GameRecord) -> Iterator[tuple[int, State, Any]]:
    """``(k, state before step k, step)`` for every step, k from 0; a step the engine refuses
    is a :class:`ReplayError` (the record does not belong to this engine)."""
    state = new_state(record)
    for k, step in enumerate(record.steps):
        if state.is_terminal or state.current_player != step.seat:
            raise ReplayError(
                f"decision {k + 1}: the record says seat {step.seat} plays, the engine says "
                f"{'the game is over' if state.is_terminal else f'seat {state.current_player}'}"
            )
        before = state.clone()
        try:
            state.apply(step.action)
        except IllegalAction as exc:
            raise ReplayError(
                f"decision {k + 1}: the recorded action {step.action!r} is refused: {exc}"
            ) from None
        yield k, before, step


def match_id(record: GameRecord) -> str:
    """The match id the bots were told (the arena's match number, else the local one)."""
    source = record.source or {}
    if source.get("match") is not None:
        return str(source["match"])
    return str(source.get("match_id") or "replay")


def bot_seed(record: GameRecord, seat: int) -> Any:
    """The seed of the seat's ``bot.rng`` when the game was played: the record's own, else as
    the arena seeds it (``MATCH/SEAT``), else as ``atout.local.play`` does (``SEED/SEAT``)."""
    source = record.source or {}
    seeds = source.get("bot_seeds")
    if isinstance(seeds, list) and seat < len(seeds) and seeds[seat] is not None:
        return seeds[seat]
    if source.get("match") is not None:
        return f"{source['match']}/{seat}"
    return None if record.seed is None else f"{record.seed}/{seat}"


def render(state: State, seat: int) -> str:
    """The position as the seat sees it: WATCH's table when the SDK has it, else the observation."""
    try:
        from .render import render_position
    except ImportError:  # an SDK without atout.render
        lines = [f"{key}: {json.dumps(value)}" for key, value in state.observation(seat).items()]
        return "\n".join([*lines, f"legal: {' '.join(state.legal_actions())}"])
    return render_position(state, seat=seat)


def _start(bot: Bot, record: GameRecord, seat: int) -> str | None:
    """Tells the bot its match as it was; the error of on_match_start(), if any."""
    options = {"players": record.players, **record.options}
    bot.match = MatchInfo(match_id(record), record.game, seat, record.players, options,
                          [s.bot for s in sorted(record.seats, key=lambda s: s.seat)])  # fmt: skip
    seed = bot_seed(record, seat)
    if seed is not None:
        bot.rng.seed(seed)
    try:
        bot.on_match_start(bot.match)
    except Exception as exc:
        return f"on_match_start() raised {type(exc).__name__}: {exc}"
    return None


def _ask(bot: Bot, state: State, seat: int, mid: str) -> tuple[str | None, str | None, Any]:
    """Asks the bot at this position: (the action as the engine spells it or None, the error or
    None, the raw answer)."""
    legal = state.legal_actions()
    try:
        answer = bot.act(Observation(state.observation(seat), legal, None, mid))
        action, _note = split_note(answer)
    except Exception as exc:
        return None, f"act() raised {type(exc).__name__}: {exc}", None
    if action in legal:
        return action, None, action
    if not isinstance(action, str):
        return None, f"act() returned {type(action).__name__} {action!r}, not a string", action
    trial = state.clone()
    try:
        trial.apply(action)  # a person's spelling, normalised; or the engine's reason
    except IllegalAction as exc:
        return None, f"illegal: {exc}", action
    return trial.history[-1][1], None, action


# ---------------------------------------------------------------------------- compare


@dataclass
class Difference:
    decision: int  # 1-based, every seat counted
    seat_decision: int  # 1-based, the seat's own decisions
    played: str
    answered: str | None  # the action the bot answers now (None: an error)
    by: str  # who chose the played action: "bot", or "fallback" (for a fault)
    fault: str | None  # that step's recorded fault ("timeout", "illegal"...)
    error: str | None
    position: str


@dataclass
class Comparison:
    seat: int
    asked: int = 0
    differences: list[Difference] = field(default_factory=list)
    start_error: str | None = None

    @property
    def first(self) -> int | None:
        return self.differences[0].decision if self.differences else None

    def summary(self) -> str:
        first = "none" if self.first is None else f"decision {self.first}"
        return (f"seat {self.seat}: {self.asked} decisions asked, {len(self.differences)} answered "
                f"differently; first difference: {first}")  # fmt: skip


def compare(record: GameRecord, factory: Callable[[], Bot], seat: int) -> Comparison:
    """Asks a new bot from ``factory`` every decision of ``seat`` in the recorded game (the
    game goes on as recorded) and lists where it answers differently from what was played."""
    _check_seat(record, seat)
    bot = factory()
    result = Comparison(seat, start_error=_start(bot, record, seat))
    mid = match_id(record)
    for k, state, step in positions(record):
        if step.seat != seat:
            continue
        result.asked += 1
        action, error, _ = _ask(bot, state, seat, mid)
        if action != step.action:
            result.differences.append(
                Difference(
                    k + 1, result.asked, step.action, action, step.by, step.fault, error, render(state, seat)
                )
            )
    with contextlib.suppress(Exception):  # the game is replayed for act(); validate reports the hooks
        bot.on_match_end(MatchResult(mid, list(record.scores), list(record.ranking), seat))
    return result


def _check_seat(record: GameRecord, seat: int) -> None:
    if not 0 <= seat < record.players:
        raise ReplayError(f"--seat {seat}: the game has seats 0..{record.players - 1}")


# ---------------------------------------------------------------------------- --from K


@dataclass
class Continuation:
    start: int  # the first decision the bots played (1-based)
    scores: list[int]
    ranking: list[int]
    steps: list[tuple[int, str, str]]  # (seat, action, "bot" | "fallback") from decision `start` on
    faults: list[str]


def continue_from(record: GameRecord, start: int, bots: Sequence[Bot]) -> Continuation:
    """Decisions 1..start-1 as recorded (every bot is asked them too, its answer ignored, so that
    it knows the game so far as it would have), then ``bots[seat]`` play every seat to the end;
    a fault is played by the first legal action, as the arena's fallback."""
    if not 1 <= start <= len(record.steps) + 1:
        raise ReplayError(f"--from {start}: the game has decisions 1..{len(record.steps)}")
    mid = match_id(record)
    faults = [f"seat {s}: {e}" for s, bot in enumerate(bots) if (e := _start(bot, record, s)) is not None]
    state = new_state(record)
    for k, before, step in positions(record):
        if k + 1 >= start:
            break
        _ask(bots[step.seat], before, step.seat, mid)
        state.apply(step.action)
    played: list[tuple[int, str, str]] = []
    while not state.is_terminal:
        seat = state.current_player
        assert seat is not None
        action, error, _ = _ask(bots[seat], state, seat, mid)
        if action is None:
            faults.append(f"seat {seat}, decision {len(state.history) + 1}: {error}")
            action = state.legal_actions()[0]
            played.append((seat, action, "fallback"))
        else:
            played.append((seat, action, "bot"))
        state.apply(action)
    for seat, bot in enumerate(bots):
        with contextlib.suppress(Exception):
            bot.on_match_end(MatchResult(mid, list(state.scores), list(state.ranking), seat))
    return Continuation(start, list(state.scores), list(state.ranking), played, faults)


# ---------------------------------------------------------------------------- sources


def load_file(path: str, game: int = 1) -> GameRecord:
    """The ``game``-th game (from 1) of a record file."""
    from .record import RecordError, read_records

    try:
        records = read_records(path)
    except RecordError as exc:
        raise ReplayError(str(exc)) from None
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not 1 <= game <= len(records):
        raise ReplayError(f"--game {game}: {path} holds {len(records)} game(s)")
    return records[game - 1]


def fetch_match(
    match: int, api: str | None = None, token: str | None = None, timeout: float = 30
) -> GameRecord:
    """``GET /v1/matches/{match}/record`` of the arena at ``api`` (default ``$ATOUT_API_URL``,
    else http://127.0.0.1:8000), with ``token`` (default ``$ATOUT_TOKEN``) when there is one."""
    from .record import GameRecord, RecordError

    base = api or os.environ.get("ATOUT_API_URL") or DEFAULT_API_URL
    if urllib.parse.urlsplit(base).scheme not in ("http", "https"):
        raise ReplayError(f"--api {base!r}: expected an http:// or https:// URL, e.g. {DEFAULT_API_URL}")
    url = f"{base.rstrip('/')}/v1/matches/{match}/record"
    token = token or os.environ.get("ATOUT_TOKEN")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.load(response)
    except urllib.error.HTTPError as exc:
        try:
            detail = json.load(exc).get("detail")
        except (ValueError, AttributeError):
            detail = None
        raise ReplayError(f"GET {url}: {exc.code} {detail or exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ReplayError(f"GET {url}: {reason} (is the arena running? --api URL)") from None
    except ValueError:
        raise ReplayError(f"GET {url}: the answer is not JSON") from None
    try:
        return GameRecord.from_dict(data)
    except RecordError as exc:
        raise ReplayError(f"GET {url}: {exc}") from None


# ---------------------------------------------------------------------------- seed mode


@dataclass
class SeedReplay:
    result: Any  # the LocalResult of the game played again
    faults: list[tuple[Any, str | None]]  # seat N's (Fault, position before it, for act() faults)


def replay_seed(
    game: str,
    players: int,
    seed: int,
    specs: Sequence[str],
    seat: int,
    options: dict[str, Any] | None = None,
    suit_permutation: str | None = None,
    bot_seeds: Sequence[Any] | None = None,
    match_id: str = "local",
) -> SeedReplay:
    """The game ``validate``/``test`` played (``atout.local.play`` with fallback, the same seed,
    bot seeds, options and match id), played again; seat ``seat``'s faults with their positions."""
    from .loading import load_bot
    from .local import play

    if len(specs) != players:
        raise ReplayError(f"--seats names {len(specs)} bot(s) for {players} players")
    if not 0 <= seat < players:
        raise ReplayError(f"--seat {seat}: the game has seats 0..{players - 1}")
    factories = [load_bot(spec) for spec in specs]
    bots = [factory() for factory in factories]
    result = play(game, bots, seed=seed, match_id=match_id, fallback=True, bot_seeds=bot_seeds,
                  suit_permutation=suit_permutation, **(options or {}))  # fmt: skip
    state = new_game(game, players=players, **(options or {})).new_state(
        seed=seed, suit_permutation=suit_permutation
    )
    faults: list[tuple[Any, str | None]] = []
    mine = sorted((f for f in result.faults if f.seat == seat), key=lambda f: f.turn)
    for fault in mine:
        if fault.hook != "act":
            faults.append((fault, None))
            continue
        while len(state.history) < fault.turn:
            state.apply(result.history[len(state.history)][1])
        faults.append((fault, render(state, seat)))
    return SeedReplay(result, faults)


# ---------------------------------------------------------------------------- the command


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _print_comparison(record: GameRecord, spec: str, comparison: Comparison) -> None:
    where = record.source.get("match") if record.source else None
    title = f"arena match {where}" if where is not None else f"{record.game}, seed {record.seed}"
    print(f"replay of {title} ({record.players} players), seat {comparison.seat} asked of {spec}")
    if comparison.start_error:
        print(f"  {comparison.start_error}")
    for diff in comparison.differences:
        now = diff.answered if diff.error is None else f"({diff.error})"
        by = "" if diff.by == "bot" else f" (by {diff.by}" + (f", {diff.fault})" if diff.fault else ")")
        print(f"\ndecision {diff.decision} (seat {comparison.seat}'s decision {diff.seat_decision}): "
              f"played {diff.played}{by}, your bot now: {now}")  # fmt: skip
        print(_indent(diff.position))
    print(("\n" if comparison.differences else "") + comparison.summary())


def _print_continuation(record: GameRecord, seat: int, cont: Continuation, names: Sequence[str]) -> None:
    print(f"\nfrom decision {cont.start} on, seat {seat} played by your bot, the others by "
          f"{', '.join(f'{i}: {n}' for i, n in enumerate(names) if i != seat) or 'nobody'}:")  # fmt: skip
    for i, (who, action, by) in enumerate(cont.steps):
        print(f"  {cont.start + i:>4}  seat {who}  {action}" + ("  (fallback)" if by != "bot" else ""))
    for fault in cont.faults:
        print(f"  fault: {fault}")
    print(f"recorded: scores {list(record.scores)}, ranking {list(record.ranking)}")
    print(f"now:      scores {cont.scores}, ranking {cont.ranking}")


def run(args: argparse.Namespace) -> int:
    """``atout-bot replay``, its arguments parsed (see cli.py); 0 whatever it finds, 2 bad usage."""
    from .loading import BotLoadError, load_bot

    try:
        if args.source is None:
            return _run_seed(args)
        if args.bot is None or args.seat is None:
            raise ReplayError("give --bot SPEC and --seat N (the bot to ask, the seat it plays)")
        factory = load_bot(args.bot)
        if args.source.isdigit() and not os.path.exists(args.source):
            record = fetch_match(int(args.source), args.api, args.token)
        else:
            if args.game is not None and not args.game.isdigit():
                raise ReplayError(
                    f"--game {args.game!r}: with a file, --game N is the N-th game of it (from 1)"
                )
            record = load_file(args.source, int(args.game or 1))
        if args.start is not None and not 1 <= args.start <= len(record.steps) + 1:
            raise ReplayError(f"--from {args.start}: the game has decisions 1..{len(record.steps)}")
        comparison = compare(record, factory, args.seat)
        _print_comparison(record, args.bot, comparison)
        if args.start is not None:
            recorded = [s.bot for s in sorted(record.seats, key=lambda s: s.seat)]
            recorded += [""] * (record.players - len(recorded))
            specs = [args.bot if i == args.seat else _field_spec(args.field, recorded[i])
                     for i in range(record.players)]  # fmt: skip
            bots = [load_bot(spec)() for spec in specs]
            cont = continue_from(record, args.start, bots)
            _print_continuation(record, args.seat, cont, specs)
    except (ReplayError, BotLoadError) as exc:
        print(f"atout-bot replay: {exc}", file=sys.stderr)
        return 2
    return 0


def _field_spec(field_spec: str | None, recorded: str | None) -> str:
    """--field, else the seat's recorded bot when it loads here, else the heuristic bot."""
    from .loading import load_bot

    if field_spec:
        return field_spec
    if recorded:
        try:
            load_bot(recorded)
        except Exception:  # BotLoadError, or a factory the record names that is not ours
            return "heuristic"
        return recorded
    return "heuristic"


def _run_seed(args: argparse.Namespace) -> int:
    if args.seed is None or args.game is None or args.seats is None or args.seat is None:
        raise ReplayError(
            "give a record FILE or MATCH_ID, or --game G --players P --seed S --seats SPECS --seat N"
        )
    specs = [s.strip() for s in args.seats.split(",")]
    players = args.players or len(specs)
    bot_seeds = None
    if args.bot_seeds is not None:
        bot_seeds = [int(s) if s.lstrip("-").isdigit() else s for s in args.bot_seeds.split(",")]
        if len(bot_seeds) != players:
            raise ReplayError(f"--bot-seeds names {len(bot_seeds)} seed(s) for {players} players")
    try:
        replay = replay_seed(args.game, players, args.seed, specs, args.seat, dict(args.option),
                             args.suit_permutation, bot_seeds, args.match_id)  # fmt: skip
    except ValueError as exc:  # the engine's: a bad option, permutation, game
        raise ReplayError(str(exc)) from None
    print(f"{args.game}, {players} players, seed {args.seed}"
          + (f", suit permutation {args.suit_permutation}" if args.suit_permutation else "")
          + f": seat {args.seat} is {specs[args.seat]}")  # fmt: skip
    for fault, position in replay.faults:
        print(f"\n{fault.describe()}")
        if position is not None:
            print(_indent(position))
            answer = repr(fault.action) if fault.kind == "illegal" else "(no answer: act() raised)"
            print(f"  the bot's answer: {answer}")
        if fault.traceback:
            print(_indent(fault.traceback.rstrip()))
    result = replay.result
    print(f"\n{len(replay.faults)} fault(s) of seat {args.seat} in {len(result.history)} decisions; "
          f"scores {list(result.scores)}, ranking {list(result.ranking)}")  # fmt: skip
    return 0
