"""Decision round trip: worker-side call -> Redis -> game server -> SDK bot, and back.

    python bench/roundtrip.py                 # about 20 s on a 2-core machine
    python bench/roundtrip.py --n 5000 --json results.json

Measures, in one run and on loopback only:

1. ``raw``: a plain gRPC bidirectional ping-pong (sync server in another process, sync
   client, one stream, gRPC as installed: its default engine): the floor for anything that
   crosses a gRPC stream. The game server and the SDK runner choose gRPC's iomgr engine
   (``atout._grpc_engine``), faster here: the same ping-pong on it is timed once at the end
   and shown beside the ratios (``p50_vs_pingpong_iomgr``), not instead of them.
2. ``arena``: ``DecisionClient.request`` -> Redis (embedded, unix socket) -> the game server
   (``atout-arena gateway``, another process) -> an SDK bot (``atout-bot run``, a third
   process) -> back; one request in flight, p50 / p99.
3. decisions/s with 1, 8 and 32 requests in flight (``DecisionClient``, one thread per
   request in flight, as one worker process playing that many matches would), with the CPU
   time each process spends per decision: on 2 cores, 2 s / (their sum) bounds decisions/s.

Targets: arena p50 <= 3x raw p50, arena p99 <= 5 ms, >= 3,000 decisions/s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent

ECHO_METHOD = "/bench.Echo/PingPong"
START_TIMEOUT_S = 20.0


# ------------------------------------------------------------------ raw gRPC ping-pong


def echo_server(port_file: str) -> None:
    """A sync gRPC server echoing every message of a bidirectional stream (run in a child)."""

    def pingpong(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        yield from requests

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo",
        {"PingPong": grpc.stream_stream_rpc_method_handler(pingpong)},
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    Path(port_file).write_text(str(port))
    server.wait_for_termination(timeout=600)


def start_echo_server(port_file: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, int]:
    """:func:`echo_server` in a child process; returns it and its port once it listens (the
    caller stops it)."""
    port_file.unlink(missing_ok=True)  # a previous server's
    echo = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--echo-server", str(port_file)],
                            stdin=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline or echo.poll() is not None:
            echo.kill()
            raise RuntimeError("the echo server did not start")
        time.sleep(0.02)
    return echo, int(port_file.read_text())


def raw_pingpong_iomgr(n: int, payload_size: int, directory: Path) -> list[float]:
    """The same ping-pong with both ends on gRPC's iomgr engine, the one the game server and the
    SDK runner choose (``atout._grpc_engine``): two more processes, since this one's gRPC runs
    its default engine (it was imported first). Shown beside the baseline, not instead of it."""
    from atout._grpc_engine import IOMGR_EXPERIMENTS

    env = {**os.environ, "GRPC_EXPERIMENTS": IOMGR_EXPERIMENTS}
    echo, port = start_echo_server(directory / "echo-iomgr.port", env)
    try:
        out = subprocess.run([sys.executable, __file__, "--raw-client", str(port), str(n),
                              str(payload_size)], capture_output=True, text=True, check=True, env=env,
                             timeout=120)
    finally:
        echo.terminate()
        echo.wait(10)
    return json.loads(out.stdout)


def raw_pingpong(port: int, n: int, payload: bytes) -> list[float]:
    import queue

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        call = channel.stream_stream(ECHO_METHOD, request_serializer=None, response_deserializer=None)
        outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

        def requests() -> Iterator[bytes]:
            while (item := outgoing.get()) is not None:
                yield item

        responses = call(requests(), timeout=120)
        times = []
        for i in range(n + 200):
            started = time.perf_counter()
            outgoing.put(payload)
            next(responses)
            if i >= 200:  # warm-up
                times.append(time.perf_counter() - started)
        outgoing.put(None)
        return times


class RawPingPong:
    """A plain gRPC ping-pong stream kept open, timed in blocks (interleaved with the arena's)."""

    def __init__(self, port: int, payload: bytes) -> None:
        import queue

        self.payload = payload
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(self.channel).result(timeout=10)
        call = self.channel.stream_stream(ECHO_METHOD, request_serializer=None, response_deserializer=None)
        self.outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

        def requests() -> Iterator[bytes]:
            while (item := self.outgoing.get()) is not None:
                yield item

        self.responses = call(requests(), timeout=600)
        self.block(200)  # warm-up

    def block(self, n: int) -> list[float]:
        times = []
        for _ in range(n):
            started = time.perf_counter()
            self.outgoing.put(self.payload)
            next(self.responses)
            times.append(time.perf_counter() - started)
        return times

    def close(self) -> None:
        self.outgoing.put(None)
        self.channel.close()


def bare_bot(address: str, token: str) -> None:
    """The least a bot can do: a sync gRPC stream answering the first legal action inline."""
    import queue

    from atout.v1 import atout_pb2 as pb
    from atout.v1 import atout_pb2_grpc as pb_grpc

    outgoing: queue.SimpleQueue[pb.BotMessage] = queue.SimpleQueue()

    def requests() -> Iterator[pb.BotMessage]:
        yield pb.BotMessage(hello=pb.Hello(protocol_version=1, client="bench-bare-bot"))
        while True:
            yield outgoing.get()

    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.BotGatewayStub(channel)
        for message in stub.Connect(requests(), metadata=(("authorization", f"Bearer {token}"),)):
            kind = message.WhichOneof("kind")
            if kind == "decision":
                d = message.decision
                action = pb.Action(request_id=d.request_id, match_id=d.match_id, action=d.legal_actions[0])
                outgoing.put(pb.BotMessage(action=action))
            elif kind == "ping":
                outgoing.put(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce)))


