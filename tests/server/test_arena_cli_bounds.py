"""`atout-arena test create ... --sprt -3,1`: fishtest's non-regression bounds parse as they do
in `atout-bot test` (argparse alone reads "-3,1" as an option: "expected one argument")."""

from __future__ import annotations

import pytest

from atout.cli import glue_sprt
from atout_arena.cli import _main, build_parser


@pytest.mark.parametrize("bounds", ["-3,1", "-5,0", "0,5"])
def test_negative_sprt_bounds_parse(bounds: str) -> None:
    argv = ["test", "create", "alice@v2", "alice@v1", "--game", "tiercon", "--sprt", bounds]
    args = build_parser().parse_args(glue_sprt(argv))
    assert args.sprt == bounds


def test_the_arena_command_line_takes_negative_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    # No API listens there: the command gets past argparse and fails on the connection instead.
    argv = ["test", "create", "a@v2", "a@v1", "--game", "tiercon", "--sprt", "-3,1",
            "--api", "http://127.0.0.1:9"]
    try:
        _main(argv)
    except SystemExit as exit_:  # argparse's usage error would land here
        pytest.fail(f"argparse refused --sprt -3,1: exit {exit_.code}: {capsys.readouterr().err}")
    except Exception:
        pass  # the connection refused: argparse took the bounds
    assert "expected one argument" not in capsys.readouterr().err


class _Posting:
    """The organizer's client, for the command's own logic: what it would post."""

    def __init__(self) -> None:
        self.posted: list[tuple[str, dict]] = []

    def post(self, path: str, body: dict) -> dict:
        self.posted.append((path, body))
        return {"id": 1, "a": body["a"], "b": body["b"]}


@pytest.mark.parametrize(("extra", "field"), [([], None), (["--field", "pimc-large"], "pimc-large")])
def test_test_create_sends_the_field_only_when_given(extra: list[str], field: str | None) -> None:
    from rich.console import Console

    from atout_arena.cli_competitions import cmd_test

    argv = ["test", "create", "alice", "house", "--game", "merde", "--players", "4", "--json", *extra]
    client = _Posting()
    assert cmd_test(build_parser().parse_args(argv), client, Console()) == 0  # type: ignore[arg-type]
    [(path, body)] = client.posted
    assert path == "/v1/tests" and body["players"] == 4
    assert body.get("field") == field
