"""Screenshots of the dashboard for the docs, from a real demo: ``atout-arena demo --keep`` (its
tournament played by real bots, then the arena kept serving), a ladder started on it through
the REST API, and Chromium (Playwright's Python client driving the system's /usr/bin/chromium,
never ``playwright install``) at a desktop's 1366×900 and a phone's 390×844 (touch).

    .venv/bin/python scripts/screenshots.py                 # every page, both sizes, into docs/screenshots/
    .venv/bin/python scripts/screenshots.py --out /tmp/s --pages overview --sizes desktop

Each page is captured as a person first sees it (the viewport, not the whole scrolled page), as
``<page>-<size>.png``. Everything it starts is stopped at the end (the demo by Ctrl-C, as a
person stops it); its data and config go to a temporary directory, never ~/.config.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("ATOUT_CHROMIUM", "/usr/bin/chromium")
SIZES: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1366, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
REPLAY_PLY = 14  # the replay is shown mid-deal: cards on the felt
MAX_BYTES = 200_000  # a larger screenshot is saved in 256 colours (the felt's gradient is what weighs)


@dataclass
class Page:
    route: str  # with {tournament}, {match}, {ladder} filled in from the demo
    ready: str  # a selector present once the page has drawn its data
    what: str


PAGES: dict[str, Page] = {
    "overview": Page("#/", ".leaderboards table.leaderboard tbody tr",
                     "leaderboards, tournaments, live matches"),
    "tournament": Page("#/tournaments/{tournament}", "table.standings tbody tr",
                       "a finished tournament: standings and matches"),
    "replay": Page("#/matches/{match}", ".slider", "a match's replay, mid-deal"),
    "ladder": Page("#/ladders/{ladder}", "table.ladder-standings tbody tr", "a ladder's live standings"),
    "play": Page("#/play", "#play-token", "the Play page: a person with their bot and house bots"),
}


class Demo:
    """``atout-arena demo --keep`` in a process of its own, until :meth:`stop`."""

    def __init__(self, game: str, bots: int, players: int, games_per_pairing: int, home: Path) -> None:
        env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "PYTHONUNBUFFERED": "1"}
        env.pop("ATOUT_CONFIG", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "atout_arena.cli", "demo", "--game", game, "--bots", str(bots),
             "--players", str(players), "--games-per-pairing", str(games_per_pairing),
             "--port", "0", "--grpc-port", "0", "--data-dir", str(home / "data"), "--keep"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=home)
        self.lines: list[str] = []
        stdout = self.process.stdout
        assert stdout is not None
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(stdout.readline, "")),
                                       daemon=True)
        self.reader.start()

    def wait_serving(self, timeout: float = 240) -> tuple[str, str, str]:
        """The dashboard's URL, the organizer token and the game server's address, once the demo
        keeps serving."""
        deadline = time.monotonic() + timeout
        while "a part that dies is started again" not in (out := "".join(self.lines)):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"error: the demo did not come up:\n{out}")
            time.sleep(0.1)
        url = re.search(r"dashboard\s+(http://\S+?)/?$", out, re.M)
        token = re.search(r"organizer token\s+(\S+)", out)
        grpc = re.search(r"game server\s+(\S+:\d+)", out)
        assert url and token and grpc, out
        return url.group(1), token.group(1), grpc.group(1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # the demo stops everything it started
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(10)


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"error: no {what} within {timeout:.0f} s")
        time.sleep(0.3)


def prepare(api: httpx.Client, with_ladder: bool) -> dict[str, int]:
    """The ids the pages show: the demo's tournament, one of its matches, and a ladder of the
    demo's bots with a few matches rated (started here when asked for)."""
    tournament = api.get("/v1/tournaments").raise_for_status().json()[0]
    matches = api.get(f"/v1/tournaments/{tournament['id']}/matches").raise_for_status().json()["items"]
    ids = {"tournament": tournament["id"], "match": matches[0]["id"]}
    if with_ladder:
        bots = tournament["entrants"]
        ladder = api.post("/v1/ladders", json={
            "name": f"{tournament['game']} ladder", "game": tournament["game"],
            "players": tournament["players"], "bots": bots, "move_ms": 1000}).raise_for_status().json()
        ids["ladder"] = ladder["id"]

        def rated() -> bool:
            standings = api.get(f"/v1/ladders/{ladder['id']}").raise_for_status().json()["standings"]
            return sum(r["sets"] for r in standings) >= len(bots)

        wait_for(rated, 120, "ladder set rated")
    return ids


@contextlib.contextmanager
def your_bot(api: httpx.Client, grpc_address: str, name: str) -> Iterator[str]:
    """A bot registered here and connected (``atout-bot run heuristic``, as a bot developer runs
    theirs), for the Play page: its token."""
    token = api.post("/v1/bots", json={"name": name, "owner": "you"}).raise_for_status().json()["token"]
    bot = subprocess.Popen(
        [sys.executable, "-m", "atout.cli", "run", "heuristic", "--server", grpc_address],
        env={**os.environ, "ATOUT_TOKEN": token}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(b["name"] == name and b["connected"]
                             for b in api.get("/v1/bots").raise_for_status().json()), 60, "connected bot")
        yield token
    finally:
        bot.terminate()
        bot.wait(30)


