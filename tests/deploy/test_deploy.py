"""The scaled-out setup (docker-compose.yml, Dockerfile, deploy/, docs/deployment.md), checked
with the real tools: Compose v1 and promtool, which CI installs from Debian with

    apt-get install -y --no-install-recommends docker-compose prometheus

A missing tool fails these tests (it never skips them): without it nothing here is checked.
No Docker engine is needed: ``docker-compose config`` validates without one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
PROMETHEUS_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "atout.json"
HEALTHCHECK = ROOT / "deploy" / "healthcheck.py"
DEPLOYMENT_DOC = ROOT / "docs" / "deployment.md"

ARENA_IMAGE = "atout-arena:latest"
ARENA_SERVICES = {"migrate", "gameserver", "worker", "practice-worker", "beat", "api"}
ALL_SERVICES = ARENA_SERVICES | {"redis", "postgres", "gateway-lb", "prometheus", "grafana"}
START_TIMEOUT_S = 30.0


def tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` is not installed, so the deployment files cannot be checked: "
            f"apt-get install -y --no-install-recommends {package}",
            pytrace=False,
        )
    return path


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT, **kwargs)


# The compose file's required secrets, as an operator's .env sets them
ORGANIZER_TOKEN = "atout_admin_compose-test-organizer-0123"  # strong enough for Settings
REDIS_PASSWORD = "composetestredis0123"
SECRETS = {"POSTGRES_PASSWORD": "composetestpostgres0123", "REDIS_PASSWORD": REDIS_PASSWORD,
           "ATOUT_ADMIN_TOKEN": ORGANIZER_TOKEN, "GRAFANA_ADMIN_PASSWORD": "composetestgrafana0123"}
COMPOSE_ENV = {**{k: v for k, v in os.environ.items() if k != "ATOUT_MONITOR_BIND"}, **SECRETS}
MONITORING = {"prometheus": 9090, "grafana": 3000}


def published(service: dict) -> set[tuple[str, int, int]]:
    """``(host address, published, target)`` of each port a service publishes: Compose v1 prints
    ports without an address as mappings, ports with one as ``ADDRESS:PUBLISHED:TARGET/tcp``."""
    ports = set()
    for port in service.get("ports", []):
        if isinstance(port, dict):
            ports.add((port.get("host_ip", "0.0.0.0"), int(port["published"]), int(port["target"])))
        else:
            address, host_port, target = str(port).split("/")[0].rsplit(":", 2)
            ports.add((address, int(host_port), int(target)))
    return ports


# ------------------------------------------------------------------ docker-compose.yml


@pytest.fixture(scope="module")
def compose() -> dict:
    """``docker-compose config``: the file as Compose reads it (anchors, defaults resolved)."""
    docker_compose = tool("docker-compose", "docker-compose")
    result = run([docker_compose, "-f", str(COMPOSE), "config"], env=COMPOSE_ENV)
    assert result.returncode == 0, f"docker-compose config failed:\n{result.stderr}"
    assert "WARNING" not in result.stderr, result.stderr  # e.g. an unset variable without default
    return yaml.safe_load(result.stdout)


def test_compose_config_is_valid(compose: dict) -> None:
    services = compose["services"]
    assert set(services) == ALL_SERVICES
    # one image, built once (by migrate, which every other arena service waits for)
    assert {name for name, service in services.items() if "build" in service} == {"migrate"}
    for name in ARENA_SERVICES:
        assert services[name]["image"] == ARENA_IMAGE
        env = services[name]["environment"]
        assert env["ATOUT_REDIS_URL"] == f"redis://:{REDIS_PASSWORD}@redis:6379/0"
        assert env["ATOUT_DATABASE_URL"] == \
            f"postgresql+psycopg://atout:{SECRETS['POSTGRES_PASSWORD']}@postgres:5432/atout"
        if name != "migrate":
            assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
            check = services[name]["healthcheck"]["test"]
            assert check[:3] == ["CMD", "python", "/app/deploy/healthcheck.py"], name
    # scalable parts publish no fixed host port (two replicas would clash); bots come in
    # through gateway-lb's one port
    for name in ("gameserver", "worker", "practice-worker", "beat"):
        assert "ports" not in services[name], name
    # practice matches have workers of their own (only workers play matches)
    assert services["practice-worker"]["command"] == ["atout-arena", "worker", "--practice"]
    assert services["gameserver"]["environment"]["ATOUT_GRPC_ADDRESS"] == "0.0.0.0:50051"
    assert published(services["gateway-lb"]) == {("0.0.0.0", 50051, 50051)}
    assert published(services["api"]) == {("0.0.0.0", 8000, 8000)}
    assert services["api"]["command"][-4:] == ["--host", "0.0.0.0", "--port", "8000"]


def test_compose_fails_on_a_bad_key(tmp_path: Path) -> None:
    """The check above means something: Compose rejects what it does not know."""
    docker_compose = tool("docker-compose", "docker-compose")
    bad = tmp_path / "docker-compose.yml"
    bad.write_text(COMPOSE.read_text().replace("    restart: unless-stopped\n", "    restrat: no\n", 1))
    result = run([docker_compose, "-f", str(bad), "config"], env=COMPOSE_ENV)
    assert result.returncode != 0
    assert "restrat" in result.stderr


@pytest.mark.parametrize("secret", sorted(SECRETS))
def test_compose_requires_every_secret(compose: dict, secret: str) -> None:
    """Every secret of the deployment is required, with no fallback (POSTGRES_PASSWORD used to
    default to `atout`, Grafana's to `admin`; the organizer token to empty, and the API made up
    a new one at each start): without it, or empty, Compose stops with one line that says which
    to set, and where."""
    docker_compose = tool("docker-compose", "docker-compose")
    for value in (None, ""):
        env = {k: v for k, v in COMPOSE_ENV.items() if k != secret}
        if value is not None:
            env[secret] = value
        result = run([docker_compose, "-f", str(COMPOSE), "config"], env=env)
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert f"set {secret} in .env beside docker-compose.yml" in lines[0], result.stderr
    text = COMPOSE.read_text()
    assert f"${{{secret}:-" not in text and f"${{{secret}-" not in text  # no default anywhere
    assert compose["services"]["api"]["environment"]["ATOUT_ADMIN_TOKEN"] == ORGANIZER_TOKEN
    assert compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == SECRETS["POSTGRES_PASSWORD"]
    grafana = compose["services"]["grafana"]["environment"]
    assert grafana["GF_SECURITY_ADMIN_PASSWORD"] == SECRETS["GRAFANA_ADMIN_PASSWORD"]


def test_compose_keeps_monitoring_private(compose: dict) -> None:
    """Prometheus (no authentication) and Grafana are published on 127.0.0.1 unless
    ATOUT_MONITOR_BIND says otherwise; Grafana has no anonymous viewers. Only the bots' port and
    the API are published on every interface."""
    services = compose["services"]
    for name, port in MONITORING.items():
        assert published(services[name]) == {("127.0.0.1", port, port)}, name
    public = {name for name, service in services.items()
              if any(address in ("0.0.0.0", "", "::") for address, _, _ in published(service))}
    assert public == {"gateway-lb", "api"}
    grafana = services["grafana"]["environment"]
    assert grafana["GF_AUTH_ANONYMOUS_ENABLED"] == "false" and "GF_AUTH_ANONYMOUS_ORG_ROLE" not in grafana
    assert grafana["GF_USERS_ALLOW_SIGN_UP"] == "false"
    docker_compose = tool("docker-compose", "docker-compose")
    env = {**COMPOSE_ENV, "ATOUT_MONITOR_BIND": "10.0.0.5"}  # a private interface
    result = run([docker_compose, "-f", str(COMPOSE), "config"], env=env)
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    for name, port in MONITORING.items():
        assert published(services[name]) == {("10.0.0.5", port, port)}, name


def test_compose_redis_requires_its_password(compose: dict, tmp_path: Path) -> None:
    """Compose's Redis command, run by a real redis-server: a client without the password is
    refused; the arena's URL (the password in it) and the health check's redis-cli (REDISCLI_AUTH)
    get in."""
    import redis

    from atout_arena.core.settings import Settings

    service = compose["services"]["redis"]
    command = service["command"]
    assert command[0] == "redis-server" and command[command.index("--requirepass") + 1] == REDIS_PASSWORD
    assert service["environment"]["REDISCLI_AUTH"] == REDIS_PASSWORD
    assert service["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    server, cli = tool("redis-server", "redis-server"), tool("redis-cli", "redis-tools")
    port = _free_port()
    process = subprocess.Popen([server, *command[1:], "--port", str(port), "--bind", "127.0.0.1", "--dir",
                                str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = Settings.from_env(compose["services"]["worker"]["environment"]).redis_url
        assert url is not None
        url = url.replace("@redis:6379", f"@127.0.0.1:{port}")
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                assert client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()
        with pytest.raises(redis.AuthenticationError), redis.Redis(port=port) as anonymous:
            anonymous.ping()
        check = [cli, "-p", str(port), *service["healthcheck"]["test"][2:]]
        env = {k: v for k, v in os.environ.items() if k != "REDISCLI_AUTH"}
        assert run(check, env={**env, **service["environment"]}).stdout.strip() == "PONG"
        assert "NOAUTH" in run(check, env=env).stdout
    finally:
        process.terminate()
        process.wait(10)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_compose_checks_the_load_balancer(compose: dict) -> None:
    """gateway-lb has a health check: HAProxy's /healthz on its monitoring port (200 while a game
    server is up, 503 with none: tests/deploy/test_rehearsal.py sees both on a real HAProxy)."""
    check = compose["services"]["gateway-lb"]["healthcheck"]["test"]
    assert check == ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8404/healthz"]
    config = (ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text()
    assert "monitor-uri /healthz" in config and "bind :8404" in config


def test_compose_commands_exist(compose: dict) -> None:
    """Every command the arena services run is one the image has."""
    from atout_arena.cli import WORKER_COMMANDS, build_parser
    from atout_workers.cli import build_parser as workers_parser

    parser, workers = build_parser(), workers_parser()
    for name in sorted(ARENA_SERVICES):
        command = compose["services"][name]["command"]
        if command[0] == "alembic":
            assert command == ["alembic", "upgrade", "head"]
            assert (ROOT / "alembic.ini").is_file()
            continue
        assert command[0] == "atout-arena", (name, command)
        try:  # worker and beat: `atout-arena` hands them to `python -m atout_workers`
            (workers if command[1] in WORKER_COMMANDS else parser).parse_args(command[1:])
        except SystemExit:
            pytest.fail(f"service {name}: `{shlex.join(command)}` is not an atout-arena command "
                        "(atout_arena/cli.py, atout_workers/cli.py)", pytrace=False)
    for name, service in compose["services"].items():
        test = service.get("healthcheck", {}).get("test", [])
        if "/app/deploy/healthcheck.py" in test:
            part = test[test.index("/app/deploy/healthcheck.py") + 1]
            result = run([sys.executable, str(HEALTHCHECK), part, "--help"])
            assert result.returncode == 0, (name, result.stderr)


def _variables_read_by_the_code() -> set[str]:
    """Every ``ATOUT_*`` variable: the fields of the one settings object, and any name the
    code spells elsewhere (there should be none it does not also declare)."""
    from atout_arena.core.settings import Settings, env_name

    names = {env_name(field) for field in Settings.model_fields}
    for folder in ("server", "workers"):
        for path in (ROOT / folder).rglob("*.py"):
            names.update(re.findall(r"\bATOUT_[A-Z][A-Z0-9_]*[A-Z0-9]\b", path.read_text()))
    return names


def test_compose_settings_are_known_and_valid(compose: dict) -> None:
    from atout_arena.core.settings import Settings

    known = _variables_read_by_the_code()
    for name in sorted(ARENA_SERVICES):
        env = {k: str(v) for k, v in compose["services"][name]["environment"].items()}
        unknown = {k for k in env if k.startswith("ATOUT_")} - known
        assert not unknown, f"service {name} sets variables no code reads: {sorted(unknown)}"
        settings = Settings.from_env(env)  # raises ValueError naming a bad variable
        assert settings.redis_url == f"redis://:{REDIS_PASSWORD}@redis:6379/0"


def test_image_installs_the_dependencies_and_the_postgres_driver() -> None:
    """The Dockerfile's requirements step, run on pyproject.toml, lists every dependency of the
    arena and the ``postgres`` extra (psycopg: ``postgresql+psycopg://`` needs it)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(dep.startswith("psycopg[binary]") for dep in project["optional-dependencies"]["postgres"])
    dockerfile = re.sub(r"\\\n", "", (ROOT / "Dockerfile").read_text())  # continuation lines
    step = next(line for line in dockerfile.splitlines() if line.startswith("RUN python -c "))
    program = shlex.split(step[len("RUN "):])[2]
    result = run([sys.executable, "-c", program])
    assert result.returncode == 0, result.stderr
    listed = result.stdout.split()
    extra = project["optional-dependencies"]["postgres"]
    assert listed == [d for d in project["dependencies"] if d != "atout"] + extra
    assert "pip install -r /tmp/requirements.txt" in step
    assert "pip install --no-deps -e ." in dockerfile


def test_deployment_doc_lists_every_variable() -> None:
    text = DEPLOYMENT_DOC.read_text()
    missing = sorted(name for name in _variables_read_by_the_code() if f"`{name}`" not in text)
    assert not missing, f"docs/deployment.md has no row for {missing}"


# ------------------------------------------------------------------ metrics, Prometheus, Grafana


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis of this module's own: the metrics written here stay out of other tests' counts."""
    from atout_arena.core.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(tmp_path_factory.mktemp("deploy-redis")) as server:
        yield server.url


def _exported_series(redis_url: str) -> dict[str, str]:
    """Series name -> metric family, for every family the arena's registry exports."""
    import redis

    from atout_arena.core.metrics import metrics_registry
    from atout_arena.core.tasks import QUEUES

    client = redis.Redis.from_url(redis_url)
    series: dict[str, str] = {}
    for family in metrics_registry(client, QUEUES).collect():
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
        for suffix in suffixes[family.type]:
            series[family.name + suffix] = family.name
    client.close()
    return series


def _dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    queries = []
    for panel in dashboard["panels"]:
        queries += [target["expr"] for target in panel.get("targets", [])]
        for inner in panel.get("panels", []):  # collapsed rows
            queries += [target["expr"] for target in inner.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        queries.append(query["query"] if isinstance(query, dict) else query)
    return queries


def test_dashboard_queries_exported_metrics(redis_server: str) -> None:
    from atout_arena.core.metrics import ALL_METRICS

    series = _exported_series(redis_server)
    assert set(series.values()) >= {spec.name[: -len("_total")] if spec.kind == "counter" else spec.name
                                     for spec in ALL_METRICS}
    queried: set[str] = set()
    for query in _dashboard_queries():
        for name in re.findall(r"\batout_[a-zA-Z0-9_]+", query):
            assert name in series, (
                f"the dashboard queries {name!r} ({query}), which the arena does not export; "
                f"it exports {sorted(series)}"
            )
            queried.add(series[name])
    # every metric of DESIGN.md has a panel (latency p50/p99, faults, matches/s, ratings, ...)
    assert queried == set(series.values())
    quantiles = " ".join(_dashboard_queries())
    for q in ("0.5", "0.99"):
        assert f"histogram_quantile({q}, sum by (game, le) (rate(atout_decision_seconds_bucket" in quantiles


def test_dashboard_queries_are_valid_promql(tmp_path: Path) -> None:
    """promtool parses each query (Grafana's variables replaced as Grafana would)."""
    promtool = tool("promtool", "prometheus")
    rules = []
    for i, query in enumerate(_dashboard_queries()):
        expr = query.replace("$__rate_interval", "1m").replace("$game", ".*").replace("$bot", ".*")
        if expr.startswith("label_values("):
            found = re.fullmatch(r"label_values\((.+), *\w+\)", expr)
            assert found, expr
            expr = found.group(1)
        rules.append({"record": f"atout:dashboard_query_{i}", "expr": expr})
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = run([promtool, "check", "rules", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_prometheus_config(compose: dict) -> None:
    promtool = tool("promtool", "prometheus")
    result = run([promtool, "check", "config", str(PROMETHEUS_CONFIG)])
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    targets = {t for job in config["scrape_configs"] for sc in job.get("static_configs", [])
               for t in sc["targets"]}
    assert "api:8000" in targets  # the API's /metrics: every worker's and game server's counts
    assert "gateway-lb:8404" in targets
    mounts = compose["services"]["prometheus"]["volumes"]
    assert any(str(m).startswith(f"{PROMETHEUS_CONFIG}:/etc/prometheus/prometheus.yml") for m in mounts)


@pytest.fixture(scope="module")
def api(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real API (``atout_arena.api.serve_api``) in another process; yields its base URL."""
    directory = tmp_path_factory.mktemp("deploy-api")
    log_path = directory / "api.log"
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "ATOUT_REDIS_URL": redis_server,
        "ATOUT_DATA_DIR": str(directory),
        "ATOUT_DATABASE_URL": f"sqlite:///{directory / 'atout.db'}",
        "ATOUT_ADMIN_TOKEN": "atout_admin_deploy-test-organizer-0123",
    }
    code = "from atout_arena.api import serve_api; serve_api('127.0.0.1', 0)"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (found := re.search(r"API listening on (http://\S+:\d+)", log_path.read_text())):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the API did not start:\n{log_path.read_text()}")
            time.sleep(0.05)
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def test_live_metrics_pass_promtool(api: str, redis_server: str) -> None:
    """A scrape of the real /metrics, with a value in every metric, is clean for promtool."""
    import redis

    from atout_arena.core.metrics import ALL_METRICS, MetricsRecorder

    promtool = tool("promtool", "prometheus")
    client = redis.Redis.from_url(redis_server)
    recorder = MetricsRecorder(client)
    recorder.decision("merde", "deploy-bot", 0.012)
    recorder.decision("fool", "deploy-bot-2", 3.0)
    recorder.match("merde", "finished", 42.0)
    recorder.match("tiercon", "forfeit", 0.5)
    recorder.fault("deploy-bot", "timeout")
    recorder.fault("deploy-bot-2", "illegal", 2)
    recorder.rating("merde", "deploy-bot", 1512.5)
    client.close()

    with urllib.request.urlopen(f"{api}/metrics", timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        body = response.read().decode()
    for spec in ALL_METRICS:
        assert f"# TYPE {spec.name} {spec.kind}" in body, spec.name
    assert 'atout_decision_seconds_bucket{bot="deploy-bot",game="merde",le="0.025"} 1.0' in body
    assert 'atout_faults_total{bot="deploy-bot-2",kind="illegal"} 2.0' in body
    assert 'atout_rating{bot="deploy-bot",game="merde"} 1512.5' in body

    result = run([promtool, "check", "metrics"], input=body)
    assert result.returncode == 0, f"promtool check metrics (exit {result.returncode}):\n" \
        f"{result.stdout}{result.stderr}\n--- scrape:\n{body}"


def test_healthcheck_api(api: str) -> None:
    ok = run([sys.executable, str(HEALTHCHECK), "api", "--url", f"{api}/healthz"])
    assert ok.returncode == 0, ok.stderr
    down = run([sys.executable, str(HEALTHCHECK), "api", "--url", "http://127.0.0.1:9/healthz"])
    assert down.returncode == 1
    assert "unhealthy api" in down.stderr


def test_healthcheck_gameserver(game_server) -> None:
    address = game_server.info["address"]
    ok = run([sys.executable, str(HEALTHCHECK), "gameserver", "--address", address])
    assert ok.returncode == 0, ok.stderr
    down = run([sys.executable, str(HEALTHCHECK), "gameserver", "--address", "127.0.0.1:9"])
    assert down.returncode == 1
    assert "unhealthy gameserver" in down.stderr


def test_healthcheck_beat_pings_redis(redis_server: str) -> None:
    env = {**os.environ, "ATOUT_REDIS_URL": redis_server}
    assert run([sys.executable, str(HEALTHCHECK), "beat"], env=env).returncode == 0
    env["ATOUT_REDIS_URL"] = "redis://127.0.0.1:9/0"
    assert run([sys.executable, str(HEALTHCHECK), "beat"], env=env).returncode == 1
