"""ATOUT_REDIS_URL: plain RESP only (the pipelined connections of core/wire.py), said at once."""

from __future__ import annotations

import pytest

from atout_arena.core.settings import Settings, SettingsError
from atout_arena.core.wire import Wire


@pytest.mark.parametrize("url", ["redis://localhost:6379/0", "redis://:secret@h:1/2", "unix:///tmp/r.sock?db=3"])
def test_plain_redis_urls_are_accepted(url: str) -> None:
    assert Settings(redis_url=url).redis_url == url
    Wire(url)  # (connects only when used)


def test_tls_and_unknown_schemes_are_refused_with_what_to_use() -> None:
    for url in ("rediss://h:6380/0", "http://h:6379"):
        with pytest.raises(SettingsError, match=r"ATOUT_REDIS_URL=.*rediss:// is not supported"):
            Settings(redis_url=url)
    with pytest.raises(ValueError, match="not TLS"):
        Wire("rediss://h:6380/0")
