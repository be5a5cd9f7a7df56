// The dashboard: a hash-routed page of plain DOM, fed by the REST API (polling) and the
// matches' server-sent events.
//
//   #/                    overview: leaderboards, tournaments, live matches
//   #/tournaments         every tournament       #/tournaments/ID   one, with standings
//   #/matches             live and recent        #/matches/ID       live view or replay viewer
//   #/games               the rulesets
//   #/ladders             every ladder           #/ladders/ID       live standings (SSE)
//   #/play                a person at the table (play.js)   #/play?bot=NAME   against that bot
//   #/bots/NAME           a bot's page: versions, rating history, ladders, matches (botpage.js)

import { ApiError, api, followEvents, token } from "./api.js";
import { actionEl, el } from "./cards.js";
import { botLink, botPage } from "./botpage.js";
import { lineChart } from "./charts.js";
import { playPage } from "./play.js";
import { renderTable } from "./table.js";

const POLL_MS = 2000;
const GAME_NAMES = { merde: "Merde", tiercon: "Tierçon", regicide: "Régicide", fool: "Fool compris" };
const view = document.getElementById("view");

// -- page life: timers and streams stop when the route changes --------------------------------

let page = { alive: false, timers: [], streams: [] };

function newPage() {
  page.alive = false;
  page.timers.forEach(clearInterval);
  page.streams.forEach((s) => s.stop());
  page = { alive: true, timers: [], streams: [] };
  return page;
}

function every(ms, fn) {
  const mine = page;
  const run = async () => {
    if (!mine.alive) return;
    try {
      await fn();
    } catch (error) {
      if (mine.alive) console.warn(error);
    }
  };
  run();
  mine.timers.push(setInterval(run, ms));
}

// -- small builders ---------------------------------------------------------------------------

function link(href, text, className) {
  const a = el("a", className, text);
  a.href = href;
  return a;
}

function section(title, ...children) {
  const box = el("section", "panel");
  if (title) box.append(el("h2", null, title));
  box.append(...children);
  return box;
}

// A page's one panel, titled by the page's heading (h1; a section's own title is an h2).
function pageSection(title, ...children) {
  const box = section(null, ...children);
  box.prepend(el("h1", "panel-title", title));
  return box;
}

function chip(text, kind = "") {
  return el("span", `chip ${kind}`, text);
}

function statusChip(status) {
  const kinds = { running: "live", finished: "done", cancelled: "muted", failed: "bad", queued: "wait", pending: "wait", created: "wait" };
  const c = chip(status, kinds[status] || "");
  if (status === "running") c.prepend(el("i", "dot"));
  return c;
}

function gameChip(game) {
  return chip(GAME_NAMES[game] || game, `game ${game}`);
}

function progressBar(progress) {
  // The fill is the matches played (finished or failed); cancelled ones are a grey segment
  // after it, so a cancelled tournament does not look complete.
  const bar = el("div", "progress");
  const total = progress.total || 0;
  const cancelled = (progress.by_status && progress.by_status.cancelled) || 0;
  const played = progress.done - cancelled;
  const share = (n) => (total ? (100 * n) / total : 0);
  bar.title = `${played} of ${total} matches played${cancelled ? `, ${cancelled} cancelled` : ""}`;
  const fill = el("div", "fill");
  fill.style.width = `${share(played)}%`;
  bar.append(fill);
  if (cancelled) {
    const skipped = el("div", "cancelled");
    skipped.style.left = `${share(played)}%`;
    skipped.style.width = `${share(cancelled)}%`;
    bar.append(skipped);
  }
  bar.append(el("span", "label", `${played} / ${total}${cancelled ? ` · ${cancelled} cancelled` : ""}`));
  return bar;
}

// An option's value as the API takes it (JSON: true, 36, "ten"), for people.
function optionValue(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function optionDefault(option) {
  return option.default === null || option.default === undefined ? "by player count" : optionValue(option.default);
}

function optionAllowed(option) {
  return option.choices && option.choices.length ? option.choices.map(optionValue).join(" or ") : option.allowed;
}

// A column's name for screen readers only (over a column of buttons or bars).
function unseen(text) {
  return el("span", "sr-only", text);
}

// A table that is wider than its box (a phone) scrolls: it then says so (the .scrolls class
// shades the edge it hides) and takes the keyboard's focus, to scroll with the arrows.
const overflowing = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const scrolls = target.scrollWidth > target.clientWidth + 1;
    target.classList.toggle("scrolls", scrolls);
    if (scrolls) target.tabIndex = 0;
    else target.removeAttribute("tabindex");
  }
});

function table(headers, rows, className = "") {
  const t = el("table", `data ${className}`);
  overflowing.observe(t);
  const head = el("tr");
  for (const h of headers) {
    const th = el("th");
    th.append(h); // text, or a node (unseen)
    head.append(th);
  }
  t.append(el("thead"), el("tbody"));
  t.tHead.append(head);
  for (const row of rows) {
    const tr = el("tr");
    for (const cell of row) {
      const td = el("td");
      if (cell instanceof Node) td.append(cell);
      else td.textContent = cell === null || cell === undefined ? "–" : String(cell);
      tr.append(td);
    }
    t.tBodies[0].append(tr);
  }
  return t;
}

