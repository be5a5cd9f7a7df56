"""JSON on the workers' hot path: every decision's observation and the spectators' events.

``orjson`` rather than ``json.dumps``, which was a tenth of a worker's event loop: about ten
times faster on an observation (measured: 0.7 µs against 7.9). The output is compact JSON in
UTF-8; dict keys that are not strings are written as strings, as ``json.dumps`` does.
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON."""
    return orjson.dumps(value, option=_OPTIONS)


def dumps_text(value: Any) -> str:
    """:func:`dumps` as a ``str`` (a protobuf string field)."""
    return orjson.dumps(value, option=_OPTIONS).decode()
