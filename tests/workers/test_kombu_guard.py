"""kombu's Redis channel asked for connection parameters after its connection broke raises a
Redis ConnectionError (Celery ignores it while it reconnects), not the AttributeError that
shut a worker down in the nemesis rehearsal (``celery_app.guard_kombu_reconnect``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

from atout_workers import celery_app


def test_a_channel_whose_connection_is_gone_raises_a_connection_error() -> None:
    celery_app.guard_kombu_reconnect()  # (idempotent: already done on import)
    broken = SimpleNamespace(connection=SimpleNamespace(client=None))
    with pytest.raises(RedisConnectionError):
        getattr(kombu_redis.Channel, "_connparams")(broken)  # noqa: B009
    # an error kombu's own connection errors include: Celery's ignore_errors passes it over
    assert issubclass(RedisConnectionError, kombu_redis.Transport.connection_errors)
