"""Bots that break one rule of docs/protocol.md each, for the conformance check's tests
(tests/protocol/test_conformance.py): plain grpcio with the SDK's generated stubs, no runner.

    python broken_bots.py MODE HOST:PORT TOKEN

MODE: ``no-pong`` (never answers a Ping), ``wrong-request-id`` (answers with a request id that
was never sent), ``illegal`` (answers an action that is never legal); and ``batch``, which
breaks nothing: its answers go in ActionBatches. Otherwise each answers a legal action (the
same one to a request sent again), pongs, and reconnects after the stream ends, as the protocol
asks.
"""

from __future__ import annotations

import queue
import sys
import time

import grpc

from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc

MODES = ("no-pong", "wrong-request-id", "illegal", "batch")


def main(mode: str, address: str, token: str) -> int:
    assert mode in MODES, mode
    answers: dict[str, str] = {}
    while True:
        outgoing: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        outgoing.put(pb.BotMessage(hello=pb.Hello(protocol_version=1, client=f"broken-bot/{mode}")))

        def messages(q: queue.SimpleQueue[pb.BotMessage | None] = outgoing):
            while (message := q.get()) is not None:
                yield message

        channel = grpc.insecure_channel(address)
        call = pb_grpc.BotGatewayStub(channel).Connect(
            messages(), metadata=(("authorization", f"Bearer {token}"),))
        try:
            for message in call:
                kind = message.WhichOneof("kind")
                if kind == "ping" and mode != "no-pong":
                    outgoing.put(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce)))
                elif kind == "decision":
                    request = message.decision
                    action = answers.setdefault(request.request_id, request.legal_actions[0])
                    request_id = request.request_id
                    if mode == "wrong-request-id":
                        request_id += "-not-this-one"
                    elif mode == "illegal":
                        action = "no such action"
                    answer = pb.Action(request_id=request_id, action=action)
                    if mode == "batch":
                        outgoing.put(pb.BotMessage(actions=pb.ActionBatch(actions=[answer])))
                    else:
                        outgoing.put(pb.BotMessage(action=answer))
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
                return 2
        finally:
            outgoing.put(None)
            channel.close()
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
