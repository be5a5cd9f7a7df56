"""The scaled-out arena rehearsed for real (``deploy/rehearsal.py``, which ``deploy/rehearse.sh``
runs too): PostgreSQL, Redis, two game servers behind a real HAProxy, three workers, a practice
worker, beat, the API, a real Prometheus and eight SDK bots, all on 127.0.0.1, as processes.

The rehearsal runs in one test (about a minute). Then the files that describe the topology
(docker-compose.yml, docs/deployment.md, the rehearsal's own) are compared so that they cannot
drift apart. Needs ``install.sh``'s system packages: postgresql, haproxy, prometheus,
docker-compose (a missing one fails, never skips).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

pytestmark = pytest.mark.slow  # tens of seconds: not in the fast lane (README, "Tests")

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DEPLOYMENT_DOC = ROOT / "docs" / "deployment.md"


def _load_rehearsal() -> ModuleType:
    spec = importlib.util.spec_from_file_location("atout_rehearsal", ROOT / "deploy" / "rehearsal.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


rh = _load_rehearsal()


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.fail(f"not installed: {missing}; ./install.sh installs them "
                    "(apt-get install -y --no-install-recommends "
                    "haproxy prometheus docker-compose postgresql)",
                    pytrace=False)


@pytest.mark.timeout(600)
def test_the_scaled_out_arena_rehearsed(tmp_path: Path) -> None:
    """One test (the README's ``pytest`` spreads tests over processes: a fixture shared by
    several would run the whole rehearsal once per process)."""
    _need("haproxy", "prometheus")
    lines: list[str] = []
    report = rh.rehearse(tmp_path, log=lines.append)  # stops every process it started, even on error
    print("\n".join(lines) + "\n" + report.summary())  # shown with -s, and with a failure
    summary = report.summary()

    # a tournament of a few hundred matches: exactly one result per match in PostgreSQL
    assert report.matches >= 200, summary
    assert report.statuses == {"finished": report.matches}, summary
    assert report.results == report.matches, summary
    assert report.rating_rows_bad == 0, summary  # one rating change per seat of every match

    # bots spread over both game servers (least connections), through HAProxy's address only
    assert report.bots_before == {"gameserver-1": 4, "gameserver-2": 4}, summary

    # SIGTERM of gameserver-1 a fifth of the way in, kill -9 of gameserver-2 later: every bot
    # reconnects through HAProxy to the other one while the tournament runs, and nothing is lost
    assert 0 < report.sigterm_at < report.kill_at < 1, summary
    assert report.bots_after_sigterm == {"gameserver-2": 8}, summary
    assert report.bots_after_kill == {"gameserver-1": 8}, summary
    assert report.decisions == report.matches * 80, summary  # merde, 4 seats, deals 1..5: 20 bids, 60 cards
    assert report.fallbacks == 0, summary  # every action was the bot's own
    assert report.faults == 0 and report.faults_metric == 0, summary  # no fault: the reconnect grace

    # Prometheus: every target up; every query of the Grafana dashboard has data
    assert report.targets == {"atout-api": "up", "atout-gateway-lb": "up", "prometheus": "up"}, summary
    assert len(report.queries) == len(rh.dashboard_queries()), summary
    assert report.empty_queries == [], summary

    # the balancer's health check (compose's gateway-lb healthcheck): 200, then 503 with no server
    assert report.healthz_lb == {"up": 200, "no game server": 503}, summary

    # and the operator's script judges it the same way (deploy/rehearse.sh exits 1 on any)
    assert rh.problems(report) == [], summary


# ------------------------------------------------------------------ the configurations


def test_loopback_haproxy_config_is_valid_and_binds_loopback(tmp_path: Path) -> None:
    _need("haproxy")
    text = rh.loopback_haproxy_config(rh.HAPROXY_CONFIG.read_text(), 15051, 18404,
                                      {"gameserver-1": 16001, "gameserver-2": 16002})
    assert re.findall(r"^\s*bind (\S+)", text, re.M) == ["127.0.0.1:15051", "127.0.0.1:18404"]
    config = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "resolvers" not in config and "server-template" not in config
    assert "server gameserver-2 127.0.0.1:16002 check" in text
    for line in ("balance leastconn", "option redispatch 1", "monitor-uri /healthz",
                 "http-request use-service prometheus-exporter if { path /metrics }"):
        assert line in text  # the project's configuration, only its addresses changed
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    result = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    with pytest.raises(ValueError, match="server-template"):
        rh.loopback_haproxy_config("frontend x\n    bind :50051\n", 1, 2, {})


def test_a_check_port_becomes_each_servers_own_health_port(tmp_path: Path) -> None:
    """haproxy.cfg's check through the game server's health port (``check port N``, or an agent
    check's ``agent-port N``): both game servers share the edge host in the multi-host
    rehearsal, so each server line gets its own health port; Docker's resolution goes."""
    _need("haproxy")
    text = rh.HAPROXY_CONFIG.read_text()
    template = next(line for line in text.splitlines() if line.strip().startswith("server-template"))
    with_port = text.replace(template, "    server-template gameserver 16 gameserver:50051 check port 8080 "
                                       "inter 5s agent-check agent-port 8080 resolvers docker init-addr none")
    out = rh.haproxy_config(with_port, "10.77.1.2", 50051, 8404,
                            {"gameserver-1": ("10.77.1.2", 50061, 50071),
                             "gameserver-2": ("10.77.1.2", 50062, 50072)})
    servers = [line.strip() for line in out.splitlines() if line.strip().startswith("server ")]
    # the template's own timing is kept (haproxy.cfg's: inter 500ms fastinter 200ms fall 2 rise 2)
    assert servers == [f"server gameserver-{i} 10.77.1.2:5006{i} check port 5007{i} inter 5s "
                       f"agent-check agent-port 5007{i}" for i in (1, 2)]
    plain = rh.haproxy_config(text.replace(template, "    server-template gameserver 16 gameserver:50051 "
                                                     "check resolvers docker init-addr none"),
                              "10.77.1.2", 50051, 8404, {"gameserver-1": ("10.77.1.2", 50061, None)})
    assert "server gameserver-1 10.77.1.2:50061 check inter 1s fall 2 rise 2" in plain  # none: every second
    assert re.findall(r"^\s*bind (\S+)", out, re.M) == ["10.77.1.2:50051", "10.77.1.2:8404"]
    path = tmp_path / "haproxy.cfg"
    path.write_text(out)
    result = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


def test_loopback_prometheus_config_keeps_the_jobs(tmp_path: Path) -> None:
    _need("promtool")
    original = yaml.safe_load(rh.PROMETHEUS_CONFIG.read_text())
    targets = {t: f"127.0.0.1:{9000 + i}" for i, t in enumerate(_prometheus_targets(original))}
    text = rh.loopback_prometheus_config(rh.PROMETHEUS_CONFIG.read_text(), targets, "1s")
    config = yaml.safe_load(text)
    jobs = [j["job_name"] for j in config["scrape_configs"]]
    assert jobs == [j["job_name"] for j in original["scrape_configs"]]
    assert set(_prometheus_targets(config)) == set(targets.values())
    path = tmp_path / "prometheus.yml"
    path.write_text(text)
    result = subprocess.run(["promtool", "check", "config", str(path)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


def _prometheus_targets(config: dict) -> list[str]:
    return [t for job in config["scrape_configs"] for sc in job.get("static_configs", [])
            for t in sc["targets"]]


# ------------------------------------------------------------------ one topology, three descriptions


@pytest.fixture(scope="module")
def compose() -> dict:
    _need("docker-compose")
    env = {**os.environ, "POSTGRES_PASSWORD": "topology", "REDIS_PASSWORD": "topology",
           "GRAFANA_ADMIN_PASSWORD": "topology", "ATOUT_ADMIN_TOKEN": "atout_admin_topology-test-0123456789"}
    result = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True,
                            timeout=60, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def _doc_services() -> dict[str, str]:
    """docs/deployment.md's table of services: name -> its "published port" cell."""
    rows = re.findall(r"^\| `([a-z-]+)` \| [^|]+\| [^|]+\| ([^|]+)\|$", DEPLOYMENT_DOC.read_text(), re.M)
    return {name: cell.strip() for name, cell in rows}


def test_compose_the_rehearsal_and_the_doc_name_the_same_services(compose: dict) -> None:
    assert set(compose["services"]) == set(rh.TOPOLOGY) == set(_doc_services())
    doc = DEPLOYMENT_DOC.read_text()
    rehearsal = doc[doc.index("## Rehearse it on one machine"):]
    for service in rh.TOPOLOGY:
        assert f"`{service}`" in rehearsal, f"docs/deployment.md's rehearsal section does not name {service}"


def test_compose_and_the_doc_publish_the_same_ports(compose: dict) -> None:
    published = {name: sorted(int(p["published"]) if isinstance(p, dict) else int(p.split(":")[-2])
                              for p in service.get("ports", []))  # ADDRESS:PUBLISHED:TARGET/tcp
                 for name, service in compose["services"].items()}
    documented = {name: sorted(int(n) for n in re.findall(r"^\d+", cell))
                  for name, cell in _doc_services().items()}
    assert documented == published
    # the ports the rehearsal maps to loopback are the ones the configurations name
    assert compose["services"]["gameserver"]["environment"]["ATOUT_GRPC_ADDRESS"].endswith(":50051")
    haproxy = rh.HAPROXY_CONFIG.read_text()
    assert "bind :50051" in haproxy and "gameserver:50051" in haproxy and "bind :8404" in haproxy
    prometheus = yaml.safe_load(rh.PROMETHEUS_CONFIG.read_text())
    assert set(_prometheus_targets(prometheus)) == set(rh.PROMETHEUS_TARGETS)


def test_compose_and_the_rehearsal_set_the_same_variables(compose: dict) -> None:
    arena = {"migrate", "gameserver", "worker", "practice-worker", "beat", "api"}
    in_compose = {k for name in arena for k in compose["services"][name]["environment"]}
    in_rehearsal = set(rh.ARENA_SETTINGS) | set(rh.PART_VARIABLES)
    # the rehearsal names its two game servers (compose leaves ATOUT_SERVER_ID to the container id),
    # and gives each its health port (HAProxy's `check port`), which compose may set or not
    assert in_rehearsal | {"ATOUT_HEALTH_PORT"} == in_compose | {"ATOUT_SERVER_ID", "ATOUT_HEALTH_PORT"}
    doc = DEPLOYMENT_DOC.read_text()
    for name in in_rehearsal:
        assert f"`{name}`" in doc


# docs/deployment.md's three machines <-> the multi-host rehearsal's hosts
GUIDE_HOSTS = {"A": "edge", "B": "compute", "C": "data"}
# each part of the rehearsal as the guide's placement table names it
GUIDE_NAMES = {
    "gateway-lb": "HAProxy", "api": "two APIs", "api-2": "two APIs", "prometheus": "Prometheus",
    "beat-2": "a standby beat", "redis-replica": "the Redis replica", "gameserver-1": "game servers",
    "gameserver-2": "game servers", "worker": "workers", "practice-worker": "the practice worker",
    "beat": ", beat,", "postgres": "PostgreSQL", "redis": "the Redis primary",
    "sentinel-1": "a sentinel", "sentinel-2": "a sentinel", "sentinel-3": "a sentinel",
}


def _guide_rows() -> dict[str, str]:
    """The three-machine guide's 'Which part on which host' table: host letter -> parts cell."""
    doc = DEPLOYMENT_DOC.read_text()
    table = doc[doc.index("### Which part on which host"):doc.index("### Ports between hosts")]
    return {letter: cell for letter, cell in re.findall(r"^\| ([ABC]), [a-z]+ \| ([^|]+) \|", table, re.M)}


def test_the_multi_host_rehearsal_places_parts_as_the_three_machine_guide() -> None:
    rows = _guide_rows()
    assert set(rows) == set(GUIDE_HOSTS), rows
    placed = {part: host for part, host in rh.PLACEMENT.items()
              if host != "bots" and part != "postgres-restore"}
    assert set(placed) == set(GUIDE_NAMES)
    for part, host in placed.items():
        letter = next(letter for letter, h in GUIDE_HOSTS.items() if h == host)
        assert GUIDE_NAMES[part] in rows[letter], \
            f"{part} is on {host} ({letter}) in the rehearsal, not in the guide"
        others = [other for other in rows if other != letter and GUIDE_NAMES[part] in rows[other]]
        if not part.startswith("sentinel"):  # a sentinel on every host
            assert not others, f"the guide also puts {part} ({GUIDE_NAMES[part]!r}) on {others}"
    # the sentinels: one on each host
    assert sorted(rh.PLACEMENT[name] for name in rh.SENTINELS) == sorted(GUIDE_HOSTS.values())
