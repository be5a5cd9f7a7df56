"""``atout-bot watch FILE``: step through a recorded game, in the terminal or in a browser.

    atout-bot watch games.jsonl                  # game 1 of the file, every hand face up
    atout-bot watch games.jsonl --game 3 --seat 1  # game 3 as seat 1 saw it
    atout-bot watch games.jsonl --delay 0.5      # one move every half second
    atout-bot watch games.jsonl --web            # the dashboard's table, served on 127.0.0.1

In a terminal: one move per key (Enter or space; q quits). When stdout is not a terminal (a
pipe, a file) every step is printed at once. Each step prints the move (seat, bot, action, who
chose it, think time), the bot's note when it left one, then the table after it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, Any

from .games import State
from .record import GameRecord, RecordError, StepRecord, read_records
from .render import action_text, public_view, render_position, seat_label
from .web import WEB_DIR

WEB_FILES = {
    "/": ("watch.html", "text/html; charset=utf-8"),
    "/watch.js": ("watch.js", "text/javascript"),
    "/table.js": ("table.js", "text/javascript"),
    "/cards.js": ("cards.js", "text/javascript"),
    "/table.css": ("table.css", "text/css"),
}


def pick_record(path: str, game: int = 1) -> GameRecord:
    """Game ``game`` (from 1) of the record file ``path``; :class:`RecordError` (one line) when the
    file holds no such game."""
    records = read_records(path)
    if not records:
        raise RecordError(f"{path}: no game in the file")
    if not 1 <= game <= len(records):
        raise RecordError(f"{path}: no game {game} (the file holds {len(records)}: --game 1..{len(records)})")
    return records[game - 1]


def _check_seat(record: GameRecord, seat: int | None) -> None:
    if seat is not None and not 0 <= seat < record.players:
        raise RecordError(f"--seat {seat}: this game has seats 0..{record.players - 1}")


def move_line(record: GameRecord, k: int, step: StepRecord) -> str:
    """``move 3/120: seat 1 (heuristic) play 10♥  [fallback, 12 ms]``."""
    name = seat_label(record.seats[step.seat]) if step.seat < len(record.seats) else ""
    extra = [step.by] if step.by != "bot" else []
    if step.think_ms is not None:
        extra.append(f"{step.think_ms:.1f} ms" if step.think_ms < 10 else f"{step.think_ms:.0f} ms")
    if step.fault:
        extra.append(f"fault: {step.fault}")
    tail = f"  [{', '.join(extra)}]" if extra else ""
    who = f"seat {step.seat}" + (f" ({name})" if name else "")
    return f"move {k + 1}/{len(record.steps)}: {who} {action_text(step.action)}{tail}"


def frames(record: GameRecord, seat: int | None = None) -> Iterator[str]:
    """The text of each step: the start, then one frame per move (the move, its note, the table
    after it), then the final scores and ranking of the record."""
    _check_seat(record, seat)
    source = record.source.get("command") or (
        f"arena match {record.source['match']}" if record.source.get("match") is not None else "")
    seats = ", ".join(f"{s}: {seat_label(r)}" for s, r in enumerate(record.seats))
    intro = [f"{record.game}, {record.players} players, seed {record.seed}, {len(record.steps)} moves"
             + (f" ({source})" if source else ""), f"seats: {seats}"]
    state = record.new_state()
    yield "\n".join([*intro, "", render_position(state, seat, record.seats)])
    for k, before, step in record.positions():
        del before
        state.apply(step.action)
        lines = [move_line(record, k, step)]
        if step.note:
            lines.append(f"note: {step.note}")
        lines += ["", render_position(state, seat, record.seats)]
        yield "\n".join(lines)
    ranking = ", ".join(f"seat {s} {'1st' if p == 1 else f'place {p}'}" for s, p in enumerate(record.ranking))
    yield f"final scores: {', '.join(str(x) for x in record.scores)} ({ranking})"


def _read_key(stream: IO[str]) -> str:
    """One key press from a terminal (no Enter needed), or one line elsewhere."""
    try:
        import termios
        import tty
    except ImportError:  # Windows: a line
        return stream.readline()[:1] or "q"
    fd = stream.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        return stream.read(1) or "q"
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def watch_terminal(record: GameRecord, seat: int | None = None, delay: float | None = None,
                   out: IO[str] | None = None, keys: IO[str] | None = None,
                   interactive: bool | None = None, read_key: Callable[[IO[str]], str] = _read_key) -> int:
    """Print the game step by step: on a terminal one step per key (Enter/space next, q quits) or
    every ``delay`` seconds; otherwise every step at once. The number of steps shown."""
    out = out or sys.stdout
    keys = keys or sys.stdin
    if interactive is None:
        interactive = out.isatty() and keys.isatty()
    shown = 0
    for frame in frames(record, seat):
        if interactive:
            out.write("\x1b[2J\x1b[H")  # a clear screen: the table stays in place
        elif shown:
            out.write("\n")
        out.write(frame + "\n")
        shown += 1
        if interactive and delay is None:
            out.write("\n[Enter/space] next  [q] quit ")
            out.flush()
            if read_key(keys).lower() == "q":
                out.write("\n")
                break
        elif delay:
            out.flush()
            time.sleep(delay)
    out.flush()
    return shown


# -- the web view ---------------------------------------------------------------------------------


def web_events(record: GameRecord, seat: int | None = None) -> dict[str, Any]:
    """What the browser steps through: the game's facts and one event per position (the start,
    then after each move), each with the view (``seat``'s observation, or the public view plus
    every hand), as the arena's replay endpoints give them to the dashboard."""
    _check_seat(record, seat)

    def event(state: State, base: dict[str, Any]) -> dict[str, Any]:
        if seat is None:
            base["view"] = public_view(state)
            base["hands"] = [state.observation(s).get("hand", []) for s in range(state.players)]
        else:
            base["view"] = state.observation(seat)
        return base

    state = record.new_state()
    events = [event(state, {"type": "start"})]
    for k, _, step in record.positions():
        state.apply(step.action)
        events.append(event(state, {"type": "step", "ply": k, "seat": step.seat, "action": step.action,
                                    "by": step.by, "think_ms": step.think_ms, "note": step.note,
                                    "fault": step.fault}))
    return {"game": record.game, "players": record.players, "seed": record.seed, "options": record.options,
            "seats": [{"seat": s.seat, "bot": s.bot, "version": s.version} for s in record.seats],
            "scores": record.scores, "ranking": record.ranking, "source": record.source,
            "viewer": "full" if seat is None else "seat", "seat": seat, "events": events}


def make_server(record: GameRecord, seat: int | None = None, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 (``port`` 0: a free one) serving the watch page, the table's
    files and ``/record.json``. Call ``serve_forever()``; ``server_address`` says the port."""
    data = json.dumps(web_events(record, seat), ensure_ascii=False).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/record.json":
                body, kind = data, "application/json"
            elif path in WEB_FILES:
                name, kind = WEB_FILES[path]
                body = (WEB_DIR / name).read_bytes()
            else:
                self.send_error(HTTPStatus.NOT_FOUND)
                return
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the terminal shows the address only

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def watch_web(record: GameRecord, seat: int | None = None, port: int = 0, open_browser: bool = True,
              out: IO[str] | None = None) -> None:
    """Serve the web view until Ctrl-C, printing its address (and opening it in a browser)."""
    out = out or sys.stdout
    server = make_server(record, seat, port)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    out.write(f"watching {record.game} ({len(record.steps)} moves) at {url} (Ctrl-C stops)\n")
    out.flush()
    if open_browser:
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
