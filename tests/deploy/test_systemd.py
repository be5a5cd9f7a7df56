"""deploy/systemd/: the arena's parts as systemd units, for hosts without Docker. Checked against
docker-compose.yml (as ``docker-compose config`` reads it): the same services, the same command
lines, every variable compose passes in the units or in deploy/systemd/atout.env.example, the
same stop grace; and by ``systemd-analyze verify`` where systemd is installed."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
SYSTEMD = ROOT / "deploy" / "systemd"
ENV_EXAMPLE = SYSTEMD / "atout.env.example"
DEPLOYMENT_DOC = ROOT / "docs" / "deployment.md"
ENV_FILE = "/etc/atout/atout.env"
INSTALL = "/opt/atout"  # the arena's checkout on a host, its virtual environment in .venv
VENV_BIN = f"{INSTALL}/.venv/bin/"

# compose service -> its unit; a template's instance is what compose's command says (the API's
# port) or a number (game servers and workers: compose scales them, systemd runs @1, @2, ...)
UNITS = {
    "migrate": "atout-migrate.service",
    "gameserver": "atout-gateway@.service",
    "worker": "atout-worker@.service",
    "practice-worker": "atout-practice-worker.service",
    "beat": "atout-beat.service",
    "api": "atout-api@.service",
}
INSTANCE = {"api": "8000"}
SECRETS = {"POSTGRES_PASSWORD": "systemdtestpg", "REDIS_PASSWORD": "systemdtestredis",
           "ATOUT_ADMIN_TOKEN": "atout_admin_systemd-test-organizer-0123", "GRAFANA_ADMIN_PASSWORD": "x"}
# set per host in atout.env: where the database and Redis are, and the secrets in them
PER_HOST = {"ATOUT_DATABASE_URL", "ATOUT_REDIS_URL", "ATOUT_ADMIN_TOKEN"}


@pytest.fixture(scope="module")
def compose() -> dict:
    docker_compose = shutil.which("docker-compose")
    if docker_compose is None:
        pytest.fail("`docker-compose` is not installed: apt-get install -y --no-install-recommends "
                    "docker-compose", pytrace=False)
    result = subprocess.run([docker_compose, "-f", str(COMPOSE), "config"], capture_output=True, text=True,
                            timeout=60, cwd=ROOT, env={**os.environ, **SECRETS})
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def unit(name: str) -> dict[str, list[tuple[str, str]]]:
    """A unit file's sections, each a list of ``(key, value)`` (keys repeat: Environment=)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in (SYSTEMD / name).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
            continue
        key, _, value = line.partition("=")
        assert current is not None, (name, line)
        current.append((key.strip(), value.strip()))
    return sections


def values(name: str, key: str, section: str = "Service") -> list[str]:
    return [v for k, v in unit(name)[section] if k == key]


def one(name: str, key: str, section: str = "Service") -> str:
    found = values(name, key, section)
    assert len(found) == 1, (name, key, found)
    return found[0]


