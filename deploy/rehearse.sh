#!/usr/bin/env bash
# Rehearse the scaled-out arena of docker-compose.yml on this machine, as real processes:
# PostgreSQL, Redis, two game servers behind HAProxy, three workers, a practice worker, beat,
# the API, Prometheus and eight SDK bots. Prints what it saw and exits 1 if anything is wrong.
# Needs ./install.sh's system packages (postgresql, haproxy, prometheus; nftables for --nemesis).
# docs/deployment.md, "Rehearse it on one machine".
#
#   deploy/rehearse.sh [--workdir DIR] [--base-port N] [--keep]
#       on 127.0.0.1: a tournament through two failovers (SIGTERM, then kill -9 of a game server)
#   deploy/rehearse.sh --nemesis [--short] [--workdir DIR] [--base-port N] [--keep]     # as root
#       on four hosts (network namespaces: edge, compute, data, bots), one tournament through
#       the nemesis (deploy/nemesis.py): a hung game server, a partition, packet loss, a killed
#       worker, Redis and PostgreSQL restarts, a rolling restart; --short is CI's schedule
#
# --workdir: logs of every part in DIR/logs; --base-port: ports N, N+1, ... instead of free ones;
# --keep: after the report everything stays up (namespaces too) until Ctrl-C, then is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
exec "$PYTHON" deploy/rehearsal.py "$@"
