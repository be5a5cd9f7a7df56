// The card table of one moment of a match, drawn from an observation (a seat's, or the
// spectators' public view): seats around a felt, their hands (face up for the seat whose view
// it is, backs for the others), the trick or the fool's table in the middle, trump, stock,
// bids, tricks and scores. Keys are the engines' observation keys (DESIGN.md, RULES.md).

import { actionEl, backEl, cardEl, el, suitEl } from "./cards.js";

const PHASES = {
  bid: "bidding", play: "playing", open: "opening the trump", name_trump: "naming the trump (joker)",
  choose: "trick winner's choice", cut: "cutting the stock", attack: "attack", defend: "defence",
  add: "adding cards", over: "game over",
};
const MAX_BACKS = 12;

function seatPosition(relative, n) {
  const angle = Math.PI / 2 + (2 * Math.PI * relative) / n;
  return { x: Math.cos(angle), y: Math.sin(angle) };
}

function pct(value) {
  return `${value.toFixed(2)}%`;
}

function place(node, x, y) {
  node.style.left = pct(x);
  node.style.top = pct(y);
  return node;
}

function ordinal(n) {
  return `${n}${n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"}`;
}

function stat(label, value) {
  const span = el("span", "stat");
  span.append(el("small", null, label), el("b", null, value));
  return span;
}

function badge(text, kind = "") {
  return el("span", `badge ${kind}`, text);
}

// What the seat plate shows for each game: [stats], [badges].
function seatDetails(game, view, seat) {
  const stats = [];
  const badges = [];
  if (view.dealer === seat) badges.push(badge("dealer", "dealer"));
  if (game === "merde") {
    const bid = view.bids ? view.bids[seat] : null;
    stats.push(stat("bid", bid === null || bid === undefined ? "–" : String(bid)));
    stats.push(stat("tricks", String((view.tricks_won || [])[seat] ?? 0)));
  } else if (game === "tiercon") {
    stats.push(stat("tricks", String((view.tricks_won || [])[seat] ?? 0)));
    if ((view.marriage || []).includes(seat)) badges.push(badge("marriage ♚♛", "good"));
    if (view.combination_winner === seat) badges.push(badge("best combination", "good"));
  } else if (game === "regicide") {
    stats.push(stat("tricks", String((view.tricks_won || [])[seat] ?? 0)));
    if (view.teams) badges.push(badge(view.teams[0].includes(seat) ? "team A" : "team B", "team"));
    if (view.opener === seat) badges.push(badge("opened"));
  } else if (game === "fool") {
    stats.push(stat("face cards", String((view.face_cards_beaten || [])[seat] ?? 0)));
    if (view.attacker === seat) badges.push(badge("attacker", "attack"));
    if (view.defender === seat) badges.push(badge(view.taking ? "defender · takes" : "defender", view.taking ? "bad" : "defend"));
    if ((view.out || []).includes(seat)) badges.push(badge("out"));
    if (view.fool === seat) badges.push(badge("fool", "bad"));
  }
  return { stats, badges };
}

function handSize(game, view, seat, viewer) {
  if (view.hand_sizes) return view.hand_sizes[seat];
  if (game === "tiercon" && viewer !== null && seat !== viewer && view.opponent_hand_size !== undefined) {
    return view.opponent_hand_size;
  }
  return null;
}

function handEl(cards, { size = "sm", legal = null } = {}) {
  const hand = el("div", `hand ${size === "" ? "own" : ""}`);
  for (const code of cards) {
    const card = cardEl(code, size);
    if (legal && legal.some((a) => a.split(" ").includes(code))) card.classList.add("playable");
    hand.append(card);
  }
  return hand;
}

function backsEl(count) {
  const backs = el("div", "hand backs");
  for (let i = 0; i < Math.min(count, MAX_BACKS); i++) backs.append(backEl("xs"));
  backs.append(el("span", "count", `${count} card${count === 1 ? "" : "s"}`));
  return backs;
}

