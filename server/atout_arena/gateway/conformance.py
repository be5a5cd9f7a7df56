"""A conformance check for any bot: a scripted game server that plays matches against the bot
under test and reports each rule of docs/protocol.md it breaks (``atout-arena conformance``).

The bot under test is a client, so the check is a server: it listens on 127.0.0.1, gives out
an address and a token, speaks ``BotGateway.Connect`` itself (the generated stubs, the real
rules engines for every request, observation and legal action), and checks what comes back:

========================  ===================================================================
rule                      what passes
========================  ===================================================================
``hello``                 the first message is a ``Hello{protocol_version: 1}`` (a version of
                          at most 64 printable characters), and only one Hello per stream
``pong``                  a ``Pong`` answers the server's ``Ping`` (its nonce echoed)
``request-id``            every Action names a request this stream was sent
``match-id``              an Action's ``match_id`` is empty or the request's match
``deadline``              every request is answered before its deadline (``deadline_ms``, plus
                          500 ms of network lag, as the arena compensates)
``legal``                 every answer is one of the request's legal actions (any accepted
                          spelling); each refused one gets its ``Rejection``
``reconnect``             after Error ``shutting_down`` and Error ``moved`` (the server ends the
                          call) the bot connects again, with the same Hello ``version``
``resend``                a request sent again after the reconnect (same ``request_id``) is
                          answered again, with the same action
``after-match-end``       no Action for a match after its ``MatchEnd``
========================  ===================================================================

One match of each game is played (the bot in seat 1, the other seats random), the same as an
arena would: ``MatchStart``, one request at a time, ``MatchEnd``. A decision ends without a
legal answer at its deadline or at the 8th rejected answer (the first legal action is played);
after 3 such faults the seat is forfeited (its remaining decisions played without asking it),
so a broken bot does not take long. Nothing here touches Redis or a database.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from atout.games import IllegalAction, State, new_game, normalise_action
from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc

RULES: dict[str, str] = {
    "hello": "the first message is Hello{protocol_version: 1}",
    "pong": "a Ping is answered with a Pong of its nonce",
    "request-id": "every Action names a request this stream was sent",
    "match-id": "an Action's match_id is empty or its request's match",
    "deadline": "every request is answered before its deadline",
    "legal": "every answer is a legal action",
    "reconnect": "after Error shutting_down / moved the bot reconnects with the same Hello",
    "resend": "a request sent again after a reconnect is answered again, the same way",
    "after-match-end": "no Action for a match after its MatchEnd",
}
# One short match of each game: (game, options, players)
MATCHES: dict[str, tuple[dict[str, Any], int]] = {
    "merde": ({"deals": 3}, 3),
    "tiercon": ({}, 2),
    "regicide": ({}, 3),
    "fool": ({}, 2),
}
LAG_MS = 500  # the arena's lag compensation, at most 500 ms a decision
MAX_REJECTIONS = 8
MAX_FAULTS = 3
PONG_WAIT_S = 3.0
HELLO_WAIT_S = 10.0  # the arena's hello timeout
RECONNECT_WAIT_S = 15.0  # the arena's reconnect grace
QUIET_S = 1.0  # how long the end of the check listens for late Actions
KEEPALIVE_MS = 10_000
CLOSES = ("shutting_down", "moved")  # the Errors the script ends a stream with, in this order


class Ended(Exception):  # noqa: N818 - a stream's end, not a bug
    """The bot's stream ended (the bot dropped it) while the script waited on it."""


@dataclass
class Rule:
    name: str
    text: str
    failures: list[str] = field(default_factory=list)
    passes: list[str] = field(default_factory=list)
    skipped: str = ""

    @property
    def status(self) -> str:
        if self.failures:
            return "FAIL"
        return "PASS" if self.passes else "SKIP"

    def line(self) -> str:
        if self.failures:
            more = f" (and {len(self.failures) - 1} more)" if len(self.failures) > 1 else ""
            seen = self.failures[0] + more
        elif self.passes:
            seen = self.passes[-1]
        else:
            seen = f"not checked: {self.skipped or 'never reached'}"
        return f"{self.status} {self.name}: {seen}"


