"""Which of gRPC's two I/O engines the SDK's runner and the game server use: ``iomgr``.

grpcio (1.6x and later) does its sockets' I/O on "EventEngine" threads by default, and
``grpc.aio`` hands every completion from there to a poller thread, then to the event loop:
three threads woken for each message. Its older engine (``iomgr``, the epoll1 poller) is still
built in, behind the experiments ``event_engine_client`` and ``event_engine_listener``, and
reads the socket on the polling thread itself. Measured on one of our 2-core machines
(2026-12-03, two five-run series of ``bench/roundtrip.py`` and ``bench/tournament.py``, one on
each engine): a lone decision's median round trip 0.74-0.75 -> 0.62-0.69 ms; 32 in flight and
the tournament about the same (11,022-11,907 and 11,051-12,069 decisions/s; 5,906-6,319 and
6,024-6,623).

gRPC reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is first imported, so :func:`choose` must
run before that: the arena's package calls it on import, the SDK's runner before its own
``import grpc``. It changes nothing when ``grpc`` is already imported (too late: the process
keeps gRPC's default) or when ``GRPC_EXPERIMENTS`` is set (the operator's choice wins).
``ATOUT_GRPC_ENGINE=event_engine`` keeps gRPC's default engine.
"""

from __future__ import annotations

import os
import sys

#: what turns gRPC's EventEngine off for clients (bots) and servers (game servers)
IOMGR_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
ENGINES = ("iomgr", "event_engine")


def wanted() -> str:
    """The engine ``ATOUT_GRPC_ENGINE`` asks for: ``iomgr`` unless it says ``event_engine``."""
    value = os.environ.get("ATOUT_GRPC_ENGINE", "iomgr").strip().lower().replace("-", "_")
    return "event_engine" if value == "event_engine" else "iomgr"


def choose() -> str | None:
    """Set ``GRPC_EXPERIMENTS`` for the engine :func:`wanted` names, if it can still matter;
    returns what it set (``None``: nothing, gRPC is imported already or the variable is set)."""
    if "grpc" in sys.modules or "GRPC_EXPERIMENTS" in os.environ or wanted() != "iomgr":
        return None
    os.environ["GRPC_EXPERIMENTS"] = IOMGR_EXPERIMENTS
    return IOMGR_EXPERIMENTS
