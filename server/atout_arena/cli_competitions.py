"""The organizer's ``atout-arena`` subcommands (wired in by :func:`register`): each one a call
of the running arena's REST API through :mod:`atout_arena.client` — never the database or
Redis of the current directory, so that none can create a stray ``./var/atout.db``.

    atout-arena bots add NAME [--owner OWNER] [--human [--move-ms MS]]
                                                     register a bot (or a person); prints its token once
    atout-arena bots list | rotate NAME | disable NAME | enable NAME
    atout-arena tournament create NAME --game merde --bots a,b,c,d [--players 4]
               [--option deals=2] [--games-per-pairing 1] [--duplicate] [--move-ms 1000]
               [--time-bank-ms 0] [--max-faults 3] [--seed S] [--start] [--wait]
    atout-arena tournament start ID [--wait] | cancel ID | show ID | list
    atout-arena league create NAME --game G --bots a,b,c [--every 1d] (and the options above)
    atout-arena league season NAME | join NAME BOT... | leave NAME BOT... | show NAME
    atout-arena ladder create NAME --game G [--bot A --bot B ...] [--target-in-flight 4]
    atout-arena ladder show ID | pause ID | resume ID
    atout-arena test create A B --game G [--players N] [--sprt 0,5] [--max-games N] [--wait]
    atout-arena test show ID | cancel ID | list [--status S] [--bot B] [--limit N]
    atout-arena match show ID | list [--tournament T] [--bot B] | retry ID
    atout-arena match export ID [-o FILE]            a finished match in the record format (docs/record.md)
    atout-arena replay MATCH_ID                      replay a stored match; exit 1 if it diverges

Every one takes ``--api URL`` (default: the config file ``atout-arena up`` writes, else
http://127.0.0.1:8000; an ``https://`` one with ``--ca FILE`` or ``ATOUT_CA_FILE`` when a private
CA signed its certificate) and ``--json`` (the API's answer as it is, for scripts); the organizer
token is ``ATOUT_ADMIN_TOKEN`` or the config file's. Output is tables (``rich``). An error is
one line on stderr: exit code 2 for a refusal or a bad argument (the API's 4xx, nothing
answering at the URL), 1 for a failure (a replay that diverges, the API's 5xx).

Every handler is ``func(args) -> exit code``, set with ``set_defaults(func=...)``; the rules
are the API's (and so the services').
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from atout.record import GameRecord, RecordError, dumps
from atout_arena.client import ArenaClient, ClientError, Target

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
_DURATION = re.compile(r"^(\d+)([smhd]?)$")
DONE_STATUSES = ("finished", "cancelled")
POLL_S = 1.0
PROGRESS_EVERY_S = 10.0  # test create --wait off a terminal: a progress line at most this often


def _console() -> Console:
    return Console(soft_wrap=False, highlight=False, width=None if sys.stdout.isatty() else 160)


def _client(args: argparse.Namespace) -> ArenaClient:
    return ArenaClient(Target.find(getattr(args, "api", None), ca=getattr(args, "ca", None)))


def _ref(text: str) -> str:
    return quote(str(text), safe="")


def _parse_options(items: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in items or []:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--option {item!r}: expected NAME=VALUE, e.g. deals=2")
        try:
            options[name] = json.loads(raw)
        except json.JSONDecodeError:
            options[name] = raw
    return options


def _parse_duration(text: str | None) -> int | None:
    if text is None:
        return None
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"--every {text!r}: expected a number with s, m, h or d, e.g. 1d")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def _parse_bounds(text: str) -> tuple[float, float]:
    try:
        elo0, elo1 = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--sprt {text!r}: expected ELO0,ELO1, e.g. 0,5") from None
    return elo0, elo1


def _bots(text: str) -> list[str]:
    return [b.strip() for b in text.split(",") if b.strip()]


def _competition(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {
        "game": args.game, "options": _parse_options(args.option),
        "games_per_pairing": args.games_per_pairing, "duplicate": args.duplicate, "move_ms": args.move_ms,
        "time_bank_ms": args.time_bank_ms, "max_faults": args.max_faults,
    }
    if args.players is not None:
        body["players"] = args.players
    return body


# -- output -----------------------------------------------------------------------------------


def _table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for column in columns:
        numeric = column in ("id", "rank", "points", "wins", "matches", "faults", "forfeits", "rating",
                             "seat", "score", "place", "games", "count")
        table.add_column(column, justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*("-" if cell is None else str(cell) for cell in row))
    return table


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _print_tournament(console: Console, t: dict[str, Any]) -> None:
    p = t["progress"]
    by_status = ", ".join(f"{n} {s}" for s, n in p["by_status"].items() if n)
    console.print(f"tournament {t['id']} {t['name']!r}: {t['game']}, {t['players']} players"
                  f"{' ' + json.dumps(t['options']) if t['options'] else ''} - {t['status']}; "
                  f"{p['done']}/{p['total']} matches done ({by_status or 'none'})")
    if t.get("standings"):
        columns = ("rank", "bot", "points", "wins", "matches", "faults", "forfeits")
        console.print(_table("standings", columns, [
            (r["rank"], r["bot"], f"{r['points']:.1f}", r["wins"], r["matches"], r["faults"], r["forfeits"])
            for r in t["standings"]]))
    if t.get("ratings"):
        console.print(_table("ratings (batch fit)", ("rank", "bot", "rating", "95% interval",
                                                     "P(better than next)"),
                             [(r["rank"], r["bot"], f"{r['rating']:.1f}",
                               f"[{_fmt(r['ci_low'], '.0f')}, {_fmt(r['ci_high'], '.0f')}]",
                               _fmt(r["los_next"], ".3f")) for r in t["ratings"]]))


def _print_test(console: Console, t: dict[str, Any]) -> None:
    ci = t["elo_ci95"]
    interval = "" if None in ci else f" [{ci[0]:.1f}, {ci[1]:.1f}]"
    console.print(f"test {t['id']} {t['name']!r}: {t['a']} vs {t['b']}, {t['game']} {t['players']} players"
                  f" - {t['status']}{' ' + t['result'] if t['result'] else ''}")
    if t.get("waiting") or t.get("reason"):  # why it waits, or why it ended
        console.print(f"  {_waiting(t) if t.get('waiting') else t['reason']}")
    console.print(f"  games {t['games']}, sets {t['sets']}, score {_fmt(t['score'], '.3f')}, "
                  f"Elo {_fmt(t['elo'])}{interval}, LOS {_fmt(t['los'], '.3f')}, LLR {_fmt(t['llr'], '.2f')} "
                  f"in [{_fmt(t['lower'], '.2f')}, {_fmt(t['upper'], '.2f')}] "
                  f"(SPRT elo0={t['sprt']['elo0']:g} elo1={t['sprt']['elo1']:g}); matches {t['matches']}")


def _waiting(t: dict[str, Any]) -> str:
    """``waiting for alice@v9: not connected (gives up at 12:05:00 UTC)``."""
    gives_up = t.get("gives_up_at")
    return t["waiting"] + (f" (gives up at {gives_up[11:19]} UTC)" if gives_up else "")


def _elo_pm(t: dict[str, Any]) -> str:
    """``Elo 35.2 ± 60.1`` (the half-width of its 95% interval), ``Elo -`` before any set."""
    lo, hi = t["elo_ci95"]
    if t["elo"] is None or not t["sets"]:
        return "Elo -"
    return f"Elo {t['elo']:.1f}" + ("" if lo is None or hi is None else f" ± {(hi - lo) / 2:.1f}")


def progress_line(t: dict[str, Any]) -> str:
    """One line of a running test: games, sets, the LLR within its bounds, Elo ±, any wait."""
    line = (f"test {t['id']} {t['status']}: {t['games']} games, {t['sets']} sets, "
            f"LLR {_fmt(t['llr'], '.2f')} in [{_fmt(t['lower'], '.2f')}, {_fmt(t['upper'], '.2f')}], "
            f"{_elo_pm(t)}")
    return line + (f"; {_waiting(t)}" if t.get("waiting") else "")


def _wait_test(client: ArenaClient, t: dict[str, Any]) -> dict[str, Any]:
    """Poll a test until it is over, showing its progress on stderr: a live line on a terminal
    (rich), else a plain line when it changes, at most every :data:`PROGRESS_EVERY_S` (and at once
    when it starts or stops waiting for a bot)."""
    err = Console(stderr=True, highlight=False)
    if err.is_terminal:
        with Live(Text(progress_line(t)), console=err, refresh_per_second=4, transient=False) as live:
            while t["status"] == "running":
                time.sleep(POLL_S)
                t = client.get(f"/v1/tests/{t['id']}")
                live.update(Text(progress_line(t)))
        return t
    shown, waiting, last = "", None, 0.0
    while True:
        line = progress_line(t)
        now = time.monotonic()
        if t["status"] == "running" and line != shown and (
                now - last >= PROGRESS_EVERY_S or t.get("waiting") != waiting):
            print(line, file=sys.stderr, flush=True)
            shown, waiting, last = line, t.get("waiting"), now
        if t["status"] != "running":
            return t
        time.sleep(POLL_S)
        t = client.get(f"/v1/tests/{t['id']}")


def _print_match(console: Console, m: dict[str, Any]) -> None:
    console.print(f"match {m['id']}: {m['game']}, {m['players']} players - {m['status']}"
                  f"{' (' + m['outcome'] + ')' if m.get('outcome') else ''}"
                  f"{', ' + m['label'] if m.get('label') else ''}"  # test #3: alice@v2 vs alice@v1, ...
                  f"{', error: ' + m['error'] if m.get('error') else ''}")
    console.print(_table(None, ("seat", "bot", "score", "place", "faults", "forfeited", "think ms"),
                         [(s["seat"], s["bot"], s["score"], s["place"], s["faults"],
                           "yes" if s["forfeited"] else "", f"{s['think_ms']:.0f}") for s in m["seats"]]))


def _wait_tournament(client: ArenaClient, tid: int) -> dict[str, Any]:
    last = None
    while True:
        t = client.get(f"/v1/tournaments/{tid}")
        progress = (t["progress"]["done"], t["progress"]["total"])
        if progress != last:
            print(f"  {t['status']}: {progress[0]}/{progress[1]} matches done", file=sys.stderr, flush=True)
            last = progress
        if t["status"] in DONE_STATUSES:
            return t
        time.sleep(POLL_S)


# -- handlers ---------------------------------------------------------------------------------


Run = Callable[[argparse.Namespace, ArenaClient, Console], int]


def _handler(run: Run) -> Callable[[argparse.Namespace], int]:
    """A command's one-line errors and exit codes, around ``run(args, client, console)``."""

    def handle(args: argparse.Namespace) -> int:
        try:
            with _client(args) as client:
                return run(args, client, _console())
        except ClientError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAIL if exc.status is not None and exc.status >= 500 else EXIT_USAGE
        except ValueError as exc:  # a bad --option, --every or --sprt
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE

    return handle


