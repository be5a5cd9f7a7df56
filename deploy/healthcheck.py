"""Container health checks of the arena image (``docker-compose.yml``, ``Dockerfile``).

    python deploy/healthcheck.py api [--url http://127.0.0.1:8000/healthz]
    python deploy/healthcheck.py gameserver [--address 127.0.0.1:50051]
    python deploy/healthcheck.py worker
    python deploy/healthcheck.py beat

Exit 0 when the part is healthy, 1 (with the reason on stderr) when not.

- ``api``: ``GET /healthz`` answers 200 (the API reaches its database and Redis).
- ``gameserver``: the standard gRPC health service answers SERVING; the port is the one of
  ``ATOUT_GRPC_ADDRESS`` (a game server turns NOT_SERVING as it shuts down).
- ``worker``: this container's Celery node (``celery@<hostname>``, the default name) answers
  a ping through the broker.
- ``beat``: beat has nothing to ask; its Redis (``ATOUT_REDIS_URL``) answers PING.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import urllib.error
import urllib.request

TIMEOUT_S = 5.0


def check_api(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            if response.status == 200:
                return None
            return f"{url}: HTTP {response.status}"
    except urllib.error.HTTPError as exc:  # 503: a part is down; the body says which
        return f"{url}: HTTP {exc.code} {exc.read()[:300]!r}"
    except OSError as exc:
        return f"{url}: {exc}"


def check_gameserver(address: str) -> str | None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_S)
        except grpc.RpcError as exc:
            return f"{address}: {exc.code().name} {exc.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"{address}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def check_worker() -> str | None:
    from atout_arena.core.settings import Settings
    from atout_arena.core.tasks import make_celery

    app = make_celery(Settings.from_env())
    node = f"celery@{socket.gethostname()}"
    replies = app.control.ping(destination=[node], timeout=TIMEOUT_S)
    if not any(node in reply for reply in replies):
        return f"{node}: no answer to a ping within {TIMEOUT_S} s"
    return None


def check_redis() -> str | None:
    import redis

    url = os.environ.get("ATOUT_REDIS_URL", "").strip()
    if not url:
        return "ATOUT_REDIS_URL is not set"
    from atout_arena.core.redis_conn import mask, sync_client

    try:
        sync_client(url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S).ping()
    except (redis.RedisError, OSError, ValueError) as exc:
        return f"{mask(url)}: {exc}"
    return None


def _local_grpc_address() -> str:
    address = os.environ.get("ATOUT_GRPC_ADDRESS", "").strip() or "127.0.0.1:50051"
    return f"127.0.0.1:{address.rsplit(':', 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="healthcheck", description="Health check of one arena part.")
    parser.add_argument("part", choices=("api", "gameserver", "worker", "beat"))
    parser.add_argument("--url", default="http://127.0.0.1:8000/healthz", help="api: the /healthz URL")
    parser.add_argument("--address", help="gameserver: HOST:PORT (default: the port of ATOUT_GRPC_ADDRESS)")
    args = parser.parse_args(argv)
    if args.part == "api":
        problem = check_api(args.url)
    elif args.part == "gameserver":
        problem = check_gameserver(args.address or _local_grpc_address())
    elif args.part == "worker":
        problem = check_worker()
    else:
        problem = check_redis()
    if problem:
        print(f"unhealthy {args.part}: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
