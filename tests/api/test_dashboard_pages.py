"""The dashboard's pages other than the Play page, for people (issue 34), in Chromium at a
phone's size (390×844, touch) and a desktop's (1366×900), on real data: a small arena (its own
database, the session's Redis) whose matches are played by the real engines and stored by the
workers' own code (tests/api/test_readable.py's ``play``), one of them left running with its
live events published on Redis as a worker publishes them.

- axe-core reports no violation on any page (tests/axe_helpers.py);
- the Seats table shows every seat's bot and version, at every width;
- the phone menu spans the screen; wide tables say they scroll; a joker's face fits its card;
- a spectator who picks a seat without a token keeps the table, and the move log survives;
- a practice match's header gives the person's own move time.

One Chromium for the module, several routes per page load.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN
from axe_helpers import assert_accessible
from sqlalchemy import select, update
from test_readable import play

pytestmark = [pytest.mark.timeout(150), pytest.mark.slow]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
NAMES = ["alexandrina-the-bold", "bartholomew-jr", "cassiopeia-7", "dominic-fairweather"]
VERSIONS = ["2.14.0-rc1", "1.0.3", "v7", "0.9.12"]


@dataclass
class Arena:
    url: str
    tournament: int
    finished: int  # a finished merde match (4 seats, versions)
    fool: int  # a finished fool match (attacker and defender badges)
    regicide: int  # a finished régicide match (jokers)
    running: int  # a match marked running; its live events are published by the test
    steps: list[dict[str, Any]]  # the public events of a real merde match, to publish
    test: int
    ladder: int
    practice: int  # a practice match of a person (60 s a move) against bots (2 s)


def tournament(lone_api: Any, game: str, players: int, bots: list[str],
               **extra: Any) -> tuple[int, list[int]]:
    from atout_arena.services.tournaments import start_tournament

    body = {"name": f"{game} cup", "game": game, "players": players, "bots": bots, **extra}
    created = lone_api.post("/v1/tournaments", json=body)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    return tid, start_tournament(lone_api.sessions, tid)


@pytest.fixture
def arena(lone_api: Any) -> Arena:
    from atout_arena.core.models import Bot, Match, MatchSeat

    for name in NAMES:
        assert lone_api.post("/v1/bots", json={"name": name}).status_code == 201
    tid, merde = tournament(lone_api, "merde", 4, NAMES, options={"deals": 2}, games_per_pairing=3)
    play(lone_api.sessions, merde[:2])
    with lone_api.sessions() as session:  # the versions the bots said in their Hello
        for seat, version in enumerate(VERSIONS):
            session.execute(update(MatchSeat).where(MatchSeat.match_id == merde[0], MatchSeat.seat == seat)
                            .values(played_version=version))
        session.execute(update(Match).where(Match.id == merde[2]).values(status="running"))
        session.commit()
    _, fool = tournament(lone_api, "fool", 3, NAMES[:3])
    play(lone_api.sessions, fool[:1])
    _, regicide = tournament(lone_api, "regicide", 4, NAMES)
    play(lone_api.sessions, regicide[:1])
    replay = lone_api.get(f"/v1/matches/{merde[0]}/replay").json()["events"]
    steps = [{**e, "match_id": str(merde[2])} for e in replay]
    test = lone_api.post("/v1/tests", json={"game": "tiercon", "a": NAMES[0], "b": NAMES[1]})
    assert test.status_code == 201, test.text
    ladder = lone_api.post("/v1/ladders", json={"name": "a ladder", "game": "merde", "players": 3,
                                                "bots": NAMES[:3]})
    assert ladder.status_code == 201, ladder.text
    assert lone_api.post("/v1/bots", json={"name": "emma", "kind": "human"}).status_code == 201
    with lone_api.sessions() as session:
        emma = session.scalar(select(Bot.id).where(Bot.name == "emma"))
        others = session.scalars(select(Bot.id).where(Bot.name.in_(NAMES[:3]))).all()
        practice = Match(game="merde", options={}, seed=7, status="queued", move_ms=2000)
        practice.seats = [MatchSeat(seat=s, bot_id=b) for s, b in enumerate([emma, *others])]
        session.add(practice)
        session.commit()
        practice_id = practice.id
    return Arena(str(lone_api.base_url).rstrip("/"), tid, merde[0], fool[0], regicide[0], merde[2], steps,
                 test.json()["id"], ladder.json()["id"], practice_id)


def publish(redis_client: Any, event: dict[str, Any]) -> None:
    """What a worker does with a match's public event: the latest one kept, and published."""
    from atout_arena.core.keys import last_event_key, public_channel

    match_id = int(event["match_id"])
    text = json.dumps(event)
    redis_client.set(last_event_key(match_id), text, ex=120)
    redis_client.publish(public_channel(match_id), text)


