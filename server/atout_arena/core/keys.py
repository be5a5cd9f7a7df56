"""The arena's Redis key space, in one place. Every key the arena reads or writes is named here.

``{bot}`` is a bot's id, ``{rid}`` a decision request's id, ``{match}`` a match's id. What the
decision relay keys hold and which scripts touch them is told in :mod:`atout_arena.core.relay`;
the Celery broker's own keys (queues ``atout.*``, ``celery-task-meta-*``) belong to Celery.

=====================================  =======  ==========================================================
key                                    type     written by / meaning
=====================================  =======  ==========================================================
``atout:bot:{bot}:inbox``              stream   workers, game servers: everything for the bot, in order
``atout:bot:{bot}:conn``               string   game server: the bot's one live stream (presence)
``atout:bot:{bot}:pending``            zset     workers: requests waiting for an answer
``atout:bot:{bot}:matches``            hash     workers: the bot's running matches (MatchStart)
``atout:bot:{bot}:ended``              hash     workers: MatchEnds kept for a bot that was away
``atout:req:{rid}``                    string   workers: a DecisionRequest until answered
``atout:reply:{rid}``                  list     game server: the bot's answers to ``rid``
``atout:connected``                    zset     game servers: live bots, scored by presence expiry
``atout:match:{match}:public``         channel  workers: spectators' events of a match
``atout:match:{match}:seat:{seat}``    channel  workers: one seat's view of a match
``atout:match:{match}:public:last``    string   workers: the latest public event (late spectators)
``atout:metrics:{name}``               hash     every process: metric values, summed across processes
=====================================  =======  ==========================================================
"""

from __future__ import annotations

PREFIX = "atout:"

# -- the decision relay (game servers <-> workers) -----------------------------------------

CONNECTED_KEY = "atout:connected"
REQ_KEY_PREFIX = "atout:req:"


def bot_keys_pattern(bot_id: str) -> str:
    """A SCAN pattern for every key of one bot."""
    return f"atout:bot:{bot_id}:*"


def inbox_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:inbox"


def conn_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:conn"


def pending_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:pending"


def matches_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:matches"


def ended_key(bot_id: str) -> str:
    return f"atout:bot:{bot_id}:ended"


def req_key(request_id: str) -> str:
    return f"{REQ_KEY_PREFIX}{request_id}"


def reply_key(request_id: str) -> str:
    return f"atout:reply:{request_id}"


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