class Stream:
    """One Connect call of the bot: what it sent (timestamped), and a way to write to it."""

    def __init__(self, context: grpc.aio.ServicerContext, number: int) -> None:
        self.context = context
        self.number = number
        self.inbox: asyncio.Queue[tuple[float, pb.BotMessage] | None] = asyncio.Queue()
        self.done = asyncio.Event()
        self.lock = asyncio.Lock()
        self.pongs: list[int] = []

    async def send(self, message: pb.ArenaMessage) -> None:
        async with self.lock:
            if not self.done.is_set():
                await self.context.write(message)

    async def close(self, code: str, message: str) -> None:
        await self.send(pb.ArenaMessage(error=pb.Error(code=code, message=message)))
        self.done.set()

    async def next(self, timeout: float) -> tuple[float, pb.BotMessage] | None:
        """The bot's next message (not a Ping: those are answered at once), None after
        ``timeout``; :class:`Ended` when the stream is gone."""
        try:
            item = await asyncio.wait_for(self.inbox.get(), max(0.0, timeout))
        except TimeoutError:
            return None
        if item is None:
            self.inbox.put_nowait(None)  # every later read sees the end too
            raise Ended(f"the bot ended stream {self.number}")
        return item


class ConformanceServicer(pb_grpc.BotGatewayServicer):
    """``BotGateway.Connect``: checks the token, hands each stream to the script."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.arrivals: asyncio.Queue[Stream] = asyncio.Queue()
        self.count = 0

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        metadata = dict(context.invocation_metadata() or ())
        scheme, _, token = str(metadata.get("authorization", "")).partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.token:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "invalid bot token (the conformance check printed the one to use)")
        self.count += 1
        stream = Stream(context, self.count)

        async def read() -> None:
            try:
                while True:
                    message = await context.read()
                    if message is grpc.aio.EOF:
                        break
                    assert isinstance(message, pb.BotMessage)
                    if message.WhichOneof("kind") == "ping":  # answered at once, as the arena does
                        await stream.send(pb.ArenaMessage(pong=pb.Pong(nonce=message.ping.nonce)))
                        continue
                    stream.inbox.put_nowait((time.monotonic(), message))
            except (grpc.RpcError, asyncio.CancelledError):
                pass
            finally:
                stream.inbox.put_nowait(None)

        reader = asyncio.ensure_future(read())
        self.arrivals.put_nowait(stream)
        done = asyncio.ensure_future(stream.done.wait())
        await asyncio.wait([reader, done], return_when=asyncio.FIRST_COMPLETED)
        stream.done.set()
        reader.cancel()
        done.cancel()


@dataclass
class Sent:
    """A request the script sent: its match, legal actions, and what became of it."""

    match_id: str
    legal: list[str]
    deadline: float = 0.0  # monotonic, when the current sending's time is up
    state: str = "open"  # open, answered, expired, ended
    answer: str | None = None


class Checker:
    """The script: wait for the bot, check its Hello and Pong, play one match per game (two
    reconnects in the first), listen for stray Actions at the end."""

    def __init__(self, servicer: ConformanceServicer, games: Sequence[str] = tuple(MATCHES),
                 move_ms: int = 2000, seed: int = 1) -> None:
        self.servicer = servicer
        self.games = list(games)
        self.move_ms = move_ms
        self.rng = random.Random(seed)
        self.rules = {name: Rule(name, text) for name, text in RULES.items()}
        self.sent: dict[str, Sent] = {}
        self.ended: set[str] = set()
        self.stream: Stream | None = None
        self.version = ""

    def fail(self, rule: str, seen: str) -> None:
        self.rules[rule].failures.append(seen)

    def ok(self, rule: str, seen: str) -> None:
        self.rules[rule].passes.append(seen)

    def results(self) -> list[Rule]:
        return list(self.rules.values())

    async def run(self, connect_timeout: float = 60.0) -> list[Rule]:
        try:
            stream = await asyncio.wait_for(self.servicer.arrivals.get(), connect_timeout)
        except TimeoutError:
            return self._skip_all(f"no bot connected within {connect_timeout:.0f} s")
        try:
            if not await self._handshake(stream, first=True):
                return self._skip_all("no Welcome (the Hello was refused)")
            await self._ping(stream)
            for index, game in enumerate(self.games):
                await self._match(game, index, reconnects=CLOSES if index == 0 else ())
            await self._listen(QUIET_S)
            for name in ("request-id", "match-id", "after-match-end"):
                if not self.rules[name].failures and self.sent:
                    self.ok(name, f"{len(self.sent)} requests, every Action named one sent, in its match")
        except Ended as exc:
            for rule in self.rules.values():
                rule.skipped = rule.skipped or f"{exc} mid-check, without being told to"
            self.fail("reconnect", f"{exc}: the bot dropped its stream itself")
        return self.results()

    def _skip_all(self, why: str) -> list[Rule]:
        for rule in self.rules.values():
            rule.skipped = rule.skipped or why
        if not self.rules["hello"].failures:
            self.fail("hello", why)
        return self.results()

    async def _handshake(self, stream: Stream, first: bool) -> bool:
        self.stream = stream
        try:
            item = await stream.next(HELLO_WAIT_S)
        except Ended:
            item = None
        if item is None:
            self.fail("hello", f"no message within {HELLO_WAIT_S:.0f} s of connecting "
                               f"(stream {stream.number})")
            await stream.close("bad_message", "no Hello within the hello timeout")
            return False
        _, message = item
        kind = message.WhichOneof("kind")
        if kind != "hello":
            self.fail("hello", f"the first message of stream {stream.number} is "
                               f"{kind or 'an empty BotMessage'}, not a Hello")
            await stream.close("bad_message", "the first message must be a Hello")
            return False
        hello = message.hello
        if hello.protocol_version != 1:
            self.fail("hello", f"Hello.protocol_version {hello.protocol_version}, not 1")
            await stream.close("unsupported_version",
                               f"protocol version {hello.protocol_version} is not supported")
            return False
        if len(hello.version) > 64 or not hello.version.isprintable():
            self.fail("hello", f"Hello.version {hello.version[:80]!r}: more than 64 characters or "
                               f"not printable")
            await stream.close("bad_message", "Hello.version: at most 64 printable characters")
            return False
        if first:
            self.version = hello.version
            self.ok("hello", f"Hello{{protocol_version: 1, version: {hello.version!r}, "
                             f"client: {hello.client!r}}}")
        elif hello.version != self.version:
            self.fail("reconnect", f"the Hello of stream {stream.number} has version {hello.version!r}, "
                                   f"the first had {self.version!r}")
        await stream.send(pb.ArenaMessage(welcome=pb.Welcome(
            protocol_version=1, bot_id="conformance", bot_name="bot-under-test", server_id="conformance",
            keepalive_ms=KEEPALIVE_MS, features=[],
        )))
        return True

    async def _ping(self, stream: Stream) -> None:
        nonce = (1 << 60) + self.rng.randrange(1 << 40)  # beyond JavaScript's safe integers
        await stream.send(pb.ArenaMessage(ping=pb.Ping(nonce=nonce)))
        until = time.monotonic() + PONG_WAIT_S
        while (item := await stream.next(until - time.monotonic())) is not None:
            message = item[1]
            if message.WhichOneof("kind") == "pong":
                if message.pong.nonce == nonce:
                    took = 1000 * (item[0] - until + PONG_WAIT_S)
                    self.ok("pong", f"Pong{{nonce: {nonce}}} in {took:.0f} ms")
                else:
                    self.fail("pong", f"Pong{{nonce: {message.pong.nonce}}} to Ping{{nonce: {nonce}}}")
                return
            await self._stray(message, item[0])
        self.fail("pong", f"no Pong within {PONG_WAIT_S:.0f} s of Ping{{nonce: {nonce}}}")

    async def _listen(self, seconds: float) -> None:
        assert self.stream is not None
        until = time.monotonic() + seconds
        while (item := await self.stream.next(until - time.monotonic())) is not None:
            await self._stray(item[1], item[0])

    def _actions(self, message: pb.BotMessage) -> list[pb.Action]:
        kind = message.WhichOneof("kind")
        if kind == "action":
            return [message.action]
        if kind == "actions":
            return list(message.actions.actions)
        return []

    async def _reject(self, action: pb.Action, reason: str) -> None:
        assert self.stream is not None
        await self.stream.send(pb.ArenaMessage(rejection=pb.Rejection(
            request_id=action.request_id, match_id=action.match_id, action=action.action, reason=reason)))

    async def _stray(self, message: pb.BotMessage, at: float) -> None:
        """A message that answers nothing the script waits for."""
        kind = message.WhichOneof("kind")
        if kind == "hello":
            self.fail("hello", "a second Hello on the stream")
            assert self.stream is not None
            error = pb.Error(code="bad_message", message="a second Hello")
            await self.stream.send(pb.ArenaMessage(error=error))
        for action in self._actions(message):
            await self._stray_action(action, at)

    async def _stray_action(self, action: pb.Action, at: float) -> None:
        sent = self.sent.get(action.request_id)
        seen = f"Action{{request_id: {action.request_id!r}, action: {action.action!r}}}"
        unknown = f"unknown request_id {action.request_id!r}: no open request of this bot has it"
        if sent is None:
            self.fail("request-id", f"{seen}: no request has this id")
            await self._reject(action, unknown)
        elif sent.state == "ended":
            self.fail("after-match-end", f"{seen} after the MatchEnd of match {sent.match_id}")
            await self._reject(action, unknown)
        elif sent.state == "expired":
            late = 1000 * (at - sent.deadline)
            self.fail("deadline", f"an answer to request {action.request_id} {late:.0f} ms after "
                                  f"its deadline")
            await self._reject(action, f"too late: the deadline passed {late:.0f} ms ago")
        # a second answer to a request answered legally is ignored, as the arena does

    async def _match(self, game: str, index: int, reconnects: Sequence[str]) -> None:
        options, players = MATCHES[game]
        match_id = f"conformance-{index + 1}"
        seed = self.rng.randrange(1 << 30)
        state = new_game(game, players=players, **options).new_state(seed=seed)
        seat = 1
        others = random.Random(seed)
        start = pb.ArenaMessage(match_start=pb.MatchStart(
            match_id=match_id, game=game, seat=seat, players=players, options_json=json.dumps(options),
            seat_names=[f"house-{s}" if s != seat else "bot-under-test" for s in range(players)],
        ))
        assert self.stream is not None
        await self.stream.send(start)
        faults = decisions = 0
        pending = list(reconnects)
        while not state.is_terminal:
            legal = state.legal_actions()
            if state.current_player != seat or faults >= MAX_FAULTS:
                state.apply(legal[0] if state.current_player == seat else others.choice(legal))
                continue
            decisions += 1
            request_id = uuid.uuid4().hex
            self.sent[request_id] = Sent(match_id, legal)
            request = pb.DecisionRequest(
                request_id=request_id, match_id=match_id, game=game, seat=seat,
                observation_json=json.dumps(state.observation(seat)), legal_actions=legal,
                deadline_ms=self.move_ms,
            )
            answer = await self._ask(state, request)
            if pending and decisions in (1, 3):
                code = pending.pop(0)
                answer = await self._reconnect(code, state, request, start, answer)
            if answer is None:
                faults += 1
                answer = legal[0]
            state.apply(answer)
        for sent in self.sent.values():
            if sent.match_id == match_id:
                sent.state = "ended"
        ranking = state.ranking
        await self.stream.send(pb.ArenaMessage(match_end=pb.MatchEnd(
            match_id=match_id, seat=seat, scores=[int(s) for s in state.scores], ranking=ranking,
            reason="forfeit" if faults >= MAX_FAULTS else "finished",
        )))

    async def _ask(self, state: State, request: pb.DecisionRequest) -> str | None:
        """Send a request and read until a legal answer, its deadline (plus lag) or its 8th
        rejection; the legal answer, or None."""
        stream = self.stream
        assert stream is not None
        sent = self.sent[request.request_id]
        sent.state = "open"
        written = time.monotonic()
        sent.deadline = written + request.deadline_ms / 1000
        until = sent.deadline + LAG_MS / 1000
        await stream.send(pb.ArenaMessage(decision=request))
        rejected = 0
        while (item := await stream.next(until - time.monotonic())) is not None:
            at, message = item
            actions = self._actions(message)
            if not actions:
                await self._stray(message, at)
            for action in actions:
                if action.request_id != request.request_id:
                    await self._stray_action(action, at)
                    continue
                if action.match_id and action.match_id != request.match_id:
                    self.fail("match-id", f"Action{{request_id: {action.request_id!r}, "
                                          f"match_id: {action.match_id!r}}} for a request of match "
                                          f"{request.match_id!r}")
                    await self._reject(action, f"request {action.request_id} belongs to match "
                                               f"{request.match_id}, not {action.match_id}")
                    continue
                if sent.state != "open":
                    continue  # a second answer: ignored
                text = action.action
                if text not in sent.legal and normalise_action(text) not in sent.legal:
                    rejected += 1
                    self.fail("legal", f"{text!r} to a request of {request.game} whose legal actions are "
                                       f"{', '.join(sent.legal[:6])}{', ...' if len(sent.legal) > 6 else ''}")
                    await self._reject(action, self._why(state, text))
                    if rejected >= MAX_REJECTIONS:
                        sent.state = "expired"
                        return None
                    continue
                sent.state = "answered"
                sent.answer = text if text in sent.legal else normalise_action(text)
                took = 1000 * (at - written)
                self.ok("legal", f"{len(self.sent)} requests answered legally")
                self.ok("deadline", f"every answer in time (the last in {took:.0f} ms of "
                                    f"{request.deadline_ms})")
                return sent.answer
        sent.state = "expired"
        self.fail("deadline", f"request {request.request_id} of {request.game} not answered legally within "
                              f"{request.deadline_ms} ms (+{LAG_MS} ms of lag)")
        return None

    def _why(self, state: State, text: str) -> str:
        try:
            state.clone().apply(text)
        except IllegalAction as exc:
            return str(exc)
        return f"illegal action {text!r}"  # pragma: no cover - checked against the legal list first

    async def _reconnect(self, code: str, state: State, request: pb.DecisionRequest, start: pb.ArenaMessage,
                         answer: str | None) -> str | None:
        """End the stream with Error ``code`` as if the answer was lost; wait for the bot to come
        back; send the match's MatchStart and the same request again."""
        assert self.stream is not None
        old = self.stream
        await old.close(code, "the conformance check ends this stream: reconnect"
                        if code == "shutting_down" else "moved to another game server: reconnect")
        try:
            stream = await asyncio.wait_for(self.servicer.arrivals.get(), RECONNECT_WAIT_S)
        except TimeoutError:
            self.fail("reconnect", f"no new stream within {RECONNECT_WAIT_S:.0f} s of Error {code}")
            raise Ended(f"the bot did not reconnect after Error {code}") from None
        if not await self._handshake(stream, first=False):
            raise Ended(f"the Hello of stream {stream.number} was refused")
        self.ok("reconnect", f"reconnected after Error {code} (stream {stream.number})")
        await stream.send(start)
        again = await self._ask(state, request)
        what = f"request {request.request_id} sent again after Error {code}"
        if again is None:
            self.fail("resend", f"{what}: no legal answer")
        elif answer is not None and again != answer:
            self.fail("resend", f"{what}: answered {again!r}, {answer!r} the first time")
        else:
            self.ok("resend", f"request sent again after Error {code} answered {again!r}")
        return again


