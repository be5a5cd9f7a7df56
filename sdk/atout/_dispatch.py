"""The runner's per-match bookkeeping: one Bot per match, a match's events in order, different
matches concurrently. No network here: the runner feeds it the arena's match messages and gives
it a ``send`` function for the answers.

Every message of one match (start, decisions, rejections, end) goes through that match's own
queue, drained by one pool thread at a time; so a bot never sees two calls at once, and a slow
match only holds its own thread.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from .bot import Bot, MatchInfo, MatchResult, Observation, split_note
from .v1 import atout_pb2 as pb

_loads: Callable[[str | bytes], Any]
try:  # an observation parsed by orjson when it is installed (pip install orjson): ~5x json's speed
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - the plain library, as fine, slower
    _loads = json.loads

log = logging.getLogger("atout")

# What each fault kind of MatchEnd.faults means, after its count in the bot's log.
_FAULT_HINTS = {
    "timeout": ": no legal answer within the deadline (the first legal action was played)",
    "illegal": ": the deadline passed after illegal answers only (the first legal action was played)",
    "disconnected": ": no live stream when a decision was due (the first legal action was played)",
    "absent": ": not connected when the match started (the seat forfeited)",
}


def _seats_text(names: list[str], versions: list[str]) -> str:
    """`` (seat 0 mybot@v2, seat 1 house:random)`` from MatchStart's seat names and versions."""
    if not names:
        return ""
    seats = []
    for seat, name in enumerate(names):
        version = versions[seat] if seat < len(versions) else ""
        seats.append(f"seat {seat} {name}@{version}" if version else f"seat {seat} {name}")
    return f" ({', '.join(seats)})"

BotFactory = Callable[[], Bot]
Send = Callable[[pb.BotMessage], None]

# How many answered requests a match remembers (to answer a re-sent request without asking the
# bot again), and how many finished matches are remembered (to ignore their late messages).
_REMEMBERED_REQUESTS = 64
_REMEMBERED_ENDED = 4096


@dataclass
class _Request:
    observation: Observation | None
    answer: str | None = None  # None while the bot thinks, or when it gave no answer
    done: bool = False
    retries: int = 0
    think_ms: float = 0.0  # the bot's own time in act(), sent with the action
    note: str | None = None  # the note sent with the answer


@dataclass
class _Match:
    match_id: str
    bot: Bot | None = None
    info: MatchInfo | None = None
    failed: bool = False  # the factory or on_match_start raised: this match is not played
    queue: deque[tuple[str, Any]] = field(default_factory=deque)  # (kind, body) of its messages
    scheduled: bool = False
    requests: OrderedDict[str, _Request] = field(default_factory=OrderedDict)
    last_activity: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


