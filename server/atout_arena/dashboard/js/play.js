// The play page (#/play): a person at the table. The browser is the human's client: it reads
// the play stream (GET /v1/play/events, server-sent events read with fetch so that the token
// goes in the Authorization header, never in a URL) and posts answers (POST /v1/play/answer).
// A bot's token plays its owner's seat ("play against your bot": POST /v1/play/practice); a
// human's token (registered by an organizer) sits at the tournament tables it is seated at.
//
// The page only ever gets the human's own seat's observation (in each decision) and the
// spectators' public view (the match's public events) between its turns.
//
// During a match the table is the page: the token and start forms fold away behind a bar
// ("Leave the table…", which asks first: the match goes on without you, the fallback playing
// your seat), a move log names who played what, and on your turn the page scrolls to your hand
// and focuses its first move. At the end the table shows the final state: the public stream is
// followed to its own end (the last steps come after the play stream's match_end), or, should
// it not get there, the final view is read from the replay.

import { ApiError, api, followEvents, token } from "./api.js";
import { actionEl, actionName, cardEl, cardName, el, inWords, isCard } from "./cards.js";
import { renderTable } from "./table.js";

const GAMES = { merde: "Merde", tiercon: "Tierçon", regicide: "Régicide", fool: "Fool compris" };
const PLAYERS = { merde: [3, 4, 5], tiercon: [2], regicide: [2, 3, 4], fool: [2, 3, 4] };
const DEFAULT_DEALS = 2; // merde: deal i gives every player i cards (deals x players <= 52)
const FINAL_WAIT_MS = 2500; // after match_end, how long the public stream may take to end
const LOG_LIMIT = 300;

// The legal actions of one decision, sorted for the page: actions of one card of the hand
// (play X, attack X, add X) are on the cards; fool's "beat X Y" is on the covering card Y
// (`covers`: Y -> its beat actions); every other action is a button.
export function sortActions(legal, hand) {
  const byCard = new Map();
  const covers = new Map();
  const buttons = [];
  for (const action of legal) {
    const words = action.split(" ");
    if (words[0] === "beat" && words.length === 3 && hand.includes(words[2])) {
      if (!covers.has(words[2])) covers.set(words[2], []);
      covers.get(words[2]).push(action);
    } else if (words.length === 2 && isCard(words[1]) && hand.includes(words[1])) {
      if (!byCard.has(words[1])) byCard.set(words[1], []);
      byCard.get(words[1]).push(action);
    } else {
      buttons.push(action);
    }
  }
  return { byCard, covers, buttons };
}

// "beat 6c 9c" as people say it: "beat six of clubs with nine of clubs".
function beatLabel(action) {
  const [, attack, cover] = action.split(" ");
  const frag = document.createDocumentFragment();
  frag.append("beat ", actionEl(attack), " with ", actionEl(cover));
  return frag;
}

function labelled(action) {
  const b = el("button", "play-action");
  b.type = "button";
  b.dataset.action = action;
  b.append(action.startsWith("beat ") ? beatLabel(action) : actionEl(action));
  return b;
}

function merdeDeals(players) {
  return Math.floor(52 / players);
}

