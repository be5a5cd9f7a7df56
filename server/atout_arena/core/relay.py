"""The Redis side of the decision relay: the contract between game servers and workers.

Game servers hold the bots' gRPC streams; workers play the matches. They share nothing but
Redis, through the keys below (``{bot}`` is a stream address: the bot's id, or ``<bot id>@<version>``
for a stream whose Hello declared a version; ``{rid}`` a request id; the key space is
:mod:`atout_arena.core.keys`). Every
value called *message* is a serialized ``atout.v1.ArenaMessage`` (see the .proto), so a game
server forwards what a worker wrote without knowing the match.

====================================  ======  =============================================================
key                                   type    meaning
====================================  ======  =============================================================
``atout:bot:{bot}:inbox``             stream  everything for the bot, in order. Entries ``k=msg m=<message>``
                                              (written by workers) or ``k=conn m=<connection id>`` (written
                                              by a game server when a new stream of the bot takes over).
                                              Trimmed to about :data:`INBOX_MAXLEN` entries.
``atout:bot:{bot}:conn``              string  the id (``<server id>/<nonce>``) of the bot's one live stream;
                                              expires after the presence TTL unless the game server's
                                              heartbeat renews it. Absent = the bot is not connected.
``atout:bot:{bot}:last``              string  the connection id of its last stream, kept an hour (renewed
                                              with ``conn``; dropped when the bot itself ends its stream): a
                                              bot without ``conn`` but with ``last`` did not leave: it is cut
                                              off by an outage of the arena, not away.
``atout:bot:{bot}:pending``           zset    request ids still waiting for an answer, scored by their
                                              absolute deadline (ms since the epoch).
``atout:bot:{bot}:matches``           hash    match id -> its MatchStart message, while the match runs.
``atout:bot:{bot}:ended``             hash    match id -> its MatchEnd message, for the matches that ended
                                              while the bot was not connected (sent when it reconnects).
``atout:req:{rid}``                   string  the DecisionRequest message, until answered or past deadline.
``atout:reply:{rid}``                 list    the bot's answers to ``rid``, oldest first: ``A<action>``
                                              (``T<think ms> <action>`` when the bot told its own time), or
                                              ``D`` when the bot was not connected at request time.
``atout:connected``                   zset    bot id -> when its presence expires (ms): live bots.
``atout:servers``                     zset    game server id -> when its liveness expires (ms; 0: stopped).
====================================  ======  =============================================================

A stream is *live* while its ``conn`` exists and the game server named in its connection id
is alive (:data:`LIVE_CONN`; a server absent from ``atout:servers`` is trusted). Workers,
presence (:func:`connected_streams`, :func:`is_connected`) and :data:`PUSH_DECISION` all read
liveness that way, so a game server killed with ``-9`` loses its bots within
:data:`SERVER_TTL_MS`, not after their presence TTL.

A worker asking a bot for a decision (``atout_workers.decisions``), in one round trip:

1. ``EVAL`` :data:`PUSH_DECISION`: store ``req`` and add it to ``pending`` (kept until the
   worker gives up on it: a bot that reconnects is sent it); append the message to ``inbox``
   when the stream is live. It returns the stream's state: its connection id, ``A`` (away) or
   ``O`` (cut off by an outage).
2. The reply comes in the worker's mailbox: ``E...`` (an answer, timed at the edge), or ``X``
   (the edge's deadline passed: :data:`EXPIRE`). Meanwhile the worker watches the stream
   (:data:`STREAM_STATE`): it waits the grace for a bot away, and, its clock stopped, the
   outage limit for one cut off.
3. An illegal answer: ``EVAL`` :data:`REJECT` appends a Rejection to ``inbox`` and puts the
   request back in ``req`` / ``pending`` (for a reconnecting bot); then it waits again.
4. Given up (the grace or the outage limit): ``EVAL`` :data:`CANCEL` drops ``req``, ``pending``
   and ``reply``.

A worker telling a bot that a match starts or ends: ``EVAL`` :data:`NOTIFY` appends the
message to ``inbox``; a MatchStart is also kept in ``matches`` while the match runs, and a
MatchEnd drops it from there and, when the bot has no live stream, is kept in ``ended`` (at most
:data:`ENDED_MAX` of them, for :data:`ENDED_TTL_MS`), so that a bot that comes back sees
``on_match_end`` of every match it played. Rejections are not kept: the request they answer is
sent again on reconnect, and the bot answers it afresh. A match claimed again after its worker died (played
again from its seed) first tells every stream still holding its MatchStart a MatchEnd
``restarted`` (:data:`NOTIFY_IF_STARTED`), then the new MatchStart.

A game server, for each bot stream (``atout_arena.gateway.session``):

1. On connect, ``EVAL`` :data:`TAKEOVER` atomically: sets ``conn`` to its connection id,
   appends a ``k=conn`` entry to ``inbox`` (the stream's read cursor starts there; any other
   stream of the bot that reads it closes itself with Error ``replaced``), and returns (and
   forgets) the MatchEnd of every match that ended while the bot was away, then the MatchStart
   of every running match and every pending request still before its deadline: they are sent
   first. Anything added after the cursor is read from the inbox, so nothing is lost or sent
   twice.
2. ``XREAD BLOCK COUNT`` :data:`INBOX_READ_COUNT` on ``inbox`` from the cursor: forwards each
   message to the bot (one dedicated Redis connection per live stream; no polling); to a bot
   that listed the feature "batch", the decision requests of one read go as one DecisionBatch.
3. Answers: one ``EVAL`` :data:`ANSWER` for all the answers of one message (an Action, or an
   ActionBatch) pushes each ``A<action>`` to its ``reply`` and drops the request from
   ``pending`` / ``req``; the calls of one turn of the game server's loop leave in one write.
4. Every keep-alive interval: ``EVAL`` :data:`HEARTBEAT` renews ``conn`` unless another
   stream holds it (then this one has been replaced; a ``conn`` that vanished, e.g. Redis
   restarted empty, is taken back); on close, ``EVAL`` :data:`RELEASE` deletes ``conn`` only
   if it is still its own, and leaves a tombstone of the stream that a late HEARTBEAT of it
   respects.

The API serves human seats as a game server does (``atout_arena.api.routes.play``): the same
``TAKEOVER`` / ``XREAD`` / ``HEARTBEAT`` / ``RELEASE`` for the human's address while the
browser's play stream is open; its answers come in separate HTTP requests that hold no stream
state, so they go through :data:`ANSWER_IF_PENDING` (pushed only while the request is pending
for that address and before its deadline).

Why a stream and not a list for the inbox: every reader has its own cursor, so a replaced
stream still reading can never take a message away from its successor. Replies are only taken
from a stream for request ids that this stream was sent, so a bot can never answer another
bot's request; an answer after the deadline (game server's clock) is refused there. ``BLPOP``
timeouts are checked ``hz`` times a second by Redis (10 by default: up to 100 ms late; the
embedded server runs with ``hz 100``). The scripts touch ``req`` keys they are not passed in
``KEYS`` (to read every pending request in one step): fine for one Redis server, not for a
Redis Cluster.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.asyncio as aioredis

from atout_arena.core.keys import (  # the key space is defined there; re-exported for the relay's users
    CONNECTED_KEY,
    CONTRACT_KEY,
    CONTRACT_VERSION,
    CONTROL_CHANNEL,
    MAILBOX_PREFIX,
    REQ_KEY_PREFIX,
    SERVER_BOOTS_KEY,
    SERVERS_KEY,
    conn_key,
    current_key,
    ended_key,
    inbox_key,
    mailbox_of,
    matches_key,
    pending_key,
    released_key,
    reply_entry,
    reply_key,
    reply_prefix,
    req_key,
    split_address,
    stream_address,
)
from atout_arena.core.redis_conn import async_client, wire_options
from atout_arena.core.wire import Wire

_hiredis_pack: Callable[[tuple[Any, ...]], bytes] | None
try:  # hiredis packs commands in C (redis-py's asyncio client packs them in Python)
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is a dependency, but stay usable without it
    _hiredis_pack = None

INBOX_MAXLEN = 1000
MATCHES_TTL_MS = 24 * 3600 * 1000  # a match hash left by a dead worker goes away
ENDED_TTL_MS = 3600 * 1000  # MatchEnds kept for an absent bot (the SDK forgets a silent match after 1 h)
ENDED_MAX = 256  # ... at most this many per bot
REQ_GRACE_MS = 5_000  # keys of a request outlive its deadline by this much
MAX_DEADLINE_MS = 300_000  # no decision waits longer (a move's time with its bank)
# A decision takes at most this many rejected answers: the last one's Rejection is ``final``, the
# decision is faulted ``illegal`` at once (the worker stops waiting) and the game server answers
# the stream's further answers to it with a Rejection ``decided``.
MAX_REJECTIONS = 8

KIND_MESSAGE = b"msg"
# A game server reads this many inbox entries per XREAD; the decisions among them go to a bot
# whose Hello listed "batch" as DecisionBatches of at most this many requests.
INBOX_READ_COUNT = 512
KIND_CONNECTION = b"conn"
REPLY_ACTION = b"A"
REPLY_TIMED = b"T"  # an action with the bot's own think time
REPLY_EDGE = b"E"  # an action timed at the edge: ``E<edge ms> <bot ms> <action>`` (game servers)
REPLY_NOTED = b"N"  # an action with a note: ``N<edge ms|-> <bot ms> <note bytes> <note><action>``
REPLY_EXPIRED = b"X"  # ``X<edge ms>``: the edge's deadline passed with no legal answer (timeout)
REPLY_DISCONNECTED = b"D"
# What PUSH_DECISION(S) and STREAM_STATE say of a stream that is not live: ``A`` (away: the bot
# has no stream, and ended its last one itself, or never came) or ``O`` (an outage: its stream
# is on a game server that is dead, hung or restarted, or it vanished without the bot ending it:
# the arena ended it (a shutdown, a hand-over), or its presence lapsed while Redis or its game
# server was in trouble. The arena's doing, never charged to the bot).
STREAM_AWAY = b"A"
STREAM_OUTAGE = b"O"


def now_ms() -> int:
    return time.time_ns() // 1_000_000



SERVER_TTL_MS = 2_000  # a game server that did not renew its liveness for this long is gone
SERVER_BEAT_S = 0.5  # four beats a TTL: a stalled loop or a stopped process is dead to the arena within 2 s

# ------------------------------------------------------------------ scripts (worker side)

# The live connection id of a stream (its conn key, given its game server is alive), or false.
# A game server's liveness is read from SERVERS_KEY (absent: trusted, e.g. a bare relay in tests).
_LIVE = """
local function server_dead(c, servers, now)
  local sid, nonce = string.match(c, '^(.*)/([^/]*)$')
  if sid then
    local until_ms = redis.call('ZSCORE', servers, sid)
    if until_ms and tonumber(until_ms) < tonumber(now) then return true end
    local boot = redis.call('HGET', '""" + SERVER_BOOTS_KEY + """', sid)
    if boot and string.sub(nonce, 1, #boot) ~= boot then return true end
  end
  return false
end
local function stream_state(conn_key, servers, now)
  local c = redis.call('GET', conn_key)
  if not c then
    if redis.call('EXISTS', (string.gsub(conn_key, ':conn$', ':last'))) == 1 then return 'O' end
    return 'A'
  end
  if server_dead(c, servers, now) then return 'O' end
  return c
end
local function live(conn_key, servers, now)
  local c = stream_state(conn_key, servers, now)
  if c == 'A' or c == 'O' then return false end
  return c
end
"""

LIVE_CONN = _LIVE + """
return live(KEYS[1], KEYS[2], ARGV[1])
"""

# The state of a stream (its live connection id, A or O: see STREAM_AWAY / STREAM_OUTAGE) and
# whether a request is still pending for it (1 / 0): what a worker's watch over a request reads.
STREAM_STATE = _LIVE + """
return {stream_state(KEYS[1], KEYS[2], ARGV[1]), redis.call('ZSCORE', KEYS[3], ARGV[2]) and 1 or 0}
"""

LIVE_STREAMS = _LIVE + """
local out = {}
for _, address in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')) do
  if live(ARGV[2] .. address .. ARGV[3], KEYS[2], ARGV[1]) then table.insert(out, address) end
end
return out
"""

_PUSH = """
local function push(k, a)
  local c = stream_state(KEYS[k + 1], KEYS[k + 6], ARGV[a + 6])
  redis.call('SET', KEYS[k + 2], ARGV[a + 3], 'PX', ARGV[a + 4])
  redis.call('ZREMRANGEBYSCORE', KEYS[k + 3], '-inf', ARGV[a + 6])
  redis.call('ZADD', KEYS[k + 3], ARGV[a + 2], ARGV[a + 1])
  redis.call('PEXPIRE', KEYS[k + 3], ARGV[a + 4])
  if c ~= 'A' and c ~= 'O' then
    redis.call('XADD', KEYS[k + 4], 'MAXLEN', '~', ARGV[a + 5], '*', 'k', 'msg', 'm', ARGV[a + 3])
  end
  return c
end
"""

PUSH_DECISION = _LIVE + _PUSH + """
return push(0, 0)
"""

# PUSH_DECISION of several requests in one call (a worker's pushes of one turn of its loop): 6
# KEYS and 7 ARGV each, in order; returns each one's result. A script call costs Redis far more
# than the commands in it.
PUSH_DECISIONS = _LIVE + _PUSH + """
local out = {}
for i = 0, #KEYS / 6 - 1 do out[i + 1] = push(6 * i, 7 * i) end
return out
"""

REJECT = """
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*', 'k', 'msg', 'm', ARGV[5])
return 1
"""

CANCEL = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3])
return 1
"""

# The last rejected answer a decision takes (the MAX_REJECTIONS-th): its final Rejection to the
# bot's inbox and the request dropped (CANCEL), at once.
REJECT_FINAL = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[3], '*', 'k', 'msg', 'm', ARGV[2])
return 1
"""

# (a MatchEnd is kept for a bot without a live stream: away, or cut off by an outage, whose
# next stream's cursor starts after it)
NOTIFY = _LIVE + """
if ARGV[1] == 'start' then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
elseif ARGV[1] == 'end' then
  redis.call('HDEL', KEYS[1], ARGV[2])
  if not live(KEYS[3], KEYS[5], ARGV[8]) and redis.call('HLEN', KEYS[4]) < tonumber(ARGV[7]) then
    redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
    redis.call('PEXPIRE', KEYS[4], ARGV[6])
  end
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'k', 'msg', 'm', ARGV[3])
return 1
"""

# A MatchEnd for a run of a match that was aborted (its worker died): told only to a stream
# that was told this match's MatchStart and not yet its end (the start is still in ``matches``),
# exactly as NOTIFY's 'end' would. Returns 1 when told, 0 when there was nothing to end.
NOTIFY_IF_STARTED = _LIVE + """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if not live(KEYS[3], KEYS[5], ARGV[6]) and redis.call('HLEN', KEYS[4]) < tonumber(ARGV[5]) then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'k', 'msg', 'm', ARGV[2])
return 1
"""

# ------------------------------------------------------------------ scripts (game server side)

TAKEOVER = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', (string.gsub(KEYS[1], ':conn$', ':last')), ARGV[1], 'PX', 3600000)
redis.call('ZADD', KEYS[5], ARGV[3] + ARGV[2], ARGV[5])
local cursor = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'k', 'conn', 'm', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
local requests = {}
for _, rid in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  local payload = redis.call('GET', ARGV[6] .. rid)
  if payload then table.insert(requests, payload) end
end
local ended = redis.call('HVALS', KEYS[6])
redis.call('DEL', KEYS[6])
redis.call('SET', KEYS[7], ARGV[5])
return {cursor, redis.call('HVALS', KEYS[4]), requests, ended}
"""

