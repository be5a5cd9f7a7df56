// The play page (#/play): a person at the table. The browser is the human's client: it reads
// the play stream (GET /v1/play/events, server-sent events read with fetch so that the token
// goes in the Authorization header, never in a URL) and posts answers (POST /v1/play/answer).
// A bot's token plays its owner's seat ("play against your bot": POST /v1/play/practice); a
// human's token (registered by an organizer) sits at the tournament tables it is seated at.
//
// The page only ever gets the human's own seat's observation (in each decision) and the
// spectators' public view (the match's public events) between its turns.

import { ApiError, api, followEvents, token } from "./api.js";
import { actionEl, cardEl, el, isCard } from "./cards.js";
import { renderTable } from "./table.js";

const GAMES = { merde: "Merde", tiercon: "Tierçon", regicide: "Régicide", fool: "Fool compris" };
const PLAYERS = { merde: [3, 4, 5], tiercon: [2], regicide: [2, 3, 4], fool: [2, 3, 4] };

// The legal actions of one decision, sorted for the page: actions of one card of the hand
// (play X, attack X, add X) are on the cards; fool's "beat X Y" is two choices (the attack
// card X, then the covering card Y); every other action is a button.
export function sortActions(legal, hand) {
  const byCard = new Map();
  const beats = new Map();
  const buttons = [];
  for (const action of legal) {
    const words = action.split(" ");
    if (words[0] === "beat" && words.length === 3) {
      if (!beats.has(words[1])) beats.set(words[1], new Map());
      beats.get(words[1]).set(words[2], action);
    } else if (words.length === 2 && isCard(words[1]) && hand.includes(words[1])) {
      if (!byCard.has(words[1])) byCard.set(words[1], []);
      byCard.get(words[1]).push(action);
    } else {
      buttons.push(action);
    }
  }
  return { byCard, beats, buttons };
}

function labelled(action) {
  const b = el("button", "play-action");
  b.type = "button";
  b.dataset.action = action;
  b.append(actionEl(action));
  return b;
}

