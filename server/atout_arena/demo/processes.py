"""The demo's parts as processes: each in a process group of its own, its output in a log
file, stopped by group (SIGTERM, then SIGKILL after a timeout); and Ctrl-C / SIGTERM counted
(:class:`StopSignals`) so that the demo stops them in order, and kills at once on a second one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import signal
import site
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

START_TIMEOUT_S = 60.0  # a part (or every bot) ready within this; imports are slow on a busy machine
STOP_TIMEOUT_S = 10.0  # SIGTERM, then SIGKILL after this
LOG_TAIL_LINES = 25


# -- signals ----------------------------------------------------------------------------------


class DemoInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM: the demo stops what it started and exits (never caught by an
    ``except Exception``)."""


class StopSignals:
    """SIGINT and SIGTERM, counted: the first asks the demo to stop (checked where it waits),
    the second forces (what is left is killed at once). Handlers are restored on exit."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.count >= 1

    @property
    def forced(self) -> bool:
        return self.count >= 2

    def check(self) -> None:
        if self.requested:
            raise DemoInterrupted

    def sleep(self, seconds: float) -> None:
        """Sleep, but raise :class:`DemoInterrupted` as soon as a stop is asked."""
        deadline = time.monotonic() + seconds
        while True:
            self.check()
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.05))

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.count += 1  # nothing else: printing from a handler can break a print under way

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *_exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


# -- the parts, as processes ------------------------------------------------------------------


class PartError(Exception):
    """A part did not start, or died: the message says which and why; ``part`` has its log."""

    def __init__(self, part: Part, reason: str) -> None:
        super().__init__(f"{part.label} {reason}")
        self.part = part


@dataclass
class Part:
    """One started process: its own process group, its output in ``log_path``."""

    name: str  # file-name friendly: gateway, api, worker-1, bot-heuristic-1
    label: str  # for people: "the game server"
    popen: subprocess.Popen[bytes]
    log_path: Path
    tier: int  # stopped in increasing tiers: what uses the others goes first
    env: dict[str, str] = field(default_factory=dict)  # its own variables, beside the parts' common ones

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return "\n".join(self.log().rstrip().splitlines()[-lines:])

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the part's whole process group (its children too)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def wait_for(self, pattern: str, signals: StopSignals, timeout: float = START_TIMEOUT_S) -> re.Match[str]:
        """The first match of ``pattern`` in the part's output, once it shows."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.log())
            if found:
                return found
            if not self.alive():
                raise PartError(self, f"exited with code {self.popen.returncode} before it was ready")
            if time.monotonic() > deadline:
                raise PartError(self, f"was not ready within {timeout:.0f} s")
            signals.sleep(0.05)


class Parts:
    """The processes the demo started, and how to stop them all."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = env
        self.started: list[Part] = []

    def start(self, name: str, label: str, args: Sequence[str], tier: int,
              env: dict[str, str] | None = None, append: bool = False) -> Part:
        log_path = self.directory / f"{name}.log"
        with open(log_path, "ab" if append else "wb") as log_file:
            popen = subprocess.Popen(
                list(args), stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                env={**self.env, **(env or {})}, cwd=self.directory,
                start_new_session=True,  # its own process group: Ctrl-C reaches the demo only
            )
        part = Part(name, label, popen, log_path, tier, dict(env or {}))
        self.started.append(part)
        return part

    def dead(self) -> Part | None:
        """A started part that has exited, if any."""
        return next((p for p in self.started if not p.alive()), None)

    def stop_all(self, forced: Callable[[], bool], timeout: float = STOP_TIMEOUT_S) -> list[Part]:
        """Stop every part, tier by tier: SIGTERM to each process group, SIGKILL after
        ``timeout`` (at once when ``forced()`` turns true). Returns the parts that had to be
        killed."""
        killed: list[Part] = []
        for tier in sorted({p.tier for p in self.started}):
            group = [p for p in self.started if p.tier == tier]
            for part in group:
                if part.alive():
                    part.signal_group(signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while any(p.alive() for p in group) and time.monotonic() < deadline and not forced():
                time.sleep(0.05)
            for part in group:
                if part.alive():
                    killed.append(part)
                    part.signal_group(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    part.popen.wait(timeout)
                # whatever it left in its group (a child of its own) goes with it
                part.signal_group(signal.SIGKILL)
        return killed


def python_path_for_children() -> str:
    """``PYTHONPATH`` for the parts: the folders this process finds ``atout``, ``atout_arena``
    and ``atout_workers`` in, unless they are site-packages already (the parts run in the data
    dir, so nothing in the current directory can shadow them). Found, not imported: the demo
    starts the workers as processes and never imports their code."""
    site_dirs = {Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages())}
    roots: list[str] = []
    for package in ("atout_arena", "atout_workers", "atout"):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin:
            continue
        root = Path(spec.origin).resolve().parent.parent
        if root not in site_dirs and str(root) not in roots:
            roots.append(str(root))
    existing = os.environ.get("PYTHONPATH")
    return os.pathsep.join([*roots, *([existing] if existing else [])])


def python_module(module: str, *args: str) -> list[str]:
    """Run ``module`` with this interpreter: the same installation as the demo's."""
    return [sys.executable, "-m", module, *args]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn's socket will
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1, never a proxy


def wait_http_ok(url: str, signals: StopSignals, part: Part, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        try:
            with _NO_PROXY.open(url, timeout=2) as response:
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        if not part.alive():
            raise PartError(part, f"exited with code {part.popen.returncode} before it was ready")
        if time.monotonic() > deadline:
            raise PartError(part, f"did not answer {url} within {timeout:.0f} s ({last})")
        signals.sleep(0.1)
