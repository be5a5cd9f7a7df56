"""The competitions' ``atout-arena`` subcommands (wired in by :func:`register`): thin, over the
services (:mod:`atout_arena.services`), with the tasks sent by name (:mod:`atout_arena.core.tasks`).

    atout-arena replay MATCH_ID                      replay a stored match; exit 1 if it diverges
    atout-arena match retry MATCH_ID                 play a failed match again from its seed
    atout-arena tournament create NAME --game merde --bots a,b,c,d [--players 4]
               [--option deals=2] [--games-per-pairing 1] [--duplicate] [--move-ms 1000]
               [--time-bank-ms 0] [--max-faults 3] [--seed S] [--start] [--wait]
    atout-arena tournament start ID [--wait]
    atout-arena tournament show ID [--json]
    atout-arena league create NAME --game G --bots a,b,c [--every 1d] (and the options above)
    atout-arena league season NAME                   start the next season now
    atout-arena league join NAME BOT... | leave NAME BOT...
    atout-arena league show NAME [--json]
    atout-arena test create A B --game G [--players N] [--sprt 0,5] [--max-games N] [--wait]
    atout-arena test show ID [--json] | cancel ID

Every handler is ``func(args) -> exit code``, set with ``set_defaults(func=...)``. The rules
(house bots never entered, limits, options) are the services': the same as the REST API's.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any

import redis
from sqlalchemy.orm import sessionmaker

from atout_arena.core.db import open_database
from atout_arena.core.embedded_redis import find_redis_url
from atout_arena.core.replay import RulesVersionMismatch, load_match, replay_match
from atout_arena.core.settings import Settings
from atout_arena.core.tasks import Tasks
from atout_arena.core.vocabulary import SprtStatus, TournamentStatus
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.leagues import create_league, league_standings, set_members, start_season
from atout_arena.services.sprt import cancel_test, create_test, sprt_summary
from atout_arena.services.tournaments import (
    DEFAULT_ABSENT_GRACE_S,
    TournamentError,
    create_tournament,
    not_connected,
    retry_match,
    start_tournament,
    tournament_summary,
)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
_DURATION = re.compile(r"^(\d+)([smhd]?)$")


def _sessions(settings: Settings) -> sessionmaker:
    return open_database(settings.database_url)[1]


def _send(settings: Settings, url: str, match_ids: list[int]) -> None:
    """Send one ``play_match`` per match to the workers, through the Redis at ``url``."""
    tasks = Tasks.for_settings(settings.replace(redis_url=url))
    try:
        tasks.play_matches(match_ids)
    finally:
        tasks.close()


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


def _bots(text: str) -> list[str]:
    return [b.strip() for b in text.split(",") if b.strip()]


def _print_summary(summary: dict[str, Any]) -> None:
    s = summary
    print(f"tournament {s['id']} {s['name']!r}: {s['game']} {s['players']} players {s['options'] or ''}"
          f" - {s['status']}; matches {s['matches']}")
    if s["standings"]:
        print("rank  bot                   points   wins  matches  faults  forfeits")
        for row in s["standings"]:
            print(f"{row['rank']:>4}  {row['bot']:<20} {row['points']:>7.1f} {row['wins']:>6}"
                  f" {row['matches']:>8} {row['faults']:>7} {row['forfeits']:>9}")
    if s["ratings"]:
        print("rank  bot                   rating   95% interval      P(better than next)")
        for r in s["ratings"]:
            los = "" if r["los_next"] is None else f"{r['los_next']:.3f}"
            print(f"{r['rank']:>4}  {r['bot']:<20} {r['rating']:>7.1f}"
                  f"   [{r['ci_low']:.0f}, {r['ci_high']:.0f}]   {los}")


def _wait(sessions: Any, tournament_id: int, poll_s: float = 1.0) -> dict[str, Any]:
    last = None
    while True:
        summary = tournament_summary(sessions, tournament_id)
        progress = summary["matches"]
        if progress != last:
            print(f"  {summary['status']}: {progress}", file=sys.stderr, flush=True)
            last = progress
        if summary["status"] in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            return summary
        time.sleep(poll_s)


# -- handlers ---------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    record = load_match(_sessions(Settings.from_env()), args.match_id)
    if record is None:
        print(f"error: no match {args.match_id}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = replay_match(record)
    except RulesVersionMismatch as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(report.summary())
    return EXIT_OK if report.ok else EXIT_FAIL


def _warn_absent(settings: Settings, sessions: sessionmaker, tid: int, grace: float | None = None) -> None:
    """A warning on stderr naming the entrants not connected now (nothing when Redis is not up)."""
    url, _ = find_redis_url(settings, start=False)
    if url is None:
        return
    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
    try:
        absent = not_connected(sessions, client, tid)
    except redis.RedisError:
        return
    finally:
        client.close()
    if absent:
        wait = f"{grace:g} s" if grace is not None else "their absent grace"
        print(f"warning: not connected: {', '.join(absent)} (each match waits {wait} for them, "
              "then forfeits their seats as absent; connect them first)", file=sys.stderr)


def cmd_match(args: argparse.Namespace) -> int:
    """``match retry ID``: a failed match queued again and sent to the workers."""
    settings = Settings.from_env()
    url, _ = find_redis_url(settings, start=False)
    if url is None:
        print("error: no Redis to send the match to: set ATOUT_REDIS_URL", file=sys.stderr)
        return EXIT_FAIL
    try:
        practice = retry_match(_sessions(settings), args.match_id)
    except TournamentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    tasks = Tasks.for_settings(settings.replace(redis_url=url))
    try:
        tasks.play(args.match_id, practice=practice)
    finally:
        tasks.close()
    print(f"match {args.match_id} queued again: sent to the workers")
    return EXIT_OK


def _spec(args: argparse.Namespace) -> CompetitionSpec:
    return CompetitionSpec.of(
        game=args.game, players=args.players, options=_parse_options(args.option),
        games_per_pairing=args.games_per_pairing, duplicate=args.duplicate, move_ms=args.move_ms,
        time_bank_ms=args.time_bank_ms, max_faults=args.max_faults,
    )


def cmd_tournament(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    sessions = _sessions(settings)
    try:
        if args.tournament_command == "create":
            tid = create_tournament(sessions, name=args.name, bots=_bots(args.bots), seed=args.seed,
                                    spec=_spec(args), absent_grace_s=args.absent_grace)
            summary = tournament_summary(sessions, tid)
            print(f"tournament {tid} created: {sum(summary['matches'].values())} matches")
            _warn_absent(settings, sessions, tid, args.absent_grace)
            if not args.start:
                return EXIT_OK
        else:
            tid = args.id
        if args.tournament_command in ("create", "start"):
            url, _ = find_redis_url(settings, start=False)
            if url is None:
                print("error: no Redis to send the matches to: set ATOUT_REDIS_URL (or run "
                      "`atout-arena worker`, which starts the embedded one)", file=sys.stderr)
                return EXIT_FAIL
            ids = start_tournament(sessions, tid)
            _send(settings, url, ids)
            print(f"tournament {tid} started: {len(ids)} matches sent to the workers")
            if args.tournament_command == "start":
                _warn_absent(settings, sessions, tid)
            if args.wait:
                _print_summary(_wait(sessions, tid))
            return EXIT_OK
        summary = tournament_summary(sessions, tid)
        if args.json:
            print(json.dumps(summary, indent=2, default=str))
        else:
            _print_summary(summary)
        return EXIT_OK
    except ValueError as exc:  # CompetitionError, a bad --option
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _parse_bounds(text: str) -> tuple[float, float]:
    try:
        elo0, elo1 = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--sprt {text!r}: expected ELO0,ELO1, e.g. 0,5") from None
    return elo0, elo1


def _print_test(t: dict[str, Any]) -> None:
    ci = t["elo_ci95"]
    interval = "" if None in ci else f" [{ci[0]:.1f}, {ci[1]:.1f}]"
    elo = "-" if t["elo"] is None else f"{t['elo']:.1f}"
    print(f"test {t['id']} {t['name']!r}: {t['a']} vs {t['b']}, {t['game']} {t['players']} players"
          f" - {t['status']}"
          f"{' ' + t['result'] if t['result'] else ''}")
    print(f"  games {t['games']}, sets {t['sets']}, score {t['score']:.3f}, Elo {elo}{interval}, "
          f"LOS {t['los']:.3f}, LLR {t['llr']:.2f} in [{t['lower']:.2f}, {t['upper']:.2f}] "
          f"(SPRT elo0={t['sprt']['elo0']:g} elo1={t['sprt']['elo1']:g}); matches {t['matches']}")


def cmd_test(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    sessions = _sessions(settings)
    try:
        if args.test_command == "create":
            elo0, elo1 = _parse_bounds(args.sprt)
            spec = CompetitionSpec.of(game=args.game, players=args.players,
                                      options=_parse_options(args.option), move_ms=args.move_ms,
                                      max_faults=args.max_faults)
            url, _ = find_redis_url(settings, start=False)
            if url is None:
                print("error: no Redis to send the test to: set ATOUT_REDIS_URL (or run "
                      "`atout-arena worker`, which starts the embedded one)", file=sys.stderr)
                return EXIT_FAIL
            test_id = create_test(sessions, a=args.a, b=args.b, spec=spec, elo0=elo0, elo1=elo1,
                                  alpha=args.alpha, beta=args.beta, max_games=args.max_games,
                                  sets_in_flight=args.sets_in_flight)
            tasks = Tasks.for_settings(settings.replace(redis_url=url))
            try:
                tasks.test_tick(test_id)
            finally:
                tasks.close()
            print(f"test {test_id} started: {args.a} vs {args.b}")
            if not args.wait:
                return EXIT_OK
            while sprt_summary(sessions, test_id)["status"] == SprtStatus.RUNNING:
                time.sleep(1.0)
            _print_test(sprt_summary(sessions, test_id))
            return EXIT_OK
        if args.test_command == "cancel":
            cancelled = cancel_test(sessions, args.id)
            print(f"test {args.id} {'cancelled' if cancelled else 'was over already'}")
            return EXIT_OK
        summary = sprt_summary(sessions, args.id)
        if args.json:
            print(json.dumps(summary, indent=2, default=str))
        else:
            _print_test(summary)
        return EXIT_OK
    except ValueError as exc:  # CompetitionError, a bad --sprt or --option
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def cmd_league(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    sessions = _sessions(settings)
    try:
        command = args.league_command
        if command == "create":
            lid = create_league(sessions, name=args.name, bots=_bots(args.bots),
                                every_s=_parse_duration(args.every), spec=_spec(args))
            print(f"league {lid} {args.name!r} created")
        elif command in ("join", "leave"):
            members = set_members(sessions, args.name, **{command: args.bots})
            print(f"league {args.name!r} members: {', '.join(members) or '-'}")
        elif command == "season":
            url, _ = find_redis_url(settings, start=False)
            if url is None:
                print("error: no Redis to send the matches to: set ATOUT_REDIS_URL", file=sys.stderr)
                return EXIT_FAIL
            started = start_season(sessions, args.name)
            if started is None:
                print(f"league {args.name!r}: a season is still running", file=sys.stderr)
                return EXIT_FAIL
            tid, ids = started
            _send(settings, url, ids)
            print(f"league {args.name!r}: season started as tournament {tid} ({len(ids)} matches)")
        else:
            info = league_standings(sessions, args.name)
            if args.json:
                print(json.dumps(info, indent=2, default=str))
            else:
                print(f"league {info['id']} {info['name']!r}: {info['game']} {info['players']} players, "
                      f"{len(info['seasons'])} seasons, members {', '.join(info['members']) or '-'}")
                for row in info["standings"]:
                    print(f"{row['rank']:>4}  {row['bot']:<20} {row['points']:>7.1f} points"
                          f" {row['wins']:>4} wins {row['matches']:>5} matches {row['faults']:>4} faults")
        return EXIT_OK
    except ValueError as exc:  # CompetitionError, a bad --option or --every
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


# -- wiring -----------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add ``replay``, ``tournament``, ``league`` and ``test`` to ``atout-arena``."""
    replay = subparsers.add_parser("replay", help="replay a stored match and check its result")
    replay.add_argument("match_id", type=int)
    replay.set_defaults(func=cmd_replay)

    match = subparsers.add_parser("match", help="matches: retry a failed one")
    match_commands = match.add_subparsers(dest="match_command", required=True)
    retry = match_commands.add_parser("retry", help="play a failed match again from its seed")
    retry.add_argument("match_id", type=int)
    match.set_defaults(func=cmd_match)

    tournament = subparsers.add_parser("tournament", help="create, start and show tournaments")
    commands = tournament.add_subparsers(dest="tournament_command", required=True)
    create = commands.add_parser("create", help="create a tournament and its schedule")
    _competition_args(create)
    create.add_argument("--seed", type=int, help="the tournament's seed (default: random, stored)")
    create.add_argument("--start", action="store_true", help="start it at once")
    create.add_argument("--absent-grace", type=float, default=DEFAULT_ABSENT_GRACE_S, metavar="SECONDS",
                        help="how long a match waits for an entrant not connected before forfeiting "
                             f"its seat as absent (default {DEFAULT_ABSENT_GRACE_S:g})")
    create.add_argument("--wait", action="store_true", help="with --start: wait for the end, show standings")
    start = commands.add_parser("start", help="send a created tournament's matches to the workers")
    start.add_argument("id", type=int)
    start.add_argument("--wait", action="store_true", help="wait for the end and show the standings")
    show = commands.add_parser("show", help="a tournament's progress, standings and ratings")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true")
    tournament.set_defaults(func=cmd_tournament)

    league = subparsers.add_parser("league", help="leagues: members, seasons, standings")
    lcommands = league.add_subparsers(dest="league_command", required=True)
    lcreate = lcommands.add_parser("create", help="create a league")
    _competition_args(lcreate)
    lcreate.add_argument("--every", help="start a season every DURATION (e.g. 1d, 6h) under beat")
    lcommands.add_parser("season", help="start the next season now").add_argument("name")
    for name in ("join", "leave"):
        p = lcommands.add_parser(name, help=f"bots {name} the league")
        p.add_argument("name")
        p.add_argument("bots", nargs="+")
    lshow = lcommands.add_parser("show", help="members, seasons and standings across seasons")
    lshow.add_argument("name")
    lshow.add_argument("--json", action="store_true")
    league.set_defaults(func=cmd_league)

    test = subparsers.add_parser("test", help="is A stronger than B? duplicate sets until an SPRT decides")
    tcommands = test.add_subparsers(dest="test_command", required=True)
    tcreate = tcommands.add_parser("create", help="start a test of A against B (name@version, house...)")
    tcreate.add_argument("a", help="the bot under test: name, id, or name@version")
    tcreate.add_argument("b", help="its opponent: a bot, name@version, or house")
    tcreate.add_argument("--game", required=True, help="merde, tiercon, regicide or fool")
    tcreate.add_argument("--players", type=int, help="seats per match (default: the game's)")
    tcreate.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    tcreate.add_argument("--sprt", default="0,5", metavar="ELO0,ELO1", help="the SPRT's bounds (default 0,5)")
    tcreate.add_argument("--alpha", type=float, default=0.05)
    tcreate.add_argument("--beta", type=float, default=0.05)
    tcreate.add_argument("--max-games", type=int, default=20_000)
    tcreate.add_argument("--sets-in-flight", type=int, default=8)
    tcreate.add_argument("--move-ms", type=int, default=1000)
    tcreate.add_argument("--max-faults", type=int, default=3)
    tcreate.add_argument("--wait", action="store_true", help="wait for the verdict and show it")
    tshow = tcommands.add_parser("show", help="a test's games, Elo, LOS and LLR")
    tshow.add_argument("id", type=int)
    tshow.add_argument("--json", action="store_true")
    tcommands.add_parser("cancel", help="stop a running test").add_argument("id", type=int)
    test.set_defaults(func=cmd_test)