function empty(text) {
  return el("p", "empty", text);
}

function errorBox(error) {
  return el("p", "error", error instanceof ApiError ? `${error.status}: ${error.message}` : String(error));
}

function fmt(x, digits = 0) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}

// -- leaderboards -----------------------------------------------------------------------------

function leaderboardEl(board) {
  if (!board.rows.length) return empty("No rated match yet.");
  const low = Math.min(...board.rows.map((r) => r.ci_low));
  const high = Math.max(...board.rows.map((r) => r.ci_high));
  const span = Math.max(high - low, 1);
  const rows = board.rows.map((r) => {
    const rating = el("span", "rating");
    rating.append(el("b", null, fmt(r.rating)), el("small", null, ` ± ${fmt((r.ci_high - r.ci_low) / 2)}`));
    const ci = el("div", "ci");
    const bar = el("i");
    bar.style.left = `${((r.ci_low - low) / span) * 100}%`;
    bar.style.width = `${Math.max(((r.ci_high - r.ci_low) / span) * 100, 1)}%`;
    const mark = el("b");
    mark.style.left = `${((r.rating - low) / span) * 100}%`;
    ci.append(bar, mark);
    ci.title = `95% interval ${fmt(r.ci_low)} – ${fmt(r.ci_high)}`;
    return [String(r.rank), botLink(r.bot, "bot-name"), rating, ci, fmt(r.online), String(r.matches)];
  });
  const t = table(["#", "bot", "Elo ± 95%", unseen("interval"), "live Elo", "matches"], rows, "leaderboard");
  t.dataset.rows = String(board.rows.length);
  return t;
}

function leaderboardsPanel(games, selected) {
  const panel = section("Leaderboards");
  panel.classList.add("leaderboards");
  const tabs = el("div", "tabs");
  const body = el("div", "tab-body");
  let current = selected || games[0];
  const draw = async () => {
    for (const b of tabs.children) b.classList.toggle("active", b.dataset.game === current);
    const board = await api(`/v1/ratings?game=${encodeURIComponent(current)}`);
    const note = el("p", "hint", `${board.rated_matches} rated matches · ratings fitted over all of them, with 95% intervals`);
    body.replaceChildren(leaderboardEl(board), note);
    body.dataset.game = current;
  };
  for (const g of games) {
    const b = el("button", "tab", GAME_NAMES[g] || g);
    b.dataset.game = g;
    b.onclick = () => { current = g; draw(); };
    tabs.append(b);
  }
  panel.append(tabs, body);
  return { panel, refresh: draw };
}

// -- tournaments ------------------------------------------------------------------------------

function tournamentCard(t) {
  const card = el("a", `tcard status-${t.status}`);
  card.href = `#/tournaments/${t.id}`;
  card.dataset.tournament = String(t.id);
  const head = el("div", "tcard-head");
  head.append(el("b", null, t.name), gameChip(t.game), statusChip(t.status));
  card.append(head, progressBar(t.progress));
  card.append(el("small", null, `${t.entrants.length} bots · ${t.players} per match${t.duplicate ? " · duplicate" : ""}`));
  return card;
}

function liveMatchRow(m) {
  const row = el("a", "live-row");
  row.href = `#/matches/${m.id}`;
  row.dataset.match = String(m.id);
  row.append(gameChip(m.game), el("span", "who", m.seats.map((s) => s.bot).join(" · ")), chip("watch", "live"));
  return row;
}

async function homePage() {
  const games = (await api("/v1/games")).map((g) => g.id);
  const boards = leaderboardsPanel(games, sessionStorage.getItem("atout-board"));
  const tournaments = el("div", "tcards");
  const live = el("div", "live-list");
  const grid = el("div", "grid home");
  grid.append(boards.panel, el("div", "stack"));
  grid.lastChild.append(section("Tournaments", tournaments), section("Live matches", live));
  view.replaceChildren(el("h1", "sr-only", "Overview"), grid);
  every(POLL_MS, async () => {
    const [ts, running] = await Promise.all([api("/v1/tournaments?limit=8"), api("/v1/matches?status=running&limit=12")]);
    tournaments.replaceChildren(...(ts.length ? ts.map(tournamentCard) : [empty("No tournament yet.")]));
    live.replaceChildren(...(running.items.length ? running.items.map(liveMatchRow) : [empty("No match is being played right now.")]));
    await boards.refresh();
  });
}

async function tournamentsPage() {
  const list = el("div", "tcards wide");
  view.replaceChildren(pageSection("Tournaments", list));
  every(POLL_MS, async () => {
    const ts = await api("/v1/tournaments?limit=200");
    list.replaceChildren(...(ts.length ? ts.map(tournamentCard) : [empty("No tournament yet.")]));
  });
}

