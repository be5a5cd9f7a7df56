"""A person plays in a real browser (Debian's chromium, driven by Playwright as in
test_dashboard.py): a whole game of each ruleset against their own bot and house bots, by
clicking among the offered cards and buttons, at desktop and at phone size (screenshots to
``$ATOUT_SCREENSHOTS`` when set); a refused action shows the engine's reason; a timeout plays
the fallback and is shown as a fault; every page fits a phone's width (no horizontal scroll),
the header collapses into a menu, and the replay steps once per arrow key and shows the final
places only at its end."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import ADMIN_TOKEN, Api
from e2e_helpers import wait_until
from test_dashboard import chromium, playwright, shots  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
GAMES = [("merde", "3"), ("tiercon", "2"), ("regicide", "2"), ("fool", "2")]


def sit_down(page: Any, url: str, token: str) -> None:
    page.goto(f"{url}/#/play")
    page.fill("#play-token", token)
    page.click(".play-sit button")
    page.wait_for_function("() => document.querySelector('.play-status').dataset.human", timeout=15_000)


def play_to_the_end(page: Any, rng: random.Random, shot: Path | None = None, *, idle_first: bool = False,
                    refuse_first: str | None = None) -> int:
    """Answer every decision by clicking one of the offered actions until the match is over;
    returns how many decisions were played. ``idle_first``: let the first decision's clock run
    out; ``refuse_first``: the token with which to post an illegal answer to the first one."""
    seen: set[str] = set()
    decisions = 0
    while True:
        page.wait_for_function(
            "(seen) => { const p = document.querySelector('.play-panel'); return p.dataset.state === 'over'"
            " || (p.dataset.state === 'your-turn' && !seen.includes(p.dataset.request)); }",
            arg=list(seen), timeout=90_000,
        )  # fmt: skip
        panel = page.locator(".play-panel")
        if panel.get_attribute("data-state") == "over":
            return decisions
        request = panel.get_attribute("data-request")
        seen.add(request)
        decisions += 1
        if idle_first and decisions == 1:
            page.wait_for_selector(".play-fault:has-text('timeout')", timeout=20_000)
            assert "fallback played" in page.inner_text(".play-fault")
            continue
        if refuse_first and decisions == 1:
            page.evaluate(
                "([rid, token]) => fetch('/v1/play/answer', {method: 'POST', headers: {'Content-Type': "
                "'application/json', Authorization: `Bearer ${token}`},"
                " body: JSON.stringify({request_id: rid, action: 'play 1z'})})",
                [request, refuse_first],
            )
            page.wait_for_selector(".play-reason:has-text('Refused')", timeout=15_000)
            assert "1z" in page.inner_text(".play-reason")
            assert page.get_attribute(".play-panel", "data-state") == "refused"
        if shot is not None and decisions == 4:
            page.screenshot(path=str(shot), full_page=True)
        if decisions == 2:
            steady_under_the_pointer(page)
        offered = page.locator(".play-card.playable, .play-action")
        count = offered.count()
        assert count >= 1, "a decision with nothing to click"
        choice = offered.nth(rng.randrange(count))
        beat = choice.get_attribute("data-beat")
        single = choice.get_attribute("data-action")
        choice.click()
        if beat:  # fool: the attack card is chosen; now the covering card
            page.wait_for_selector(".play-card.playable", timeout=5_000)
            covers = page.locator(".play-card.playable")
            covers.nth(rng.randrange(covers.count())).click()
        elif not single:  # a card with several actions: choose one
            page.wait_for_selector(".play-action", timeout=5_000)
            page.locator(".play-action").first.click()


def steady_under_the_pointer(page: Any) -> None:
    """A playable card with the pointer on its lowest pixel keeps still: a card that lifted on
    hover moved out from under the pointer, dropped back, and flickered so that no click could
    land on it (a CI run's phone game timed out so)."""
    card = page.locator(".play-card.playable").first
    if not card.count():
        return
    box = card.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 1)
    page.wait_for_timeout(200)  # past the lift's transition
    tops = page.evaluate(
        "(el) => new Promise((done) => { const tops = []; const frame = () => {"
        " tops.push(el.getBoundingClientRect().top); if (tops.length < 12) requestAnimationFrame(frame);"
        " else done(tops); }; requestAnimationFrame(frame); })",
        card.element_handle(),
    )  # fmt: skip
    assert len(set(tops)) == 1, ("a hovered card moves", tops)


def no_horizontal_scroll(page: Any) -> None:
    page.wait_for_timeout(300)
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] == width[1] == PHONE["width"], (page.url, width)


@pytest.fixture
def browser_page(shots: Any) -> Iterator[Callable[..., Any]]:  # noqa: F811
    executable = chromium()
    with playwright()() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True)
        errors: list[str] = []

        def new(viewport: dict[str, int], **extra: Any) -> Any:
            page = browser.new_page(viewport=viewport, **extra)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            return page

        try:
            yield new
        finally:
            browser.close()
        assert not errors, errors


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_person_plays_each_game_against_their_bot_in_the_browser(
    api: Api, start_worker, connected_bots, clean_queues, shots, browser_page, size  # noqa: F811
) -> None:
    start_worker(f"browser-{size}", concurrency=2, practice=True)
    ((_, _, token),) = connected_bots(1, "random", prefix=f"pb{size[0]}")
    viewport = DESKTOP if size == "desktop" else PHONE
    page = browser_page(viewport, is_mobile=size == "phone", has_touch=size == "phone")
    rng = random.Random(16)
    sit_down(page, api.url, token)
    for game, players in GAMES:
        page.select_option(".play-game", game)
        page.select_option(".play-players", players)
        page.click(".play-form button")
        playing = ".play-panel:not([data-state='idle']):not([data-state='over'])"
        page.wait_for_selector(playing, timeout=20_000)
        refuse = token if game == "tiercon" and size == "desktop" else None
        played = play_to_the_end(page, rng, shots / f"play-{game}-{size}.png", refuse_first=refuse)
        assert played >= 3, (game, played)
        banner = page.inner_text(".play-prompt")
        assert "Match over" in banner, banner
        if size == "phone":
            no_horizontal_scroll(page)
        page.screenshot(path=str(shots / f"play-{game}-{size}-end.png"), full_page=True)
        match_id = page.get_attribute(".play-panel", "data-match")
        match = api.client.get(f"/v1/matches/{match_id}").json()
        assert match["status"] == "finished" and match["game"] == game
        assert any(s["bot"].endswith("~you") for s in match["seats"])


