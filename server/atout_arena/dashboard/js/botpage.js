// A bot's page (#/bots/NAME): what its developer looks at between two versions.
//
//   its versions (matches, wins, mean place; think and network p50/p99 and faults by kind over
//   the stated window), its online Elo after each rated match per game (a chart), its line in
//   each ladder, its recent matches, and a Play button (the Play page, this bot as the opponent).
//
// The figures are GET /v1/bots/{name}'s, for the organizer or the bot itself (its own token).
// app.js hands over its page builders (`kit`) so that tables scroll and look as on every page.

import { ApiError, api } from "./api.js";
import { lineChart } from "./charts.js";

// A link to a bot's page: every bot name on the dashboard is one.
export function botLink(name, className = "") {
  const a = document.createElement("a");
  a.className = `bot-link ${className}`.trim();
  a.href = `#/bots/${encodeURIComponent(name)}`;
  a.textContent = name;
  return a;
}

export function playHref(name) {
  return `#/play?bot=${encodeURIComponent(name)}`;
}

const KINDS = ["timeout", "illegal", "disconnected", "absent"];

function faultsText(faults) {
  if (!faults) return "–";
  const kinds = KINDS.filter((k) => faults[k]).map((k) => `${faults[k]} ${k}`);
  return kinds.length ? `${faults.total}: ${kinds.join(", ")}` : "0";
}

function ms(x, fmt) {
  return x === null || x === undefined ? "–" : `${fmt(x, 1)} ms`;
}

function versionsTable(detail, kit) {
  const { table, fmt, empty } = kit;
  if (!detail.versions.length) return empty("No finished match yet.");
  const rows = detail.versions.map((v) => {
    const t = v.think_time || {};
    return [v.version || "(none)", String(v.matches), String(v.wins), fmt(v.mean_place, 2),
      ms(t.p50_ms, fmt), ms(t.p99_ms, fmt), ms(t.network_p50_ms, fmt), ms(t.network_p99_ms, fmt), faultsText(v.faults)];
  });
  const t = table(["version", "matches", "wins", "mean place", "think p50", "think p99", "network p50",
    "network p99", "faults"], rows, "bot-versions");
  detail.versions.forEach((v, i) => { t.tBodies[0].rows[i].dataset.version = v.version; });
  return t;
}

function ratingsPart(detail, kit) {
  const { table, fmt, empty, el } = kit;
  const box = el("div", "bot-ratings");
  if (detail.ratings.length) {
    box.append(table(["game", "live Elo", "matches", "leaderboard", "rank"], detail.ratings.map((r) => [
      kit.gameName(r.game), fmt(r.online), String(r.matches),
      r.rating === null ? "–" : `${fmt(r.rating)} (${fmt(r.ci_low)} – ${fmt(r.ci_high)})`, r.rank === null ? "–" : String(r.rank),
    ]), "bot-ratings-table"));
  }
  if (!detail.rating_history.length) {
    box.append(empty("No rated match yet."));
    return box;
  }
  const chart = lineChart({
    label: `${detail.name}: its live Elo after each rated match, per game`,
    series: detail.rating_history.map((h) => ({
      name: kit.gameName(h.game),
      points: [[0, h.start], ...h.points.map((p, i) => [i + 1, p.rating])],
    })),
    // the live Elo's ticks are wide numbers: no rotated axis name beside them (the x axis says it);
    // a phone gets a narrower drawing, so that its text stays readable once scaled to the screen
    xLabel: "live Elo after each rated match", yLabel: "",
    width: window.matchMedia("(max-width: 600px)").matches ? 420 : 640,
  });
  const wrap = el("div", "bot-chart");
  wrap.append(chart);
  box.append(wrap);
  return box;
}

function laddersTable(detail, kit) {
  const { table, fmt, empty, link, chip } = kit;
  if (!detail.ladders.length) return empty("In no ladder.");
  return table(["ladder", "game", "rank", "ordinal μ−3σ", "μ ± 3σ", "games", "sets"], detail.ladders.map((l) => {
    const rank = document.createElement("span");
    rank.append(`${l.rank} of ${l.members}`);
    if (l.provisional) rank.append(" ", chip("provisional", "muted"));
    return [link(`#/ladders/${l.ladder_id}`, l.name), kit.gameName(l.game), rank, fmt(l.ordinal, 2),
      `${fmt(l.mu, 1)} ± ${fmt(3 * l.sigma, 1)}`, String(l.games), String(l.sets)];
  }), "bot-ladders");
}

function recentTable(detail, kit) {
  const { table, empty, link, statusChip, unseen } = kit;
  if (!detail.recent_matches.length) return empty("No match yet.");
  return table(["match", "game", "version", "seat", "place", "score", "faults", "status", unseen("open")],
    detail.recent_matches.map((m) => [
      link(`#/matches/${m.match_id}`, `#${m.match_id}`), kit.gameName(m.game), m.version || "(none)", String(m.seat),
      m.place ? `${m.place} of ${m.players}` : "–", m.score, `${m.faults}${m.forfeited ? " (forfeit)" : ""}`,
      statusChip(m.status), link(`#/matches/${m.match_id}`, m.status === "finished" ? "replay" : "open", "btn"),
    ]), "bot-matches");
}

export async function botPage(view, name, kit) {
  const { el, section, link, chip } = kit;
  const head = el("div", "page-head bot-head");
  const title = el("h1");
  title.append(`Bot ${name}`);
  const play = link(playHref(name), `Play against ${name}`, "btn play-bot");
  head.append(title);
  let detail;
  try {
    detail = await api(`/v1/bots/${encodeURIComponent(name)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      const missing = el("div", "page-head bot-missing");
      missing.append(el("h1", null, `No bot ${name}`), el("p", "facts", `The arena has no bot named ${name}.`),
        link("#/", "Back to the overview", "btn"));
      view.replaceChildren(missing);
      return;
    }
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      head.append(el("p", "facts bot-token-needed", `${name}'s page needs the organizer's token or ${name}'s own ` +
        "token: paste it in the token field above."), play);
      view.replaceChildren(head);
      return;
    }
    throw error;
  }
  if (!kit.alive()) return;
  if (detail.disabled) title.append(" ", chip("disabled", "bad"));
  title.append(" ", detail.connected ? chip("connected", "live") : chip("away", "muted"));
  const facts = el("p", "facts", `${detail.kind === "human" ? "a person" : "a bot"}` +
    `${detail.owner ? ` of ${detail.owner}` : ""} · registered ${new Date(detail.created_at).toLocaleDateString()}`);
  head.append(facts, play);
  const versions = section("Versions", versionsTable(detail, kit),
    el("p", "hint", `Think, network and faults: over ${detail.figures_window.counted} of its last ` +
      `${detail.figures_window.matches} finished matches; matches, wins and mean place: all of them.`));
  view.replaceChildren(head, versions, section("Rating history", ratingsPart(detail, kit)),
    section("Ladders", laddersTable(detail, kit)), section("Recent matches", recentTable(detail, kit)));
}
