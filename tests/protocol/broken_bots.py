"""Bots that break one rule of docs/protocol.md each, for the conformance check's tests
(tests/protocol/test_protocol_conformance.py): plain grpcio with the SDK's generated stubs, no runner.

    python broken_bots.py MODE HOST:PORT TOKEN

MODE: ``no-pong`` (never answers a Ping), ``wrong-request-id`` (answers with a request id that
was never sent), ``illegal`` (answers an action that is never legal), ``late`` (answers a
second after each request: past its deadline), ``forgetful`` (answers a request sent again after
a reconnect with another action), ``no-reconnect`` (stops when the server ends its stream); and
``batch``, which
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

MODES = ("no-pong", "wrong-request-id", "illegal", "late", "forgetful", "no-reconnect", "batch")
LATE_S = 1.0  # the "late" bot's think time: past a 300 ms deadline and the checker's 500 ms of lag


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
                    if mode == "forgetful" and request.request_id in answers:
                        legal = [a for a in request.legal_actions if a != answers[request.request_id]]
                        answers[request.request_id] = legal[0] if legal else answers[request.request_id]
                    action = answers.setdefault(request.request_id, request.legal_actions[0])
                    if mode == "late":
                        time.sleep(LATE_S)
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
        if mode == "no-reconnect":
            return 0
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
