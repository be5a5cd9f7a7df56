"""How every part of the arena finds its Redis (``atout_arena.core.embedded_redis.find_redis_url``): the
configured one, else the embedded one of the data dir when it runs, else a new one."""

from __future__ import annotations

import tempfile
from pathlib import Path

import redis

from atout_arena.core.embedded_redis import find_redis_url
from atout_arena.core.settings import Settings


def test_a_configured_redis_is_used_as_is(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, redis_url="redis://127.0.0.1:1/0")
    assert find_redis_url(settings) == ("redis://127.0.0.1:1/0", None)
    assert find_redis_url(settings, start=False) == ("redis://127.0.0.1:1/0", None)


def test_the_embedded_redis_of_the_data_dir_is_shared_then_started_when_none_runs() -> None:
    with tempfile.TemporaryDirectory(prefix="atout-r-") as short:  # a unix socket path is short
        data_dir = Path(short)
        settings = Settings(data_dir=data_dir)
        assert find_redis_url(settings, start=False) == (None, None)  # none runs, none started
        url, started = find_redis_url(settings)
        assert started is not None and url == started.url
        try:
            assert redis.Redis.from_url(url).ping()
            # another part (the API, a worker, the CLI) finds the same one and starts nothing
            assert find_redis_url(settings) == (url, None)
            assert find_redis_url(settings, start=False) == (url, None)
        finally:
            started.stop()
        # a socket left behind by a stopped server: not found, a new one is started
        (data_dir / "redis" / "redis.sock").touch()
        assert find_redis_url(settings, start=False) == (None, None)
        url, again = find_redis_url(settings)
        assert again is not None
        again.stop()

