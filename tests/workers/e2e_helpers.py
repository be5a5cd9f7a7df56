"""Helpers of the workers' end-to-end tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition",
               poll_s: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something true (returned), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
