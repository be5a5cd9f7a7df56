"""The arena's Redis key space, in one place. Every key the arena reads or writes is named here.

``{bot}`` is a bot's id, ``{stream}`` a stream address (the bot's id, or ``<bot id>@<version>``
for a stream that declared a version in its Hello: see :func:`stream_address`), ``{rid}`` a
decision request's id, ``{match}`` a match's id. What the
decision relay keys hold and which scripts touch them is told in :mod:`atout_arena.core.relay`;
the Celery broker's own keys (queues ``atout.*``, ``celery-task-meta-*``) belong to Celery.

=====================================  =======  ==========================================================
key                                    type     written by / meaning
=====================================  =======  ==========================================================
``atout:bot:{stream}:inbox``           stream   workers, game servers: everything for the stream, in order
``atout:bot:{stream}:conn``            string   game server: the address's one live stream (presence)
``atout:bot:{stream}:last``            string   game server: its last stream, until the bot ends it itself
``atout:bot:{stream}:pending``         zset     workers: requests waiting for an answer
``atout:bot:{stream}:matches``         hash     workers: the stream's running matches (MatchStart)
``atout:bot:{stream}:ended``           hash     workers: MatchEnds kept for a stream that was away
``atout:bot:{bot}:current``            string   game server: the address of the bot's latest stream
``atout:req:{rid}``                    string   workers: a DecisionRequest until answered
``atout:reply:{rid}``                  list     game server: the bot's answers to ``rid``
``atout:connected``                    zset     game servers: live stream addresses, scored by presence expiry
``atout:match:{match}:public``         channel  workers: spectators' events of a match
``atout:match:{match}:seat:{seat}``    channel  workers: one seat's view of a match
``atout:match:{match}:public:last``    string   workers: the latest public event (late spectators)
``atout:metrics:{name}``               hash     every process: metric values, summed across processes
``atout:servers``                      zset     game servers: server id -> liveness expiry (ms); 0 = stopped
``atout:server_boots``                 hash     game servers: server id -> its running process's boot nonce
``atout:server:{server}:streams``      string   game server: how many bot streams it holds (rebalancing)
``atout:workers``                      zset     workers: worker processes (``host:pid``) by expiry
``atout:sweeper:lock``                 string   workers: the one sweep of the current interval (NX, expiring)
``atout:beat:leader``                  string   beat: the beat that sends the periodic tasks (core.lease)
``atout:beat:last_run``                hash     beat: periodic task -> when it was last sent (unix s)
``atout:api:metrics_leader``           string   API: the API whose /metrics serves the arena-wide series
``atout:control``                      channel  API: a bot's revocation, for every game server
``atout:contract``                     hash     game servers, workers: part -> "<version> <expiry ms>"
``atout:mailbox:{mailbox}``            list     game servers: replies to one worker process's requests
``atout:released:{conn}``              string   game server: a released stream's tombstone
``atout:ladder:{ladder}:armed``        string   workers: a ladder's next tick is scheduled
=====================================  =======  ==========================================================

:data:`CONTRACT_VERSION` versions all of it: these keys, what they hold, the scripts of
:mod:`atout_arena.core.relay` and the reply formats (``T<ms> <action>``...). Parts that speak
different versions do not share a Redis: a part refuses to start while a part of another
version is live on it (:func:`atout_arena.core.relay.check_contract`; docs/deployment.md).
"""

from __future__ import annotations

PREFIX = "atout:"

# The version of the contract between the arena's processes through Redis (this key space, its
# scripts and its formats). Raise it with any change that a part of the previous version would
# misread; a change every version reads the same way keeps it.
CONTRACT_VERSION = 2  # 2: decisions are timed at the edge (EXPIRE, E/X replies, A/O stream states)
CONTRACT_KEY = "atout:contract"

# -- the decision relay (game servers <-> workers) -----------------------------------------

CONNECTED_KEY = "atout:connected"
REQ_KEY_PREFIX = "atout:req:"


VERSION_SEPARATOR = "@"  # bot names never hold it (services.bots.NAME_PATTERN)


def stream_address(bot_id: int | str, version: str = "") -> str:
    """Where a bot's stream of ``version`` is reached: ``"7"``, or ``"7@v2"`` for version v2."""
    return f"{bot_id}{VERSION_SEPARATOR}{version}" if version else str(bot_id)