# Any number of answers in one call (the answers of one bot message, and whatever else the game
# server answered in that turn of its loop): for answer i, KEYS[3i+1..3i+3] = reply, pending,
# req and ARGV[3i+1..3i+3] = request id, reply entry, reply TTL. A script call costs Redis far
# more than the commands in it: one per answer was a third of Redis's time per decision.
ANSWER = """
for i = 1, #KEYS, 3 do
  redis.call('RPUSH', KEYS[i], ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], ARGV[i + 2])
  redis.call('ZREM', KEYS[i + 1], ARGV[i])
  redis.call('DEL', KEYS[i + 2])
end
return #KEYS / 3
"""

# An answer from a client that holds no stream state of its own (the API's human seats,
# answered by POST): pushed only while the request is pending for this address and before its
# deadline. Returns 1 (pushed), 0 (not pending: unknown, answered already, or given up), or
# -<ms> (late by that much).
ANSWER_IF_PENDING = """
local deadline = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not deadline or redis.call('EXISTS', KEYS[3]) == 0 then
  return 0
end
if tonumber(deadline) < tonumber(ARGV[4]) then
  return tonumber(deadline) - tonumber(ARGV[4])
end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
return 1
"""

# The edge's verdict when a request's deadline passed at the game server (or the API's play
# stream) that sent it, with no legal answer: pushed to the worker as ``X<edge ms>`` only while
# the request is still pending and this stream still holds the address (a bot that reconnected
# elsewhere was sent the request again there, with a fresh clock). Returns 1 (expired) or 0.
EXPIRE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
redis.call('RPUSH', KEYS[4], ARGV[3])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return 1
"""

# When an edge sends a human seat its decision: the request's score in ``pending`` becomes the
# edge's deadline, which ANSWER_IF_PENDING checks the answers of other requests against.
EDGE_DEADLINE = """
return redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])
"""

HEARTBEAT = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', (string.gsub(KEYS[1], ':conn$', ':last')), ARGV[1], 'PX', 3600000)
redis.call('ZADD', KEYS[2], ARGV[3] + ARGV[2], ARGV[4])
return 1
"""

