"""The dashboard's bot page (#/bots/NAME, js/botpage.js), in Chromium at a phone's size (390×844)
and a desktop's (1366×900), on a small real arena (its own database, the session's Redis) whose
matches are played by the real engine and stored by the workers' own code (which rates them):

- each version's figures (matches, wins, mean place, think and network p50/p99, faults) are the
  API's; the rating history is a chart with a line per game; ladders and recent matches link;
- the Play button opens the Play page with this bot as the opponent;
- bot names elsewhere (the match page's Seats table, standings, match lists, ladder standings)
  link to the bot page;
- axe-core finds no violation at either size; an unknown bot gets a clear "No bot NAME" page.
"""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN
from axe_helpers import assert_accessible
from sqlalchemy import update
from test_dashboard import chromium, playwright
from test_readable import play

pytestmark = [pytest.mark.timeout(150), pytest.mark.slow]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
NAMES = ["page-alpha", "page-bravo", "page-charlie"]
VERSIONS_JS = """() => [...document.querySelectorAll('table.bot-versions tbody tr')].map(
    (tr) => [...tr.cells].map((c) => c.innerText.trim()))"""


def ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f} ms"


def expected_row(v: dict[str, Any]) -> list[str]:
    """A version's row as the page should draw it from the API's figures."""
    t = v["think_time"] or {}
    f = v["faults"]
    kinds = [f"{f[k]} {k}" for k in ("timeout", "illegal", "disconnected", "absent") if f and f[k]]
    faults = "–" if not f else f"{f['total']}: {', '.join(kinds)}" if kinds else "0"
    place = "–" if v["mean_place"] is None else f"{v['mean_place']:.2f}"
    return [v["version"] or "(none)", str(v["matches"]), str(v["wins"]), place, ms(t.get("p50_ms")),
            ms(t.get("p99_ms")), ms(t.get("network_p50_ms")), ms(t.get("network_p99_ms")), faults]


def test_the_bot_page_shows_the_apis_figures_a_chart_links_and_play(lone_api: Any) -> None:
    from atout_arena.core.models import MatchSeat
    from atout_arena.services.tournaments import start_tournament

    tokens = {}
    for name in NAMES:
        registered = lone_api.post("/v1/bots", json={"name": name})
        assert registered.status_code == 201
        tokens[name] = registered.json()["token"]
    created = lone_api.post("/v1/tournaments", json={"name": "page cup", "game": "tiercon", "players": 2,
                                                     "bots": NAMES, "games_per_pairing": 2})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    matches = start_tournament(lone_api.sessions, tid)
    play(lone_api.sessions, matches)
    with lone_api.sessions() as session:  # two versions of alpha, as its Hellos said
        session.execute(update(MatchSeat).where(MatchSeat.match_id.in_(matches[:2]))
                        .values(played_version="1.0"))
        session.execute(update(MatchSeat).where(MatchSeat.match_id.in_(matches[2:]))
                        .values(played_version="2.0-rc1"))
        session.commit()
    ladder = lone_api.post("/v1/ladders", json={"name": "page ladder", "game": "tiercon", "players": 2,
                                                "bots": NAMES})
    assert ladder.status_code == 201, ladder.text
    url = str(lone_api.base_url).rstrip("/")
    bot = NAMES[0]
    detail = lone_api.get(f"/v1/bots/{bot}").json()
    assert {v["version"] for v in detail["versions"]} == {"1.0", "2.0-rc1"}
    assert detail["rating_history"] and detail["recent_matches"]

    with playwright()() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        for size, options, width in (("phone", PHONE, 390), ("desktop", DESKTOP, 1366)):
            context = browser.new_context(**options, reduced_motion="reduce")
            context.add_init_script(f"sessionStorage.setItem('atout-token', {ADMIN_TOKEN!r})")
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            page.goto(f"{url}/#/bots/{bot}")
            page.wait_for_selector("table.bot-versions tbody tr")
            assert page.inner_text("main h1").startswith(f"Bot {bot}")
            # each version's figures: the API's
            rows = page.evaluate(VERSIONS_JS)
            assert rows == [expected_row(v) for v in detail["versions"]], (size, rows)
            # the rating history: one line per game the bot is rated in
            chart = page.locator(".bot-chart svg[role=img]")
            assert chart.count() == 1
            assert page.locator(".bot-chart svg path[data-series]").count() == len(detail["rating_history"])
            # the ladder and the recent matches link to their pages
            assert page.get_attribute("table.bot-ladders a", "href") == f"#/ladders/{ladder.json()['id']}"
            hrefs = page.eval_on_selector_all("table.bot-matches tbody tr td:first-child a",
                                              "els => els.map(a => a.getAttribute('href'))")
            assert hrefs == [f"#/matches/{m['match_id']}" for m in detail["recent_matches"]]
            assert_accessible(page, f"the bot page ({size})")
            wide = page.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= width, (size, wide)
            # Play: the Play page, this bot as the opponent
            assert page.get_attribute("a.play-bot", "href") == f"#/play?bot={bot}"
            page.click("a.play-bot")
            page.wait_for_selector(".play-against")
            assert bot in page.inner_text(".play-against")
            if size == "desktop":  # sitting down: the page says whether the token is that bot's
                for who, says in ((NAMES[1], f"This token is not {bot}'s"),
                                  (bot, f"Against {bot}: pick a game")):
                    page.fill("#play-token", tokens[who])
                    page.click(".play-sit button")
                    page.wait_for_selector(f".play-against:has-text(\"{says}\")", timeout=10_000)
            # an unknown bot: a clear page of its own
            page.evaluate("() => { location.hash = '#/bots/nobody-here'; }")
            page.wait_for_selector(".bot-missing h1")
            assert page.inner_text("main h1") == "No bot nobody-here"
            assert_accessible(page, f"no such bot ({size})")
            assert not errors, errors
            context.close()

        # names elsewhere link to the bot page: the Seats table, standings, match lists, ladders
        context = browser.new_context(**DESKTOP)
        page = context.new_page()
        link = f"a.bot-link[href='#/bots/{bot}']"
        played = detail["recent_matches"][0]["match_id"]  # a match of this bot
        for route, where in ((f"#/matches/{played}", ".scoreboard"),
                             (f"#/tournaments/{tid}", "table.standings"),
                             (f"#/tournaments/{tid}", "table.matches"), ("#/matches", "table.matches"),
                             (f"#/ladders/{ladder.json()['id']}", "table.ladder-standings")):
            page.goto(f"{url}/{route}")
            page.wait_for_selector(f"{where} {link}", timeout=10_000)
        page.goto(f"{url}/#/matches/{played}")
        page.click(f".scoreboard {link}")
        page.wait_for_selector(".bot-token-needed")  # no token here: the page says which it needs
        assert page.inner_text("main h1") == f"Bot {bot}"
        context.close()
        browser.close()