def split_address(address: str) -> tuple[str, str]:
    """``"7@v2"`` -> ``("7", "v2")``; ``"7"`` -> ``("7", "")``."""
    bot_id, _, version = address.partition(VERSION_SEPARATOR)
    return bot_id, version


def bot_keys_pattern(bot_id: str) -> str:
    """A SCAN pattern for every key of one bot (every version's streams too)."""
    return f"atout:bot:{bot_id}[:@]*"


def current_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:current"


def inbox_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:inbox"


def streams_key(server_id: str) -> str:
    """How many bot streams the game server holds (a string, renewed with its liveness, expiring
    with it): what rebalancing compares."""
    return f"atout:server:{server_id}:streams"


def conn_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:conn"


def released_key(conn_id: str) -> str:
    """A released stream's tombstone (core.relay RELEASE / HEARTBEAT)."""
    return f"atout:released:{conn_id}"


def pending_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:pending"


def matches_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:matches"


def ended_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:ended"


def req_key(request_id: str) -> str:
    return f"{REQ_KEY_PREFIX}{request_id}"


MAILBOX_PREFIX = "atout:mailbox:"


def mailbox_of(request_id: str) -> str | None:
    """The mailbox a request's replies go to, or None (a reply list of its own). A request id
    ``m<mailbox>.<nonce>`` was made by a worker process reading every reply of its requests
    from one list (``atout:mailbox:<mailbox>``, entries ``<request id> <reply>``)."""
    if request_id.startswith("m"):
        mailbox, dot, nonce = request_id[1:].partition(".")
        if dot and mailbox and nonce:
            return mailbox
    return None


def reply_key(request_id: str) -> str:
    """Where the replies to ``request_id`` are pushed: its own list, or its worker's mailbox."""
    mailbox = mailbox_of(request_id)
    if mailbox is not None:
        return f"{MAILBOX_PREFIX}{mailbox}"
    return f"atout:reply:{request_id}"


def reply_entry(request_id: str, value: bytes) -> bytes:
    """A reply as pushed to :func:`reply_key`: the value, prefixed by the request id in a mailbox."""
    if mailbox_of(request_id) is not None:
        return request_id.encode() + b" " + value
    return value


# Game servers' own liveness, renewed every second: a stream's ``conn`` is live only while the
# server in its connection id (``<server id>/<nonce>``) is (a server absent from it: trusted).
SERVERS_KEY = "atout:servers"
# game server id -> the boot nonce of its running process (a restarted server of the same id has
# another: the streams of the one before it are gone, an outage of the arena)
SERVER_BOOTS_KEY = "atout:server_boots"

# -- workers ---------------------------------------------------------------------------------

WORKERS_KEY = "atout:workers"
SWEEPER_LOCK_KEY = "atout:sweeper:lock"
# Leases (core.lease): one process of several does the job, another takes over within seconds
BEAT_LEADER_KEY = "atout:beat:leader"
BEAT_LAST_RUN_KEY = "atout:beat:last_run"
METRICS_LEADER_KEY = "atout:api:metrics_leader"

# -- control ---------------------------------------------------------------------------------

# Pub/sub channel every game server listens to: {"revoke": bot_id, "reason": ...} when a bot is
# disabled or its token rotated (its streams close, its open decisions fault ``disconnected``).
CONTROL_CHANNEL = "atout:control"


def reply_prefix() -> str:
    return "atout:reply:"


# -- spectators ------------------------------------------------------------------------------


def public_channel(match_id: int | str) -> str:
    return f"atout:match:{match_id}:public"


def seat_channel(match_id: int | str, seat: int) -> str:
    return f"atout:match:{match_id}:seat:{seat}"


def last_event_key(match_id: int | str) -> str:
    """The latest public event of a match, for spectators who join late."""
    return f"atout:match:{match_id}:public:last"


# -- metrics ---------------------------------------------------------------------------------

METRICS_PREFIX = "atout:metrics:"


def metric_key(name: str) -> str:
    return f"{METRICS_PREFIX}{name}"


# -- ladders ---------------------------------------------------------------------------------


def ladder_armed_key(ladder_id: int | str) -> str:
    """Set (with a time to live) while a ladder's next periodic tick is on its way: one chain of
    ticks per ladder (:mod:`atout_workers.tasks`)."""
    return f"atout:ladder:{ladder_id}:armed"