function seatsCell(match, withVersions = false) {
  const span = el("span", "seats");
  match.seats.forEach((s, i) => {
    if (i) span.append(" · ");
    const name = el("span", s.place === 1 ? "winner" : "");
    name.append(botLink(s.bot), withVersions && s.version ? `@${s.version}` : "");
    if (s.place) name.title = `place ${s.place}, score ${s.score}`;
    span.append(name);
  });
  return span;
}

function matchRows(items, withVersions = false) {
  return items.map((m) => [
    link(`#/matches/${m.id}`, `#${m.id}`),
    seatsCell(m, withVersions),
    statusChip(m.status),
    m.scores ? m.scores.join(" : ") : "",
    link(`#/matches/${m.id}`, m.status === "finished" ? "replay" : m.status === "running" ? "watch live" : "open",
      m.status === "running" ? "btn live" : "btn"),
  ]);
}

async function tournamentPage(id) {
  const head = el("div", "page-head");
  const standings = el("div");
  const ratings = el("div");
  const matches = el("div");
  let filter = "";
  const filters = el("div", "tabs small");
  for (const [label, value] of [["all", ""], ["running", "running"], ["finished", "finished"], ["queued", "queued"], ["failed", "failed"]]) {
    const b = el("button", `tab ${value === filter ? "active" : ""}`, label);
    b.onclick = () => {
      filter = value;
      for (const x of filters.children) x.classList.toggle("active", x === b);
      refresh();
    };
    filters.append(b);
  }
  const grid = el("div", "grid two");
  grid.append(section("Standings", standings), section("Ratings (fitted at the end)", ratings));
  view.replaceChildren(head, grid, section("Matches", filters, matches));
  const refresh = async () => {
    const [t, page_] = await Promise.all([
      api(`/v1/tournaments/${id}`),
      api(`/v1/tournaments/${id}/matches?limit=500${filter ? `&status=${filter}` : ""}`),
    ]);
    const title = el("h1");
    title.append(t.name, " ", gameChip(t.game), " ", statusChip(t.status));
    const facts = el("p", "facts", `${t.entrants.length} bots · ${t.players} per match · ${t.games_per_pairing} game(s) per pairing` +
      `${t.duplicate ? " · duplicate deals" : ""} · ${t.move_ms} ms per move · forfeit after ${t.max_faults || "∞"} faults` +
      `${Object.keys(t.options).length ? ` · options ${JSON.stringify(t.options)}` : ""}`);
    head.replaceChildren(title, facts, progressBar(t.progress));
    if (t.failed_matches) {
      head.append(el("p", "error", `${t.finished_with_failures ? "Finished with failures: " : ""}${t.failed_matches} failed ` +
        `match(es), not in the standings. The organizer can retry each: POST /v1/matches/{id}/retry or atout-arena match retry ID.`));
    }
    standings.replaceChildren(t.standings.length ? table(["#", "bot", "points", "matches", "wins", "mean place", "faults", "forfeits"],
      t.standings.map((s) => [String(s.rank), botLink(s.bot), fmt(s.points, 1), String(s.matches), String(s.wins), fmt(s.mean_place, 2), String(s.faults), String(s.forfeits)]),
      "standings") : empty("No result yet."));
    ratings.replaceChildren(t.ratings.length ? table(["#", "bot", "rating", "95% interval", "P(> next)", "games"],
      t.ratings.map((r) => [String(r.rank), botLink(r.bot), fmt(r.rating), `${fmt(r.ci_low)} – ${fmt(r.ci_high)}`, r.los_next === null ? "–" : `${fmt(r.los_next * 100)}%`, String(r.games)]))
      : empty(t.status === "finished" ? "No rated result." : "Fitted once every match is played."));
    matches.replaceChildren(page_.items.length ? table(["match", "seats", "status", "scores", unseen("open")], matchRows(page_.items), "matches") : empty("No match here."));
    if (t.status !== "running" && t.status !== "created") page.timers.forEach(clearInterval);
  };
  every(POLL_MS, refresh);
}

// -- tests: A against B in duplicate sets until the SPRT decides -------------------------------

function llrBar(t) {
  // The LLR between its bounds: the test stops at either end (H0 on the left, H1 on the right).
  const bar = el("div", "llr-bar");
  const span = t.upper - t.lower;
  const at = Math.min(1, Math.max(0, (t.llr - t.lower) / span));
  bar.dataset.llr = String(t.llr);
  bar.dataset.lower = String(t.lower);
  bar.dataset.upper = String(t.upper);
  const zero = el("div", "llr-zero");
  zero.style.left = `${(-t.lower / span) * 100}%`;
  const mark = el("div", `llr-mark ${t.result === "H1" ? "good" : t.result === "H0" ? "bad" : ""}`);
  mark.style.left = `${at * 100}%`;
  bar.append(zero, mark);
  const labels = el("div", "llr-labels");
  labels.append(el("span", null, `H0 ${fmt(t.lower, 2)}`), el("span", "llr-value", `LLR ${fmt(t.llr, 2)}`),
    el("span", null, `H1 ${fmt(t.upper, 2)}`));
  const box = el("div", "llr");
  box.append(bar, labels);
  return box;
}

