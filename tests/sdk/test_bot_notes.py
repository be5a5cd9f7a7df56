"""Notes a bot attaches to its decisions: the SDK's spelling and cleaning (atout.bot)."""

from __future__ import annotations

import logging

import pytest

from atout import Action, split_note
from atout.bot import NOTE_LIMIT, clean_note


def test_plain_action_has_no_note() -> None:
    assert split_note("play Th") == ("play Th", None)


def test_tuple_and_action_carry_the_note() -> None:
    assert split_note(("play Th", "hold the ace")) == ("play Th", "hold the ace")
    answer = Action("play Th", note="why")
    assert answer == "play Th" and isinstance(answer, str)
    action, note = split_note(answer)
    assert (action, note, type(action)) == ("play Th", "why", str)
    assert split_note(("play Th", None)) == ("play Th", None)
    assert split_note(("play Th", "")) == ("play Th", None)


def test_other_answers_come_back_as_they_are() -> None:
    assert split_note(3) == (3, None)
    assert split_note(("a", "b", "c")) == (("a", "b", "c"), None)


def test_control_characters_and_surrogates_are_made_safe() -> None:
    assert clean_note("a\x00b\x1b[31mc\r\n\td\ud800") == ("ab[31mc\n\td\ufffd", False)
    assert clean_note(42) == ("42", False)


def test_a_long_note_is_cut_on_a_character_boundary_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="atout"):
        _, note = split_note(("pass", "é" * 600))
    assert note is not None
    assert len(note.encode()) <= NOTE_LIMIT and note == "é" * 512
    assert "cut to 1024 bytes" in caplog.text
    assert clean_note("x" * NOTE_LIMIT) == ("x" * NOTE_LIMIT, False)
