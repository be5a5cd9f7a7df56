"""HAProxy terminating TLS (deploy/haproxy/haproxy-tls.cfg) on real processes, with a private CA
made by ``openssl`` (deploy/tls.py): the file passes ``haproxy -c`` once made loopback by the
rehearsal's conversion (``rehearsal.haproxy_config``, then ``tls.haproxy_tls_config``); an SDK
bot with ``--ca`` connects through its gRPC frontend (TLS, ALPN h2) to a plain game server, a
bot with another CA is refused in one line; the API's frontend answers HTTPS in front of a
plain API."""

from __future__ import annotations

import secrets
import shutil
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from e2e_helpers import wait_until
from tls_helpers import haproxy_tls_config, make_ca

from atout_arena.core.relay import is_connected

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))  # deploy/ is not a package: the rehearsal's config conversion

import rehearsal as rh  # noqa: E402

HAPROXY_TLS_CFG = ROOT / "deploy" / "haproxy" / "haproxy-tls.cfg"


def haproxy() -> str:
    path = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(path).exists():
        pytest.fail("haproxy is not installed: ./install.sh (apt-get install -y haproxy)", pytrace=False)
    return path


def trusting(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def loopback_config(tmp_path: Path, combined: Path, ports: dict[str, int], game_server: tuple[int, int],
                    api_port: int) -> Path:
    text = rh.haproxy_config(HAPROXY_TLS_CFG.read_text(), "127.0.0.1", ports["bots"], ports["monitor"],
                             {"gs1": ("127.0.0.1", *game_server)})
    text = haproxy_tls_config(text, combined, "127.0.0.1", ports["api"], {"api": ("127.0.0.1", api_port)})
    config = tmp_path / "haproxy-tls.cfg"
    config.write_text(text)
    return config


def test_the_tls_config_passes_haproxy_check(tmp_path: Path) -> None:
    certs = make_ca(tmp_path / "tls")
    config = loopback_config(tmp_path, certs.combined, {"bots": 1, "monitor": 2, "api": 3}, (4, 5), 6)
    text = config.read_text()
    assert f"bind 127.0.0.1:1 ssl crt {certs.combined} alpn h2" in text
    assert f"bind 127.0.0.1:3 ssl crt {certs.combined} alpn h2,http/1.1" in text
    checked = subprocess.run([haproxy(), "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Configuration file is valid" in checked.stdout + checked.stderr


@pytest.mark.slow
def test_bots_and_the_api_through_haproxy_terminating_tls(
    tmp_path: Path, processes, start_game_server, make_bot, spawn_bot, redis_client, redis_url, database_url,
) -> None:
    certs, other = make_ca(tmp_path / "tls"), make_ca(tmp_path / "other")
    grpc_port, health_port = free_port(), free_port()
    start_game_server("gs-behind-tls-lb", f"127.0.0.1:{grpc_port}", ATOUT_HEALTH_PORT=str(health_port))
    admin = "atout_admin_" + secrets.token_hex(16)
    api = processes.start("api-plain", [sys.executable, "-m", "atout_arena.cli", "api", "--port", "0"], {
        "ATOUT_REDIS_URL": redis_url, "ATOUT_DATABASE_URL": database_url, "ATOUT_ADMIN_TOKEN": admin,
        "ATOUT_DATA_DIR": str(tmp_path / "api")})
    api_port = int(api.wait_for_log(r"API listening on http://127\.0\.0\.1:(\d+)", timeout=30).group(1))
    ports = {"bots": free_port(), "monitor": free_port(), "api": free_port()}
    config = loopback_config(tmp_path, certs.combined, ports, (grpc_port, health_port), api_port)
    balancer = processes.start("haproxy-tls", [haproxy(), "-f", str(config), "-db"], {})

    def api_up() -> bool:
        try:
            return httpx.get(f"https://127.0.0.1:{ports['api']}/healthz", verify=trusting(certs.ca),
                             timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(api_up, 20, "the API through HAProxy's HTTPS frontend")
    address = f"127.0.0.1:{ports['bots']}"
    info, token = make_bot("through-tls-lb")
    bot = spawn_bot(address, token, "random", "--ca", str(certs.ca))
    wait_until(lambda: is_connected(redis_client, info.bot_id), 20, "the bot through HAProxy's TLS")
    _, token2 = make_bot("wrong-ca-at-lb")
    refused = spawn_bot(address, token2, "random", "--ca", str(other.ca))
    wait_until(lambda: not refused.alive(), 15, "the bot with another CA to exit")
    said = [line for line in refused.log().splitlines() if "INFO atout: connecting to" not in line]
    assert refused.popen.returncode == 2 and len(said) == 1 and "is not trusted" in said[0], refused.log()
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"https://127.0.0.1:{ports['api']}/healthz", verify=trusting(other.ca), timeout=5)
    assert balancer.alive() and bot.alive(), balancer.log()[-2000:]


def _sections(text: str) -> dict[str, list[str]]:
    """A HAProxy file's sections (``defaults``, ``backend gameservers``, ...) -> their lines,
    comments and blank lines left out."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            current = line.strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line.strip())
    return sections


def test_the_tls_config_keeps_the_plain_configs_balancing_checks_and_timeouts() -> None:
    """haproxy-tls.cfg is haproxy.cfg with TLS on its binds and an API frontend: every section of
    the plain file is in it, the same line for line but for the gRPC bind (a change to one file's
    checks or timeouts that the other misses fails here)."""
    plain = _sections((ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text())
    tls = _sections(HAPROXY_TLS_CFG.read_text())
    for name, lines in plain.items():
        assert name in tls, f"haproxy-tls.cfg has no `{name}` section"
        if name == "global":  # the TLS file adds its TLS defaults
            assert set(lines) <= set(tls[name]), name
            continue
        theirs = [line for line in tls[name] if not line.startswith("bind :50051")]
        ours = [line for line in lines if not line.startswith("bind :50051")]
        assert ours == theirs, f"`{name}` differs between haproxy.cfg and haproxy-tls.cfg"
    assert "bind :50051 ssl crt" in HAPROXY_TLS_CFG.read_text() and "alpn h2" in HAPROXY_TLS_CFG.read_text()
    assert {"frontend api", "backend apis"} <= set(tls)
