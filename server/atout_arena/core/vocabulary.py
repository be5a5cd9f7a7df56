"""The arena's words, each defined once: fault kinds, who played a step, match outcomes and
statuses, what came of a worker's run of a match, tournament statuses. (The stored step row is
:class:`atout_arena.core.match.Step`, read with ``Step.from_json``, never by position.)

Every module that writes or reads one of these imports it from here: the match loop, the
store, the metrics, the API's queries and schemas, the demo's report. They are ``StrEnum``
members, so they compare equal to their text (``Fault.TIMEOUT == "timeout"``), serialise to
JSON as that text and can be stored as is.
"""

from __future__ import annotations

from enum import StrEnum


class Fault(StrEnum):
    """Why a bot's decision was not its own (DESIGN.md, "Matches, faults, tournaments")."""

    TIMEOUT = "timeout"  # no legal answer within the deadline
    ILLEGAL = "illegal"  # the deadline passed after at least one illegal answer
    DISCONNECTED = "disconnected"  # the bot had no live stream
    ABSENT = "absent"  # the bot was not connected when its match started (nor within its grace)


FAULT_KINDS: tuple[str, ...] = tuple(Fault)


class PlayedBy(StrEnum):
    """Who chose a step's action: the seat's bot, or the fallback (first legal action)."""

    BOT = "bot"
    FALLBACK = "fallback"


class Outcome(StrEnum):
    """How a match ended, as counted by ``atout_matches_total{outcome}``."""

    FINISHED = "finished"  # played to the end
    FORFEIT = "forfeit"  # played to the end, with at least one seat forfeited
    ERROR = "error"  # given up: no result


OUTCOMES: tuple[str, ...] = tuple(Outcome)


class RunResult(StrEnum):
    """What came of a worker's run of a stored match (``atout_workers.play``): the task's
    result, in the workers' logs."""

    PLAYING = "playing"  # handed to the process's event loop (play_on_loop returns at once)
    FINISHED = "finished"  # played and its result stored
    SKIPPED = "skipped"  # not this worker's to play: done, or alive elsewhere
    LOST = "lost"  # another worker took it over mid-way: nothing stored
    DUPLICATE = "duplicate"  # played, but someone stored its result first
    RELEASED = "released"  # the process stops (or Redis or the database failed): back in the queue
    REPLAYED = "replayed"  # an outage of the arena: played again from its seed, nothing stored
    FAILED = "failed"  # given up with its reason (an organizer may retry it)
    CANCELLED = "cancelled"  # its competition cancelled (or a bot left its ladder): stopped, nothing stored


class MatchStatus(StrEnum):
    PENDING = "pending"  # its tournament was created, not started
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


MATCH_STATUSES: tuple[str, ...] = tuple(MatchStatus)
MATCH_DONE: tuple[str, ...] = (MatchStatus.FINISHED, MatchStatus.FAILED, MatchStatus.CANCELLED)
MATCH_IN_FLIGHT: tuple[str, ...] = (MatchStatus.PENDING, MatchStatus.QUEUED, MatchStatus.RUNNING)


class TournamentStatus(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


TOURNAMENT_STATUSES: tuple[str, ...] = tuple(TournamentStatus)


class SprtStatus(StrEnum):
    """A test (SPRT) between two bots or versions."""

    RUNNING = "running"
    FINISHED = "finished"  # decided (H0, H1), or max_games reached (inconclusive)
    CANCELLED = "cancelled"


SPRT_STATUSES: tuple[str, ...] = tuple(SprtStatus)


class LadderStatus(StrEnum):
    """A ladder: its matchmaker seats connected members while ``running``, none while ``paused``."""

    RUNNING = "running"
    PAUSED = "paused"
