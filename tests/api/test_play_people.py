"""The Play page for people (issue 34), in a real Chromium at phone (390x844, touch) and
desktop (1366x900) size: one browser for the module, one person per size playing their bot
and house bots (several checks per game played), and an organizer's seated person.

- the end: the table shows the final state, even when the spectators' stream never brings the
  last steps (here it is cut off for the whole match: the page reads the replay at the end);
- who played what: the trick's cards carry seat labels at every width, none hidden (a 5-player
  trick drawn at the page's width), and a move log names who played what;
- the hand stays readable while bidding; fool's covering cards light up at once;
- régicide's trump buttons read (contrast, the suit's name in words);
- during a match the table is the page (forms folded), your turn brings the focus and the
  scroll to your first move, leaving or starting another asks first, an organizer's seated
  person sees their match;
- cards have spoken names, refusals read in words, merde's deals are the person's choice,
  last-deal points name players, and axe-core finds nothing before a game and mid-game in
  every game.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from api_helpers import Api
from axe_helpers import assert_accessible
from test_dashboard import chromium, playwright, shots  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SIZES: dict[str, dict[str, Any]] = {
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
    "desktop": {"viewport": {"width": 1366, "height": 900}},
}
TURN = (
    "(seen) => { const p = document.querySelector('.play-panel'); return p.dataset.state === 'over'"
    " || (p.dataset.state === 'your-turn' && !seen.includes(p.dataset.request)); }"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium()
    with playwright()() as p:
        launched = p.chromium.launch(executable_path=executable, headless=True)
        try:
            yield launched
        finally:
            launched.close()


class Dialogs:
    """The page's confirmation dialogs: their messages, answered from ``answers`` (else yes)."""

    def __init__(self, page: Any) -> None:
        self.messages: list[str] = []
        self.answers: list[bool] = []
        page.on("dialog", self._on)

    def _on(self, dialog: Any) -> None:
        self.messages.append(dialog.message)
        yes = self.answers.pop(0) if self.answers else True
        dialog.accept() if yes else dialog.dismiss()


def new_page(browser: Any, size: str) -> tuple[Any, list[str], Dialogs]:
    page = browser.new_page(**SIZES[size])
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, errors, Dialogs(page)


def sit_down(page: Any, url: str, token: str, *, check: str | None = None) -> None:
    page.goto(f"{url}/#/play")
    if check:
        page.wait_for_selector("#play-token")
        assert_accessible(page, check)
    page.fill("#play-token", token)
    page.click(".play-sit button")
    page.wait_for_function("() => document.querySelector('.play-status').dataset.human", timeout=15_000)


def next_turn(page: Any, seen: set[str]) -> str | None:
    """Wait for a decision not seen yet (its request id) or the end (None)."""
    page.wait_for_function(TURN, arg=list(seen), timeout=90_000)
    panel = page.locator(".play-panel")
    if panel.get_attribute("data-state") == "over":
        return None
    request = panel.get_attribute("data-request")
    seen.add(request)
    return request


def click_a_move(page: Any, rng: random.Random) -> None:
    offered = page.locator(".play-card.playable, .play-actions .play-action")
    count = offered.count()
    assert count >= 1, "a decision with nothing to click"
    choice = offered.nth(rng.randrange(count))
    single = choice.get_attribute("data-action")
    choice.click()
    if not single:  # a card with several actions: choose one
        page.wait_for_selector(".play-actions .play-action", timeout=5_000)
        page.locator(".play-actions .play-action").first.click()


def your_move_is_at_hand(page: Any, where: str) -> None:
    """The first offered move has the focus and shows in the viewport."""
    state = page.evaluate("""() => {
        const a = document.activeElement;
        const move = a && a.matches('.play-card.playable, .play-actions button');
        const box = a.getBoundingClientRect();
        return {move, top: box.top, bottom: box.bottom, height: innerHeight, name: a.outerHTML.slice(0, 200)};
    }""")
    assert state["move"], (where, "the focus is not on a move", state)
    assert state["top"] >= 0 and state["bottom"] <= state["height"], (where, "the move is hidden", state)


