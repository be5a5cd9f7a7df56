"""Bot notes on the arena's side: cleaned at the edge, carried in the reply entry, stored in
the step row, and shown to whom the rule says (core.replay.note_seats)."""

from __future__ import annotations

from atout_arena.core.match import Step
from atout_arena.core.relay import Answer, parse_reply
from atout_arena.core.replay import note_seats
from atout_arena.gateway.session import reported_note


def test_the_edge_cleans_a_note_of_bad_bytes_control_characters_and_length() -> None:
    assert reported_note(b"ok \xff\xfe<b>\x1b[2J\x00\n") == "ok \ufffd\ufffd<b>[2J\n"
    assert reported_note("é".encode() * 700) == "é" * 512
    assert reported_note(b"\x00\x01") is None


def test_a_reply_entry_carries_the_note_beside_an_action_with_spaces() -> None:
    for edge in (12.5, None):
        note = "why 12 \U0001f0a1 play"
        reply = parse_reply(Answer("a@b", "r1", "play Th", 1000, 3.25, edge, note).reply())
        assert (reply.action, reply.note, reply.bot_ms, reply.edge_ms) == ("play Th", note, 3.25, edge)
    assert parse_reply(Answer("a@b", "r1", "play Th", 1000, 3.25, 1.0).reply()).note is None


def test_a_step_row_keeps_its_note_and_rows_without_one_read_as_before() -> None:
    step = Step(4, 1, "play Th", "bot", 12.0, (), "", 2.0, "hold the ace")
    assert Step.from_json(4, step.to_json()) == step
    plain = Step(4, 1, "play Th", "bot", 12.0, (), "", 2.0)
    assert len(plain.to_json()) == 7 and Step.from_json(4, plain.to_json()).note is None
    assert Step.from_json(0, [0, "pass", "bot", 1.0, [], ""]).note is None  # a six-item row


def test_whose_notes_a_viewer_reads() -> None:
    bots = [7, 8, 7]
    assert note_seats(3, bots, viewer_bot=7, organizer=False, ended=False) == {0, 2}
    assert note_seats(3, bots, viewer_bot=9, organizer=False, ended=False) == set()
    assert note_seats(3, bots, viewer_bot=None, organizer=False, ended=False) == set()
    assert note_seats(3, bots, viewer_bot=None, organizer=True, ended=False) == {0, 1, 2}
    assert note_seats(3, bots, viewer_bot=None, organizer=False, ended=True) == {0, 1, 2}