# RELEASE leaves a tombstone of the stream (KEYS[3], one presence TTL): a HEARTBEAT of that
# stream still in flight when it closed (sent, then cancelled) would otherwise bring its
# presence back for a whole TTL after the release.
#
# A stream the bot ended (ARGV[4] = 0) drops ``last`` too: the bot left. One the arena ended
# itself (a shutdown, a hand-over: ARGV[4] = the outage limit in ms) keeps ``last`` for that
# long: its bot is cut off by the arena, not away, until it reconnects (TAKEOVER) anywhere.
RELEASE = """
redis.call('SET', KEYS[3], 1, 'PX', ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local last = (string.gsub(KEYS[1], ':conn$', ':last'))
  if tonumber(ARGV[4]) > 0 then
    redis.call('SET', last, ARGV[1], 'PX', ARGV[4])
    redis.call('DEL', KEYS[1])
  else
    redis.call('DEL', KEYS[1], last)
  end
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
return 0
"""


FAULT_PENDING = """
local faulted = 0
for _, rid in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local mailbox = string.match(rid, '^m([^.]+)%.')
  if mailbox then
    redis.call('RPUSH', ARGV[4] .. mailbox, rid .. ' D')
    redis.call('PEXPIRE', ARGV[4] .. mailbox, ARGV[3])
  else
    redis.call('RPUSH', ARGV[1] .. rid, 'D')
    redis.call('PEXPIRE', ARGV[1] .. rid, ARGV[3])
  end
  redis.call('DEL', ARGV[2] .. rid)
  faulted = faulted + 1
end
redis.call('DEL', KEYS[1])
return faulted
"""


