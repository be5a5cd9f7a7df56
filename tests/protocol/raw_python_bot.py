"""A second bot in another language than the Node example, written from docs/protocol.md and
the .proto alone: plain ``grpcio`` with stubs generated at start from the repository's .proto
(no ``atout`` import, no SDK). It answers a random legal action, pongs, remembers answers by
request id, answers a rejection with another legal action, and reconnects with backoff.

    python raw_python_bot.py HOST:PORT TOKEN
"""

from __future__ import annotations

import queue
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc
from grpc_tools import protoc

PROTO_DIR = Path(__file__).resolve().parents[2] / "proto" / "atout" / "v1"
FATAL = {"replaced", "unsupported_version", "too_many_versions", "revoked"}


def load_stubs():
    out = tempfile.mkdtemp(prefix="atout-raw-")
    code = protoc.main(["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", f"--grpc_python_out={out}",
                        str(PROTO_DIR / "atout.proto")])
    assert code == 0, code
    sys.path.insert(0, out)
    import atout_pb2
    import atout_pb2_grpc

    sys.path.remove(out)
    shutil.rmtree(out, ignore_errors=True)  # imported: the files are not needed any more, leave nothing
    return atout_pb2, atout_pb2_grpc


def main(address: str, token: str) -> int:
    pb, pb_grpc = load_stubs()
    answers: dict[str, str] = {}
    requests: dict[str, object] = {}
    failures = 0
    while True:
        outgoing: queue.SimpleQueue = queue.SimpleQueue()
        outgoing.put(pb.BotMessage(hello=pb.Hello(protocol_version=1, client="raw-python-bot/0.1")))

        def messages(q: queue.SimpleQueue = outgoing):
            while (message := q.get()) is not None:
                yield message

        channel = grpc.insecure_channel(address)
        metadata = (("authorization", f"Bearer {token}"),)
        call = pb_grpc.BotGatewayStub(channel).Connect(messages(), metadata=metadata)

        def answer(request_id: str, action: str, q: queue.SimpleQueue = outgoing) -> None:
            answers[request_id] = action
            q.put(pb.BotMessage(action=pb.Action(request_id=request_id, action=action)))

        reason = "the stream ended"
        try:
            for message in call:
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    failures = 0
                    print(f"connected as {message.welcome.bot_name}", flush=True)
                elif kind == "ping":
                    outgoing.put(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce)))
                elif kind == "decision":
                    request = message.decision
                    requests[request.request_id] = request
                    # a request sent again (after a reconnect) gets the same answer
                    known = answers.get(request.request_id)
                    answer(request.request_id, known or random.choice(request.legal_actions))
                elif kind == "rejection":
                    rejection = message.rejection
                    print(f"rejected {rejection.action!r}: {rejection.reason}", flush=True)
                    legal = getattr(requests.get(rejection.request_id), "legal_actions", [])
                    others = [a for a in legal if a != rejection.action]
                    if others:
                        answer(rejection.request_id, others[0])
                elif kind == "match_start":
                    start = message.match_start
                    print(f"match {start.match_id} started, seat {start.seat}", flush=True)
                elif kind == "match_end":
                    end = message.match_end
                    print(f"match {end.match_id} ended ({end.reason})", flush=True)
                elif kind == "error":
                    print(f"error {message.error.code}: {message.error.message}", flush=True)
                    if message.error.code in FATAL:
                        return 1
                    reason = message.error.code
        except grpc.RpcError as exc:
            if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                print(f"token refused: {exc.details()}", flush=True)
                return 2
            reason = f"{exc.code().name}: {exc.details()}"
        finally:
            outgoing.put(None)
            channel.close()
        failures += 1
        delay = min(10.0, 0.2 * 2 ** (failures - 1)) * random.uniform(0.5, 1.0)
        print(f"connection lost ({reason}); reconnecting in {delay:.1f} s", flush=True)
        time.sleep(delay)


if __name__ == "__main__":
    threading.current_thread().name = "raw-bot"
    sys.exit(main(sys.argv[1], sys.argv[2]))