def cmd_bots(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    command = args.bots_command
    if command == "add":
        body: dict[str, Any] = {"name": args.name, "owner": args.owner}
        if args.human:
            body["kind"] = "human"
        if args.move_ms is not None:
            body["move_ms"] = args.move_ms
        bot = client.post("/v1/bots", body)
        if args.json:
            _print_json(bot)
        else:
            print(f"bot {bot['name']!r} added (id {bot['id']}). Its token, shown only this once:",
                  file=sys.stderr)
            print(bot["token"])
    elif command == "list":
        bots = client.get("/v1/bots")
        if args.json:
            _print_json(bots)
        elif not bots:
            print("no bots yet: atout-arena bots add NAME", file=sys.stderr)
        else:
            console.print(_table(None, ("id", "name", "owner", "state", "connected", "created"), [
                (b["id"], b["name"], b["owner"] or "-", "disabled" if b["disabled"] else "enabled",
                 "yes" if b["connected"] else "no", str(b["created_at"])[:16].replace("T", " "))
                for b in bots]))
    elif command == "rotate":
        answer = client.post(f"/v1/bots/{_ref(args.name)}/token")
        if args.json:
            _print_json(answer)
        else:
            print(f"bot {answer['name']!r} has a new token (the old one no longer works):", file=sys.stderr)
            print(answer["token"])
    else:  # disable, enable
        bot = client.post(f"/v1/bots/{_ref(args.name)}/{command}")
        if args.json:
            _print_json(bot)
        else:
            print(f"bot {bot['name']!r} is {'disabled' if bot['disabled'] else 'enabled'}")
    return EXIT_OK


def cmd_tournament(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    command = args.tournament_command
    if command == "list":
        items = client.get("/v1/tournaments")
        if args.json:
            _print_json(items)
        else:
            console.print(_table(None, ("id", "name", "game", "status", "matches done"), [
                (t["id"], t["name"], t["game"], t["status"],
                 f"{t['progress']['done']}/{t['progress']['total']}") for t in items]))
        return EXIT_OK
    lines: list[str] = []
    if command == "create":
        body = {**_competition(args), "name": args.name, "bots": _bots(args.bots), "start": args.start,
                "absent_grace_s": args.absent_grace}
        if args.seed is not None:
            body["seed"] = args.seed
        t = client.post("/v1/tournaments", body)
        total = t["progress"]["total"]
        lines.append(f"tournament {t['id']} created: {total} {_plural(total, 'match')}")
    elif command == "start":
        t = client.post(f"/v1/tournaments/{args.id}/start")
    elif command == "cancel":
        t = client.post(f"/v1/tournaments/{args.id}/cancel")
    else:
        t = client.get(f"/v1/tournaments/{args.id}")
    started = command == "start" or (command == "create" and args.start)
    if command in ("create", "start") and t.get("absent"):
        grace = t.get("absent_grace_s")
        wait = f"{grace:g} s" if isinstance(grace, int | float) else "their absent grace"
        print(f"warning: not connected: {', '.join(t['absent'])} (each match waits {wait} for them, "
              "then forfeits their seats as absent; connect them first)", file=sys.stderr)
    if started:
        lines.append(f"tournament {t['id']} started: {t['progress']['total']} "
                     f"{_plural(t['progress']['total'], 'match')} sent to the workers")
    if started and args.wait:
        for line in lines:
            print(line, flush=True)
        lines = []
        t = _wait_tournament(client, t["id"])
    if args.json:
        _print_json(t)
    elif lines:
        print("\n".join(lines))
    else:
        _print_tournament(console, t)
    return EXIT_OK


def cmd_league(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    command = args.league_command
    if command == "create":
        body = {**_competition(args), "name": args.name, "bots": _bots(args.bots),
                "every_s": _parse_duration(args.every)}
        answer = client.post("/v1/leagues", body)
        message = f"league {answer['id']} {answer['name']!r} created"
    elif command in ("join", "leave"):
        answer = client.post(f"/v1/leagues/{_ref(args.name)}/members", {command: args.bots})
        message = f"league {args.name!r} members: {', '.join(answer['members']) or '-'}"
    elif command == "season":
        answer = client.post(f"/v1/leagues/{_ref(args.name)}/seasons")
        message = (f"league {args.name!r}: season {answer['season']} started as tournament "
                   f"{answer['tournament_id']} ({answer['matches']} matches)")
    else:
        league = client.get(f"/v1/leagues/{_ref(args.name)}")
        standings = client.get(f"/v1/leagues/{_ref(args.name)}/standings")
        answer = {**league, "standings": standings["standings"], "seasons": standings["seasons"]}
        if args.json:
            _print_json(answer)
            return EXIT_OK
        members = ", ".join(league.get("members", [])) or "-"
        console.print(f"league {league['id']} {league['name']!r}: {league['game']} {league['players']} "
                      f"players, {len(standings['seasons'])} seasons, members {members}")
        columns = ("rank", "bot", "points", "wins", "matches", "faults")
        console.print(_table("standings across seasons", columns, [
            (r["rank"], r["bot"], f"{r['points']:.1f}", r["wins"], r["matches"], r["faults"])
            for r in standings["standings"]]))
        return EXIT_OK
    if args.json:
        _print_json(answer)
    else:
        print(message)
    return EXIT_OK


def cmd_test(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    command = args.test_command
    if command == "create":
        elo0, elo1 = _parse_bounds(args.sprt)
        body: dict[str, Any] = {
            "a": args.a, "b": args.b, "game": args.game, "options": _parse_options(args.option),
            "sprt": {"elo0": elo0, "elo1": elo1, "alpha": args.alpha, "beta": args.beta},
            "max_games": args.max_games, "sets_in_flight": args.sets_in_flight, "move_ms": args.move_ms,
            "max_faults": args.max_faults,
        }
        if args.players is not None:
            body["players"] = args.players
        if args.field is not None:
            body["field"] = args.field
        t = client.post("/v1/tests", body)
        print(f"test {t['id']} started: {t['a']} vs {t['b']}", file=sys.stderr, flush=True)
        if args.wait:
            t = _wait_test(client, t)
        elif t.get("waiting"):
            print(f"warning: {_waiting(t)}", file=sys.stderr)
    elif command == "list":
        items = client.get("/v1/tests", status=args.status, bot=args.bot, limit=args.limit)
        if args.json:
            _print_json(items)
        else:
            columns = ("id", "test", "game", "status", "games", "LLR [bounds]", "Elo")
            console.print(_table(None, columns, [
                (t["id"], f"{t['a']} vs {t['b']}", t["game"], t["result"] or t["status"], t["games"],
                 f"{_fmt(t['llr'], '.2f')} [{_fmt(t['lower'], '.2f')}, {_fmt(t['upper'], '.2f')}]",
                 _elo_pm(t).removeprefix("Elo ")) for t in items]))
            for t in items:  # why each waits or ended, a line apiece (too long for a column)
                if t.get("waiting") or t.get("reason"):
                    console.print(f"test {t['id']}: {_waiting(t) if t.get('waiting') else t['reason']}")
        return EXIT_OK
    elif command == "cancel":
        t = client.post(f"/v1/tests/{args.id}/cancel")
    else:
        t = client.get(f"/v1/tests/{args.id}")
    if args.json:
        _print_json(t)
    else:
        _print_test(console, t)
    return EXIT_OK


def _print_ladder(console: Console, ladder: dict[str, Any]) -> None:
    members = "any registered bot" if ladder["open"] else "its members"
    console.print(f"ladder {ladder['id']} {ladder['name']!r}: {ladder['game']} {ladder['players']} players, "
                  f"{ladder['status']}, {len(ladder['in_flight'])} matches in flight "
                  f"(target {ladder['target_in_flight']}), {members}; sets {ladder['sets']}")
    console.print(_table(f"{ladder['name']} standings",
                         ("rank", "bot", "ordinal", "mu", "sigma", "games", "sets", "connected"),
                         [(r["rank"], r["bot"] + (" (disabled)" if r["disabled"] else "")
                           + (" (provisional)" if r.get("provisional") else ""),
                           _fmt(r["ordinal"], ".2f"), _fmt(r["mu"], ".2f"), _fmt(r["sigma"], ".2f"),
                           r["games"], r["sets"],
                           "-" if r["connected"] is None else "yes" if r["connected"] else "no")
                          for r in ladder["standings"]]))


def cmd_ladder(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    if args.ladder_command == "create":
        body: dict[str, Any] = {"name": args.name, "game": args.game, "options": _parse_options(args.option),
                                "target_in_flight": args.target_in_flight, "move_ms": args.move_ms,
                                "max_faults": args.max_faults, "bots": args.bot or None}
        if args.players is not None:
            body["players"] = args.players
        ladder = client.post("/v1/ladders", body)
    elif args.ladder_command == "show":
        ladder = client.get(f"/v1/ladders/{args.id}")
    elif args.ladder_command == "history":
        return _ladder_history(args, client, console)
    else:
        ladder = client.post(f"/v1/ladders/{args.id}/{args.ladder_command}")
    if args.json:
        _print_json(ladder)
    else:
        _print_ladder(console, ladder)
    return EXIT_OK


def _ladder_history(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    lines = client.get(f"/v1/ladders/{args.id}/history", bot=args.bot)
    if args.json:
        _print_json(lines)
        return EXIT_OK
    console.print(_table(f"ladder {args.id}: ratings after each rated set",
                         ("bot", "set", "rated at", "ordinal", "mu", "sigma"),
                         [(line["bot"], p["set"], p["rated_at"], _fmt(p["ordinal"], ".2f"),
                           _fmt(p["mu"], ".2f"), _fmt(p["sigma"], ".2f"))
                          for line in lines for p in line["points"]]))
    return EXIT_OK


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")


def cmd_match(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    if args.match_command == "retry":
        m = client.post(f"/v1/matches/{args.id}/retry")
        if args.json:
            _print_json(m)
        else:
            print(f"match {m['id']} queued again: sent to the workers")
        return EXIT_OK
    if args.match_command == "export":
        return _export_match(args, client)
    if args.match_command == "show":
        m = client.get(f"/v1/matches/{args.id}")
        if args.json:
            _print_json(m)
        else:
            _print_match(console, m)
        return EXIT_OK
    page = client.get("/v1/matches", tournament=args.tournament, ladder=args.ladder, bot=args.bot,
                      status=args.status, limit=args.limit)
    if args.json:
        _print_json(page)
    else:
        console.print(_table(None, ("id", "game", "status", "tournament", "bots", "scores"), [
            (m["id"], m["game"], m["status"], m["tournament_id"], ", ".join(s["bot"] for s in m["seats"]),
             m["scores"]) for m in page["items"]]))
    return EXIT_OK


def _export_match(args: argparse.Namespace, client: ArenaClient) -> int:
    """``match export ID [-o FILE]``: the match as one JSON line of the record format
    (docs/record.md), on stdout or in FILE (replaced)."""
    try:
        record = GameRecord.from_dict(client.get(f"/v1/matches/{args.id}/record"))
    except RecordError as exc:  # (an arena newer than this SDK)
        raise ValueError(f"match {args.id}: the arena's record is not one this SDK reads: {exc}") from None
    if args.output in (None, "-"):
        print(dumps(record))
        return EXIT_OK
    try:
        Path(args.output).write_text(dumps(record) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"match {args.id}: {record.game}, {len(record.steps)} steps, written to {args.output}",
          file=sys.stderr)
    return EXIT_OK


def cmd_replay(args: argparse.Namespace, client: ArenaClient, console: Console) -> int:
    report = client.get(f"/v1/matches/{args.match_id}/check")
    if args.json:
        _print_json(report)
    else:
        print(report["summary"])
    return EXIT_OK if report["ok"] else EXIT_FAIL


# -- wiring -----------------------------------------------------------------------------------


def _common() -> argparse.ArgumentParser:
    """``--api`` and ``--json``, for every organizer command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--api", metavar="URL",
                        help="the arena's REST API (default: the config file of atout-arena up, "
                             "else ATOUT_API_URL, else http://127.0.0.1:8000)")
    common.add_argument("--ca", metavar="FILE",
                        help="an https:// API: the PEM file of the CA that signed its certificate "
                             "(default: ATOUT_CA_FILE, else the system's CAs)")
    common.add_argument("--json", action="store_true", help="print the API's answer as JSON")
    return common


def _competition_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name")
    parser.add_argument("--game", required=True, help="merde, tiercon, regicide or fool")
    parser.add_argument("--bots", default="", help="comma-separated bot names or ids")
    parser.add_argument("--players", type=int, help="seats per match (default: the game's)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a game option, e.g. deals=2 (repeatable)")
    parser.add_argument("--games-per-pairing", type=int, default=1,
                        help="games each pair of bots plays together (default 1)")
    parser.add_argument("--duplicate", action="store_true",
                        help="play each seeded deal in every seat rotation")
    parser.add_argument("--move-ms", type=int, default=1000, help="time per decision (default 1000)")
    parser.add_argument("--time-bank-ms", type=int, default=0, help="extra time per bot per match")
    parser.add_argument("--max-faults", type=int, default=3, help="faults before a forfeit (0: never)")


def register(subparsers: Any) -> None:
    """Add ``bots``, ``tournament``, ``league``, ``ladder``, ``test``, ``match`` and ``replay`` to
    ``atout-arena``."""
    common = [_common()]

    bots = subparsers.add_parser("bots", help="register and manage bots")
    bots_commands = bots.add_subparsers(dest="bots_command", required=True)
    add = bots_commands.add_parser("add", parents=common, help="register a bot and print its token (once)")
    add.add_argument("name")
    add.add_argument("--owner", default="", help="who the bot belongs to")
    add.add_argument("--human", action="store_true", help="a person, who plays on the dashboard's Play page")
    add.add_argument("--move-ms", type=int, default=None,
                     help="its own move time when longer than a match's (a human's default: 60000)")
    bots_commands.add_parser("list", parents=common, help="list the registered bots")
    for name, text in (("rotate", "give a bot a new token"), ("disable", "stop a bot from connecting"),
                       ("enable", "let a disabled bot connect again")):
        bots_commands.add_parser(name, parents=common, help=text).add_argument("name", help="bot name or id")
    bots.set_defaults(func=_handler(cmd_bots))

    replay = subparsers.add_parser("replay", parents=common,
                                   help="replay a stored match and check its result (no token "
                                        "needed once its seeds are published)")
    replay.add_argument("match_id", type=int)
    replay.set_defaults(func=_handler(cmd_replay))

    match = subparsers.add_parser("match", help="show matches")
    mcommands = match.add_subparsers(dest="match_command", required=True)
    mcommands.add_parser("show", parents=common,
                         help="a match: seats, scores, faults").add_argument("id", type=int)
    mlist = mcommands.add_parser("list", parents=common, help="matches, newest first")
    mlist.add_argument("--tournament", type=int, help="the matches of one tournament")
    mlist.add_argument("--ladder", type=int, help="the matches of one ladder (with --bot: that bot's)")
    mlist.add_argument("--bot", help="the matches of one bot (name or id)")
    mlist.add_argument("--status", help="pending, queued, running, finished, failed or cancelled")
    mlist.add_argument("--limit", type=int, default=50)
    mcommands.add_parser("retry", parents=common,
                         help="play a failed match again from its seed").add_argument("id", type=int)
    mexport = mcommands.add_parser(
        "export", parents=common, help="a finished match as a JSON line of docs/record.md's format")
    mexport.add_argument("id", type=int)
    mexport.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (default: stdout)")
    match.set_defaults(func=_handler(cmd_match))

    tournament = subparsers.add_parser("tournament", help="create, start and show tournaments")
    commands = tournament.add_subparsers(dest="tournament_command", required=True)
    create = commands.add_parser("create", parents=common, help="create a tournament and its schedule")
    _competition_args(create)
    create.add_argument("--seed", type=int, help="the tournament's seed (default: random, stored)")
    create.add_argument("--start", action="store_true", help="start it at once")
    create.add_argument("--absent-grace", type=float, default=10.0, metavar="SECONDS",
                        help="how long a match waits for an entrant not connected before forfeiting "
                             "its seat as absent (default 10)")
    create.add_argument("--wait", action="store_true", help="with --start: wait for the end, show standings")
    start = commands.add_parser("start", parents=common,
                                help="send a created tournament's matches to the workers")
    start.add_argument("id", type=int)
    start.add_argument("--wait", action="store_true", help="wait for the end and show the standings")
    commands.add_parser("cancel", parents=common, help="cancel a tournament").add_argument("id", type=int)
    commands.add_parser("show", parents=common,
                        help="a tournament's progress, standings and ratings").add_argument("id", type=int)
    commands.add_parser("list", parents=common, help="the tournaments, newest first")
    tournament.set_defaults(func=_handler(cmd_tournament))

    league = subparsers.add_parser("league", help="leagues: members, seasons, standings")
    lcommands = league.add_subparsers(dest="league_command", required=True)
    lcreate = lcommands.add_parser("create", parents=common, help="create a league")
    _competition_args(lcreate)
    lcreate.add_argument("--every", help="start a season every DURATION (e.g. 1d, 6h) under beat")
    lcommands.add_parser("season", parents=common, help="start the next season now").add_argument("name")
    for name in ("join", "leave"):
        p = lcommands.add_parser(name, parents=common, help=f"bots {name} the league")
        p.add_argument("name")
        p.add_argument("bots", nargs="+")
    lcommands.add_parser("show", parents=common,
                         help="members, seasons and standings across seasons").add_argument("name")
    league.set_defaults(func=_handler(cmd_league))

    ladder = subparsers.add_parser("ladder", help="continuous ladders rated by OpenSkill")
    ladder_commands = ladder.add_subparsers(dest="ladder_command", required=True)
    lad = ladder_commands.add_parser("create", parents=common, help="start a ladder")
    lad.add_argument("name")
    lad.add_argument("--game", required=True, help="merde, tiercon, regicide or fool")
    lad.add_argument("--players", type=int, help="seats per match (default: the game's)")
    lad.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    lad.add_argument("--bot", action="append", default=[],
                     help="a member, name or id (repeat); none: any registered bot that connects joins")
    lad.add_argument("--target-in-flight", type=int, default=4, help="matches kept in flight (default 4)")
    lad.add_argument("--move-ms", type=int, default=1000, help="time per decision (default 1000)")
    lad.add_argument("--max-faults", type=int, default=3, help="faults before a forfeit (0: never)")
    for name, text in (("show", "the standings and matches in flight"), ("pause", "seat nobody more"),
                       ("resume", "seat the connected members again")):
        ladder_commands.add_parser(name, parents=common, help=text).add_argument("id", type=int)
    lhist = ladder_commands.add_parser("history", parents=common, help="each member's rating after each set")
    lhist.add_argument("id", type=int)
    lhist.add_argument("--bot", help="one member (name or id)")
    ladder.set_defaults(func=_handler(cmd_ladder))

    test = subparsers.add_parser("test", help="is A stronger than B? duplicate sets until an SPRT decides")
    tcommands = test.add_subparsers(dest="test_command", required=True)
    tcreate = tcommands.add_parser("create", parents=common,
                                   help="start a test of A against B (name@version, house...)")
    tcreate.add_argument("a", help="the bot under test: name, id, or name@version")
    tcreate.add_argument("b", help="its opponent: a bot, name@version, or house")
    tcreate.add_argument("--game", required=True, help="merde, tiercon, regicide or fool")
    tcreate.add_argument("--players", type=int, help="seats per match (default: the game's)")
    tcreate.add_argument("--field", metavar="KIND",
                         help="the kind of the house bots in the other seats of a table of more than "
                              "two: heuristic (the default), pimc-small, pimc-large, ismcts (docs/bosses.md)")
    tcreate.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    tcreate.add_argument("--sprt", default="0,5", metavar="ELO0,ELO1", help="the SPRT's bounds (default 0,5)")
    tcreate.add_argument("--alpha", type=float, default=0.05)
    tcreate.add_argument("--beta", type=float, default=0.05)
    tcreate.add_argument("--max-games", type=int, default=20_000)
    tcreate.add_argument("--sets-in-flight", type=int, default=None,
                         help="sets played at once, exactly (default: 8 at first, then as many as "
                              "are complete, up to 64)")
    tcreate.add_argument("--move-ms", type=int, default=1000)
    tcreate.add_argument("--max-faults", type=int, default=3)
    tcreate.add_argument("--wait", action="store_true",
                         help="wait for the verdict, showing games, LLR and Elo as it goes, and show it")
    tcommands.add_parser("show", parents=common,
                         help="a test's games, Elo, LOS and LLR").add_argument("id", type=int)
    tcommands.add_parser("cancel", parents=common, help="stop a running test").add_argument("id", type=int)
    tlist = tcommands.add_parser("list", parents=common, help="tests, newest first, with their LLR and Elo")
    tlist.add_argument("--status", choices=("running", "finished", "cancelled"),
                       help="only the tests in this state")
    tlist.add_argument("--bot", help="only the tests of this bot (name or id, as A or B)")
    tlist.add_argument("--limit", type=int, default=50)
    test.set_defaults(func=_handler(cmd_test))