function eloText(t) {
  const [lo, hi] = t.elo_ci95;
  const elo = t.elo === null ? "±∞" : fmt(t.elo, 1);
  return lo === null || hi === null ? `Elo ${elo}` : `Elo ${elo} [${fmt(lo, 1)}, ${fmt(hi, 1)}]`;
}

// Why a test waits ("waiting for alice@v9: not connected", and when it gives up) or why it ended.
function testWhy(t) {
  if (t.waiting) {
    const line = el("p", "test-why waiting", t.waiting + (t.gives_up_at ? ` · gives up at ${new Date(t.gives_up_at).toLocaleTimeString()}` : ""));
    line.setAttribute("role", "status");
    return line;
  }
  return t.reason ? el("p", "test-why", t.reason) : null;
}

function testCard(t) {
  const card = el("a", "tcard test-card");
  card.href = `#/tests/${t.id}`;
  card.dataset.test = String(t.id);
  const title = el("h2"); // under the page's h1
  title.append(`${t.a} vs ${t.b} `, gameChip(t.game), " ", statusChip(t.result || t.status));
  card.append(title, el("p", "facts", `${t.games} games · ${t.sets} sets · ${eloText(t)}`), llrBar(t));
  const why = testWhy(t);
  if (why) card.append(why);
  return card;
}

async function testsPage() {
  const list = el("div", "tcards wide");
  view.replaceChildren(pageSection("Tests (SPRT)", list));
  every(POLL_MS, async () => {
    const ts = await api("/v1/tests?limit=100");
    list.replaceChildren(...(ts.length ? ts.map(testCard) : [empty("No test yet: POST /v1/tests or atout-arena test create.")]));
  });
}

async function testPage(id) {
  const head = el("div", "page-head");
  const stats = el("div");
  const matches = el("div");
  view.replaceChildren(head, section("Sequential test", stats), section("Matches", matches));
  every(POLL_MS, async () => {
    const [t, page_] = await Promise.all([api(`/v1/tests/${id}`), api(`/v1/matches?test=${id}&limit=50`)]);
    const title = el("h1");
    title.append(`${t.a} vs ${t.b} `, gameChip(t.game), " ", statusChip(t.result || t.status));
    head.replaceChildren(title, el("p", "facts", `${t.players} per match · field: ${t.field} · SPRT elo0 ${fmt(t.sprt.elo0, 1)}, ` +
      `elo1 ${fmt(t.sprt.elo1, 1)}, α ${t.sprt.alpha}, β ${t.sprt.beta} · at most ${t.max_games} games · ${t.move_ms} ms per move`));
    const facts = table(["games", "sets", "score", "Elo (95%)", "LOS"],
      [[String(t.games), String(t.sets), fmt(t.score, 3), eloText(t).replace("Elo ", ""), `${fmt((t.los || 0) * 100, 1)}%`]], "test-stats");
    const why = testWhy(t);
    stats.replaceChildren(...(why ? [why] : []), llrBar(t), facts);
    matches.replaceChildren(page_.items.length ? table(["match", "seats (bot@version)", "status", "scores", unseen("open")], matchRows(page_.items, true), "matches") : empty("No match yet."));
    if (t.status !== "running") page.timers.forEach(clearInterval);
  });
}

// -- ladders: connected bots matched all the time, rated by OpenSkill -----------------------------

function ladderCard(l) {
  const card = el("a", "tcard ladder-card");
  card.href = `#/ladders/${l.id}`;
  card.dataset.ladder = String(l.id);
  const title = el("h2"); // under the page's h1
  title.append(`${l.name} `, gameChip(l.game), " ", statusChip(l.status));
  const top = l.standings.length ? `leader ${l.standings[0].bot} (${fmt(l.standings[0].ordinal, 2)})` : "no member yet";
  card.append(title, el("p", "facts", `${l.standings.length} bots · ${l.in_flight.length} matches in flight · ${top}`));
  return card;
}

async function laddersPage() {
  const list = el("div", "tcards wide");
  view.replaceChildren(pageSection("Ladders", list));
  every(POLL_MS, async () => {
    const ls = await api("/v1/ladders?limit=100");
    list.replaceChildren(...(ls.length ? ls.map(ladderCard) : [empty("No ladder yet: POST /v1/ladders or atout-arena ladder create.")]));
  });
}

function ladderStandings(l) {
  if (!l.standings.length) return empty("No member yet: bots join when they connect.");
  const low = Math.min(0, ...l.standings.map((r) => r.ordinal));
  const high = Math.max(1, ...l.standings.map((r) => r.mu + 3 * r.sigma));
  const t = table(["#", "bot", "ordinal μ−3σ", "μ ± 3σ", "games", "sets", "in flight", unseen("connection")], l.standings.map((r) => {
    const bar = el("div", "ci");
    const span = el("i");
    span.style.left = `${((r.mu - 3 * r.sigma - low) / (high - low)) * 100}%`;
    span.style.width = `${((6 * r.sigma) / (high - low)) * 100}%`;
    const mark = el("b");
    mark.style.left = `${((r.mu - low) / (high - low)) * 100}%`;
    bar.append(span, mark);
    const state = r.disabled ? chip("disabled", "bad") : r.connected ? chip("connected", "live") : chip("away", "muted");
    const who = el("span");
    who.append(botLink(r.bot));
    if (r.provisional) who.append(" ", chip("provisional", "muted"));
    return [String(r.rank), who, fmt(r.ordinal, 2), bar, String(r.games), String(r.sets), String(r.sets_in_flight), state];
  }), "ladder-standings");
  l.standings.forEach((r, i) => {
    const row = t.tBodies[0].rows[i];
    row.dataset.bot = r.bot;
    row.dataset.games = String(r.games);
    row.dataset.ordinal = String(r.ordinal);
  });
  return t;
}