# ------------------------------------------------------------------ worker-side commands
# Each returns the arguments of one EVAL, so that the sync and the async clients (and
# pipelines) send exactly the same thing.


def push_decision_command(
    address: str, request_id: str, deadline_unix_ms: int, message: bytes, ttl_ms: int
) -> tuple[Any, ...]:
    return (
        PUSH_DECISION, 6,
        conn_key(address), req_key(request_id), pending_key(address), inbox_key(address),
        reply_key(request_id), SERVERS_KEY,
        request_id, deadline_unix_ms, message, ttl_ms, INBOX_MAXLEN, now_ms(),
        reply_entry(request_id, REPLY_DISCONNECTED),
    )  # fmt: skip


def push_decisions_command(pushes: Sequence[tuple[Any, ...]]) -> tuple[Any, ...]:
    """One ``PUSH_DECISIONS`` call doing the :func:`push_decision_command` calls ``pushes``."""
    keys: list[Any] = []
    argv: list[Any] = []
    for push in pushes:
        keys += push[2:8]
        argv += push[8:]
    return (PUSH_DECISIONS, len(keys), *keys, *argv)


def reject_command(
    address: str, request_id: str, deadline_unix_ms: int, request: bytes, rejection: bytes, ttl_ms: int
) -> tuple[Any, ...]:
    return (
        REJECT, 3,
        req_key(request_id), pending_key(address), inbox_key(address),
        request_id, deadline_unix_ms, request, ttl_ms, rejection, INBOX_MAXLEN,
    )  # fmt: skip


def live_conn_command(address: str) -> tuple[Any, ...]:
    """The stream's live connection id (its game server alive), or nil."""
    return (LIVE_CONN, 2, conn_key(address), SERVERS_KEY, now_ms())


def stream_state_command(address: str, request_id: str) -> tuple[Any, ...]:
    """[the stream's live connection id, or STREAM_AWAY / STREAM_OUTAGE; 1 if ``request_id``
    is still pending for it, else 0] (:data:`STREAM_STATE`)."""
    return (STREAM_STATE, 3, conn_key(address), SERVERS_KEY, pending_key(address), now_ms(), request_id)


def cancel_command(address: str, request_id: str) -> tuple[Any, ...]:
    # a mailbox is shared by a worker's requests: only a reply list of its own is dropped
    replies = req_key(request_id) if mailbox_of(request_id) is not None else reply_key(request_id)
    return (CANCEL, 3, pending_key(address), req_key(request_id), replies, request_id)


def reject_final_command(address: str, request_id: str, rejection: bytes) -> tuple[Any, ...]:
    """The final Rejection (``Rejection.final``) sent and the request cancelled in one call."""
    replies = req_key(request_id) if mailbox_of(request_id) is not None else reply_key(request_id)
    return (REJECT_FINAL, 4, pending_key(address), req_key(request_id), replies, inbox_key(address),
            request_id, rejection, INBOX_MAXLEN)


def notify_command(address: str, what: str, match_id: str, message: bytes) -> tuple[Any, ...]:
    """``what``: ``start`` (remembered for reconnects while the match runs), ``end`` (the start
    is forgotten; the end is kept for a bot that is not connected) or ``other``."""
    return (
        NOTIFY, 5,
        matches_key(address), inbox_key(address), conn_key(address), ended_key(address), SERVERS_KEY,
        what, match_id, message, INBOX_MAXLEN, MATCHES_TTL_MS, ENDED_TTL_MS, ENDED_MAX, now_ms(),
    )  # fmt: skip


def notify_if_started_command(address: str, match_id: str, message: bytes) -> tuple[Any, ...]:
    """The MatchEnd ``message`` of an aborted run, for a stream that was told the match started
    (:data:`NOTIFY_IF_STARTED`)."""
    return (
        NOTIFY_IF_STARTED, 5, matches_key(address), inbox_key(address), conn_key(address), ended_key(address),
        SERVERS_KEY, match_id, message, INBOX_MAXLEN, ENDED_TTL_MS, ENDED_MAX, now_ms(),
    )  # fmt: skip


# ------------------------------------------------------------------ game-server side


