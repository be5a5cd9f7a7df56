"""One bot flooding its stream with illegal answers cannot slow a control tournament by more
than 20%. Real processes: the API, a game server, Celery workers, SDK bots,
and the flooding bot (``flood_bot.py``, a bare gRPC stream in its own process).

Before: 360,000 illegal answers in 30 s kept a game-server core busy and made every other
match 3.2x slower. Now a stream is read at most ``MESSAGE_RATE`` messages a second (the rest
waits in gRPC's flow control) and a decision takes at most ``MAX_REJECTIONS`` rejected
answers (then it is faulted ``illegal`` and further answers are dropped)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from e2e_helpers import wait_until

from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.slow  # tens of seconds: not in the fast lane (README, "Tests")

FLOOD_BOT = Path(__file__).with_name("flood_bot.py")


def _control(api, names: list[str], name: str) -> float:
    """Seconds a control tournament takes, from its creation to its end."""
    started = time.monotonic()
    created = api.organizer.post("/v1/tournaments", json={
        "name": name, "game": "tiercon", "bots": names, "games_per_pairing": 4, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 240,
               f"{name} to finish", poll_s=0.05)
    return time.monotonic() - started


def _cpu(process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def test_a_flooding_bot_does_not_slow_a_control_tournament(
    api, game_server, start_worker, connected_bots, new_bot, clean_queues, redis_client, tmp_path
) -> None:
    start_worker("flood", concurrency=4)
    control = [name for name, _, _ in connected_bots(4, "random", prefix="ctl")]
    _control(api, control, "warm-up")
    flooder, flooder_id, token = new_bot("flood")
    (partner, _, _), = connected_bots(1, "random", prefix="partner")
    gateway = psutil.Process(game_server.popen.pid)
    runs: dict[bool, list[float]] = {False: [], True: []}
    gateway_cpu: dict[bool, float] = {False: 0.0, True: 0.0}
    floods: list[str] = []
    # Each run judged by the best of three, as a benchmark takes its best run: a burst of other
    # work on the machine (another test's processes) slows one run, a flood slows them all.
    for round_ in range(3):
        for flooding in (False, True):
            flood = None
            if flooding:  # the flooder runs niced: on the arena's 2 cores it stands for a remote bot
                out = tmp_path / f"flood-{round_}.txt"
                command = ["nice", "-n", "19", sys.executable, str(FLOOD_BOT), game_server.info["address"],
                           token, "120", str(out)]
                flood = subprocess.Popen(command)
                wait_until(lambda: is_connected(redis_client, flooder_id), 20, "the flooder to connect")
                if round_ == 0:  # the flooder plays one match (its decisions flooded too)
                    flooded = api.organizer.post("/v1/tournaments", json={
                        "name": "flooded", "game": "tiercon", "bots": [flooder, partner],
                        "move_ms": 200, "max_faults": 0, "start": True})
                    assert flooded.status_code == 201, flooded.text
                time.sleep(1.0)
            cpu = _cpu(gateway)
            try:
                runs[flooding].append(_control(api, control, f"control {round_} flood={flooding}"))
                gateway_cpu[flooding] += _cpu(gateway) - cpu
            finally:
                if flood is not None:
                    flood.terminate()
                    flood.wait(10)
                    floods.append(out.read_text().strip())
    without, with_flood = min(runs[False]), min(runs[True])
    metrics = api.client.get("/metrics").text
    limited = [line for line in metrics.splitlines()
               if line.startswith("atout_stream_limited_total") and f'bot="{flooder}"' in line]
    print(f"control tournament (24 matches), 3 runs each: {runs[False]} s without the flood, {runs[True]} s "
          f"with it: best {with_flood / without:.2f}x; game-server CPU {gateway_cpu[False]:.2f} s without, "
          f"{gateway_cpu[True]:.2f} s with; flooder (messages gRPC took, seconds, decisions asked): "
          f"{floods}; {limited}")
    # (every bot that decided has a series at 0: a count above 0 is the flooder's)
    assert any(float(line.split()[-1]) > 0 for line in limited), "the flooder's held-back messages count"
    assert with_flood <= 1.2 * without + 1.0, runs
