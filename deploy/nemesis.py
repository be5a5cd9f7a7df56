"""The multi-host rehearsal with a nemesis: deploy/rehearsal.py's arena on four hosts (network
namespaces, deploy/netns.py), broken on purpose step by step during one tournament.

    deploy/rehearse.sh --nemesis [--short] [--workdir DIR] [--base-port N] [--keep]   # as root

Hosts (one namespace each, on one switch; the rehearsal itself reads them from the root
namespace through its own link): *edge* (HAProxy, two game servers), *compute* (three workers,
the practice worker, beat), *data* (Redis, PostgreSQL, the API, Prometheus), *bots* (eight SDK
bots, which know HAProxy's address only).

During the tournament, each step while matches are in flight (:data:`FULL`; :data:`SHORT` the
same steps, shorter, for CI):

1. ``sigstop``: game server 1 gets SIGSTOP (a hung process: its sockets still accept), 60 s,
   then SIGKILL, and is started again;
2. ``partition``: no packet between compute and data for 10 s;
3. ``loss``: 5% of the packets between bots and edge dropped for 30 s;
4. ``kill-worker``: worker 2 killed with SIGKILL, and started again;
5. ``failover-redis``: the Redis primary killed with SIGKILL; the sentinels promote the replica
   (what the old primary had not yet replicated is lost: the arena's loss, never a bot's), and
   the old primary is started again as the new one's replica;
6. ``kill-api``: one of the two APIs killed with SIGKILL (every API call goes through HAProxy's
   TLS frontend to the other), and started again;
7. ``restart-postgres``: PostgreSQL stopped (fast shutdown) and started again;
8. ``rolling-restart``: game server 1, then game server 2, SIGTERM and started again, each
   once HAProxy sees the one before up.

The arena runs as docs/deployment.md's three-machine guide sets it up (``secure``): every bot
connection and API call over TLS (a CA made for the run with ``openssl``), Redis behind a
password with a replica and three sentinels, two APIs. After the tournament, a backup of the
database is restored into a fresh PostgreSQL and every match verified there by replay.

What each step cost is measured (:class:`StepReport`) over its window, from its start to the
next step's (the last one's to the tournament's end): faults and forfeits charged to the bots,
matches finished, decisions/s, the time until bots are balanced again after a game server came
back, and the share of Prometheus's scrapes that found each target up. A fault's time is not
stored: it is estimated from its match's ``started_at`` and ``finished_at``, spread by the think
times of the steps before it (a decision that waited 15 s for a reconnecting bot moves its
match's later faults 15 s later); Prometheus's ``increase(atout_faults_total)`` over the same
window is given beside it. :func:`problems` says what misses the goals (0 faults, 0 forfeits,
one verified result per match, every part back, each game server holding a third of the bots,
every target up on 95% of the scrapes).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import netns
import rehearsal as rh


@dataclass(frozen=True)
class Schedule:
    name: str
    sigstop_s: float  # how long game server 1 stays stopped before its kill -9
    partition_s: float
    loss_s: float
    loss_percent: int
    warmup_s: float  # the tournament runs this long before the first step
    gap_s: float  # between two steps: matches go on, parts settle
    rebalance_timeout_s: float  # at the end: how long bots may take to spread again
    deals: int  # merde's deals a match: 4n + 2n(n+1) decisions, the tournament's length
    # the bots' think time a decision (ms): paces the tournament so that matches are still in
    # flight at the last step (unpaced bots finish it first)
    bot_think_ms: int = 0


# The schedule. 13 deals (416 decisions a match, the most for 4 players; 468 matches, the
# most for 8 bots), bots thinking 30 ms a decision: longer than the steps (about 3 minutes with
# 5 s between them).
FULL = Schedule("full", sigstop_s=60, partition_s=10, loss_s=30, loss_percent=5, warmup_s=10, gap_s=5,
                rebalance_timeout_s=60, deals=13, bot_think_ms=30)
# CI's: the same steps, shorter; the whole run under 5 minutes. The stop still outlasts the 15 s
# reconnect grace (ATOUT_RECONNECT_GRACE_S), the case a hung game server is about; 9 deals (216
# decisions a match): about 2 minutes of tournament.
SHORT = Schedule("short", sigstop_s=20, partition_s=5, loss_s=10, loss_percent=5, warmup_s=5, gap_s=3,
                 rebalance_timeout_s=30, deals=9, bot_think_ms=25)

STEPS = ("sigstop", "partition", "loss", "kill-worker", "failover-redis", "kill-api", "restart-postgres",
         "rolling-restart")
AVAILABILITY_GOAL = 0.95
SAMPLE_S = 0.5  # how often presence (bots per game server) is read


def balanced(counts: dict[str, int] | None) -> bool:
    """Each game server holds at least a third of the bots (every bot connected)."""
    if not counts:
        return False
    return all(counts.get(s, 0) >= rh.BOTS / 3 for s in rh.GAME_SERVERS) and "none" not in counts


@dataclass
class StepReport:
    name: str
    what: str
    start: float  # wall clock (time.time())
    fault_over: float = 0.0  # when the fault ended (healed, parts back)
    end: float = 0.0  # the window's end: the next step's start
    in_flight: int = 0  # matches running when it began
    matches: int = 0  # finished in the window
    decisions: int = 0  # estimated in the window
    faults: int = 0  # stored faults whose estimated time is in the window
    faults_metric: float = 0.0  # increase(atout_faults_total) over the window
    forfeits: int = 0  # forfeited seats whose last fault is in the window
    back_up: float | None = None  # a game server started again: when HAProxy saw it up
    rebalance_s: float | None = None  # from back_up until balanced (None: not within the window)
    availability: dict[str, float] = field(default_factory=dict)  # Prometheus job -> share of up

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds if self.seconds else 0.0

    def line(self, t0: float) -> str:
        rebalance = ("-" if self.back_up is None else
                     "never" if self.rebalance_s is None else f"{self.rebalance_s:.1f} s")
        low = min(self.availability.values()) if self.availability else float("nan")
        lasted = self.fault_over - self.start
        return (f"{self.name:<17} {self.start - t0:6.1f} {lasted:6.1f} {self.seconds:6.1f} "
                f"{self.in_flight:5d} {self.matches:6d} {self.decisions_per_s:8.0f} {self.faults:6d} "
                f"{self.faults_metric:6.0f} {self.forfeits:5d} {rebalance:>9} {low:7.1%}")


@dataclass
class NemesisReport:
    base: rh.Report
    schedule: str = ""
    steps: list[StepReport] = field(default_factory=list)  # "before" (warm-up) first, then STEPS
    t0: float = 0.0  # the tournament's start (wall clock)
    replays: int = 0  # matches checked by replay (GET /v1/matches/{id}/check)
    replays_bad: list[str] = field(default_factory=list)  # "id: why"
    forfeits: int = 0
    absent: int = 0
    availability: dict[str, float] = field(default_factory=dict)  # over the whole run
    bots_end: dict[str, int] = field(default_factory=dict)
    rebalance_s: float | None = None  # after the last restart (the rolling restart's second server)
    not_back: list[str] = field(default_factory=list)  # parts not back at the end
    rules: list[str] = field(default_factory=list)  # the switch's rules left at the end (should be none)
    # the Redis failover: old and new primary, seconds until the sentinels named the new one
    failover: dict[str, object] = field(default_factory=dict)
    replayed: int = 0  # matches voided and played again from their seed (the arena's outages)
    claims: int = 0  # claims of the tournament's matches (one each when no worker died or voided)
    # the backup drill: seconds, bytes, (matches, finished, ranking length) in the arena's
    # database and in the restored one, and the restored database's replay verdict
    backup: dict[str, object] = field(default_factory=dict)

    def summary(self) -> str:
        b = self.base
        lines = [
            f"schedule {self.schedule}: hosts {b.hosts}",
            f"matches: {b.matches} scheduled, {b.results} with one stored result ({b.statuses}); "
            f"verified by replay: {self.replays - len(self.replays_bad)}/{b.matches}"
            + (f"; bad: {self.replays_bad[:5]}" if self.replays_bad else ""),
            f"decisions: {b.decisions} in {b.seconds:.1f} s = {b.decisions_per_s:.0f}/s; played by fallback: "
            f"{b.fallbacks}; faults stored: {b.faults}, atout_faults_total: {b.faults_metric:g}; "
            f"forfeited seats: {self.forfeits} (absent: {self.absent})",
            "per step (s from the tournament's start; fault: how long it lasted; window: until the next "
            "step; busy: matches in flight at its start; metric: increase(atout_faults_total); scrape: the "
            "lowest share of scrapes that found a target up):",
            "step               start  fault window  busy matches  decis/s faults metric forf. rebalance "
            " scrape",
            *(step.line(self.t0) for step in self.steps),
            f"bots per game server: before {b.bots_before}; at the end {self.bots_end}; balanced "
            + ("never" if self.rebalance_s is None else f"{self.rebalance_s:.1f} s")
            + " after the last restart",
            "Prometheus targets up (share of scrapes over the run): "
            + ", ".join(f"{job} {share:.1%}" for job, share in sorted(self.availability.items())),
            f"parts not back at the end: {self.not_back or 'none'}",
            f"Redis failover: {self.failover or 'none'}; matches played again from their seed (voided "
            f"by an outage): {self.replayed}; claims: {self.claims}",
            f"backup drill: {self.backup or 'not run'}",
        ]
        return "\n".join(lines)


def problems(report: NemesisReport) -> list[str]:
    """What misses the issue's goals (empty: the arena passed the nemesis)."""
    b = report.base
    found = []
    if b.matches < 100 or b.results != b.matches or b.statuses != {"finished": b.matches}:
        found.append(f"{b.results} of {b.matches} matches have one stored result: {b.statuses}")
    if b.rating_rows_bad:
        found.append(f"{b.rating_rows_bad} matches without exactly one rating change per seat")
    if report.replays != b.matches or report.replays_bad:
        found.append(f"{report.replays - len(report.replays_bad)} of {b.matches} matches verified by replay: "
                     f"{report.replays_bad[:5]}")
    for step in report.steps:
        if step.faults or step.forfeits:
            found.append(f"{step.name}: {step.faults} faults, {step.forfeits} forfeits charged to "
                         "healthy bots")
        if step.name != "before" and step.in_flight == 0:
            found.append(f"{step.name}: no match in flight when it began (longer: Schedule.deals)")
    if b.faults != sum(s.faults for s in report.steps):
        found.append(f"{b.faults} faults stored, {sum(s.faults for s in report.steps)} placed in a window")
    if report.not_back:
        found.append(f"not back at the end: {report.not_back}")
    if not balanced(report.bots_end):
        found.append(f"bots not balanced at the end (each game server a third): {report.bots_end}")
    low = {job: share for job, share in report.availability.items() if share < AVAILABILITY_GOAL}
    if not report.availability or low:
        found.append(f"Prometheus targets up on less than {AVAILABILITY_GOAL:.0%} of the scrapes: "
                     f"{low or report.availability}")
    if report.rules:
        found.append(f"the switch still drops packets: {report.rules}")
    if report.steps and "failover-redis" in [s.name for s in report.steps] and not report.failover.get("new"):
        found.append(f"no Redis replica promoted: {report.failover}")
    drill = report.backup
    if not drill.get("matches") or drill.get("matches") != drill.get("restored"):
        found.append(f"backup drill: the restored database differs: {drill}")
    elif drill.get("verified_ok") is not True:
        found.append(f"backup drill: not every restored match verified by replay: {drill}")
    return found


