"""install.sh's apt step waits for another apt or dpkg that holds its lock (unattended-upgrades
does on a fresh Ubuntu at boot), saying so once, instead of failing at once. The real apt-get runs
on a throwaway root of its own (its lists, cache, and dpkg status in tmp_path, no sources), and a
real process holds its locks (fcntl, as apt and dpkg take them): nothing of the machine's apt is
touched."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL_SH = ROOT / "install.sh"

pytestmark = pytest.mark.skipif(shutil.which("apt-get") is None, reason="no apt-get on this machine")

HOLDER = """
import fcntl, os, sys, time
fds = [os.open(p, os.O_RDWR | os.O_CREAT) for p in sys.argv[2:]]
for fd in fds:
    fcntl.lockf(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[1]))
"""


def sandbox(tmp_path: Path) -> tuple[dict[str, str], list[Path]]:
    """An ``apt-get`` first on PATH that is the real one on a root of its own; its lock files."""
    root = tmp_path / "apt"
    for folder in ("lists/partial", "cache/archives/partial", "parts", "dpkg/updates", "bin"):
        (root / folder).mkdir(parents=True)
    (root / "dpkg" / "status").touch()
    (root / "sources.list").touch()
    wrapper = root / "bin" / "apt-get"
    wrapper.write_text(
        f'#!/bin/sh\nexec {shutil.which("apt-get")} -o Dir::State::Lists={root}/lists '
        f"-o Dir::State::status={root}/dpkg/status -o Dir::Cache={root}/cache "
        f"-o Dir::Etc::SourceList={root}/sources.list -o Dir::Etc::SourceParts={root}/parts "
        '-o Debug::NoLocking=false "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "ATOUT_APT_RETRY_S": "0.2"}
    return env, [root / "lists" / "lock", root / "dpkg" / "lock-frontend", root / "dpkg" / "lock"]


def apt_step(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """install.sh's own ``apt_get`` function (the script sourced: its functions only), run as
    its apt step runs it."""
    assert "apt_get() {" in INSTALL_SH.read_text()  # never source an install.sh that would install
    return subprocess.run(
        ["bash", "-c", f'source "{INSTALL_SH}" && apt_get update -qq && apt_get install -y -qq'],
        capture_output=True, text=True, env=env, timeout=60, check=False)


def hold(locks: list[Path], seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(seconds), *map(str, locks)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_the_apt_step_waits_for_another_apt_and_says_so_once(tmp_path: Path) -> None:
    env, locks = sandbox(tmp_path)
    holder = hold(locks, 2.0)
    started = time.monotonic()
    try:
        done = apt_step(env)
    finally:
        holder.kill()
        holder.wait()
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "waiting for it" in line]
    name = Path(sys.executable).name[:15]  # the holder's process name, as apt reads it
    assert len(said) == 1 and said[0] == (
        f"install.sh: another apt or dpkg is running (held by process {holder.pid} ({name})); "
        "waiting for it to finish (up to 600 s)..."), done.stderr
    assert done.stderr.strip() == said[0]
    assert took >= 1.8, took  # it did wait for the holder


def test_the_apt_step_gives_up_after_its_wait_with_apts_own_error(tmp_path: Path) -> None:
    env, locks = sandbox(tmp_path)
    holder = hold(locks, 30.0)
    try:
        done = apt_step({**env, "ATOUT_APT_WAIT_S": "1"})
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode != 0
    assert "waiting for it to finish (up to 1 s)" in done.stderr
    assert re.search(r"E: Could not get lock .*lists/lock\. It is held by process \d+", done.stderr), \
        done.stderr


def test_every_apt_get_of_install_sh_goes_through_the_waiting_function() -> None:
    lines = INSTALL_SH.read_text().splitlines()
    calls = [line for line in lines
             if not line.lstrip().startswith("#") and re.search(r"\bapt(-get|_get) (update|install)\b", line)]
    assert len(calls) == 3 and all(line.strip().startswith("apt_get ") for line in calls), calls


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_python_step_prints_no_setuptools_warning(tmp_path: Path) -> None:
    """install.sh's venv and pip lines, as written, on a copy of the project (its dependencies
    left out: PIP_NO_DEPS), print nothing: no setuptools notice, once per package, as before."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "node_modules")
    for folder in ("sdk", "server", "workers"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=ignore)
    for file in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / file, tmp_path / file)
    text = INSTALL_SH.read_text()
    # the venv, pip's upgrade (an older pip does not show the notice), the install
    first = text.index('"$PYTHON" -m venv .venv')
    python_step = text[first:text.index("\n", text.index(".venv/bin/pip install", first))]
    assert python_step.count("\n") >= 2, python_step
    done = subprocess.run(["bash", "-euc", python_step], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHON": sys.executable if sys.prefix == sys.base_prefix
                               else str(Path(sys.base_prefix) / "bin" / "python3"), "PIP_NO_DEPS": "1"},
                          timeout=170, check=False)
    assert done.returncode == 0, done.stderr
    shown = [line for line in (done.stdout + done.stderr).splitlines()
             if "is ignored: it is neither a file nor a directory" not in line]  # this machine's pip.conf
    assert shown == [], "\n".join(shown)
