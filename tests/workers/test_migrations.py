"""``alembic upgrade head`` on an empty database gives exactly the schema of the models."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from atout_arena.core.db import create_all, make_engine
from atout_arena.core.models import Base
from atout_arena.migrations import upgrade


def _schema(url: str) -> dict:
    engine = make_engine(url)
    inspector = inspect(engine)
    schema = {}
    for table in inspector.get_table_names():
        if table == "alembic_version":
            continue
        schema[table] = {
            "columns": {(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)},
            "pk": tuple(inspector.get_pk_constraint(table)["constrained_columns"]),
            "indexes": {(i["name"], tuple(i["column_names"]), bool(i["unique"]))
                        for i in inspector.get_indexes(table)},
            "unique": {tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)},
            "fks": {(tuple(f["constrained_columns"]), f["referred_table"])
                    for f in inspector.get_foreign_keys(table)},
        }
    engine.dispose()
    return schema


def test_upgrade_head_gives_the_models_schema(tmp_path: Path) -> None:
    migrated = f"sqlite:///{tmp_path / 'migrated.db'}"
    upgrade(migrated)
    engine = make_engine(migrated)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert diff == [], f"the migrations and the models differ (write a new migration): {diff}"

    created = f"sqlite:///{tmp_path / 'created.db'}"
    create_all(make_engine(created))
    assert _schema(migrated) == _schema(created)
    assert {"bots", "tournaments", "leagues", "matches", "match_seats", "ratings", "rating_history",
            "tournament_ratings", "tournament_entries", "league_members"} <= set(_schema(migrated))


def test_the_api_queries_are_indexed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'migrated.db'}"
    upgrade(url)
    indexed = {table: {cols[0] for _, cols, _ in spec["indexes"]} | {spec["pk"][0]}
               for table, spec in _schema(url).items()}
    assert "tournament_id" in indexed["matches"]  # matches by tournament
    assert "status" in indexed["matches"]  # matches by status (the sweeper)
    assert "bot_id" in indexed["match_seats"]  # matches by bot
    assert "game" in indexed["ratings"]  # ratings by game


def test_upgrade_head_on_postgresql_matches_the_models(postgres_url: str) -> None:
    url = postgres_url  # an empty database: everything in it is dropped
    engine = make_engine(url)
    with engine.begin() as connection:
        Base.metadata.drop_all(connection)
        connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    upgrade(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert diff == []


def _insert_an_old_match(engine, game: str) -> None:
    """Match 1, finished, as an arena of revision 0001 stored it (no rules_version column)."""
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO matches (id, number, deal_group, rotation, game, options, seed, move_ms, "
            "time_bank_ms, max_faults, status, attempts, created_at) VALUES "
            f"(1, 0, 0, 0, '{game}', '{{}}', 7, 1000, 0, 3, 'finished', 1, '2026-11-30 12:00:00')"
        ))


def test_matches_stored_before_rules_versions_are_version_1(tmp_path: Path) -> None:
    """Revision 0002 adds ``matches.rules_version``: a match stored under 0001 reads as played
    under version 1 of its rules (what every arena before the second reading of RULES.md ran)."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001")
    engine = make_engine(url)
    _insert_an_old_match(engine, "tiercon")
    engine.dispose()
    upgrade(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT rules_version FROM matches WHERE id = 1")).scalar() == 1
    engine.dispose()


def test_an_older_embedded_database_gets_the_new_columns(tmp_path: Path) -> None:
    """A SQLite file made by an older arena (``create_all``, no Alembic) keeps working: the arena
    adds ``matches.rules_version`` (old matches: version 1) when it opens it."""
    url = f"sqlite:///{tmp_path / 'var.db'}"
    upgrade(url, "0001")  # the schema an older arena made
    engine = make_engine(url)
    _insert_an_old_match(engine, "regicide")
    create_all(engine)
    create_all(engine)  # twice: nothing left to add
    with engine.connect() as connection:
        assert connection.execute(text("SELECT rules_version FROM matches WHERE id = 1")).scalar() == 1
    engine.dispose()


def test_the_lease_column_keeps_its_values_whichever_way_the_database_is_upgraded(tmp_path: Path) -> None:
    """Revision 0010 renames ``matches.runner`` (a running match's lease id) to ``lease_id``: by
    Alembic, and by ``create_all`` for a SQLite file an older arena made without Alembic."""
    for way in ("alembic", "create_all"):
        url = f"sqlite:///{tmp_path / f'{way}.db'}"
        upgrade(url, "0009")
        engine = make_engine(url)
        _insert_an_old_match(engine, "fool")
        with engine.begin() as connection:
            connection.execute(text("UPDATE matches SET status = 'running', runner = 'host:7:ab' "
                                    "WHERE id = 1"))
        if way == "alembic":
            engine.dispose()
            upgrade(url)
            engine = make_engine(url)
        else:
            create_all(engine)
            create_all(engine)  # twice: nothing left to rename
        with engine.connect() as connection:
            lease = connection.execute(text("SELECT lease_id FROM matches WHERE id = 1")).scalar()
            assert lease == "host:7:ab", way
            columns = {row[1] for row in connection.execute(text("PRAGMA table_info(matches)"))}
        assert "lease_id" in columns and "runner" not in columns, way
        engine.dispose()