def routes(a: Arena) -> list[tuple[str, str]]:
    """Every page but the Play page: (route, a selector that says its data is drawn). The last
    ones are seen with the organizer's token (a bot's page needs it, or the bot's own)."""
    return [
        ("#/", ".leaderboards table.leaderboard, .leaderboards .empty"),
        ("#/tournaments", ".tcard"),
        (f"#/tournaments/{a.tournament}", "table.standings tbody tr"),
        ("#/matches", "table.data tbody tr"),
        (f"#/matches/{a.running}", ".felt .seat"),
        (f"#/matches/{a.finished}", ".felt .seat"),
        (f"#/matches/{a.fool}", ".felt .seat"),
        (f"#/matches/{a.regicide}", ".felt .seat"),
        ("#/tests", ".test-card"),
        (f"#/tests/{a.test}", ".llr"),
        ("#/ladders", ".ladder-card"),
        (f"#/ladders/{a.ladder}", ".ladder-standings"),
        ("#/games", ".games table.data"),
        (f"#/bots/{NAMES[0]}", ".bot-token-needed"),
        ("token", ""),
        (f"#/bots/{NAMES[0]}?again", ".bot-matches"),  # (another hash: the page is drawn again)
    ]


def test_axe_finds_no_violation_on_any_page(browser: Any, arena: Arena, redis_client: Any) -> None:
    publish(redis_client, arena.steps[5])
    found: list[str] = []
    for size, options, width in (("phone", PHONE, 390), ("desktop", DESKTOP, 1366)):
        # no motion: axe measures colours as they settle, not halfway through a bubble's fade-in
        context = browser.new_context(**options, reduced_motion="reduce")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.goto(f"{arena.url}/#/start")  # no page: every route below is then a new one
        page.wait_for_selector("main > *")
        for route, ready in routes(arena):
            if route == "token":
                page.evaluate("(t) => sessionStorage.setItem('atout-token', t)", ADMIN_TOKEN)
                continue
            before = page.query_selector("main > *")  # the page before: gone once this one is drawn
            page.evaluate("(hash) => { location.hash = hash; }", route)
            page.wait_for_function("el => !el.isConnected", arg=before, timeout=10_000)
            page.wait_for_selector(ready, timeout=10_000)
            page.wait_for_timeout(50)
            try:
                assert_accessible(page, f"{route} ({size})")
            except AssertionError as exc:
                found.append(str(exc))
            wide = page.evaluate("() => document.documentElement.scrollWidth")  # (a phone zooms out to it)
            if wide > width:
                found.append(f"{route} ({size}) scrolls sideways: {wide} px wide")
        assert not errors, errors
        context.close()
    assert not found, "\n".join(found)


SEATS_CELLS = """() => [...document.querySelectorAll('.scoreboard tr')].map((tr) => [...tr.cells].map((c) => {
    const box = c.getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(c);
    const text = range.getBoundingClientRect();
    return {text: c.innerText.trim(), shown: getComputedStyle(c).display !== 'none' && box.width > 0,
            left: box.left, right: box.right, textLeft: text.left, textRight: text.right};
}))"""


def seats_problems(page: Any) -> list[str]:
    """What is wrong with the Seats table as drawn: hidden or clipped cells, overlapping ones."""
    problems = []
    scroller = page.evaluate("() => { const t = document.querySelector('.scoreboard');"
                             " return [t.scrollWidth, t.clientWidth]; }")
    if scroller[0] > scroller[1] + 1:
        problems.append(f"the table scrolls ({scroller[0]} px in {scroller[1]})")
    for row in page.evaluate(SEATS_CELLS):
        for cell in row:
            if not cell["shown"]:
                problems.append(f"{cell['text']!r} hidden")
            elif cell["text"] and not (cell["left"] - 1 <= cell["textLeft"]
                                       and cell["textRight"] <= cell["right"] + 1):
                problems.append(f"{cell['text']!r} runs out of its cell")
        for a, b in itertools.pairwise(row):
            if a["right"] > b["left"] + 1:
                problems.append(f"{a['text']!r} overlaps {b['text']!r}")
    return problems