function ladderInFlight(l) {
  if (!l.in_flight.length) return empty("No match in flight.");
  return table(["match", "set", "seats", "status"], l.in_flight.map((m) =>
    [link(`#/matches/${m.id}`, `#${m.id}`), String(m.set), m.bots.join(" · "), statusChip(m.status)]), "ladder-in-flight");
}

async function ladderPage(id) {
  const head = el("div", "page-head");
  const board = el("div");
  const flying = el("div");
  const live = chip("connecting", "wait");
  live.classList.add("ladder-live");
  const history = el("div", "ladder-history");
  view.replaceChildren(head, section("Standings", board), section("Rating history", history), section("Matches in flight", flying));
  let rated = -1;
  const drawHistory = async (l) => {
    if ((l.sets.rated || 0) === rated) return;
    rated = l.sets.rated || 0;
    const lines = await api(`/v1/ladders/${id}/history`);
    history.replaceChildren(lineChart({ label: `${l.name}: each member's ordinal (μ − 3σ) after each rated set`,
      series: lines.map((b) => ({ name: b.bot, points: b.points.map((p) => [p.set, p.ordinal]) })),
      xLabel: "set", yLabel: "ordinal μ − 3σ" }));
  };
  const render = (l) => {
    drawHistory(l).catch((error) => console.warn(error));
    const title = el("h1");
    title.append(`${l.name} `, gameChip(l.game), " ", statusChip(l.status), " ", live);
    const done = l.matches.finished || 0;
    head.replaceChildren(title, el("p", "facts ladder-facts", `${l.players} per match · ${l.move_ms} ms per move · ` +
      `${done} matches played · ${l.sets.rated || 0} sets rated · target ${l.target_in_flight} in flight · ` +
      (l.open ? "any registered bot joins" : "its members")));
    board.replaceChildren(ladderStandings(l));
    flying.replaceChildren(ladderInFlight(l));
    head.dataset.updates = String(Number(head.dataset.updates || 0) + 1);
  };
  render(await api(`/v1/ladders/${id}`));
  page.streams.push(followEvents(`/v1/ladders/${id}/events`, (type, l) => { if (type === "ladder") render(l); },
    { onState: (state) => { live.textContent = state; live.className = `chip ${state === "live" ? "live" : "wait"} ladder-live`; } }));
}

async function matchesPage() {
  const live = el("div");
  const recent = el("div");
  view.replaceChildren(el("h1", "sr-only", "Matches"), section("Live now", live), section("Recent matches", recent));
  every(POLL_MS, async () => {
    const [running, finished] = await Promise.all([api("/v1/matches?status=running&limit=50"), api("/v1/matches?status=finished&limit=30")]);
    live.replaceChildren(running.items.length ? table(["match", "seats", "status", "scores", unseen("open")], matchRows(running.items), "matches") : empty("Nothing is being played right now."));
    recent.replaceChildren(finished.items.length ? table(["match", "seats", "status", "scores", unseen("open")], matchRows(finished.items), "matches") : empty("No finished match yet."));
  });
}

async function gamesPage() {
  const games = await api("/v1/games");
  const list = el("div", "games");
  for (const g of games) {
    const card = section(null);
    const title = el("h2");
    title.append(g.name, " ", chip(g.id, `game ${g.id}`));
    card.append(title, el("p", "facts", `${g.players.join(", ")} players (default ${g.default_players})`), el("p", null, g.summary));
    if (g.options.length) {
      card.append(table(["option", "default", "allowed", "meaning"], g.options.map((o) => [o.name, optionDefault(o), optionAllowed(o), o.doc])));
    }
    list.append(card);
  }
  view.replaceChildren(el("h1", "sr-only", "Games"), list);
}

// -- one match: live view and replay viewer ---------------------------------------------------