@dataclass
class Takeover:
    """What a new stream starts from: its inbox cursor and the messages to send first."""

    cursor: bytes
    match_starts: list[bytes]
    requests: list[bytes]
    match_ends: list[bytes] = field(default_factory=list)  # of matches that ended while away


@dataclass(frozen=True)
class Answer:
    address: str  # the stream address
    request_id: str
    action: str
    ttl_ms: int
    think_ms: float = 0.0  # the bot's own time, as it told it (0: not told)
    edge_ms: float | None = None  # the time at the edge, from the request written to this answer read
    note: str | None = None  # the bot's note on this decision (cleaned, at most 1 KB)

    def reply(self) -> bytes:
        """The reply entry: ``E<edge ms> <bot ms> <action>`` from an edge that timed it (a game
        server), else ``A<action>``, or ``T<think ms> <action>`` when the bot told its time;
        ``N<edge ms|-> <bot ms> <note bytes> <note><action>`` when the bot sent a note."""
        if self.note:
            note = self.note.encode("utf-8")
            edge = "-" if self.edge_ms is None else f"{self.edge_ms:.3f}"
            head = f"{edge} {self.think_ms:.3f} {len(note)} ".encode()
            return REPLY_NOTED + head + note + self.action.encode("utf-8")
        if self.edge_ms is not None:
            timed = f"{self.edge_ms:.3f} {self.think_ms:.3f} ".encode()
            return REPLY_EDGE + timed + self.action.encode("utf-8")
        if self.think_ms > 0:
            return REPLY_TIMED + f"{self.think_ms:.3f} ".encode() + self.action.encode("utf-8")
        return REPLY_ACTION + self.action.encode("utf-8")


@dataclass(frozen=True)
class Reply:
    """A reply entry, parsed: an action (with the bot's own time and the edge's, when told)."""

    action: str
    bot_ms: float | None = None
    edge_ms: float | None = None
    note: str | None = None


def parse_reply(value: bytes) -> Reply:
    """A reply entry (``E...``, ``A...``, ``T...`` or ``N...``) -> its :class:`Reply`."""
    if value.startswith(REPLY_NOTED):
        edge, _, rest = value[1:].partition(b" ")
        told, _, rest = rest.partition(b" ")
        size, _, rest = rest.partition(b" ")
        length = int(size)
        bot_ms = float(told)
        return Reply(rest[length:].decode("utf-8", errors="replace"), bot_ms if bot_ms > 0 else None,
                     None if edge == b"-" else float(edge), rest[:length].decode("utf-8", errors="replace"))
    if value.startswith(REPLY_EDGE):
        edge, _, rest = value[1:].partition(b" ")
        told, _, action = rest.partition(b" ")
        bot_ms = float(told)
        return Reply(action.decode("utf-8", errors="replace"), bot_ms if bot_ms > 0 else None, float(edge))
    if value.startswith(REPLY_TIMED):
        told, _, action = value[1:].partition(b" ")
        return Reply(action.decode("utf-8", errors="replace"), float(told))
    if value.startswith(REPLY_ACTION):
        return Reply(value[1:].decode("utf-8", errors="replace"))
    raise ValueError(f"unexpected reply entry {value[:40]!r}")


def expired_entry(edge_ms: float) -> bytes:
    """The reply of an edge whose deadline passed with no legal answer (:data:`EXPIRE`)."""
    return REPLY_EXPIRED + f"{edge_ms:.3f}".encode()


_RUNNING_TO_THE_END: set[asyncio.Task[Any]] = set()  # (the loop keeps only weak references to tasks)


async def to_the_end(work: Coroutine[Any, Any, None]) -> None:
    """Await ``work`` in a task of its own: if the caller is cancelled meanwhile, the caller
    gets its CancelledError at once and ``work`` still runs to its end (a stream's wind-up,
    which must release its presence however its call is cancelled)."""
    task = asyncio.ensure_future(work)
    _RUNNING_TO_THE_END.add(task)
    task.add_done_callback(_RUNNING_TO_THE_END.discard)
    await asyncio.shield(task)


class InboxReader:
    """Reads one bot's inbox on a Redis connection of its own (``XREAD BLOCK`` holds it)."""

    def __init__(self, options: dict[str, Any], address: str) -> None:
        self._options = options
        self._key = inbox_key(address).encode()
        self._wire: Wire | None = None

    async def read(self, cursor: bytes, block_ms: int) -> list[tuple[bytes, bytes, bytes]]:
        """Entries after ``cursor`` as (entry id, kind, payload); waits up to ``block_ms``."""
        if self._wire is None:  # (one reader blocks for the same time at every read)
            self._wire = Wire(self._options, block_ms / 1000 + REPLY_MARGIN_S)
        wire = self._wire
        try:  # (no reply within the wire's timeout: its watchdog fails the read, TimeoutError)
            result = await wire.call("XREAD", "COUNT", INBOX_READ_COUNT, "BLOCK", block_ms,
                                     "STREAMS", self._key, cursor)
        except BaseException:
            await self.aclose()  # cancelled while blocked: the connection holds a reply to come
            raise
        if not result:
            return []
        # [[key, [[entry id, [field, value, ...]], ...]]]; workers write the fields k, m
        out = []
        for _key, entries in result:
            for entry_id, fields in entries:
                values = dict(zip(fields[::2], fields[1::2], strict=True))
                out.append((entry_id, values.get(b"k", b""), values.get(b"m", b"")))
        return out

    async def aclose(self) -> None:
        wire, self._wire = self._wire, None
        if wire is not None:
            await wire.close()


