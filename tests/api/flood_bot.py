"""A flooding bot: ``python flood_bot.py ADDRESS TOKEN SECONDS OUT``.

Connects as the bot of ``TOKEN`` with a bare gRPC stream and, for ``SECONDS`` (or until SIGTERM), sends
illegal answers as fast as gRPC takes them: to the latest decision it was asked, else to a made-up
request. Writes ``<messages sent> <seconds> <decisions asked>`` to ``OUT`` at the end."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator

import grpc

from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc


def main() -> None:
    address, token, seconds, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    latest = {"request_id": "made-up", "match_id": ""}
    stop = threading.Event()
    counts = {"sent": 0, "asked": 0}
    started = time.monotonic()

    def messages() -> Iterator[pb.BotMessage]:
        yield pb.BotMessage(hello=pb.Hello(protocol_version=1, client="flood"))
        while time.monotonic() - started < seconds and not stop.is_set():
            counts["sent"] += 1
            yield pb.BotMessage(action=pb.Action(
                action="nonsense", request_id=latest["request_id"], match_id=latest["match_id"]))

    channel = grpc.insecure_channel(address)
    auth = (("authorization", f"Bearer {token}"),)
    call = pb_grpc.BotGatewayStub(channel).Connect(messages(), metadata=auth)

    def read() -> None:
        try:
            for message in call:
                if message.WhichOneof("kind") == "decision":
                    counts["asked"] += 1
                    latest.update(request_id=message.decision.request_id, match_id=message.decision.match_id)
        except grpc.RpcError:
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while time.monotonic() - started < seconds and not stop.is_set():
        time.sleep(0.1)
    elapsed = time.monotonic() - started
    with open(out, "w") as f:
        f.write(f"{counts['sent']} {elapsed:.2f} {counts['asked']}\n")
    call.cancel()
    channel.close()


if __name__ == "__main__":
    main()