function scoreboard(match, viewData, ended, { final = true } = {}) {
  // final=false (a replay before its last step): no final score nor place yet
  const rows = match.seats.map((s) => {
    const score = viewData && viewData.scores ? viewData.scores[s.seat] : final ? s.score : null;
    const place = ended && ended.ranking ? ended.ranking[s.seat] : final ? s.place : null;
    // the bot's name, its version below it, then its own think time (as its SDK reported it)
    // beside the network and queueing time: a cell that wraps, never one squeezed to nothing
    const bot = el("span", "seat-bot");
    bot.append(botLink(s.bot, `bot-name ${place === 1 ? "winner" : ""}`));
    if (s.version) bot.append(el("small", "seat-more seat-version", `version ${s.version}`));
    const known = (x) => x !== null && x !== undefined;
    const ms = (x) => (known(x) ? `${fmt(x)} ms` : "–");
    if (known(s.bot_think_ms) || known(s.network_ms)) {
      bot.append(el("small", "seat-more seat-times", `think ${ms(s.bot_think_ms)} · network ${ms(s.network_ms)}`));
    }
    return [String(s.seat), bot, fmt(score), place ? String(place) : "–", String(s.faults)];
  });
  return table(["#", "bot", "score", "place", "faults"], rows, "scoreboard");
}

// The moves, newest first (live) or in order (replay): a list that scrolls, so it takes the focus.
function movesList(className) {
  const log = el("ol", className);
  log.tabIndex = 0;
  log.setAttribute("aria-label", "moves");
  return log;
}

function logLine(event, names, onClick) {
  const li = el("li", event.by === "fallback" ? "fallback" : "");
  li.dataset.ply = String(event.ply);
  const who = el("b", "who", names[event.seat] || `seat ${event.seat}`);
  who.title = who.textContent;
  const what = el("span", "what");
  what.append(actionEl(event.action));
  li.append(el("span", "ply", String(event.ply + 1)), who, what);
  if (event.by === "fallback") what.append(" ", chip("fallback", "bad"));
  for (const f of event.faults || []) what.append(" ", chip(f, "bad"));
  if (event.think_ms !== undefined) li.append(el("small", "think", `${fmt(event.think_ms, 1)} ms`));
  if (event.note) li.append(el("q", "note", event.note)); // the bot's note, as text (never HTML)
  if (event.detail) li.title = event.detail;
  if (onClick) li.onclick = onClick;
  return li;
}

function viewerSelect(match, current, onChange, withFull) {
  const select = el("select", "viewer-select");
  select.setAttribute("aria-label", "whose view");
  const option = (value, label) => {
    const o = el("option", null, label);
    o.value = value;
    if (value === current) o.selected = true;
    select.append(o);
  };
  option("", "Spectator (public view)");
  for (const s of match.seats) option(String(s.seat), `Seat ${s.seat}: ${s.bot}`);
  if (withFull) option("full", "Organizer: every hand");
  select.onchange = () => onChange(select.value);
  return select;
}