class GatewayRelay:
    """The game server's Redis calls (asyncio). One per game server process."""

    def __init__(self, redis: aioredis.Redis, presence_ttl_ms: int, url: str | None = None) -> None:
        self.redis = redis
        self.pool: aioredis.ConnectionPool = redis.connection_pool
        self.presence_ttl_ms = presence_ttl_ms
        # the hot paths (inboxes, answers) go through Wire connections to the same Redis: that
        # of ``url`` (TLS, Sentinel...), else that of the client's plain connection options
        if url is not None:
            self.options = wire_options(url)
        else:
            kwargs = self.pool.connection_kwargs
            self.options = {k: kwargs[k] for k in ("path", "host", "port", "db", "username", "password")
                            if kwargs.get(k) is not None}
        # the pipelined connection the answers of every stream share (it connects when first used)
        self.wire = Wire(self.options, COMMAND_TIMEOUT_S)

    async def close(self) -> None:
        await self.wire.close()
        await self.redis.aclose()

    async def takeover(self, address: str, conn_id: str) -> Takeover:
        """``address`` is the stream's (:func:`~atout_arena.core.keys.stream_address`);
        the bot's ``current`` pointer moves to it: seats that ask for no version come here."""
        ((cursor, starts, requests, ends),) = await self._call(
            "EVAL", TAKEOVER, 7,
            conn_key(address), inbox_key(address), pending_key(address), matches_key(address), CONNECTED_KEY,
            ended_key(address), current_key(split_address(address)[0]),
            conn_id, self.presence_ttl_ms, now_ms(), INBOX_MAXLEN, address, REQ_KEY_PREFIX,
        )  # fmt: skip
        return Takeover(cursor, list(starts), list(requests), list(ends))

    async def streams_of(self, bot_id: str) -> list[str]:
        """The live stream addresses of a bot on every game server (all its versions)."""
        (live,) = await self._call("ZRANGEBYSCORE", CONNECTED_KEY, now_ms(), "+inf")
        addresses = (a.decode() if isinstance(a, bytes) else a for a in live)
        return [a for a in addresses if split_address(a)[0] == bot_id]

    def inbox(self, address: str) -> InboxReader:
        return InboxReader(self.options, address)

    def post_answers(self, answers: Sequence[Answer]) -> asyncio.Future[Any]:
        """Hand the bots' answers to the workers waiting on them: one :data:`ANSWER` call,
        queued at once on the shared :attr:`wire` (it leaves with everything else the loop
        sends this turn, in one write). The future is done when Redis has them all."""
        keys: list[Any] = []
        argv: list[Any] = []
        for a in answers:
            rid = a.request_id
            keys += (reply_key(rid), pending_key(a.address), req_key(rid))
            argv += (rid, reply_entry(rid, a.reply()), a.ttl_ms)
        return self.wire.eval_soon(ANSWER, len(keys), *keys, *argv)

    async def heartbeat(self, address: str, conn_id: str) -> bool:
        """Renew the bot's presence; False when this stream is no longer the bot's live one."""
        (renewed,) = await self._call(
            "EVAL",
            HEARTBEAT,
            3,
            conn_key(address),
            CONNECTED_KEY,
            released_key(conn_id),
            conn_id,
            self.presence_ttl_ms,
            now_ms(),
            address,
        )
        return bool(renewed)

    async def release(self, address: str, conn_id: str, moved_ms: int = 0) -> None:
        """Give the address up (if this stream still holds it). ``moved_ms`` > 0: the arena
        ended the stream itself (a shutdown, a hand-over to another game server): the address
        reads as cut off by an outage for that long, or until the bot is back."""
        await self._call("EVAL", RELEASE, 3, conn_key(address), CONNECTED_KEY, released_key(conn_id), conn_id,
                         address, self.presence_ttl_ms, moved_ms)

    async def edge_deadline(self, address: str, request_id: str, deadline_ms: int) -> None:
        """The request's score in ``pending`` becomes its deadline at the edge (human seats:
        :data:`EDGE_DEADLINE`, what ANSWER_IF_PENDING checks)."""
        await self._call("EVAL", EDGE_DEADLINE, 1, pending_key(address), request_id, deadline_ms)

    def expire(self, address: str, conn_id: str, request_id: str, edge_ms: float) -> asyncio.Future[Any]:
        """The edge's verdict on a request whose deadline passed (:data:`EXPIRE`), queued on
        the shared wire; its result: 1 (the worker is told) or 0 (answered, or not this
        stream's any more)."""
        return self.wire.eval_soon(
            EXPIRE, 4, conn_key(address), pending_key(address), req_key(request_id), reply_key(request_id),
            conn_id, request_id, reply_entry(request_id, expired_entry(edge_ms)), 60_000,
        )  # fmt: skip

    async def count(self, key: str, field: str, amount: int) -> None:
        """``HINCRBY key field amount`` (a metric of :mod:`atout_arena.core.metrics`)."""
        await self._call("HINCRBY", key, field, amount)

    async def fault_pending(self, address: str) -> int:
        """Answer every decision waiting for the stream at ``address`` with
        ``disconnected``, at once (a revoked bot: its workers stop waiting). Returns how many."""
        (faulted,) = await self._call(
            "EVAL", FAULT_PENDING, 1, pending_key(address), reply_prefix(), REQ_KEY_PREFIX, 60_000,
            MAILBOX_PREFIX)
        return int(faulted)

    async def _call(self, *command: Any) -> list[Any]:
        return await call_async(self.pool, [command], COMMAND_TIMEOUT_S)


def answer_if_pending_command(answer: Answer) -> tuple[Any, ...]:
    """The whole ``EVAL`` of :data:`ANSWER_IF_PENDING` for ``answer`` (the API's human seats)."""
    return (
        "EVAL", ANSWER_IF_PENDING, 3,
        reply_key(answer.request_id), pending_key(answer.address), req_key(answer.request_id),
        answer.request_id, reply_entry(answer.request_id, answer.reply()), answer.ttl_ms, now_ms(),
    )  # fmt: skip


# ------------------------------------------------------------------ presence (anyone)


# ------------------------------------------------------------------ the contract's version

CONTRACT_TTL_MS = 10_000  # a part that did not renew its entry for this long is gone

