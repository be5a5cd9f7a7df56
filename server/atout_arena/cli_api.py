"""The CLI's REST client, in one place: commands that talk to a running API (``--api URL``,
default ``http://127.0.0.1:8000``; the organizer token from ``ATOUT_ADMIN_TOKEN``) call
:func:`api_call`, and print with :func:`print_table` or as JSON (``--json``).

An error is one line on stderr and an exit code: the API's ``detail`` for a refused request
(exit 1), or why the API could not be reached (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

DEFAULT_API = "http://127.0.0.1:8000"
TIMEOUT_S = 30.0


class ApiError(Exception):
    """A request the API refused (``code`` 1) or could not be sent (``code`` 2)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def add_api_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--api", default=DEFAULT_API, help=f"the arena's REST API (default {DEFAULT_API})")
    parser.add_argument("--json", action="store_true", help="print the API's JSON answer")


def api_call(args: argparse.Namespace, method: str, path: str, body: Any = None) -> Any:
    """``method path`` on ``args.api`` with the organizer's token; the decoded JSON answer, or
    :class:`ApiError` with the API's own message."""
    token = os.environ.get("ATOUT_ADMIN_TOKEN", "")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.request(method, args.api.rstrip("/") + path, json=body, headers=headers,
                                 timeout=TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise ApiError(f"cannot reach the API at {args.api}: {exc}", 2) from None
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        if not isinstance(detail, str):
            detail = json.dumps(detail)
        raise ApiError(f"{response.status_code}: {detail}", 1)
    return response.json()


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    Console(width=max(100, Console().width)).print(table)


def run(command: Any, args: argparse.Namespace) -> int:
    """Run ``command(args)``; an :class:`ApiError` becomes ``error: ...`` and its exit code."""
    try:
        return int(command(args))
    except ApiError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