def refused_in_words(page: Any, token: str) -> None:
    """An answer the engine refuses: its reason reads in words, not codes ("play 8h")."""
    request = page.get_attribute(".play-panel", "data-request")
    card = page.locator(".play-hand [data-card], .play-hand .card").first.get_attribute("data-card")
    page.evaluate(
        "([rid, token, action]) => fetch('/v1/play/answer', {method: 'POST', headers: {'Content-Type':"
        " 'application/json', Authorization: `Bearer ${token}`},"
        " body: JSON.stringify({request_id: rid, action})})",
        [request, token, f"play {card}"],
    )
    page.wait_for_selector(".play-reason:has-text('Refused')", timeout=15_000)
    text = page.inner_text(".play-reason")
    named = page.evaluate("async (code) => (await import('/dashboard/js/cards.js')).cardName(code)", card)
    assert text.startswith(f"Refused: play {named}: ") and card not in text, text
    assert "for seat" not in text, text  # the engine's preamble is not repeated
    page.wait_for_selector(".play-panel[data-state='refused'] .play-actions button", timeout=5_000)
    your_move_is_at_hand(page, "after a refusal")


def hand_readable(page: Any, where: str) -> None:
    opacities = page.evaluate(
        "() => [...document.querySelectorAll('.play-hand .play-card')].map(c => getComputedStyle(c).opacity)"
    )
    assert opacities and set(opacities) == {"1"}, (where, opacities)


def trick_labelled(page: Any, where: str) -> int:
    """Every card of the trick carries its seat's label, and the card and the label show (the
    element at their centres is theirs). Returns how many cards the trick has."""
    found = page.evaluate("""() => { const hit = document.createElement('style');
      hit.textContent = '.trick, .trick * { pointer-events: auto !important; }'; document.head.append(hit);
      try { return [...document.querySelectorAll('.table-area .trick .played')].map(p => {
        const seen = (node) => { const b = node.getBoundingClientRect();
            const at = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
            return !!at && p.contains(at); };
        const card = p.querySelector('.card'), label = p.querySelector('.played-by');
        return {label: label ? label.textContent : '', card: seen(card), labelShows: !!label && seen(label)};
    }); } finally { hit.remove(); } }""")
    for f in found:
        assert f["label"] and f["card"] and f["labelShows"], (where, found)
    return len(found)


FINAL_TABLE = "() => document.querySelector('.table-area .info-lines .phase')?.textContent === 'game over'"

FIVE_TRICK = """async () => {
    const { renderTable } = await import('/dashboard/js/table.js');
    const box = document.createElement('div');
    box.className = 'table-area probe';
    document.querySelector('.play-layout').prepend(box);
    renderTable(box, {game: 'merde', names: ['ann', 'bob', 'cy', 'dee', 'eve'], viewer: 0, hands: null,
        ended: null, lastStep: null, view: {players: 5, phase: 'play', deal: 2, deals: 3, trump: 'h',
        hand: ['2c'], bids: [1, 0, 1, 0, 1], tricks_won: [0, 0, 0, 0, 0], scores: [0, 0, 0, 0, 0],
        trick: [[1, 'Kh'], [2, 'Qh'], [3, 'Jh'], [4, 'Th'], [0, 'Ah']], current_player: null,
        last_deal: {total: [12, -3, 10, 0, 11]}}});
    box.scrollIntoView();
    const hit = document.createElement('style');
    hit.textContent = '.trick, .trick * { pointer-events: auto !important; }'; document.head.append(hit);
    const played = [...box.querySelectorAll('.trick .played')].map(p => {
        const c = p.querySelector('.card').getBoundingClientRect();
        const at = document.elementFromPoint(c.left + c.width / 2, c.top + c.height / 2);
        const l = p.querySelector('.played-by').getBoundingClientRect();
        const atLabel = document.elementFromPoint(l.left + l.width / 2, l.top + l.height / 2);
        return {label: p.querySelector('.played-by').textContent,
                shows: p.contains(at) && p.contains(atLabel),
                box: [c.left, c.top, c.right, c.bottom]};
    });
    const points = [...box.querySelectorAll('.seat-points')].map(s => s.textContent);
    const names = [...box.querySelectorAll('.trick .card')].map(c => c.getAttribute('aria-label'));
    box.remove(); hit.remove();
    return {played, points, names};
}"""