# Register a part of the arena (ARGV[1], speaking contract version ARGV[2]) unless a live part
# of another version is registered: then that part and its version, and nothing is written.
# Expired entries go. ARGV[4] = 0: only look (a part that does not renew an entry).
CONTRACT = """
local entries = redis.call('HGETALL', KEYS[1])
local now = tonumber(ARGV[3])
for i = 1, #entries, 2 do
  local version, expiry = string.match(entries[i + 1], '^(%S+) (%d+)$')
  if expiry == nil or tonumber(expiry) < now then
    redis.call('HDEL', KEYS[1], entries[i])
  elseif entries[i] ~= ARGV[1] and version ~= ARGV[2] then
    return {entries[i], version}
  end
end
if ARGV[4] ~= '0' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[4])
end
return false
"""


class ContractMismatch(RuntimeError):  # noqa: N818 - a refusal, said in its message
    """A part of another version of the Redis contract is live on this Redis."""


def contract_command(part: str, ttl_ms: int = CONTRACT_TTL_MS,
                     version: int | str = CONTRACT_VERSION) -> tuple[Any, ...]:
    """The CONTRACT call that registers ``part`` for ``ttl_ms`` (0: only look)."""
    now = now_ms()
    return ("EVAL", CONTRACT, 1, CONTRACT_KEY, part, str(version), now, now + ttl_ms if ttl_ms else 0)


def contract_refusal(reply: Any, part: str, version: int | str = CONTRACT_VERSION) -> str | None:
    """What :data:`CONTRACT` answered, as the one line a refused part says (None: agreed)."""
    if not reply:
        return None
    other, other_version = (x.decode() if isinstance(x, bytes) else str(x) for x in reply)
    return (f"{part} speaks version {version} of the arena's Redis contract, but {other} (version "
            f"{other_version}) is live on this Redis: run one version at a time; to upgrade, stop "
            "every part of the old version first (docs/deployment.md, 'Upgrading')")


def check_contract(redis_client: Any, part: str, ttl_ms: int = CONTRACT_TTL_MS,
                   version: int | str = CONTRACT_VERSION) -> None:
    """Register ``part`` (sync client); :class:`ContractMismatch` while a part of another
    version is live."""
    refusal = contract_refusal(redis_client.execute_command(*contract_command(part, ttl_ms, version)),
                               part, version)
    if refusal is not None:
        raise ContractMismatch(refusal)


async def check_contract_async(redis_client: Any, part: str, ttl_ms: int = CONTRACT_TTL_MS,
                               version: int | str = CONTRACT_VERSION) -> None:
    """:func:`check_contract` with an asyncio client."""
    reply = await redis_client.execute_command(*contract_command(part, ttl_ms, version))
    refusal = contract_refusal(reply, part, version)
    if refusal is not None:
        raise ContractMismatch(refusal)


def connected_streams(redis: Any) -> list[str]:
    """Addresses of the live streams on every game server (sync client): present, and held by
    a game server that is alive (a killed server's streams stop counting within seconds)."""
    live = redis.eval(LIVE_STREAMS, 2, CONNECTED_KEY, SERVERS_KEY, now_ms(), "atout:bot:", ":conn")
    return [b.decode() if isinstance(b, bytes) else b for b in live]


def is_live(redis: Any, address: str) -> bool:
    """Whether the stream ``address`` is connected to a game server that is alive."""
    return bool(redis.eval(*live_conn_command(address)))


# A game server process's boot nonce: the first characters of its streams' connection ids
# (``<server id>/<boot><nonce>``), registered with its liveness. A stream of a server id whose
# registered boot differs belongs to a process that died: cut off by an outage (the server was
# restarted under the same id before its bots came back).
PROCESS_BOOT = secrets.token_hex(4)

SERVER_BEAT = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""


def server_beat_command(server_id: str, ttl_ms: int = SERVER_TTL_MS) -> tuple[Any, ...]:
    """A game server's liveness and its process's boot nonce (``ttl_ms`` 0: it stopped, its
    streams are gone)."""
    until = now_ms() + ttl_ms if ttl_ms else 0
    return ("EVAL", SERVER_BEAT, 2, SERVERS_KEY, SERVER_BOOTS_KEY, until, server_id, PROCESS_BOOT)


def connected_bots(redis: Any) -> list[str]:
    """Ids of the bots with a live stream (of any version) on some game server."""
    return sorted({split_address(address)[0] for address in connected_streams(redis)})


def seat_address(redis: Any, bot_id: int | str, version: str = "") -> str:
    """The stream address a seat of ``bot_id`` is played through: the stream of ``version``,
    or for no version the bot's most recently connected stream while it is live, else another
    live stream of the bot (the plain one first), else the bot's plain address (where an
    unversioned stream would connect)."""
    if version:
        return stream_address(bot_id, version)
    current = redis.get(current_key(str(bot_id)))
    if current:
        current = current.decode() if isinstance(current, bytes) else current
        if is_live(redis, current):
            return current
    live = bot_streams(redis, bot_id)
    return live[0] if live else str(bot_id)


def seat_addresses(redis: Any, seats: Sequence[tuple[int | str, str]]) -> list[str]:
    """:func:`seat_address` of every ``(bot id, version)``, in two round trips for them all
    (a seat whose bot's current stream is not live looks further, as :func:`seat_address`)."""
    pipe = redis.pipeline(transaction=False)
    for bot_id, _ in seats:
        pipe.get(current_key(str(bot_id)))
    currents = [c.decode() if isinstance(c, bytes) else c for c in pipe.execute()]
    pipe = redis.pipeline(transaction=False)
    for current in currents:
        if current:
            pipe.eval(*live_conn_command(current))
    live = iter(pipe.execute())
    addresses = []
    for (bot_id, version), current in zip(seats, currents, strict=True):
        alive = bool(next(live)) if current else False
        if version:
            addresses.append(stream_address(bot_id, version))
        elif alive:
            addresses.append(current)
        else:
            addresses.append(seat_address(redis, bot_id, version))
    return addresses


