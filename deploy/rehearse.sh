#!/usr/bin/env bash
# Rehearse the scaled-out arena of docker-compose.yml on this machine, as real processes on
# 127.0.0.1: PostgreSQL, Redis, two game servers behind HAProxy, three workers, a practice
# worker, beat, the API, Prometheus and eight SDK bots; a tournament through two failovers
# (SIGTERM, then kill -9 of a game server). Prints what it saw and exits 1 if anything is wrong.
# Needs ./install.sh's system packages (postgresql, haproxy, prometheus). docs/deployment.md.
#
#   deploy/rehearse.sh [--workdir DIR]      # logs of every part in DIR/logs
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
exec "$PYTHON" deploy/rehearsal.py "$@"
