"""The organizer token's minimum strength (``ATOUT_ADMIN_TOKEN``, core/settings.py): at least 24
characters besides the ``atout_admin_`` prefix, 8 of them different. A weaker one stops every
serving command with one line, the token hidden, and exit code 2."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from atout_arena.core.settings import Settings, SettingsError, admin_token_problem

TOO_WEAK = ("too weak: the organizer token needs at least 24 characters besides the atout_admin_ prefix, "
            "8 of them different (e.g. atout_admin_$(openssl rand -hex 16))")

WEAK = [
    "atout_admin_x",  # the example
    "atout_admin_rehearsal",
    "admin",
    "change-me",
    "atout_admin_" + "a" * 40,  # long, but one character
    "atout_admin_" + "abc" * 10,  # long, but three
    "atout_admin_0123456789abcdef0123456",  # 23 besides the prefix
    "0123456789abcdef0123456",  # 23, no prefix
]
STRONG = [
    "atout_admin_" + secrets.token_urlsafe(24),  # what the arena makes up
    "atout_admin_" + secrets.token_hex(16),  # docs: atout_admin_$(openssl rand -hex 16)
    "atout_admin_0123456789abcdef01234567",  # exactly 24 besides the prefix
    "0123456789abcdef01234567",  # 24 without the prefix
    secrets.token_urlsafe(24),  # docs/api.md's
]


@pytest.mark.parametrize("token", WEAK, ids=range(len(WEAK)))
def test_a_weak_organizer_token_is_refused_in_one_line_without_showing_it(token: str) -> None:
    assert admin_token_problem(token)
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"ATOUT_ADMIN_TOKEN": token})
    # the same line whatever the token: nothing of it is shown
    assert str(refused.value) == f"ATOUT_ADMIN_TOKEN=(hidden): {TOO_WEAK}"


# ids: random values would name the tests differently in each xdist worker
@pytest.mark.parametrize("token", STRONG, ids=["made-up", "openssl-hex", "24-prefixed", "24-bare", "urlsafe"])
def test_a_strong_organizer_token_is_taken(token: str) -> None:
    assert admin_token_problem(token) is None
    assert Settings.from_env({"ATOUT_ADMIN_TOKEN": token}).admin_token == token


def test_no_organizer_token_is_still_allowed() -> None:
    """Unset (or empty) is allowed: ``atout-arena api``, ``up`` and ``demo`` make a strong one up."""
    assert Settings.from_env({}).admin_token is None
    assert Settings.from_env({"ATOUT_ADMIN_TOKEN": "  "}).admin_token is None


@pytest.mark.parametrize("command", [["api"], ["gateway"], ["worker"]])
def test_a_serving_command_stops_on_a_weak_token_in_one_line(command: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "ATOUT_ADMIN_TOKEN": "atout_admin_x", "ATOUT_DATA_DIR": str(tmp_path),
           "ATOUT_REDIS_URL": "redis://127.0.0.1:9/0"}  # never reached: the settings stop it first
    run = subprocess.run([sys.executable, "-m", "atout_arena.cli", *command], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path, env=env)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.splitlines() == [f"error: ATOUT_ADMIN_TOKEN=(hidden): {TOO_WEAK}"]