export function playPage(view, page, query = "") {
  const root = el("div", "play-page");
  const head = el("div", "page-head");
  head.append(el("h1", null, "Play"), el("p", "facts",
    "Sit at the table yourself. With your bot's token: play against your bot and house bots (unrated). " +
    "With a human player's token: play the matches an organizer seated you in."));
  // #/play?bot=NAME (a bot page's Play button): that bot is the opponent, so its token is the one to give
  const wanted = new URLSearchParams(query || "").get("bot");
  const against = wanted ? el("p", "hint play-against", `To play against ${wanted}, sit down with ${wanted}'s token.`) : null;
  if (against) head.append(against);
  const sit = el("form", "play-sit panel");
  const input = el("input");
  Object.assign(input, { type: "password", id: "play-token", placeholder: "your bot's token, or your human token", autocomplete: "off" });
  input.setAttribute("aria-label", "token");
  input.value = token.get();
  const sitButton = el("button", "btn", "Sit down");
  sitButton.type = "submit";
  sit.append(input, sitButton);
  const status = el("div", "play-status", "");
  status.setAttribute("role", "status");
  const start = el("div", "play-start");
  // the bar of a match in play: what it is, and the way out (asks first)
  const bar = el("div", "play-bar");
  const barText = el("span", "play-bar-text");
  const leave = el("button", "btn secondary play-leave", "Leave the table…");
  leave.type = "button";
  bar.append(barText, leave);
  const felt = el("div", "table-area");
  const panel = el("section", "panel play-panel");
  panel.setAttribute("aria-label", "your seat");
  panel.dataset.state = "idle";
  const grid = el("div", "play-layout");
  grid.append(felt, panel);
  root.append(head, sit, status, start, bar, grid);
  view.replaceChildren(root);

  const me = {
    seat: null, names: [], game: null, matchId: null, hand: [], request: null, clock: null,
    lastView: null, lastPly: -1, ended: null, publicEnded: false, left: new Set(), bot: null,
  };
  let publicStream = null;
  let finalTimer = null;

  const clockEl = el("div", "play-clock");
  clockEl.setAttribute("role", "timer");
  const prompt = el("div", "play-prompt", "");
  const reason = el("div", "play-reason");
  reason.setAttribute("role", "alert");
  const fault = el("div", "play-fault");
  const handEl = el("div", "play-hand");
  handEl.setAttribute("role", "group");
  handEl.setAttribute("aria-label", "your hand");
  const actionsEl = el("div", "play-actions");
  const logBox = el("div", "play-moves");
  logBox.append(el("h2", null, "Moves"));
  const log = el("ol", "log play-log");
  log.setAttribute("tabindex", "0");
  log.setAttribute("aria-label", "moves, the latest first");
  logBox.append(log);
  panel.append(prompt, clockEl, reason, fault, handEl, actionsEl, logBox);

  const inGame = () => me.matchId !== null && !me.ended && !me.left.has(me.matchId);
  const setInGame = (on) => {
    root.classList.toggle("in-game", on);
    if (on) barText.textContent = `Match #${me.matchId}: ${GAMES[me.game] || me.game}, you are ${me.names[me.seat] || `seat ${me.seat}`} (seat ${me.seat}).`;
  };
  const nameOf = (seat) => (seat === me.seat ? "you" : me.names[seat] || `seat ${seat}`);

  const draw = (viewData, lastStep = null) => {
    if (!me.game || !viewData) return;
    renderTable(felt, {
      game: me.game, view: viewData, names: me.names, viewer: me.seat, hands: null,
      ended: me.ended, lastStep,
    });
    felt.dataset.phase = viewData.phase || "";
  };

  const logStep = (event) => {
    const li = el("li", event.by === "fallback" ? "fallback" : "");
    li.dataset.ply = String(event.ply);
    li.dataset.seat = String(event.seat);
    const who = el("b", "who", nameOf(event.seat));
    const what = el("span", "what");
    what.append(actionEl(event.action));
    if (event.by === "fallback") what.append(" (the fallback)");
    li.append(el("span", "ply", String(event.ply + 1)), who, what);
    log.prepend(li);
    while (log.children.length > LOG_LIMIT) log.lastChild.remove();
  };

  // moves played before the page listened (or while it reconnected): said, not hidden
  const logGap = (count) => {
    const li = el("li", "gap", `… ${count} move${count === 1 ? "" : "s"} not seen here (all of them in the replay at the end)`);
    log.prepend(li);
  };

  const stopClock = () => { clearInterval(me.clock); me.clock = null; };

  // The hand, not to click (waiting, over).
  const showHand = () => {
    handEl.replaceChildren(...me.hand.map((c) => {
      const slot = el("span", "play-card");
      slot.append(cardEl(c));
      return slot;
    }));
  };

  // On your turn: the first move gets the focus, and the page scrolls so that it shows.
  const focusMove = () => {
    const first = panel.querySelector(".play-card.playable, .play-actions button");
    if (!first) return;
    first.focus({ preventScroll: true });
    const shown = () => { const box = first.getBoundingClientRect(); return box.top >= 0 && box.bottom <= window.innerHeight; };
    if (shown()) return;
    // the hand and the buttons at the bottom of the screen, the table above them
    actionsEl.scrollIntoView({ block: "end", behavior: "instant" });
    if (!shown()) first.scrollIntoView({ block: "center", behavior: "instant" });
  };

  const send = async (action) => {
    const request = me.request;
    if (!request) return;
    panel.dataset.state = "sent";
    for (const b of panel.querySelectorAll(".play-hand button, .play-actions button")) b.disabled = true;
    reason.textContent = "";
    try {
      me.sentFor = request.request_id;
      await api("/v1/play/answer", { method: "POST", body: { request_id: request.request_id, action } });
      if (panel.dataset.state === "sent") prompt.replaceChildren("You played ", actionEl(action), ". Waiting for the others…");
      me.sent = action;
    } catch (error) {
      if (me.request !== request) return; // over meanwhile (the clock, the match)
      reason.textContent = error.message;
      panel.dataset.state = "refused";
      offer(request);
      focusMove();
    }
  };

  // Draw the hand and the buttons of one decision: a card with one action plays it; a card
  // with several (fool: a card that covers more than one attack) offers them as buttons.
  const offer = (request) => {
    const hand = request.observation.hand || [];
    const { byCard, covers, buttons } = sortActions(request.legal_actions, hand);
    handEl.replaceChildren();
    actionsEl.replaceChildren();
    const anyCard = byCard.size > 0 || covers.size > 0;
    for (const code of hand) {
      const mine = [...(byCard.get(code) || []), ...(covers.get(code) || [])];
      if (!mine.length) { // not to play now: a plain card, as readable as any (no dimming)
        const slot = el("span", `play-card ${anyCard ? "unplayable" : ""}`);
        slot.append(cardEl(code));
        handEl.append(slot);
        continue;
      }
      // its name, read out: "play king of hearts", "beat six of clubs with nine of clubs"
      // (the words before the card are hidden text; the card says its own name)
      const b = el("button", "play-card playable");
      b.type = "button";
      const said = mine.length === 1 ? actionName(mine[0]) : `${cardName(code)}, ${mine.length} choices:`;
      const before = mine.length === 1 ? said.slice(0, said.lastIndexOf(cardName(code))).trim() : said;
      b.append(el("span", "sr-only", mine.length === 1 ? `${before} ` : said), cardEl(code));
      if (mine.length > 1) b.lastChild.setAttribute("aria-hidden", "true");
      b.dataset.card = code;
      if (mine.length === 1) {
        b.dataset.action = mine[0];
        b.onclick = () => send(mine[0]);
      } else {
        b.onclick = () => {
          actionsEl.replaceChildren(...mine.map((a) => { const x = labelled(a); x.onclick = () => send(a); return x; }));
          actionsEl.querySelector("button").focus();
        };
      }
      handEl.append(b);
    }
    prompt.textContent = covers.size ? "Your move: tap a lit card to cover an attack." : "Your move.";
    for (const action of buttons) {
      const b = labelled(action);
      b.onclick = () => send(action);
      actionsEl.append(b);
    }
  };

  const onDecision = async (request) => {
    if (me.left.has(request.match_id)) return; // a match you left: the fallback plays it
    if (request.match_id !== me.matchId || me.ended) {
      // a match that started before this page saw its start (opened mid-match)
      let names = [];
      try {
        names = (await api(`/v1/matches/${request.match_id}`)).seats.map((s) => s.bot);
      } catch { /* names stay seat numbers */ }
      if (request.match_id !== me.matchId || me.ended) {
        onStart({ match_id: request.match_id, game: request.game, seat: request.seat, seat_names: names });
      }
    }
    me.request = request;
    me.hand = request.observation.hand || [];
    me.decisionHand = me.hand;
    me.seat = request.seat;
    panel.dataset.request = request.request_id;
    panel.dataset.state = "your-turn";
    reason.textContent = "";
    me.lastView = request.observation;
    draw(request.observation);
    offer(request);
    focusMove();
    stopClock();
    const until = performance.now() + request.deadline_ms;
    me.until = until;
    const tick = () => {
      const left = Math.max(0, until - performance.now());
      clockEl.textContent = `${(left / 1000).toFixed(1)} s left`;
      clockEl.classList.toggle("urgent", left < 5000);
      if (left <= 0) {
        stopClock();
        clockEl.textContent = "time's up";
        for (const b of panel.querySelectorAll(".play-hand button, .play-actions button")) b.disabled = true;
      }
    };
    tick();
    me.clock = setInterval(tick, 100);
    page.timers.push(me.clock);
  };

  // The end, drawn from the final view: the last step's (the public stream's), or the replay's.
  const drawFinal = () => {
    clearTimeout(finalTimer);
    if (!me.lastView) return;
    const view = { ...me.lastView, hand: me.hand, seat: me.seat };
    draw(view);
    showHand();
    felt.dataset.final = "true";
  };

  // The whole match from its replay, once it is over: every move in the log (the public stream
  // misses those played before the page listened), the final view, and your hand less your
  // last move (the answer to the last decision you saw). A replay refused (a duplicate deal
  // still secret) leaves the end as the stream drew it.
  const fetchFinal = async (matchId) => {
    for (let attempt = 0; attempt < 10; attempt++) {
      if (me.matchId !== matchId) return;
      try {
        const replay = await api(`/v1/matches/${matchId}/replay`);
        if (me.matchId !== matchId) return;
        const steps = replay.events.filter((e) => e.type === "step");
        log.replaceChildren();
        steps.forEach(logStep);
        if (steps.length) me.lastPly = steps[steps.length - 1].ply;
        const mine = steps.filter((e) => e.seat === me.seat);
        if (mine.length && me.decisionHand) {
          const played = mine[mine.length - 1].action.split(" ").slice(1);
          me.hand = me.decisionHand.filter((c) => !played.includes(c));
        }
        const last = replay.events[replay.events.length - 1];
        if (last) me.lastView = last.view;
        if (!me.ended) me.ended = { ranking: replay.match.ranking, scores: replay.match.scores };
        drawFinal();
        log.dataset.complete = "true";
        return;
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 409) break; // 409: not stored yet, again
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    drawFinal();
  };

  const followTable = (matchId) => {
    if (publicStream) publicStream.stop();
    me.publicEnded = false;
    const stream = followEvents(`/v1/matches/${matchId}/events`, (type, event) => {
      if (me.matchId !== matchId) return;
      if (type === "end") {
        me.publicEnded = true;
        if (me.ended) fetchFinal(matchId); // else when the play stream's match_end comes
        return;
      }
      if (type !== "step" && type !== "start") return;
      if (type === "step") {
        if (event.ply <= me.lastPly) return;
        if (event.ply > me.lastPly + 1) logGap(event.ply - me.lastPly - 1);
        me.lastPly = event.ply;
        logStep(event);
      }
      me.lastView = event.view;
      if (type === "step" && event.seat === me.seat) {
        if (event.by === "fallback") {
          fault.replaceChildren(`Fault (${(event.faults || []).join(", ") || "fallback"}): the fallback played `, actionEl(event.action), " for you.");
          fault.dataset.ply = String(event.ply);
        }
        // a decision that came after this step (my turn again) stays on the page
        const stale = me.request && (me.sentFor === me.request.request_id || performance.now() >= me.until);
        if (me.request && !stale) return;
        me.hand = me.hand.filter((c) => !event.action.split(" ").slice(1).includes(c));
        me.request = null;
        stopClock();
        clockEl.textContent = "";
        showHand();
        actionsEl.replaceChildren();
        if (!me.ended) panel.dataset.state = "waiting";
      }
      const step = type === "step" ? { seat: event.seat, action: event.action } : null;
      if (me.ended) drawFinal();
      else if (!me.request) draw({ ...event.view, hand: me.hand, seat: me.seat }, step);
    }, { onState: () => {} });
    publicStream = stream;
    page.streams.push(stream);
  };

  const onStart = (event) => {
    clearTimeout(finalTimer);
    me.matchId = event.match_id;
    me.game = event.game;
    me.seat = event.seat;
    me.names = event.seat_names || [];
    me.hand = [];
    me.request = null;
    me.lastView = null;
    me.lastPly = -1;
    me.decisionHand = null;
    me.ended = null;
    delete log.dataset.complete;
    fault.textContent = "";
    reason.textContent = "";
    log.replaceChildren();
    actionsEl.replaceChildren();
    handEl.replaceChildren();
    stopClock();
    clockEl.textContent = "";
    delete felt.dataset.final;
    panel.dataset.match = String(event.match_id);
    panel.dataset.state = "waiting";
    prompt.textContent = `Match #${event.match_id}: ${GAMES[event.game] || event.game}, you are seat ${event.seat}. Waiting for your turn…`;
    felt.replaceChildren(el("div", "empty", "Dealing…"));
    setInGame(true);
    status.textContent = ""; // the bar says which match; later notes ("reconnecting…") still show
    if (!me.bot) start.replaceChildren(el("p", "hint", `Seated in match #${event.match_id}.`));
    followTable(event.match_id);
    root.scrollIntoView({ block: "start", behavior: "instant" });
  };

  const onEnd = (event) => {
    if (me.left.has(event.match_id) || event.match_id !== me.matchId) return;
    stopClock();
    me.request = null;
    me.ended = { ranking: event.ranking, scores: event.scores };
    panel.dataset.state = "over";
    clockEl.textContent = "";
    actionsEl.replaceChildren();
    const place = event.ranking[event.seat];
    const banner = el("div", "end-banner");
    const replay = el("a", "btn", "Open the replay");
    replay.href = `#/matches/${event.match_id}`;
    const scores = event.scores.map((s, i) => `${nameOf(i)} ${s}`).join(" · ");
    banner.append(`Match over: you placed ${place} of ${event.ranking.length} (${scores}). `, replay);
    prompt.replaceChildren(banner);
    setInGame(false);
    if (!me.bot) start.replaceChildren(el("p", "hint", "Waiting for your next match…"));
    showHand();
    // the public stream brings the last steps, then its end; then (or should it not come) the
    // replay has the whole match
    drawFinal();
    if (me.publicEnded) fetchFinal(event.match_id);
    else {
      const matchId = event.match_id;
      finalTimer = setTimeout(() => {
        if (me.matchId === matchId && !me.publicEnded) {
          if (publicStream) publicStream.stop();
          fetchFinal(matchId);
        }
      }, FINAL_WAIT_MS);
      page.timers.push(finalTimer);
    }
  };

  const leaveMessage = () => `Leave match #${me.matchId}? It goes on without you: the fallback plays your seat ` +
    "when each move's time runs out, and every such move counts as a fault.";

  // Leave the running match (after a yes): its decisions are no longer shown.
  const abandon = () => {
    me.left.add(me.matchId);
    stopClock();
    me.request = null;
    if (publicStream) publicStream.stop();
    panel.dataset.state = "idle";
    felt.replaceChildren();
    setInGame(false);
    status.textContent = `You left match #${me.matchId}: the fallback plays your seat.`;
  };

  leave.onclick = () => {
    if (!inGame() || window.confirm(leaveMessage())) {
      if (inGame()) abandon();
      const first = start.querySelector("select, button");
      if (first) first.focus();
    }
  };

  // A link away from the page during a match asks first; so does closing the tab.
  const guard = (e) => {
    if (!document.body.contains(root)) {
      document.removeEventListener("click", guard, true);
      window.removeEventListener("beforeunload", unload);
      return;
    }
    const link = e.target.closest && e.target.closest("a[href]");
    if (!link || !inGame() || link.getAttribute("href") === "#/play") return;
    if (!window.confirm(leaveMessage())) {
      e.preventDefault();
      e.stopPropagation();
    }
  };
  const unload = (e) => {
    if (document.body.contains(root) && inGame()) e.preventDefault();
  };
  document.addEventListener("click", guard, true);
  window.addEventListener("beforeunload", unload);

  const startForm = (bot) => {
    const form = el("form", "play-form panel");
    const game = el("select", "play-game");
    game.setAttribute("aria-label", "game");
    for (const [id, name] of Object.entries(GAMES)) {
      const o = el("option", null, name);
      o.value = id;
      game.append(o);
    }
    const players = el("select", "play-players");
    players.setAttribute("aria-label", "players");
    const deals = el("select", "play-deals");
    deals.setAttribute("aria-label", "deals");
    const fillDeals = () => {
      const keep = Number(deals.value) || DEFAULT_DEALS;
      const most = merdeDeals(Number(players.value));
      deals.replaceChildren();
      for (let d = 1; d <= most; d++) {
        const o = el("option", null, `${d} deal${d === 1 ? "" : "s"}`);
        o.value = String(d);
        deals.append(o);
      }
      deals.value = String(Math.min(keep, most));
      deals.hidden = game.value !== "merde";
    };
    // Opponents: your bot (with house bots in the other seats) or house bots alone, of the
    // strength chosen: the kinds of GET /v1/play/opponents, labelled in words (docs/bosses.md).
    const opponents = el("select", "play-opponents");
    opponents.setAttribute("aria-label", "opponents");
    let kinds = [{ kind: "heuristic", label: "easy (heuristic)" }];
    const go = el("button", "btn", `Play against ${bot}`);
    go.type = "submit";
    const fillOpponents = () => {
      const keep = opponents.value;
      const two = Number(players.value) === 2;
      const option = (value, text) => { const o = el("option", null, text); o.value = value; return o; };
      opponents.replaceChildren(
        ...(two ? [option("bot:heuristic", bot)] : kinds.map((k) => option(`bot:${k.kind}`, `${bot} + house bots: ${k.label}`))),
        ...kinds.map((k) => option(`house:${k.kind}`, `${two ? "A house bot" : "House bots"}: ${k.label}`)),
      );
      if ([...opponents.options].some((o) => o.value === keep)) opponents.value = keep;
      go.textContent = opponents.value.startsWith("bot:") ? `Play against ${bot}` : "Play against house bots";
    };
    opponents.onchange = fillOpponents;
    api("/v1/play/opponents").then((list) => { kinds = list; fillOpponents(); }).catch(() => {});
    const fill = () => {
      players.replaceChildren(...PLAYERS[game.value].map((n) => { const o = el("option", null, `${n} players`); o.value = String(n); return o; }));
      fillDeals();
      fillOpponents();
    };
    game.onchange = fill;
    players.onchange = () => { fillDeals(); fillOpponents(); };
    fill();
    form.append(el("span", null, "Game "), game, players, deals, opponents, go);
    form.onsubmit = async (e) => {
      e.preventDefault();
      if (inGame()) {
        if (!window.confirm(leaveMessage())) return;
        abandon();
      }
      go.disabled = true;
      status.textContent = "";
      const body = { game: game.value, players: Number(players.value) };
      if (game.value === "merde") body.options = { deals: Number(deals.value) };
      const [who, kind] = opponents.value.split(":");
      body.house = kind;
      body.with_bot = who === "bot";
      try {
        const started = await api("/v1/play/practice", { method: "POST", body });
        // (once the match is on the table, the bar says it)
        if (me.matchId !== started.match_id) status.textContent = `Match #${started.match_id} started: ${started.seats.join(", ")}.`;
      } catch (error) {
        status.textContent = error instanceof ApiError ? error.message : String(error);
      } finally {
        go.disabled = false;
      }
    };
    return form;
  };

  sit.onsubmit = (e) => {
    e.preventDefault();
    token.set(input.value);
    const header = document.getElementById("token-input");
    if (header) header.value = input.value.trim();
    page.streams.forEach((s) => s.stop());
    status.textContent = "connecting…";
    let stream = null;
    stream = followEvents("/v1/play/events", (type, event) => {
      if (type === "hello") {
        status.textContent = `Seated as ${event.human} (${event.move_ms / 1000} s per move).`;
        status.dataset.human = event.human;
        me.bot = event.bot;
        if (against) {
          against.textContent = event.bot === wanted ? `Against ${wanted}: pick a game and play.`
            : `This token is not ${wanted}'s: sit down with ${wanted}'s token to play against it.`;
        }
        if (!inGame()) {
          start.replaceChildren(event.bot ? startForm(event.bot) : el("p", "hint", "Waiting for a match you are seated in…"));
        }
      } else if (type === "match_start") {
        if (!me.left.has(event.match_id)) onStart(event);
      } else if (type === "decision") onDecision(event);
      else if (type === "rejection") {
        if (!me.request || me.request.request_id !== event.request_id) return;
        // the engine's reason without its own preamble ("illegal action 'play 8h' for seat 2: ")
        const why = String(event.reason).replace(/^illegal action '[^']*' for seat \d+: /, "");
        reason.textContent = `Refused: ${actionName(event.action)}: ${inWords(why)}`;
        panel.dataset.state = "refused";
        offer(me.request);
        focusMove();
      } else if (type === "match_end") onEnd(event);
      else if (type === "error") { // replaced by another tab: do not take the seat back
        status.textContent = `${event.code}: ${event.message}`;
        if (stream) stream.stop();
      }
    }, {
      onState: (s, detail) => {
        if (s === "error") status.textContent = detail || "error";
        else if (s === "reconnecting") status.textContent = "reconnecting…";
      },
    });
    page.streams.push(stream);
  };
  if (input.value) sit.requestSubmit();
}
