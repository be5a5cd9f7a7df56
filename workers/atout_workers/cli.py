"""The workers' commands, run as ``atout-arena worker`` / ``atout-arena beat`` (which start
``python -m atout_workers ...``: the arena's own command never imports the workers' code).

    atout-arena worker [--concurrency N] [--hostname H]   a Celery worker: matches, practice, control
    atout-arena worker --practice [--concurrency N]       a worker for practice matches alone
    atout-arena beat                                       Celery beat: the sweeper, league seasons
                                                           (several: one sends, the others stand by)

A bad ``ATOUT_*`` value is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from atout_arena.core.embedded_redis import find_redis_url
from atout_arena.core.redis_conn import refusal as redis_refusal
from atout_arena.core.redis_conn import sync_client
from atout_arena.core.settings import Settings, SettingsError
from atout_arena.core.tasks import MATCH_QUEUE, PRACTICE_QUEUE, QUEUES
from atout_workers.celery_app import create_app, quiet_broker_outages
from atout_workers.world import CELERY_THREADS

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def root_note(accept_content: list[str]) -> str | None:
    """Celery's many-line ``SecurityWarning`` for a worker run as root, as one line of ours
    (and the warning silenced), when the worker takes JSON only: the risk Celery names (a
    pickled task running code as root) does not exist then. None when not root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    if any("pickle" in kind or "python-serialize" in kind for kind in accept_content):
        return None  # Celery refuses to run (SecurityError): let it say why
    from celery.exceptions import SecurityWarning

    warnings.filterwarnings("ignore", category=SecurityWarning)
    return ("worker: running as root (it accepts JSON tasks only); "
            "an unprivileged user is still better outside a container")


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    url, embedded = find_redis_url(settings, start=True)
    assert url is not None
    if embedded is not None:
        print(f"embedded Redis at {url} (set ATOUT_REDIS_URL to share it)", flush=True)
    queues: tuple[str, ...]
    if args.practice:  # capacity kept for practice matches: tournaments never take it
        queues, concurrency = (PRACTICE_QUEUE,), args.concurrency or settings.practice_concurrency
    else:
        queues, concurrency = QUEUES, args.concurrency or settings.worker_concurrency
    settings = settings.replace(redis_url=url, worker_concurrency=concurrency)
    refusal = contract_refusal_of(url)
    if refusal is not None:
        print(f"error: {refusal}", file=sys.stderr)
        if embedded is not None:
            embedded.stop()
        return EXIT_USAGE
    # the process's world (its event loop's room) is built from the environment on first use
    os.environ["ATOUT_WORKER_CONCURRENCY"] = str(concurrency)
    app = create_app(settings)
    quiet_broker_outages()  # a Redis outage: two lines, not one per reconnection attempt
    note = root_note(list(app.conf.accept_content))
    if note is not None:
        print(note, file=sys.stderr, flush=True)
    # no mingle/gossip: workers share nothing but the broker and the database (faster start)
    # the pool's threads only claim matches: the event loop plays up to `concurrency` of them
    argv = ["worker", "--pool", "threads", "--loglevel", args.loglevel, "-Q", ",".join(queues),
            "--concurrency", str(min(concurrency, CELERY_THREADS)), "--without-mingle", "--without-gossip"]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    try:
        app.worker_main(argv)
    finally:
        if embedded is not None:
            embedded.stop()
    return EXIT_OK


def contract_refusal_of(redis_url: str) -> str | None:
    """Why this worker may not start on the Redis at ``redis_url`` (a part of another contract
    version is live there), or None. It registers as the keeper will (one process id)."""
    import redis

    from atout_arena.core.relay import ContractMismatch, check_contract
    from atout_workers.keeper import contract_part

    client = sync_client(redis_url, socket_timeout=10, socket_connect_timeout=5)
    try:
        check_contract(client, contract_part())
    except ContractMismatch as exc:
        return str(exc)
    except redis.RedisError as exc:  # Redis away: the keeper registers it once it is back
        print(f"worker: could not check the Redis contract's version now ({exc})", file=sys.stderr)
    finally:
        client.close()
    return None


def cmd_beat(args: argparse.Namespace, settings: Settings) -> int:
    url, _ = find_redis_url(settings, start=False)
    if url is None:
        print("error: no Redis: set ATOUT_REDIS_URL (or start `atout-arena worker` first)", file=sys.stderr)
        return EXIT_FAIL
    app = create_app(settings.replace(redis_url=url))
    schedule = Path(settings.data_dir) / "celerybeat-schedule"
    schedule.parent.mkdir(parents=True, exist_ok=True)
    # its scheduler sends only while it holds the beat lease (a second beat stands by), and
    # says a Redis outage in two lines, not a traceback per due task
    app.start(["beat", "--loglevel", args.loglevel, "--schedule", str(schedule),
               "--scheduler", "atout_workers.beat:LeaderScheduler"])
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="atout-arena", description="The Atout arena's workers.")
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker", help="run a Celery worker that plays matches")
    worker.add_argument("--practice", action="store_true",
                        help=f"play practice matches alone (queue {PRACTICE_QUEUE}), not {MATCH_QUEUE}")
    worker.add_argument("--concurrency", type=int,
                        help="matches in flight (default ATOUT_WORKER_CONCURRENCY, "
                             "with --practice ATOUT_PRACTICE_CONCURRENCY)")
    worker.add_argument("--loglevel", default="info")
    worker.add_argument("--hostname", help="Celery node name (default celery@<host>)")
    worker.set_defaults(func=cmd_worker)
    beat = commands.add_parser("beat", help="run Celery beat: the sweeper and league seasons")
    beat.add_argument("--loglevel", default="info")
    beat.set_defaults(func=cmd_beat)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "worker" and args.concurrency is not None and args.concurrency < 1:
        print("error: --concurrency must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problem = redis_refusal(settings.redis_url) if settings.redis_url else None
    if problem is not None:  # a wrong password: one line, not a retry loop
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    return int(args.func(args, settings))
