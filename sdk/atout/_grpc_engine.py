"""Which of gRPC's two I/O engines the SDK's runner and the game server use: ``iomgr``.

grpcio (1.6x and later) does its sockets' I/O on "EventEngine" threads by default, and
``grpc.aio`` hands every completion from there to a poller thread, then to the event loop:
three threads woken for each message. Its older engine (``iomgr``, the epoll1 poller) is still
built in, behind the experiments ``event_engine_client`` and ``event_engine_listener``, and
reads the socket on the polling thread itself: one thread fewer woken per message, a lone
decision's round trip about a sixth shorter (the series are in bench/README.md).

gRPC reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is first imported, so :func:`choose` must
run before that: the game server's package (``atout_arena.gateway``) calls it on import, the
SDK's runner before its own ``import grpc``, ``atout-bot run`` before it loads the bot's module.
It changes nothing when ``grpc`` is already imported (too late: the process keeps gRPC's
default), when ``GRPC_EXPERIMENTS`` is set (the operator's choice wins), or off Linux (where it
was not measured). The variable it sets is inherited by the process's children, as a choice of their
own would be; ``ATOUT_GRPC_ENGINE=event_engine`` keeps gRPC's default engine, also in a child
that inherited this module's value.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping

#: what turns gRPC's EventEngine off for clients (bots) and servers (game servers)
IOMGR_EXPERIMENTS = "-event_engine_client,-event_engine_listener"


def wanted(env: Mapping[str, str] = os.environ) -> str:
    """The engine ``ATOUT_GRPC_ENGINE`` asks for: ``iomgr`` unless it says ``event_engine``
    (or the platform is not Linux)."""
    value = env.get("ATOUT_GRPC_ENGINE", "iomgr").strip().lower().replace("-", "_")
    if value not in ("iomgr", "event_engine"):
        warnings.warn(f"ATOUT_GRPC_ENGINE={value!r} is neither 'iomgr' nor 'event_engine': using iomgr",
                      RuntimeWarning, stacklevel=2)
    if value == "event_engine" or not sys.platform.startswith("linux"):
        return "event_engine"
    return "iomgr"


def environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with ``GRPC_EXPERIMENTS`` as :func:`choose` would leave it: for a child process
    that imports gRPC before anything of Atout (a benchmark's helper, say)."""
    env = dict(base)
    if wanted(env) == "iomgr":
        env.setdefault("GRPC_EXPERIMENTS", IOMGR_EXPERIMENTS)
    elif env.get("GRPC_EXPERIMENTS") == IOMGR_EXPERIMENTS:
        del env["GRPC_EXPERIMENTS"]
    return env


def choose() -> str | None:
    """Set ``GRPC_EXPERIMENTS`` as :func:`environment` would, if it can still matter; returns
    what it set (``None``: nothing, gRPC is imported already or the variable is set, or gRPC's
    default is wanted)."""
    if "grpc" in sys.modules:
        return None
    before = os.environ.get("GRPC_EXPERIMENTS")
    after = environment(os.environ).get("GRPC_EXPERIMENTS")
    if after is None:
        os.environ.pop("GRPC_EXPERIMENTS", None)  # (an inherited choice, undone by event_engine)
    elif after != before:
        os.environ["GRPC_EXPERIMENTS"] = after
        return after
    return None


def quiet_core_logs() -> None:
    """``GRPC_VERBOSITY=ERROR`` unless set, before gRPC's first import (later it changes nothing):
    gRPC's documented default, which grpcio 1.6x and later do not apply to its C core's INFO
    lines. A bot refused by TLS printed gRPC's own ``Handshake failed`` line beside the runner's
    one line that says what to do."""
    if "grpc" not in sys.modules:
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