function seatPlate(ctx, seat, upper) {
  const { game, view, names, viewer, hands, ended } = ctx;
  const plate = el("div", upper ? "seat upper" : "seat");
  plate.dataset.seat = String(seat);
  if (view.current_player === seat) plate.classList.add("to-act");
  if (ctx.lastStep && ctx.lastStep.seat === seat) plate.classList.add("just-acted");
  if (viewer === seat) plate.classList.add("viewer");
  const head = el("div", "seat-head");
  const name = el("span", "seat-name", names[seat] || `seat ${seat}`);
  name.title = name.textContent;
  head.append(el("span", "seat-no", String(seat)), name);
  if (ended && ended.ranking) {
    const p = ended.ranking[seat];
    head.append(badge(p === 1 ? "★ 1st" : ordinal(p), p === 1 ? "winner" : "place"));
  }
  plate.append(head);
  const { stats, badges } = seatDetails(game, view, seat);
  const line = el("div", "seat-stats");
  line.append(stat("score", String((view.scores || [])[seat] ?? 0)), ...stats);
  plate.append(line);
  if (badges.length) {
    const b = el("div", "seat-badges");
    b.append(...badges);
    plate.append(b);
  }
  const own = viewer === seat && Array.isArray(view.hand) ? view.hand : hands ? hands[seat] : null;
  if (own) {
    const hand = handEl(own, { size: viewer === seat ? "" : "sm" });
    if (own.length > 10) hand.classList.add("many");
    plate.append(hand);
  } else {
    const count = handSize(game, view, seat, viewer);
    if (count !== null && count !== undefined) plate.append(backsEl(count));
  }
  if (ctx.lastStep && ctx.lastStep.seat === seat && ctx.lastStep.action) {
    const said = el("div", "bubble");
    said.append(actionEl(ctx.lastStep.action));
    plate.append(said);
  }
  return plate;
}

// The trick: each card with the name of the seat that played it (a label under it), at every
// width (a phone lays them in a row, none over another). The ".played" element is the card
// and its label (data-seat), the card inside keeps data-card.
function trickEl(ctx, trick, positions, scale = 0.42) {
  const layer = el("div", "trick");
  layer.setAttribute("role", "list");
  layer.setAttribute("aria-label", "the trick");
  const fresh = ctx.lastStep && ctx.lastStep.action ? ctx.lastStep.action.split(" ") : [];
  trick.forEach(([seat, code], i) => {
    const pos = positions[seat];
    const played = el("div", "played");
    played.setAttribute("role", "listitem");
    played.dataset.seat = String(seat);
    const who = ctx.viewer === seat ? "you" : ctx.names[seat] || `seat ${seat}`;
    const label = el("span", "played-by");
    label.append(el("b", null, String(seat)), ` ${who}`); // the seat's number, as on its plate
    label.title = `${who} (seat ${seat})`;
    played.append(cardEl(code), label);
    if (ctx.lastStep && ctx.lastStep.seat === seat && fresh.includes(code)) played.classList.add("new");
    played.style.zIndex = String(10 + i);
    played.style.order = String(i);
    played.style.setProperty("--tilt", `${((seat * 37) % 11) - 5}deg`);
    place(played, 50 + pos.x * 46 * scale, 50 + pos.y * 40 * scale);
    layer.append(played);
  });
  return layer;
}

function foolTableEl(view) {
  const table = el("div", "fool-table");
  for (const [attack, cover] of view.table || []) {
    const pair = el("div", "pair");
    pair.append(cardEl(attack));
    if (cover) {
      const c = cardEl(cover);
      c.classList.add("cover");
      pair.append(c);
    }
    table.append(pair);
  }
  if (view.taking) table.append(badge("defender takes", "bad"));
  return table;
}

function stockEl(count, turned, label = null) {
  const box = el("div", "stock");
  const pile = el("div", "pile");
  if (turned) {
    const t = cardEl(turned, "sm");
    t.classList.add("turned");
    if (!count) t.classList.add("alone");
    pile.append(t);
  }
  if (count > 0) pile.append(backEl("sm"));
  box.append(pile, el("div", "stock-count", label || (count ? `${count} in the stock` : "stock empty")));
  return box;
}

function infoEl(ctx) {
  const { game, view } = ctx;
  const info = el("div", "table-info");
  const trump = el("div", "trump");
  trump.append(el("small", null, "trump"));
  if (view.trump) trump.append(suitEl(view.trump));
  else trump.append(el("span", "no-trump", game === "regicide" && view.phase === "open" ? "?" : "none"));
  info.append(trump);
  const lines = el("div", "info-lines");
  const add = (text, kind = "") => lines.append(el("div", kind, text));
  if (view.deal !== undefined) add(`deal ${view.deal}${view.deals ? ` of ${view.deals}` : ""}`);
  if (view.phase) add(PHASES[view.phase] || view.phase, "phase");
  if (game === "merde") {
    if (view.cards_per_player) add(`${view.cards_per_player} card${view.cards_per_player === 1 ? "" : "s"} each`);
    if (view.bids_total_vs_tricks) add(`bids are ${view.bids_total_vs_tricks === "exact" ? "exactly the tricks" : `${view.bids_total_vs_tricks} the tricks`}`);
  } else if (game === "tiercon") {
    add(`first to ${view.target || 501}`);
  } else if (game === "regicide") {
    if (view.inverted) add("⇅ ranking inverted", "alert");
    if (view.carry) add(`${view.carry} points carried`);
    if (view.choice) add("trick winner chooses: keep, trump, invert, or trump + invert");
    if (view.team_tricks_won) add(`team tricks A ${view.team_tricks_won[0]} · B ${view.team_tricks_won[1]}`);
  } else if (game === "fool") {
    if (view.bout_limit) add(`bout limit ${view.bout_limit}`);
    if (view.discard_count) add(`${view.discard_count} discarded`);
  }
  info.append(lines);
  return info;
}

