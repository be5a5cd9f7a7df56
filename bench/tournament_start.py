"""What creating the largest tournament with ``start: true`` costs, before and after issue 32's
finding 14, both ways interleaved in one process (so under the same load).

    python bench/tournament_start.py [--runs 3]

64 bots x 59 games per pairing at 4-player merde tables: 19,904 matches. On a SQLite database
and an embedded Redis (the broker), through the arena's own services and task sender:

- ``start: false``: :func:`~atout_arena.services.tournaments.create_tournament` alone;
- ``before``: create, then :func:`~atout_arena.services.tournaments.start_tournament` (an
  update of every match, ``queued``) and every task sent (2,488, one broker round trip each);
- ``after``: :func:`~atout_arena.services.tournaments.create_started` (stored running and
  queued in one transaction) and the first wave sent
  (:data:`~atout_arena.api.routes.tournaments.FIRST_WAVE` matches), as the API does before its
  answer (the rest, sent just after it, is not timed).

Prints each run and the medians (wall time: the API's answer is what is timed).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from atout_arena.api.routes.tournaments import FIRST_WAVE
from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.embedded_redis import EmbeddedRedis
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.services.bots import BotRegistry
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.tournaments import create_started, create_tournament, start_tournament


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as redis_server:
        database_url = f"sqlite:///{tmp}/bench.db"
        engine = make_engine(database_url)
        create_all(engine)
        sessions = make_session_factory(engine)
        registry = BotRegistry(sessions)
        names = [registry.add(f"bench-{i}")[0].name for i in range(64)]
        tasks = Tasks.for_settings(Settings(database_url=database_url, redis_url=redis_server.url))
        spec = CompetitionSpec.of(game="merde", players=4, games_per_pairing=59)
        unstarted: list[float] = []
        before: list[float] = []
        after: list[float] = []
        for run in range(args.runs):
            started = time.perf_counter()
            create_tournament(sessions, name=f"unstarted-{run}", bots=names, spec=spec)
            unstarted.append(time.perf_counter() - started)
            started = time.perf_counter()
            tasks.play_matches(start_tournament(sessions, create_tournament(
                sessions, name=f"before-{run}", bots=names, spec=spec)))
            before.append(time.perf_counter() - started)
            started = time.perf_counter()
            _, match_ids = create_started(sessions, name=f"after-{run}", bots=names, spec=spec)
            tasks.play_matches(match_ids[:FIRST_WAVE])
            after.append(time.perf_counter() - started)
            tasks.play_matches(match_ids[FIRST_WAVE:])
            print(f"run {run}: start: false {unstarted[-1]:.2f} s; start: true before {before[-1]:.2f} s, "
                  f"after {after[-1]:.2f} s", flush=True)
        median = statistics.median
        print(f"median of {args.runs}: start: false {median(unstarted):.2f} s; start: true before "
              f"{median(before):.2f} s, after {median(after):.2f} s")
        tasks.app.close()
        engine.dispose()


if __name__ == "__main__":
    main()