class Sampler(threading.Thread):
    """Reads bots per game server from Redis every :data:`SAMPLE_S` (None while Redis is down)."""

    def __init__(self, run: rh.Rehearsal) -> None:
        super().__init__(daemon=True, name="presence-sampler")
        self.run_ = run
        self.samples: list[tuple[float, dict[str, int] | None]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                counts: dict[str, int] | None = self.run_.bots_per_server()
            except Exception:  # Redis restarting: a gap in the samples
                counts = None
            self.samples.append((time.time(), counts))
            self.stopping.wait(SAMPLE_S)

    def balanced_at(self, after: float, before: float = math.inf) -> float | None:
        return next((t for t, c in list(self.samples) if after <= t < before and balanced(c)), None)


class Nemesis:
    """The steps of one schedule on a started multi-host :class:`rehearsal.Rehearsal`."""

    def __init__(self, run: rh.Rehearsal, schedule: Schedule) -> None:
        self.run, self.schedule = run, schedule
        self.hosts: netns.Hosts = run.hosts
        self.say = run.say
        self.steps: dict[str, Callable[[StepReport], None]] = {
            "sigstop": self.sigstop, "partition": self.partition, "loss": self.loss,
            "kill-worker": self.kill_worker, "failover-redis": self.failover_redis, "kill-api": self.kill_api,
            "restart-postgres": self.restart_postgres, "rolling-restart": self.rolling_restart,
        }
        self.failover: dict[str, object] = {}  # the Redis failover's figures (NemesisReport.failover)

    def pause(self, seconds: float) -> None:
        """Sleep, but stop at once if a part that should run died (its log's tail is raised)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.run.procs.check_alive()
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))

    def restart_game_server(self, name: str, sig: int, label: str, step: StepReport) -> None:
        code = self.run.procs.stop(name, sig, timeout=30)
        self.run.retire(name, label)
        self.say(f"  {name}: {signal.Signals(sig).name}, exited {code}; starting it again")
        self.run.start_game_server(name)
        self.run.wait_up_in_lb(name, 60)
        step.back_up = time.time()
        self.say(f"  {name}: up in HAProxy")

    def sigstop(self, step: StepReport) -> None:
        s = self.schedule.sigstop_s
        step.what = f"SIGSTOP gameserver-1 {s:g} s, kill -9, start"
        self.run.procs.send("gameserver-1", signal.SIGSTOP)
        self.say(f"  gameserver-1: SIGSTOP for {s:g} s")
        self.pause(s)
        self.restart_game_server("gameserver-1", signal.SIGKILL, "sigstop", step)

    def partition(self, step: StepReport) -> None:
        s = self.schedule.partition_s
        step.what = f"partition compute | data {s:g} s"
        self.hosts.partition("compute", "data")
        try:
            self.pause(s)
        finally:
            self.hosts.heal()

    def loss(self, step: StepReport) -> None:
        s, percent = self.schedule.loss_s, self.schedule.loss_percent
        step.what = f"{percent}% loss bots <-> edge {s:g} s"
        self.hosts.loss("bots", "edge", percent)
        try:
            self.pause(s)
        finally:
            self.hosts.heal()

    def kill_worker(self, step: StepReport) -> None:
        step.what = "kill -9 worker-2, start"
        code = self.run.procs.stop("worker-2", signal.SIGKILL)
        self.run.retire("worker-2", "nemesis")
        self.say(f"  worker-2: SIGKILL, exited {code}; starting it again")
        self.run.start_worker(2)

    def failover_redis(self, step: StepReport) -> None:
        old = self.run.redis_primary()
        if old is None:
            raise RuntimeError("rehearsal: no sentinel names a Redis primary")
        step.what = f"kill -9 the Redis primary ({old}): a sentinel promotes the replica"
        began = time.monotonic()
        code = self.run.procs.stop(old, signal.SIGKILL)
        self.run.retire(old, "nemesis")
        new = rh.wait_until(lambda: (n := self.run.redis_primary()) not in (None, old) and n, 60,
                            "the sentinels to promote the replica", poll_s=0.05)
        promoted_s = time.monotonic() - began
        self.say(f"  {old}: SIGKILL, exited {code}; {new} promoted after {promoted_s:.1f} s; "
                 f"starting {old} again as its replica")
        self.run.start_redis(old, replica_of=new)
        self.failover.update(old=old, new=new, promote_s=round(promoted_s, 2))

    def kill_api(self, step: StepReport) -> None:
        step.what = "kill -9 api (the other one serves), start"
        code = self.run.procs.stop("api", signal.SIGKILL)
        self.run.retire("api", "nemesis")
        self.say(f"  api: SIGKILL, exited {code}; the API through HAProxy: "
                 f"{rh.http_text(f'{self.run.api}/healthz')[0]}")
        self.pause(self.schedule.gap_s)
        self.run.start_api("api")

    def restart_postgres(self, step: StepReport) -> None:
        step.what = "restart PostgreSQL (fast shutdown, start)"
        code = self.run.postgres.stop("nemesis")
        self.say(f"  postgres: stopped ({code}); starting it again")
        self.run.postgres.serve()

    def rolling_restart(self, step: StepReport) -> None:
        step.what = "SIGTERM gameserver-1, start; then gameserver-2"
        for name in rh.GAME_SERVERS:
            self.restart_game_server(name, signal.SIGTERM, "rolling", step)

    def in_flight(self, tournament: int) -> int:
        import sqlalchemy

        with self.run._engine.connect() as db:
            return int(db.execute(sqlalchemy.text(
                "SELECT count(*) FROM matches WHERE tournament_id = :t AND status = 'running'"),
                {"t": tournament}).scalar_one())

    def done(self, tournament: int) -> bool:
        with contextlib.suppress(Exception):  # the API may be down (PostgreSQL's restart)
            progress = self.run.progress(tournament)
            return bool(progress["done"] >= progress["total"])
        return False

    def play(self, tournament: int, report: NemesisReport) -> None:
        """Every step of the schedule, in order, while the tournament runs; then wait for its end."""
        self.pause(self.schedule.warmup_s)
        for i, name in enumerate(STEPS, 1):
            step = StepReport(name, "", time.time())
            step.in_flight = self.in_flight(tournament)
            self.steps[name](step)
            step.fault_over = time.time()
            self.say(f"step {i} {name}: {step.what}; {step.in_flight} matches in flight; "
                     f"over after {step.fault_over - step.start:.1f} s")
            report.steps.append(step)
            report.failover = self.failover
            self.pause(self.schedule.gap_s)
        deadline = time.monotonic() + 1800
        while not self.done(tournament):
            if time.monotonic() > deadline:
                raise RuntimeError("rehearsal: the tournament did not end within 30 minutes")
            self.pause(1)


def place(time_of: float, steps: list[StepReport]) -> StepReport | None:
    return next((s for s in steps if s.start <= time_of < s.end), None)


def measure(run: rh.Rehearsal, tournament: int, report: NemesisReport, sampler: Sampler,
            ended: float) -> None:
    """Fill each step's window figures from PostgreSQL, Prometheus and the presence samples."""
    import sqlalchemy

    steps = report.steps
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        step.end = after.start if after else ended
    with run._engine.connect() as db:
        matches = db.execute(sqlalchemy.text(
            "SELECT id, started_at, finished_at, actions FROM matches WHERE tournament_id = :t"),
            {"t": tournament}).all()
        seats = db.execute(sqlalchemy.text(
            "SELECT s.match_id, s.seat, s.forfeited, s.absent FROM match_seats s JOIN matches m "
            "ON m.id = s.match_id WHERE m.tournament_id = :t"), {"t": tournament}).all()
    last_fault: dict[tuple[int, int], float] = {}
    span: dict[int, tuple[float, float]] = {}
    for match in matches:
        if match.started_at is None or match.finished_at is None:
            continue
        begun, over = match.started_at.timestamp(), match.finished_at.timestamp()
        span[match.id] = (begun, over)
        if (done_in := place(over, steps)) is not None:
            done_in.matches += 1
        rows = match.actions or []
        # each decision's share of the match's wall time: its think time (+1 ms: the arena's own)
        weights = [float(row[3]) + 1.0 for row in rows]
        total, elapsed = sum(weights) or 1.0, 0.0
        for row, weight in zip(rows, weights, strict=True):
            elapsed += weight
            at = begun + (over - begun) * elapsed / total
            if (decided_in := place(at, steps)) is not None:
                decided_in.decisions += 1
                decided_in.faults += len(row[4])
            if row[4]:
                last_fault[(match.id, int(row[0]))] = at
    for seat in seats:
        report.absent += bool(seat.absent)
        if seat.forfeited:
            report.forfeits += 1
            begun, over = span.get(seat.match_id, (ended, ended))
            at = last_fault.get((seat.match_id, seat.seat), begun if seat.absent else over)
            if (lost_in := place(at, steps)) is not None:
                lost_in.forfeits += 1
    jobs = list(report.base.targets) or ["atout-api", "atout-gateway-lb", "prometheus"]
    for step in steps:
        window = max(1, round(step.seconds))
        step.faults_metric = prometheus_scalar(run, f"sum(increase(atout_faults_total[{window}s]))", step.end)
        for job in jobs:
            step.availability[job] = prometheus_scalar(run, availability(job, window), step.end, math.nan)
        if step.back_up is not None:
            step.rebalance_s = _since(step.back_up, sampler.balanced_at(step.back_up, step.end))
    whole = max(1, round(time.time() - report.t0))
    for job in jobs:
        report.availability[job] = prometheus_scalar(run, availability(job, whole), time.time(), math.nan)


def availability(job: str, seconds: int) -> str:
    """The share of the last ``seconds`` in which ``job`` was served: some target of it up (one
    API of two killed leaves the API served; the lone target of a job is the job)."""
    return f'avg_over_time((max(up{{job="{job}"}}))[{seconds}s:1s])'


def _since(start: float, then: float | None) -> float | None:
    return None if then is None else then - start


def prometheus_scalar(run: rh.Rehearsal, query: str, at: float, empty: float = 0.0) -> float:
    try:
        result = run.prometheus("/api/v1/query", query=query, time=f"{at:.3f}")["data"]["result"]
    except (OSError, RuntimeError, KeyError):
        return math.nan
    return float(result[0]["value"][1]) if result else empty


def check_replays(run: rh.Rehearsal, tournament: int, report: NemesisReport) -> None:
    """Every match re-run from its seed and actions by the API (``GET /v1/matches/{id}/check``)."""
    import sqlalchemy

    with run._engine.connect() as db:
        ids = [row.id for row in db.execute(sqlalchemy.text(
            "SELECT id FROM matches WHERE tournament_id = :t ORDER BY id"), {"t": tournament})]
    for match_id in ids:
        try:
            answer = rh.http_json(f"{run.api}/v1/matches/{match_id}/check", token=run.admin)
        except (OSError, RuntimeError) as error:
            report.replays_bad.append(f"{match_id}: {str(error)[:120]}")
        else:
            if not answer.get("ok"):
                report.replays_bad.append(f"{match_id}: {answer.get('divergence')}")
        report.replays += 1


def count_replayed(run: rh.Rehearsal, tournament: int, report: NemesisReport) -> None:
    import sqlalchemy

    with run._engine.connect() as db:
        errors, claims = db.execute(sqlalchemy.text(
            "SELECT coalesce(sum(errors), 0), coalesce(sum(attempts), 0) FROM matches "
            "WHERE tournament_id = :t"), {"t": tournament}).one()
    report.replayed, report.claims = int(errors), int(claims)


def arena_command(run: rh.Rehearsal, database_url: str, *args: str, timeout: float = 600) -> str:
    """``atout-arena ARGS`` on ``database_url`` (from the operator's end); its output, or raises
    with it when it fails."""
    import os
    import subprocess

    env = {**os.environ, "ATOUT_DATABASE_URL": database_url,
           "ATOUT_DATA_DIR": str(run.workdir / "data" / "ops")}
    done = subprocess.run([str(rh.BIN / "atout-arena"), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"rehearsal: atout-arena {' '.join(args)}: exit {done.returncode}: "
                           f"{(done.stdout + done.stderr)[-2000:]}")
    return done.stdout + done.stderr


def backup_drill(run: rh.Rehearsal, report: NemesisReport) -> None:
    """The backup's round trip: ``atout-arena backup`` of the arena's database (it runs on),
    ``atout-arena restore`` into a fresh PostgreSQL on the data host, and every match of the
    restored database verified by replay (``atout-arena verify``), its count compared."""
    import sqlalchemy

    drill: dict[str, object] = {}
    report.backup = drill
    backup = run.workdir / "atout.backup"
    began = time.monotonic()
    arena_command(run, run.postgres.url, "backup", str(backup))
    drill["backup_s"] = round(time.monotonic() - began, 1)
    drill["bytes"] = backup.stat().st_size
    fresh = rh.Postgres(Path(tempfile.mkdtemp(prefix="atout-rr-")), run.ports["postgres-restore"], run.procs,
                        run.address("postgres-restore"), run.on("postgres-restore"), name="postgres-restore")
    try:
        fresh.start()
        began = time.monotonic()
        arena_command(run, fresh.url, "restore", str(backup))
        drill["restore_s"] = round(time.monotonic() - began, 1)
        counts = []
        for url in (run.postgres.url, fresh.url):
            engine = sqlalchemy.create_engine(url)
            try:
                with engine.connect() as db:
                    counts.append(tuple(db.execute(sqlalchemy.text(
                        "SELECT count(*), count(*) FILTER (WHERE status = 'finished'), "
                        "coalesce(sum(length(ranking::text)), 0) FROM matches")).one()))
            finally:
                engine.dispose()
        drill["matches"], drill["restored"] = counts
        began = time.monotonic()
        try:  # exit 1 on any divergence
            verified = arena_command(run, fresh.url, "verify")
        except RuntimeError as error:
            drill["verified_ok"], verified = False, str(error)
        else:
            drill["verified_ok"] = True
        drill["verify_s"] = round(time.monotonic() - began, 1)
        drill["verified"] = verified.strip().splitlines()[-1][:300] if verified.strip() else ""
    finally:
        with contextlib.suppress(Exception):
            fresh.stop("drill")
        shutil.rmtree(fresh.directory, ignore_errors=True)


def check_back(run: rh.Rehearsal, report: NemesisReport) -> None:
    """Every part running, both game servers up in HAProxy, the API healthy, every target up."""
    with contextlib.suppress(RuntimeError):
        run.procs.check_alive()
    report.not_back += [name for name, part in run.procs.parts.items()
                        if not name.startswith("stopped") and part.process.poll() is not None]
    metrics = rh.http_text(run.lb_url("/metrics"))[1]
    report.not_back += [f"{name} (down in HAProxy)" for name in rh.GAME_SERVERS
                        if rh.UP.format(name) not in metrics]
    if rh.http_text(f"{run.api}/healthz")[0] != 200:
        report.not_back.append("api (/healthz not 200)")
    targets = run.prometheus_targets()
    report.base.targets = targets
    report.not_back += [f"Prometheus target {job} {health}" for job, health in targets.items()
                        if health != "up"]
    rules = run.hosts.rules()
    report.rules = [line.strip() for line in rules.splitlines() if line.strip().endswith("drop")]


def rehearse(workdir: Path, schedule: Schedule = FULL, log: Callable[[str], None] = print,
             base_port: int | None = None, keep: bool = False) -> NemesisReport:
    """The whole multi-host rehearsal: make the hosts, start the arena on them, play one
    tournament through the nemesis, measure, stop everything and delete the hosts (also on
    failure; with ``keep``, after Ctrl-C). Raises :class:`netns.NamespaceError` saying why where
    namespaces cannot be made."""
    hosts = netns.Hosts.create(list(rh.HOSTS))
    try:
        with rh.rehearsal(workdir, log, hosts, base_port, schedule.bot_think_ms, secure=True) as run:
            report = NemesisReport(run.report, schedule.name)
            spec = {**rh.TOURNAMENT, "name": f"nemesis-{schedule.name}", "options": {"deals": schedule.deals},
                    "bots": list(run.bots)}
            tournament = int(rh.http_json(f"{run.api}/v1/tournaments", "POST", spec, run.admin)["id"])
            report.t0 = time.time()
            total = run.progress(tournament)["total"]
            log(f"tournament {tournament}: {total} matches of merde {spec['options']}; nemesis {schedule}")
            sampler = Sampler(run)
            sampler.start()
            before = StepReport("before", "warm-up: no fault", report.t0, fault_over=report.t0)
            report.steps.append(before)
            began = time.monotonic()
            try:
                Nemesis(run, schedule).play(tournament, report)
                ended = time.time()
                run.report.seconds = time.monotonic() - began
                log(f"tournament {tournament}: done in {run.report.seconds:.1f} s")
                # the last restart: bots get until rebalance_timeout_s after it to spread again
                last = report.steps[-1].back_up or ended
                deadline = last + schedule.rebalance_timeout_s
                while sampler.balanced_at(last) is None and time.time() < deadline:
                    time.sleep(SAMPLE_S)
            finally:
                sampler.stopping.set()
                sampler.join(5)
            report.rebalance_s = _since(last, sampler.balanced_at(last))
            report.bots_end = run.bots_per_server()
            run.check_results(tournament)
            run.check_prometheus()
            check_back(run, report)
            measure(run, tournament, report, sampler, ended)
            check_replays(run, tournament, report)
            count_replayed(run, tournament, report)
            backup_drill(run, report)
            # kept beside the logs: what a CI run under xdist (which hides stdout) measured
            (workdir / "report.txt").write_text(report.summary() + "\n" + "".join(
                f"FAILED: {problem}\n" for problem in problems(report)))
            if keep:
                print(report.summary(), flush=True)
                run.keep()
            return report
    finally:
        hosts.close()


def main(argv: list[str] | None = None) -> int:
    args = rh.arguments("Rehearse the scaled-out arena on four hosts (network namespaces) with a nemesis.",
                        argv)
    # a SIGTERM (a CI timeout, kill) cleans up as Ctrl-C does: through the finally blocks
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="atout-nemesis-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        report = rehearse(workdir, SHORT if args.short else FULL,
                          log=lambda line: print(f"[{time.monotonic() - started:6.1f} s] {line}", flush=True),
                          base_port=args.base_port, keep=args.keep)
    except netns.NamespaceError as error:
        print(f"rehearsal: cannot make the hosts: {error}", file=sys.stderr)
        return 2
    print(report.summary())
    found = problems(report)
    for problem in found:
        print(f"FAILED: {problem}")
    print(f"nemesis rehearsal passed in {time.monotonic() - started:.0f} s" if not found else
          f"nemesis rehearsal failed ({len(found)} problems) in {time.monotonic() - started:.0f} s; "
          f"logs in {workdir / 'logs'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
