"""Health and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response, status
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from sqlalchemy import text

from atout_arena.api.deps import ArenaDep
from atout_arena.api.schemas import Health
from atout_arena.core.metrics import leader_gauge, metrics_registry
from atout_arena.core.tasks import QUEUES

router = APIRouter(tags=["system"])


@router.get(
    "/healthz", response_model=Health, responses={503: {"model": Health, "description": "a part is down"}}
)
def healthz(arena: ArenaDep, response: Response) -> Health:
    """Whether the API reaches its database and its Redis (503 when one is down)."""
    database = redis_state = "ok"
    try:
        with arena.sessions() as session:
            session.execute(text("SELECT 1"))
    except Exception as exc:  # reported, not raised: this is what a health check is for
        database = f"error: {type(exc).__name__}: {exc}"[:300]
    try:
        arena.redis.ping()
    except Exception as exc:
        redis_state = f"error: {type(exc).__name__}: {exc}"[:300]
    healthy = database == redis_state == "ok"
    if not healthy:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    return Health(status="ok" if healthy else "degraded", database=database, redis=redis_state)


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus text format"}},
)
def metrics(arena: ArenaDep) -> Response:
    """The arena's Prometheus metrics (every worker's and game server's counts, kept in Redis):
    ``atout_decision_seconds``, ``atout_matches_total``, ``atout_match_seconds``,
    ``atout_faults_total``, ``atout_rating``, ``atout_bots_connected``, ``atout_queue_depth``;
    and the ladders' (from the database): ``atout_ladder_matches_total``,
    ``atout_ladder_matches_in_flight``, ``atout_ladder_mu``, ``atout_ladder_sigma``.

    While the database is unavailable, the ladders' are left out and
    ``atout_collector_errors_total{collector="ladders"}`` counts the scrapes without them: what
    Redis counts is always served (a 503 only when Redis itself is unavailable).

    With several APIs, only the one holding the metrics lease serves these arena-wide series
    (``atout_metrics_leader`` is 1 there, 0 on the others): scrape every API, a ``sum()`` over
    them counts everything once. Every API serves its own ``atout_metrics_leader`` and
    ``atout_collector_errors_total``."""
    leads = arena.serves_arena_metrics()
    if leads:
        registry = metrics_registry(arena.redis, QUEUES)
        registry.register(arena.database_metrics)
    else:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(arena.database_metrics.errors_only())
    registry.register(leader_gauge(leads))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
