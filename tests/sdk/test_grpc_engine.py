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
    clean = {k: v for k, v in os.environ.items()
             if k not in ("GRPC_EXPERIMENTS", "ATOUT_GRPC_ENGINE", "GRPC_VERBOSITY")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**clean, **env}, check=True)


@pytest.mark.parametrize("first", ["import atout_arena.gateway.server", "import atout.runner"])
def test_the_game_server_and_the_runner_choose_iomgr_before_grpc_is_imported(first: str) -> None:
    out = python(f"{first}; {SHOW}")
    assert out.stdout.strip() == _grpc_engine.IOMGR_EXPERIMENTS


@pytest.mark.parametrize("first", ["import atout_arena", "import atout_arena.cli", "import atout_arena.api"])
def test_the_arenas_other_parts_leave_grpc_alone(first: str) -> None:
    """Nothing but the game server speaks gRPC in the arena: importing the rest (the organizer's
    CLI, the REST API) sets no gRPC flag."""
    assert python(f"{first}; {SHOW}").stdout.strip() == "None"


def test_too_late_once_grpc_is_imported() -> None:
    """gRPC read the variable already: setting it now would only mislead the children."""
    assert python(f"import grpc, atout_arena.gateway, atout.runner; {SHOW}").stdout.strip() == "None"


def test_event_engine_keeps_grpcs_default() -> None:
    out = python(f"import atout.runner; {SHOW}", ATOUT_GRPC_ENGINE=" Event-Engine ")
    assert out.stdout.strip() == "None"


def test_an_unknown_engine_is_said_and_iomgr_used() -> None:
    out = python(f"import atout.runner; {SHOW}", ATOUT_GRPC_ENGINE="turbo")
    assert out.stdout.strip() == _grpc_engine.IOMGR_EXPERIMENTS
    assert "ATOUT_GRPC_ENGINE='turbo' is neither 'iomgr' nor 'event_engine'" in out.stderr


def test_the_operators_experiments_are_kept() -> None:
    out = python(f"import atout.runner; {SHOW}", GRPC_EXPERIMENTS="tcp_rcv_lowat")
    assert out.stdout.strip() == "tcp_rcv_lowat"


def test_an_inherited_choice_is_undone_by_event_engine() -> None:
    """A child of an arena process inherits its GRPC_EXPERIMENTS: ATOUT_GRPC_ENGINE=event_engine
    set for that child still gives it gRPC's default."""
    out = python(f"import atout.runner; {SHOW}", GRPC_EXPERIMENTS=_grpc_engine.IOMGR_EXPERIMENTS,
                 ATOUT_GRPC_ENGINE="event_engine")
    assert out.stdout.strip() == "None"


def test_the_environment_of_a_child_that_imports_grpc_first() -> None:
    iomgr = _grpc_engine.IOMGR_EXPERIMENTS
    assert _grpc_engine.environment({"A": "1"}) == {"A": "1", "GRPC_EXPERIMENTS": iomgr}
    assert _grpc_engine.environment({"GRPC_EXPERIMENTS": "x"}) == {"GRPC_EXPERIMENTS": "x"}
    default = {"ATOUT_GRPC_ENGINE": "event_engine"}
    assert _grpc_engine.environment(default) == default
    assert _grpc_engine.environment({**default, "GRPC_EXPERIMENTS": iomgr}) == default  # inherited


def test_atout_bot_run_chooses_before_loading_the_bot(tmp_path) -> None:
    """A bot's module may import gRPC itself: ``atout-bot run`` chooses before loading it."""
    seen = tmp_path / "seen.txt"
    bot = tmp_path / "grpc_bot.py"
    bot.write_text(
        "import os\n"
        f"open({str(seen)!r}, 'w').write(os.environ.get('GRPC_EXPERIMENTS', 'None'))\n"
        "import grpc\n"
        "os._exit(0)  # what it saw is all this test wants\n"
    )
    python(f"import sys; from atout.cli import main; sys.exit(main(['run', {str(bot) + ':X'!r}, "
           "'--server', '127.0.0.1:9', '--token', 't']))")
    assert seen.read_text() == _grpc_engine.IOMGR_EXPERIMENTS


def test_choose_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRPC_EXPERIMENTS", "x")  # recorded, so that what choose() sets is undone
    monkeypatch.delenv("GRPC_EXPERIMENTS")
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
    out = python(code, GRPC_VERBOSITY="ERROR")  # (the level that error is logged at)
    assert "Unknown experiment" not in out.stderr, out.stderr