function matchHeader(match) {
  const head = el("div", "page-head");
  const title = el("h1");
  title.append(`Match #${match.id} `, gameChip(match.game), " ", statusChip(match.status));
  const label = match.label || "practice match"; // "test #3: alice@v2 vs alice@v1", "tournament 2, match 5"…
  const where = match.test_id ? link(`#/tests/${match.test_id}`, label) : match.tournament_id ? link(`#/tournaments/${match.tournament_id}`, label) : match.ladder_id ? link(`#/ladders/${match.ladder_id}`, label) : el("span", null, label);
  const facts = el("p", "facts");
  // a seat with a move time of its own (a person's 60 s) says so: "2000 ms per move (alice: 60 s)"
  const time = (ms) => (ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
  const own = match.seats.filter((s) => s.move_ms > match.move_ms).map((s) => `${s.bot}: ${time(s.move_ms)}`);
  facts.append(where, ` · ${match.players} players · ${match.move_ms} ms per move${own.length ? ` (${own.join(", ")})` : ""}` +
    `${Object.keys(match.options).length ? ` · options ${JSON.stringify(match.options)}` : ""}`);
  head.append(title, facts);
  return head;
}

function matchLayout(match) {
  const felt = el("div", "table-area");
  const side = el("aside", "side");
  const grid = el("div", "grid match");
  grid.append(felt, side);
  view.replaceChildren(matchHeader(match), grid);
  return { felt, side };
}

// carried: what the view before showed when the spectator picks another seat ({ last, moves,
// note }): the table and the move log stay (a seat's stream starts at the next step), and a seat
// refused for want of a token falls back to the public view with a note, not to a blank table.
function liveView(match, seatChoice = "", carried = null) {
  const { felt, side } = matchLayout(match);
  const names = match.seats.map((s) => s.bot);
  const state = el("div", "live-state", "connecting…");
  const board = el("div");
  const log = movesList("log");
  if (carried) log.append(...carried.moves);
  const viewer = seatChoice === "" ? null : Number(seatChoice);
  let last = carried ? carried.last : null;
  let ended = null;
  const handOver = (note = "") => {
    const { hand, ...shown } = last || {}; // a seat's own hand is never shown to another view
    return { last: last ? shown : null, moves: [...log.children], note };
  };
  const select = viewerSelect(match, seatChoice, (value) => {
    newPage();
    liveView(match, value, handOver());
  }, false);
  const controls = el("div", "controls");
  const note = el("p", "hint live-note", carried ? carried.note : "");
  controls.append(state, select, note);
  side.append(section("Live", controls), section("Seats", board), section("Moves", log));
  const draw = (lastStep) => {
    if (!last) return;
    renderTable(felt, { game: match.game, view: last, names, viewer, hands: null, ended, lastStep });
    board.replaceChildren(scoreboard(match, last, ended));
  };
  if (last) draw(null);
  else felt.append(empty("Waiting for the match to start…"));
  const path = `/v1/matches/${match.id}/events${viewer === null ? "" : `?seat=${viewer}`}`;
  const stream = followEvents(path, (type, event) => {
    if (type === "start" || type === "step") {
      last = event.view;
      felt.dataset.ply = type === "step" ? String(event.ply) : "start";
      if (type === "step" && !log.querySelector(`li[data-ply="${event.ply}"]`)) {
        log.prepend(logLine(event, names));
        while (log.children.length > 200) log.lastChild.remove();
      }
      draw(type === "step" ? { seat: event.seat, action: event.action } : null);
    } else if (type === "end") {
      ended = event;
      felt.dataset.ended = "true";
      draw(null);
      const done = el("div", "end-banner");
      done.append(`Match over (${event.reason}). `, link(`#/matches/${match.id}?replay`, "Open the replay", "btn"));
      side.prepend(done);
    }
  }, {
    onState: (s, detail) => {
      if (s === "error" && viewer !== null) { // refused (no token, or not this seat's): back to the public view
        newPage();
        liveView(match, "", handOver(`Seat ${viewer}'s view needs the organizer token or that seat's bot token ` +
          `(the token field above): ${detail}`));
        return;
      }
      state.className = `live-state ${s}`;
      state.textContent = { live: "● live", reconnecting: "reconnecting…", ended: "match over", error: detail || "error" }[s] || s;
    },
  });
  page.streams.push(stream);
}

async function replayView(match, choice = "") {
  const mine = page;
  const { felt, side } = matchLayout(match);
  const names = match.seats.map((s) => s.bot);
  const select = viewerSelect(match, choice, (value) => {
    newPage();
    replayView(match, value);
  }, true);
  const controls = el("div", "controls");
  const note = el("div", "hint");
  controls.append(select);
  const board = el("div");
  const log = movesList("log replay");
  side.append(section("Replay", controls, note, recordLink(match, note)), section("Seats", board), section("Moves", log));
  let replay;
  try {
    const path = choice === "full" ? `/v1/matches/${match.id}/replay/full`
      : `/v1/matches/${match.id}/replay${choice === "" ? "" : `?seat=${choice}`}`;
    replay = await api(path);
    if (!mine.alive) return; // another view was chosen while this one loaded: it wins
  } catch (error) {
    felt.replaceChildren(errorBox(error));
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      note.textContent = "A seat's view needs the organizer token or that seat's bot token: paste it in the token field above.";
    }
    return;
  }
  const events = replay.events;
  const viewer = replay.viewer === "seat" ? replay.seat : null;
  let index = 0;
  let timer = null;
  const slider = el("input", "slider");
  Object.assign(slider, { type: "range", min: "0", max: String(events.length - 1), value: "0" });
  slider.setAttribute("aria-label", "step");
  const counter = el("span", "counter");
  const buttons = el("div", "buttons");
  const button = (label, title, fn) => {
    const b = el("button", "step-btn", label);
    b.title = title;
    b.onclick = fn;
    buttons.append(b);
    return b;
  };
  const go = (i) => {
    index = Math.max(0, Math.min(events.length - 1, i));
    const event = events[index];
    const atEnd = index === events.length - 1;
    const ended = atEnd ? { ranking: match.ranking, scores: match.scores } : null;
    renderTable(felt, {
      game: match.game, view: event.view, names, viewer, hands: event.hands || null, ended,
      lastStep: event.type === "step" ? { seat: event.seat, action: event.action } : null,
    });
    felt.dataset.ply = String(index);
    slider.value = String(index);
    counter.textContent = `${index} / ${events.length - 1}`;
    board.replaceChildren(scoreboard(match, event.view, ended, { final: atEnd }));
    for (const li of log.children) li.classList.toggle("current", Number(li.dataset.ply) === index - 1);
    const current = log.querySelector(".current");
    if (current) { // scroll the log only, never the page
      const top = current.offsetTop - log.offsetTop;
      if (top < log.scrollTop) log.scrollTop = top;
      else if (top + current.offsetHeight > log.scrollTop + log.clientHeight) log.scrollTop = top + current.offsetHeight - log.clientHeight;
    }
  };
  const stop = () => { clearInterval(timer); timer = null; play.textContent = "▶"; };
  button("⇤", "first", () => { stop(); go(0); });
  button("‹", "previous (←)", () => { stop(); go(index - 1); });
  const play = button("▶", "play / pause (space)", () => {
    if (timer) return stop();
    play.textContent = "❚❚";
    timer = setInterval(() => (index >= events.length - 1 ? stop() : go(index + 1)), 350);
    page.timers.push(timer);
  });
  button("›", "next (→)", () => { stop(); go(index + 1); });
  button("⇥", "last", () => { stop(); go(events.length - 1); });
  slider.oninput = () => { stop(); go(Number(slider.value)); };
  controls.prepend(buttons, slider, counter);
  note.textContent = replay.viewer === "public" ? "Spectator view: no hidden card." :
    replay.viewer === "seat" ? `What seat ${replay.seat} (${names[replay.seat]}) saw.` : "Organizer view: every hand.";
  events.forEach((event) => {
    if (event.type === "step") log.append(logLine(event, names, () => { stop(); go(event.ply + 1); }));
  });
  const keys = (e) => {
    if (!document.body.contains(slider)) return document.removeEventListener("keydown", keys);
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    const arrow = e.key === "ArrowLeft" || e.key === "ArrowRight";
    if (arrow && e.target === slider) e.preventDefault(); // the slider's own step would make it two
    if (e.key === "ArrowLeft") { stop(); go(index - 1); }
    else if (e.key === "ArrowRight") { stop(); go(index + 1); }
    else if (e.key === " ") { e.preventDefault(); play.click(); }
  };
  document.addEventListener("keydown", keys);
  go(0);
}

