"""Helpers of the game-server tests: waiting, bot event files, a raw gRPC bot, engine requests."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc

from atout.games import new_game
from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc
from atout_arena.core.match import legality_check


def wait_until(predicate: Callable[..., object], timeout: float = 10.0, what: str = "condition") -> None:
    """Poll ``predicate()`` until it is true, or fail after ``timeout``. (Callable[..., object]: a
    lambda that binds a loop variable as a default, called with none, is typed so.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def read_events(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def engine_request(seed: int = 1, game: str = "merde", players: int = 3) -> dict[str, Any]:
    """The keyword arguments of a DecisionClient.request for the first decision of a real game
    (``bot_id``, ``match_id`` and ``deadline_ms`` left to the caller)."""
    state = new_game(game, players=players).new_state(seed=seed)
    seat = state.current_player
    assert seat is not None
    return {
        "game": game,
        "seat": seat,
        "observation": state.observation(seat),
        "legal_actions": state.legal_actions(),
        "check": legality_check(state),
    }


def metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token is not None else ()


def hello(version: int = 1) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(protocol_version=version, client="raw-test-client"))


class RawBot:
    """A bare BotGateway.Connect stream: send BotMessages, receive ArenaMessages."""

    def __init__(
        self, address: str, token: str | None, md: tuple[tuple[str, str], ...] | None = None
    ) -> None:
        self.channel = grpc.insecure_channel(address)
        self.outgoing: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        self.incoming: queue.SimpleQueue[pb.ArenaMessage | None] = queue.SimpleQueue()
        stub = pb_grpc.BotGatewayStub(self.channel)
        self.call = stub.Connect(self._requests(), metadata=md if md is not None else metadata(token))
        self.error: grpc.RpcError | None = None
        self.ended = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _requests(self) -> Iterator[pb.BotMessage]:
        while True:
            message = self.outgoing.get()
            if message is None:
                return
            yield message

    def _read(self) -> None:
        try:
            for message in self.call:
                self.incoming.put(message)
        except grpc.RpcError as exc:
            self.error = exc
        finally:
            self.ended.set()
            self.incoming.put(None)

    def send(self, message: pb.BotMessage) -> None:
        self.outgoing.put(message)

    def recv(self, timeout: float = 5.0, skip: tuple[str, ...] = ("ping",)) -> pb.ArenaMessage | None:
        """The next message (pings skipped), or None when the stream ended."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.incoming.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise AssertionError(f"no message within {timeout} s") from None
            if message is None:
                self.incoming.put(None)  # stays ended
                return None
            if message.WhichOneof("kind") not in skip:
                return message

    def next(self, timeout: float = 5.0, skip: tuple[str, ...] = ("ping",)) -> pb.ArenaMessage:
        """The next message (pings skipped); the stream must not have ended."""
        message = self.recv(timeout, skip)
        assert message is not None, f"the stream ended ({self.error})"
        return message

    def connect(self) -> pb.Welcome:
        self.send(hello())
        message = self.recv()
        assert message is not None and message.WhichOneof("kind") == "welcome", (message, self.error)
        return message.welcome

    def answer(self, request: pb.DecisionRequest, action: str) -> None:
        self.send(
            pb.BotMessage(
                action=pb.Action(request_id=request.request_id, match_id=request.match_id, action=action)
            )
        )

    def close(self) -> None:
        self.outgoing.put(None)
        self.call.cancel()
        self.channel.close()
