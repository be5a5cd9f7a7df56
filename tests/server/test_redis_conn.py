"""core/redis_conn.py: one ATOUT_REDIS_URL, every kind of client (no server needed here; the
real servers are tests/server/test_redis_auth.py, test_redis_tls.py and
tests/workers/test_redis_sentinel.py)."""

from __future__ import annotations

import ssl

import pytest
from redis.sentinel import SentinelConnectionPool

from atout_arena.core import redis_conn
from atout_arena.core.redis_conn import celery_config, mask, parse, sync_client, wire_options


def test_plain_tcp_with_an_acl_user() -> None:
    target = parse("redis://arena:s%40cret@db.example:6390/3")
    assert (target.host, target.port, target.db) == ("db.example", 6390, 3)
    assert (target.username, target.password) == ("arena", "s@cret")
    assert not target.tls and not target.sentinel
    assert "s@cret" not in repr(target) and "s%40cret" not in repr(target)


def test_a_password_alone_and_a_unix_socket() -> None:
    assert parse("redis://:pw@h:1/0").password == "pw"
    assert parse("redis://:pw@h:1/0").username is None
    unix = parse("unix:///tmp/r.sock?db=2")
    assert (unix.path, unix.db) == ("/tmp/r.sock", 2)


def test_sentinel_urls_give_the_sentinels_the_masters_credentials_unless_told() -> None:
    target = parse("redis+sentinel://u:pw@s1:26379,s2,[::1]:26381/mymaster/2")
    assert target.sentinels == (("s1", 26379), ("s2", 26379), ("::1", 26381))
    assert (target.master_name, target.db) == ("mymaster", 2)
    assert (target.sentinel_username, target.sentinel_password) == ("u", "pw")
    own = parse("redis+sentinel://u:pw@s1/m?sentinel_password=other")
    assert (own.sentinel_username, own.sentinel_password) == (None, "other")
    none = parse("redis+sentinel://:pw@s1/m?sentinel_password=")
    assert none.sentinel_password is None and none.password == "pw"
    with pytest.raises(ValueError, match="MASTER_NAME"):
        parse("redis+sentinel://:pw@s1:26379")


def test_masked_urls_hide_every_password() -> None:
    assert mask("redis://u:pw@h:1/0") == "redis://u:***@h:1/0"
    assert mask("redis://:pw@h:1/0") == "redis://:***@h:1/0"
    assert mask("redis+sentinel://:pw@a,b/m?sentinel_password=x&db=1") == \
        "redis+sentinel://:***@a,b/m?sentinel_password=***&db=1"
    assert mask("redis://h:1/0") == "redis://h:1/0"
    with pytest.raises(ValueError) as caught:
        parse("http://:hunter2@h")
    assert "hunter2" not in str(caught.value)


def test_tls_options_for_redis_py_and_for_the_wire(tmp_path) -> None:
    target = parse("rediss://h:6380/0?ssl_cert_reqs=none&ssl_check_hostname=false")
    assert target.ssl_kwargs() == {"ssl": True, "ssl_cert_reqs": "none", "ssl_check_hostname": False}
    options = wire_options(target)
    assert isinstance(options["ssl"], ssl.SSLContext)
    assert options["ssl"].verify_mode == ssl.CERT_NONE and not options["ssl"].check_hostname
    assert "ssl" not in wire_options("redis://h:1/0")
    assert wire_options("rediss://h:6380/0")["ssl"].verify_mode == ssl.CERT_REQUIRED


def test_a_sentinel_client_is_managed_by_the_sentinels() -> None:
    client = sync_client("redis+sentinel://:pw@127.0.0.1:1,127.0.0.1:2/mymaster/4", socket_timeout=1)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "mymaster"
    assert pool.connection_kwargs["db"] == 4 and pool.connection_kwargs["password"] == "pw"
    sentinel = pool.sentinel_manager.sentinels[0]
    assert sentinel.connection_pool.connection_kwargs["password"] == "pw"
    options = wire_options("redis+sentinel://:pw@127.0.0.1:1,127.0.0.1:2/mymaster/4")
    assert options["sentinels"] == [("127.0.0.1", 1), ("127.0.0.1", 2)]
    assert options["master_name"] == "mymaster"


def test_celery_gets_kombus_sentinel_transport_and_backend() -> None:
    conf = celery_config("redis+sentinel://u:p%40w@s1:26379,s2:26380/mymaster/1", {"visibility_timeout": 60})
    assert conf["broker_url"] == "sentinel://u:p%40w@s1:26379/1;sentinel://u:p%40w@s2:26380/1"
    assert conf["result_backend"] == conf["broker_url"]
    for options in (conf["broker_transport_options"], conf["result_backend_transport_options"]):
        assert options["master_name"] == "mymaster" and options["visibility_timeout"] == 60
        assert options["sentinel_kwargs"] == {"password": "p@w", "username": "u"}
    plain = celery_config("redis://:pw@h:6379/2")
    assert plain["broker_url"] == "redis://:pw@h:6379/2" and "broker_use_ssl" not in plain
    tls = celery_config("rediss://h:6380/0?ssl_ca_certs=/ca.pem")
    assert tls["broker_url"] == "rediss://h:6380/0"
    assert tls["broker_use_ssl"] == {"ssl_ca_certs": "/ca.pem", "ssl_cert_reqs": "required"}
    assert celery_config("unix:///tmp/r.sock")["broker_url"] == "redis+socket:///tmp/r.sock"


def test_a_celery_app_on_sentinel_builds_its_broker_and_backend() -> None:
    from atout_arena.core.settings import Settings
    from atout_arena.core.tasks import make_celery

    app = make_celery(Settings(redis_url="redis+sentinel://:pw@127.0.0.1:1/mymaster/0"))
    assert app.connection_for_write().transport_cls == "sentinel"
    assert type(app.backend).__name__ == "SentinelBackend"
    assert "pw" not in app.connection_for_write().as_uri()


def test_refused_words_cover_redis_replies() -> None:
    assert any(word in "WRONGPASS invalid username-password pair" for word in redis_conn.REFUSED)