def test_the_seats_table_shows_each_bot_and_version_at_every_width(browser: Any, arena: Arena,
                                                                   redis_client: Any) -> None:
    publish(redis_client, arena.steps[3])
    for width, options in ((1280, {}), (1366, {}), (1600, {}), (390, PHONE)):
        context = browser.new_context(**{"viewport": {"width": width, "height": 900}, **options})
        page = context.new_page()
        for match in (arena.finished, arena.running):  # the replay's side panel, the live one's
            page.goto(f"{arena.url}/#/matches/{match}")
            page.wait_for_function(  # this match's page (the one before had a Seats table too)
                "(id) => document.querySelector('main h1')?.textContent.startsWith(`Match #${id} `)"
                " && document.querySelector('.scoreboard tbody tr')", arg=match)
            problems = seats_problems(page)
            assert not problems, (width, match, problems)
            text = page.inner_text(".scoreboard")
            for name in NAMES:
                assert name in text, (width, match, text)
            if match == arena.finished:
                for version in VERSIONS:
                    assert version in text, (width, text)
        context.close()


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not drawn"
    return found


JOKERS = """async () => {
    const { cardEl } = await import('/dashboard/js/cards.js');
    const where = document.createElement('div');
    where.className = 'felt';
    const own = document.createElement('div');
    own.className = 'hand own';
    document.querySelector('main').append(where, own);
    const cards = ['', 'sm', 'xs'].map((size) => where.appendChild(cardEl('RJ', size)));
    cards.push(own.appendChild(cardEl('BJ')));
    return cards.map((card) => {
        const pip = card.querySelector('.pip');
        const range = document.createRange();
        range.selectNodeContents(pip);
        const text = range.getBoundingClientRect();
        const face = card.getBoundingClientRect();
        const shown = getComputedStyle(pip).display !== 'none' && text.width > 0;
        return {size: card.className, shown, inside: !shown || (text.left >= face.left
                && text.right <= face.right && text.top >= face.top && text.bottom <= face.bottom)};
    });
}"""


def test_on_a_phone_the_menu_spans_the_screen_tables_fit_and_jokers_fit(browser: Any, arena: Arena,
                                                                          redis_client: Any) -> None:
    publish(redis_client, arena.steps[3])
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.goto(f"{arena.url}/#/matches")
    page.wait_for_selector("table.data tbody tr")
    # The menu: whole rows under the logo; the ☰ stays where it was.
    toggle = box(page, ".menu-toggle")
    page.click(".menu-toggle")
    nav, brand, bar = box(page, ".topbar nav"), box(page, ".brand"), box(page, ".topbar")
    assert nav["width"] >= bar["width"] - 40, (nav, bar)
    assert nav["y"] >= brand["y"] + brand["height"] - 1, (nav, brand)
    assert box(page, ".menu-toggle") == toggle
    assert box(page, ".topbar .token")["width"] >= bar["width"] - 40
    page.keyboard.press("Escape")  # closes it, the focus back on the ☰
    assert not page.locator(".topbar nav").is_visible()
    assert page.evaluate("() => document.activeElement.className") == "menu-toggle"
    assert page.get_attribute(".menu-toggle", "aria-expanded") == "false"
    page.click(".menu-toggle")
    page.click(".topbar nav a[data-nav='tournaments']")
    assert not page.locator(".topbar nav").is_visible()
    # Tables of matches: their buttons on the screen, not past its edge.
    for route in ("#/matches", f"#/tournaments/{arena.tournament}"):
        page.evaluate("(hash) => { location.hash = hash; }", route)
        page.wait_for_selector("table.data a.btn")
        buttons = page.eval_on_selector_all("table.data a.btn",
                                            "els => els.map(e => e.getBoundingClientRect().right)")
        assert max(buttons) <= 390, (route, buttons)
    # A table wider than the screen says so and takes the focus.
    page.evaluate("(hash) => { location.hash = hash; }", f"#/tournaments/{arena.tournament}")
    page.wait_for_selector("table.standings tbody tr")
    wide = page.eval_on_selector_all(
        "table.data", "els => els.filter(t => t.scrollWidth > t.clientWidth + 1)"
                      ".map(t => [t.className, t.classList.contains('scrolls'), t.tabIndex])")
    assert wide and all(scrolls and tab == 0 for _, scrolls, tab in wide), wide
    # A joker's word stays on its card, at every card size.
    jokers = page.evaluate(JOKERS)
    assert all(j["inside"] for j in jokers), jokers
    context.close()