class MatchDispatcher:
    """Routes MatchStart / DecisionRequest / Rejection / MatchEnd messages to one Bot per match.

    ``handle`` is called by the thread that reads the stream; bot code runs on ``executor``.
    """

    def __init__(
        self,
        factory: BotFactory,
        send: Send,
        executor: Executor,
        *,
        max_rejection_retries: int = 3,
        idle_timeout: float = 3600.0,
        inline: bool = False,
    ) -> None:
        self._factory = factory
        self._send = send
        self._executor = executor
        self._max_rejection_retries = max_rejection_retries
        self._idle_timeout = idle_timeout
        self._inline = inline  # the bot's calls on the caller's (the stream reader's) thread
        # idle matches are looked for at a match's start, at most this often (a scan of every
        # match at each start cost a bot in 1,500 matches a third of its time)
        self._sweep_every = min(idle_timeout / 4, 60.0)
        self._next_sweep = 0.0
        self._matches: dict[str, _Match] = {}
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False
        self._act_errors = 0  # decisions whose act() raised: the first with its traceback, then a line each

    # ------------------------------------------------------------------ reader thread

    def handle(self, msg: pb.ArenaMessage) -> None:
        """Queue one match message for its match. Returns at once."""
        kind = msg.WhichOneof("kind")
        if kind == "decisions":
            self.handle_decisions(msg.decisions)
            return
        if kind not in ("match_start", "decision", "rejection", "match_end"):
            raise ValueError(f"not a match message: {kind!r}")
        self._handle(kind, getattr(msg, kind))

    def handle_decisions(self, batch: pb.DecisionBatch) -> None:
        """A DecisionBatch: each of its requests as if it had come alone, in order."""
        for request in batch.requests:
            self._handle("decision", request)

    def _handle(self, kind: str, body: Any) -> None:
        match_id = body.match_id
        with self._lock:
            if self._closed:
                return
            if match_id in self._ended:
                if kind != "match_start":
                    log.debug("match %s: ignoring %s, the match is over", match_id, kind)
                    return
                # a MatchStart after the MatchEnd: the match is played again from its seed (its
                # earlier run ended "restarted"): a new run, with a fresh bot
                del self._ended[match_id]
            match = self._matches.get(match_id)
            if match is None:
                if kind == "match_start":
                    self._forget_idle()
                elif kind == "rejection":  # e.g. an answer sent before a restart of this runner
                    log.warning(
                        "match %s: the arena rejected %r (request %s): %s",
                        match_id,
                        body.action,
                        body.request_id,
                        body.reason,
                    )
                    return
                match = self._matches[match_id] = _Match(match_id)
            if kind == "match_end":
                del self._matches[match_id]
                self._ended[match_id] = None
                while len(self._ended) > _REMEMBERED_ENDED:
                    self._ended.popitem(last=False)
        with match.lock:
            match.last_activity = time.monotonic()
            if kind == "decision":
                known = match.requests.get(body.request_id)
                if known is not None:
                    # Sent again after a reconnect: answer from memory, never ask the bot twice.
                    if known.done and known.answer is not None:
                        self._send_action(match_id, body.request_id, known.answer, known.think_ms, known.note)
                    return
                match.requests[body.request_id] = _Request(None)
                while len(match.requests) > _REMEMBERED_REQUESTS:
                    match.requests.popitem(last=False)
            match.queue.append((kind, body))
            if match.scheduled:
                return
            match.scheduled = True
        if self._inline:
            self._drain(match)
            return
        try:
            self._executor.submit(self._drain, match)
        except RuntimeError:  # the executor is shut down: the runner is stopping
            log.debug("match %s: dropped %s, the runner is stopping", match_id, kind)

    def active_matches(self) -> list[str]:
        with self._lock:
            return list(self._matches)

    def close(self) -> None:
        """Stop accepting messages; running bot calls finish on their own."""
        with self._lock:
            self._closed = True

    def _forget_idle(self) -> None:
        """Drop matches silent for ``idle_timeout`` (their end was missed while disconnected);
        looked for at most once every ``idle_timeout / 4`` (60 s at most)."""
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + self._sweep_every
        for match_id, match in list(self._matches.items()):
            if not match.scheduled and now - match.last_activity > self._idle_timeout:
                log.warning(
                    "match %s: forgetting it, no message for %.0f s (its end was missed)",
                    match_id,
                    now - match.last_activity,
                )
                del self._matches[match_id]

    # ------------------------------------------------------------------ pool threads

    def _drain(self, match: _Match) -> None:
        while True:
            with match.lock:
                if not match.queue:
                    match.scheduled = False
                    return
                kind, body = match.queue.popleft()
            try:
                getattr(self, f"_on_{kind}")(match, body)
            except Exception:
                log.exception("match %s: error while handling %s", match.match_id, kind)

    def _act_raised(self, req: pb.DecisionRequest, exc: Exception) -> None:
        """The first failing act() with its full traceback; each later one as one line with the
        count so far (a bot that raises on every decision must not flood its log)."""
        with self._lock:
            self._act_errors += 1
            count = self._act_errors
        if count == 1:
            log.exception(
                "match %s seat %d: act() raised on request %s; no answer sent, the arena will time "
                "this decision out (later errors of act() are logged in one line each)",
                req.match_id,
                req.seat,
                req.request_id,
            )
        else:
            log.error(
                "match %s seat %d: act() raised again: %s: %s (%d decisions failed so far); no answer sent",
                req.match_id,
                req.seat,
                type(exc).__name__,
                " ".join(str(exc).split())[:200],
                count,
            )

    def _start_bot(self, match: _Match, info: MatchInfo) -> Bot | None:
        match.info = info
        try:
            bot = self._factory()
            bot.match = info
            rng = getattr(bot, "rng", None)
            if rng is not None:
                rng.seed(f"{info.match_id}/{info.seat}")
            bot.on_match_start(info)
        except Exception:
            match.failed = True
            log.exception(
                "match %s seat %d: could not start the bot; its decisions will not be answered",
                info.match_id,
                info.seat,
            )
            return None
        match.bot = bot
        return bot

    def _on_match_start(self, match: _Match, start: pb.MatchStart) -> None:
        seat_names = list(start.seat_names)
        if match.bot is not None and match.info is not None:  # started lazily by a decision
            match.info.players = start.players or match.info.players
            match.info.seat_names = seat_names
            return
        options = json.loads(start.options_json) if start.options_json else {}
        info = MatchInfo(start.match_id, start.game, start.seat, start.players, options, seat_names)
        log.info(
            "match %s started: %s, seat %d of %d%s",
            start.match_id,
            start.game,
            start.seat,
            start.players,
            _seats_text(seat_names, list(start.seat_versions)),
        )
        self._start_bot(match, info)

    def _on_decision(self, match: _Match, req: pb.DecisionRequest) -> None:
        received = time.monotonic()
        if match.failed:
            log.warning("match %s seat %d: no bot for this match, not answering", req.match_id, req.seat)
            return
        try:
            raw = _loads(req.observation_json)
        except ValueError as exc:
            log.error(
                "match %s seat %d: unreadable observation (%s); not answering", req.match_id, req.seat, exc
            )
            return
        observation = Observation(raw, list(req.legal_actions), req.deadline_ms, req.match_id)
        bot = match.bot
        if bot is None:
            players = raw.get("players", 0) if isinstance(raw, dict) else 0
            log.info(
                "match %s: joining it mid-play (its start was missed): %s, seat %d",
                req.match_id,
                req.game,
                req.seat,
            )
            bot = self._start_bot(match, MatchInfo(req.match_id, req.game, req.seat, players))
            if bot is None:
                return
        with match.lock:
            request = match.requests.setdefault(req.request_id, _Request(None))
            request.observation = observation
        started = time.perf_counter()
        try:
            answer = bot.act(observation)
        except Exception as exc:
            self._act_raised(req, exc)
            request.done = True
            return
        request.think_ms = (time.perf_counter() - started) * 1000
        elapsed_ms = (time.monotonic() - received) * 1000
        if req.deadline_ms and elapsed_ms > req.deadline_ms:
            log.warning(
                "match %s seat %d: act() took %.0f ms, the deadline was %d ms: the answer is late",
                req.match_id,
                req.seat,
                elapsed_ms,
                req.deadline_ms,
            )
        self._answer(match, req.request_id, request, answer, observation, req.seat)

    def _answer(
        self,
        match: _Match,
        request_id: str,
        request: _Request,
        answer: object,
        observation: Observation,
        seat: int,
    ) -> None:
        answer, note = split_note(answer)
        if not isinstance(answer, str):
            log.error(
                "match %s seat %d: the bot returned %r (%s), not an action string; no answer sent. "
                "Legal actions: %s",
                match.match_id,
                seat,
                answer,
                type(answer).__name__,
                observation.legal_actions,
            )
            request.done = True
            return
        if answer not in observation.legal_actions:
            log.warning(
                "match %s seat %d: the bot answered %r, not one of the legal actions %s; sending it "
                "anyway, the arena decides",
                match.match_id,
                seat,
                answer,
                observation.legal_actions,
            )
        request.answer = answer
        request.note = note
        request.done = True
        self._send_action(match.match_id, request_id, answer, request.think_ms, note)

    def _send_action(
        self, match_id: str, request_id: str, action: str, think_ms: float = 0.0, note: str | None = None
    ) -> None:
        """An answer, with the bot's own time in ``act()`` (the arena tells it from network time)
        and its note, if any."""
        self._send(pb.BotMessage(action=pb.Action(
            request_id=request_id, match_id=match_id, action=action, think_ms=round(think_ms, 3),
            note=note.encode("utf-8") if note else b"",
        )))

    def _on_rejection(self, match: _Match, rej: pb.Rejection) -> None:
        seat = match.info.seat if match.info is not None else -1
        log.warning(
            "match %s seat %d: the arena rejected %r (request %s): %s",
            rej.match_id,
            seat,
            rej.action,
            rej.request_id,
            rej.reason,
        )
        with match.lock:
            request = match.requests.get(rej.request_id)
        if match.bot is None or request is None or request.observation is None:
            return
        if rej.final or rej.code not in ("", "illegal"):  # the decision is over, or not the engine's
            return
        if request.retries >= self._max_rejection_retries:
            log.warning(
                "match %s seat %d: %d answers to request %s rejected; not asking the bot again",
                rej.match_id,
                seat,
                request.retries + 1,
                rej.request_id,
            )
            return
        request.retries += 1
        try:
            again = match.bot.on_rejection(request.observation, rej.action, rej.reason)
        except Exception:
            log.exception("match %s seat %d: on_rejection() raised", rej.match_id, seat)
            return
        if again is not None:
            self._answer(match, rej.request_id, request, again, request.observation, seat)

    def _on_match_end(self, match: _Match, end: pb.MatchEnd) -> None:
        result = MatchResult(end.match_id, list(end.scores), list(end.ranking), end.seat, end.reason)
        place = result.ranking[end.seat] if end.seat < len(result.ranking) else None
        log.info(
            "match %s ended (%s): %s, scores %s",
            end.match_id,
            end.reason or "finished",
            f"place {place} of {len(result.ranking)}" if place is not None else "no ranking",
            result.scores,
        )
        for kind, count in sorted(end.faults.items()):
            log.warning(
                "match %s seat %d: the arena charged %d %s fault%s to this seat%s",
                end.match_id,
                end.seat,
                count,
                kind,
                "" if count == 1 else "s",
                _FAULT_HINTS.get(kind, ""),
            )
        bot, match.bot = match.bot, None
        match.requests.clear()
        if bot is not None:
            bot.on_match_end(result)