def five_cards_in_a_trick(page: Any, where: str) -> None:
    got = page.evaluate(FIVE_TRICK)
    labels = [p["label"] for p in got["played"]]
    assert labels == ["1 bob", "2 cy", "3 dee", "4 eve", "0 you"], (where, labels)
    assert all(p["shows"] for p in got["played"]), (where, "a trick card or its label hides", got["played"])
    boxes = [p["box"] for p in got["played"]]
    for i, a in enumerate(boxes):  # no card over another
        for b in boxes[i + 1 :]:
            overlap_x = min(a[2], b[2]) - max(a[0], b[0])
            overlap_y = min(a[3], b[3]) - max(a[1], b[1])
            assert overlap_x <= 2 or overlap_y <= 2, (where, "trick cards overlap", a, b)
    assert got["points"] == ["you +12", "bob −3", "cy +10", "dee +0", "eve +11"], got["points"]
    assert got["names"][0] == "king of hearts" and got["names"][3] == "ten of hearts", got["names"]


TRUMP_BUTTONS = """async () => {
    const { actionEl } = await import('/dashboard/js/cards.js');
    const row = document.querySelector('.play-actions');
    const made = ['trump d', 'trump h', 'trump s invert'].map(a => {
        const b = document.createElement('button'); b.className = 'play-action probe'; b.append(actionEl(a));
        row.append(b); return b; });
    return made.map(b => b.textContent);
}"""


def trump_buttons_read(page: Any, where: str, shot: Any) -> None:
    texts = page.evaluate(TRUMP_BUTTONS)
    assert texts == ["trump ♦ diamonds", "trump ♥ hearts", "trump ♠ spades + invert"], texts
    assert_accessible(page, f"{where}: régicide's trump buttons", context=".play-actions")
    page.screenshot(path=str(shot))
    page.evaluate("() => document.querySelectorAll('.probe').forEach(b => b.remove())")


def start(page: Any, game: str, players: str, deals: str | None = None) -> str:
    """Start a practice match from the form (shown again after a match); returns its id."""
    before = page.get_attribute(".play-panel", "data-match")
    page.select_option(".play-game", game)
    page.select_option(".play-players", players)
    if deals:
        page.select_option(".play-deals", deals)
    page.click(".play-form button")
    page.wait_for_function(
        "(before) => { const p = document.querySelector('.play-panel'); return p.dataset.match"
        " && p.dataset.match !== before && p.dataset.state !== 'idle'; }",
        arg=before,
        timeout=20_000,
    )
    return page.get_attribute(".play-panel", "data-match")


