"""The sweeper: liveness made explicit (the fishtest way), run by beat every few seconds.

Celery's late acknowledgement already brings back the task of a worker that died, but only
after the Redis transport's visibility timeout (an hour: it must exceed the longest match).
The sweeper looks at the matches themselves instead:

- a **running** match whose heartbeat is older than ``ATOUT_MATCH_STALE_S`` lost its worker
  (killed, frozen, cut off): it goes back to ``queued`` and is dispatched again. Should the old
  worker still be alive, its heartbeat thread finds the lease gone and stops the match; its
  result could not be stored anyway (results are stored only by the lease holder);
- a **queued** match older than ``ATOUT_REQUEUE_AFTER_S`` while the match queue is empty has
  lost its task (a worker that had prefetched it died, a dispatch after the commit failed):
  it is dispatched again. While the queue is not empty its task may still be waiting there;
- a **running tournament** whose matches are all done but that was not finalized (its last
  task died between the commit and the dispatch) is finalized;
- a **running test** with no match in flight (a tick was lost) is ticked again.

Dispatching the same match twice is harmless: the second task finds it claimed or finished.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import sessionmaker

from atout_arena.services.deals import release_stalled
from atout_workers import store

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    stale: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)
    finalize: list[int] = field(default_factory=list)
    tests: list[int] = field(default_factory=list)
    released: list[int] = field(default_factory=list)  # duplicate rotations whose previous one was done

    def as_dict(self) -> dict[str, Any]:
        return {"stale": self.stale, "requeued": self.requeued, "finalize": self.finalize,
                "tests": self.tests, "released": self.released}


def sweep(
    sessions: sessionmaker,
    *,
    stale_s: float,
    requeue_after_s: float,
    queue_length: Callable[[], int],
    dispatch_match: Callable[[int], None],
    dispatch_finalize: Callable[[int], None],
    dispatch_test: Callable[[int], None] | None = None,
) -> SweepReport:
    report = SweepReport()
    report.stale = store.stale_running(sessions, stale_s)
    for match_id in report.stale:
        log.warning("match %s: its worker went silent for %.0f s; dispatching it again", match_id, stale_s)
        dispatch_match(match_id)
    if queue_length() == 0:
        report.requeued = store.old_queued(sessions, requeue_after_s)
        for match_id in report.requeued:
            log.warning("match %s: queued for over %.0f s with an empty queue; dispatching it again",
                        match_id, requeue_after_s)
            dispatch_match(match_id)
    report.released = release_stalled(sessions)  # the next rotation of a deal, when its task missed it
    for match_id in report.released:
        dispatch_match(match_id)
    report.finalize = store.unfinalized_tournaments(sessions)
    for tournament_id in report.finalize:
        dispatch_finalize(tournament_id)
    if dispatch_test is not None:
        report.tests = store.stalled_tests(sessions)
        for test_id in report.tests:
            dispatch_test(test_id)
    return report
