"""The card table drawn in a browser: ``table.js`` and ``cards.js`` (ES modules), shared by the
arena's dashboard (which serves these very files at ``/dashboard/js/table.js`` and
``/dashboard/js/cards.js``) and ``atout-bot watch --web`` (``watch.html`` and ``watch.js``, served
locally by :mod:`atout.watch`). ``table.css`` is the dashboard's table rules (its style.css and
play.css), copied: tests/sdk/test_watch.py keeps the copy equal to them."""

from __future__ import annotations

from pathlib import Path

WEB_DIR = Path(__file__).resolve().parent
SHARED = ("table.js", "cards.js")  # the dashboard's modules that live here
