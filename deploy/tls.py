"""A private certificate authority for an arena, made with ``openssl`` (no Python package).

>>> paths = make_ca(Path("certs"), hosts=["arena.example.org", "10.0.0.5"])   # doctest: +SKIP
>>> paths.ca, paths.cert, paths.key, paths.combined                           # doctest: +SKIP

Writes into ``directory``:

- ``ca.pem`` / ``ca.key``: the CA's certificate (give it to the bots: ``atout-bot run --tls --ca
  ca.pem``, ``node bot.js --tls --ca ca.pem``, ``ATOUT_CA_FILE=ca.pem`` for the organizer's
  commands) and its key (keep it off the arena's machines);
- ``server.pem`` / ``server.key``: the arena's certificate, valid for ``hosts`` (host names and
  IP addresses, each a subjectAltName), signed by the CA: ``ATOUT_TLS_CERT`` / ``ATOUT_TLS_KEY``
  of a game server or an API;
- ``server-combined.pem``: certificate then key in one file, what HAProxy's ``crt`` takes.

Used by the tests (tests/tls_helpers.py) and meant for the multi-host rehearsal; an operator
with a CA of their own does the same with it (docs/deployment.md). Run as a script:
``python deploy/tls.py DIR [HOST ...]``.
"""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOSTS = ("127.0.0.1", "localhost")
DAYS = 825  # the longest validity that clients (browsers, macOS) accept for a server certificate


@dataclass(frozen=True)
class CertificatePaths:
    """The files :func:`make_ca` wrote."""

    ca: Path  # the CA's certificate (PEM): what a client trusts
    ca_key: Path
    cert: Path  # the server's certificate (PEM)
    key: Path  # the server's private key (PEM, unencrypted)
    combined: Path  # cert then key, for HAProxy's `crt`


def subject_alt_names(hosts: list[str] | tuple[str, ...]) -> str:
    """``["localhost", "127.0.0.1"]`` -> ``"DNS:localhost,IP:127.0.0.1"``."""
    names = []
    for host in hosts:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            names.append(f"DNS:{host}")
        else:
            names.append(f"IP:{host}")
    if not names:
        raise ValueError("a server certificate needs at least one host name or IP address")
    return ",".join(names)


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {' '.join(done.stderr.split())[:500]}")


def make_ca(directory: Path | str, hosts: list[str] | tuple[str, ...] = DEFAULT_HOSTS,
            name: str = "Atout test CA") -> CertificatePaths:
    """Make a CA and a server certificate for ``hosts`` signed by it, in ``directory`` (made if
    needed; files of the same names are replaced). EC P-256 keys; the server certificate
    carries ``serverAuth`` and every host as a subjectAltName (a client checks the name it
    dialled against these, never against the CN)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = CertificatePaths(out / "ca.pem", out / "ca.key", out / "server.pem", out / "server.key",
                             out / "server-combined.pem")
    san = subject_alt_names(hosts)
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *curve, "-keyout", str(paths.ca_key), "-out", str(paths.ca),
             "-days", str(DAYS), "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    request = out / "server.csr"
    _openssl("req", "-new", *curve, "-keyout", str(paths.key), "-out", str(request),
             "-subj", f"/CN={hosts[0]}")
    extensions = out / "server.ext"
    extensions.write_text(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\n"
                          "keyUsage=critical,digitalSignature,keyEncipherment\n"
                          "extendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", str(request), "-CA", str(paths.ca), "-CAkey", str(paths.ca_key),
             "-CAcreateserial", "-out", str(paths.cert), "-days", str(DAYS), "-sha256",
             "-extfile", str(extensions))
    for scratch in (request, extensions, out / "ca.srl"):
        scratch.unlink(missing_ok=True)
    for key in (paths.ca_key, paths.key):
        key.chmod(0o600)
    paths.combined.write_text(paths.cert.read_text() + paths.key.read_text())
    paths.combined.chmod(0o600)
    return paths


HAPROXY_CERTIFICATE = "/usr/local/etc/haproxy/certs/arena.pem"  # haproxy-tls.cfg's `crt`
HAPROXY_API_SERVER = "server api api:8000 "  # haproxy-tls.cfg's API line (Docker's DNS)


def haproxy_tls_config(text: str, certificate: Path | str, bind_host: str, api_port: int,
                       apis: dict[str, tuple[str, int]]) -> str:
    """deploy/haproxy/haproxy-tls.cfg off Docker, once ``rehearsal.haproxy_config`` has made
    its gRPC side (binds, game servers, no resolvers): ``crt`` is ``certificate`` (the combined
    PEM, :attr:`CertificatePaths.combined`), ``bind :8443`` binds ``bind_host:api_port``, and the
    API's line becomes one ``server`` per API (name -> host, port), checked as the template's."""
    if HAPROXY_CERTIFICATE not in text or "bind :8443" not in text or HAPROXY_API_SERVER not in text:
        raise ValueError(f"haproxy-tls.cfg: expected `crt {HAPROXY_CERTIFICATE}`, `bind :8443` and "
                         f"`{HAPROXY_API_SERVER.strip()} ...`")
    out = []
    for line in text.replace(HAPROXY_CERTIFICATE, str(certificate)).splitlines():
        if line.strip().startswith(HAPROXY_API_SERVER):
            indent = line[: len(line) - len(line.lstrip())]
            out += [f"{indent}server {name} {host}:{port} check inter 2s"
                    for name, (host, port) in apis.items()]
            continue
        out.append(line.replace("bind :8443", f"bind {bind_host}:{api_port}"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} DIR [HOST ...]  (default hosts: {' '.join(DEFAULT_HOSTS)})")
    made = make_ca(Path(sys.argv[1]), sys.argv[2:] or DEFAULT_HOSTS)
    print(f"CA {made.ca}; server certificate {made.cert}, key {made.key}; for HAProxy {made.combined}")
