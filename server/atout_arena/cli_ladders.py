"""``atout-arena ladder create|show|pause|resume``: ladders through the REST API.

    atout-arena ladder create NAME --game tiercon [--bot A --bot B ...] [--target-in-flight 4]
    atout-arena ladder show ID          the standings (rank, bot, ordinal, mu, sigma, games)
    atout-arena ladder pause|resume ID

Every command takes ``--api URL`` and ``--json`` (:mod:`atout_arena.cli_api`).
"""

from __future__ import annotations

import argparse
from typing import Any

from atout_arena.cli_api import add_api_arguments, api_call, print_json, print_table, run


def _options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"error: --option takes KEY=VALUE, not {pair!r}")
        try:
            options[key] = int(value)
        except ValueError:
            options[key] = {"true": True, "false": False}.get(value.lower(), value)
    return options


def show_ladder(ladder: dict[str, Any]) -> None:
    members = "any registered bot" if ladder["open"] else "its members"
    print(f"ladder {ladder['id']} {ladder['name']!r}: {ladder['game']} {ladder['players']} players, "
          f"{ladder['status']}, {len(ladder['in_flight'])} matches in flight "
          f"(target {ladder['target_in_flight']}), {members}; sets {ladder['sets']}")
    print_table(f"{ladder['name']} standings",
                ("rank", "bot", "ordinal", "mu", "sigma", "games", "sets", "connected"),
                [(r["rank"], r["bot"] + (" (disabled)" if r["disabled"] else ""), f"{r['ordinal']:.2f}",
                  f"{r['mu']:.2f}", f"{r['sigma']:.2f}", r["games"], r["sets"],
                  "-" if r["connected"] is None else "yes" if r["connected"] else "no")
                 for r in ladder["standings"]])


def cmd_ladder(args: argparse.Namespace) -> int:
    if args.ladder_command == "create":
        body: dict[str, Any] = {"name": args.name, "game": args.game, "players": args.players,
                                "options": _options(args.option), "target_in_flight": args.target_in_flight,
                                "move_ms": args.move_ms, "max_faults": args.max_faults,
                                "bots": args.bot or None}
        ladder = api_call(args, "POST", "/v1/ladders", body)
    elif args.ladder_command == "show":
        ladder = api_call(args, "GET", f"/v1/ladders/{args.id}")
    else:
        ladder = api_call(args, "POST", f"/v1/ladders/{args.id}/{args.ladder_command}")
    if args.json:
        print_json(ladder)
    else:
        show_ladder(ladder)
    return 0


def register(commands: Any) -> None:
    ladder = commands.add_parser("ladder", help="continuous ladders rated by OpenSkill (through the API)")
    sub = ladder.add_subparsers(dest="ladder_command", required=True)
    create = sub.add_parser("create", help="start a ladder")
    create.add_argument("name")
    create.add_argument("--game", required=True)
    create.add_argument("--players", type=int, default=None)
    create.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    create.add_argument("--bot", action="append", default=[], help="a member (repeat); none: any bot joins")
    create.add_argument("--target-in-flight", type=int, default=4, help="matches kept in flight")
    create.add_argument("--move-ms", type=int, default=1000)
    create.add_argument("--max-faults", type=int, default=3)
    for name, text in (("show", "the standings and matches in flight"), ("pause", "seat nobody more"),
                       ("resume", "seat the connected members again")):
        sub.add_parser(name, help=text).add_argument("id", type=int)
    for parser in (create, *(sub.choices[n] for n in ("show", "pause", "resume"))):
        add_api_arguments(parser)
        parser.set_defaults(func=lambda a: run(cmd_ladder, a))
