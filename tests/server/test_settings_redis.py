"""ATOUT_REDIS_URL: every form of core/redis_conn.py is accepted, anything else said at once in
one line, its password masked."""

from __future__ import annotations

import pytest

from atout_arena.core.settings import Settings, SettingsError
from atout_arena.core.wire import Wire


@pytest.mark.parametrize("url", [
    "redis://localhost:6379/0", "redis://:secret@h:1/2", "unix:///tmp/r.sock?db=3",
    "rediss://u:p@h:6380/0?ssl_cert_reqs=none", "redis+sentinel://:p@h1:26379,h2:26380/mymaster/1",
    "rediss+sentinel://h1/mymaster"])
def test_every_redis_url_form_is_accepted(url: str) -> None:
    assert Settings(redis_url=url).redis_url == url
    Wire(url)  # (connects only when used)


def test_unknown_schemes_are_refused_in_one_line_without_the_password() -> None:
    for url in ("http://:hunter2@h:6379", "redis+sentinel://:hunter2@h1:26379"):
        with pytest.raises(SettingsError, match=r"ATOUT_REDIS_URL=.*\*\*\*") as caught:
            Settings(redis_url=url)
        assert "hunter2" not in str(caught.value) and "\n" not in str(caught.value)
