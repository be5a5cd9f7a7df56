"""``atout-arena export``: the decisions of the arena's published matches as a dataset
(docs/datasets.md), one ``atout-decision/1`` row per decision, JSON Lines or Parquet.

    atout-arena export --competition tournament:3 --format parquet -o t3.parquet
    atout-arena export --game merde --since 2026-11-01 -o merde.jsonl

What it exports is what a stranger may read, asked of the running arena's REST API *without a
token* (the organizer's is never sent, even when ``ATOUT_ADMIN_TOKEN`` is set): the finished
matches ``GET /v1/matches`` lists with their seed shown, each read by ``GET
/v1/matches/{id}/record`` (which answers a stranger once the match's seeds are published, as
:func:`atout_arena.services.deals.secret_matches` decides: its tournament or test is over, its
ladder set is done; a practice match once done). So nothing of a running tournament or test
comes out, and a match whose seeds are published comes out whoever runs the command.

Each record is replayed through the SDK's engines (:func:`atout.dataset.decision_rows`) and
written at once: one match in memory at a time. Progress goes to stderr; the file is written
as ``FILE.part`` and renamed when complete.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atout.dataset import FORMATS, DatasetError, DatasetWriter, decision_rows, format_of
from atout.games import GAMES
from atout.record import GameRecord, RecordError
from atout_arena.client import ArenaClient, ClientError, Target

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
KINDS = {"tournament": "tournaments", "ladder": "ladders", "test": "tests"}
PAGE = 500  # matches listed per request (the API's most)
PROGRESS_EVERY_S = 2.0


@dataclass
class Tally:
    listed: int = 0  # finished matches that pass the filters
    exported: int = 0
    secret: int = 0  # finished, but their seeds are not published yet
    rows: int = 0
    skipped: int = 0  # finished and published, but not replayable here (each said on stderr)


def _competition(text: str) -> tuple[str, int]:
    kind, sep, ref = text.partition(":")
    if not sep or kind not in KINDS or not ref.isdigit() or int(ref) < 1:
        raise argparse.ArgumentTypeError(
            f"expected tournament:ID, ladder:ID or test:ID (as the rows' competition), not {text!r}")
    return kind, int(ref)


def _since(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date or time, e.g. 2026-11-01 or 2026-11-01T12:00, "
                                         f"not {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def add_export_parser(commands: Any) -> None:
    """``atout-arena export``, among ``commands`` (an argparse subparsers object)."""
    export = commands.add_parser(
        "export", help="the decisions of published matches as a dataset (JSON Lines or Parquet)",
        description="One row per decision (what the seat saw, its legal actions, its action, who chose "
                    "it, think time, the final scores and ranks: docs/datasets.md) of every finished "
                    "match whose seeds are published: what GET /v1/matches/{id}/record answers a "
                    "stranger (no token is sent). Nothing of a running tournament or test; a ladder's "
                    "sets once each is done. Progress on stderr.")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--competition", type=_competition, metavar="KIND:ID",
                       help="one competition's matches: tournament:ID, ladder:ID or test:ID")
    which.add_argument("--game", choices=list(GAMES), help="every published match of this game")
    export.add_argument("--since", type=_since, metavar="DATE",
                        help="only matches finished at or after DATE (ISO 8601; UTC unless it says)")
    export.add_argument("--format", choices=FORMATS,
                        help="jsonl or parquet (default: from FILE's name, else jsonl)")
    export.add_argument("-o", "--output", metavar="FILE", help="the file to write (replaced; default: "
                        "stdout, JSON Lines only)")
    export.add_argument("--api", metavar="URL",
                        help="the arena's REST API (default: the config file of atout-arena up, else "
                             "ATOUT_API_URL, else http://127.0.0.1:8000)")
    export.add_argument("--ca", metavar="FILE", help="an https:// API: the PEM file of its CA")
    export.set_defaults(func=run)


def _stranger(args: argparse.Namespace) -> ArenaClient:
    """A client of the API that sends no token: it reads what anyone may."""
    found = Target.find(args.api, ca=args.ca)
    return ArenaClient(Target(found.api_url, None, "", found.ca))


def finished_matches(client: ArenaClient, args: argparse.Namespace, tally: Tally) -> Iterator[dict[str, Any]]:
    """The finished matches of the competition or game, as a stranger lists them (newest first),
    each once; filtered by ``--since``."""
    params: dict[str, Any] = {"status": "finished", "limit": PAGE}
    if args.competition is not None:
        kind, ref = args.competition
        client.get(f"/v1/{KINDS[kind]}/{ref}")  # 404: no such competition, one line
        params[kind] = ref
    else:
        params["game"] = args.game
    seen: set[int] = set()
    offset = 0
    while True:
        page = client.get("/v1/matches", **params, offset=offset)
        items = page["items"]
        for match in items:
            if match["id"] in seen:  # a match finished meanwhile shifted the pages
                continue
            seen.add(match["id"])
            finished = match.get("finished_at")
            if args.since is not None and (finished is None or _aware(finished) < args.since):
                continue
            tally.listed += 1
            yield match
        if len(items) < PAGE:
            return
        offset += len(items)


def _aware(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def export(client: ArenaClient, args: argparse.Namespace, out: DatasetWriter, say: Any) -> Tally:
    """Write the rows of every published finished match to ``out``; the tally."""
    tally = Tally()
    last = time.monotonic()
    for match in finished_matches(client, args, tally):
        if match.get("seed") is None:  # its seeds are secret to a stranger: not exported
            tally.secret += 1
            continue
        try:
            data = client.get(f"/v1/matches/{match['id']}/record")
        except ClientError as exc:
            if exc.status in (401, 403):  # (published rules are final: only a race gets here)
                tally.secret += 1
                continue
            if exc.status == 409:  # played under other rules: not replayable here
                tally.skipped += 1
                say(f"match {match['id']} skipped: {exc}")
                continue
            raise
        try:  # the whole match's rows first: a match that fails half way writes none of them
            rows = list(decision_rows(GameRecord.from_dict(data)))
        except (RecordError, ValueError) as exc:  # not one this SDK's engines replay: said, not fatal
            tally.skipped += 1
            say(f"match {match['id']} skipped: its record does not replay in this SDK: {exc}")
            continue
        tally.rows += out.write_rows(rows)
        tally.exported += 1
        if time.monotonic() - last >= PROGRESS_EVERY_S:
            last = time.monotonic()
            say(f"export: {tally.exported} matches, {tally.rows} decisions so far")
    return tally


def _named_format(output: str | None) -> str | None:
    """The format ``output``'s name says (``.jsonl``, ``.parquet``...), None for another name."""
    if output in (None, "-"):
        return None
    try:
        return format_of(output)
    except DatasetError:
        return None