def table_is_the_page(page: Any, where: str) -> None:
    """The forms are folded away; at desktop size your own seat shows without scrolling."""
    assert not page.is_visible(".play-sit") and not page.is_visible(".play-form"), where
    assert page.is_visible(".play-leave"), where
    if page.viewport_size["width"] > 1000:
        box = page.evaluate(
            "() => { const s = document.querySelector('.table-area .seat.viewer');"
            " if (!s) return null; const b = s.getBoundingClientRect();"
            " return [b.top, b.bottom]; }"
        )
        assert box is None or (box[0] >= 0 and box[1] <= page.viewport_size["height"]), (where, box)


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_person_at_the_play_table(
    api: Api,
    start_worker,
    connected_bots,
    clean_queues,
    browser,
    shots,  # noqa: F811
    size,
) -> None:
    start_worker(f"people-{size}", concurrency=8)
    ((bot, _, token),) = connected_bots(1, "random", prefix=f"pp{size[0]}")
    page, errors, dialogs = new_page(browser, size)
    rng = random.Random(34)
    try:
        sit_down(page, api.url, token, check=f"play, {size}, before sitting down")
        page.wait_for_selector(".play-form")
        # the opponents' strength, in words: your bot with house bots of each kind, or house bots
        # alone (the bosses of GET /v1/play/opponents, docs/bosses.md)
        page.wait_for_function("() => document.querySelectorAll('.play-opponents option').length === 8")
        opponents = page.eval_on_selector_all(".play-opponents option", "os => os.map(o => o.textContent)")
        assert opponents[0] == f"{bot} + house bots: easy (heuristic)", opponents
        assert "House bots: hard (PIMC search, 64 worlds)" in opponents, opponents
        assert_accessible(page, f"play, {size}, before a game")
        assert not page.is_visible(".play-leave")

        # -- merde, 5 players, 1 deal (the person's choice), twice: the first time the ----------
        # spectators' stream is cut off for the whole match (the end comes from the replay), the
        # second time it runs (the usual way: its last steps come after the play stream's end)
        assert page.is_visible(".play-deals")
        for cut in (True, False):
            if cut:
                page.route("**/v1/matches/*/events", lambda route: route.abort())
            match_id = start(page, "merde", "5", deals="1")
            table_is_the_page(page, f"merde {size}")
            seen: set[str] = set()
            bids = plays = 0
            while next_turn(page, seen):
                legal = page.evaluate("() => [...document.querySelectorAll('.play-panel [data-action]')]"
                                      ".map(b => b.dataset.action)")  # fmt: skip
                your_move_is_at_hand(page, f"merde {size}")
                if any(a.startswith("bid") for a in legal):
                    bids += 1
                    hand_readable(page, f"bidding, {size}")
                    if cut:
                        assert_accessible(page, f"play, {size}, mid-game, merde (bidding)")
                        refused_in_words(page, token)
                else:
                    plays += 1
                    trick_labelled(page, f"merde {size}")
                    page.screenshot(path=str(shots / f"people-merde-{size}.png"))
                    five_cards_in_a_trick(page, size)
                click_a_move(page, rng)
            assert bids and plays, (bids, plays)
            if cut:
                page.unroute("**/v1/matches/*/events")
            # the end: the final table, not the last decision's
            page.wait_for_selector(".play-panel[data-state='over']")
            assert "Match over" in page.inner_text(".play-prompt")
            page.wait_for_function(FINAL_TABLE, timeout=15_000)
            page.screenshot(path=str(shots / f"people-merde-{size}-end-{cut}.png"), full_page=True)
            assert page.locator(".table-area .seat.to-act").count() == 0
            assert page.locator(".play-hand .card").count() == 0  # every card played, none left in hand
            match = api.client.get(f"/v1/matches/{match_id}").json()
            assert match["options"]["deals"] == 1 and match["players"] == 5
            page.wait_for_selector(".play-log[data-complete='true']", state="attached", timeout=15_000)
            log = page.evaluate(
                "() => [...document.querySelectorAll('.play-log li')].map(l =>"
                " [l.querySelector('.who').textContent, l.querySelector('.what').textContent])"
            )
            assert len(log) == 10, log  # 5 bids and 5 cards, each with who played it
            seat_names = {s["bot"] for s in match["seats"]} - {f"{bot}~you"}
            assert {who for who, _ in log} == seat_names | {"you"}, log
            assert sum(what.startswith("play ") for _, what in log) == 5, log
            assert page.is_visible(".play-form")  # the forms come back at the end
            if not cut:
                assert_accessible(page, f"play, {size}, the end of a match")

        # -- tiercon: mid-game checks, then leaving asks first ---------------------------------
        start(page, "tiercon", "2")
        assert not dialogs.messages  # the last match was over: nothing to confirm
        seen = set()
        assert next_turn(page, seen)
        table_is_the_page(page, f"tiercon {size}")
        your_move_is_at_hand(page, f"tiercon {size}")
        assert_accessible(page, f"play, {size}, mid-game, tiercon")
        dialogs.answers = [False]
        page.click(".play-leave")
        assert len(dialogs.messages) == 1 and "goes on without you" in dialogs.messages[0]
        table_is_the_page(page, f"tiercon {size}, stayed")
        dialogs.answers = [True]
        page.click(".play-leave")
        assert len(dialogs.messages) == 2
        page.wait_for_selector(".play-form", state="visible")
        assert "You left match" in page.inner_text(".play-status")

        # -- régicide: its trump buttons read ---------------------------------------------------
        start(page, "regicide", "2")
        seen = set()
        assert next_turn(page, seen)
        your_move_is_at_hand(page, f"regicide {size}")
        assert_accessible(page, f"play, {size}, mid-game, regicide")
        trump_buttons_read(page, size, shots / f"people-regicide-{size}.png")

        # -- fool: starting another mid-game asks first; covering cards light up directly -------
        dialogs.answers = [True]
        page.click(".play-leave")
        assert len(dialogs.messages) == 3
        start(page, "fool", "2")
        seen = set()
        covered = False
        for _ in range(60):
            if not next_turn(page, seen):
                break
            your_move_is_at_hand(page, f"fool {size}")
            lit = page.evaluate("() => [...document.querySelectorAll('.play-card.playable')]"
                                ".map(b => b.dataset.action || '')")  # fmt: skip
            if any(a.startswith("beat ") for a in lit):
                assert_accessible(page, f"play, {size}, mid-game, fool (defending)")
                page.screenshot(path=str(shots / f"people-fool-{size}.png"))
                hand_readable(page, f"fool {size}")
                single = page.locator(".play-card.playable[data-action^='beat ']").first
                action = single.get_attribute("data-action")
                said = single.locator(".sr-only").text_content()
                assert said.startswith("beat ") and said.endswith(" with "), said  # + the card's own name
                single.click()  # one tap plays it: no "beat …" button first
                page.wait_for_function(
                    "(a) => { const p = document.querySelector('.play-panel');"
                    " return p.dataset.state !== 'your-turn'"
                    " || !p.querySelector(`[data-action='${a}']`); }",
                    arg=action,
                    timeout=10_000,
                )
                covered = True
                break
            click_a_move(page, rng)
        assert covered, "no defence in 60 decisions"
        # a link away from the table mid-game asks first
        page.wait_for_function(TURN, arg=[], timeout=90_000)
        dialogs.answers = [False]
        page.click("nav a[data-nav='matches']", force=True) if size == "desktop" else page.evaluate(
            "() => document.querySelector(\"nav a[data-nav='matches']\").click()"
        )
        assert len(dialogs.messages) == 4
        assert page.url.endswith("#/play") and page.is_visible(".play-leave")
        page.close()  # now: the matches left behind end sooner (the person is gone)

        # -- an organizer's seated person sees their match -----------------------------------
        human = {"name": f"ann-{bot}", "kind": "human", "move_ms": 5000}
        created = api.organizer.post("/v1/bots", json=human)
        assert created.status_code == 201, created.text
        person = created.json()
        seated, seated_errors, _ = new_page(browser, size)
        sit_down(seated, api.url, person["token"])
        assert "Waiting for a match" in seated.inner_text(".play-start")
        tournament = api.organizer.post("/v1/tournaments", json={
            "name": f"people {bot}", "game": "tiercon", "players": 2, "bots": [bot, person["name"]],
            "move_ms": 300, "start": True,
        })  # fmt: skip
        assert tournament.status_code == 201, tournament.text
        assert next_turn(seated, set())
        assert "Waiting for a match" not in seated.inner_text(".play-page")
        assert seated.locator(".table-area .seat.viewer").count() == 1
        table_is_the_page(seated, f"seated person {size}")
        your_move_is_at_hand(seated, f"seated person {size}")
        if size == "desktop":  # the page opened again mid-match (the stream moves to it): the match shows
            again, again_errors, _ = new_page(browser, size)
            sit_down(again, api.url, person["token"])
            assert next_turn(again, set())
            assert again.locator(".table-area .seat.viewer").count() == 1
            assert "Match #" in again.inner_text(".play-bar")
            your_move_is_at_hand(again, f"seated person, page opened mid-match, {size}")
            again.close()
            errors += again_errors
        seated.close()
        errors += seated_errors
    finally:
        if not page.is_closed():
            page.close()
    assert not errors, errors