export function playPage(view, page) {
  const head = el("div", "page-head");
  head.append(el("h1", null, "Play"), el("p", "facts",
    "Sit at the table yourself. With your bot's token: play against your bot and house bots (unrated). " +
    "With a human player's token: play the matches an organizer seated you in."));
  const sit = el("form", "play-sit panel");
  const input = el("input");
  Object.assign(input, { type: "password", id: "play-token", placeholder: "your bot's token, or your human token", autocomplete: "off" });
  input.setAttribute("aria-label", "token");
  input.value = token.get();
  const sitButton = el("button", "btn", "Sit down");
  sitButton.type = "submit";
  sit.append(input, sitButton);
  const status = el("div", "play-status", "");
  const start = el("div", "play-start");
  const felt = el("div", "table-area");
  const panel = el("section", "panel play-panel");
  panel.dataset.state = "idle";
  const grid = el("div", "play-layout");
  grid.append(felt, panel);
  view.replaceChildren(head, sit, status, start, grid);

  const me = { seat: null, names: [], game: null, matchId: null, hand: [], request: null, clock: null };
  let publicStream = null;

  const clockEl = el("div", "play-clock");
  const prompt = el("div", "play-prompt", "");
  const reason = el("div", "play-reason");
  reason.setAttribute("role", "alert");
  const fault = el("div", "play-fault");
  const handEl = el("div", "play-hand");
  const actionsEl = el("div", "play-actions");
  panel.append(prompt, clockEl, reason, fault, handEl, actionsEl);

  const draw = (viewData) => {
    if (!me.game) return;
    renderTable(felt, { game: me.game, view: viewData, names: me.names, viewer: me.seat, hands: null, ended: null, lastStep: null });
  };

  const stopClock = () => { clearInterval(me.clock); me.clock = null; };

  const send = async (action) => {
    const request = me.request;
    if (!request) return;
    panel.dataset.state = "sent";
    for (const b of panel.querySelectorAll("button")) b.disabled = true;
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
    }
  };

  // Draw the hand and the buttons of one decision; `beat` is the chosen attack card, if any.
  const offer = (request, beat = null) => {
    const hand = request.observation.hand || [];
    const { byCard, beats, buttons } = sortActions(request.legal_actions, hand);
    handEl.replaceChildren();
    actionsEl.replaceChildren();
    for (const code of hand) {
      const b = el("button", "play-card");
      b.type = "button";
      b.append(cardEl(code));
      b.dataset.card = code;
      const mine = beat ? (beats.get(beat)?.has(code) ? [beats.get(beat).get(code)] : []) : (byCard.get(code) || []);
      if (mine.length === 1) {
        b.classList.add("playable");
        b.dataset.action = mine[0];
        b.onclick = () => send(mine[0]);
      } else if (mine.length > 1) {
        b.classList.add("playable");
        b.onclick = () => {
          actionsEl.replaceChildren(...mine.map((a) => { const x = labelled(a); x.onclick = () => send(a); return x; }));
        };
      } else {
        b.disabled = true;
      }
      handEl.append(b);
    }
    if (beat) {
      prompt.replaceChildren("Cover ", actionEl(beat), ": choose the covering card.");
      const back = el("button", "play-action secondary", "← another attack card");
      back.type = "button";
      back.onclick = () => offer(request);
      actionsEl.append(back);
      return;
    }
    prompt.textContent = "Your move.";
    for (const attack of beats.keys()) {
      const b = el("button", "play-action beat");
      b.type = "button";
      b.dataset.beat = attack;
      b.append("beat ", actionEl(attack), " …");
      b.onclick = () => offer(request, attack);
      actionsEl.append(b);
    }
    for (const action of buttons) {
      const b = labelled(action);
      b.onclick = () => send(action);
      actionsEl.append(b);
    }
  };

  const onDecision = (request) => {
    me.request = request;
    me.hand = request.observation.hand || [];
    me.seat = request.seat;
    panel.dataset.request = request.request_id;
    panel.dataset.state = "your-turn";
    reason.textContent = "";
    draw(request.observation);
    offer(request);
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
        for (const b of panel.querySelectorAll("button")) b.disabled = true;
      }
    };
    tick();
    me.clock = setInterval(tick, 100);
    page.timers.push(me.clock);
  };

  const followTable = (matchId) => {
    if (publicStream) publicStream.stop();
    publicStream = followEvents(`/v1/matches/${matchId}/events`, (type, event) => {
      if (type !== "step" && type !== "start") return;
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
        handEl.replaceChildren(...me.hand.map((c) => cardEl(c)));
        actionsEl.replaceChildren();
        panel.dataset.state = "waiting";
      }
      if (!me.request) draw({ ...event.view, hand: me.hand, seat: me.seat });
    }, { onState: () => {} });
    page.streams.push(publicStream);
  };

  const onStart = (event) => {
    me.matchId = event.match_id;
    me.game = event.game;
    me.seat = event.seat;
    me.names = event.seat_names;
    me.hand = [];
    fault.textContent = "";
    panel.dataset.match = event.match_id;
    panel.dataset.state = "waiting";
    prompt.textContent = `Match #${event.match_id}: ${GAMES[event.game] || event.game}, you are seat ${event.seat}. Waiting for your turn…`;
    felt.replaceChildren(el("div", "empty", "Dealing…"));
    followTable(event.match_id);
  };

  const onEnd = (event) => {
    stopClock();
    me.request = null;
    panel.dataset.state = "over";
    clockEl.textContent = "";
    actionsEl.replaceChildren();
    const place = event.ranking[event.seat];
    const banner = el("div", "end-banner");
    const replay = el("a", "btn", "Open the replay");
    replay.href = `#/matches/${event.match_id}`;
    banner.append(`Match over: you placed ${place} of ${event.ranking.length} (scores ${event.scores.join(" · ")}). `, replay);
    prompt.replaceChildren(banner);
    if (publicStream) publicStream.stop();
  };

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
    const fill = () => {
      players.replaceChildren(...PLAYERS[game.value].map((n) => { const o = el("option", null, `${n} players`); o.value = String(n); return o; }));
    };
    game.onchange = fill;
    fill();
    const go = el("button", "btn", `Play against ${bot}`);
    go.type = "submit";
    form.append(el("span", null, "Game "), game, players, go);
    form.onsubmit = async (e) => {
      e.preventDefault();
      go.disabled = true;
      status.textContent = "";
      const body = { game: game.value, players: Number(players.value) };
      if (game.value === "merde") body.options = { deals: 2 };
      try {
        const started = await api("/v1/play/practice", { method: "POST", body });
        status.textContent = `Match #${started.match_id} started: ${started.seats.join(", ")}.`;
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
        start.replaceChildren(event.bot ? startForm(event.bot) : el("p", "hint", "Waiting for a match you are seated in…"));
      } else if (type === "match_start") onStart(event);
      else if (type === "decision") onDecision(event);
      else if (type === "rejection") {
        reason.textContent = `Refused: ${event.action}: ${event.reason}`;
        panel.dataset.state = "refused";
        if (me.request && me.request.request_id === event.request_id) offer(me.request);
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
