"""The workers' Celery app, built from the settings by the shared factory
(:func:`atout_arena.core.tasks.make_celery`) with the workers' tasks included.

``atout-arena worker`` builds it and runs :meth:`celery.Celery.worker_main`: a small thread pool
whose tasks claim matches and hand them to the process's event loop
(:mod:`atout_workers.loop`), which keeps up to ``ATOUT_WORKER_CONCURRENCY`` (1000) matches in
flight. ``atout-arena worker --practice`` runs one for the practice queue alone, with room for
``ATOUT_PRACTICE_CONCURRENCY`` matches: capacity that tournaments never take.

A Redis outage is two lines per process (:data:`atout_arena.core.wire.redis_outage`), also
for what Celery itself says: the worker's consumer (:func:`quiet_broker_outages`) and beat's
scheduler (:class:`QuietScheduler`) report to it instead of logging every retry.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from celery import Celery
from celery.beat import PersistentScheduler, ScheduleEntry, SchedulingError
from celery.exceptions import CPendingDeprecationWarning
from celery.signals import worker_ready, worker_shutdown
from celery.worker.consumer import consumer as celery_consumer

from atout_arena.core.settings import Settings
from atout_arena.core.tasks import make_celery
from atout_arena.core.wire import is_outage, redis_outage
from atout_workers.keeper import start_keeper, stop_keeper
from atout_workers.loop import STOP_WAIT_S
from atout_workers.world import get_world

TASK_MODULES = ("atout_workers.tasks",)
# the app's setting that holds ATOUT_REDIS_URL as the arena spells it (beat's lease reads it)
REDIS_URL_SETTING = "atout_redis_url"
log = logging.getLogger(__name__)


def create_app(settings: Settings) -> Celery:
    """The app a worker or beat runs, for ``settings``."""
    app = make_celery(settings, include=TASK_MODULES)
    app.conf[REDIS_URL_SETTING] = settings.redis_url
    return app


@worker_ready.connect(weak=False)
def _start_keeper(**_: Any) -> None:
    """Every worker sweeps (under a Redis lock) and publishes its liveness: no beat needed."""
    quiet_broker_outages()  # again: Celery's logging setup, since, re-enabled the warning
    start_keeper(get_world())


@worker_shutdown.connect(weak=False)
def _stop_keeper(**_: Any) -> None:
    """A warm shutdown: the matches in flight on the event loop finish first (as Celery's own
    tasks do; those still playing after ``ATOUT_WORKER_SHUTDOWN_S`` go back to the queue), then the keeper
    stops, and what the event sink holds (the decisions' metrics added up) is written."""
    world = get_world()
    if world._loop is not None:  # a set's next rotation now goes to the workers, not this loop
        world.matches.closing.set()
    if world._loop is not None and world.matches.in_flight:
        matches, grace = world.matches, world.settings.worker_shutdown_s
        log.info("waiting for %d matches in flight to finish (at most %.0f s)", matches.in_flight, grace)
        if not matches.drain(grace):
            log.warning("%d matches still in flight: they stop and go back to the queue", matches.in_flight)
            matches.stopping.set()
            matches.drain(STOP_WAIT_S)
    stop_keeper()
    world.events.flush(5.0)


# -- a Redis outage, as Celery meets it -------------------------------------------------------


def guard_kombu_reconnect() -> None:
    """kombu 5.7's Redis channel, closed after the broker connection broke (Celery's consumer
    closes it before reconnecting), restores its unacknowledged messages through a client made
    from ``connection.client``, which the broken connection already set to None: an
    ``AttributeError`` ('NoneType' object has no attribute 'hostname'), which Celery does not
    ignore as it ignores connection errors: "Unrecoverable error", and the worker shuts down
    (kombu issues 582 and 970 are the same path). Made a Redis ``ConnectionError`` here, it is
    one of the errors Celery ignores while it reconnects, and the messages come back by the
    visibility timeout as for any lost connection. Idempotent."""
    from kombu.transport import redis as kombu_redis
    from redis.exceptions import ConnectionError as RedisConnectionError

    channel = kombu_redis.Channel
    original = getattr(channel, "_connparams")  # noqa: B009  (private: kombu's stubs do not declare it)
    if getattr(original, "_atout_guarded", False):
        return

    def _connparams(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection is closed (kombu: no connection info)")
        return original(self, *args, **kwargs)

    _connparams._atout_guarded = True  # type: ignore[attr-defined]
    setattr(channel, "_connparams", _connparams)  # noqa: B010


guard_kombu_reconnect()


# The consumer's messages, as Celery's module spells them (its stubs do not declare them)
_LOST = getattr(celery_consumer, "CONNECTION_RETRY", None)  # "Connection to broker lost..."
_CANNOT_CONNECT = getattr(celery_consumer, "CONNECTION_ERROR", None)  # "Cannot connect to %s..."


class BrokerOutageFilter(logging.Filter):
    """What Celery logs of Redis being away becomes :data:`redis_outage`'s one line:

    - its consumer's loss of the broker and each reconnection attempt ("Cannot connect to
      redis://...: Trying again in 2.00 seconds... (1/None)", an error every few seconds, for
      ever); its "Connected to" (kept) says Redis is back;
    - a message that could not be acknowledged or rejected because the connection broke (a
      critical record with its traceback): the message comes back by itself;
    - a task failed by the outage keeps its one line, without the traceback (the failure is
      worth knowing, the stack of a refused connection is not)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if (_CANNOT_CONNECT is not None and record.msg == _CANNOT_CONNECT) or (
                _LOST is not None and args and args[0] == _LOST):
            error = next((a for a in args if isinstance(a, BaseException)), None)
            redis_outage.failed("the worker's broker connection", error or record.getMessage())
            return False
        if isinstance(record.msg, str) and record.msg.startswith("Connected to"):
            redis_outage.ok()
            return True
        error = record.exc_info[1] if record.exc_info else None
        if error is None or not is_outage(error):
            return True
        redis_outage.failed(f"Celery ({record.name})", error)
        if record.name == "celery.app.trace":
            record.exc_info, record.exc_text = None, None
            return True
        return False


_broker_filter = BrokerOutageFilter()
# where Celery logs what it meets of a broker outage (its get_logger(__name__) of each module)
CELERY_LOGGERS = ("celery.worker.consumer.consumer", "celery.worker.consumer.connection",
                  "celery.worker.request", "celery.app.trace")


def quiet_broker_outages() -> None:
    """Route what Celery's consumer says of a lost broker to :data:`redis_outage`, and silence
    the nine-line CPendingDeprecationWarning it adds at every loss (about a setting we set
    explicitly: worker_cancel_long_running_tasks_on_connection_loss). Idempotent; called again
    once the worker is ready, because Celery's logging setup puts its own "always show" filter
    for that warning in front of ours."""
    for name in CELERY_LOGGERS:
        logger = logging.getLogger(name)
        if _broker_filter not in logger.filters:
            logger.addFilter(_broker_filter)
    warnings.filterwarnings("ignore", message=r"\s*In Celery 5\.1 we introduced an optional breaking change",
                            category=CPendingDeprecationWarning)


class QuietScheduler(PersistentScheduler):
    """Beat's scheduler (its schedule kept in a file, as Celery's default), except that a due
    task that cannot be sent because Redis is away is :data:`redis_outage`'s one line, not an
    error with its stack and traceback at every tick (44 per 5 s outage with 0.5 s ticks).
    Nothing is lost: the next tick does the sweep's work."""

    def apply_entry(self, entry: ScheduleEntry, producer: Any = None) -> None:
        if not redis_outage.down:  # during an outage it is not sent: not said either
            log.info("Scheduler: Sending due task %s (%s)", entry.name, entry.task)
        try:
            self.apply_async(entry, producer=producer, advance=False)
        except Exception as exc:
            # apply_async re-raises the transport's error as a SchedulingError (its context)
            cause = exc.__context__ if isinstance(exc, SchedulingError) and exc.__context__ else exc
            if not is_outage(cause):
                log.error("Message Error: %s", exc, exc_info=True)
                return
            redis_outage.failed(f"beat sending {entry.name}", cause)
        else:
            redis_outage.ok()