async def serve(port: int = 0, host: str = "127.0.0.1",
                token: str | None = None) -> tuple[grpc.aio.Server, ConformanceServicer, str]:
    """Start the conformance server: ``(server, servicer, "HOST:PORT")``."""
    server = grpc.aio.server()
    # prefixed: a bare token_urlsafe starts with '-' one time in 64, and `--token -x...` is read
    # as a missing argument by the bot's command line (the conformance test once failed so)
    servicer = ConformanceServicer(token or "conformance_" + secrets.token_urlsafe(18))
    pb_grpc.add_BotGatewayServicer_to_server(servicer, server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if not bound:
        raise OSError(f"cannot listen on {host}:{port}")
    await server.start()
    return server, servicer, f"{host}:{bound}"


def report(rules: Sequence[Rule]) -> tuple[str, int]:
    """The report, one line per rule, and the exit code: 0 when no rule failed."""
    text = "\n".join(rule.line() for rule in rules)
    return text, int(any(rule.status != "PASS" for rule in rules))


async def check(port: int = 0, games: Sequence[str] = tuple(MATCHES), move_ms: int = 2000,
                command: Sequence[str] = (), connect_timeout: float = 60.0,
                say: Any = print) -> int:
    """``atout-arena conformance``: serve, say the address and token (or start ``command``, its
    ``{address}`` and ``{token}`` replaced, its output on stderr), run the script, say the report;
    the exit code (0: every rule passed)."""
    import subprocess
    import sys

    server, servicer, address = await serve(port)
    bot: subprocess.Popen[bytes] | None = None
    try:
        say(f"conformance server at {address}, token {servicer.token}")
        if command:
            argv = [part.replace("{address}", address).replace("{token}", servicer.token) for part in command]
            say(f"starting the bot under test: {' '.join(command)}")
            bot = subprocess.Popen(argv, stdout=sys.stderr, stderr=sys.stderr)
        else:
            say(f"connect the bot under test: --server {address} --token {servicer.token}")
        rules = await Checker(servicer, games, move_ms).run(connect_timeout)
        text, code = report(rules)
        say(text)
        return code
    finally:
        if bot is not None:
            bot.terminate()
            try:
                bot.wait(5)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()
        await server.stop(0.5)
