"""The gRPC engine the runner and the game server use (``atout._grpc_engine``): iomgr, set in
``GRPC_EXPERIMENTS`` before gRPC's first import, unless the process or its operator chose."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from atout import _grpc_engine

SHOW = "import os; print(os.environ.get('GRPC_EXPERIMENTS'))"


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter, without this process's gRPC settings."""
    clean = {k: v for k, v in os.environ.items() if k not in ("GRPC_EXPERIMENTS", "ATOUT_GRPC_ENGINE")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**clean, **env}, check=True)


@pytest.mark.parametrize("first", ["import atout_arena", "import atout.runner", "import atout_arena.cli"])
def test_the_arena_and_the_runner_choose_iomgr_before_grpc_is_imported(first: str) -> None:
    out = python(f"{first}; {SHOW}")
    assert out.stdout.strip() == _grpc_engine.IOMGR_EXPERIMENTS


def test_too_late_once_grpc_is_imported() -> None:
    """gRPC read the variable already: setting it now would only mislead the children."""
    assert python(f"import grpc, atout_arena, atout.runner; {SHOW}").stdout.strip() == "None"


def test_event_engine_keeps_grpcs_default() -> None:
    out = python(f"import atout.runner; {SHOW}", ATOUT_GRPC_ENGINE=" Event-Engine ")
    assert out.stdout.strip() == "None"


def test_the_operators_experiments_are_kept() -> None:
    out = python(f"import atout.runner; {SHOW}", GRPC_EXPERIMENTS="tcp_rcv_lowat")
    assert out.stdout.strip() == "tcp_rcv_lowat"


def test_choose_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRPC_EXPERIMENTS", raising=False)
    monkeypatch.delenv("ATOUT_GRPC_ENGINE", raising=False)
    assert "grpc" in sys.modules  # this process: too late
    assert _grpc_engine.choose() is None and "GRPC_EXPERIMENTS" not in os.environ
    monkeypatch.delitem(sys.modules, "grpc")
    assert _grpc_engine.choose() == _grpc_engine.IOMGR_EXPERIMENTS
    assert os.environ["GRPC_EXPERIMENTS"] == _grpc_engine.IOMGR_EXPERIMENTS


def test_this_grpc_knows_the_experiments() -> None:
    """A gRPC release without them would log "Unknown experiment" in every process (and use
    its default engine): this test says when an upgrade makes the setting stale."""
    code = (
        "import atout.runner, grpc\n"
        "from concurrent import futures\n"
        "server = grpc.server(futures.ThreadPoolExecutor(1))\n"
        "port = server.add_insecure_port('127.0.0.1:0')\n"
        "server.start()\n"
        "channel = grpc.insecure_channel(f'127.0.0.1:{port}')\n"
        "grpc.channel_ready_future(channel).result(timeout=10)\n"
        "channel.close(); server.stop(None)\n"
    )
    out = python(code)
    assert "Unknown experiment" not in out.stderr, out.stderr