# ------------------------------------------------------------------ arena


def wait_for_line(path: Path, pattern: str, process: subprocess.Popen) -> re.Match:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace") if path.exists() else "")
        if found:
            return found
        if process.poll() is not None:
            break
        time.sleep(0.02)
    raise RuntimeError(f"no {pattern!r} in {path}:\n{path.read_text(errors='replace')}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


ROUNDS = 6  # the raw ping-pong and the arena measured in alternating blocks


def on_loop(redis_url: str, bot_id: str, request: dict, n_latency: int,
            in_flights: tuple[int, ...], total: int, processes: dict[str, int], raw: RawPingPong) -> tuple[
        list[float], list[float], dict[int, float], dict[int, float], dict[str, dict[str, float]]]:
    """On one event loop, with the worker's own client (``AsyncDecisionClient``): the latency
    of one request at a time, then decisions/s with ``in_flights`` requests in flight (one
    coroutine each, as one worker process playing that many matches), and the CPU time each
    process spent per decision. The raw ping-pong is timed in blocks between the arena's
    (``ROUNDS`` of each), so that both see the same load of a shared machine: returns its
    latencies too, and its round trips/s beside each throughput."""
    import asyncio

    from atout_workers.decisions import AsyncDecisionClient

    async def run() -> tuple[list[float], list[float], dict[int, float], dict[int, float],
                             dict[str, dict[str, float]]]:
        client = AsyncDecisionClient(redis_url)
        try:
            latency: list[float] = []
            raw_latency: list[float] = []
            for _ in range(200):  # warm-up
                await client.request(bot_id, "bench-latency", deadline_ms=5000, **request)
            for _ in range(ROUNDS):
                raw_latency += raw.block(n_latency // ROUNDS)
                for _ in range(n_latency // ROUNDS):
                    started = time.perf_counter()
                    decision = await client.request(bot_id, "bench-latency", deadline_ms=5000, **request)
                    if not decision.ok:
                        raise RuntimeError(f"fault: {decision}")
                    latency.append(time.perf_counter() - started)
            rates: dict[int, float] = {}
            raw_rates: dict[int, float] = {}
            cpu_us: dict[str, dict[str, float]] = {}
            for k in in_flights:
                left, faults = [total], [0]

                async def match(number: int, left: list[int] = left, faults: list[int] = faults) -> None:
                    while left[0] > 0:
                        left[0] -= 1
                        d = await client.request(bot_id, f"bench-{number}", deadline_ms=5000, **request)
                        faults[0] += not d.ok

                left[0] = total // ROUNDS  # warm-up
                await asyncio.gather(*(match(i) for i in range(k)))
                spent = 0.0
                raw_times: list[float] = []
                cpu = dict.fromkeys([*processes, "worker"], 0.0)
                for _ in range(ROUNDS):
                    raw_times += raw.block(max(100, n_latency // ROUNDS))
                    before = {name: cpu_seconds(pid) for name, pid in processes.items()}
                    before["worker"] = time.process_time()
                    left[0] = total // ROUNDS
                    started = time.perf_counter()
                    await asyncio.gather(*(match(i) for i in range(k)))
                    spent += time.perf_counter() - started
                    after = {name: cpu_seconds(pid) for name, pid in processes.items()}
                    after["worker"] = time.process_time()
                    for name in cpu:
                        cpu[name] += after[name] - before[name]
                done = ROUNDS * (total // ROUNDS)
                rates[k] = done / spent
                raw_rates[k] = len(raw_times) / sum(raw_times)
                cpu_us[str(k)] = {name: seconds / done * 1e6 for name, seconds in cpu.items()}
                if faults[0]:
                    raise RuntimeError(f"{faults[0]} faults with {k} in flight")
            return latency, raw_latency, rates, raw_rates, cpu_us
        finally:
            await client.close()

    from atout._loop import run as run_loop

    return run_loop(run())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=3000, help="round trips per latency measure")
    parser.add_argument("--total", type=int, default=6000, help="decisions per throughput measure")
    parser.add_argument("--bot", default="random", help="the SDK bot to run (atout-bot run spec)")
    parser.add_argument(
        "--bare-bot",
        action="store_true",
        help="answer with a bare gRPC loop instead of the SDK runner (to see the runner's share)",
    )
    parser.add_argument("--bare-bot-run", nargs=2, metavar=("ADDRESS", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--echo-server", help=argparse.SUPPRESS)
    parser.add_argument("--raw-client", nargs=3, type=int, metavar=("PORT", "N", "SIZE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.echo_server:
        echo_server(args.echo_server)
        return 0
    if args.raw_client:
        port, n, size = args.raw_client
        print(json.dumps(raw_pingpong(port, n, b"x" * size)))
        return 0
    if args.bare_bot_run:
        bare_bot(*args.bare_bot_run)
        return 0

    from atout._grpc_engine import environment
    from atout.games import new_game
    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.core.embedded_redis import EmbeddedRedis
    from atout_arena.services.bots import BotRegistry
    from atout_workers.decisions import DecisionClient

    state = new_game("merde", players=4).new_state(seed=3)
    seat = state.current_player
    legal = state.legal_actions()
    request = {
        "game": "merde",
        "seat": seat,
        "observation": state.observation(seat),
        "legal_actions": legal,
        "check": lambda action: None if action in legal else "illegal",
    }
    results: dict[str, object] = {
        "load_average_before": load_before,
        "cpus": os.cpu_count(),
        "observation_bytes": len(json.dumps(request["observation"])),
    }
    children: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="atout-bench-") as tmp:
        tmpdir = Path(tmp)
        redis_server = EmbeddedRedis(tmpdir / "redis").start()
        try:
            # 1. raw ping-pong
            echo, echo_port = start_echo_server(tmpdir / "echo.port")
            children.append(echo)
            payload = b"x" * results["observation_bytes"]  # same size as a decision request
            pingpong = RawPingPong(echo_port, payload)

            # 2. the arena: database, game server, SDK bot
            database_url = f"sqlite:///{tmpdir / 'atout.db'}"
            engine = make_engine(database_url)
            create_all(engine)
            bot, token = BotRegistry(make_session_factory(engine)).add("bench-bot")
            env = {
                **os.environ,
                "ATOUT_REDIS_URL": redis_server.url,
                "ATOUT_DATABASE_URL": database_url,
                "ATOUT_SERVER_ID": "bench",
                "PYTHONUNBUFFERED": "1",
            }
            gateway_log = tmpdir / "gateway.log"
            with open(gateway_log, "wb") as out:
                gateway = subprocess.Popen(
                    [sys.executable, "-m", "atout_arena.cli", "gateway", "--address", "127.0.0.1:0"],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    cwd=ROOT,
                )
            children.append(gateway)
            port = wait_for_line(gateway_log, r"listening on 127\.0\.0\.1:(\d+)", gateway).group(1)
            bot_log = tmpdir / "bot.log"
            with open(bot_log, "wb") as out:
                command = [
                    sys.executable,
                    "-m",
                    "atout.cli",
                    "run",
                    args.bot,
                    "--server",
                    f"127.0.0.1:{port}",
                ]
                command += ["--token", token, "--log-level", "WARNING", "--max-workers", "8"]
                bot_env = env
                if args.bare_bot:  # it imports gRPC first: its engine is set here, as the runner's
                    command = [sys.executable, __file__, "--bare-bot-run", f"127.0.0.1:{port}", token]
                    bot_env = environment(env)
                bot_process = subprocess.Popen(
                    command,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=bot_env,
                    cwd=ROOT,
                )
            children.append(bot_process)
            client = DecisionClient(redis_server.url)
            deadline = time.monotonic() + START_TIMEOUT_S
            while not client.is_connected(bot.bot_id):
                if time.monotonic() > deadline or bot_process.poll() is not None:
                    raise RuntimeError(f"the bot did not connect:\n{bot_log.read_text()}")
                time.sleep(0.02)
            client.close()
            processes = {"gateway": gateway.pid, "bot": bot_process.pid, "redis": redis_server.process.pid}
            arena, raw, rates, raw_rates, cpu_us = on_loop(
                redis_server.url, bot.bot_id, request, args.n, (1, 8, 32), args.total, processes, pingpong)
            pingpong.close()
            raw_iomgr = raw_pingpong_iomgr(args.n, results["observation_bytes"], tmpdir)
        finally:
            for child in children:
                if child.poll() is None:
                    child.terminate()
                    try:
                        child.wait(10)
                    except subprocess.TimeoutExpired:
                        child.kill()
            redis_server.stop()

    ms = 1000.0
    results.update(
        raw_p50_ms=statistics.median(raw) * ms,
        raw_p99_ms=percentile(raw, 0.99) * ms,
        arena_p50_ms=statistics.median(arena) * ms,
        arena_p99_ms=percentile(arena, 0.99) * ms,
        decisions_per_s={str(k): round(v) for k, v in rates.items()},
        cpu_us_per_decision={k: {n: round(v) for n, v in d.items()} for k, d in cpu_us.items()},
    )
    results.update(raw_iomgr_p50_ms=statistics.median(raw_iomgr) * ms,
                   raw_iomgr_roundtrips_per_s=round(len(raw_iomgr) / sum(raw_iomgr)))
    ratio = results["arena_p50_ms"] / results["raw_p50_ms"]
    ratio_iomgr = results["arena_p50_ms"] / results["raw_iomgr_p50_ms"]
    bot_kind = "bare gRPC loop" if args.bare_bot else f"SDK runner ({args.bot})"
    print(f"machine: {os.cpu_count()} cpus; observation {results['observation_bytes']} bytes; n={args.n}")
    print(f"bot: {bot_kind}; load average before the run: {load_before}")
    print(f"raw gRPC ping-pong      p50 {results['raw_p50_ms']:.3f} ms   p99 {results['raw_p99_ms']:.3f} ms")
    print(
        f"arena decision          p50 {results['arena_p50_ms']:.3f} ms   p99 {results['arena_p99_ms']:.3f} ms"
        f"   (p50 = {ratio:.2f}x raw)"
    )
    for k, rate in rates.items():
        spent = cpu_us[str(k)]
        total = sum(spent.values())
        parts = ", ".join(f"{name} {us:.0f}" for name, us in spent.items())
        print(f"decisions/s, {k:2d} in flight: {rate:6.0f}   CPU µs/decision: {parts} (total {total:.0f})")
    print(f"raw ping-pong on gRPC's iomgr engine (the game server's and the SDK runner's default), after: "
          f"p50 {results['raw_iomgr_p50_ms']:.3f} ms, {results['raw_iomgr_roundtrips_per_s']} round trips/s "
          f"(the arena's p50 = {ratio_iomgr:.2f}x that, 32 in flight "
          f"{rates[32] / results['raw_iomgr_roundtrips_per_s']:.2f}x)")
    print("targets: 32 in flight >= 2.0x the raw round trips/s; p50 <= 2.5x raw p50")
    results["raw_roundtrips_per_s"] = {str(k): round(v) for k, v in raw_rates.items()}
    results["ratios"] = {"throughput_vs_pingpong": round(rates[32] / raw_rates[32], 3),
                         "p50_vs_pingpong": round(ratio, 3)}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print("raw ping-pong round trips/s on one stream, timed between those: "
          + ", ".join(f"{raw_rates[k]:.0f} (beside {k} in flight)" for k in rates))
    print(f"ratios: throughput_vs_pingpong={rates[32] / raw_rates[32]:.2f} p50_vs_pingpong={ratio:.2f} "
          f"throughput_8_vs_pingpong={rates[8] / raw_rates[8]:.2f} "
          f"throughput_1_vs_pingpong={rates[1] / raw_rates[1]:.2f} p50_vs_pingpong_iomgr={ratio_iomgr:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