function sideNotes(ctx) {
  const { game, view, names } = ctx;
  const notes = el("div", "table-notes");
  const lastTrick = view.last_trick || (game === "tiercon" && view.tricks && view.tricks.length
    ? view.tricks[view.tricks.length - 1].cards : null);
  const winner = game === "tiercon" && view.tricks && view.tricks.length
    ? view.tricks[view.tricks.length - 1].winner : view.last_trick_winner;
  if (lastTrick && lastTrick.length && !(view.trick && view.trick.length)) {
    const box = el("div", "note last-trick");
    box.append(el("small", null, `last trick${winner !== null && winner !== undefined ? ` → ${names[winner] || winner}` : ""}`));
    const row = el("div", "row");
    for (const [, code] of lastTrick) row.append(cardEl(code, "xs"));
    box.append(row);
    notes.append(box);
  }
  if (game === "tiercon" && view.declared && view.declared.length) {
    const box = el("div", "note");
    box.append(el("small", null, "announced"));
    for (const [seat, action, points] of view.declared) {
      const line = el("div", "declared");
      line.append(`${names[seat] || seat}: `, actionEl(action.replace(/^declare /, "")), ` (${points})`);
      box.append(line);
    }
    notes.append(box);
  }
  if (game === "fool" && view.last_bout && !(view.table && view.table.length)) {
    const bout = view.last_bout;
    const box = el("div", "note");
    box.append(el("small", null, `last bout: ${names[bout.defender] || bout.defender} ${bout.taken ? "took" : `beat it (+${bout.face_cards})`}`));
    const row = el("div", "row");
    for (const [attack, cover] of bout.table) {
      row.append(cardEl(attack, "xs"));
      if (cover) row.append(cardEl(cover, "xs"));
    }
    box.append(row);
    notes.append(box);
  }
  if (view.last_deal && view.last_deal.total) {
    const box = el("div", "note");
    box.append(el("small", null, "last deal, points"));
    const row = el("div", "row points");
    view.last_deal.total.forEach((t, s) => {
      const who = ctx.viewer === s ? "you" : names[s] || `seat ${s}`;
      const cell = el("span", "seat-points", `${who} ${t < 0 ? "−" : "+"}${Math.abs(t)}`);
      cell.dataset.seat = String(s);
      cell.title = `${names[s] || `seat ${s}`} (seat ${s})`;
      row.append(cell);
    });
    box.append(row);
    notes.append(box);
  }
  return notes;
}

// ctx: { game, view, names, viewer (seat or null), hands (array or null), ended, lastStep, legal }
export function renderTable(container, ctx) {
  const { game, view } = ctx;
  const n = view.players || ctx.names.length;
  const bottom = ctx.viewer ?? 0;
  const positions = [];
  for (let s = 0; s < n; s++) positions.push(seatPosition((s - bottom + n) % n, n));
  const felt = el("div", `felt game-${game} seats-${n}`);
  felt.append(infoEl(ctx));
  if (game === "fool") {
    felt.append(stockEl(view.stock || 0, view.stock ? view.trump_card : null));
    felt.append(foolTableEl(view));
  } else {
    if (view.stock !== undefined && view.stock !== null) felt.append(stockEl(view.stock, view.turned));
    else if (view.turned) felt.append(stockEl(0, view.turned, "turned card"));
    felt.append(trickEl(ctx, view.trick || [], positions));
  }
  felt.append(sideNotes(ctx));
  for (let s = 0; s < n; s++) {
    const pos = positions[s];
    felt.append(place(seatPlate(ctx, s, pos.y < -0.5), 50 + pos.x * 36, 50 + pos.y * 37));
  }
  container.replaceChildren(felt);
}
