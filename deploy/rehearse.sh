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
#       on four hosts (network namespaces: edge, compute, data, bots), set up as the three-machine
#       guide says (TLS with a CA made by openssl, Redis with a password, a replica and three
#       sentinels, two APIs), one tournament through the nemesis (deploy/nemesis.py): a hung game
#       server, a partition, packet loss, a killed worker, the Redis primary killed (failover), an
#       API killed, a PostgreSQL restart, a rolling restart; then a backup restored and verified
#       by replay; --short is CI's schedule
#
# --workdir: logs of every part in DIR/logs; --base-port: ports N, N+1, ... instead of free ones;
# --keep: after the report everything stays up (namespaces too) until Ctrl-C, then is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
exec "$PYTHON" deploy/rehearsal.py "$@"