def bot_streams(redis: Any, bot_id: int | str) -> list[str]:
    """The live stream addresses of one bot, its unversioned one first."""
    mine = [a for a in connected_streams(redis) if split_address(a)[0] == str(bot_id)]
    return sorted(mine, key=lambda a: (a != str(bot_id), a))


def is_connected(redis: Any, bot_id: int | str, version: str = "") -> bool:
    """Whether a seat of ``bot_id`` (of ``version``, or of any) has a live stream to play on."""
    return is_live(redis, seat_address(redis, bot_id, version))


def are_connected(redis: Any, seats: Sequence[tuple[int | str, str]]) -> list[bool]:
    """:func:`is_connected` of every ``(bot id, version)``, in three round trips for them all."""
    addresses = seat_addresses(redis, seats)
    pipe = redis.pipeline(transaction=False)
    for address in addresses:
        pipe.eval(*live_conn_command(address))
    return [bool(live) for live in pipe.execute()] if addresses else []


# ------------------------------------------------------------------ clients
# The hot paths send their commands pipelined on one pooled connection and read the raw
# replies: a decision is one round trip, without redis-py's pipeline machinery.

CONNECT_TIMEOUT_S = 5.0
COMMAND_TIMEOUT_S = 10.0  # a non-blocking exchange with Redis
REPLY_MARGIN_S = 5.0  # a blocking command's reply may take its timeout plus this


def call_sync(pool: redis.ConnectionPool, commands: Sequence[tuple[Any, ...]], timeout_s: float) -> list[Any]:
    """Send ``commands`` in one write on one connection; return their raw replies in order.

    A command that fails raises its ``ResponseError`` after every reply was read (the
    connection stays usable); a broken or interrupted exchange drops the connection."""
    conn = pool.get_connection()
    try:
        conn.send_packed_command(conn.pack_commands(commands))
        replies, error = _read_all(conn, len(commands), timeout_s)
    except BaseException:
        conn.disconnect()
        raise
    finally:
        pool.release(conn)
    if error is not None:
        raise error
    return replies


def _read_all(conn: Any, count: int, timeout_s: float) -> tuple[list[Any], redis.ResponseError | None]:
    replies: list[Any] = []
    error = None
    for _ in range(count):
        try:
            replies.append(conn.read_response(timeout=timeout_s))
        except redis.ResponseError as exc:
            error = error or exc
            replies.append(exc)
    return replies, error


async def call_async(
    pool: aioredis.ConnectionPool, commands: Sequence[tuple[Any, ...]], timeout_s: float
) -> list[Any]:
    """:func:`call_sync` for asyncio (one timer for the whole exchange)."""
    conn = await pool.get_connection()  # type: ignore[no-untyped-call]  # (redis-py: no annotations)
    error = None
    replies: list[Any] = []
    try:
        async with asyncio.timeout(timeout_s):
            await conn.send_packed_command(pack_async(conn, commands))
            for _ in commands:
                try:
                    replies.append(await conn.read_response(timeout=math.inf))  # the timer above applies
                except redis.ResponseError as exc:
                    error = error or exc
                    replies.append(exc)
    except TimeoutError as exc:
        await conn.disconnect(nowait=True)
        raise redis.TimeoutError(f"no reply from Redis within {timeout_s:.1f} s") from exc
    except BaseException:
        await conn.disconnect(nowait=True)
        raise
    finally:
        await pool.release(conn)
    if error is not None:
        raise error
    return replies


def pack_async(conn: Any, commands: Sequence[tuple[Any, ...]]) -> Any:
    """The wire bytes of ``commands`` for an asyncio connection: hiredis's packer when installed
    (the same bytes, about 4x cheaper: it counts on the game server's hot path), else redis-py's."""
    if _hiredis_pack is None:
        return conn.pack_commands(commands)
    return b"".join([_hiredis_pack(command) for command in commands])


def make_async_redis(url: str) -> aioredis.Redis:
    """An asyncio client for ``url`` (any of :mod:`~atout_arena.core.redis_conn`'s; hiredis
    parses when installed) for :func:`call_async` and :class:`InboxReader`, whose timers bound
    every exchange: the connections get no socket timeout of their own (redis-py would wrap
    each write in a task)."""
    return async_client(url, socket_timeout=None, socket_connect_timeout=CONNECT_TIMEOUT_S, protocol=2)


# ------------------------------------------------------------------ control channel


def publish_revocation(redis_client: Any, bot_id: int | str, reason: str) -> int:
    """Tell every game server (sync client) that ``bot_id`` lost its right to play (``reason``:
    ``disabled`` or ``token_rotated``): they close its streams within a second and fault its
    open decisions ``disconnected``. Returns how many game servers heard it."""
    message = json.dumps({"revoke": str(bot_id), "reason": reason})
    return int(redis_client.publish(CONTROL_CHANNEL, message))


def publish_stop(redis_client: Any, match_ids: Sequence[int], reason: str) -> int:
    """Tell every worker (sync client) to stop these running matches at once (``reason``, a
    line for their logs): the database says ``cancelled`` already (their result would not be
    stored), so the worker playing one stops waiting for its current decision, tells its bots
    the match ended (``cancelled``) and frees its slot. Returns how many processes heard it."""
    if not match_ids:
        return 0
    message = json.dumps({"stop": [int(m) for m in match_ids], "reason": reason})
    return int(redis_client.publish(CONTROL_CHANNEL, message))


def parse_stop(data: bytes | str) -> tuple[list[int], str] | None:
    """(match ids, reason) of a control message of :func:`publish_stop`; None when it is not one."""
    try:
        message = json.loads(data)
        return [int(m) for m in message["stop"]], str(message.get("reason", "cancelled"))
    except (ValueError, TypeError, KeyError):
        return None


def parse_control(data: bytes | str) -> tuple[str, str] | None:
    """(bot id, reason) of a control message; None when it is not one."""
    try:
        message = json.loads(data)
        return str(message["revoke"]), str(message.get("reason", "revoked"))
    except (ValueError, TypeError, KeyError):
        return None
