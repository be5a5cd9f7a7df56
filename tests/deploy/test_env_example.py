"""docs/deployment.md's check of the compose file runs as written on a clone, with no .env and
no secret in the environment: it reads deploy/env.example, which holds every variable the compose
file requires, as placeholders (never an organizer token the arena would accept)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from atout_arena.core.settings import admin_token_problem

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "env.example"
SECRETS = ("POSTGRES_PASSWORD", "REDIS_PASSWORD", "ATOUT_ADMIN_TOKEN", "GRAFANA_ADMIN_PASSWORD")


def example() -> dict[str, str]:
    lines = [line for line in EXAMPLE.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_the_example_holds_every_required_variable_of_the_compose_file() -> None:
    required = set(re.findall(r"\$\{(\w+):\?", (ROOT / "docker-compose.yml").read_text()))
    assert required == set(SECRETS)
    assert set(example()) == required
    assert admin_token_problem(example()["ATOUT_ADMIN_TOKEN"]), "a placeholder token must be refused"


def test_the_documented_compose_check_runs_as_written() -> None:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is not installed: "
                    "apt-get install -y --no-install-recommends docker-compose", pytrace=False)
    section = (ROOT / "docs" / "deployment.md").read_text().split("## Checking the files\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert block
    command = next(line for line in block.group(1).splitlines()
                   if "docker-compose" in line and " config" in line)
    env = {k: v for k, v in os.environ.items() if k not in SECRETS and k != "ATOUT_MONITOR_BIND"}
    done = subprocess.run(["bash", "-c", command.split("#", 1)[0].replace(">/dev/null", "")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert "changeme0redis0password" in done.stdout  # the example's values were read