def run(args: argparse.Namespace) -> int:
    """The command: one-line errors, exit 2 for a refusal or bad argument, 1 for the API's 5xx."""

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    try:
        kind = args.format or (format_of(args.output) if args.output not in (None, "-") else "jsonl")
        if kind == "parquet" and args.output in (None, "-"):
            raise DatasetError("--format parquet needs -o FILE (Parquet is not written to stdout)")
        named = _named_format(args.output)
        if named is not None and named != kind:
            raise DatasetError(f"--format {kind} but {args.output} is named as {named}: rename one of them")
        to_stdout = args.output in (None, "-")
        target = Path(args.output) if not to_stdout else None
        with _stranger(args) as client:  # the writer writes FILE.part, renamed when complete
            out = DatasetWriter(target, kind) if target is not None else DatasetWriter("-", kind,
                                                                                       stream=sys.stdout)
            with out:
                tally = export(client, args, out, say)
    except ClientError as exc:
        say(f"error: {exc}")
        return EXIT_FAIL if exc.status is not None and exc.status >= 500 else EXIT_USAGE
    except (DatasetError, ValueError) as exc:
        say(f"error: {exc}")
        return EXIT_USAGE
    except OSError as exc:
        say(f"error: {exc.filename or args.output}: {exc.strerror or exc}")
        return EXIT_USAGE
    where = f" to {args.output}" if target is not None else ""
    secret = (f"; {tally.secret} finished matches not exported: their seeds are not published yet "
              "(their competition is running)" if tally.secret else "")
    skipped = f"; {tally.skipped} matches skipped (said above)" if tally.skipped else ""
    say(f"exported {tally.exported} matches, {tally.rows} decisions{where}{secret}{skipped}")
    return EXIT_OK