def test_a_spectator_who_picks_a_seat_keeps_the_table_and_the_moves(browser: Any, arena: Arena,
                                                                     redis_client: Any) -> None:
    steps = arena.steps
    publish(redis_client, steps[3])  # a late joiner first gets the latest event
    context = browser.new_context(**DESKTOP)
    page = context.new_page()
    page.goto(f"{arena.url}/#/matches/{arena.running}")
    page.wait_for_selector(".felt .seat")

    def moves(count: int) -> None:
        page.wait_for_function("(n) => document.querySelectorAll('.log li').length === n", arg=count,
                               timeout=10_000)

    def live() -> None:  # the stream of the view on screen is subscribed: what is published now reaches it
        page.wait_for_selector(".live-state.live", timeout=10_000)

    live()
    for step in steps[4:6]:
        publish(redis_client, step)
    moves(3)
    # A seat without a token: refused, back to the public view with a note; the table and moves stay.
    page.select_option(".viewer-select", "1")
    page.wait_for_selector(".live-note:has-text('token')", timeout=10_000)
    assert page.locator(".felt .seat").count() == 4 and "Waiting for the match" not in page.inner_text("main")
    assert page.input_value(".viewer-select") == ""
    moves(3)
    live()
    publish(redis_client, steps[6])
    moves(4)
    # With the organizer's token: seat 1's view (its stream starts at the next step), then back.
    page.fill("#token-input", ADMIN_TOKEN)
    before = page.query_selector(".live-state")  # the page is drawn again with the token
    page.click("#token-form button")
    page.wait_for_function("el => !el.isConnected", arg=before, timeout=10_000)
    page.wait_for_selector(".felt .seat")
    live()
    publish(redis_client, steps[7])
    moves(2)  # a new page: the latest event, then the next
    page.select_option(".viewer-select", "1")
    live()
    assert page.locator(".felt .seat").count() == 4 and page.locator(".felt .seat.viewer").count() == 1
    moves(2)
    page.select_option(".viewer-select", "")
    live()
    moves(2)
    publish(redis_client, steps[8])
    moves(3)
    assert page.locator(".live-note").inner_text() == ""
    # A person's practice match: the header gives the person's own time, not only the bots'.
    import httpx

    seats = httpx.get(f"{arena.url}/v1/matches/{arena.practice}", timeout=30).json()["seats"]
    assert [s["move_ms"] for s in seats] == [60_000, 2000, 2000, 2000]
    page.goto(f"{arena.url}/#/matches/{arena.practice}")
    page.wait_for_selector(f"h1:has-text('Match #{arena.practice}')")
    assert "2000 ms per move (emma: 60 s)" in page.inner_text(".page-head .facts")
    context.close()


UNDER_PLATES = """() => {
    const plates = [...document.querySelectorAll('.felt > .seat')]
        .map((s) => [s.dataset.seat, s.getBoundingClientRect()]);
    const found = [];
    const drawn = '.felt :is(.table-info, .note, .stock, .fool-table .pair, .trick .card)';
    for (const e of document.querySelectorAll(drawn)) {
        const r = e.getBoundingClientRect();
        for (const [seat, s] of plates) {
            if (r.width && r.left < s.right - 1 && r.right > s.left + 1
                && r.top < s.bottom - 1 && r.bottom > s.top + 1) {
                found.push(`${e.className} ${JSON.stringify(e.innerText.slice(0, 40))} under seat ${seat}`);
            }
        }
    }
    return found;
}"""


def crowded_steps(url: str, match: int) -> list[int]:
    """The replay's steps whose table holds the most: régicide's trick winner's choice (the longest
    line of the table's corner), full tricks, the fool's table with the most pairs."""
    import httpx

    events = httpx.get(f"{url}/v1/matches/{match}/replay", timeout=30).json()["events"]

    def load(i: int) -> int:
        view = events[i]["view"]
        return 100 * (view.get("phase") == "choose") + len(view.get("trick") or view.get("table") or [])

    ranked = sorted(range(len(events)), key=load, reverse=True)
    return sorted(ranked[:4])


def test_on_a_desktop_the_tables_text_stays_clear_of_the_seat_plates(browser: Any, arena: Arena) -> None:
    steps = {match: crowded_steps(arena.url, match) for match in (arena.finished, arena.fool, arena.regicide)}
    found = []
    for width in (1280, 1600):
        context = browser.new_context(viewport={"width": width, "height": 900}, reduced_motion="reduce")
        page = context.new_page()
        for match, chosen in steps.items():
            page.goto(f"{arena.url}/#/matches/{match}")
            page.wait_for_function(
                "(id) => document.querySelector('main h1')?.textContent.startsWith(`Match #${id} `)"
                " && document.querySelector('.slider')", arg=match)
            for step in chosen:
                page.fill(".slider", str(step))
                found += [f"{width} px, match {match}, step {step}: {what}"
                          for what in page.evaluate(UNDER_PLATES)]
        context.close()
    assert not found, "\n".join(found)
