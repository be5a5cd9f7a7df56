"""The SDK runner's CPU per decision, with and without the batched stream.

    python bench/runner_batch.py                  # about 20 s
    python bench/runner_batch.py --matches 64 --seconds 5 --rounds 3

A bare-protocol driver: a fake arena (a sync gRPC ``BotGateway`` server in this process, no
Redis, no game server) keeps ``--matches`` matches in flight with one SDK runner (``Runner``
with a first-legal bot, in a child process): every answer it receives is followed by that
match's next request (a real merde observation). With ``batch`` the runner's Hello lists
"batch": the requests that are due together go as one DecisionBatch (as the game server sends
those of one inbox read) and the runner answers with ActionBatches; with ``single`` the
runner is told ``batch=False``: one message per request and per answer, as before batching.

It reports, per mode, decisions/s and the child's CPU time per decision (user + system, from
/proc; the median of ``--rounds`` alternating slices of ``--seconds``), then one line
``ratios: ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc

from atout.games import new_game
from atout.v1 import atout_pb2 as pb
from atout.v1 import atout_pb2_grpc as pb_grpc


def child(address: str, batch: bool) -> None:
    """The bot: an SDK Runner with a first-legal bot (run in a child process)."""
    import logging

    from atout import Bot, Observation
    from atout.runner import Runner

    class FirstLegal(Bot):
        def act(self, observation: Observation) -> str:
            return observation.legal_actions[0]

    logging.basicConfig(level=logging.WARNING)
    Runner(FirstLegal, address, "bench-token", batch=batch, max_reconnects=0).run()


class Arena(pb_grpc.BotGatewayServicer):
    """Feeds one stream: ``matches`` requests in flight, each answer followed by its match's next
    request; what is due together goes as one DecisionBatch to a stream that listed "batch"."""

    def __init__(self, matches: int) -> None:
        state = new_game("merde", players=4).new_state(seed=1)
        seat = state.current_player
        self.observation = json.dumps(state.observation(seat))
        self.legal = list(state.legal_actions())
        self.seat = seat
        self.matches = matches
        self.answered = 0
        self.batches_sent = 0
        self.action_batches = 0
        self.features: list[str] = []
        self.connected = threading.Event()

    def request(self, match: int, n: int) -> pb.DecisionRequest:
        return pb.DecisionRequest(
            request_id=f"{match}-{n}", match_id=f"m{match}", game="merde", seat=self.seat,
            observation_json=self.observation, legal_actions=self.legal, deadline_ms=5000,
        )  # fmt: skip

    def Connect(self, request_iterator: Iterator[pb.BotMessage], context: Any) -> Iterator[pb.ArenaMessage]:  # noqa: N802
        hello = next(request_iterator)
        self.features = list(hello.hello.features)
        batch = "batch" in self.features
        answers: queue.SimpleQueue[str | None] = queue.SimpleQueue()

        def read() -> None:
            try:
                for message in request_iterator:
                    kind = message.WhichOneof("kind")
                    if kind == "action":
                        answers.put(message.action.match_id)
                    elif kind == "actions":
                        self.action_batches += 1
                        for action in message.actions.actions:
                            answers.put(action.match_id)
            except grpc.RpcError:
                pass
            answers.put(None)

        threading.Thread(target=read, daemon=True).start()
        welcome = pb.Welcome(protocol_version=1, bot_id="1", bot_name="bench", server_id="fake",
                             keepalive_ms=60_000, features=self.features)
        yield pb.ArenaMessage(welcome=welcome)
        self.connected.set()
        counter = 0
        due = [f"m{i}" for i in range(self.matches)]
        while True:
            requests = []
            for match_id in due:
                counter += 1
                requests.append(self.request(int(match_id[1:]), counter))
            if batch and len(requests) > 1:
                self.batches_sent += 1
                yield pb.ArenaMessage(decisions=pb.DecisionBatch(requests=requests))
            else:
                for request in requests:
                    yield pb.ArenaMessage(decision=request)
            first = answers.get()
            if first is None:
                return
            due = [first]
            while True:  # what else is ready: answered meanwhile
                try:
                    more = answers.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    return
                due.append(more)
            self.answered += len(due)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(mode: str, matches: int, seconds: float, rounds: int) -> dict[str, float]:
    arena = Arena(matches)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_BotGatewayServicer_to_server(arena, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    from atout._grpc_engine import environment

    # the child imports gRPC before the runner (this script's first import): its engine is set here
    env = environment(dict(os.environ))
    flag = "1" if mode == "batch" else "0"
    command = [sys.executable, __file__, "--child", f"127.0.0.1:{port}", "--batch", flag]
    proc = subprocess.Popen(command, env=env)
    try:
        if not arena.connected.wait(20):
            raise RuntimeError("the runner did not connect")
        time.sleep(1.0)  # warm-up
        slices = []
        for _ in range(rounds):
            cpu0, n0, t0 = cpu_seconds(proc.pid), arena.answered, time.perf_counter()
            time.sleep(seconds)
            cpu1, n1, t1 = cpu_seconds(proc.pid), arena.answered, time.perf_counter()
            slices.append(((cpu1 - cpu0) / max(n1 - n0, 1) * 1e6, (n1 - n0) / (t1 - t0)))
        return {
            "cpu_us_per_decision": statistics.median(s[0] for s in slices),
            "decisions_per_s": statistics.median(s[1] for s in slices),
            "decision_batches": arena.batches_sent,
            "action_batches": arena.action_batches,
            "hello_features": ",".join(arena.features),
        }
    finally:
        proc.terminate()
        proc.wait(10)
        server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=32, help="requests in flight")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measured slice")
    parser.add_argument("--rounds", type=int, default=3, help="slices per mode (alternating modes)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--batch", default="1", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.batch == "1")
        return
    results: dict[str, list[dict[str, float]]] = {"single": [], "batch": []}
    for _ in range(args.rounds):
        for mode in ("single", "batch"):
            results[mode].append(measure(mode, args.matches, args.seconds, 1))
    summary = {}
    for mode, runs in results.items():
        cpu = statistics.median(r["cpu_us_per_decision"] for r in runs)
        rate = statistics.median(r["decisions_per_s"] for r in runs)
        summary[mode] = (cpu, rate)
        last = runs[-1]
        print(f"{mode:6}  {args.matches} in flight: {rate:8,.0f} decisions/s, "
              f"runner CPU {cpu:6.0f} µs/decision  (Hello features [{last['hello_features']}], "
              f"DecisionBatches sent {last['decision_batches']:,}, "
              f"ActionBatches received {last['action_batches']:,})")
    (cpu_single, rate_single), (cpu_batch, rate_batch) = summary["single"], summary["batch"]
    print(f"ratios: cpu_batch_vs_single={cpu_batch / cpu_single:.2f} "
          f"throughput_batch_vs_single={rate_batch / rate_single:.2f} "
          f"cpu_us_single={cpu_single:.0f} cpu_us_batch={cpu_batch:.0f}")


if __name__ == "__main__":
    main()