def unit_environment(name: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for assignments in values(name, "Environment"):
        for item in shlex.split(assignments):
            key, _, value = item.partition("=")
            env[key] = value
    return env


def env_example() -> dict[str, str]:
    env = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    return env


def command_line(service: str, *, instance: str = "1") -> list[str]:
    """The unit's ExecStart as compose would write it: the program's name without the virtual
    environment's path, the instance and host put in, and ``--hostname`` (a worker's Celery node
    name, which compose leaves to each container's host name) left out."""
    argv = shlex.split(one(UNITS[service], "ExecStart"))
    assert argv[0].startswith(VENV_BIN), argv
    program, args = argv[0].removeprefix(VENV_BIN), argv[1:]
    argv = [program, *(a.replace("%i", instance).replace("%H", "host") for a in args)]
    if "--hostname" in argv:
        at = argv.index("--hostname")
        del argv[at:at + 2]
    return argv


def test_the_units_are_the_compose_arena_services(compose: dict) -> None:
    arena = {name for name, service in compose["services"].items()
             if service.get("image") == "atout-arena:latest"}
    assert set(UNITS) == arena
    assert {path.name for path in SYSTEMD.glob("*.service")} == set(UNITS.values())
    doc = DEPLOYMENT_DOC.read_text()
    for name in [*UNITS.values(), ENV_EXAMPLE.name]:
        assert name in doc, f"docs/deployment.md does not name deploy/systemd/{name}"


@pytest.mark.parametrize("service", sorted(UNITS))
def test_each_unit_runs_the_compose_command(compose: dict, service: str) -> None:
    name = UNITS[service]
    instance = INSTANCE.get(service, "1")
    assert command_line(service, instance=instance) == compose["services"][service]["command"]
    # and the command exists, with those flags, in this installation
    argv = shlex.split(one(name, "ExecStart"))
    program = Path(sys.executable).parent / argv[0].removeprefix(VENV_BIN)
    args = [a.replace("%i", instance).replace("%H", "host") for a in argv[1:]]
    result = subprocess.run([str(program), *args, "--help"], capture_output=True, text=True, timeout=60,
                            cwd=ROOT)
    assert result.returncode == 0, (name, result.stdout, result.stderr)
    assert one(name, "WorkingDirectory") == INSTALL  # alembic.ini, and where the code is
    assert one(name, "User") == "atout" and one(name, "StateDirectory") == "atout"
    assert values(name, "EnvironmentFile")[0] == ENV_FILE
    if service == "migrate":
        assert one(name, "Type") == "oneshot"
    else:
        assert one(name, "Restart") == "on-failure"
    grace = compose["services"][service].get("stop_grace_period")
    if grace:
        assert one(name, "TimeoutStopSec") == str(int(grace.removesuffix("s"))), name


def test_every_variable_compose_passes_is_set_the_same_way(compose: dict) -> None:
    """Every ``ATOUT_*`` variable of an arena service is in the unit (what differs per service:
    a game server's ports) or in atout.env.example (the rest); the tuning values are compose's,
    the URLs carry a password to replace, and the example's variables are all settings."""
    from atout_arena.core.settings import Settings, env_name

    example = env_example()
    known = {env_name(field) for field in Settings.model_fields}
    assert set(example) <= known, set(example) - known
    for service, name in UNITS.items():
        passed = {k: str(v) for k, v in compose["services"][service]["environment"].items()}
        in_unit = unit_environment(name)
        for key, value in passed.items():
            assert key in in_unit or key in example, f"{name} does not set {key} (compose's {service} does)"
            got = in_unit.get(key, example.get(key))
            if key not in PER_HOST:
                assert got == value, (name, key, got, value)
    assert example["ATOUT_DATABASE_URL"].startswith("postgresql+psycopg://atout:CHANGE-ME@")
    assert example["ATOUT_REDIS_URL"].startswith("redis://:CHANGE-ME@")
    assert example["ATOUT_ADMIN_TOKEN"] == "CHANGE-ME"
    # filled in, the example is valid settings
    filled = {k: v.replace("CHANGE-ME", SECRETS.get(k, "x")) for k, v in example.items()}
    Settings.from_env(filled)


def test_the_api_unit_requires_the_organizer_token() -> None:
    """Compose refuses to start without ATOUT_ADMIN_TOKEN; so does the API's unit (ExecStartPre),
    in one line: an API without one would make up a new token at each restart."""
    check = one(UNITS["api"], "ExecStartPre").replace("$$", "$")  # systemd's escape of a literal $
    argv = shlex.split(check)
    env = {k: v for k, v in os.environ.items() if k != "ATOUT_ADMIN_TOKEN"}
    missing = subprocess.run(argv, capture_output=True, text=True, timeout=10, env=env)
    assert missing.returncode != 0
    assert missing.stderr.splitlines() == [
        "set ATOUT_ADMIN_TOKEN in /etc/atout/atout.env (the organizer token, e.g. atout_admin_ and 32 random "
        "characters), see docs/deployment.md"]
    given = subprocess.run(argv, capture_output=True, text=True, timeout=10,
                           env={**env, "ATOUT_ADMIN_TOKEN": SECRETS["ATOUT_ADMIN_TOKEN"]})
    assert given.returncode == 0, given.stderr


def test_a_second_game_server_on_a_host_gets_its_ports_from_its_own_file() -> None:
    """Compose's game servers each have their own container; two units on one host need their
    own ports, from /etc/atout/gateway-%i.env, read after Environment= (its values win)."""
    name = UNITS["gameserver"]
    assert unit_environment(name) == {"ATOUT_GRPC_ADDRESS": "0.0.0.0:50051", "ATOUT_HEALTH_PORT": "8081",
                                      "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    assert values(name, "EnvironmentFile") == [ENV_FILE, "-/etc/atout/gateway-%i.env"]


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    """``systemd-analyze verify`` on each unit, pointed at this installation (it checks that the
    programs exist); fails, saying so, where systemd is not installed (install.sh installs it)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.fail("systemd-analyze is not installed: ./install.sh installs it (apt-get install systemd)",
                    pytrace=False)
    venv_bin = str(Path(sys.executable).parent) + "/"
    paths = []
    for name in UNITS.values():
        text = (SYSTEMD / name).read_text().replace(VENV_BIN, venv_bin).replace(INSTALL, str(ROOT))
        path = tmp_path / name
        path.write_text(text)
        paths.append(str(path))
    result = subprocess.run([analyze, "verify", *paths], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "SYSTEMD_LOG_LEVEL": "notice"})
    problems = [line for line in result.stderr.splitlines() if not re.search(r"Failed to put bus name", line)]
    assert result.returncode == 0 and not problems, result.stderr