def test_a_human_in_a_tournament_who_lets_the_clock_run_sees_the_fault(
    api: Api, start_worker, connected_bots, clean_queues, shots, browser_page  # noqa: F811
) -> None:
    start_worker("browser-t", concurrency=2)
    ((bot, _, _),) = connected_bots(1, "random", prefix="pbt")
    created = api.organizer.post("/v1/bots", json={"name": f"ann-{bot}", "kind": "human", "move_ms": 2000})
    assert created.status_code == 201, created.text
    person = created.json()
    page = browser_page(DESKTOP)
    sit_down(page, api.url, person["token"])
    assert "Waiting for a match" in page.inner_text(".play-start")
    tournament = api.organizer.post("/v1/tournaments", json={
        "name": f"people cup {bot}", "game": "tiercon", "players": 2, "bots": [bot, person["name"]],
        "move_ms": 300, "max_faults": 0, "start": True,
    })  # fmt: skip
    assert tournament.status_code == 201, tournament.text
    page.wait_for_selector(".play-panel[data-state='your-turn']", timeout=30_000)
    assert "s left" in page.inner_text(".play-clock")  # the countdown
    played = play_to_the_end(page, random.Random(3), shots / "play-tournament-timeout.png", idle_first=True)
    assert played >= 3
    tid = tournament.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 60, "the end")
    match = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"][0]
    seats = api.client.get(f"/v1/matches/{match['id']}").json()["seats"]
    seat = next(s for s in seats if s["bot"] == person["name"])
    assert seat["faults"] == 1


def test_every_page_fits_a_phone_and_the_replay_steps_once(
    api: Api, start_worker, connected_bots, clean_queues, shots, browser_page  # noqa: F811
) -> None:
    start_worker("browser-p", concurrency=2)
    bots = connected_bots(3, "random", prefix="pbp")
    created = api.organizer.post("/v1/tournaments", json={
        "name": f"phone cup {bots[0][0]}", "game": "merde", "players": 3, "options": {"deals": 2},
        "bots": [b[0] for b in bots], "move_ms": 1000, "start": True,
    })  # fmt: skip
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 60, "the end")
    match_id = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"][0]["id"]
    ladder = api.organizer.post("/v1/ladders", json={
        "name": f"phone ladder {bots[0][0]}", "game": "merde", "players": 3, "options": {"deals": 1},
        "bots": [b[0] for b in bots], "target_in_flight": 1,
    })  # fmt: skip
    assert ladder.status_code == 201, ladder.text
    lid = ladder.json()["id"]
    wait_until(lambda: api.client.get(f"/v1/ladders/{lid}").json()["sets"].get("rated", 0) >= 1, 60,
               "a rated set")
    assert api.organizer.post(f"/v1/ladders/{lid}/pause").status_code == 200

    page = browser_page(PHONE, is_mobile=True, has_touch=True)
    pages = ["#/", "#/tournaments", f"#/tournaments/{tid}", "#/matches", f"#/matches/{match_id}", "#/games",
             "#/tests", "#/ladders", f"#/ladders/{lid}", "#/play"]  # fmt: skip
    for route in pages:
        page.goto(f"{api.url}/{route}")
        page.wait_for_selector("main > *", timeout=10_000)
        page.wait_for_timeout(700)
        no_horizontal_scroll(page)
        name = route.strip("#/").replace("/", "-") or "home"
        page.screenshot(path=str(shots / f"phone-{name}.png"), full_page=True)
    # the header is a menu
    assert not page.is_visible("nav a[data-nav='games']")
    page.click(".menu-toggle")
    assert page.is_visible("nav a[data-nav='games']")
    page.click("nav a[data-nav='matches']")
    assert not page.is_visible("nav a[data-nav='games']")
    page.screenshot(path=str(shots / "phone-menu-closed.png"))

    # the replay at desktop size: one step per arrow key with the slider focused, places at the end only
    desk = browser_page(DESKTOP)
    desk.goto(f"{api.url}/#/matches/{match_id}")
    desk.wait_for_selector(".slider", timeout=10_000)
    places = "() => [...document.querySelectorAll('.scoreboard tbody tr')].map(r => r.children[3].textContent)"  # noqa: E501
    assert set(desk.evaluate(places)) == {"–"}
    desk.focus(".slider")
    desk.keyboard.press("ArrowRight")
    assert desk.get_attribute(".table-area", "data-ply") == "1"
    desk.keyboard.press("ArrowRight")
    desk.keyboard.press("ArrowLeft")
    assert desk.get_attribute(".table-area", "data-ply") == "1"
    assert set(desk.evaluate(places)) == {"–"}
    desk.click('.step-btn[title="last"]')
    ranking = api.client.get(f"/v1/matches/{match_id}").json()["ranking"]
    assert desk.evaluate(places) == [str(p) for p in ranking]  # (ties share a place)
    assert ADMIN_TOKEN  # (the organizer's token is not needed for any of this)