// "Download record": the finished match as one line of docs/record.md's format (atout-bot watch
// and replay read it). A real link (keyboard, screen readers, a new tab); a click fetches it with
// the token of the field above (the organizer's, before the seeds are published) and saves it.
// (The API's answer is already one compact line.)
function recordLink(match, note) {
  const path = `/v1/matches/${match.id}/record`;
  const name = `match-${match.id}.jsonl`;
  const a = link(path, "Download record", "download-record");
  a.download = name;
  a.title = "This match as a record file (JSON Lines, docs/record.md) for atout-bot watch and replay";
  a.onclick = async (e) => {
    e.preventDefault();
    try { // the answer's text as it is: JSON.parse would round its 63-bit seed
      const response = await fetch(path, { headers: token.get() ? { Authorization: `Bearer ${token.get()}` } : {} });
      const text = await response.text();
      if (!response.ok) throw new ApiError(response.status, JSON.parse(text || "{}").detail || response.statusText);
      const url = URL.createObjectURL(new Blob([`${text.trim()}\n`], { type: "application/x-ndjson" }));
      const save = Object.assign(document.createElement("a"), { href: url, download: name });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (error) {
      note.textContent = error instanceof ApiError && (error.status === 401 || error.status === 403)
        ? `The record needs the organizer token until the match's seeds are published: ${error.message}`
        : `The record could not be downloaded: ${error.message}`;
    }
  };
  const box = el("p", "record-link");
  box.append(a);
  return box;
}

async function matchPage(id, query) {
  const mine = page;
  const match = await api(`/v1/matches/${id}`);
  if (!mine.alive) return; // another view was chosen while this one loaded: it wins
  if (match.status === "finished") return replayView(match);
  if (["running", "queued", "pending"].includes(match.status) && query !== "replay") return liveView(match);
  const { felt } = matchLayout(match);
  felt.replaceChildren(empty(`This match is ${match.status}${match.error ? `: ${match.error}` : ""}.`));
}

// -- routing ----------------------------------------------------------------------------------

const ROUTES = [
  [/^\/?$/, "home", homePage],
  [/^\/tournaments\/?$/, "tournaments", tournamentsPage],
  [/^\/tournaments\/(\d+)$/, "tournaments", tournamentPage],
  [/^\/matches\/?$/, "matches", matchesPage],
  [/^\/matches\/(\d+)$/, "matches", matchPage],
  [/^\/games\/?$/, "games", gamesPage],
  [/^\/tests\/?$/, "tests", testsPage],
  [/^\/tests\/(\d+)$/, "tests", testPage],
  [/^\/ladders\/?$/, "ladders", laddersPage],
  [/^\/ladders\/(\d+)$/, "ladders", ladderPage],
  [/^\/play\/?$/, "play", (query) => playPage(view, page, query)],
  [/^\/bots\/([^/]+)$/, "", (name) => {
    const mine = page;
    return botPage(view, decodeURIComponent(name), { el, section, link, chip, empty, table, fmt, statusChip, unseen,
      gameName: (g) => GAME_NAMES[g] || g, alive: () => mine.alive });
  }],
];

async function route() {
  newPage();
  const [path, query] = (location.hash.replace(/^#/, "") || "/").split("?");
  for (const [pattern, nav, render] of ROUTES) {
    const found = path.match(pattern);
    if (!found) continue;
    for (const a of document.querySelectorAll("[data-nav]")) a.classList.toggle("active", a.dataset.nav === nav);
    try {
      await render(...found.slice(1), query);
    } catch (error) {
      view.replaceChildren(errorBox(error));
    }
    return;
  }
  view.replaceChildren(empty(`No page at ${path}.`), link("#/", "Back to the overview", "btn"));
}

const form = document.getElementById("token-form");
const input = document.getElementById("token-input");
input.value = token.get();
form.onsubmit = (e) => {
  e.preventDefault();
  token.set(input.value);
  route();
};
document.addEventListener("click", (e) => {
  const tab = e.target.closest(".leaderboards .tab");
  if (tab) sessionStorage.setItem("atout-board", tab.dataset.game);
});
window.addEventListener("hashchange", route);
route();
