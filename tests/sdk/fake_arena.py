"""A fake arena for the runner's unit tests: an in-process BotGateway servicer on 127.0.0.1.

It tests the runner's own logic (hello, one bot per match, keep-alives, reconnects...); the real
game server is tested end to end elsewhere.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

from atout.runner import Runner
from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc

TOKEN = "s3cret-token"


class FakeConnection:
    """One Connect call as the fake arena sees it."""

    def __init__(self, metadata: dict[str, str | bytes]) -> None:
        self.metadata = metadata
        self.hello: pb.Hello | None = None
        self.outbox: queue.Queue[pb.ArenaMessage | None] = queue.Queue()
        self.inbox: queue.Queue[pb.BotMessage] = queue.Queue()
        self.ended = threading.Event()
        self.action_batches: list[list[str]] = []  # request ids of each ActionBatch received

    def put(self, msg: pb.BotMessage) -> None:
        """A message from the bot; an ActionBatch is recorded, then queued as its Actions."""
        if msg.WhichOneof("kind") == "actions":
            self.action_batches.append([a.request_id for a in msg.actions.actions])
            for action in msg.actions.actions:
                self.inbox.put(pb.BotMessage(action=action))
        else:
            self.inbox.put(msg)

    def send(self, **kind: Any) -> None:
        self.outbox.put(pb.ArenaMessage(**kind))

    def close(self) -> None:
        self.outbox.put(None)

    def expect(self, kind: str, timeout: float = 5.0) -> Any:
        """The next bot message of ``kind`` (others are skipped); fails the test on timeout."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind} from the bot within {timeout} s")
            try:
                msg = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if msg.WhichOneof("kind") == kind:
                return getattr(msg, kind)

    def nothing(self, kind: str, wait: float = 0.3) -> None:
        """Assert the bot sends no ``kind`` message within ``wait`` seconds."""
        end = time.monotonic() + wait
        while (left := end - time.monotonic()) > 0:
            try:
                msg = self.inbox.get(timeout=left)
            except queue.Empty:
                return
            assert msg.WhichOneof("kind") != kind, f"unexpected {kind}: {msg}"


class FakeArena(atout_pb2_grpc.BotGatewayServicer):
    def __init__(self, welcome: pb.Welcome | None = None) -> None:
        self.welcome = welcome or pb.Welcome(
            protocol_version=1, bot_id="b1", bot_name="testbot", server_id="gs1"
        )
        self.connections: queue.Queue[FakeConnection] = queue.Queue()
        self.attempts = 0
        self.on_hello: Callable[[FakeConnection], pb.ArenaMessage | None] | None = None

    def Connect(  # noqa: N802 - gRPC method name
        self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[pb.ArenaMessage]:
        self.attempts += 1
        metadata = dict(context.invocation_metadata())
        if metadata.get("authorization") != f"Bearer {TOKEN}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown bot token")
        conn = FakeConnection(metadata)
        first = next(request_iterator)
        conn.hello = first.hello

        def read() -> None:
            try:
                for msg in request_iterator:
                    conn.put(msg)
            except grpc.RpcError:
                pass  # the call ended: nothing more to read
            finally:
                conn.ended.set()

        threading.Thread(target=read, daemon=True).start()
        self.connections.put(conn)
        first_reply = self.on_hello(conn) if self.on_hello else pb.ArenaMessage(welcome=self.welcome)
        if first_reply is not None:
            yield first_reply
        while context.is_active() and not conn.ended.is_set():  # the bot closed its side: end the call
            try:
                msg = conn.outbox.get(timeout=0.05)
            except queue.Empty:
                continue
            if msg is None:
                return
            yield msg

    def next_connection(self, timeout: float = 5.0) -> FakeConnection:
        try:
            return self.connections.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the runner did not connect within {timeout} s") from None


def start_server(servicer: FakeArena, port: int = 0) -> tuple[grpc.Server, int]:
    server = grpc.server(ThreadPoolExecutor(max_workers=16))
    atout_pb2_grpc.add_BotGatewayServicer_to_server(servicer, server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    assert bound, f"cannot bind 127.0.0.1:{port}"
    server.start()
    return server, bound


class RunnerThread:
    """A Runner playing in a background thread, stopped at the end of the test."""

    def __init__(self, bot: Any, port: int, **kwargs: Any) -> None:
        kwargs.setdefault("backoff", (0.05, 0.2))
        self.runner = Runner(bot, f"127.0.0.1:{port}", TOKEN, **kwargs)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.runner.run()
        except BaseException as exc:
            self.error = exc

    def join(self, timeout: float = 5.0) -> BaseException | None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the runner did not stop"
        return self.error

    def stop(self) -> None:
        self.runner.stop()
        assert self.join() is None
