"""TLS for tests: deploy/tls.py's private CA (made with ``openssl``), importable from tests/.

``make_ca(directory, hosts=("127.0.0.1", "localhost"))`` -> ``CertificatePaths`` (``ca``,
``cert``, ``key``, ``combined``); ``haproxy_tls_config`` makes deploy/haproxy/haproxy-tls.cfg
loopback. ``tls_env(paths)``: the settings of a game server or an API that serves TLS."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "deploy") not in sys.path:
    sys.path.insert(0, str(ROOT / "deploy"))  # deploy/ is not a package: its scripts import each other

from tls import CertificatePaths, haproxy_tls_config, make_ca  # noqa: E402

__all__ = ["CertificatePaths", "haproxy_tls_config", "make_ca", "tls_env"]


def tls_env(paths: CertificatePaths) -> dict[str, str]:
    """``ATOUT_TLS_CERT`` and ``ATOUT_TLS_KEY`` of ``paths``."""
    return {"ATOUT_TLS_CERT": str(paths.cert), "ATOUT_TLS_KEY": str(paths.key)}