def sit_and_play(page: Any, token: str) -> None:
    """On the Play page: sit down with the bot's token, start a 4-player merde, bid, and stop at
    the person's first card to play (the table mid-trick)."""
    page.fill("#play-token", token)
    page.click(".play-sit button")
    page.wait_for_selector(".play-form", state="visible", timeout=15_000)
    page.select_option(".play-game", "merde")
    page.select_option(".play-players", "4")
    page.click(".play-form button")
    turn = "() => document.querySelector('.play-panel')?.dataset.state === 'your-turn'"
    for _ in range(10):
        page.wait_for_function(turn, timeout=60_000)
        if page.locator(".play-panel [data-action^='play ']").count():
            return
        request = page.get_attribute(".play-panel", "data-request")
        page.locator(".play-panel [data-action]").first.click()
        page.wait_for_function(
            f"() => document.querySelector('.play-panel')?.dataset.request !== '{request}'", timeout=60_000)
    raise SystemExit("error: the Play page offered no card to play")


try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:  # said by browser(), when it is needed
    PlaywrightError = Exception  # type: ignore[misc,assignment]


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SystemExit("error: Playwright's Python client is missing: "
                         ".venv/bin/pip install -e '.[dev]'") from None
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"error: no chromium at {CHROMIUM}: apt-get install -y chromium "
                         "(or set ATOUT_CHROMIUM)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def shoot(chromium: Any, url: str, ids: dict[str, int], pages: list[str], sizes: list[str],
          out: Path, play_tokens: dict[str, str]) -> list[Path]:
    written = []
    for size in sizes:
        context = chromium.new_context(**SIZES[size])
        try:
            page = context.new_page()
            for name in pages:
                spec = PAGES[name]
                try:
                    page.goto(f"{url}/{spec.route.format(**ids)}")
                    page.wait_for_selector(spec.ready, timeout=30_000)
                    if name == "play":
                        sit_and_play(page, play_tokens[size])
                    if name == "replay":
                        page.fill(".slider", str(REPLAY_PLY))
                        page.wait_for_function(
                            f"() => document.querySelector('.table-area')?.dataset.ply === '{REPLAY_PLY}'",
                            timeout=10_000)
                except PlaywrightError as exc:  # the dashboard changed: say where, in one line
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise SystemExit(f"error: the {name} page ({size}) was not drawn as expected: "
                                     f"{first}") from None
                with contextlib.suppress(Exception):  # a page with an event stream is never idle
                    page.wait_for_load_state("networkidle", timeout=3_000)
                page.evaluate("document.fonts.ready")
                path = out / f"{name}-{size}.png"
                save_small(page.screenshot(), path)
                written.append(path)
        finally:
            context.close()
    return written


def save_small(png: bytes, path: Path) -> None:
    """``png`` to ``path``, as it is when under :data:`MAX_BYTES`, else in 256 colours (median
    cut, no dithering: flat areas stay flat)."""
    if len(png) > MAX_BYTES:
        from PIL import Image

        image = Image.open(io.BytesIO(png)).convert("RGB")
        smaller = io.BytesIO()
        image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
            smaller, "PNG", optimize=True)
        png = smaller.getvalue()
    path.write_bytes(png)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="where the PNGs go")
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, of {', '.join(PAGES)}")
    parser.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument("--game", default="merde", help="the demo's game (default: merde)")
    parser.add_argument("--players", type=int, default=4, help="the demo's players per match (default: 4)")
    parser.add_argument("--bots", type=int, default=5, help="the demo's bots (default: 5)")
    parser.add_argument("--games-per-pairing", type=int, default=1,
                        help="the demo's games per pairing (default: 1)")
    args = parser.parse_args(argv)
    pages, sizes = args.pages.split(","), args.sizes.split(",")
    unknown = [p for p in pages if p not in PAGES] + [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown page or size: {', '.join(unknown)}")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="atout-screenshots-") as home:
        demo = Demo(args.game, args.bots, args.players, args.games_per_pairing, Path(home))
        try:
            url, token, grpc_address = demo.wait_serving()
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30,
                              trust_env=False) as api:
                ids = prepare(api, with_ladder="ladder" in pages)
                with contextlib.ExitStack() as stack:
                    play_tokens = {  # a bot of its own for each size: one match at a time each
                        size: stack.enter_context(your_bot(api, grpc_address, "your-bot" + "-2" * bool(i)))
                        for i, size in enumerate(sizes)} if "play" in pages else {}
                    with browser() as chromium:
                        written = shoot(chromium, url, ids, pages, sizes, args.out, play_tokens)
        finally:
            demo.stop()
    for path in written:
        print(f"{path}  {path.stat().st_size // 1024} KB")
    print(f"{len(written)} screenshots in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
